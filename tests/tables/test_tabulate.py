from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from tables_constants import REGIONS

from sdckit.errors import DataError, ParameterError, SchemaError
from sdckit.tables import TableStructure, add_record_keys, tabulate


def test_counts_match_groupby_and_include_empty_cells(census):
    table = tabulate(census, ["district", "age", "sex"], margins=False)
    assert len(table) == 5 * 4 * 2
    expected = census.groupby(["district", "age", "sex"]).size()
    got = table.set_index(["district", "age", "sex"])["count"]
    for key, value in got.items():
        assert value == expected.get(key, 0)
    assert table["count"].sum() == len(census)


def test_margins_and_hierarchy_are_sums(census):
    table = tabulate(census, ["district", "sex"], hierarchies=REGIONS)
    structure = table.attrs["structure"]
    assert structure.categories[0] == ("d1", "d2", "d3", "d4", "d5", "north", "south", "Total")
    indexed = table.set_index(["district", "sex"])["count"]
    assert indexed[("Total", "Total")] == len(census)
    north = census["district"].isin(["d1", "d2"]) & (census["sex"] == "F")
    assert indexed[("north", "F")] == north.sum()
    matrix, described = structure.relations()
    assert np.all(matrix @ table["count"].to_numpy() == 0)
    # Total of district is north + south (not the five districts twice)
    texts = [structure.describe_relation(d) for d in described]
    assert any("'Total' is the sum of ['north', 'south']" in t for t in texts)


def test_nested_hierarchy_and_weights(census):
    nested = {
        "district": {"north": ["d1", "d2"], "south": ["d3", "d4"], "land": ["north", "south"]}
    }
    table = tabulate(census, ["district"], hierarchies=nested, weights="income")
    assert table.set_index("district")["count"]["Total"] == len(census)
    got = table.set_index("district")["weighted_count"]
    assert got["land"] == pytest.approx(census.loc[census.district != "d5", "income"].sum())
    assert got["Total"] == pytest.approx(census["income"].sum())


def test_cell_keys_are_sums_modulo_and_consistent_across_tables(keyed):
    t1 = tabulate(keyed, ["district", "sex"], record_key="record_key")
    t2 = tabulate(keyed, ["age", "district"], record_key="record_key")
    mod = 2**31 - 1
    cell = t1[(t1.district == "d3") & (t1.sex == "Total")]["cell_key"].item()
    same = t2[(t2.age == "Total") & (t2.district == "d3")]["cell_key"].item()
    assert cell == same == keyed.loc[keyed.district == "d3", "record_key"].sum() % mod


def test_uniform_keys_sum_modulo_one(census):
    keyed = add_record_keys(census, 3, kind="uniform")
    table = tabulate(keyed, ["sex"], record_key="record_key")
    total = table.loc[table.sex == "Total", "cell_key"].item()
    assert 0 <= total < 1
    assert total == pytest.approx(np.modf(keyed["record_key"].sum())[0], abs=1e-6)


def test_input_not_modified_and_structure_roundtrip(census):
    before = census.copy()
    table = tabulate(
        census, ["age", "sex"], hierarchies={"age": {"adult": ["18-39", "40-64", "65+"]}}
    )
    pd.testing.assert_frame_equal(census, before)
    rebuilt = TableStructure.from_table(
        table.sample(frac=1, random_state=0),
        ["age", "sex"],
        hierarchies={"age": {"adult": ["18-39", "40-64", "65+"]}},
    )
    assert rebuilt.shape == table.attrs["structure"].shape
    positions = rebuilt.cell_positions(table)
    assert sorted(positions) == list(range(len(table)))


def test_categories_give_unobserved_cells(census):
    table = tabulate(census, ["sex"], categories={"sex": ["F", "M", "X"]}, margins=False)
    assert table.set_index("sex")["count"]["X"] == 0


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"dims": ["nope"]}, SchemaError),
        ({"dims": ["sex"], "hierarchies": {"sex": {"both": ["F", "Q"]}}}, ParameterError),
        ({"dims": ["sex"], "hierarchies": {"sex": {"F": ["M"]}}}, ParameterError),
        ({"dims": ["sex"], "categories": {"sex": ["F"]}}, DataError),
    ],
)
def test_bad_input_errors(census, kwargs, error):
    with pytest.raises(error):
        tabulate(census, **kwargs)


def test_missing_values_named(census):
    broken = census.copy()
    broken.loc[105, "age"] = None
    with pytest.raises(DataError, match="'age'"):
        tabulate(broken, ["age"])


def test_nullable_integer_codes():
    # Int64 (nullable) codes: complete ones are tabulated like int64, a missing one is named
    frame = pd.DataFrame(
        {"code": pd.array([3, 1, 3, 2], dtype="Int64"), "sex": ["f", "m", "m", "f"]}
    )
    table = tabulate(frame, ["code", "sex"])
    plain = tabulate(frame.astype({"code": "int64"}), ["code", "sex"])
    assert table["count"].tolist() == plain["count"].tolist()
    frame.loc[2, "code"] = pd.NA
    with pytest.raises(DataError, match="'code'.*row 3"):  # data rows counted from 1
        tabulate(frame, ["code", "sex"])


def test_every_subtable_sum(census):
    dims = ["district", "age", "sex"]
    table = tabulate(census, dims)
    for r in (1, 2):
        for sub in itertools.combinations(dims, r):
            mask = np.ones(len(table), bool)
            for d in dims:
                mask &= (table[d] == "Total") != (d in sub)
            assert table.loc[mask, "count"].sum() == len(census)
