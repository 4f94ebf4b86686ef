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
comparison with every other small pattern. A group's id on any set of keys is
read off the integer the grouping factorised (a missing value is digit 0 of
it), so the matching recomputes no codes; look-ups into one pattern are
batched into one hash look-up, so the cost is a few passes over the complete
groups plus work in proportion to the records with a missing value (issue
16's benchmark). Both the per-group sums (:meth:`KeyGroups.matched`, several
columns such as counts and weights in one pass) and the per-group histograms
of a sensitive variable (:meth:`KeyGroups.matched_histogram`) take these
routes.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
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
_PAIRS_PER_CHUNK = 100_000  # small enough for the temporaries to stay in cache
# A marginal of a large pattern (cost: one pass over its groups) is built when the look-ups
# it saves exceed this many per group of the pattern.
_MARGINAL_PAYBACK = 2.0
# Matches gathered before they are added up.
_FLUSH_AT = 4_000_000


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
        Column-major (each key's codes contiguous, as the grouping reads them).
    """
    out = np.empty((len(data), len(keys)), dtype=np.int64, order="F")
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
    ids, n_groups, _ = _combined(codes, offset=0)
    return ids, n_groups


def _combined(codes: np.ndarray, offset: int) -> tuple[np.ndarray, int, np.ndarray | None]:
    """:func:`combine_codes` of ``codes + offset``, and each group's mixed-radix value.

    The value (``None`` when a re-factorisation was needed) is
    ``sum_j (codes[:, j] + offset) * radix_j`` with ``radix_j`` the product
    of ``max(codes[:, i]) + offset + 1`` over the columns i after j.
    """
    n, p = codes.shape
    if p == 0 or n == 0:
        return np.zeros(n, dtype=np.int64), int(n > 0), None
    combined = codes[:, 0].astype(np.int64)  # a copy, folded in place below
    if offset:
        combined += offset
    size = int(combined.max()) + 1
    exact = True
    for j in range(1, p):
        column = codes[:, j]
        card = int(column.max()) + offset + 1
        if size * card >= _INT64_LIMIT:
            combined, uniques = pd.factorize(combined)
            combined = combined.astype(np.int64)
            size, exact = len(uniques), False
        combined *= card
        combined += column
        if offset:
            combined += offset
        size = size * card
    ids, uniques = pd.factorize(combined)
    ids = ids.astype(np.int64)
    if not exact:
        return ids, len(uniques), None
    return ids, len(uniques), np.asarray(uniques, dtype=np.int64)


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
    packed : ndarray of int64, shape (G,), or None
        Each group's codes plus one (a missing value 0) in one integer, by
        mixed radix, the first key most significant: the value the grouping
        factorised, reused by the matching of missingness patterns (None
        where the codes do not fit in one integer).
    """

    group: np.ndarray
    table: np.ndarray
    size: np.ndarray
    missing: Missing
    packed: np.ndarray | None = field(default=None, repr=False, compare=False)

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
        Several columns of values (counts and sums of weights) are summed in
        one pass: the matching groups are found once.

        Parameters
        ----------
        group_values : ndarray, shape (G,) or (G, m)
            One number per group (a count, a sum of weights), or m numbers.

        Returns
        -------
        ndarray of float, the shape of ``group_values``
        """
        values = np.asarray(group_values, dtype=np.float64)
        if self.missing == "category" or not (self.table < 0).any():
            return values.copy()
        sums = _Sums(values.reshape(len(values), -1))
        _match_patterns(self.table, sums, self.packed)
        return sums.result().reshape(values.shape)

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
        _match_patterns(self.table, histograms, self.packed)
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
    group, n_groups, packed = _combined(codes, offset=1)
    first = np.empty(n_groups, dtype=np.int64)
    # Assigned back to front, so each group keeps its first record (the last write wins).
    first[group[::-1]] = np.arange(len(group) - 1, -1, -1)
    table = np.empty((n_groups, codes.shape[1]), dtype=np.int64, order="F")
    for j in range(codes.shape[1]):
        table[:, j] = codes[:, j][first]
    return KeyGroups(
        group=group,
        table=table,
        size=np.bincount(group, minlength=n_groups).astype(np.int64),
        missing=check_missing(missing),
        packed=packed,
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
    """:meth:`KeyGroups.matched`: per group, values summed over the groups it matches."""

    def __init__(self, values: np.ndarray) -> None:
        # One contiguous array per column of values (a count, a sum of weights).
        self.values = [np.ascontiguousarray(values[:, c]) for c in range(values.shape[1])]
        self.out = [column.copy() for column in self.values]  # every group matches itself
        self.at: list[np.ndarray] = []
        self.add: list[list[np.ndarray]] = [[] for _ in self.values]
        self.pending = 0

    def join(
        self, rows_a: np.ndarray, ids_a: np.ndarray, rows_b: np.ndarray, ids_b: np.ndarray
    ) -> None:
        n_ids = int(max(ids_a.max(initial=-1), ids_b.max(initial=-1))) + 1
        self.at += [rows_a, rows_b]
        for v, add in zip(self.values, self.add, strict=True):
            add += [
                np.bincount(ids_b, weights=v[rows_b], minlength=n_ids)[ids_a],
                np.bincount(ids_a, weights=v[rows_a], minlength=n_ids)[ids_b],
            ]
        self.pending += len(rows_a) + len(rows_b)
        if self.pending > _FLUSH_AT:
            self._flush()

    def _flush(self) -> None:
        if self.at:
            at = np.concatenate(self.at)
            for out, add in zip(self.out, self.add, strict=True):
                out += np.bincount(at, weights=np.concatenate(add), minlength=len(out))
        self.at, self.add, self.pending = [], [[] for _ in self.values], 0

    def result(self) -> np.ndarray:
        self._flush()
        return np.stack(self.out, axis=1)


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


def _match_patterns(table: np.ndarray, acc: _Accumulator, packed: np.ndarray | None = None) -> None:
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

    Every group's id on a set of keys is read off ``packed`` (the grouping's
    mixed-radix value of the codes plus one, computed when not given) by
    taking out the digits of the other keys, a missing value's digit being
    0. Look-ups into one pattern (or one marginal) are gathered and resolved
    by one hash look-up.
    """
    p = table.shape[1]
    top = table.max(axis=0)
    cards = np.maximum(top + 1, 1).astype(np.int64)
    spans = [int(t) + 2 for t in top]  # digits: 0 for a missing value, code + 1 otherwise
    if p > 62 or math.prod(spans) >= _INT64_LIMIT:
        _match_by_joins(table, acc)
        return
    radix = np.ones(p, dtype=np.int64)
    for j in range(p - 2, -1, -1):
        radix[j] = radix[j + 1] * spans[j + 1]
    columns = [np.ascontiguousarray(table[:, j]) for j in range(p)]
    if packed is None:
        packed = np.zeros(len(table), dtype=np.int64)
        for column, weight in zip(columns, radix, strict=True):
            packed += (column + 1) * weight
    pattern_of = np.zeros(len(table), dtype=np.int64)
    for j, column in enumerate(columns):
        pattern_of |= (column >= 0).astype(np.int64) << j
    pattern_rows, patterns = pd.factorize(pattern_of)
    narrow = pattern_rows.astype(np.int16) if len(patterns) < 2**15 else pattern_rows
    order = np.argsort(narrow, kind="stable")  # a radix sort on 16 bits
    sizes = np.bincount(pattern_rows, minlength=len(patterns))
    members = np.split(order, np.cumsum(sizes)[:-1])
    masks = ((patterns[:, None] >> np.arange(p)) & 1).astype(bool)
    small = sizes <= _SMALL_PATTERN
    tiny = sizes <= _TINY_PATTERN
    if tiny.any():
        packed_words = _Packed(
            table, cards, np.concatenate([members[b] for b in np.flatnonzero(small)])
        )
        if packed_words.fits:
            packed_words.compare(members, tiny, small, acc)
        else:
            tiny[:] = False
    a, b = np.triu_indices(len(patterns), 1)
    left = ~((tiny[a] & small[b]) | (small[a] & tiny[b]))
    _Routes(table, columns, packed, cards, radix, members, masks).run(a[left], b[left], acc)


class _Routes:
    """The pairs of patterns not compared pairwise: each pair's route chosen, then run in batches."""

    def __init__(
        self,
        table: np.ndarray,
        columns: list[np.ndarray],
        packed: np.ndarray,
        cards: np.ndarray,
        radix: np.ndarray,
        members: list[np.ndarray],
        masks: np.ndarray,
    ) -> None:
        self.columns, self.packed = columns, packed
        self.table = table
        self.cards, self.radix, self.members, self.masks = cards, radix, members, masks
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

    def _projection(self, rows: np.ndarray, dropped: np.ndarray) -> np.ndarray:
        """The groups' ids on the keys not ``dropped`` (a boolean per key).

        The digits of the dropped keys are taken out of the packed value (a
        missing value's digit is 0 already).
        """
        out = self.packed[rows]
        for j in np.flatnonzero(dropped):
            out -= (self.columns[j][rows] + 1) * self.radix[j]
        return out

    def _joins(self, a: np.ndarray, b: np.ndarray, acc: _Accumulator) -> None:
        """Pairs (A, B) joined on the keys both observe, all in one factorisation."""
        if not len(a):
            return
        sides = np.stack([a, b], axis=1).ravel()  # A0, B0, A1, B1, ...
        others = np.stack([b, a], axis=1).ravel()
        lengths = np.array([len(self.members[x]) for x in sides])
        rows = np.concatenate([self.members[x] for x in sides])
        entry_side = np.repeat(np.arange(len(sides)), lengths)
        # Each side drops the keys it observes and the other side misses.
        dropped = self.masks[sides] & ~self.masks[others]
        key = self.packed[rows]
        for rank in range(int(dropped.sum(axis=1).max())):
            nth = np.argmax(np.cumsum(dropped, axis=1) > rank, axis=1)  # its rank-th such key
            has = dropped.sum(axis=1) > rank
            key -= np.where(
                has[entry_side],
                (self.table[rows, nth[entry_side]] + 1) * self.radix[nth[entry_side]],
                0,
            )
        if int(self.radix[0]) * (int(self.cards[0]) + 1) * len(a) >= _INT64_LIMIT:
            key = pd.factorize(key)[0].astype(np.int64)
        ids_all = pd.factorize(key * len(a) + entry_side // 2)[0].astype(np.int64)
        side_a = entry_side % 2 == 0
        acc.join(rows[side_a], ids_all[side_a], rows[~side_a], ids_all[~side_a])

    def _look_up(self, sources: np.ndarray, b: int, j: int, acc: _Accumulator) -> None:
        """The groups of each source pattern, with the values they miss, among B's groups.

        With ``j >= 0``, among B's groups summed over key j (its marginal).
        """
        kept = self.masks[b].copy()
        if j >= 0:
            kept[j] = False
        # The keys each source enumerates; each distinct set's digits enumerated once.
        fill_sets, which = np.unique(kept & ~self.masks[sources], axis=0, return_inverse=True)
        fills = [self._enumerated(np.flatnonzero(keys)) for keys in fill_sets]
        fill_lengths = np.array([len(fill) for fill in fills])
        source_rows = np.concatenate([self.members[a] for a in sources])
        fill_of = np.repeat(which.reshape(-1), [len(self.members[a]) for a in sources])
        lengths = fill_lengths[fill_of]
        fill_at = _ranges((np.cumsum(fill_lengths) - fill_lengths)[fill_of], lengths)
        wanted = np.repeat(self._projection(source_rows, ~kept), lengths)
        wanted += np.concatenate(fills)[fill_at]
        own = self._projection(self.members[b], ~kept)
        if j >= 0:  # B's marginal and the wanted values numbered in one factorisation
            codes = pd.factorize(np.concatenate([own, wanted]))[0].astype(np.int64)
            ids, wanted_ids = codes[: len(own)], codes[len(own) :]
            at = np.flatnonzero(wanted_ids <= ids.max())
            found = np.repeat(source_rows, lengths)[at]
            acc.join(found, wanted_ids[at], self.members[b], ids)
        else:  # the groups of one pattern are distinct on the keys it observes
            at, position = _find(own, wanted)
            found = np.repeat(source_rows, lengths)[at]
            pair = np.arange(len(at), dtype=np.int64)  # each pair found once: one id per pair
            acc.join(found, pair, self.members[b][position], pair)

    def _enumerated(self, keys: np.ndarray) -> np.ndarray:
        """The digits of every combination of values of ``keys``, summed."""
        fill = np.zeros(1, dtype=np.int64)
        for key in keys:
            fill = (fill[:, None] + (np.arange(self.cards[key]) + 1) * self.radix[key]).ravel()
        return fill


def _find(values: np.ndarray, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions in ``wanted`` of the values present among ``values`` (distinct), and where.

    One hash look-up per wanted value (``pandas.Index.get_indexer``).
    """
    position = pd.Index(values).get_indexer(wanted)
    at = np.flatnonzero(position >= 0)
    return at, position[at]


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
