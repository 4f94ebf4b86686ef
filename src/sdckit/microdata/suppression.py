"""Local suppression: blank key values until every requested combination of keys is k-anonymous.

A record whose combination of key values is shared by fewer than k records
gets one of its key values blanked (set missing), the least important key
first, and the counts are taken again, until no requested combination has a
record in a class smaller than k (Hundepool et al. 2012, §3.4.2; sdcMicro's
``localSuppression``). Unlike sdcMicro, whose result can leave a requested
combination not k-anonymous (its issues #352 and #225), the loop here stops
only when every combination is checked k-anonymous, under either convention
for a missing value:

* ``missing="any"`` (sdcMicro's and mu-Argus'): a blank matches any value, so
  blanking only ever enlarges classes; a record blank on every key of a
  combination matches every record.
* ``missing="category"``: a blank is a value of its own, so blanking a record
  takes it out of its old class (which may then fall below k, and is handled
  in a later round); the records blank on a whole combination form one class,
  which is filled up to k with the records of the smallest classes when it
  is too small.

Every round blanks at least one more cell, so the loop ends; it ends with
k-anonymity because the set of blank-on-everything records can always be
grown to k (k <= n is checked).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sdckit._keys import SUPPRESSED_MISSING, check_missing, group_keys, key_codes
from sdckit._validation import (
    RandomState,
    check_columns,
    check_dataframe,
    check_int,
    check_required_columns,
)
from sdckit.errors import ParameterError
from sdckit.microdata.base import MaskResult, register_masker
from sdckit.schema import Schema

__all__ = ["SuppressionResult", "key_combinations", "local_suppression", "suppress_keys"]


@dataclass(frozen=True)
class SuppressionResult(MaskResult):
    """Result of :func:`local_suppression`.

    ``diagnostics`` has, per record, ``suppressed``: how many of its key
    values were blanked. ``stats`` holds ``k_anonymity`` (the k asked for),
    ``achieved_k`` (the smallest class over every requested combination,
    checked after the last round), ``cells_suppressed``,
    ``records_suppressed`` and ``suppressed_by_key``.
    """

    def expected_selection_share(self) -> float | None:
        """None: the records blanked are those at risk, not a random share."""
        return None


def key_combinations(
    columns: Sequence[str], combinations: int | Iterable[Iterable[str]] | None
) -> list[list[str]]:
    """The combinations of keys to make k-anonymous.

    Parameters
    ----------
    columns : sequence of str
        The key variables.
    combinations : None, int or iterable of iterables of str
        None: all keys together; an int m: every subset of at most m keys
        (sdcMicro's ``combs``); otherwise the combinations named (each a
        subset of ``columns``).

    Returns
    -------
    list of list of str
    """
    if combinations is None:
        return [list(columns)]
    if isinstance(combinations, (int, np.integer)) and not isinstance(combinations, bool):
        size = check_int(int(combinations), "combinations", minimum=1)
        return [
            list(c)
            for m in range(1, min(size, len(columns)) + 1)
            for c in itertools.combinations(columns, m)
        ]
    if isinstance(combinations, (bool, np.integer, int)):
        raise ParameterError(
            f"combinations must be None, an int or lists of keys, got {combinations!r}"
        )
    out = []
    for combo in combinations:
        names = [combo] if isinstance(combo, str) else list(combo)
        unknown = [c for c in names if c not in columns]
        if unknown or not names:
            raise ParameterError(
                f"combinations: {names} must be a non-empty subset of the keys {list(columns)}"
            )
        out.append(names)
    if not out:
        raise ParameterError("combinations names no combination of keys")
    return out


def _class_sizes(codes: np.ndarray, missing: str) -> np.ndarray:
    groups = group_keys(codes, missing)  # type: ignore[arg-type]  # checked by the caller
    return groups.matched(groups.size.astype(np.float64))[groups.group]


def suppress_keys(
    codes: np.ndarray,
    combinations: Sequence[Sequence[int]],
    k: int,
    *,
    priority: Sequence[int],
    missing: str = SUPPRESSED_MISSING,
    progress: Callable[[int, int], None] | None = None,
) -> np.ndarray:
    """Blank codes (set them to -1) until every combination's classes hold at least k records.

    Parameters
    ----------
    codes : ndarray of int64, shape (n, p)
        Key codes from :func:`sdckit._keys.key_codes` (-1 for missing); not modified.
    combinations : sequence of sequences of int
        Column positions of each combination.
    k : int
        The k of k-anonymity (1 <= k <= n).
    priority : sequence of int
        Column positions, the first blanked first.
    missing : {"any", "category"}
        The convention under which the classes are counted.
    progress : callable, optional
        ``progress(round, rounds)``.

    Returns
    -------
    ndarray
        The codes after suppression.
    """
    out = codes.copy()
    rank = np.empty(out.shape[1], dtype=np.int64)
    rank[np.asarray(priority)] = np.arange(len(priority))
    limit = out.size + 1
    for round_number in range(1, limit + 1):
        violated = False
        for combo in combinations:
            cols = np.asarray(combo)
            sizes = _class_sizes(out[:, cols], missing)
            small = np.flatnonzero(sizes < k)
            if not len(small):
                continue
            violated = True
            # The first key in suppression order that the record still shows.
            ordered = cols[np.argsort(rank[cols], kind="stable")]
            shown = out[np.ix_(small, ordered)] >= 0
            has = shown.any(axis=1)
            first = np.argmax(shown, axis=1)
            out[small[has], ordered[first[has]]] = -1
            blank = small[~has]
            if len(blank):
                # Only under "category": the class of records blank on the whole combination
                # is smaller than k; fill it with records of the smallest other classes.
                others = np.flatnonzero((out[:, cols] >= 0).any(axis=1))
                need = k - len(blank)
                chosen = others[np.argsort(sizes[others], kind="stable")[:need]]
                out[np.ix_(chosen, cols)] = -1
        if progress is not None:
            progress(round_number, round_number + int(violated))
        if not violated:
            return out
    raise AssertionError("local suppression did not converge")  # every round blanks a cell


def _blank_cells(data: pd.DataFrame, columns: Sequence[str], mask: np.ndarray) -> pd.DataFrame:
    """A copy of ``data`` with the cells of ``mask`` (n x len(columns)) set missing.

    A column of plain ints or bools, which cannot hold a missing value,
    becomes the nullable ``Int64`` / ``boolean`` when a cell of it is blanked.
    """
    out = data.copy()
    for j, col in enumerate(columns):
        rows = mask[:, j]
        if not rows.any():
            continue
        series = out[col]
        if pd.api.types.is_bool_dtype(series.dtype) and series.dtype == bool:
            series = series.astype("boolean")
        elif pd.api.types.is_integer_dtype(series.dtype) and not isinstance(
            series.dtype, pd.api.extensions.ExtensionDtype
        ):
            series = series.astype("Int64")
        series = series.copy()
        series[rows] = None
        out[col] = series
    return out


def check_key_columns(
    data: pd.DataFrame, columns: Iterable[str] | None, schema: Schema | None
) -> list[str]:
    """The data checked and the key columns (required, existing, at least one)."""
    check_dataframe(data)
    keys = check_required_columns(
        data, columns, "the key variables to make k-anonymous", "key variable"
    )
    if schema is not None:
        schema.check_matches(data)
    return keys


def check_k(k_anonymity: object, n: int) -> int:
    """The k of k-anonymity: an integer from 1 to the number of records."""
    k = check_int(k_anonymity, "k_anonymity", minimum=1)  # type: ignore[arg-type]  # checked
    if k > n:
        raise ParameterError(
            f"k_anonymity = {k} is larger than the number of records ({n}): no release of "
            "this file can be k-anonymous"
        )
    return k


def suppression_priority(
    data: pd.DataFrame, columns: Sequence[str], importance: Sequence[str] | None
) -> list[int]:
    """Column positions in the order their values are blanked (least important first).

    By default the key with the most distinct values is blanked first (it
    splits the records most); ``importance`` lists the keys most important
    first, so the last named is blanked first.
    """
    if importance is None:
        distinct = [int(data[c].nunique()) for c in columns]
        return sorted(range(len(columns)), key=lambda j: (-distinct[j], j))
    named = check_columns(data, importance, "importance")
    if sorted(named) != sorted(columns):
        raise ParameterError(
            f"importance must list every key exactly once, most important first; got {named} "
            f"for the keys {list(columns)}"
        )
    return [list(columns).index(c) for c in reversed(named)]


@register_masker(
    "local_suppression",
    "blank key values until every key combination is k-anonymous",
    ranges={"k_anonymity": (1, None)},
)
def local_suppression(
    data: pd.DataFrame,
    *,
    columns: Iterable[str] | None = None,
    schema: Schema | None = None,
    random_state: RandomState = None,
    progress: Callable[[int, int], None] | None = None,
    k_anonymity: int = 3,
    combinations: int | Iterable[Iterable[str]] | None = None,
    importance: Sequence[str] | None = None,
    missing: str = SUPPRESSED_MISSING,
) -> SuppressionResult:
    """Blank key values until every requested combination of keys is k-anonymous.

    Hundepool et al. (2012), §3.4.2; sdcMicro's ``localSuppression``, with the
    guarantee it lacks: the result is checked k-anonymous on every requested
    combination (see the module's docstring). The method is deterministic;
    ``random_state`` is accepted for the common interface and not used.

    Parameters
    ----------
    data : DataFrame
        The microdata; never modified.
    columns : iterable of str
        The categorical key variables (required).
    schema : Schema, optional
        Checked against ``data`` when given.
    random_state : None, int or Generator
        Not used (the method draws nothing).
    progress : callable, optional
        ``progress(done, total)`` after each round.
    k_anonymity : int, default 3
        Every class of every combination must hold at least this many records.
    combinations : None, int or iterable of iterables of str
        None: all keys together; an int m: every subset of at most m keys;
        or the combinations named.
    importance : sequence of str, optional
        Every key, most important first (blanked last). Default: the key with
        the most distinct values is blanked first.
    missing : {"any", "category"}, default "any"
        How a blank counts: matching any value (sdcMicro, mu-Argus) or as a
        category of its own.

    Returns
    -------
    SuppressionResult
        The data with blanked key values (a plain int or bool column that
        gets a blank becomes nullable ``Int64`` / ``boolean``).
    """
    keys = check_key_columns(data, columns, schema)
    k = check_k(k_anonymity, len(data))
    missing = check_missing(missing)
    combos = key_combinations(keys, combinations)
    priority = suppression_priority(data, keys, importance)
    codes = key_codes(data, keys)
    positions = [[keys.index(c) for c in combo] for combo in combos]
    after = suppress_keys(
        codes, positions, k, priority=priority, missing=missing, progress=progress
    )
    blanked = (after < 0) & (codes >= 0)
    out = _blank_cells(data, keys, blanked)
    achieved = min(int(_class_sizes(after[:, p], missing).min()) for p in positions)
    per_record = blanked.sum(axis=1)
    stats = {
        "k_anonymity": k,
        "achieved_k": achieved,
        "cells_suppressed": int(blanked.sum()),
        "records_suppressed": int((per_record > 0).sum()),
        "suppressed_by_key": {c: int(blanked[:, j].sum()) for j, c in enumerate(keys)},
    }
    params = {
        "columns": keys,
        "k_anonymity": k,
        "combinations": combinations
        if combinations is None or isinstance(combinations, int)
        else [list(c) for c in combos],
        "importance": None if importance is None else list(importance),
        "missing": missing,
    }
    if progress is not None:
        progress(1, 1)
    return SuppressionResult(
        data=out,
        diagnostics=pd.DataFrame({"suppressed": per_record}, index=data.index),
        params=params,
        method="local_suppression",
        stats=stats,
    )
