"""Every masker reports, per masked column, what changed; RWN really masks categorical columns."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdckit import rwn
from sdckit.microdata import available_maskers, mask
from sdckit.microdata.base import changed_share, column_changes
from shared_data import shared_csv


def _mixed(n: int = 600, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sex = rng.integers(0, 2, n)
    region = rng.integers(0, 4, n)
    age = rng.normal(45, 12, n) + 3 * sex
    income = np.exp(rng.normal(10, 0.5, n)) * (1 + 0.2 * region)
    return pd.DataFrame(
        {
            "age": age,
            "income": income,
            "sex": pd.Categorical(np.where(sex == 1, "F", "M")),
            "region": pd.Categorical([f"R{r}" for r in region]),
        }
    )


_PARAMS = {
    "rwn": {"k": 5},
    "swap": {"columns": ["sex"], "rate": 0.2},
    "rank_swap": {"columns": ["age", "income"], "window_percent": 10},
    "additive_noise": {"columns": ["age", "income"], "variance_factor": 0.1},
    "multiplicative_noise": {"columns": ["age", "income"], "variance_factor": 0.1},
    "microaggregation": {"columns": ["age", "income"], "group_size": 3},
    "recode": {"columns": ["age"], "intervals": {"age": [-1000, 30, 45, 60, 1000]}},
    "kanon": {"columns": ["sex", "region"], "k_anonymity": 3},
    "local_suppression": {"columns": ["sex", "region"], "k_anonymity": 3},
    "pram": {"columns": ["sex", "region"], "min_diagonal": 0.6},
    "record_swap": {"columns": ["region"], "keys": ["sex"], "swap_rate": 0.2},
}


@pytest.mark.parametrize("method", sorted(available_maskers()))
def test_every_masker_reports_each_masked_column(method: str) -> None:
    if method not in _PARAMS:
        pytest.fail(f"add parameters for the new masker {method!r} to this test")
    data = _mixed()
    result = mask(method, data, random_state=3, **_PARAMS[method])
    table = result.column_changes
    assert table is not None
    assert list(table.index) == list(result.masked_columns)
    for col in table.index:
        truth = float((data[col].astype(str) != result.data[col].astype(str)).mean())
        assert table.loc[col, "changed_share"] == pytest.approx(truth)
    text = result.summary()
    assert "per column:" in text
    for col in table.index:
        assert col in text.split("per column:")[1]


def test_column_changes_ratios_and_expected_share() -> None:
    original = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "c": ["a", "a", "b", "b"]})
    masked = pd.DataFrame({"x": [2.0, 4.0, 6.0, 8.0], "c": ["a", "b", "b", "b"]})
    table = column_changes(original, masked, ["x", "c"], selection_share=0.5)
    assert table.loc["x", "mean_ratio"] == pytest.approx(2.0)
    assert table.loc["x", "variance_ratio"] == pytest.approx(4.0)
    assert table.loc["c", "changed_share"] == pytest.approx(0.25)
    # 1 - (0.5^2 + 0.5^2) = 0.5, times the selection share 0.5
    assert table.loc["c", "expected_share"] == pytest.approx(0.25)
    assert np.isnan(table.loc["c", "mean_ratio"])


def test_warning_lines_for_unmasked_and_shifted_columns() -> None:
    data = _mixed(800)
    plain = rwn(data, k=5, balance_steps=False, random_state=1)
    # Plain one-hot dummies: a category mismatch outweighs any numeric difference.
    assert plain.column_changes.loc["sex", "changed_share"] < 0.1 * 0.5
    assert any("'sex'" in w and "practically unmasked" in w for w in plain.warnings)
    assert "WARNING: column 'sex'" in plain.summary()


def test_balanced_steps_mask_categorical_columns() -> None:
    data = _mixed(800)
    result = rwn(data, k=5, random_state=1)
    table = result.column_changes
    for col in ("sex", "region"):
        assert table.loc[col, "changed_share"] >= 0.1 * table.loc[col, "expected_share"], col
    assert not any("practically unmasked" in w for w in result.warnings)
    assert set(result.stats["balanced_variables"]) == {"sex", "region"}
    # An explicit weight is the user's decision: it is not rebalanced.
    kept = rwn(data, k=5, random_state=1, weights={"sex": 1.0})
    assert "sex" not in kept.stats["balanced_variables"]


def test_balance_steps_is_validated() -> None:
    from sdckit.errors import ParameterError

    with pytest.raises(ParameterError, match="balance_steps"):
        rwn(_mixed(50), balance_steps="yes")


@pytest.mark.slow
def test_adult_categorical_columns_masked_in_proportion_to_q() -> None:
    adult = shared_csv("adult.csv").dropna().head(3000)
    cats = ["sex", "race", "marital_status", "occupation"]
    data = adult[["age", "education_num", "hours_per_week", *cats]].copy()
    for c in cats:
        data[c] = pd.Categorical(data[c])
    for q in (1.0, 0.5):
        result = rwn(data, k=5, q=q, random_state=2)
        table = result.column_changes
        for c in cats:
            share, expected = table.loc[c, "changed_share"], table.loc[c, "expected_share"]
            assert share >= 0.1 * expected, (q, c, share, expected)
            assert share <= expected * 1.05, (q, c, share, expected)
        assert not any("practically unmasked" in w for w in result.warnings)


def test_codes_declared_categorical_get_no_mean_or_variance_ratio() -> None:
    from sdckit.schema import Schema

    data = _mixed(300)
    data["region_code"] = data["region"].cat.codes.astype("int64") + 1
    data = data.drop(columns=["region"])
    schema = Schema.infer(data, kinds={"region_code": "categorical"})
    result = rwn(data, k=5, schema=schema, random_state=4)
    row = result.column_changes.loc["region_code"]
    assert row["kind"] == "categorical"
    assert np.isnan(row["mean_ratio"]) and np.isnan(row["variance_ratio"])
    assert not any("region_code': its" in w for w in result.warnings)


def test_an_all_missing_numeric_column_is_reported_without_a_warning():
    import warnings

    before = pd.DataFrame({"x": [np.nan, np.nan, np.nan], "y": [1.0, 2.0, 4.0]})
    after = before.assign(y=[1.0, 2.5, 4.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = column_changes(before, after, ["x", "y"])
    assert np.isnan(table.loc["x", "mean_ratio"]) and np.isnan(table.loc["x", "variance_ratio"])
    assert table.loc["y", "changed_share"] == pytest.approx(1 / 3)


@pytest.mark.parametrize("dtype", ["str", "string[python]", "string[pyarrow]", "object"])
def test_changed_share_of_text_counts_a_blank_against_a_value_and_not_two_blanks(dtype) -> None:
    # Text of one dtype is compared in place (not coded jointly): the same answer either way.
    before = pd.Series(["x", None, "y", None, "z"], dtype=dtype)
    after = pd.Series(["x", None, None, "y", "q"], dtype=dtype)
    assert changed_share(before, after) == pytest.approx(3 / 5)
    assert changed_share(before, before.copy()) == 0.0
