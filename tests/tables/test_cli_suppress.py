"""`sdckit tables suppress` and `sdckit tables audit` on files."""

from __future__ import annotations

import pandas as pd
import pytest

from sdckit.cli.main import main
from sdckit.tables import tabulate


@pytest.fixture
def table_file(tmp_path, census):
    path = tmp_path / "table.csv"
    tabulate(census, ["district", "age"]).to_csv(path, index=False)
    return path


def test_suppress_then_audit_round_trip(tmp_path, table_file, capsys) -> None:
    release = tmp_path / "release.csv"
    code = main(
        [
            "tables",
            "suppress",
            str(table_file),
            "-o",
            str(release),
            "--dims",
            "district,age",
            "--rule",
            "freq>=15",
            "--method",
            "optimal",
            "--quiet",
        ]
    )
    assert code == 0
    published = pd.read_csv(release)
    assert list(published.columns) == ["district", "age", "published", "suppressed"]
    assert published["suppressed"].sum() >= 2
    assert published.loc[published["suppressed"], "published"].isna().all()
    args = ["tables", "audit", str(table_file), str(release), "--dims", "district,age"]
    assert main([*args, "--rule", "freq>=15", "--quiet"]) == 0
    assert capsys.readouterr().out.startswith("all ")
    # the same release audited against a stricter rule: cells that needed protection were
    # published, so the audit fails with exit code 1
    assert main([*args, "--rule", "freq>=40", "--quiet"]) == 1
    assert "NOT protected" in capsys.readouterr().out
    # settled intervals: the same verdicts, and the summary says the intervals are not all exact
    assert main([*args, "--rule", "freq>=15", "--intervals", "settle", "--quiet"]) == 0
    assert "not all exact" in capsys.readouterr().out
    assert main([*args, "--rule", "freq>=40", "--intervals", "settle", "--quiet"]) == 1
    assert main([*args, "--intervals", "fast", "--quiet"]) == 2
    # a time limit: generous, the same verdict; not a positive number, a parameter error
    assert main([*args, "--rule", "freq>=15", "--time-limit", "600", "--quiet"]) == 0
    capsys.readouterr()
    assert main([*args, "--rule", "freq>=15", "--time-limit", "-1", "--quiet"]) == 2
    assert "time_limit" in capsys.readouterr().err


def test_status_flags_need_an_internal_name_and_sdmx(tmp_path, table_file) -> None:
    base = ["tables", "suppress", str(table_file), "--dims", "district,age", "--rule", "freq>=15"]
    assert main([*base, "-o", str(tmp_path / "flags.csv"), "--with-status", "--quiet"]) == 2
    flags = tmp_path / "flags_internal.csv"
    assert main([*base, "-o", str(flags), "--with-status", "--quiet"]) == 0
    assert set(pd.read_csv(flags)["status"]) == {"primary", "secondary", "published"}
    sdmx = tmp_path / "flags_internal_sdmx.csv"
    assert main([*base, "-o", str(sdmx), "--sdmx", "X:T(1.0)", "--with-status", "--quiet"]) == 0
    frame = pd.read_csv(sdmx)
    assert set(frame["CONF_STATUS"]) == {"C", "D", "F"}
    assert (frame["OBS_STATUS"] == "C").sum() == (frame["CONF_STATUS"] != "F").sum()


def test_bad_rule_is_a_one_line_error(tmp_path, table_file, capsys) -> None:
    code = main(
        [
            "tables",
            "suppress",
            str(table_file),
            "-o",
            str(tmp_path / "out.csv"),
            "--dims",
            "district,age",
            "--rule",
            "dominance n=2",
        ]
    )
    assert code == 2
    assert "dominance needs ['k']" in capsys.readouterr().err


def test_a_pattern_with_an_exposed_cell_is_not_written(tmp_path, table_file, capsys, monkeypatch):
    import sdckit.cli.tables as cli_tables

    real = cli_tables.suppress

    class Exposed:
        """The real result, with the audit's verdict turned to one exposed cell."""

        def __init__(self, result):
            self.table, self.internal = result.table, result.internal
            self.stats = {**result.stats, "exposed": 1}

        def summary(self) -> str:
            return "1 primary cell exposed"

    monkeypatch.setattr(cli_tables, "suppress", lambda *a, **k: Exposed(real(*a, **k)))
    release = tmp_path / "release.csv"
    args = ["tables", "suppress", str(table_file), "-o", str(release), "--dims", "district,age"]
    assert main([*args, "--rule", "freq>=15", "--quiet"]) == 1
    assert not release.exists()
    assert "no release written" in " ".join(capsys.readouterr().err.split())
