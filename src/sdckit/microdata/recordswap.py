"""Targeted record swapping: households at risk change place with similar households elsewhere.

The method the European statistical system used to protect the 2021 census
tables (sdcMicro's ``recordSwap``; Hundepool et al. 2012, §5.4 on targeted
swapping in census tables): the *geography* of a household — its values on a
hierarchy of area columns, coarse to fine (region, district, municipality) —
is exchanged with that of a similar household in another area, so every
record stays whole and only where it lives changes.

* **Risk.** At each level l of the hierarchy, a record is at risk when fewer
  than ``k_anonymity`` records share its area at that level (all coarser
  levels included) and its values of the risk variables ``keys``; a
  household is at risk when one of its members is. Since counts only shrink
  from coarse to fine levels, a household at risk at a level is at risk at
  every finer one; it is swapped at the *coarsest* level where it is at risk.
* **Swapping at level l.** The household gets the geography of a *donor*: a
  household not swapped before, with the same values of the similarity
  variables (``similarity``: household size, say), in the same area at
  level l - 1 but a different area at level l; the donor gets the
  household's geography. Every household at risk is swapped (when a donor
  exists); if that swaps fewer than ``swap_rate`` of the households, pairs
  drawn at random among the others are swapped at the finest level until it
  is reached.
* **What is kept.** The records' values other than the geography; the
  counts of households by area (at every level) and similarity values,
  because both households of a pair share their similarity values; and the
  geography within a household.

Households at risk for which no donor exists are counted in ``stats``
(``at_risk_not_swapped``), never silently dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sdckit._keys import combine_codes, key_codes
from sdckit._validation import (
    RandomState,
    check_columns,
    check_dataframe,
    check_fraction,
    check_int,
    check_random_state,
    check_required_columns,
    describe_row,
)
from sdckit.errors import DataError, ParameterError
from sdckit.microdata.base import MaskResult, register_masker
from sdckit.schema import Schema

__all__ = ["RecordSwapResult", "record_swap"]


@dataclass(frozen=True)
class RecordSwapResult(MaskResult):
    """Result of :func:`record_swap`.

    ``diagnostics`` has, per record, ``swapped`` (its household changed
    place), ``level`` (the hierarchy level of the swap, 1 = coarsest, 0 when
    not swapped) and ``at_risk`` (the coarsest level at which its household
    was at risk, 0 if at none). ``stats`` holds the households, those at
    risk per level, the pairs swapped per level and the share of households
    swapped.
    """

    def expected_selection_share(self) -> float | None:
        """None: the households swapped are those at risk, then a random top-up."""
        return None


def _household_ids(data: pd.DataFrame, household: str | None) -> np.ndarray:
    if household is None:
        return np.arange(len(data), dtype=np.int64)
    (col,) = check_columns(data, [household], "household")
    if data[col].isna().any():
        row = int(np.flatnonzero(data[col].isna().to_numpy())[0])
        raise DataError(
            f"household {col!r} is missing in {describe_row(data.index, row)}; every record "
            "needs its household"
        )
    return pd.factorize(data[col])[0].astype(np.int64)


def _per_household(
    codes: np.ndarray, households: np.ndarray, n_households: int, names: list[str], data
) -> np.ndarray:
    """One row of codes per household; an error naming the first household that is not constant."""
    first = np.full(n_households, -1, dtype=np.int64)
    first[households[::-1]] = np.arange(len(households) - 1, -1, -1)
    table = codes[first]
    differs = (codes != table[households]).any(axis=1)
    if differs.any():
        row = int(np.flatnonzero(differs)[0])
        j = int(np.flatnonzero(codes[row] != table[households[row]])[0])
        raise DataError(
            f"column {names[j]!r} differs within a household ({describe_row(data.index, row)} "
            f"against the household's first record, {describe_row(data.index, first[households[row]])}); "
            "geography and similarity variables must be the same for every member"
        )
    return table


def _risk_level(
    geo: np.ndarray, keys: np.ndarray, households: np.ndarray, n_households: int, k: int
) -> np.ndarray:
    """Per household, the coarsest level (1-based) at which a member is at risk; 0 if none."""
    level = np.zeros(n_households, dtype=np.int64)
    for depth in range(geo.shape[1], 0, -1):
        group, n_groups = combine_codes(np.column_stack([geo[:, :depth], keys]))
        small = np.bincount(group, minlength=n_groups)[group] < k
        at_risk = np.zeros(n_households, dtype=bool)
        at_risk[households[small]] = True
        level[at_risk] = depth
    return level


def _swap_pairs(
    requesters: np.ndarray,
    level: int,
    geo_h: np.ndarray,
    similar_h: np.ndarray,
    free: np.ndarray,
    rng: np.random.Generator,
) -> list[tuple[int, int]]:
    """Pair each requester with a free donor: same similarity and parent area, another area."""
    parent = (
        combine_codes(np.column_stack([similar_h, geo_h[:, : level - 1]]))[0]
        if level > 1
        else combine_codes(similar_h)[0]
    )
    area = geo_h[:, level - 1]
    pairs = []
    candidates = np.flatnonzero(free)
    pools: dict[tuple[int, int], list[int]] = {}
    for h in rng.permutation(candidates):
        pools.setdefault((int(parent[h]), int(area[h])), []).append(int(h))
    areas_of: dict[int, list[int]] = {}
    for p, a in pools:
        areas_of.setdefault(p, []).append(a)
    for h in rng.permutation(requesters):
        h = int(h)
        if not free[h]:
            continue
        p, a = int(parent[h]), int(area[h])
        for b in areas_of.get(p, []):
            # Households paired since the pools were filled leave them now.
            pool = pools[(p, b)]
            while pool and not free[pool[-1]]:
                pool.pop()
        options = [b for b in areas_of.get(p, []) if b != a and pools[(p, b)]]
        if not options:
            continue
        sizes = np.array([len(pools[(p, b)]) for b in options], dtype=np.float64)
        b = options[int(rng.choice(len(options), p=sizes / sizes.sum()))]
        donor = pools[(p, b)].pop()
        free[h] = free[donor] = False
        pairs.append((h, donor))
    return pairs


@register_masker(
    "record_swap",
    "targeted record swapping: households at risk swap geography with similar ones",
    ranges={"swap_rate": (0, 1), "k_anonymity": (1, None)},
)
def record_swap(
    data: pd.DataFrame,
    *,
    columns: Iterable[str] | None = None,
    schema: Schema | None = None,
    random_state: RandomState = None,
    progress: Callable[[int, int], None] | None = None,
    keys: Iterable[str] | None = None,
    household: str | None = None,
    similarity: Iterable[str] | None = None,
    swap_rate: float = 0.05,
    k_anonymity: int = 3,
) -> RecordSwapResult:
    """Swap the geography of households at risk with similar households in other areas.

    See the module's docstring for the risk, the donors and what is kept.

    Parameters
    ----------
    data : DataFrame
        The microdata, one row per person; never modified.
    columns : iterable of str
        The geographic hierarchy, coarsest level first (required): the
        columns whose values are swapped.
    schema : Schema, optional
        Checked against ``data`` when given.
    random_state : None, int or Generator
        Seed of the donors and of the random top-up.
    progress : callable, optional
        ``progress(done, total)`` over the hierarchy's levels.
    keys : iterable of str, optional
        The risk variables (default: none, so risk is set by area sizes alone).
    household : str, optional
        Household identifier (default: each record is its own household).
    similarity : iterable of str, optional
        Household-level variables a donor must share (e.g. household size).
    swap_rate : float, default 0.05
        Least share of households swapped (at-risk households are swapped
        even beyond it).
    k_anonymity : int, default 3
        A record is at risk when fewer records share its area and keys.

    Returns
    -------
    RecordSwapResult
    """
    check_dataframe(data)
    geography = check_required_columns(
        data, columns, "the geographic hierarchy, coarsest level first", "geographic level"
    )
    risk_keys = check_columns(data, list(keys or []), "keys")
    similar = check_columns(data, list(similarity or []), "similarity")
    for name, group in (("keys", risk_keys), ("similarity", similar)):
        overlap = [c for c in group if c in geography]
        if overlap:
            raise ParameterError(f"{name} and columns (the geography) share {overlap}")
    if household is not None and household in geography:
        raise ParameterError(f"household {household!r} is also a geographic column")
    rate = check_fraction(swap_rate, "swap_rate")
    k = check_int(k_anonymity, "k_anonymity", minimum=1)
    if schema is not None:
        schema.check_matches(data)
    rng = check_random_state(random_state)
    households = _household_ids(data, household)
    n_households = int(households.max()) + 1 if len(households) else 0
    geo = key_codes(data, geography) + 1
    similar_codes = key_codes(data, similar) + 1 if similar else np.zeros((len(data), 1), np.int64)
    geo_h = _per_household(geo, households, n_households, geography, data)
    similar_h = _per_household(similar_codes, households, n_households, similar or ["(none)"], data)
    key_codes_ = key_codes(data, risk_keys) + 1 if risk_keys else np.zeros((len(data), 0), np.int64)
    risk = _risk_level(geo, key_codes_, households, n_households, k)
    free = np.ones(n_households, dtype=bool)
    swap_level = np.zeros(n_households, dtype=np.int64)
    partner = np.arange(n_households)
    levels = len(geography)
    for depth in range(1, levels + 1):
        pairs = _swap_pairs(
            np.flatnonzero((risk == depth) & free), depth, geo_h, similar_h, free, rng
        )
        for h, donor in pairs:
            partner[h], partner[donor] = donor, h
            swap_level[h] = swap_level[donor] = depth
        if progress is not None:
            progress(depth, levels + 1)
    target = int(np.ceil(rate * n_households))
    swapped = int((swap_level > 0).sum())
    while swapped < target:
        # The random top-up, pair by pair at the finest level, among households not yet swapped;
        # a requester may be taken as another's donor, so rounds go on until the rate is met.
        requesters = rng.permutation(np.flatnonzero(free))[: (target - swapped + 1) // 2]
        pairs = _swap_pairs(requesters, levels, geo_h, similar_h, free, rng)
        if not pairs:
            break
        for h, donor in pairs:
            partner[h], partner[donor] = donor, h
            swap_level[h] = swap_level[donor] = levels
        swapped += 2 * len(pairs)
    if progress is not None:
        progress(levels + 1, levels + 1)
    out = data.copy()
    moved = swap_level[households] > 0
    if moved.any():
        # Record i takes the geography of its household's partner (any member: it is constant).
        first = np.full(n_households, -1, dtype=np.int64)
        first[households[::-1]] = np.arange(len(households) - 1, -1, -1)
        source = first[partner[households]]
        rows = np.flatnonzero(moved)
        for col in geography:
            column = out[col].copy()
            column.iloc[rows] = data[col].array.take(source[rows])
            out[col] = column
    at_risk = risk > 0
    stats = {
        "households": n_households,
        "households_at_risk": {
            geography[d - 1]: int((risk == d).sum()) for d in range(1, levels + 1)
        },
        "pairs_swapped": {
            geography[d - 1]: int((swap_level == d).sum() // 2) for d in range(1, levels + 1)
        },
        "at_risk_not_swapped": int((at_risk & (swap_level == 0)).sum()),
        "swapped_share": float((swap_level > 0).mean()) if n_households else 0.0,
    }
    return RecordSwapResult(
        data=out,
        diagnostics=pd.DataFrame(
            {
                "swapped": moved,
                "level": swap_level[households],
                "at_risk": risk[households],
            },
            index=data.index,
        ),
        params={
            "columns": geography,
            "keys": risk_keys or None,
            "household": household,
            "similarity": similar or None,
            "swap_rate": rate,
            "k_anonymity": k,
        },
        method="record_swap",
        stats=stats,
    )
