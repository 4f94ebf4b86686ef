"""End to end: the regression attacks against the real HTTP service, through its public API and a token."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import httpx
import numpy as np
import pandas as pd
import pytest

from sdckit.cli.main import main
from sdckit.server import Metadata
from sdckit.server.store import Store


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    """A service on 500 planted firms (sizes unique in the top decile); yields (url, token, csv)."""
    tmp_path = tmp_path_factory.mktemp("service")
    rng = np.random.default_rng(5)
    n = 500
    size = np.round(np.exp(rng.normal(3, 1.3, size=n))) + 1
    data = pd.DataFrame(
        {
            "size": size,
            "state": rng.choice(["north", "south", "east", "west"], size=n),
            "turnover": size * np.exp(rng.normal(10, 0.5, size=n)),
        }
    )
    csv = tmp_path / "firms.csv"
    data.to_csv(csv, index=False)
    meta = tmp_path / "meta.yaml"
    Metadata.infer(data, beta=40, categorical=["state"]).to_yaml(meta)
    db = f"sqlite:///{tmp_path / 'service.db'}"
    with Store(db) as store:
        _, token = store.add_account("intruder", rate_per_minute=100000)
    port = _free_port()
    log = (tmp_path / "serve.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "sdckit.cli.main", "serve", "--data", str(csv), "--metadata",
         str(meta), "--db", db, "--port", str(port)],
        stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None:
                pytest.fail(f"server exited: {(tmp_path / 'serve.log').read_text()}")
            try:
                if httpx.get(f"{url}/api/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("server did not start")
            time.sleep(0.2)
        yield url, token, csv, data
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


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
