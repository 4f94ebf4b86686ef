"""Consistent perturbation of released statistics: the defence against padding and differencing.

Drop q (Lucero et al. 2011, Section 3.1.2) stops the plain differencing of
U(n) and U(n-1), but not *padding*: both universes are augmented with the
same large region so that the dropped units usually fall there, and the
difference of two answers then isolates one unit (Lucero et al. name the
attack; Section 4's risk formula assumes no padding). This module adds two
keyed, deterministic perturbations on top of Drop q (never instead of it):

* **Counts** (every cell, margin and total of a table, the number of units
  of a regression or correlation, the size class of a universe) get integer
  noise drawn from a fixed distribution by a *cell key*: HMAC-SHA256 of the
  server secret and the sorted identifiers of the units the count is
  computed from, as the Australian Bureau of Statistics' TableBuilder keys
  each cell by its contributing records (Giessing & Höhne 2011, Section 3,
  describe the record-key variant). The same set of units always gets the
  same noise, so repeating a query or rewriting it gains nothing; two sets
  differing by one unit get unrelated noise, so a difference of two
  answers is the true difference plus the difference of two independent
  noises. The distribution has mean zero and never releases 1 or 2; a
  count of 0 stays 0.
* **Magnitudes**. Every unit has a fixed secret factor per variable,
  f_i = 1 + s_i u_i with a random sign s_i and u_i uniform on [a, b]
  (defaults 0.05, 0.15), keyed by the unit's identifier and the variable's
  name: the per-respondent multiplicative noise of Evans, Zayatz & Slanta
  (1998), used by the U.S. Census Bureau for magnitude tables. A cell mean
  is the mean of f_i x_i, and a regression's continuous response is f_i y_i
  (unbiased: E f = 1 and f is independent of the data, so the fit estimates
  the same coefficients). A difference of two answers that isolates unit t
  gives at best f_t x_t; the factor never changes, so no number of
  differently padded pairs averages it away, and it is at least a (5%) away
  from 1 with an unknown sign. Regressions and correlations are in
  addition fitted with fixed secret unit weights of the same form (weighted
  least squares, a logit with frequency weights, weighted correlations),
  scaled to sum to the released, perturbed number of units: a predictor's
  contribution to the fit is then also scaled by a factor the intruder
  cannot remove, and no standard error or degree of freedom reveals the
  true count.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

import numpy as np

from sdckit.errors import ParameterError

__all__ = ["COUNT_NOISE", "Perturbation", "count_noise_table"]

# Noise of a count c >= 5 (value: probability); mean 0, variance 1.2.
COUNT_NOISE: dict[int, float] = {-2: 0.1, -1: 0.2, 0: 0.4, 1: 0.2, 2: 0.1}

# Released value distributions of the small counts (released value: probability):
# each has mean c and never releases 1 or 2 (a zero stays zero).
_SMALL: dict[int, dict[int, float]] = {
    0: {0: 1.0},
    1: {0: 2.0 / 3.0, 3: 1.0 / 3.0},
    2: {0: 1.0 / 3.0, 3: 2.0 / 3.0},
    3: {0: 2.0 / 15.0, 3: 17.0 / 30.0, 4: 0.2, 5: 0.1},
    4: {3: 0.3, 4: 0.45, 5: 0.2, 6: 0.05},
}


def count_noise_table(max_count: int = 8) -> dict[int, dict[int, float]]:
    """The released-value distribution of every true count 0..max_count (for documentation).

    Each row has mean equal to the true count; no row releases 1 or 2.

    Parameters
    ----------
    max_count : int, default 8
        The largest true count listed.

    Returns
    -------
    dict
        ``{true count: {released count: probability}}``.
    """
    out = {}
    for c in range(max_count + 1):
        out[c] = dict(_SMALL[c]) if c in _SMALL else {c + e: p for e, p in COUNT_NOISE.items()}
    return out


def _cdf(dist: dict[int, float]) -> tuple[np.ndarray, np.ndarray]:
    values = np.array(sorted(dist), dtype=np.int64)
    probs = np.array([dist[v] for v in values], dtype=np.float64)
    return values, np.cumsum(probs) / probs.sum()


_SMALL_CDF = {c: _cdf(d) for c, d in _SMALL.items()}
_NOISE_VALUES, _NOISE_CDF = _cdf(COUNT_NOISE)


def _uniform(digest: bytes) -> float:
    return int.from_bytes(digest[:8], "little") / 2.0**64


@dataclass(frozen=True)
class _Keys:
    order: np.ndarray  # row positions sorted by unit key
    rank: np.ndarray  # rank of every row's key (position in ``order``)
    sorted_keys: np.ndarray  # little-endian int64 keys in key order


class Perturbation:
    """Keyed count noise and fixed unit weights over one dataset.

    Parameters
    ----------
    keys : ndarray of int64
        One identifier per record (:func:`sdckit.server.dropq.unit_keys`).
    secret : bytes
        The server secret; the count and weight keys are derived from it.
    weight_range : (float, float), default (0.05, 0.15)
        a and b of the unit weights 1 +/- U[a, b].
    """

    def __init__(
        self, keys: np.ndarray, secret: bytes, weight_range: tuple[float, float] = (0.05, 0.15)
    ) -> None:
        low, high = (float(v) for v in weight_range)
        if not 0.0 <= low <= high < 1.0:
            raise ParameterError(
                f"perturbation weight range must satisfy 0 <= a <= b < 1, got {weight_range!r}"
            )
        keys = np.asarray(keys, dtype=np.int64)
        self._raw_keys = keys.astype("<i8")
        self._factor_secret = hmac.new(secret, b"value factors", hashlib.sha256).digest()
        self._factors: dict[str, np.ndarray] = {}
        order = np.argsort(keys, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        self._keys = _Keys(order, rank, np.ascontiguousarray(keys[order]).astype("<i8"))
        self._count_secret = hmac.new(secret, b"cell-key counts", hashlib.sha256).digest()
        weight_secret = hmac.new(secret, b"unit weights", hashlib.sha256).digest()
        self.weight_range = (low, high)
        self._weight_secret = weight_secret
        self._weights_cache: np.ndarray | None = None

    @property
    def _weights(self) -> np.ndarray:
        # Computed on first use (one keyed digest per unit), then kept.
        if self._weights_cache is None:
            self._weights_cache = self._keyed_factors(self._weight_secret, b"")
        return self._weights_cache

    def _keyed_factors(self, key: bytes, tag: bytes) -> np.ndarray:
        """1 +/- U[a, b] per unit: one keyed BLAKE2 digest each, two uniforms (sign, size)."""
        raw = b"".join(
            hashlib.blake2b(tag + k.tobytes(), key=key, digest_size=16).digest()
            for k in self._raw_keys
        )
        if not raw:
            return np.zeros(0)
        words = np.frombuffer(raw, dtype="<u8").reshape(-1, 2)
        sign = np.where(words[:, 0] / 2.0**64 < 0.5, -1.0, 1.0)
        low, high = self.weight_range
        return 1.0 + sign * (low + (high - low) * (words[:, 1] / 2.0**64))

    def value_factors(self, variable: str, positions: np.ndarray) -> np.ndarray:
        """The fixed factors f_i = 1 +/- U[a, b] of ``variable`` for the units at ``positions``.

        A released mean or regression response uses f_i x_i in place of x_i
        (Evans, Zayatz & Slanta 1998): every unit keeps the same factor in
        every answer, so a difference of two answers that isolates unit t
        gives at best f_t x_t, at least a |x_t| away from x_t, however many
        differently padded pairs are averaged. Each variable has its own
        factors (keyed by its name), independent of the unit weights.
        """
        if variable not in self._factors:
            self._factors[variable] = self._keyed_factors(
                self._factor_secret, variable.encode("utf-8") + b"\x00"
            )
        return self._factors[variable][np.asarray(positions, dtype=np.int64)]

    def __repr__(self) -> str:  # never shows keys or weights
        return f"Perturbation({self._raw_keys.size} units, weights 1 +/- U{self.weight_range})"

    # ------------------------------------------------------------------ counts

    def _cell_uniforms(self, positions: np.ndarray, cells: np.ndarray, n_cells: int) -> np.ndarray:
        """One keyed uniform per cell, from the sorted keys of its units."""
        return self._grouped_uniforms(positions, [(cells, n_cells)])[0]

    def _grouped_uniforms(
        self, positions: np.ndarray, groupings: list[tuple[np.ndarray, int]]
    ) -> list[np.ndarray]:
        """Keyed uniforms of several groupings of the same units (sorted by key once)."""
        rank = self._keys.rank[positions]
        if rank.size < 2 or bool(np.all(rank[1:] > rank[:-1])):
            by_key = None  # already in key order (an index sorted like the rows)
            keys = self._keys.sorted_keys[rank]
        else:
            by_key = np.argsort(rank)
            keys = self._keys.sorted_keys[rank[by_key]]
        out = []
        for cells, n_cells in groupings:
            # Small integer codes: numpy's stable sort is then a radix sort.
            dtype = np.int16 if n_cells < 2**15 else np.int64
            in_key_order = np.asarray(cells).astype(dtype, copy=False)
            if by_key is not None:
                in_key_order = in_key_order[by_key]
            if n_cells == 1:
                grouped, bounds = keys, np.array([0, keys.size])
            else:
                # A stable sort by cell keeps each cell's units in key order.
                order = np.argsort(in_key_order, kind="stable")
                grouped = keys[order]
                bounds = np.searchsorted(in_key_order[order], np.arange(n_cells + 1))
            uniforms = np.empty(n_cells)
            for cell in range(n_cells):
                chunk = grouped[bounds[cell] : bounds[cell + 1]].tobytes()
                digest = hmac.new(self._count_secret, chunk, hashlib.sha256).digest()
                uniforms[cell] = _uniform(digest)
            out.append(uniforms)
        return out

    @staticmethod
    def _noisy(true_counts: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
        true_counts = np.asarray(true_counts, dtype=np.int64)
        out = true_counts + _NOISE_VALUES[np.searchsorted(_NOISE_CDF, uniforms, side="right")]
        for c, (values, cdf) in _SMALL_CDF.items():
            small = true_counts == c
            if small.any():
                out[small] = values[np.searchsorted(cdf, uniforms[small], side="right")]
        return out

    def cell_counts(self, positions: np.ndarray, cells: np.ndarray, n_cells: int) -> np.ndarray:
        """Perturbed count of every cell 0..n_cells-1; ``cells[i]`` is the cell of ``positions[i]``.

        A cell's noise depends only on the set of units in it.
        """
        positions = np.asarray(positions, dtype=np.int64)
        cells = np.asarray(cells, dtype=np.int64)
        true = np.bincount(cells, minlength=n_cells)
        return self._noisy(true, self._cell_uniforms(positions, cells, n_cells))

    def grouped_counts(
        self, positions: np.ndarray, groupings: list[tuple[np.ndarray, int]]
    ) -> list[np.ndarray]:
        """:meth:`cell_counts` of several groupings of the same units, cheaper together."""
        positions = np.asarray(positions, dtype=np.int64)
        uniforms = self._grouped_uniforms(positions, groupings)
        return [
            self._noisy(np.bincount(np.asarray(c, dtype=np.int64), minlength=n), u)
            for (c, n), u in zip(groupings, uniforms, strict=True)
        ]

    def count(self, positions: np.ndarray) -> int:
        """Perturbed number of units of one set (e.g. a regression's analysis sample)."""
        positions = np.asarray(positions, dtype=np.int64)
        return int(self.cell_counts(positions, np.zeros(positions.size, dtype=np.int64), 1)[0])

    # ------------------------------------------------------------------ magnitudes

    def weights(self, positions: np.ndarray, released_count: int | None = None) -> np.ndarray:
        """The fixed unit weights of ``positions``, scaled to sum to ``released_count``.

        Without ``released_count`` they are scaled to mean 1. Scaling by a
        constant changes no weighted mean or coefficient; it keeps weighted
        sums of squares (and so standard errors) consistent with the
        released, perturbed number of units rather than the true one.
        """
        w = self._weights[np.asarray(positions, dtype=np.int64)]
        if w.size == 0:
            return w
        target = float(w.size if released_count is None else max(released_count, 1))
        return w * (target / float(w.sum()))

    def raw_weights(self, positions: np.ndarray) -> np.ndarray:
        """The unscaled weights 1 +/- U[a, b] (for tests and validation, never released)."""
        return self._weights[np.asarray(positions, dtype=np.int64)].copy()
