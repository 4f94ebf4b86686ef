"""The command line: `sdckit rwn` end to end, errors as one line, --help lists the groups."""

from __future__ import annotations

import pandas as pd
import pytest

from cli_words import sdckit
from sdckit.cli.main import main


def test_rwn_csv_roundtrip(tmp_path, mixed_data, capsys):
    src = tmp_path / "in.csv"
    mixed_data.drop(columns="region").to_csv(src, index=False)
    out = tmp_path / "out.csv"
    diag = tmp_path / "diag.parquet"
    code = main(
        [
            "rwn",
            str(src),
            "-o",
            str(out),
            "--k",
            "4",
            "--seed",
            "3",
            "--id",
            "id",
            "--columns",
            "height,weight,children,smoker",
            "--weight",
            "children=0.5",
            "--diagnostics",
            str(diag),
            "--quiet",
        ]
    )
    assert code == 0
    original = pd.read_csv(src)
    masked = pd.read_csv(out)
    assert masked.shape == original.shape
    assert (masked["id"] == original["id"]).all()
    assert set(masked["weight"]) <= set(original["weight"])
    assert len(pd.read_parquet(diag)) == len(original)


def test_rwn_parquet(tmp_path, mixed_data):
    src = tmp_path / "in.parquet"
    mixed_data.to_parquet(src)
    out = tmp_path / "out.parquet"
    assert (
        main(
            [
                "rwn",
                str(src),
                "-o",
                str(out),
                "--seed",
                "1",
                "--quiet",
                "--columns",
                "height,weight",
            ]
        )
        == 0
    )
    masked = pd.read_parquet(out)
    assert masked["region"].dtype == "category"


def test_errors_are_one_line(tmp_path, mixed_data, capsys):
    src = tmp_path / "in.csv"
    mixed_data.to_csv(src, index=False)
    code = sdckit("rwn {} -o {} --q 2 --columns height --quiet", src, tmp_path / "o.csv")
    err = capsys.readouterr().err
    assert code == 2
    assert "q must be in" in err and "Traceback" not in err
    code = main(["rwn", str(tmp_path / "missing.csv"), "-o", str(tmp_path / "o.csv")])
    assert code == 2 and "does not exist" in capsys.readouterr().err
    code = main(["rwn", str(src), "-o", str(tmp_path / "o.xlsx"), "--quiet"])
    assert code == 2 and ".csv or .parquet" in capsys.readouterr().err
    assert not (tmp_path / "o.xlsx").exists()


def test_debug_shows_traceback(tmp_path, mixed_data):
    src = tmp_path / "in.csv"
    mixed_data.to_csv(src, index=False)
    with pytest.raises(Exception, match="q must be in"):
        sdckit("--debug rwn {} -o {} --q 2 --columns height --quiet", src, tmp_path / "o.csv")


def test_help_lists_groups(capsys):
    assert main(["--help"]) == 0
    assert "rwn" in capsys.readouterr().out


@pytest.mark.parametrize(
    "command",
    [
        ["rwn"],
        ["swap", "-s", "smoker", "--rate", "0.1"],
        ["rankswap", "--columns", "height", "--p", "5"],
        ["noise", "additive", "--columns", "height,weight", "--k", "0.1"],
        ["noise", "multiplicative", "--columns", "height,weight", "--k", "0.1"],
        ["microaggregate", "--columns", "height,weight", "--k", "3"],
    ],
)
def test_masker_commands_refuse_a_bad_output_before_the_work(tmp_path, capsys, command):
    # The input does not exist: an output check made first is the only error shown.
    missing_input = str(tmp_path / "absent.csv")
    bad_output = str(tmp_path / "no-such-dir" / "out.csv")
    code = main([*command, missing_input, "-o", bad_output, "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert "output directory" in err and "does not exist" in err
    bad_diag = str(tmp_path / "diag.xlsx")
    code = main(
        [
            *command,
            missing_input,
            "-o",
            str(tmp_path / "o.csv"),
            "--diagnostics",
            bad_diag,
            "--quiet",
        ]
    )
    assert code == 2 and ".csv or .parquet" in capsys.readouterr().err
