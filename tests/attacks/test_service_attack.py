"""End to end: the regression attacks against the real HTTP service, through its public API and a token."""

from __future__ import annotations

import pandas as pd
import pytest
from planted_firms import service_firms

from sdckit.cli.main import main
from sdckit.server.store import Store
from service_helpers import serving


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    """A service on 500 firms, two of them the only northern firm of their size bin.

    Yields (url, token, csv, data).
    """
    tmp_path = tmp_path_factory.mktemp("service")
    data, metadata = service_firms()
    csv = tmp_path / "firms.csv"
    data.to_csv(csv, index=False)
    meta = tmp_path / "meta.yaml"
    metadata.to_yaml(meta)
    db = f"sqlite:///{tmp_path / 'service.db'}"
    with Store(db) as store:
        _, token = store.add_account("intruder", rate_per_minute=100000)
    args = ["--data", str(csv), "--metadata", str(meta), "--db", db]
    with serving(args, tmp_path / "serve.log") as url:
        yield url, token, csv, data


def test_attack_through_the_service_learns_nothing(service, tmp_path, capsys):
    url, token, csv, _ = service
    table = tmp_path / "table.csv"
    code = main(
        [
            "attack", "regression", str(csv), "--sensitive", "turnover",
            "--background", "size,state", "--approx", "0.025", "--quantiles", "0,0.9",
            "--target", url, "--token", token, "--max-targets", "8", "--table", str(table), "--quiet",
        ]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    result = pd.read_csv(table)
    # The attack went through the door: the service answered some of its queries ...
    assert result["answered"].max() > 0
    # ... and none of them gave a value within 1% or a count of 1-2 units.
    assert (result["identified_recovered"] == 0).all()
    assert (result["identified"] == 0).all()
    answered_units = result["min_units"].dropna()
    assert len(answered_units) and (answered_units >= 3).all()
    # The same attack on a naive server recovers values: the defence is what differs.
    assert main(
        [
            "attack", "regression", str(csv), "--sensitive", "turnover",
            "--background", "size,state", "--quantiles", "0.9", "--table", str(table), "--quiet",
        ]
    ) == 0  # fmt: skip
    assert pd.read_csv(table)["identified_recovered"].max() > 0.5


def test_refused_token_is_one_line(service, capsys):
    url, _, csv, _ = service
    code = main(
        [
            "attack", "regression", str(csv), "--sensitive", "turnover", "--background", "size",
            "--target", url, "--token", "sdck_not-a-token", "--quiet",
        ]
    )  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert "token: the service at" in err and "refused the token" in err
    assert len(err.splitlines()) == 1


def test_attack_server_command_against_the_service(service, tmp_path, capsys):
    url, token, csv, data = service
    table, report = tmp_path / "battery.csv", tmp_path / "battery.html"
    code = main(
        [
            "attack", "server", url, "--token", token, "--data", str(csv),
            "--sensitive", "turnover", "--max-targets", "2", "--padding-pairs", "4",
            "--table", str(table), "-o", str(report), "--quiet",
        ]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    assert out.startswith("No differencing or padding attack learned a confidential value")
    assert "(2 targets alone in their cells)" in out.splitlines()[0], out.splitlines()[0]
    result = pd.read_csv(table)
    assert result["answered"].max() > 0  # the battery went through the service's door
    # Scored as the intruder can know it: no value confirmed by agreeing estimates, no count of
    # 1-2. (A single estimate within 1%, the oracle's view, is noise and is not asserted on.)
    assert (result["learned"] == 0).all() and (result["small_counts"] == 0).all()
    assert (result["estimates"] > 0).any()
    # The report names no target's cell and shows no confidential value.
    html = report.read_text()
    assert "cells not named" in html
    for value in data["turnover"]:
        assert f"{value:.6g}" not in html
