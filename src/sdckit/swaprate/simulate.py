"""Swapping simulators with a known group swap count, for testing the estimators.

The rho data swap itself is :func:`sdckit.microdata.swap.swap` (Definition 2.1
of Kifer (2015); its result reports the realised alpha). Kifer (2015), Section 2,
also notes the equivalent two-stage view: alpha is drawn from P(alpha | rho),
then alpha pairs of records *with differing s values* are interchanged.
:func:`swap_group_count` is that second stage alone, for experiments that fix
alpha / N directly (Section 5: "we varied alpha/N ... from 0 to 0.25"), which
a rho swap cannot reach when the groups are unbalanced.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from sdckit._validation import RandomState, check_columns, check_dataframe, check_random_state
from sdckit.errors import ParameterError
from sdckit.microdata.swap import SwapResult, swap
from sdckit.swaprate.gsc import binary_swap_attribute

__all__ = ["swap", "swap_group_count"]


def swap_group_count(
    data: pd.DataFrame,
    swap_attribute: str,
    group_swap_count: int,
    *,
    positive: Any | Iterable[Any] | None = None,
    random_state: RandomState = None,
) -> SwapResult:
    """Interchange the swap attribute of exactly alpha random pairs with differing groups.

    Kifer (2015), Section 2 (the interpretation after Lemma 2.3): alpha records of
    group 0 and alpha records of group 1 are drawn at random and paired; each
    pair exchanges its values, so exactly alpha records move 0 -> 1 and alpha
    move 1 -> 0.

    Parameters
    ----------
    data : DataFrame
        Never modified.
    swap_attribute : str
        Binary column, or split into groups by ``positive``.
    group_swap_count : int
        alpha, at most min(n0, n1).
    positive : optional
        Values forming group 1 (see :func:`~sdckit.swaprate.gsc.binary_swap_attribute`).
    random_state : None, int or numpy Generator

    Returns
    -------
    SwapResult
        As :func:`~sdckit.microdata.swap.swap`; ``group_swap_count`` is alpha
        counted between the two groups.
    """
    check_dataframe(data, min_rows=2)
    [swap_attribute] = check_columns(data, [swap_attribute], "swap_attribute")
    s, _ = binary_swap_attribute(data[swap_attribute], positive)
    zeros, ones = np.flatnonzero(s == 0), np.flatnonzero(s == 1)
    if (
        isinstance(group_swap_count, bool)
        or not isinstance(group_swap_count, (int, np.integer))
        or not 0 <= group_swap_count <= min(len(zeros), len(ones))
    ):
        raise ParameterError(
            f"group_swap_count must be an integer in [0, min(n0, n1) = "
            f"{min(len(zeros), len(ones))}], got {group_swap_count!r}"
        )
    rng = check_random_state(random_state)
    left = rng.choice(zeros, size=int(group_swap_count), replace=False)
    right = rng.choice(ones, size=int(group_swap_count), replace=False)
    n = len(data)
    source = np.arange(n)
    source[left] = right
    source[right] = left
    out = data.copy()
    column = data[swap_attribute]
    out[swap_attribute] = pd.Series(column.array.take(source), index=data.index, name=column.name)
    partner = np.full(n, -1, dtype=np.int64)
    partner[left] = right
    partner[right] = left
    changed = s[source] != s
    diagnostics = pd.DataFrame(
        {"swapped": partner >= 0, "partner": partner, "changed": changed}, index=data.index
    )
    stats = {
        "rate": float(group_swap_count) * (n - 1) / (2.0 * len(zeros) * len(ones)),
        "pairs_swapped": int(group_swap_count),
        "records_changed": int(changed.sum()),
        "group_swap_count": int(group_swap_count),
    }
    params = {"swap_attributes": [swap_attribute], "group_swap_count": int(group_swap_count)}
    return SwapResult(
        data=out, diagnostics=diagnostics, params=params, method="swap-group-count", stats=stats
    )
