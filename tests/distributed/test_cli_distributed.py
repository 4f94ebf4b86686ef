"""`sdckit distributed ...` end to end on a local cluster of thread workers."""

from __future__ import annotations

import pandas as pd

from sdckit.cli.main import main
from sdckit.tables import cell_key_perturb, design_ptable, tabulate

LOCAL = ["--workers", "2", "--no-processes"]


def test_keys_prints_key_risk(census, capsys):
    _, directory = census
    code = main(["distributed", "keys", str(directory), "--keys", "region,sex", *LOCAL])
    assert code == 0
    captured = capsys.readouterr()
    assert "key variables region, sex: 10 combinations" in captured.out
    assert "dashboard:" in captured.err


def test_add_keys_then_perturb_equals_single_machine(census, tmp_path, capsys):
    _, directory = census
    keyed = tmp_path / "keyed"
    assert (
        main(["distributed", "add-keys", str(directory), "-o", str(keyed), "--seed", "9", *LOCAL])
        == 0
    )
    out = tmp_path / "release.csv"
    code = main(
        ["distributed", "perturb", str(keyed), "--dims", "region,tenure", "-o", str(out), *LOCAL]
    )
    assert code == 0
    release = pd.read_csv(out)
    assert list(release.columns) == ["region", "tenure", "perturbed"]
    single = cell_key_perturb(
        pd.read_parquet(keyed), design_ptable(3, 2.01), dims=["region", "tenure"]
    )
    assert release["perturbed"].tolist() == single.table["perturbed"].tolist()


def test_tabulate_writes_true_counts_and_says_so(census, tmp_path, capsys):
    frame, directory = census
    out = tmp_path / "table.csv"
    code = main(
        ["distributed", "tabulate", str(directory), "--dims", "sex,tenure", "-o", str(out), *LOCAL]
    )
    assert code == 0
    table = pd.read_csv(out)
    assert table["count"].tolist() == tabulate(frame, ["sex", "tenure"])["count"].tolist()
    assert "true counts" in capsys.readouterr().err


def test_rwn_writes_directory_and_bad_input_exits_2(census, tmp_path, capsys):
    frame, directory = census
    out = tmp_path / "masked"
    code = main(
        [
            "distributed",
            "rwn",
            str(directory),
            "-o",
            str(out),
            "--partitions",
            "2",
            "--seed",
            "1",
            *LOCAL,
        ]
    )
    assert code == 0
    assert pd.read_parquet(out).shape == frame.shape
    code = main(["distributed", "rwn", str(directory), "-o", str(out), "--partitions", "2", *LOCAL])
    assert code == 2
    assert "exists" in capsys.readouterr().err
