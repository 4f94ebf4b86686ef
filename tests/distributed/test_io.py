"""Parquet in and out: schema enforced per file, inputs never modified, atomic output."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest
from distributed_data import digest as _digest
from distributed_data import plant_text_in_age

from sdckit.distributed import read_parquet, write_parquet
from sdckit.errors import DataError, ParameterError


def test_reads_one_partition_per_file(census, client):
    frame, directory = census
    source = read_parquet(directory)
    assert source.frame.npartitions == 4
    assert source.rows == (750, 750, 750, 750)
    back = source.frame.compute().reset_index(drop=True)
    pd.testing.assert_frame_equal(back, frame, check_dtype=False)
    numeric = [c for c in frame.columns if frame[c].dtype.kind in "if"]
    assert (back[numeric].dtypes == frame[numeric].dtypes).all()


def test_glob_selects_files(census, client):
    _, directory = census
    source = read_parquet(directory / "part-00[01].parquet")
    assert source.n_records == 1500


def test_bad_partition_names_file_column_and_row(census, client, tmp_path):
    frame, directory = census
    plant_text_in_age(frame, directory, rows=10, row=7)
    source = read_parquet(directory)
    with pytest.raises(DataError) as info:
        source.frame.compute()
    message = str(info.value)
    assert "part-999.parquet" in message
    assert "'age'" in message
    assert "row 7" in message and "'forty'" in message


def test_numbers_written_as_text_are_converted(census, client):
    frame, directory = census
    text = frame.iloc[:10].copy()
    text["age"] = text["age"].astype(str)
    text.to_parquet(directory / "part-999.parquet", index=False)
    back = read_parquet(directory).frame.compute()
    assert back["age"].dtype == np.int64
    assert back["age"].iloc[-10:].tolist() == frame["age"].iloc[:10].tolist()


def test_missing_column_is_named(census, client):
    frame, directory = census
    frame.iloc[:5].drop(columns="sex").to_parquet(directory / "part-999.parquet", index=False)
    with pytest.raises(DataError, match=r"part-999\.parquet.*missing \['sex'\]"):
        read_parquet(directory).frame.compute()


def test_write_is_atomic_and_input_untouched(census, client, tmp_path):
    _, directory = census
    before = _digest(directory)
    source = read_parquet(directory)
    out = tmp_path / "copy"
    write_parquet(source.frame, out, inputs=source.files)
    assert _digest(directory) == before
    assert sorted(os.listdir(out)) == [f"part.{i}.parquet" for i in range(4)]
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".copy")]
    with pytest.raises(ParameterError, match="exists"):
        write_parquet(source.frame, out, inputs=source.files)
    with pytest.raises(ParameterError, match="input"):
        write_parquet(source.frame, directory, inputs=source.files, overwrite=True)


def test_failed_write_leaves_nothing(census, client, tmp_path):
    frame, directory = census
    bad = frame.iloc[:10].copy()
    bad["hours"] = "n/a"
    bad.to_parquet(directory / "part-999.parquet", index=False)
    source = read_parquet(directory)
    with pytest.raises(DataError, match="part-999"):
        write_parquet(source.frame, tmp_path / "out", inputs=source.files)
    assert not (tmp_path / "out").exists()
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".out")]


_KILLED_WRITER = """
import sys, time
from pathlib import Path
import dask
from sdckit.distributed import read_parquet, write_parquet

source, out, marker = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])

def slow(part, partition_info=None):
    if partition_info and partition_info["number"] == 1:
        marker.write_text("writing")
        time.sleep(60)
    return part

frame = read_parquet(source).frame
with dask.config.set(scheduler="threads", num_workers=1):
    write_parquet(frame.map_partitions(slow, meta=frame._meta), out)
"""


@pytest.mark.slow
def test_killed_run_leaves_nothing_that_looks_complete(census, tmp_path):
    import signal
    import subprocess
    import sys
    import time

    _, directory = census
    script = tmp_path / "writer.py"
    script.write_text(_KILLED_WRITER)
    out, marker = tmp_path / "masked", tmp_path / "started"
    process = subprocess.Popen([sys.executable, str(script), str(directory), str(out), str(marker)])
    try:
        deadline = time.monotonic() + 120
        while not marker.exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert marker.exists(), "the writer did not reach its second partition"
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert not out.exists()
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.startswith(".masked.tmp-")]
    assert len(leftovers) == 1  # hidden, and named as temporary
