"""Rank swapping (Moore 1996; Perry, Matloff & Tendick (2022) Section 5.1): p is a percentage of the ranks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdckit import microdata
from sdckit.errors import ParameterError, SchemaError
from sdckit.microdata import rank_swap
from sdckit.microdata.rankswap import rank_swap_partners


@pytest.fixture
def skewed() -> pd.DataFrame:
    rng = np.random.default_rng(21)
    n = 2000
    return pd.DataFrame(
        {
            "income": rng.lognormal(10, 1, n),
            "age": rng.integers(18, 90, n),  # many ties
            "grade": pd.Categorical(
                rng.choice(["low", "mid", "high"], n),
                categories=["low", "mid", "high"],
                ordered=True,
            ),
            "town": rng.choice(["a", "b"], n),
        },
        index=pd.Index(rng.permutation(n) + 100, name="rec"),
    )


@pytest.mark.parametrize("p", [1, 5, 20])
def test_values_move_at_most_p_percent_in_rank(skewed, p):
    # Input unmodified, index and dtypes kept: tests/microdata/test_contract.py.
    result = rank_swap(skewed, columns=["income", "age", "grade"], window_percent=p, random_state=3)
    out = result.data
    n = len(skewed)
    window = int(np.floor(p * n / 100))
    for col in ["income", "age"]:
        original = skewed[col].to_numpy()
        ordered = np.sort(original)
        # rank interval of each original value (ties: the whole run of equal values)
        low = np.searchsorted(ordered, original, side="left")
        high = np.searchsorted(ordered, original, side="right") - 1
        allowed_low = ordered[np.maximum(low - window, 0)]
        allowed_high = ordered[np.minimum(high + window, n - 1)]
        new = out[col].to_numpy()
        assert np.all((new >= allowed_low) & (new <= allowed_high))
        assert sorted(new) == sorted(original)  # the multiset is kept
        assert result.stats["max_rank_shift"][col] <= window
        assert result.diagnostics[f"{col}_rank_shift"].max() <= window
    assert result.stats["window_ranks"]["income"] == window
    # p is a percentage: at p=20 the largest move is close to 20 % of the records.
    if p == 20:
        assert result.stats["max_rank_shift_percent"]["income"] > 15
    assert (out["town"] == skewed["town"]).all()
    codes_before = skewed["grade"].cat.codes.to_numpy()
    codes_after = out["grade"].cat.codes.to_numpy()
    assert sorted(codes_after) == sorted(codes_before)


def test_most_values_move(skewed):
    result = rank_swap(skewed, columns=["income"], window_percent=5, random_state=0)
    moved = (result.data["income"] != skewed["income"]).mean()
    assert moved > 0.95
    assert result.stats["share_of_cells_changed"] == pytest.approx(moved)


def test_partners_pair_ranks_within_the_window():
    rng = np.random.default_rng(0)
    for m, window in [(10, 1), (1000, 7), (5000, 250)]:
        partner = rank_swap_partners(m, window, rng)
        assert np.array_equal(partner[partner], np.arange(m))
        assert np.abs(partner - np.arange(m)).max() <= window
        # Moore's walk leaves a value in place only when its window has no free rank.
        assert (partner == np.arange(m)).sum() <= max(2, m // window)


def test_missing_values_stay_in_place(skewed):
    data = skewed.copy()
    data.loc[data.index[:50], "income"] = np.nan
    out = rank_swap(data, columns=["income"], window_percent=5, random_state=1).data
    assert out["income"].isna().to_numpy()[:50].all()
    assert out["income"].notna().sum() == len(data) - 50


def test_same_seed_same_output(skewed):
    a = rank_swap(skewed, columns=["income", "age"], window_percent=5, random_state=9).data
    b = rank_swap(skewed, columns=["income", "age"], window_percent=5, random_state=9).data
    c = rank_swap(skewed, columns=["income", "age"], window_percent=5, random_state=10).data
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(c)


def test_bad_parameters_are_refused(skewed):
    with pytest.raises(ParameterError, match="percentage"):
        rank_swap(
            skewed.iloc[:30], columns=["income"], window_percent=0.05
        )  # a fraction mistaken for a percent
    with pytest.raises(ParameterError, match=r"\(0, 100\]"):
        rank_swap(skewed, columns=["income"], window_percent=150)
    with pytest.raises(ParameterError, match="sample_weights"):
        rank_swap(skewed, columns=["income"], window_percent=5, sample_weights="age")
    with pytest.raises(SchemaError, match="town"):
        rank_swap(skewed, columns=["income", "town"], window_percent=5)


def test_registered_with_progress(skewed):
    calls = []
    result = microdata.mask(
        "rank_swap",
        skewed,
        window_percent=5,
        random_state=0,
        progress=lambda d, t: calls.append((d, t)),
    )
    assert result.params["columns"] == ["income", "age", "grade"]
    assert calls[-1] == (3, 3)
    assert "max rank shift" in result.summary()
