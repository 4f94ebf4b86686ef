"""Properties of the rho data swap (Kifer 2015, Definitions 2.1-2.2, Lemma 2.3)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit import ParameterError, SchemaError
from sdckit.microdata import SwapResult, available_maskers, mask, swap


def _frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "income": rng.choice(["low", "high"], size=n, p=[0.7, 0.3]),
            "county": pd.Categorical(rng.choice(["a", "b", "c", "d"], size=n)),
            "age": rng.integers(18, 90, size=n),
            "wage": rng.lognormal(3, 1, size=n),
            "flag": rng.random(n) < 0.5,
        },
        index=pd.Index(rng.permutation(n) * 2 + 5, name="rec"),
    )


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(2, 300),
    rate=st.floats(0, 0.4999),
    seed=st.integers(0, 2**31),
    stratified=st.booleans(),
    two_attributes=st.booleans(),
)
def test_swap_properties(n, rate, seed, stratified, two_attributes):
    data = _frame(n, seed)
    # Input unmodified, index, column order and dtypes kept: tests/microdata/test_contract.py.
    attrs = ["income", "wage"] if two_attributes else ["income"]
    result = swap(
        data,
        columns=attrs,
        rate=rate,
        strata="county" if stratified else None,
        random_state=seed + 1,
    )
    out = result.data
    for col in data.columns:  # every column's multiset of values kept
        assert sorted(out[col].astype(str)) == sorted(data[col].astype(str))
    for col in set(data.columns) - set(attrs):
        pd.testing.assert_series_equal(out[col], data[col])
    # Swap attributes move together, within a stratum, between the recorded partners.
    diag = result.diagnostics
    partner = diag["partner"].to_numpy()
    pos = np.flatnonzero(partner >= 0)
    assert (partner[partner[pos]] == pos).all()  # pairs are disjoint and symmetric
    for col in attrs:
        assert (out[col].to_numpy()[pos] == data[col].to_numpy()[partner[pos]]).all()
    if stratified:
        county = data["county"].to_numpy()
        assert (county[pos] == county[partner[pos]]).all()
    else:
        assert result.pairs_swapped == min(int(np.floor(rate * n + 0.5)), n // 2)
    # Realised alpha equals a direct count of records changed 0 -> 1 (binary attribute).
    changed_rows = (out[attrs].to_numpy() != data[attrs].to_numpy()).any(axis=1)
    assert (diag["changed"].to_numpy() == changed_rows).all()
    if not two_attributes:
        low_to_high = int(((data["income"] == "low") & (out["income"] == "high")).sum())
        high_to_low = int(((data["income"] == "high") & (out["income"] == "low")).sum())
        assert result.group_swap_count == low_to_high == high_to_low
    assert result.alpha == changed_rows.sum() // 2
    assert result.rho == rate


def test_same_seed_same_output():
    data = _frame(500, 3)
    a = swap(data, columns="income", rate=0.2, random_state=11)
    b = swap(data, columns="income", rate=0.2, random_state=11)
    c = swap(data, columns="income", rate=0.2, random_state=12)
    pd.testing.assert_frame_equal(a.data, b.data)
    pd.testing.assert_frame_equal(a.diagnostics, b.diagnostics)
    assert not a.data.equals(c.data)


def test_rate_zero_is_identity():
    data = _frame(100, 4)
    result = swap(data, columns="income", rate=0.0, random_state=0)
    pd.testing.assert_frame_equal(result.data, data)
    assert result.alpha == 0 and result.pairs_swapped == 0


def test_lemma_2_3_expected_group_swap_count():
    # E[alpha] = rho * 2 n0 n1 / (N - 1); the mean over 300 swaps is within 4 SE.
    rng = np.random.default_rng(0)
    n, rate = 400, 0.15
    data = pd.DataFrame({"s": rng.random(n) < 0.3})
    alphas = np.array(
        [swap(data, columns="s", rate=rate, random_state=i).alpha for i in range(300)]
    )
    first = swap(data, columns="s", rate=rate, random_state=0)
    expected = first.stats["expected_group_swap_count"]
    n1 = int(data["s"].sum())
    assert expected == pytest.approx(rate * 2 * (n - n1) * n1 / (n - 1))
    assert abs(alphas.mean() - expected) < 4 * alphas.std() / np.sqrt(len(alphas))


def test_figure_1_style_example():
    # Kifer (2015) Figure 1: swapping two records of equal s changes nothing.
    data = pd.DataFrame({"s": [0, 1, 1, 0, 1, 0, 1, 1, 1, 1]})
    result = swap(data, columns="s", rate=0.3, random_state=5)
    assert result.pairs_swapped == 3
    assert result.alpha == int(((data["s"] == 0) & (result.data["s"] == 1)).sum())
    assert sorted(result.data["s"]) == sorted(data["s"])


def test_registered_and_runs_by_name():
    assert "swap" in available_maskers()
    result = mask("swap", _frame(50, 1), columns="income", rate=0.1, random_state=0)
    assert isinstance(result, SwapResult)
    assert "group swap count" in result.summary()


def test_bad_input_is_refused():
    data = _frame(20, 0)
    with pytest.raises(ParameterError, match="rate"):
        swap(data, columns="income", rate=0.5)
    with pytest.raises(ParameterError, match="rate"):
        swap(data, columns="income", rate=-0.1)
    with pytest.raises(SchemaError, match="nope"):
        swap(data, columns="nope", rate=0.1)
    with pytest.raises(ParameterError, match="strata"):
        swap(data, columns="income", rate=0.1, strata="income")
    with pytest.raises(ParameterError, match="random_state"):
        swap(data, columns="income", rate=0.1, random_state="x")


def test_cli_swap(tmp_path):
    from sdckit.cli.main import main

    data = _frame(60, 2).reset_index(drop=True)
    src, dst, diag = tmp_path / "in.csv", tmp_path / "out.csv", tmp_path / "diag.csv"
    data.to_csv(src, index=False)
    args = ["swap", str(src), "-o", str(dst), "-s", "income", "--rate", "0.2", "--seed", "1"]
    code = main([*args, "--strata", "county", "--diagnostics", str(diag), "--quiet"])
    assert code == 0
    out = pd.read_csv(dst)
    assert sorted(out["income"]) == sorted(data["income"])
    assert (out["county"] == data["county"].astype(str)).all()
    assert pd.read_csv(diag)["swapped"].any()
    assert main(["swap", str(src), "-o", str(dst), "-s", "income", "--rate", "0.7"]) == 2


def test_small_strata_report_realised_against_requested_pairs():
    # 100 strata of 3 records: round(0.2 * 3) = 1 pair per stratum, so 100 pairs
    # swapped where round(0.2 * 300) = 60 is the overall rate; with 0.1, none at all.
    data = pd.DataFrame({"s": np.tile([0, 1, 0], 100), "key": np.repeat(np.arange(100), 3)})
    result = swap(data, columns="s", rate=0.1, strata="key", random_state=1)
    assert result.stats["pairs_at_rate_overall"] == 30
    assert result.stats["pairs_requested"] == result.stats["pairs_swapped"] == 0
    more = swap(data, columns="s", rate=0.2, strata="key", random_state=1)
    assert more.stats["pairs_at_rate_overall"] == 60
    assert more.stats["pairs_requested"] == more.stats["pairs_swapped"] == 100
    # A block of 1 record asks for round(0.45) = 0; a block of 3 at rate 0.49 asks for 1.
    tiny = pd.DataFrame({"s": [0, 1, 0, 1, 1], "key": [0, 1, 1, 1, 2]})
    capped = swap(tiny, columns="s", rate=0.49, strata="key", random_state=1)
    assert capped.stats["pairs_swapped"] <= capped.stats["pairs_requested"]
    assert result.stats["realised_rate"] == 0.0
    plain = swap(data, columns="s", rate=0.1, random_state=1)
    assert plain.stats["pairs_swapped"] == plain.stats["pairs_requested"] == 30
