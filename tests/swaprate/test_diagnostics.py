"""Diagnostics of Kifer (2015): imbalance (4.1.4), re-swap linearity (4.3.2, 5.4), split concordance (4.1.3)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _swapdata import naive_bayes_data, symmetric_halves_data

from sdckit import ParameterError
from sdckit.microdata import swap
from sdckit.swaprate import (
    estimate_swap_count,
    imbalance_check,
    reswap_linearity,
    split_concordance,
)
from shared_data import shared_csv


def test_imbalance_small_when_well_specified_large_when_not():
    good = swap(naive_bayes_data(10000, seed=4), columns="income", rate=0.1, random_state=1).data
    ok = imbalance_check(estimate_swap_count(good, "income", profile_se=False, calibrate=False))
    assert not ok.large and ok.imbalance < 0.005
    # Misspecified: Naive Bayes on the real Adult data (Kifer 2015, Section 5.2: about 0.15).
    adult = shared_csv("adult.csv").iloc[:32561].dropna()
    left = ["workclass", "relationship", "sex"]
    flagged = imbalance_check(
        estimate_swap_count(adult, "income", left, profile_se=False, calibrate=False)
    )
    assert flagged.imbalance == pytest.approx(abs(flagged.a0 - flagged.a1) / len(adult))
    assert flagged.large and flagged.imbalance > 0.1
    assert "Consensus" in flagged.guidance


def test_reswap_linearity_on_well_specified_data_is_linear():
    data = symmetric_halves_data(8000, seed=3)
    released = swap(data, columns="s", rate=0.1, random_state=4).data
    check = reswap_linearity(
        released,
        "s",
        left=["x0", "x1"],
        right=["x2", "x3"],
        extra_rates=(0.0, 0.05, 0.1, 0.15),
        random_state=5,
    )
    assert check.method == "consensus"
    assert not check.nonlinear
    assert 0.75 < check.slope_ratio < 1.33
    assert check.added_counts[0] == 0 and (np.diff(check.added_counts) > 0).all()
    assert "linear" in check.summary()


def _regions(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 3, n)
    x = {
        f"x{j}": np.where(rng.random(n) < np.where(codes == j, 0.85, 0.2), "a", "b")
        for j in range(3)
    }
    return pd.DataFrame({**x, "region": np.array(["n", "s", "e"])[codes]})


def test_split_concordance_of_a_multi_valued_attribute():
    # Nothing swapped. Each "rest" group is a mixture of two regions, which one Naive
    # Bayes class cannot fit: the splits are unreliable, and are no longer called
    # concordant (before: rho near 1/2 in every split, "concordant").
    data = _regions(12000, seed=6)
    calm = split_concordance(data, "region", calibrate=False)
    assert len(calm.table) == 3
    assert calm.code in ("no_evidence", "unreliable") and not calm.concordant
    assert calm.summary().startswith(f"verdict: {calm.code}: ")
    # No number is shown for a split whose verdict is not quotable.
    shaky = ~calm.table["verdict"].isin(["estimated", "no_evidence"])
    assert calm.table.loc[shaky, "rho"].isna().all()
    # The table's rho is Lemma 2.3 applied to each split's own alpha, n0 and n1.
    released = swap(data, columns="region", rate=0.08, random_state=7).data
    result = split_concordance(
        released, "region", splits=[["n"], ["s"], ["e", "n"]], calibrate=False
    )
    t = result.table.dropna(subset=["rho"])
    expected = t["alpha"] * (len(data) - 1) / (2 * t["n0"] * t["n1"])
    assert np.allclose(t["rho"], expected)


def test_split_concordance_flags_misspecified_splits():
    # "Rest" groups are mixtures of Gaussians, which one Gaussian per group cannot fit:
    # the splits disagree, as Section 4.1.3 intends the diagnostic to reveal.
    rng = np.random.default_rng(6)
    n = 12000
    region = rng.choice(["n", "s", "e", "w"], size=n)
    codes = pd.Series(region).map({"n": 0, "s": 1, "e": 2, "w": 3}).to_numpy()
    x = {f"x{j}": rng.normal(codes * (0.8 + 0.2 * j), 1.0) for j in range(3)}
    released = swap(
        pd.DataFrame({**x, "region": region}), columns="region", rate=0.08, random_state=7
    ).data
    result = split_concordance(released, "region", model="gaussian", calibrate=False)
    assert len(result.table) == 4
    assert not result.concordant
    assert result.code == "unreliable"
    assert result.summary().startswith("verdict: unreliable: ")


def test_diagnostics_refuse_bad_input():
    data = symmetric_halves_data(300, seed=0)
    with pytest.raises(ParameterError, match="three distinct"):
        reswap_linearity(data, "s", extra_rates=(0.0, 0.1))
    with pytest.raises(ParameterError, match="both left and right"):
        reswap_linearity(data, "s", left=["x0"])
    with pytest.raises(ParameterError, match="multi-valued"):
        split_concordance(data, "s", calibrate=False)
