"""Rank swapping (Moore 1996).

Rank swapping exchanges the values of a variable between records whose ranks
are close (Moore 1996, *Controlled data-swapping techniques for masking public
use microdata sets*; the method Perry, Matloff & Tendick (2022)
compare RWN with in their Section 5.1, where it is described as "data swapping
using ranks rather than data values", a neighbourhood method acting on one
variable at a time).

For each variable separately: sort the values (ties in random order); walk
the ranks from the smallest; a value not yet swapped at rank i is swapped
with a value, chosen uniformly at random, among those not yet swapped at
ranks i+1 .. i+w, where w = floor(p / 100 * n) and n is the number of values
present. Two swapped values are therefore never more than p percent of the
records apart in rank. A value left with no partner in its window (near the
top of the ranking) stays where it is.

``p`` is a percentage, as documented, and is used as one: ``p=5`` lets a
value move at most 5 % of the records in rank.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from sdckit._validation import RandomState, check_columns, check_dataframe, check_random_state
from sdckit.errors import ParameterError, SchemaError
from sdckit.microdata.base import MaskResult, deprecated_spellings, register_masker
from sdckit.schema import Kind, Schema

__all__ = ["RankSwapResult", "rank_swap", "rank_swap_partners"]


@dataclass(frozen=True)
class RankSwapResult(MaskResult):
    """Result of :func:`rank_swap`.

    ``diagnostics`` has, per record and masked variable, ``<column>_rank_shift``:
    how many ranks the record's value moved (0 when not swapped), and
    ``cells_changed``: the record's cells whose value differs afterwards.
    ``stats`` gives the window w in ranks, and per variable the largest and
    mean rank shift (in ranks and in percent of the values present).
    """

    @property
    def max_rank_shift_percent(self) -> dict[str, float]:
        """Largest rank move of each variable, in percent of its values present."""
        return dict(self.stats["max_rank_shift_percent"])


def rank_swap_partners(m: int, window: int, rng: np.random.Generator) -> np.ndarray:
    """Moore's rank swap on ranks 0..m-1: ``partner[i]`` is the rank whose value rank i receives.

    Every swap pairs two ranks at most ``window`` apart; ``partner`` is an
    involution (partner[partner[i]] == i) and ``partner[i] == i`` for a value
    left in place.

    Parameters
    ----------
    m : int
        Number of ranks (values present).
    window : int
        Largest rank distance of a swap, w = floor(p * m / 100) (>= 1).
    rng : numpy Generator
        Source of the random choices.

    Returns
    -------
    ndarray of int, shape (m,)
        The partner of every rank.
    """
    partner = np.arange(m)
    swapped = np.zeros(m, dtype=bool)
    draws = rng.random((m, 9))
    for i in range(m - 1):
        if swapped[i]:
            continue
        top = min(i + window, m - 1)
        span = top - i
        row = draws[i]
        j = -1
        # Rejection sampling is uniform over the free ranks in the window; after
        # eight misses fall back to listing them.
        for t in range(8):
            candidate = i + 1 + int(row[t] * span)
            if not swapped[candidate]:
                j = candidate
                break
        if j < 0:
            free = np.flatnonzero(~swapped[i + 1 : top + 1])
            if len(free) == 0:
                continue
            j = i + 1 + int(free[int(row[8] * len(free))])
        swapped[i] = swapped[j] = True
        partner[i] = j
        partner[j] = i
    return partner


def _check_p(value: Any) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not np.isfinite(float(value))
    ):
        raise ParameterError(f"window_percent must be a percentage in (0, 100], got {value!r}")
    p = float(value)
    if not 0 < p <= 100:
        raise ParameterError(
            "window_percent must be a percentage in (0, 100] (window_percent=5 means 5 % of the "
            f"records), got {value!r}"
        )
    return p


@register_masker(
    "rank_swap", "Rank swapping within a window of p percent of the ranks (Moore 1996)"
)
@deprecated_spellings("columns", "window_percent", p="window_percent")
def rank_swap(
    data: pd.DataFrame,
    *,
    columns: Iterable[str] | None = None,
    window_percent: float = 5.0,
    sample_weights: str | None = None,
    schema: Schema | None = None,
    random_state: RandomState = None,
    progress: Callable[[int, int], None] | None = None,
) -> RankSwapResult:
    """Swap each variable's values between records at most p percent apart in rank.

    Moore (1996); the comparison in Perry, Matloff & Tendick (2022),
    Section 5.1. See the module docstring for the algorithm.

    Parameters
    ----------
    data : DataFrame
        Never modified.
    columns : iterable of str, optional
        Variables to swap, each on its own: numeric or ordinal (ordered
        categorical) columns. Default: every numeric or ordinal column whose
        role is not id, weight or ignore.
    window_percent : float, default 5
        Moore's p: the largest rank distance between two swapped values, in
        **percent** of the number of values present: window w = floor(p * n /
        100) ranks. Must be in (0, 100] and give w >= 1. Spelled ``p`` in
        sdckit 0.1 (still accepted for one release, with a DeprecationWarning).
    sample_weights : None
        Rank swapping has no use for survey weights; giving a weight column
        raises :class:`ParameterError` rather than being ignored. The weight
        column passes through unchanged.
    schema : Schema, optional
    random_state : None, int or Generator
        Same seed, same output.
    progress : callable, optional
        ``progress(done, total)`` after each variable.

    Returns
    -------
    RankSwapResult
        Same index, columns and dtypes; every column keeps its multiset of
        values; missing values stay where they are.
    """
    check_dataframe(data, min_rows=2, unique_index=True)
    p = _check_p(window_percent)
    if sample_weights is not None:
        raise ParameterError(
            "rank swapping exchanges values between records and has no use for survey weights; "
            f"sample_weights={sample_weights!r} would be ignored, so it is refused. Drop it: the "
            "weight column passes through unchanged"
        )
    rng = check_random_state(random_state)
    schema = schema if schema is not None else Schema.infer(data)
    schema.check_matches(data)
    rankable = (Kind.NUMERIC, Kind.ORDINAL)
    if columns is None:
        cols = [c for c in schema.maskable() if schema[c].kind in rankable]
    else:
        cols = check_columns(data, columns, "columns")
    if not cols:
        raise ParameterError("no numeric or ordinal columns to swap: give columns=[...]")
    unordered = [c for c in cols if schema[c].kind not in rankable]
    if unordered:
        raise SchemaError(
            f"rank swapping needs an order; column(s) {unordered} are unordered categorical "
            "(make them ordered categoricals, or use sdckit.microdata.swap)"
        )

    n = len(data)
    out = data.copy()
    diagnostics: dict[str, np.ndarray] = {}
    changed = np.zeros(n, dtype=np.int64)
    windows: dict[str, int] = {}
    max_shift: dict[str, int] = {}
    max_shift_pct: dict[str, float] = {}
    mean_shift: dict[str, float] = {}
    for number, col in enumerate(cols):
        series = data[col]
        if schema[col].kind is Kind.ORDINAL:
            levels = list(schema[col].categories or ())
            keys = pd.Categorical(series, categories=levels, ordered=True).codes.astype(np.float64)
            keys[keys < 0] = np.nan
        else:
            keys = pd.to_numeric(series).to_numpy(np.float64, na_value=np.nan)
        present = np.flatnonzero(~np.isnan(keys))
        m = len(present)
        window = int(np.floor(p * m / 100.0))
        if window < 1:
            raise ParameterError(
                f"window_percent={p:g} percent of the {m} values of column {col!r} is less than "
                "one rank, so no value could move; window_percent is a percentage "
                "(window_percent=5 means 5 % of the records): raise it"
            )
        # Random order first, then a stable sort: ties are ranked at random.
        shuffled = present[rng.permutation(m)]
        by_rank = shuffled[np.argsort(keys[shuffled], kind="stable")]
        partner = rank_swap_partners(m, window, rng)
        source = np.arange(n)
        source[by_rank] = by_rank[partner]
        shift = np.zeros(n, dtype=np.int64)
        shift[by_rank] = np.abs(partner - np.arange(m))
        taken = series.array.take(source)
        out[col] = pd.Series(taken, index=data.index, name=col)
        codes = pd.factorize(series, use_na_sentinel=True)[0]
        changed += codes[source] != codes
        diagnostics[f"{col}_rank_shift"] = shift
        windows[col] = window
        max_shift[col] = int(shift.max())
        max_shift_pct[col] = float(100.0 * shift.max() / m)
        mean_shift[col] = float(shift[present].mean())
        if progress is not None:
            progress(number + 1, len(cols))

    diagnostics["cells_changed"] = changed
    stats = {
        "window_ranks": windows,
        "max_rank_shift": max_shift,
        "max_rank_shift_percent": max_shift_pct,
        "mean_rank_shift": mean_shift,
        "share_of_cells_changed": float(changed.sum()) / (n * len(cols)),
    }
    params = {"columns": cols, "window_percent": p, "sample_weights": None}
    return RankSwapResult(
        data=out,
        diagnostics=pd.DataFrame(diagnostics, index=data.index),
        params=params,
        method="rank_swap",
        stats=stats,
    )
