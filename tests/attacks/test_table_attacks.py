"""Attacks on cell-key tables (Giessing & Höhne 2011, §5) with answers known exactly."""

from __future__ import annotations

import pandas as pd
import pytest

from sdckit.attacks.tables import (
    averaging_attack,
    interval_attack,
    overlap_differencing_attack,
    shared_cells,
)
from sdckit.errors import ParameterError, SchemaError
from sdckit.tables import add_record_keys, design_ptable


@pytest.fixture
def people(mixed_data) -> pd.DataFrame:
    """The shared 200 records, with record keys: region, smoker and children as dimensions."""
    return add_record_keys(mixed_data[["region", "smoker", "children"]], seed=4)


def test_the_papers_example_is_pinned_down():
    # Two inner cells of 1 published as 3, their total of 2 published as 0, D = 2.
    table = pd.DataFrame({"a": ["x", "y", "Total"], "perturbed": [3, 3, 0], "count": [1, 1, 2]})
    result = interval_attack(table, max_deviation=2, truth="count")
    assert result.table["lower"].tolist() == [1, 1, 2]
    assert result.table["upper"].tolist() == [1, 1, 2]
    assert result.stats["small_pinned"] == 3  # the total of 2 too
    assert result.summary().startswith(
        "The ±2 bounds and the table's additive relations pin down 3"
    )


def test_an_additive_table_within_d_is_not_narrowed():
    table = pd.DataFrame({"a": ["x", "y", "Total"], "perturbed": [10, 10, 20]})
    result = interval_attack(table, max_deviation=2)
    assert result.table["lower"].tolist() == [8, 8, 18]
    assert result.table["upper"].tolist() == [12, 12, 22]
    assert result.stats["narrowed"] == 0


def test_bounds_hold_the_truth_of_a_cell_key_table(people):
    from sdckit.tables import cell_key_perturb

    released = cell_key_perturb(
        people, design_ptable(3, 1.5), dims=["region", "smoker", "children"]
    )
    table = released.table.assign(count=released.internal["count"].to_numpy())
    result = interval_attack(
        table, max_deviation=3, dims=["region", "smoker", "children"], truth="count"
    )
    assert result.stats["outside_bounds"] == 0
    # Differencing of margins: the least-squares additive table is closer than the release.
    assert result.stats["rmse_additive"] < result.stats["rmse_published"]


def test_an_understated_deviation_is_one_line():
    table = pd.DataFrame({"a": ["x", "y", "Total"], "perturbed": [3, 3, 20]})
    with pytest.raises(ParameterError, match="max_deviation: no additive table lies within"):
        interval_attack(table, max_deviation=1)
    with pytest.raises(SchemaError, match="value: the table has no column 'count'"):
        interval_attack(table, max_deviation=1, value="count")


def test_consistent_keys_defeat_averaging(people):
    result = averaging_attack(
        people,
        design_ptable(3, 1.5),
        tables=[
            ["region", "smoker"],
            ["region", "children"],
            ["smoker", "children"],
            ["region", "smoker", "children"],
        ],
        random_state=0,
    )
    table = result.table.set_index("keys")
    consistent = table.loc["consistent record keys"]
    fresh = table.loc["keys drawn per table"]
    assert consistent["distinct_values"] == 0
    assert consistent["rmse_average"] == consistent["rmse_single"]
    assert fresh["rmse_average"] < 0.85 * fresh["rmse_single"]


def test_shared_cells_intersects_intervals():
    one = pd.DataFrame({"sex": ["f", "m", "Total"], "perturbed": [10, 12, 20]})
    two = pd.DataFrame(
        {"sex": ["f", "f", "Total"], "region": ["n", "Total", "Total"], "perturbed": [4, 8, 23]}
    )
    shared = shared_cells([one, two], max_deviation=2).set_index("cell")
    assert shared.loc["sex = f", "values"] == (8, 10)
    assert (shared.loc["sex = f", "lower"], shared.loc["sex = f", "upper"]) == (8, 10)
    assert shared.loc["total", "mean"] == 21.5


def test_differencing_tables_one_record_apart_locates_it(people):
    result = overlap_differencing_attack(
        people, design_ptable(3, 1.5), dims=["region", "smoker"], n_targets=20, random_state=1
    )
    # Only the cells holding the target change key, so a change points at its cell.
    assert result.stats["located"] >= 0.5
    assert result.stats["clean_one"] < result.stats["located"]
