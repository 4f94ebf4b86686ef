"""End to end: the regression attacks against the real HTTP service, through its public API and a token."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from planted_firms import planted_firms

from sdckit.cli.main import main
from sdckit.server import Metadata
from sdckit.server.store import Store
from service_helpers import free_port, start_server, stop, wait_until_up


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    """A service on 500 planted firms (sizes unique in the top decile); yields (url, token, csv)."""
    tmp_path = tmp_path_factory.mktemp("service")
    rng = np.random.default_rng(5)
    n = 500
    data = planted_firms(rng, np.round(np.exp(rng.normal(3, 1.3, size=n))) + 1)
    csv = tmp_path / "firms.csv"
    data.to_csv(csv, index=False)
    meta = tmp_path / "meta.yaml"
    Metadata.infer(data, beta=40, categorical=["state"]).to_yaml(meta)
    db = f"sqlite:///{tmp_path / 'service.db'}"
    with Store(db) as store:
        _, token = store.add_account("intruder", rate_per_minute=100000)
    port = free_port()
    log = tmp_path / "serve.log"
    process = start_server(
        ["--data", str(csv), "--metadata", str(meta), "--db", db, "--port", str(port)], log
    )
    try:
        wait_until_up(process, port, log)
        yield f"http://127.0.0.1:{port}", token, csv, data
    finally:
        stop(process)


def test_attack_through_the_service_learns_nothing(service, tmp_path, capsys):
    url, token, csv, _ = service
    table = tmp_path / "table.csv"
    code = main(
        [
            "attack", "regression", str(csv), "--sensitive", "turnover",
            "--background", "size,state", "--approx", "0.025", "--quantiles", "0,0.9",
            "--target", url, "--token", token, "--max-targets", "8", "--table", str(table), "-q",
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
            "--background", "size,state", "--quantiles", "0.9", "--table", str(table), "-q",
        ]
    ) == 0  # fmt: skip
    assert pd.read_csv(table)["identified_recovered"].max() > 0.5


def test_refused_token_is_one_line(service, capsys):
    url, _, csv, _ = service
    code = main(
        [
            "attack", "regression", str(csv), "--sensitive", "turnover", "--background", "size",
            "--target", url, "--token", "sdck_not-a-token", "-q",
        ]
    )  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert "token: the service at" in err and "refused the token" in err
    assert len(err.splitlines()) == 1
