"""`sdckit rwn | tables add-keys | tables tabulate | tables perturb | risk` on Parquet directories.

End to end on a local cluster of 2 thread workers (the 2-process cluster of
the library tests is the session fixture ``client``; the command line starts
its own).
"""

from __future__ import annotations

import pandas as pd
import pytest
from distributed_data import digest, plant_text_in_age

from cli_words import sdckit
from sdckit.tables import cell_key_perturb, design_ptable, tabulate

LOCAL = "--workers 2 --no-processes"


def _err(capsys) -> str:
    return " ".join(capsys.readouterr().err.split())


def test_risk_of_a_directory_prints_key_risk_dashboard_and_progress(census, capsys):
    frame, directory = census
    assert sdckit(f"risk {{}} --keys region,sex --sensitive tenure {LOCAL}", directory) == 0
    captured = capsys.readouterr()
    combinations = frame.groupby(["region", "sex"]).ngroups
    assert f"key variables region, sex: {combinations} combinations" in captured.out
    assert "dashboard:" in captured.err
    assert "local cluster of 2 worker(s), 4GB each" in captured.err


def test_risk_of_a_directory_refuses_one_file_options(census, capsys):
    _, directory = census
    assert sdckit(f"risk {{}} --keys region --weight weight {LOCAL}", directory) == 2
    assert "--weight: not available for a directory of Parquet files" in _err(capsys)


def test_add_keys_then_perturb_equals_single_machine(census, tmp_path, capsys):
    _, directory = census
    before = digest(directory)
    keyed = tmp_path / "keyed"
    assert sdckit(f"tables add-keys {{}} -o {{}} --seed 9 {LOCAL}", directory, keyed) == 0
    out = tmp_path / "release.csv"
    code = sdckit(f"tables perturb {{}} --dims region,tenure -o {{}} {LOCAL}", keyed, out)
    assert code == 0
    release = pd.read_csv(out)
    assert list(release.columns) == ["region", "tenure", "perturbed"]
    single = cell_key_perturb(
        pd.read_parquet(keyed), design_ptable(3, 2.01), dims=["region", "tenure"]
    )
    assert release["perturbed"].tolist() == single.table["perturbed"].tolist()
    assert digest(directory) == before


def test_tabulate_a_directory_writes_true_counts_and_says_so(census, tmp_path, capsys):
    frame, directory = census
    out = tmp_path / "table.csv"
    assert sdckit("tables tabulate {} --dims sex,tenure -o {} --quiet", directory, out) == 0
    table = pd.read_csv(out)
    assert table["count"].tolist() == tabulate(frame, ["sex", "tenure"])["count"].tolist()
    err = capsys.readouterr().err
    assert "TRUE counts" in err and "dashboard" not in err


def test_rwn_of_a_directory_writes_a_directory(census, tmp_path, capsys):
    frame, directory = census
    out, diagnostics = tmp_path / "masked", tmp_path / "partitions.csv"
    line = "rwn {} -o {} --partitions 3 --partitioning spatial --seed 1 --diagnostics {}"
    line += " --columns age,hours,income,tenure"
    assert sdckit(f"{line} {LOCAL}", directory, out, diagnostics) == 0
    masked = pd.read_parquet(out)
    assert masked.shape == frame.shape
    assert pd.read_csv(diagnostics)["records"].sum() == len(frame)
    assert "RWN by 3 spatial partitions" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("rwn {} -o {}", "give --partitions u"),
        ("rwn {} -o {} --partitions 0", "--partitions must be between 1 and 1500"),
        ("rwn {} -o {} --partitions 1501", "--partitions must be between 1 and 1500"),
        ("rwn {} -o {} --partitions 2 --partitioning blocks", "--partitioning must be random"),
        ("rwn {} -o {} --partitions 2 --fresh-sample", "--fresh-sample applies to one file"),
        ("rwn {} -o {} --partitions 2 --memory-limit lots", "--memory-limit must be an amount"),
        ("tables tabulate {} -o {} --dims sex --workers 0", "--workers must be a whole number"),
    ],
)
def test_directory_options_refused_naming_the_option(census, tmp_path, capsys, line, message):
    _, directory = census
    out = tmp_path / ("table.csv" if "tabulate" in line else "masked")
    assert sdckit(line, directory, out) == 2
    assert message in _err(capsys)
    assert not out.exists()


def test_existing_output_directory_is_refused(census, tmp_path, capsys):
    _, directory = census
    out = tmp_path / "masked"
    out.mkdir()
    assert sdckit("rwn {} -o {} --partitions 2", directory, out) == 2
    assert "exists; sdckit replaces no directory" in _err(capsys)


def test_directory_without_parquet_files_is_refused(tmp_path, capsys):
    directory = tmp_path / "csvs"
    directory.mkdir()
    (directory / "a.csv").write_text("x\n1\n")
    assert sdckit("risk {} --keys x", directory) == 2
    assert "holds no Parquet files (*.parquet) (it holds a.csv, ...)" in _err(capsys)


def test_bad_partition_file_is_named_with_its_column(census, tmp_path, capsys):
    frame, directory = census
    plant_text_in_age(frame, directory, rows=5, row=3)
    assert sdckit(f"risk {{}} --keys region,age_group {LOCAL}", directory) == 0
    out = tmp_path / "masked"
    line = "rwn {} -o {} --partitions 2 --seed 1 --columns age,hours"
    assert sdckit(f"{line} {LOCAL}", directory, out) == 2
    err = _err(capsys)
    assert "part-999.parquet', column 'age': row 3 has 'forty', not a number" in err
    assert not out.exists()


def test_cluster_options_refused_for_one_file(census, tmp_path, capsys):
    frame, _ = census
    src = tmp_path / "one.csv"
    frame.to_csv(src, index=False)
    assert sdckit("rwn {} -o {} --workers 3", src, tmp_path / "out.csv") == 2
    assert "apply to a directory of Parquet files" in _err(capsys)
