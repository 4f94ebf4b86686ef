"""The rho data swap: random pairs of records exchange their swap-attribute values.

Kifer (2015), *On Estimating the Swapping Rate for Categorical Data* (KDD 2015),
Definition 2.1: given a data swap rate rho in [0, 1/2), select rho*N random
pairs of records and interchange their values of the swap attribute(s). The
pairs are disjoint, so at most N/2 of them exist and every record is swapped
at most once.

The *group swap count* alpha (Definition 2.2) is the number of records whose
swap attribute changed from 0 to 1; a swap between two records with the same
value has no effect (records 8 and 10 of the seed's Figure 1). In general we
report alpha as the number of swapped pairs whose swap-attribute values
differed: for a binary swap attribute this is exactly the count of records
changed 0 -> 1 (equally 1 -> 0), half the number of records whose value
changed. Lemma 2.3 gives E[alpha] = rho * 2 n0 n1 / (N - 1).

With ``strata`` the swap follows Matloff's ``dswap``: records with equal values of the key variables form blocks, and within each block a
proportion ``rate`` of pairs is drawn and swapped, so a swap never crosses a
block and the joint distribution of keys and swap attributes within each
block is kept.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sdckit._validation import (
    RandomState,
    as_sequence,
    check_columns,
    check_dataframe,
    check_random_state,
)
from sdckit.errors import ParameterError
from sdckit.microdata.base import MaskResult, deprecated_spellings, register_masker
from sdckit.schema import Schema

__all__ = ["SwapResult", "swap"]


@dataclass(frozen=True)
class SwapResult(MaskResult):
    """Result of :func:`swap`.

    ``diagnostics`` has, per record: ``swapped`` (the record belongs to one of
    the selected pairs), ``partner`` (row position, 0-based, of the record it
    was paired with; -1 when not swapped) and ``changed`` (its swap-attribute
    values differ afterwards).

    ``stats`` holds ``rate`` (rho), ``pairs_swapped``, ``records_changed``,
    ``group_swap_count`` (alpha) and, for one binary swap attribute,
    ``expected_group_swap_count`` (Lemma 2.3).
    """

    def expected_selection_share(self) -> float | None:
        """None: a swap moves whole records of the chosen pairs, no per-cell share applies."""
        return None

    @property
    def rho(self) -> float:
        """The data swap rate rho used (Definition 2.1)."""
        return float(self.stats["rate"])

    @property
    def group_swap_count(self) -> int:
        """The realised group swap count alpha (Definition 2.2)."""
        return int(self.stats["group_swap_count"])

    @property
    def alpha(self) -> int:
        """Alias of :attr:`group_swap_count`, in the paper's letter."""
        return self.group_swap_count

    @property
    def pairs_swapped(self) -> int:
        """Number of pairs of records that exchanged values (about rho*N)."""
        return int(self.stats["pairs_swapped"])


def _row_codes(frame: pd.DataFrame) -> np.ndarray:
    """One integer per row such that rows with equal values get equal codes (missing = a value)."""
    if frame.shape[1] == 1:
        return pd.factorize(frame.iloc[:, 0], use_na_sentinel=False)[0].astype(np.int64)
    per_column = np.column_stack(
        [pd.factorize(frame[c], use_na_sentinel=False)[0] for c in frame.columns]
    )
    return np.unique(per_column, axis=0, return_inverse=True)[1].reshape(-1).astype(np.int64)


def _draw_pairs(
    block: np.ndarray, rate: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, int]:
    """Disjoint random pairs within each block: round(rate * block size) pairs per block.

    Records are put in a random order inside their block (one sort); the first
    m_b records of block b are paired with the next m_b. Also returns the
    number of pairs the rule asks for, sum of round(rate * n_b), before a
    block too small for its share is capped at n_b // 2 pairs.
    """
    n = len(block)
    order = np.lexsort((rng.random(n), block))
    sorted_block = block[order]
    starts = np.flatnonzero(np.r_[True, sorted_block[1:] != sorted_block[:-1]])
    sizes = np.diff(np.r_[starts, n])
    # Half-up rounding of rho * n_b, never more pairs than the block can hold.
    asked = np.floor(rate * sizes + 0.5).astype(np.int64)
    pairs_per_block = np.minimum(asked, sizes // 2)
    rank = np.arange(n) - np.repeat(starts, sizes)
    m = np.repeat(pairs_per_block, sizes)
    first = rank < m
    left = order[first]
    right = order[np.flatnonzero(first) + m[first]]
    return left, right, int(asked.sum())


@register_masker("swap", "rho data swap: random pairs exchange swap-attribute values (Kifer 2015)")
@deprecated_spellings("columns", "rate", swap_attributes="columns")
def swap(
    data: pd.DataFrame,
    *,
    columns: str | Iterable[str] | None = None,
    rate: float | None = None,
    strata: str | Iterable[str] | None = None,
    schema: Schema | None = None,
    random_state: RandomState = None,
    progress: Callable[[int, int], None] | None = None,
) -> SwapResult:
    """Mask microdata by a rho data swap.

    Kifer (2015), Definition 2.1 (the swap), Definition 2.2 (the group
    swap count alpha) and Lemma 2.3 (its expectation); strata as in Matloff's
    ``dswap``.

    Parameters
    ----------
    data : DataFrame
        Microdata, one record per row. Never modified.
    columns : str or iterable of str
        The swap attribute(s): column(s) whose values the paired records
        exchange, together. Required (swapping every column would exchange
        whole records, which changes nothing). Spelled ``swap_attributes``
        in sdckit 0.1 (still accepted for one release, with a
        DeprecationWarning).
    rate : float in [0, 0.5)
        Required: the data swap rate rho; ``round(rho * N)`` disjoint random
        pairs are swapped (within strata: ``round(rho * n_b)`` pairs in a
        block of n_b records, at most n_b // 2).
    strata : str or iterable of str, optional
        Key variables; records with equal keys form a block and are only
        swapped with records of the same block. Missing keys form their own
        value.
    schema : Schema, optional
        Checked against ``data`` when given; the swap itself needs no column
        kinds (any dtype can be exchanged).
    random_state : None, int or numpy Generator
        Same seed, same output.
    progress : callable, optional
        ``progress(done, total)``: called once, ``(1, 1)``, when the pairs
        have exchanged their values (the swap is a single vectorised step).

    Returns
    -------
    SwapResult
        The swapped data (same index, columns, dtypes and multiset of values in
        every column), per-record diagnostics, rho, the number of pairs
        requested (``round(rho * N)``; with strata the sum of the blocks'
        ``round(rho * n_b)``, beside ``pairs_at_rate_overall`` = ``round(rho * N)``)
        and swapped (fewer than requested only where a block is too small),
        and the realised group swap count alpha.
    """
    check_dataframe(data, min_rows=1, unique_index=True)
    if columns is None:
        raise ParameterError(
            "columns is required: name the swap attribute(s), the column(s) the pairs exchange"
        )
    attrs = check_columns(data, columns, "columns")
    if not attrs:
        raise ParameterError("columns is empty: name at least one column to swap")
    if rate is None:
        raise ParameterError("rate is required: the data swap rate rho, a number in [0, 0.5)")
    if isinstance(rate, bool) or not isinstance(rate, (int, float, np.floating, np.integer)):
        raise ParameterError(f"rate must be a number in [0, 0.5), got {rate!r}")
    rate = float(rate)
    if not np.isfinite(rate) or rate < 0 or rate >= 0.5:
        raise ParameterError(
            f"rate must be in [0, 0.5) (Definition 2.1: rho*N disjoint pairs), got {rate!r}"
        )
    keys = (
        check_columns(
            data,
            as_sequence(strata if strata is None or isinstance(strata, str) else list(strata)),
            "strata",
        )
        if strata is not None
        else []
    )
    overlap = sorted(set(keys) & set(attrs))
    if overlap:
        raise ParameterError(
            f"strata and columns share column(s) {overlap}: a swap within blocks of "
            "equal swap values changes nothing"
        )
    if schema is not None:
        schema.check_matches(data)
    rng = check_random_state(random_state)
    n = len(data)

    block = _row_codes(data[keys]) if keys else np.zeros(n, dtype=np.int64)
    left, right, pairs_requested = _draw_pairs(block, rate, rng)

    source = np.arange(n)
    source[left] = right
    source[right] = left
    out = data.copy()
    for col in attrs:
        series = data[col]
        out[col] = pd.Series(series.array.take(source), index=data.index, name=col)
    if progress is not None:
        progress(1, 1)

    values = _row_codes(data[attrs])
    changed = values[source] != values
    partner = np.full(n, -1, dtype=np.int64)
    partner[left] = right
    partner[right] = left
    diagnostics = pd.DataFrame(
        {"swapped": partner >= 0, "partner": partner, "changed": changed}, index=data.index
    )
    records_changed = int(changed.sum())
    stats: dict[str, object] = {"rate": rate}
    if keys:
        # With strata each block of n_b records asks for round(rho * n_b) pairs,
        # so the total may differ from round(rho * N) either way (many small
        # blocks round down to none, or up): both figures are shown, named.
        stats["pairs_at_rate_overall"] = int(np.floor(rate * n + 0.5))
    stats |= {
        # What the rule asks for (round(rho * N), or the per-block sum with strata)
        # and what was done: fewer only where a block cannot hold its pairs.
        "pairs_requested": pairs_requested,
        "pairs_swapped": len(left),
        "realised_rate": len(left) / n,
        "records_changed": records_changed,
        "group_swap_count": records_changed // 2,
    }
    if len(attrs) == 1 and not keys and n > 1:
        counts = np.bincount(values)
        if len(counts) == 2:
            # Lemma 2.3: E[alpha] = rho * 2 n0 n1 / (N - 1).
            stats["expected_group_swap_count"] = rate * 2 * counts[0] * counts[1] / (n - 1)
    params = {"columns": attrs, "rate": rate, "strata": keys or None}
    return SwapResult(data=out, diagnostics=diagnostics, params=params, method="swap", stats=stats)
