"""On real data: the Adult file as Parquet partitions gives the single-machine results exactly.

The census extract of ../shared/data/adult.csv (48,842 records, missing values in
workclass, occupation and native_country) is written as 5 Parquet files of
unequal sizes; tables, cell key perturbation and key risk computed by map-reduce
on a local cluster of 2 worker processes must equal the in-memory functions on
the same records, and the input files must come out untouched.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from distributed_data import digest as _digest

from sdckit.assess import key_risk
from sdckit.distributed import (
    add_record_keys_by_partition,
    cell_key_perturb_by_partition,
    key_risk_by_partition,
    read_parquet,
    tabulate_by_partition,
    write_parquet,
)
from sdckit.tables import cell_key_perturb, design_ptable, tabulate
from shared_data import shared_csv

DIMS = ["sex", "race", "relationship"]
HIERARCHY = {"race": {"Other races": ["Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other"]}}


@pytest.fixture(scope="module")
def adult(tmp_path_factory):
    """Adult as 5 Parquet files of unequal sizes, and the same records keyed."""
    frame = shared_csv("adult.csv")
    directory = tmp_path_factory.mktemp("adult") / "parts"
    directory.mkdir()
    cuts = [0, 4000, 15000, 15001, 33000, len(frame)]
    for i, (start, stop) in enumerate(itertools.pairwise(cuts)):
        frame.iloc[start:stop].to_parquet(directory / f"adult-{i}.parquet", index=False)
    return frame, directory


def test_tables_and_perturbation_identical_on_adult(adult, client, tmp_path):
    frame, directory = adult
    before = _digest(directory)
    keyed_dir = write_parquet(
        add_record_keys_by_partition(read_parquet(directory), seed=2011), tmp_path / "keyed"
    )
    keyed = pd.read_parquet(keyed_dir)
    assert len(keyed) == len(frame) and keyed["record_key"].nunique() > 48_000
    ours = tabulate_by_partition(
        keyed_dir, DIMS, hierarchies=HIERARCHY, weights="fnlwgt", record_key="record_key"
    )
    single = tabulate(keyed, DIMS, hierarchies=HIERARCHY, weights="fnlwgt", record_key="record_key")
    pd.testing.assert_frame_equal(
        ours.drop(columns="weighted_count"), single.drop(columns="weighted_count")
    )
    np.testing.assert_allclose(ours["weighted_count"], single["weighted_count"], rtol=1e-12)
    # the grand total is the file's record count, and the hierarchy's margin is there
    total = ours[(ours.sex == "Total") & (ours.race == "Total") & (ours.relationship == "Total")]
    assert int(total["count"].iloc[0]) == 48_842
    assert "Other races" in set(ours["race"])

    ptable = design_ptable(D=3, V=2.01, js=2)
    perturbed = cell_key_perturb_by_partition(
        keyed_dir, ptable, dims=DIMS, hierarchies=HIERARCHY, threshold=5
    )
    reference = cell_key_perturb(keyed, ptable, dims=DIMS, hierarchies=HIERARCHY, threshold=5)
    pd.testing.assert_frame_equal(perturbed.table, reference.table)
    pd.testing.assert_frame_equal(perturbed.internal, reference.internal)
    assert perturbed.stats["cells_changed"] > 0
    assert _digest(directory) == before


def test_key_risk_identical_on_adult(adult, client):
    frame, directory = adult
    before = _digest(directory)
    # native_country and workclass have missing values: a category of their own
    keys = ["sex", "race", "marital_status", "workclass", "native_country"]
    ours = key_risk_by_partition(directory, keys, sensitive="occupation")
    single = key_risk(frame, keys, sensitive="occupation")
    for name in ("n_combinations", "sample_uniques", "k_anonymity", "l_diversity"):
        assert getattr(ours, name) == getattr(single, name), name
    assert ours.violations == single.violations
    assert ours.expected_reidentifications == pytest.approx(
        single.expected_reidentifications, rel=1e-12
    )
    np.testing.assert_array_equal(ours.record_frequencies(), np.sort(single.frequencies.to_numpy()))
    assert ours.sample_uniques > 100  # rare countries and races: a real file has uniques
    assert ours.combinations["workclass"].isna().any()
    assert _digest(directory) == before
