from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from tables_constants import REGIONS

from sdckit.errors import DataError, InfeasibleError, ParameterError
from sdckit.tables import (
    TableStructure,
    cell_key_perturb,
    design_ptable,
    restore_additivity,
    tabulate,
)


@pytest.fixture(scope="module")
def ptable():
    return design_ptable(3, 2.01)


@pytest.mark.parametrize("method", ["two-stage", "joint"])
def test_restored_table_is_additive_within_bounds(keyed, ptable, method):
    perturbed = cell_key_perturb(
        keyed, ptable, dims=["district", "age", "sex"], hierarchies=REGIONS
    ).table
    before = perturbed.copy()
    result = restore_additivity(perturbed, max_deviation=3, method=method)
    pd.testing.assert_frame_equal(perturbed, before)
    table = result.table
    structure = table.attrs["structure"]
    matrix, _ = structure.relations()
    y = np.zeros(structure.n_cells)
    y[structure.cell_positions(table)] = table["restored"]
    assert np.array_equal(matrix @ y, np.zeros(matrix.shape[0]))
    assert (np.abs(table["restored"] - table["perturbed"]) <= 3).all()
    assert not table["restored"].isin([1, 2]).any()
    assert (table.loc[table["count"] == 0, "restored"] == 0).all()
    assert (table["restored"] >= 0).all()
    assert result.stats["max_abs_change"] <= 3
    assert "relations" in result.summary()


def test_already_additive_table_is_unchanged(census):
    table = tabulate(census, ["district", "sex"])
    assert not table["count"].isin([1, 2]).any()
    table = table.assign(perturbed=table["count"])
    result = restore_additivity(table, max_deviation=2)
    assert (result.table["restored"] == table["count"]).all()


def _one_way(values):
    return pd.DataFrame({"x": ["a", "b", "Total"], "perturbed": values, "count": values})


def test_infeasible_names_the_relation():
    with pytest.raises(InfeasibleError, match="x='Total' is the sum of"):
        restore_additivity(_one_way([3, 3, 20]), dims=["x"], max_deviation=1)


def test_weights_steer_the_adjustment():
    # 4 + 4 != 10: either the total or the inner cells must move by 2 in all
    heavy_total = restore_additivity(
        _one_way([4, 4, 10]), dims=["x"], max_deviation=3, weights=np.array([1.0, 1.0, 100.0])
    )
    assert heavy_total.table["restored"].tolist()[2] == 10
    heavy_inner = restore_additivity(
        _one_way([4, 4, 10]), dims=["x"], max_deviation=3, weights=np.array([100.0, 100.0, 1.0])
    )
    assert heavy_inner.table["restored"].tolist()[:2] == [4, 4]


def test_errors():
    with pytest.raises(ParameterError):
        restore_additivity(_one_way([3, 3, 6]))
    full = TableStructure.from_table(_one_way([3, 3, 6]), ["x"])
    with pytest.raises(DataError, match="every cell"):
        restore_additivity(_one_way([3, 3, 6]).iloc[:2], full)
    with pytest.raises(ParameterError):
        restore_additivity(_one_way([3, 3, 6]), dims=["x"], method="magic")
    with pytest.raises(DataError):
        restore_additivity(_one_way([3.5, 3, 6]), dims=["x"])
