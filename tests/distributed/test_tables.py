"""Tables as map-reduce: identical to sdckit.tables on the same records."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from distributed_data import census_like, write_parts

from sdckit.distributed import read_parquet, write_parquet
from sdckit.distributed.tables import (
    add_record_keys_by_partition,
    cell_key_perturb_by_partition,
    tabulate_by_partition,
)
from sdckit.errors import DataError
from sdckit.tables import cell_key_perturb, design_ptable, tabulate

HIERARCHY = {"region": {"north": ["r1", "r2"], "south": ["r3", "r4", "r5"]}}


@pytest.fixture
def keyed(census, client, tmp_path):
    """The census files with record keys drawn partition by partition, and the whole frame."""
    _, directory = census
    keys = add_record_keys_by_partition(read_parquet(directory), seed=2011)
    out = write_parquet(keys, tmp_path / "keyed")
    whole = pd.read_parquet(out)  # part.0 .. part.3 in order
    return out, whole


def test_record_keys_do_not_depend_on_workers(census, tmp_path):
    from sdckit.distributed import dask_client

    _, directory = census
    runs = []
    for workers in (1, 2):
        with dask_client(n_workers=workers, processes=False, dashboard_address=None):
            keys = add_record_keys_by_partition(read_parquet(directory), seed=7)
            runs.append(keys.compute()["record_key"].to_numpy())
    np.testing.assert_array_equal(runs[0], runs[1])
    assert len(np.unique(runs[0])) > 2990  # drawn per record, not repeated per partition


def test_tabulate_identical_with_margins_hierarchy_weights(keyed):
    directory, whole = keyed
    dims = ["region", "age_group", "sex"]
    ours = tabulate_by_partition(
        directory, dims, hierarchies=HIERARCHY, weights="weight", record_key="record_key"
    )
    single = tabulate(whole, dims, hierarchies=HIERARCHY, weights="weight", record_key="record_key")
    assert "north" in set(ours["region"]) and "Total" in set(ours["sex"])
    pd.testing.assert_frame_equal(
        ours.drop(columns="weighted_count"), single.drop(columns="weighted_count")
    )
    np.testing.assert_allclose(ours["weighted_count"], single["weighted_count"], rtol=1e-12)
    assert ours.attrs["structure"] == single.attrs["structure"]
    total = ours[(ours.region == "Total") & (ours.age_group == "Total") & (ours.sex == "Total")]
    assert int(total["count"].iloc[0]) == len(whole)


def test_cell_key_perturbation_identical(keyed):
    directory, whole = keyed
    ptable = design_ptable(D=3, V=2.01, js=2)
    dims = ["region", "tenure", "age_group"]
    ours = cell_key_perturb_by_partition(
        directory, ptable, dims=dims, hierarchies=HIERARCHY, threshold=5
    )
    single = cell_key_perturb(whole, ptable, dims=dims, hierarchies=HIERARCHY, threshold=5)
    pd.testing.assert_frame_equal(ours.internal, single.internal)
    pd.testing.assert_frame_equal(ours.table, single.table)
    assert dict(ours.stats) == dict(single.stats)
    assert ours.stats["cells_changed"] > 0
    assert "count" not in ours.table.columns


def test_uniform_keys_and_ons_key_range(census, client, tmp_path):
    _, directory = census
    for kind, key_range in (("uniform", None), ("integer", 256)):
        keys = add_record_keys_by_partition(
            read_parquet(directory), seed=3, kind=kind, key_range=key_range
        )
        out = write_parquet(keys, tmp_path / f"keys-{kind}")
        whole = pd.read_parquet(out)
        ours = tabulate_by_partition(
            out, ["tenure", "sex"], record_key="record_key", key_modulus=key_range
        )
        single = tabulate(whole, ["tenure", "sex"], record_key="record_key", key_modulus=key_range)
        pd.testing.assert_frame_equal(ours, single)


def test_missing_category_names_partition_file(tmp_path, client):
    frame = census_like(400, 5)
    frame["sex"] = frame["sex"].astype(object)
    frame.loc[320, "sex"] = None
    directory = write_parts(frame, tmp_path / "gaps", 4)
    with pytest.raises(DataError, match=r"part-003\.parquet.*'sex'.*row 21"):
        tabulate_by_partition(directory, ["sex", "region"])


def test_file_of_another_type_is_counted_through_the_schema(census, client):
    """A file whose column has another type than the schema's takes the pandas path: same table."""
    frame, directory = census
    second = sorted(directory.glob("*.parquet"))[1]
    part = pd.read_parquet(second)
    part["age_group"] = part["age_group"].astype(float)  # whole numbers stored as floats
    part["weight"] = part["weight"].astype(str)  # numbers written as text
    part.to_parquet(second, index=False)
    dims = ["region", "age_group", "sex"]
    ours = tabulate_by_partition(directory, dims, weights="weight")
    single = tabulate(frame, dims, weights="weight")
    pd.testing.assert_frame_equal(
        ours.drop(columns="weighted_count"), single.drop(columns="weighted_count")
    )
    np.testing.assert_allclose(ours["weighted_count"], single["weighted_count"], rtol=1e-12)
