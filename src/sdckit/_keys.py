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
        out = np.zeros(self.n_groups)
        for rows_a, rows_b, ids_a, ids_b, n_ids in self._pattern_pairs():
            sums = np.bincount(ids_b, weights=values[rows_b], minlength=n_ids)
            out[rows_a] += sums[ids_a]
        return out

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
