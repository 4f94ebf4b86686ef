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
Under ``"any"`` the groups are split by missingness pattern; each pair of
patterns is joined once, for both directions, on the keys both observe, or --
when one side is small -- by enumerating the values it misses and looking
them up among the other side's groups, so the few records with a missing value
cost little against the many complete ones (issue 16's benchmark).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from sdckit.errors import ParameterError

__all__ = [
    "MISSING_CONVENTIONS",
    "KeyGroups",
    "check_missing",
    "combine_codes",
    "group_keys",
    "key_codes",
]

Missing = Literal["category", "any"]
MISSING_CONVENTIONS: tuple[str, ...] = ("category", "any")

_INT64_LIMIT = np.iinfo(np.int64).max
# Missingness patterns of at most _TINY_PATTERN groups are compared pairwise with every
# pattern of at most _SMALL_PATTERN groups (a Python loop over such pairs costs more).
_TINY_PATTERN = 64
_SMALL_PATTERN = 1_000
_PAIRS_PER_CHUNK = 1_000_000


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
        cards = [int(c) + 1 for c in self.table.max(axis=0)]
        if len(cards) > 62 or np.prod(np.array(cards, dtype=object)) >= _INT64_LIMIT:
            out = np.zeros(self.n_groups)
            for rows_a, rows_b, ids_a, ids_b, n_ids in self._pattern_pairs():
                sums = np.bincount(ids_b, weights=values[rows_b], minlength=n_ids)
                out[rows_a] += sums[ids_a]
            return out
        return _matched_rollup(self.table, values, np.array(cards, dtype=np.int64))

    def matched_histogram(
        self, record_values: np.ndarray, weights: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per group, the (weighted) histogram of a coded variable over the records it matches.

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
        cell = self.group * n_values + codes
        cells, cell_ids = np.unique(cell, return_inverse=True)
        totals = np.bincount(cell_ids.reshape(-1), weights=w)
        own_group, own_value = cells // n_values, cells % n_values
        if self.missing == "category" or not (self.table < 0).any():
            return own_group, own_value, totals
        parts_g: list[np.ndarray] = []
        parts_v: list[np.ndarray] = []
        parts_t: list[np.ndarray] = []
        for rows_a, rows_b, ids_a, ids_b, _ in self._pattern_pairs():
            # The histogram cells of pattern B's groups, re-keyed by the keys both observe.
            id_of_b = np.full(self.n_groups, -1, dtype=np.int64)
            id_of_b[rows_b] = ids_b
            take = id_of_b[own_group] >= 0
            b_cells = pd.DataFrame(
                {"sid": id_of_b[own_group[take]], "value": own_value[take], "t": totals[take]}
            )
            b_hist = b_cells.groupby(["sid", "value"], sort=False)["t"].sum().reset_index()
            a_side = pd.DataFrame({"group": rows_a, "sid": ids_a})
            joined = a_side.merge(b_hist, on="sid", how="inner")
            parts_g.append(joined["group"].to_numpy(np.int64))
            parts_v.append(joined["value"].to_numpy(np.int64))
            parts_t.append(joined["t"].to_numpy(np.float64))
        frame = pd.DataFrame(
            {
                "group": np.concatenate(parts_g),
                "value": np.concatenate(parts_v),
                "t": np.concatenate(parts_t),
            }
        )
        hist = frame.groupby(["group", "value"], sort=True)["t"].sum().reset_index()
        return (
            hist["group"].to_numpy(np.int64),
            hist["value"].to_numpy(np.int64),
            hist["t"].to_numpy(np.float64),
        )

    def _pattern_pairs(self):
        """For every ordered pair of missingness patterns (A, B), the groups joined on shared keys.

        Yields ``rows_a, rows_b`` (group numbers of each pattern) and
        ``ids_a, ids_b`` (a common id of the values on the keys both patterns
        observe), with the number of ids.
        """
        observed = self.table >= 0
        pattern_ids, pattern_rows = np.unique(observed, axis=0, return_inverse=True)
        pattern_rows = pattern_rows.reshape(-1)
        members = [np.flatnonzero(pattern_rows == a) for a in range(len(pattern_ids))]
        for a, rows_a in enumerate(members):
            for b, rows_b in enumerate(members):
                shared = pattern_ids[a] & pattern_ids[b]
                both = np.concatenate([rows_a, rows_b])
                ids, n_ids = combine_codes(self.table[np.ix_(both, np.flatnonzero(shared))])
                yield rows_a, rows_b, ids[: len(rows_a)], ids[len(rows_a) :], n_ids


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


def _matched_rollup(table: np.ndarray, values: np.ndarray, cards: np.ndarray) -> np.ndarray:
    """:meth:`KeyGroups.matched` under ``"any"``, one pass per pair of missingness patterns.

    Every group gets one integer per subset of keys by mixed radix (``cards``
    must multiply to less than 2**63). A group matches itself only within its
    own pattern (groups are distinct), so only pairs of different patterns
    (A, B) are joined, once for both directions, by the cheaper of: a join
    on the keys both observe (cost |A| + |B|), or enumerating, for each group
    of A, the values of the keys A misses and B observes, looked up among B's
    groups (cost |A| times the product of those cardinalities) -- the route
    that makes the few records with a missing value cheap against the many
    complete ones.
    """
    n_groups, p = table.shape
    radix = np.ones(p, dtype=np.int64)
    radix[1:] = np.cumprod(cards[:-1])
    observed = table >= 0
    pattern_of = np.zeros(n_groups, dtype=np.int64)
    for j in range(p):
        pattern_of |= observed[:, j].astype(np.int64) << j
    patterns, pattern_rows = np.unique(pattern_of, return_inverse=True)
    order = np.argsort(pattern_rows.reshape(-1), kind="stable")
    bounds = np.cumsum(np.bincount(pattern_rows.reshape(-1), minlength=len(patterns)))
    members = np.split(order, bounds[:-1])
    masks = [np.array([(int(m) >> j) & 1 == 1 for j in range(p)]) for m in patterns]
    # Each pattern's groups by their id on the keys it observes (distinct within a pattern).
    tables = [table[rows] for rows in members]
    lookups = [
        _Lookup(part @ np.where(mask, radix, 0)) for part, mask in zip(tables, masks, strict=True)
    ]
    sizes = np.array([len(rows) for rows in members], dtype=np.float64)
    # log of the product of the cardinalities of the keys a misses and b observes
    mask_matrix = np.array(masks, dtype=np.float64).reshape(len(masks), p)
    log_fill = (1.0 - mask_matrix) @ (np.log(cards.astype(np.float64))[:, None] * mask_matrix.T)
    enum_cost = sizes[:, None] * np.exp(log_fill)
    join_cost = sizes[:, None] + sizes[None, :]
    out = values.copy()  # every group matches itself
    scatter_at: list[np.ndarray] = []
    scatter_values: list[np.ndarray] = []
    # Patterns of few groups against the other small ones: one comparison of all pairs.
    small = sizes <= _SMALL_PATTERN
    narrow = table.astype(np.int16) if cards.max() < 2**15 else table
    small_at = np.flatnonzero(small)
    small_rows = np.concatenate([members[b] for b in small_at] + [np.zeros(0, np.int64)])
    small_pattern = np.repeat(small_at, sizes[small_at].astype(np.int64))
    is_tiny = sizes <= _TINY_PATTERN
    for a in range(len(patterns)):
        if is_tiny[a]:
            # Each pair of patterns once: the tiny ones after a, the other small ones all.
            partner = (small_pattern > a) | ~is_tiny[small_pattern]
            _compare_all(narrow, values, out, members[a], small_rows[partner])
        for b in range(a + 1, len(patterns)):
            if (is_tiny[a] and small[b]) or (small[a] and is_tiny[b]):
                continue
            if min(enum_cost[a, b], enum_cost[b, a]) <= join_cost[a, b]:
                a_, b_ = (b, a) if enum_cost[b, a] < enum_cost[a, b] else (a, b)
                g, h = _enumerate_matches(
                    tables[a_],
                    masks[a_],
                    masks[b_],
                    cards,
                    radix,
                    lookups[b_],
                )
                rows_src, rows_dst = members[a_], members[b_]
                out[rows_src] += np.bincount(
                    g, weights=values[rows_dst[h]], minlength=len(rows_src)
                )
                scatter_at.append(rows_dst[h])
                scatter_values.append(values[rows_src[g]])
                continue
            rows_a, rows_b = members[a], members[b]
            shared = masks[a] & masks[b]
            joint = np.concatenate([tables[a][:, shared], tables[b][:, shared]]) @ radix[shared]
            if len(joint) > 10_000:
                ids, uniques = pd.factorize(joint)
                n_ids = len(uniques)
            else:
                uniques, ids = np.unique(joint, return_inverse=True)
                ids = ids.reshape(-1)
                n_ids = len(uniques)
            ids_a, ids_b = ids[: len(rows_a)], ids[len(rows_a) :]
            out[rows_a] += np.bincount(ids_b, weights=values[rows_b], minlength=n_ids)[ids_a]
            out[rows_b] += np.bincount(ids_a, weights=values[rows_a], minlength=n_ids)[ids_b]
    if scatter_at:
        out += np.bincount(
            np.concatenate(scatter_at), weights=np.concatenate(scatter_values), minlength=n_groups
        )
    return out


class _Lookup:
    """Positions of distinct integers, found by binary search."""

    def __init__(self, ids: np.ndarray) -> None:
        self.at = np.argsort(ids, kind="stable")
        self.ids = ids[self.at]

    def find(self, wanted: np.ndarray) -> np.ndarray:
        """Position of each wanted id, -1 where absent."""
        if not len(self.ids):
            return np.full(len(wanted), -1, dtype=np.int64)
        pos = np.searchsorted(self.ids, wanted)
        pos[pos == len(self.ids)] = 0
        return np.where(self.ids[pos] == wanted, self.at[pos], -1)


def _compare_all(
    table: np.ndarray, values: np.ndarray, out: np.ndarray, rows_a: np.ndarray, rows_b: np.ndarray
) -> None:
    """Add to ``out`` the matches between groups ``rows_a`` and ``rows_b``, compared pairwise."""
    if not len(rows_b):
        return
    table_a = table[rows_a][:, None, :]
    chunk = max(1, _PAIRS_PER_CHUNK // len(rows_a))
    for start in range(0, len(rows_b), chunk):
        part = rows_b[start : start + chunk]
        table_b = table[part][None, :, :]
        agree = (table_a == table_b) | (table_a < 0) | (table_b < 0)
        i, k = np.nonzero(agree.all(axis=2))
        np.add.at(out, rows_a[i], values[part[k]])
        np.add.at(out, part[k], values[rows_a[i]])


def _enumerate_matches(
    table_a: np.ndarray,
    mask_a: np.ndarray,
    mask_b: np.ndarray,
    cards: np.ndarray,
    radix: np.ndarray,
    lookup_b: _Lookup,
) -> tuple[np.ndarray, np.ndarray]:
    """Pairs (i in A, k in B) of matching groups, by enumerating what A misses and B observes."""
    shared = mask_a & mask_b
    base = table_a[:, shared] @ radix[shared]
    fill = np.zeros(1, dtype=np.int64)
    for j in np.flatnonzero(mask_b & ~mask_a):
        fill = (fill[:, None] + np.arange(cards[j], dtype=np.int64)[None, :] * radix[j]).ravel()
    found = lookup_b.find((base[:, None] + fill[None, :]).ravel())
    hit = np.flatnonzero(found >= 0)
    return hit // len(fill), found[hit]
