from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from sdckit.errors import DataError, InfeasibleError, ParameterError
from sdckit.tables import safe_perturb, tabulate

CONTROLLED = [["district", "age"], ["age", "sex"]]
VARIABLES = ["district", "age", "sex"]


@pytest.fixture
def result(census):
    return safe_perturb(census, CONTROLLED, random_state=3)


def test_no_small_cell_in_any_table(census, result):
    assert result.stats["unsafe_cells_before"] > 0
    for r in range(1, len(VARIABLES) + 1):
        for sub in itertools.combinations(VARIABLES, r):
            counts = tabulate(result.data, list(sub))["count"]
            assert not counts.isin([1, 2]).any(), sub


def test_records_kept_shape_and_other_columns(census, result):
    before = census.copy()
    out = result.data
    pd.testing.assert_frame_equal(census, before)
    assert out.index.equals(census.index)
    assert list(out.columns) == list(census.columns)
    assert (out.dtypes == census.dtypes).all()
    assert np.array_equal(out["income"], census["income"])
    changed = result.diagnostics["changed"]
    assert changed.sum() == result.stats["records_changed"] > 0
    same = (out[VARIABLES] == census[VARIABLES]).all(axis=1)
    assert np.array_equal(~same.to_numpy(), changed.to_numpy())


def test_controlled_deviation_is_reported_and_bounded(census, result):
    for table in CONTROLLED:
        before = tabulate(census, table)["count"].to_numpy()
        after = tabulate(result.data, table)["count"].to_numpy()
        assert np.abs(after - before).max() <= result.stats["max_abs_deviation"]
    assert result.stats["max_abs_deviation"] <= result.stats["feasible_bound"]
    assert "unsafe" in result.summary()


def test_same_seed_same_output(census):
    a = safe_perturb(census, CONTROLLED, random_state=11).data
    b = safe_perturb(census, CONTROLLED, random_state=11).data
    pd.testing.assert_frame_equal(a, b)


def test_categorical_columns_stay_categorical(census):
    data = census.assign(age=pd.Categorical(census["age"]))
    out = safe_perturb(data, CONTROLLED, random_state=0).data
    assert out["age"].dtype == data["age"].dtype


def test_errors(census):
    with pytest.raises(ParameterError):
        safe_perturb(census, [])
    with pytest.raises(ParameterError):
        safe_perturb(census, CONTROLLED, variables=["age", "sex"])
    with pytest.raises(InfeasibleError):
        safe_perturb(census.iloc[:2], [["sex"]])
    broken = census.copy()
    broken.loc[100, "sex"] = None
    with pytest.raises(DataError):
        safe_perturb(broken, [["sex"]])
