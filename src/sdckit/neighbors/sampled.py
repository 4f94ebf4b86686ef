"""Sampled neighbourhoods: Perry, Matloff & Tendick (2022), Section 11, Methods 1 and 2.

The basic RWN is O(n^2) in an arbitrary metric (their Section 10). Section 11
gets out of it by looking for neighbours among a *sample* of the records:

* Method 1 (:class:`SampleBackend`, Section 11.1): the neighbours of every
  record are drawn from a random sample S of m records, O(mn). One fixed S
  for every record (searched with an exact tree, so in practice
  O(n log m)), or the paper's variant of a fresh sample per record
  (``fresh=True``: "slightly richer data and better protection").
* Method 2 (:class:`PairSampleBackend`, Section 11.2): a random sample of
  n·m/2 of the n(n-1)/2 pairs of records; each sampled pair serves both of
  its records, so every record has about m sampled partners, and its
  neighbourhood is the k closest of them (or those within eps). The pairs
  are numbered by :func:`sdckit.neighbors.pairs.pair_from_index`, whose
  docstring corrects the paper's step 3(b).

A sampled neighbourhood is not the true neighbourhood: the k neighbours are
farther away than the k nearest records (about (n/m)^(1/p) times as far in p
dimensions), so RWN mixes wider, relations weaken and protection grows
(docs/rwn.md, "Large files"). The distances reported (``distance_to_closest``)
are distances to the closest *sampled* record: an upper bound of the true one.

Every backend here answers the row questions of
:class:`~sdckit.neighbors.NeighborBackend` with the query record itself
first (distance 0) and the nearest sampled *other* records after it, so the
one self-exclusion rule (:func:`sdckit.neighbors.search.exclude_self`) applies
unchanged.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from sdckit.errors import ParameterError
from sdckit.neighbors._shared import BallRows, answers
from sdckit.neighbors.pairs import n_pairs, pair_from_index
from sdckit.neighbors.search import exclude_self

__all__ = ["PairSampleBackend", "SampleBackend"]

_METRICS = ("euclidean", "manhattan", "chebyshev")
_MASK64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def _check_metric(metric: str, strategy: str) -> str:
    if metric not in _METRICS:
        raise ParameterError(
            f"the {strategy} neighbour search supports metric {', '.join(map(repr, _METRICS))}, "
            f"got {metric!r}"
        )
    return metric


def _check_size(value: object, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ParameterError(f"{name} must be an int >= {minimum}, got {value!r}")
    return int(value)


def _seed(random_state: object) -> int:
    """A 63-bit seed from None, an int or a numpy Generator."""
    if isinstance(random_state, bool):
        raise ParameterError(
            f"random_state must be None, an int or a Generator, got {random_state!r}"
        )
    if random_state is not None and not isinstance(
        random_state, numbers.Integral | np.random.Generator
    ):
        raise ParameterError(
            f"random_state must be None, an int or a Generator, got {random_state!r}"
        )
    rng = np.random.default_rng(random_state)  # type: ignore[arg-type]  # checked above
    return int(rng.integers(0, 2**63 - 1))


def distances_along(diff: np.ndarray, metric: str) -> np.ndarray:
    """Norm of ``diff`` along its last axis in ``metric`` (differences may be overwritten)."""
    if metric == "euclidean":
        diff *= diff
        out: np.ndarray = np.sqrt(diff.sum(axis=-1))
    elif metric == "manhattan":
        out = np.abs(diff).sum(axis=-1)
    else:
        out = np.abs(diff).max(axis=-1)
    return out


def pairwise_distances(a: np.ndarray, b: np.ndarray, metric: str) -> np.ndarray:
    """Distances between ``a[i]`` and ``b[i, t]`` (a: r x p, b: r x c x p) -> r x c."""
    return distances_along(b - a[:, None, :], metric)


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser, elementwise on uint64 (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        z = x + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def _sorted_distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values, sorted (a plain sort: faster than np.unique's hashing here)."""
    values = np.sort(values)
    keep = np.ones(len(values), dtype=bool)
    keep[1:] = values[1:] != values[:-1]
    return values[keep]


def _with_self_first(
    rows: np.ndarray, dist: np.ndarray, idx: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Prepend each row itself at distance 0 to its (sorted) neighbours among others."""
    d = np.concatenate([np.zeros((len(rows), 1)), dist], axis=1)
    i = np.concatenate([rows[:, None].astype(np.int64), idx], axis=1)
    return d, i


class SampleBackend(BallRows):
    """Neighbours drawn from a random sample of m records: Method 1 of RWN at scale.

    Perry, Matloff & Tendick (2022), Section 11.1. With ``fresh=False`` one
    sample S of m records is drawn when the backend is fitted and searched
    exactly (a KD-tree on S); every record's neighbours are its nearest
    records in S. With ``fresh=True`` (the paper's variant) each record draws
    its own sample of m records and its neighbours are the nearest of them,
    O(mn) distances in all; the sample of record i is a fixed function of
    (seed, i), so a record gets the same sample in every query and the same
    seed gives the same neighbourhoods whatever the blocks or threads. The
    m draws are made with replacement and repeats dropped (and the record
    itself): about m - m^2/(2n) distinct records.

    Point queries (:meth:`query`, :meth:`count_within`: the assessment's
    distance to the closest record) search the same fixed sample, or a fresh
    sample per point drawn from the point's position in the query block: the
    distances they return are upper bounds of the distances to the whole file.

    Parameters
    ----------
    sample_size : int, optional
        m. Default 10,000 for the fixed sample, 400 for a fresh sample per
        record (its cost is m distances per record). At least 2.
    fresh : bool, default False
        A fresh sample per record (True) or one sample for all (False).
    metric : {"euclidean", "manhattan", "chebyshev"}, default "euclidean"
        The distance.
    random_state : None, int or numpy Generator
        Seed of the sample(s).
    """

    exact = False

    def __init__(
        self,
        sample_size: int | None = None,
        *,
        fresh: bool = False,
        metric: str = "euclidean",
        random_state: object = None,
    ):
        if not isinstance(fresh, bool):
            raise ParameterError(f"fresh must be True or False, got {fresh!r}")
        default = 400 if fresh else 10_000
        self.sample_size = _check_size(
            default if sample_size is None else sample_size, "sample_size", 2
        )
        self.fresh = fresh
        self.metric = _check_metric(metric, "sample")
        self.name = "sample-fresh" if fresh else "sample"
        self.seed = _seed(random_state)
        self._matrix: np.ndarray | None = None
        self._sample: np.ndarray | None = None
        self._in_sample: np.ndarray | None = None
        self._tree: Any = None  # a scikit-learn KDTree of the sample

    @answers("fit", "Draw the sample (fixed variant) and index it.")
    def fit(self, matrix: np.ndarray) -> None:
        self._matrix = matrix
        if self.fresh:
            return
        n = len(matrix)
        m = min(self.sample_size, n)
        rng = np.random.default_rng(self.seed)
        self._sample = np.sort(rng.choice(n, size=m, replace=False)).astype(np.int64)
        self._in_sample = np.zeros(n, dtype=bool)
        self._in_sample[self._sample] = True
        from sklearn.neighbors import KDTree  # heavy: imported when used

        self._tree = KDTree(matrix[self._sample], metric=self.metric)

    def _fitted_matrix(self) -> np.ndarray:
        if self._matrix is None:
            raise RuntimeError("the sample backend is used before fit()")
        return self._matrix

    def _fixed(self) -> tuple[np.ndarray, np.ndarray, Any]:
        if self._tree is None or self._sample is None or self._in_sample is None:
            raise RuntimeError("the sample backend is used before fit()")
        return self._sample, self._in_sample, self._tree

    # -- the fresh variant: candidates and their distances ----------------------

    def _candidates(self, keys: np.ndarray, stream: int, exclude: np.ndarray | None) -> np.ndarray:
        """m candidate records per key (-1 where a draw repeats or is the record itself)."""
        n = len(self._fitted_matrix())
        m = self.sample_size
        base = (
            keys.astype(np.uint64)[:, None] * np.uint64(m) + np.arange(m, dtype=np.uint64)[None, :]
        )
        with np.errstate(over="ignore"):
            salt = np.uint64((self.seed * 2 + stream) & 0xFFFFFFFFFFFFFFFF)
            h = _splitmix64(_splitmix64(base ^ salt))
        cand = ((h >> np.uint64(11)).astype(np.float64) * 2.0**-53 * n).astype(np.int64)
        cand.sort(axis=1)
        repeat = np.zeros(cand.shape, dtype=bool)
        repeat[:, 1:] = cand[:, 1:] == cand[:, :-1]
        if exclude is not None:
            repeat |= cand == exclude[:, None]
        cand[repeat] = -1
        return cand

    def _fresh_distances(
        self, points: np.ndarray, keys: np.ndarray, stream: int, exclude: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        matrix = self._fitted_matrix()
        cand = self._candidates(keys, stream, exclude)
        dist = np.full(cand.shape, np.inf)
        step = max(1, (1 << 21) // max(self.sample_size * matrix.shape[1], 1))
        for a in range(0, len(points), step):
            c = cand[a : a + step]
            valid = c >= 0
            d = pairwise_distances(points[a : a + step], matrix[np.where(valid, c, 0)], self.metric)
            dist[a : a + step] = np.where(valid, d, np.inf)
        return dist, cand

    def _fresh_nearest(
        self, dist: np.ndarray, cand: np.ndarray, k: int
    ) -> tuple[np.ndarray, np.ndarray]:
        if k > dist.shape[1]:
            raise ParameterError(
                f"sample_size={self.sample_size} is too small for {k} neighbours; give a larger one"
            )
        part = np.argpartition(dist, k - 1, axis=1)[:, :k] if k < dist.shape[1] else None
        if part is not None:
            dist = np.take_along_axis(dist, part, axis=1)
            cand = np.take_along_axis(cand, part, axis=1)
        order = np.argsort(dist, axis=1, kind="stable")
        d = np.take_along_axis(dist, order, axis=1)
        i = np.take_along_axis(cand, order, axis=1)
        if not np.isfinite(d).all():
            raise ParameterError(
                f"sample_size={self.sample_size} gives fewer than {k} distinct records for some "
                "record; give a larger sample_size"
            )
        return d, i

    # -- row queries ------------------------------------------------------------

    @answers(
        "kneighbors", "The row itself, then its ``k - 1`` nearest other records of the sample."
    )
    def kneighbors(self, rows: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        matrix = self._fitted_matrix()
        rows = np.asarray(rows, dtype=np.int64)
        if k <= 1:
            return _with_self_first(rows, np.empty((len(rows), 0)), np.empty((len(rows), 0), int))
        if self.fresh:
            d, i = self._fresh_nearest(*self._fresh_distances(matrix[rows], rows, 0, rows), k - 1)
            return _with_self_first(rows, d, i)
        sample, _, tree = self._fixed()
        if k > len(sample):
            raise ParameterError(
                f"sample_size={len(sample)} is too small for {k - 1} neighbours; give a larger one"
            )
        d, i = tree.query(matrix[rows], k=k, sort_results=True)
        d, i = exclude_self(rows, d, sample[i])  # drops the row, or the farthest
        return _with_self_first(rows, d, i)

    def _ball(self, rows: np.ndarray, radius: np.ndarray) -> list[np.ndarray]:
        """Sampled other records within ``radius[i]`` of each row (the row excluded)."""
        matrix = self._fitted_matrix()
        if self.fresh:
            dist, cand = self._fresh_distances(matrix[rows], rows, 0, rows)
            return [c[d <= r] for c, d, r in zip(cand, dist, radius, strict=True)]
        sample, _, tree = self._fixed()
        balls = tree.query_radius(matrix[rows], r=radius)
        return [sample[b][sample[b] != row] for b, row in zip(balls, rows, strict=True)]

    # -- point queries ----------------------------------------------------------

    @answers("query", "The ``k`` nearest sampled records to each point.")
    def query(self, points: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        if self.fresh:
            keys = np.arange(len(points), dtype=np.int64)
            return self._fresh_nearest(*self._fresh_distances(points, keys, 1, None), k)
        sample, _, tree = self._fixed()
        d, i = tree.query(points, k=k, sort_results=True)
        return d, sample[i]

    @answers("count_within", "Number of sampled records within ``radius[i]`` of each point.")
    def count_within(self, points: np.ndarray, radius: np.ndarray) -> np.ndarray:
        if self.fresh:
            keys = np.arange(len(points), dtype=np.int64)
            dist, _ = self._fresh_distances(points, keys, 1, None)
            found: np.ndarray = (dist <= radius[:, None]).sum(axis=1)
            return found
        counts: np.ndarray = self._fixed()[2].query_radius(points, r=radius, count_only=True)
        return counts


class PairSampleBackend(BallRows):
    """Neighbours among a random sample of pairs of records: Method 2 of RWN at scale.

    Perry, Matloff & Tendick (2022), Section 11.2. :meth:`fit` draws
    round(n·m/2) distinct pairs (i, j), i < j, uniformly among the n(n-1)/2
    — as distinct random integers r in [0, n(n-1)/2) mapped to pairs by
    :func:`sdckit.neighbors.pairs.pair_from_index` (the paper's step 3(b) is
    garbled; the docstring there gives the correct inverse) — computes each
    pair's distance once and lets it serve both records. Every record thus
    has about m sampled partners (a binomial number); its neighbourhood is
    the k closest of them, or all of them within eps. Nothing O(n^2) is
    formed: the sample is n·m/2 integers and the partners are kept as one
    list per record with their distances — 12 bytes per record and partner
    (n·m·12 bytes: 0.8 GB at n = 10^6, m = 64), with about twice that while
    :meth:`fit` groups them.

    A record with fewer sampled partners than the neighbours asked for (at
    m = 4k a chance below 10^-8 per record) takes its neighbours from a fresh
    sample of m records instead (:class:`SampleBackend` with ``fresh=True``).

    The pairs answer questions about the file's own records only: point
    queries (:meth:`query`, :meth:`count_within`) are refused.

    Parameters
    ----------
    sample_size : int, default 64
        m, the expected number of sampled partners per record (at least 2).
    metric : {"euclidean", "manhattan", "chebyshev"}, default "euclidean"
        The distance.
    random_state : None, int or numpy Generator
        Seed of the pair sample.
    progress : callable, optional
        Called as ``progress(done, total)`` while the pair distances are computed.
    """

    exact = False
    name = "pairs"

    def __init__(
        self,
        sample_size: int = 64,
        *,
        metric: str = "euclidean",
        random_state: object = None,
        progress: Callable[[int, int], None] | None = None,
    ):
        self.sample_size = _check_size(sample_size, "sample_size", 2)
        self.metric = _check_metric(metric, "pairs")
        self.seed = _seed(random_state)
        self.progress = progress
        self._matrix: np.ndarray | None = None
        self._indptr: np.ndarray | None = None
        self._partners: np.ndarray | None = None
        self._distances: np.ndarray | None = None
        self._fallback = SampleBackend(
            sample_size, fresh=True, metric=metric, random_state=self.seed
        )

    def _draw_pairs(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """round(n·m/2) distinct pair numbers, sorted (all pairs when that is fewer)."""
        total = n_pairs(n)
        wanted = min(round(n * self.sample_size / 2), total)
        if wanted * 4 >= total:  # a large share of all pairs: draw without replacement directly
            return np.sort(rng.choice(total, size=wanted, replace=False)).astype(np.int64)
        drawn = _sorted_distinct(rng.integers(0, total, size=wanted, dtype=np.int64))
        while len(drawn) < wanted:  # repeats are rare (n·m/2 << n^2/2): draw the shortfall again
            more = rng.integers(0, total, size=wanted - len(drawn), dtype=np.int64)
            drawn = _sorted_distinct(np.concatenate([drawn, more]))
        return drawn

    @answers(
        "fit",
        "Draw the pairs, compute their distances and group each record's partners (fewer than 2^31 records).",
    )
    def fit(self, matrix: np.ndarray) -> None:
        n = len(matrix)
        if n < 2 or n >= 2**31:
            raise ParameterError(
                f"the pairs neighbour search needs between 2 and 2^31 - 1 records, got {n:,}"
            )
        rng = np.random.default_rng(self.seed)
        r = self._draw_pairs(n, rng)
        # Both directions of every pair as one int64 key (record << 32 | partner),
        # sorted in place: a plain sort, far faster than an argsort of this size.
        keys = np.empty(2 * len(r), dtype=np.int64)
        for a in range(0, len(r), 1 << 20):
            i, j = pair_from_index(r[a : a + (1 << 20)])
            keys[2 * a : 2 * a + 2 * len(i) : 2] = (i << 32) | j
            keys[2 * a + 1 : 2 * a + 2 * len(i) : 2] = (j << 32) | i
        del r
        keys.sort()
        source = keys >> 32
        self._indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(source, minlength=n), out=self._indptr[1:])
        del source
        self._partners = (keys & 0xFFFFFFFF).astype(np.int32)
        del keys
        self._distances = np.empty(len(self._partners))
        total = len(self._partners)
        block = 1 << 20
        for a in range(0, total, block):
            owners = np.searchsorted(self._indptr, np.arange(a, min(a + block, total)), "right") - 1
            diff = matrix[owners] - matrix[self._partners[a : a + block]]
            self._distances[a : a + block] = distances_along(diff, self.metric)
            if self.progress is not None:
                self.progress(min(a + block, total), total)
        self._matrix = matrix
        self._fallback.fit(matrix)

    def _fitted(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self._indptr is None or self._partners is None or self._distances is None:
            raise RuntimeError("the pairs backend is used before fit()")
        return self._indptr, self._partners, self._distances

    def partner_counts(self) -> np.ndarray:
        """Number of sampled partners of each record.

        Returns
        -------
        ndarray of int
        """
        return np.diff(self._fitted()[0])

    @answers("kneighbors", "The row itself, then its ``k - 1`` closest sampled partners.")
    def kneighbors(self, rows: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        rows = np.asarray(rows, dtype=np.int64)
        want = k - 1
        dist, idx = self._segments(rows)
        if want <= 0:
            return _with_self_first(rows, dist[:, :0], idx[:, :0])
        short = np.isinf(dist[:, want - 1]) if dist.shape[1] >= want else np.ones(len(rows), bool)
        out_d = np.empty((len(rows), want))
        out_i = np.empty((len(rows), want), dtype=np.int64)
        if (~short).any():
            d, i = dist[~short], idx[~short]
            if want < d.shape[1]:
                part = np.argpartition(d, want - 1, axis=1)[:, :want]
                d, i = np.take_along_axis(d, part, axis=1), np.take_along_axis(i, part, axis=1)
            order = np.argsort(d, axis=1, kind="stable")
            out_d[~short] = np.take_along_axis(d, order, axis=1)
            out_i[~short] = np.take_along_axis(i, order, axis=1)
        if short.any():
            d, i = self._fallback.kneighbors(rows[short], k)
            out_d[short], out_i[short] = d[:, 1:], i[:, 1:]
        return _with_self_first(rows, out_d, out_i)

    def _segments(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each row's partners and their distances, padded with inf (len(rows) x most partners)."""
        indptr, partners, distances = self._fitted()
        start = indptr[rows]
        length = indptr[rows + 1] - start
        width = int(length.max()) if len(rows) else 0
        pos = start[:, None] + np.arange(width)
        valid = np.arange(width) < length[:, None]
        pos = np.where(valid, pos, 0)
        dist = np.where(valid, distances[pos], np.inf)
        idx = np.where(valid, partners[pos], -1).astype(np.int64)
        return dist, idx

    def _ball(self, rows: np.ndarray, radius: np.ndarray) -> list[np.ndarray]:
        dist, idx = self._segments(rows)
        inside = dist <= radius[:, None]
        return [i[w] for i, w in zip(idx, inside, strict=True)]

    def _refuse_points(self) -> ParameterError:
        return ParameterError(
            "the pairs neighbour search answers questions about the file's own records only "
            "(Perry, Matloff & Tendick 2022, Section 11.2); use 'sample', 'hnsw' or an exact "
            "search to look up other records"
        )

    @answers(
        "query",
        "Refused (raises ParameterError): sampled pairs say nothing about records outside the file.",
    )
    def query(self, points: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        raise self._refuse_points()

    @answers(
        "count_within",
        "Refused (raises ParameterError): sampled pairs say nothing about records outside the file.",
    )
    def count_within(self, points: np.ndarray, radius: np.ndarray) -> np.ndarray:
        raise self._refuse_points()
