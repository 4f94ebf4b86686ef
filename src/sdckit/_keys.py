"""Counting records by their combination of categorical keys: the shared bottom of key risk.

Both the risk measures (:mod:`sdckit.assess.categorical`) and the methods that
lower key risk (:mod:`sdckit.microdata.kanon`) count, for every record, the
records that share its combination of key values. Two conventions for a
missing key value are offered:

* ``"category"``: a missing value is one more category (what
  :func:`sdckit.assess.key_risk` has always done);
* ``"any"``: a missing value matches any value, the convention of sdcMicro's
  ``freqCalc`` and of mu-Argus for suppressed cells (Hundepool et al. 2012,
  §3.4.2), under which a file made k-anonymous by local suppression can be
  certified. Record j then counts for record i when, on every key, the two
  agree or one of them is missing; the relation is not transitive, so the
  "classes" overlap.

The grouping combines per-key codes into one integer by mixed radix and
factorises that, in O(n) per key, rather than sorting rows of a code matrix.
Under ``"any"`` the groups are split by missingness pattern and every pair of
patterns goes the cheapest of four routes (:func:`_match_patterns`): a join on
the keys both observe; enumerating the values one side misses and looking them
up among the other side's groups (the few records with a missing value against
the many complete ones); the same against a marginal of a large pattern (its
groups summed over one key); or, for the patterns of few groups, one packed
comparison with every other small pattern. Look-ups into one pattern are
batched, so the cost is a few passes over the complete groups plus work in
proportion to the records with a missing value (issue 16's benchmark). Both
the per-group sums (:meth:`KeyGroups.matched`) and the per-group histograms of
a sensitive variable (:meth:`KeyGroups.matched_histogram`) take these routes.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np
import pandas as pd

from sdckit.errors import ParameterError

__all__ = [
    "MISSING_CONVENTIONS",
    "SUPPRESSED_MISSING",
    "KeyGroups",
    "check_missing",
    "combine_codes",
    "group_keys",
    "key_codes",
]

Missing = Literal["category", "any"]
MISSING_CONVENTIONS: tuple[str, ...] = ("category", "any")
#: How a blank key value counts where key values are blanked to lower risk: it matches any
#: value (sdcMicro's and mu-Argus' convention, Hundepool et al. 2012, §3.4.2). The default of
#: the methods that blank keys (local suppression, k-anonymity) and the convention of the
#: studio's risk panel, so a file made k-anonymous by them is shown k-anonymous.
SUPPRESSED_MISSING: Missing = "any"

_INT64_LIMIT = np.iinfo(np.int64).max
# Missingness patterns of at most _TINY_PATTERN groups are compared pairwise with every
# pattern of at most _SMALL_PATTERN groups (a Python loop over such pairs costs more).
_TINY_PATTERN = 64
_SMALL_PATTERN = 1_000
_PAIRS_PER_CHUNK = 1_000_000
# A marginal of a large pattern (cost: one pass over its groups) is built when the look-ups
# it saves exceed this many per group of the pattern.
_MARGINAL_PAYBACK = 2.0
# Matches gathered before they are added up.
_FLUSH_AT = 4_000_000
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def check_missing(missing: object) -> Missing:
    """``missing`` checked against :data:`MISSING_CONVENTIONS`.

    Parameters
    ----------
    missing : object
        What the caller passed.

    Returns
    -------
    str
        ``"category"`` or ``"any"``.
    """
    if missing not in MISSING_CONVENTIONS:
        raise ParameterError(
            f"missing must be 'category' (a missing key value is a category of its own) or "
            f"'any' (it matches any value), got {missing!r}"
        )
    return missing  # type: ignore[return-value]  # checked just above


def key_codes(data: pd.DataFrame, keys: Sequence[str]) -> np.ndarray:
    """Integer codes of the key columns, ``-1`` for a missing value.

    Parameters
    ----------
    data : DataFrame
        The file.
    keys : sequence of str
        Key columns (existing).

    Returns
    -------
    ndarray of int64, shape (n, len(keys))
    """
    out = np.empty((len(data), len(keys)), dtype=np.int64)
    for j, key in enumerate(keys):
        out[:, j] = pd.factorize(data[key], use_na_sentinel=True)[0]
    return out


def combine_codes(codes: np.ndarray) -> tuple[np.ndarray, int]:
    """One group id per row of a matrix of non-negative codes: equal rows, equal ids.

    Columns are folded in by mixed radix (``id * cardinality + code``),
    re-factorised whenever the next product could overflow int64.

    Parameters
    ----------
    codes : ndarray of int, shape (n, p)
        Non-negative codes.

    Returns
    -------
    ids : ndarray of int64, shape (n,)
        Group ids 0..G-1, numbered in order of first appearance.
    n_groups : int
        G.
    """
    n, p = codes.shape
    if p == 0 or n == 0:
        return np.zeros(n, dtype=np.int64), int(n > 0)
    combined = codes[:, 0].astype(np.int64)
    size = int(combined.max()) + 1
    for j in range(1, p):
        column = codes[:, j].astype(np.int64)
        card = int(column.max()) + 1
        if size * card >= _INT64_LIMIT:
            combined, uniques = pd.factorize(combined)
            combined = combined.astype(np.int64)
            size = len(uniques)
        combined = combined * card + column
        size = size * card
    ids, uniques = pd.factorize(combined)
    return ids.astype(np.int64), len(uniques)


@dataclass(frozen=True)
class KeyGroups:
    """Records grouped by their key values, a missing value taken as a value of its own.

    Attributes
    ----------
    group : ndarray of int64, shape (n,)
        Group id of each record.
    table : ndarray of int64, shape (G, p)
        The key codes of each group (``-1`` for missing).
    size : ndarray of int64, shape (G,)
        Records in each group.
    missing : str
        The convention :meth:`matched` applies.
    """

    group: np.ndarray
    table: np.ndarray
    size: np.ndarray
    missing: Missing

    @property
    def n_groups(self) -> int:
        """Number of groups G."""
        return len(self.size)

    def sum_by_group(self, values: np.ndarray) -> np.ndarray:
        """Per group, the sum of a per-record value.

        Parameters
        ----------
        values : ndarray, shape (n,)
            One number per record.

        Returns
        -------
        ndarray of float, shape (G,)
        """
        return np.bincount(self.group, weights=values, minlength=self.n_groups)

    def matched(self, group_values: np.ndarray) -> np.ndarray:
        """Per group, the sum of ``group_values`` over the groups its records match.

        Under ``"category"`` a group matches itself only; under ``"any"`` it
        matches every group that agrees with it on each key both observe.

        Parameters
        ----------
        group_values : ndarray, shape (G,)
            One number per group (a count, a sum of weights).

        Returns
        -------
        ndarray of float, shape (G,)
        """
        values = np.asarray(group_values, dtype=np.float64)
        if self.missing == "category" or not (self.table < 0).any():
            return values.copy()
        sums = _Sums(values)
        _match_patterns(self.table, sums)
        return sums.result()

    def matched_histogram(
        self, record_values: np.ndarray, weights: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per group, the (weighted) histogram of a coded variable over the records it matches.

        The groups a group matches are found as in :meth:`matched` (same
        pairs of missingness patterns, same routes); each pair adds the
        histogram of one group to the other's.

        Parameters
        ----------
        record_values : ndarray of int, shape (n,)
            Codes 0..c-1 of the variable for every record.
        weights : ndarray, shape (n,), optional
            Weight of each record (default 1).

        Returns
        -------
        group, value, total : ndarray
            A sparse histogram sorted by group then value: ``total[i]`` is
            the weight of value ``value[i]`` among the records group
            ``group[i]`` matches; zero entries are left out.
        """
        codes = np.asarray(record_values, dtype=np.int64)
        w = np.ones(len(codes)) if weights is None else np.asarray(weights, dtype=np.float64)
        n_values = int(codes.max()) + 1 if len(codes) else 1
        own = _Histograms.summed(self.group * n_values + codes, w, n_values)
        if self.missing == "category" or not (self.table < 0).any():
            return own
        histograms = _Histograms(*own, n_groups=self.n_groups, n_values=n_values)
        _match_patterns(self.table, histograms)
        return histograms.result()


def group_keys(codes: np.ndarray, missing: Missing = "category") -> KeyGroups:
    """Group records by their key codes (from :func:`key_codes`).

    Parameters
    ----------
    codes : ndarray of int, shape (n, p)
        Key codes, ``-1`` for missing.
    missing : {"category", "any"}
        The convention :meth:`KeyGroups.matched` applies.

    Returns
    -------
    KeyGroups
    """
    group, n_groups = combine_codes(codes + 1)
    first = np.empty(n_groups, dtype=np.int64)
    # Assigned back to front, so each group keeps its first record (the last write wins).
    first[group[::-1]] = np.arange(len(group) - 1, -1, -1)
    return KeyGroups(
        group=group,
        table=codes[first] if len(group) else codes[:0],
        size=np.bincount(group, minlength=n_groups).astype(np.int64),
        missing=check_missing(missing),
    )


class _Accumulator(Protocol):
    """What :func:`_match_patterns` reports its matches to."""

    def join(
        self, rows_a: np.ndarray, ids_a: np.ndarray, rows_b: np.ndarray, ids_b: np.ndarray
    ) -> None:
        """Groups ``rows_a[i]`` and ``rows_b[k]`` match when ``ids_a[i] == ids_b[k]``.

        The two sides are groups of different missingness patterns; a group
        may appear several times on one side with different ids, and two
        groups share at most one id, so each matching pair is reported once.
        """


class _Sums:
    """:meth:`KeyGroups.matched`: per group, a value summed over the groups it matches."""

    def __init__(self, values: np.ndarray) -> None:
        self.out = values.copy()  # every group matches itself
        self.values = values
        self.at: list[np.ndarray] = []
        self.add: list[np.ndarray] = []
        self.pending = 0

    def join(
        self, rows_a: np.ndarray, ids_a: np.ndarray, rows_b: np.ndarray, ids_b: np.ndarray
    ) -> None:
        n_ids = int(max(ids_a.max(initial=-1), ids_b.max(initial=-1))) + 1
        v = self.values
        self.at += [rows_a, rows_b]
        self.add += [
            np.bincount(ids_b, weights=v[rows_b], minlength=n_ids)[ids_a],
            np.bincount(ids_a, weights=v[rows_a], minlength=n_ids)[ids_b],
        ]
        self.pending += len(rows_a) + len(rows_b)
        if self.pending > _FLUSH_AT:
            self._flush()

    def _flush(self) -> None:
        if self.at:
            self.out += np.bincount(
                np.concatenate(self.at),
                weights=np.concatenate(self.add),
                minlength=len(self.out),
            )
        self.at, self.add, self.pending = [], [], 0

    def result(self) -> np.ndarray:
        self._flush()
        return self.out


class _Histograms:
    """:meth:`KeyGroups.matched_histogram`: per group, the cells of the groups it matches."""

    def __init__(
        self, group: np.ndarray, value: np.ndarray, total: np.ndarray, n_groups: int, n_values: int
    ) -> None:
        self.value, self.total, self.n_values = value, total, n_values
        self.count = np.bincount(group, minlength=n_groups)
        self.start = np.cumsum(self.count) - self.count
        self.parts = [(group, value, total)]

    @staticmethod
    def summed(
        cell: np.ndarray, total: np.ndarray, n_values: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Totals summed per cell ``owner * n_values + value``, as (owner, value, total)."""
        cells, inverse = np.unique(cell, return_inverse=True)
        sums = np.bincount(inverse.reshape(-1), weights=total, minlength=len(cells))
        return cells // n_values, cells % n_values, sums

    def join(
        self, rows_a: np.ndarray, ids_a: np.ndarray, rows_b: np.ndarray, ids_b: np.ndarray
    ) -> None:
        self._spread(rows_b, ids_b, rows_a, ids_a)
        self._spread(rows_a, ids_a, rows_b, ids_b)

    def _spread(
        self, src_rows: np.ndarray, src_ids: np.ndarray, dst_rows: np.ndarray, dst_ids: np.ndarray
    ) -> None:
        """Add to every destination the cells of the sources that share its id."""
        lengths = self.count[src_rows]
        cell = _ranges(self.start[src_rows], lengths)
        owner, value, total = self.summed(
            np.repeat(src_ids, lengths) * self.n_values + self.value[cell],
            self.total[cell],
            self.n_values,
        )
        first = np.searchsorted(owner, dst_ids)
        counts = np.searchsorted(owner, dst_ids, side="right") - first
        take = _ranges(first, counts)
        self.parts.append((np.repeat(dst_rows, counts), value[take], total[take]))

    def result(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        group, value, total = (np.concatenate(part) for part in zip(*self.parts, strict=True))
        return self.summed(group * self.n_values + value, total, self.n_values)


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The concatenated index ranges ``starts[i] .. starts[i] + lengths[i] - 1``."""
    ends = np.cumsum(lengths)
    return np.repeat(starts - (ends - lengths), lengths) + np.arange(ends[-1] if len(ends) else 0)


def _match_patterns(table: np.ndarray, acc: _Accumulator) -> None:
    """Report every matching pair of groups of different missingness patterns to ``acc``.

    Two groups of one pattern never match (groups are distinct on the keys
    they observe). For two patterns A and B the pairs are found by the
    cheapest of:

    * a join on the keys both observe (cost |A| + |B|);
    * enumerating, for each group of A, the values of the keys A misses and
      B observes and looking them up among B's groups (cost |A| times the
      product of those cardinalities) -- the few records with a missing
      value against the many complete ones;
    * the same against a *marginal* of a large pattern B, its groups summed
      over one key, which removes that key from the enumeration; a marginal
      is built (cost |B|) when the look-ups it saves pay for it;
    * for the patterns of few groups, comparing them with every group of the
      other small patterns at once, all keys packed in one 64-bit word.

    Look-ups into one pattern (or one marginal) are gathered and resolved by
    one hash look-up.
    """
    p = table.shape[1]
    cards = np.maximum(table.max(axis=0) + 1, 1).astype(np.int64)
    if p > 62 or math.prod(int(c) for c in cards) >= _INT64_LIMIT:
        _match_by_joins(table, acc)
        return
    radix = np.ones(p, dtype=np.int64)
    radix[1:] = np.cumprod(cards[:-1])
    observed = table >= 0
    pattern_of = observed.astype(np.int64) @ (np.int64(1) << np.arange(p, dtype=np.int64))
    pattern_rows, patterns = pd.factorize(pattern_of)
    narrow = pattern_rows.astype(np.int16) if len(patterns) < 2**15 else pattern_rows
    order = np.argsort(narrow, kind="stable")  # a radix sort on 16 bits
    sizes = np.bincount(pattern_rows, minlength=len(patterns))
    members = np.split(order, np.cumsum(sizes)[:-1])
    masks = ((patterns[:, None] >> np.arange(p)) & 1).astype(bool)
    small = sizes <= _SMALL_PATTERN
    tiny = sizes <= _TINY_PATTERN
    if tiny.any():
        packed = _Packed(table, cards, np.concatenate([members[b] for b in np.flatnonzero(small)]))
        if packed.fits:
            packed.compare(members, tiny, small, acc)
        else:
            tiny[:] = False
    a, b = np.triu_indices(len(patterns), 1)
    left = ~((tiny[a] & small[b]) | (small[a] & tiny[b]))
    _Routes(table, cards, radix, members, masks).run(a[left], b[left], acc)


class _Routes:
    """The pairs of patterns not compared pairwise: each pair's route chosen, then run in batches."""

    def __init__(
        self,
        table: np.ndarray,
        cards: np.ndarray,
        radix: np.ndarray,
        members: list[np.ndarray],
        masks: np.ndarray,
    ) -> None:
        self.cards, self.radix, self.members, self.masks = cards, radix, members, masks
        self.columns = [np.ascontiguousarray(table[:, j]) for j in range(table.shape[1])]
        # Each group's id on the keys it observes (mixed radix, a missing value counting 0).
        self.observed_id = np.zeros(len(table), dtype=np.int64)
        for column, weight in zip(self.columns, radix, strict=True):
            self.observed_id += np.maximum(column, 0) * weight
        self.sizes = np.array([len(rows) for rows in members], dtype=np.float64)
        # fills[x, y, j]: key j is one pattern x misses and pattern y observes.
        self.fills = ~masks[:, None, :] & masks[None, :, :]
        log_cards = np.log(cards.astype(np.float64))
        # Look-ups to enumerate x's groups among y's, and among y's best marginal (over key best).
        self.full = self.sizes[:, None] * np.exp(self.fills @ log_cards)
        largest = np.where(self.fills, log_cards, -1.0)
        self.best = np.argmax(largest, axis=2)
        # (No marginal where x misses nothing y observes: it would drop a key both observe.)
        self.marginal = np.where(
            self.fills.any(axis=2), self.full / np.exp(largest.max(axis=2)), np.inf
        )

    def run(self, a: np.ndarray, b: np.ndarray, acc: _Accumulator) -> None:
        """Choose every pair's route (the cheapest), then join or look up in batches."""
        full, marginal, sizes = self.full, self.marginal, self.sizes
        join = sizes[a] + sizes[b]
        plain = np.minimum(np.minimum(full[a, b], full[b, a]), join)
        # Marginals worth building: the look-ups they save exceed their cost.
        saving = np.zeros(self.masks.shape)
        for x, y in ((a, b), (b, a)):
            gain = plain - marginal[x, y]
            use = (gain > 0) & (sizes[y] > _SMALL_PATTERN) & self.fills[x, y].any(axis=1)
            np.add.at(saving, (y[use], self.best[x, y][use]), gain[use])
        built = saving > _MARGINAL_PAYBACK * sizes[:, None]
        options = np.stack(
            [
                join,
                full[a, b],
                full[b, a],
                np.where(built[b, self.best[a, b]], marginal[a, b], np.inf),
                np.where(built[a, self.best[b, a]], marginal[b, a], np.inf),
            ]
        )
        route = np.argmin(options, axis=0)
        joins = route == 0
        self._joins(a[joins], b[joins], acc)
        source = np.where(np.isin(route, (1, 3)), a, b)
        target = np.where(np.isin(route, (1, 3)), b, a)
        over = np.where(route >= 3, self.best[source, target], -1)
        looks = ~joins
        keys = np.stack([target[looks], over[looks]], axis=1)
        for (y, j), where in _grouped(keys):
            self._look_up(source[looks][where], int(y), int(j), acc)

    def _projected(self, a: int, keys: np.ndarray) -> np.ndarray:
        """The ids of pattern a's groups on ``keys`` (a subset of the keys it observes)."""
        rows = self.members[a]
        out = self.observed_id[rows]
        for j in np.flatnonzero(self.masks[a] & ~keys):
            out = out - self.columns[j][rows] * self.radix[j]
        return out

    def _joins(self, a: np.ndarray, b: np.ndarray, acc: _Accumulator) -> None:
        """Pairs (A, B) joined on the keys both observe, all in one factorisation."""
        if not len(a):
            return
        ids, rows = [], []
        for x, y in zip(a, b, strict=True):
            shared = self.masks[x] & self.masks[y]
            for side in (x, y):
                ids.append(self._projected(side, shared))
                rows.append(self.members[side])
        lengths = np.array([len(r) for r in rows])
        pair = np.repeat(np.arange(len(rows)) // 2, lengths)
        key = np.concatenate(ids)
        if int(self.radix[-1]) * int(self.cards[-1]) * len(a) >= _INT64_LIMIT:
            key = pd.factorize(key)[0].astype(np.int64)
        ids_all = pd.factorize(key * len(a) + pair)[0].astype(np.int64)
        side_a = np.repeat(np.arange(len(rows)) % 2 == 0, lengths)
        rows_all = np.concatenate(rows)
        acc.join(rows_all[side_a], ids_all[side_a], rows_all[~side_a], ids_all[~side_a])

    def _look_up(self, sources: np.ndarray, b: int, j: int, acc: _Accumulator) -> None:
        """The groups of each source pattern, with the values they miss, among B's groups.

        With ``j >= 0``, among B's groups summed over key j (its marginal).
        """
        kept = self.masks[b].copy()
        if j >= 0:
            kept[j] = False
        own = self._projected(b, kept)
        if j >= 0:
            ids, uniques = pd.factorize(own)
            ids, index = ids.astype(np.int64), _Index(np.asarray(uniques, dtype=np.int64))
        else:  # the groups of one pattern are distinct on the keys it observes
            ids, index = np.arange(len(own), dtype=np.int64), _Index(own)
        rows, wanted = [], []
        for a in sources:
            fill = np.zeros(1, dtype=np.int64)
            for key in np.flatnonzero(kept & ~self.masks[a]):
                fill = (fill[:, None] + np.arange(self.cards[key]) * self.radix[key]).ravel()
            base = self._projected(a, kept & self.masks[a])
            wanted.append((base[:, None] + fill[None, :]).ravel())
            rows.append(np.repeat(self.members[a], len(fill)))
        at, position = index.find(np.concatenate(wanted))
        acc.join(np.concatenate(rows)[at], position, self.members[b], ids)


class _Index:
    """Distinct non-negative integers, looked up by a hashed bit filter, then a binary search.

    Most values enumerated against a pattern are absent from it; the filter
    (one byte per slot, 16 slots per value) turns almost all of them away
    with one read, and only the rest are searched.
    """

    def __init__(self, values: np.ndarray) -> None:
        self.order = np.argsort(values)
        self.sorted = values[self.order]
        bits = max(10, int(np.ceil(np.log2(16 * max(len(values), 1)))))
        self.shift = np.uint64(64 - bits)
        self.seen = np.zeros(1 << bits, dtype=bool)
        self.seen[self._slot(values)] = True

    def _slot(self, values: np.ndarray) -> np.ndarray:
        # Fibonacci hashing: the top bits of the value times 2**64 / golden ratio.
        return (values.view(np.uint64) * _GOLDEN) >> self.shift

    def find(self, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Positions in ``wanted`` of the values present, and their positions among the values."""
        maybe = np.flatnonzero(self.seen[self._slot(wanted)])
        pos = np.searchsorted(self.sorted, wanted[maybe])
        pos[pos == len(self.sorted)] = 0
        ok = self.sorted[pos] == wanted[maybe] if len(self.sorted) else np.zeros(0, dtype=bool)
        return maybe[ok], self.order[pos[ok]]


def _grouped(keys: np.ndarray):
    """The distinct rows of ``keys`` (n, 2) and, for each, the positions holding it."""
    if not len(keys):
        return
    distinct, inverse = np.unique(keys, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    order = np.argsort(inverse, kind="stable")
    bounds = np.cumsum(np.bincount(inverse, minlength=len(distinct)))[:-1]
    yield from zip(distinct, np.split(order, bounds), strict=True)


class _Packed:
    """Every group's key codes packed in one 64-bit word, for comparing many pairs at once."""

    def __init__(self, table: np.ndarray, cards: np.ndarray, rows: np.ndarray) -> None:
        bits = [max(1, int(c - 1).bit_length()) for c in cards]
        self.fits = sum(bits) <= 64
        if not self.fits:
            return
        table = table[rows]
        self.position = np.full(int(rows.max()) + 1, -1, dtype=np.int64)
        self.position[rows] = np.arange(len(rows))
        shifts = np.concatenate([[0], np.cumsum(bits)[:-1]]).astype(np.uint64)
        field = ((np.uint64(1) << np.array(bits, dtype=np.uint64)) - np.uint64(1)) << shifts
        observed = table >= 0
        self.code = np.bitwise_or.reduce(
            np.where(observed, table, 0).astype(np.uint64) << shifts, axis=1
        )
        self.mask = np.bitwise_or.reduce(np.where(observed, field, np.uint64(0)), axis=1)

    def compare(
        self, members: list[np.ndarray], tiny: np.ndarray, small: np.ndarray, acc: _Accumulator
    ) -> None:
        """Each tiny pattern's groups against every group of the other small patterns, once."""
        empty = np.zeros(0, dtype=np.int64)
        left = np.concatenate([members[a] for a in np.flatnonzero(tiny)] + [empty])
        left_pattern = np.repeat(
            np.flatnonzero(tiny), [len(members[a]) for a in np.flatnonzero(tiny)]
        )
        right = np.concatenate([members[b] for b in np.flatnonzero(small)] + [empty])
        right_pattern = np.repeat(
            np.flatnonzero(small), [len(members[b]) for b in np.flatnonzero(small)]
        )
        # A pair of tiny patterns is compared from the one of lower number only.
        right_tiny = tiny[right_pattern]
        chunk = max(1, _PAIRS_PER_CHUNK // max(len(right), 1))
        code_b, mask_b = self.code[self.position[right]], self.mask[self.position[right]]
        for lo in range(0, len(left), chunk):
            rows = left[lo : lo + chunk]
            at = self.position[rows]
            differ = (self.code[at][:, None] ^ code_b[None, :]) & self.mask[at][:, None]
            agree = (differ & mask_b[None, :]) == 0
            agree &= ~right_tiny[None, :] | (
                right_pattern[None, :] > left_pattern[lo : lo + chunk, None]
            )
            i, k = np.nonzero(agree)
            pair = np.arange(len(i), dtype=np.int64)
            acc.join(rows[i], pair, right[k], pair)


def _match_by_joins(table: np.ndarray, acc: _Accumulator) -> None:
    """:func:`_match_patterns` when the keys' codes cannot be combined in one integer.

    Every pair of missingness patterns is joined on the keys both observe.
    """
    observed = table >= 0
    _, pattern_rows = np.unique(observed, axis=0, return_inverse=True)
    pattern_rows = pattern_rows.reshape(-1)
    members = [np.flatnonzero(pattern_rows == a) for a in range(int(pattern_rows.max()) + 1)]
    for a, b in itertools.combinations(range(len(members)), 2):
        rows_a, rows_b = members[a], members[b]
        shared = np.flatnonzero(observed[rows_a[0]] & observed[rows_b[0]])
        both = np.concatenate([rows_a, rows_b])
        ids, _ = combine_codes(table[np.ix_(both, shared)])
        acc.join(rows_a, ids[: len(rows_a)], rows_b, ids[len(rows_a) :])
