"""``sdckit attack regression``: the table, the report, and one-line errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from planted_firms import planted_firms

from sdckit.cli.main import main


@pytest.fixture
def firm_file(tmp_path):
    rng = np.random.default_rng(11)
    n = 300
    data = planted_firms(rng, np.maximum(1, np.round(np.exp(rng.normal(3, 1.2, size=n)))))
    path = tmp_path / "firms.csv"
    data.to_csv(path, index=False)
    return path, data


def test_naive_attack_prints_table_and_writes_report(firm_file, tmp_path, capsys):
    path, data = firm_file
    report = tmp_path / "attack.html"
    table = tmp_path / "table.csv"
    code = main(
        [
            "attack", "regression", str(path), "--sensitive", "turnover",
            "--background", "size,state", "--approx", "0.025", "--quantiles", "0,0.9",
            "-o", str(report), "--table", str(table), "--quiet",
        ]
    )  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    written = pd.read_csv(table)
    assert (written["identified_recovered"] > 0).any()
    assert first.startswith("naive server: the attack isolates targets and recovers")
    # Exact size identifies the records whose size is unique in the subset.
    counts = data["size"].value_counts()
    unique_share = float((data["size"].map(counts) == 1).mean())
    row = written[(written["quantile"] == 0) & (written["indicators"] == "exact size")]
    assert row["identified"].iloc[0] == pytest.approx(unique_share)
    page = report.read_text()
    assert "Δ uniquely identified" in page and 'data-figure="attack_curves_1"' in page
    assert "turnover" in page and str(round(data["turnover"].iloc[0], 2)) not in page


def test_library_target_recovers_nothing(firm_file, capsys):
    path, _ = firm_file
    code = main(
        [
            "attack", "regression", str(path), "--sensitive", "turnover",
            "--background", "size,state", "--approx", "0.025", "--quantiles", "0",
            "--target", "library", "--max-targets", "15", "--quiet",
        ]
    )  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("sdckit AnalysisServer: no target was isolated;")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--background", "size,region"], "--background: column 'region' is not in"),
        (
            ["--background", "size", "--sensitive", "state"],
            "--sensitive: column 'state' is not numeric",
        ),
        (
            ["--background", "size", "--target", "http://127.0.0.1:9", "--token", "t"],
            "does not answer",
        ),
        (["--background", "size", "--target", "http://127.0.0.1:9"], "--token is needed"),
    ],
)
def test_bad_input_is_one_line_exit_2(firm_file, capsys, args, message):
    path, _ = firm_file
    base = ["attack", "regression", str(path), "--sensitive", "turnover", "--quiet"]
    if "--sensitive" in args:
        base = ["attack", "regression", str(path), "--quiet"]
    assert main(base + args) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_table_command_pins_the_papers_example(tmp_path, capsys):
    # Giessing & Höhne (2011), §5: inner cells 1, 1 published 3, 3; their total 2 published 0.
    first, second = tmp_path / "t.csv", tmp_path / "other.csv"
    pd.DataFrame({"a": ["x", "y", "Total"], "perturbed": [3, 3, 0]}).to_csv(first, index=False)
    pd.DataFrame({"a": ["x", "Total"], "perturbed": [4, 1]}).to_csv(second, index=False)
    report = tmp_path / "table.html"
    code = main(
        ["attack", "table", str(first), "--max-deviation", "2", "--other", str(second),
         "-o", str(report)]
    )  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("The ±2 bounds and the table's additive relations pin down 3 of 3")
    assert any(line.startswith("2 cells are published in more than one") for line in out)
    assert "Cells shared by several tables" in report.read_text()


def test_release_command_links_and_attacks(firm_file, tmp_path, capsys):
    path, data = firm_file
    masked = tmp_path / "masked.csv"
    # A release that changed nothing: the isolated records' values come back exactly.
    data.to_csv(masked, index=False)
    code = main(
        ["attack", "release", str(path), str(masked), "--sensitive", "turnover",
         "--keys", "size,state", "--quiet"]
    )  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    assert out.startswith("record linkage on size, state")
    assert "one-to-one assignment:" in out
    assert "the attack isolates targets and recovers their sensitive values" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["attack", "table", "T"], "give --max-deviation"),
        (["attack", "server", "ftp://x", "--data", "D", "--sensitive", "turnover"], "URL must be"),
        (["attack", "server", "http://127.0.0.1:9", "--data", "D", "--sensitive", "turnover"],
         "--token is needed"),
        (["attack", "release", "D", "D", "--sensitive", "turnover", "--keys", "size,region"],
         "--keys: column 'region' is not in"),
    ],
)  # fmt: skip
def test_new_commands_bad_input_is_one_line(firm_file, capsys, args, message):
    path, _ = firm_file
    args = [str(path) if a in ("D", "T") else a for a in args]
    assert main([*args, "--quiet"] if args[1] != "table" else args) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


@pytest.mark.parametrize(
    ("d", "message"),
    [
        # 3 + 3 published, total 20: no additive table within ±1 of it.
        ("1", "--max-deviation: no additive table lies within ±1 of the published one"),
        ("-1", "--max-deviation must be"),
    ],
)
def test_table_command_names_the_flag(tmp_path, capsys, d, message):
    path = tmp_path / "t.csv"
    pd.DataFrame({"a": ["x", "y", "Total"], "perturbed": [3, 3, 20]}).to_csv(path, index=False)
    assert main(["attack", "table", str(path), "--max-deviation", d]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "max_deviation" not in err and len(err.splitlines()) == 1


def test_attack_commands_share_the_quiet_option():
    from typer.main import get_command

    from sdckit.cli.attack import attack_app

    group = get_command(attack_app)
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        quiet = [p for p in command.params if p.name == "quiet"]
        assert quiet and quiet[0].opts == ["--quiet"], name
