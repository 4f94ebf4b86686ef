"""Nothing lost: no output overwrites an input or another output, files get the user's
umask, duplicated column names are refused, ``NA`` in a text column is a value."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from sdckit.cli.main import main
from sdckit.errors import DataError
from sdckit.io import read_table, write_table


@pytest.fixture
def survey(tmp_path):
    rng = np.random.default_rng(11)
    n = 60
    data = pd.DataFrame(
        {
            "income": rng.gamma(3.0, 10.0, n).round(2),
            "hours": rng.normal(38, 6, n).round(1),
            "region": rng.choice(["north", "south", "east"], n),
        }
    )
    path = tmp_path / "c.csv"
    data.to_csv(path, index=False)
    return path


def _bytes(path) -> bytes:
    return path.read_bytes()


@pytest.mark.parametrize(
    "command",
    [
        ["rwn", "--k", "3"],
        ["swap", "-s", "region", "--rate", "0.1"],
        ["rankswap", "--columns", "income"],
        ["microaggregate", "--columns", "income,hours"],
    ],
    ids=["rwn", "swap", "rankswap", "microaggregate"],
)
def test_output_equal_to_the_input_is_refused(survey, command, capsys):
    before = _bytes(survey)
    for spelled in (str(survey), str(survey.parent / "." / survey.name)):
        code = main([command[0], str(survey), "-o", spelled, *command[1:], "--quiet"])
        assert code == 2
        assert "never overwrites its input" in capsys.readouterr().err
    assert _bytes(survey) == before


def test_output_through_a_symbolic_link_to_the_input_is_refused(survey, tmp_path, capsys):
    link = tmp_path / "link.csv"
    link.symlink_to(survey)
    before = _bytes(survey)
    assert main(["rwn", str(survey), "-o", str(link), "--quiet"]) == 2
    assert "never overwrites its input" in capsys.readouterr().err
    assert _bytes(survey) == before


def test_diagnostics_equal_to_output_or_input_is_refused(survey, tmp_path, capsys):
    out = tmp_path / "out.csv"
    before = _bytes(survey)
    code = main(["rwn", str(survey), "-o", str(out), "--diagnostics", str(out), "--quiet"])
    assert code == 2
    assert "same file" in capsys.readouterr().err
    assert not out.exists()
    code = main(["rwn", str(survey), "-o", str(out), "--diagnostics", str(survey), "--quiet"])
    assert code == 2
    assert "never overwrites its input" in capsys.readouterr().err
    assert _bytes(survey) == before and not out.exists()
    code = main(
        [
            "swap",
            str(survey),
            "-o",
            str(out),
            "-s",
            "region",
            "--rate",
            "0.1",
            "--diagnostics",
            str(out),
            "--quiet",
        ]
    )
    assert code == 2 and not out.exists()


def test_assess_report_over_an_input_is_refused(survey, tmp_path, capsys):
    masked = tmp_path / "m.csv"
    assert main(["rankswap", str(survey), "-o", str(masked), "--columns", "income", "--quiet"]) == 0
    before = (_bytes(survey), _bytes(masked))
    for target in (survey, masked):
        code = main(["assess", str(survey), str(masked), "-o", str(target), "--quiet"])
        assert code == 2
        assert "never overwrites its input" in capsys.readouterr().err
    assert (_bytes(survey), _bytes(masked)) == before


def test_sweep_table_equal_to_report_or_input_is_refused(survey, tmp_path, capsys):
    html = tmp_path / "s.html"
    code = main(
        ["sweep", "rwn", str(survey), "--k", "2,3", "-o", str(html), "--table", str(survey)]
    )
    assert code == 2
    assert "never overwrites its input" in capsys.readouterr().err
    assert not html.exists()


@pytest.mark.parametrize("umask", [0o022, 0o002])
def test_files_are_created_with_the_users_umask(tmp_path, umask):
    # A separate process: the umask is process-wide.
    src = tmp_path / "in.csv"
    pd.DataFrame({"x": [1.5, 2.5, 3.5, 4.5], "y": [2.0, 1.0, 4.0, 3.0]}).to_csv(src, index=False)
    out = tmp_path / "out.csv"
    code = (
        "import os, sys\n"
        f"os.umask({umask})\n"
        "from sdckit.cli.main import main\n"
        f"sys.exit(main(['rankswap', {str(src)!r}, '-o', {str(out)!r}, '--columns', 'x', '--p', '50', "
        "'--quiet']))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o666 & ~umask


def test_write_table_honours_the_umask_in_process(tmp_path):
    old = os.umask(0o027)
    try:
        path = write_table(pd.DataFrame({"a": [1]}), tmp_path / "a.csv")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640


def test_duplicate_column_names_are_refused_by_name(tmp_path, capsys):
    path = tmp_path / "dup.csv"
    path.write_text("id,income,hours,income\n1,10,38,11\n2,20,40,21\n3,30,35,31\n")
    with pytest.raises(DataError, match="duplicated column name.*'income'"):
        read_table(path)
    out = tmp_path / "o.csv"
    assert main(["rankswap", str(path), "-o", str(out), "--columns", "hours", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "income" in err and "duplicated" in err
    assert not out.exists()


def test_na_words_in_text_columns_are_values(tmp_path):
    path = tmp_path / "countries.csv"
    path.write_text(
        "country,code,income,hours\nNA,null,10.5,NA\nDE,N/A,20.25,38\nFR,x,,40\nNA,y,30.0,41\n"
    )
    data = read_table(path)
    assert data["country"].tolist() == ["NA", "DE", "FR", "NA"]
    assert data["code"].tolist() == ["null", "N/A", "x", "y"]
    # In numeric columns the empty field and R's NA are missing.
    assert pd.api.types.is_float_dtype(data["income"]) and data["income"].isna().sum() == 1
    assert pd.api.types.is_float_dtype(data["hours"]) and data["hours"].isna().sum() == 1
    # --na-values says otherwise: exactly those words are missing, everywhere.
    told = read_table(path, na_values=["NA"])
    assert told["country"].isna().sum() == 2
    assert told["code"].tolist() == ["null", "N/A", "x", "y"]


def test_namibia_comes_back_from_a_masker(tmp_path):
    rng = np.random.default_rng(4)
    n = 40
    data = pd.DataFrame(
        {
            "country": rng.choice(["NA", "ZA", "BW"], n),
            "income": rng.normal(100, 10, n).round(2),
        }
    )
    src = tmp_path / "in.csv"
    data.to_csv(src, index=False)
    out = tmp_path / "out.csv"
    code = main(["rankswap", str(src), "-o", str(out), "--columns", "income", "--quiet"])
    assert code == 0
    back = read_table(out)
    assert back["country"].tolist() == data["country"].tolist()
    assert (data["country"] == "NA").sum() > 0


def test_na_values_option(tmp_path):
    path = tmp_path / "in.csv"
    path.write_text("region,income\n-9,10.5\nn,11.5\ns,-9\nn,12.0\ns,13.5\nn,9.0\n")
    out = tmp_path / "out.csv"
    code = main(
        [
            "rankswap",
            str(path),
            "-o",
            str(out),
            "--columns",
            "income",
            "--na-values",
            "-9",
            "--seed",
            "1",
            "--p",
            "50",
            "--quiet",
        ]
    )
    assert code == 0
    back = pd.read_csv(out, keep_default_na=False, dtype=str)
    assert back["region"].tolist()[0] == ""  # -9 was missing in region...
    assert (back["income"] == "").sum() == 1  # ...and in income, where it stays in its row
    assert back["income"].tolist()[2] == ""


def test_check_outputs_for_other_commands(tmp_path):
    """The shared helper other command groups (tables) call before their work."""
    from sdckit.cli._common import check_outputs
    from sdckit.errors import ParameterError

    source = tmp_path / "in.csv"
    source.write_text("a\n1\n")
    twin = tmp_path / "twin.csv"
    os.link(source, twin)  # a hard link: another name, the same file
    with pytest.raises(ParameterError, match="never overwrites its input"):
        check_outputs(twin, inputs=[source])
    with pytest.raises(ParameterError, match="same file"):
        check_outputs(tmp_path / "o.csv", tmp_path / "." / "o.csv")
    with pytest.raises(DataError, match="does not exist"):
        check_outputs(reports=[tmp_path / "nowhere" / "r.html"])
    check_outputs(tmp_path / "o.csv", reports=[tmp_path / "r.html"], inputs=[source])
