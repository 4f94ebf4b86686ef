"""RWN by partitions: reproducible whatever the number of workers, the paper's method per partition."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from distributed_data import digest as _digest

from sdckit.distributed import dask_client, read_parquet
from sdckit.distributed.rwn import rwn_by_partition
from sdckit.errors import ParameterError
from sdckit.microdata import rwn


@pytest.mark.parametrize(
    ("partitioning", "neighbors"), [("random", None), ("spatial", None), ("random", "pairs")]
)
def test_same_output_with_two_processes_and_one_thread(census, client, partitioning, neighbors):
    _, directory = census
    options = {"n_partitions": 3, "partitioning": partitioning, "random_state": 11}
    if neighbors is not None:
        options.update(neighbors=neighbors, sample_size=20)
    two_processes = rwn_by_partition(directory, **options)
    with dask_client(n_workers=1, processes=False, dashboard_address=None):
        one_thread = rwn_by_partition(directory, **options)
    pd.testing.assert_frame_equal(two_processes.data, one_thread.data)
    pd.testing.assert_frame_equal(two_processes.partitions, one_thread.partitions)
    assert two_processes.stats["share_of_cells_changed"] > 0.3


@pytest.mark.parametrize(
    ("neighbors", "extra"), [(None, {}), ("pairs", {"sample_size": 20, "recall_sample": 200})]
)
def test_one_partition_is_single_machine_rwn(census, client, neighbors, extra):
    # Method 3.1 (exact search) and 3.2 (Method 2, sampled pairs, inside each partition)
    frame, directory = census
    ours = rwn_by_partition(
        directory, n_partitions=1, random_state=4, k=7, neighbors=neighbors, **extra
    )
    stream = np.random.default_rng(np.random.SeedSequence(4, spawn_key=(2, 0)))
    single = rwn(frame, k=7, random_state=stream, n_jobs=1, neighbors=neighbors, **extra)
    pd.testing.assert_frame_equal(ours.data, single.data, check_dtype=False)
    assert (ours.data["income"] != frame["income"]).mean() > 0.5
    if neighbors == "pairs":
        assert ours.partitions["recall_at_k"].iloc[0] == single.stats["recall_at_k"]
        assert "pairs neighbour search: recall at k" in ours.summary()


def test_values_stay_within_partition_and_in_file_order(census, client, tmp_path):
    frame, directory = census
    before = _digest(directory)
    out = tmp_path / "masked"
    result = rwn_by_partition(read_parquet(directory), n_partitions=4, random_state=1, output=out)
    assert _digest(directory) == before  # the input files are never modified
    masked = pd.read_parquet(out)
    assert sorted(p.name for p in out.iterdir()) == [f"part.{i}.parquet" for i in range(4)]
    assert masked.shape == frame.shape and list(masked.columns) == list(frame.columns)
    # RWN only copies values of the same column
    for column in frame.columns:
        assert set(masked[column]) <= set(frame[column])
    # equal random partitions (sizes differ by at most one)
    sizes = result.partitions["records"]
    assert sizes.max() - sizes.min() <= 1 and sizes.sum() == len(frame)
    assert len(result.partitions) == 4 and result.output == out
    assert "4 random partitions" in result.summary()


def test_spatial_blocks_give_nearer_donors(census, client):
    frame, directory = census
    numeric = ["age", "hours", "income", "weight"]
    scaled = (frame[numeric] - frame[numeric].min()) / (frame[numeric].max() - frame[numeric].min())
    change = {}
    for partitioning in ("random", "spatial"):
        result = rwn_by_partition(
            directory, n_partitions=6, partitioning=partitioning, random_state=2, columns=numeric
        )
        masked = (result.data[numeric] - frame[numeric].min()) / (
            frame[numeric].max() - frame[numeric].min()
        )
        change[partitioning] = float((masked - scaled).abs().to_numpy().mean())
    # a spatial block keeps the full density of its region of the design, a random
    # partition a sixth of it: the donors of a spatial block lie nearer
    assert change["spatial"] < change["random"]


def test_parameters_checked(census, client):
    _, directory = census
    with pytest.raises(ParameterError, match="partitioning"):
        rwn_by_partition(directory, n_partitions=2, partitioning="kmeans")
    with pytest.raises(ParameterError, match="random_state"):
        rwn_by_partition(directory, n_partitions=2, random_state=np.random.default_rng(1))
    with pytest.raises(ParameterError, match="n_partitions"):
        rwn_by_partition(directory, n_partitions=2000)
    with pytest.raises(ParameterError, match="neighbors"):
        rwn_by_partition(directory, n_partitions=2, neighbors="kdtree")
