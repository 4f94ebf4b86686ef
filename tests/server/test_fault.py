"""Kill -9 the server during a burst of queries: no answered query is missing from the audit log.

The server (``sdckit serve`` in a subprocess) commits each query's audit
entry before the answer leaves, so every answer a client received must be
in the log after a SIGKILL, with the digest of exactly what was received,
and the database must pass its integrity check. Runs on SQLite (the
embedded default) and, where available, PostgreSQL.
"""

from __future__ import annotations

import json
import signal
import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from sdckit.server.demo import demo_metadata, make_demo_data
from sdckit.server.engine import digest_response
from sdckit.server.store import Store
from service_helpers import backend_url, free_port, start_server, stop, wait_until_up

QUERIES = [
    ("/api/crosstab", {"universe": "sex = female", "rows": "region", "cols": "employed"}),
    (
        "/api/regression",
        {"universe": "region in {north, east}", "formula": "log(wage) ~ age + sex"},
    ),
    ("/api/crosstab", {"universe": "region = south", "rows": "employed", "mean_of": "hours"}),
    ("/api/regression", {"formula": "employed ~ age + education", "family": "logit"}),
    ("/api/regression", {"formula": "wage ~ os.system(age)"}),  # refused, logged too
    ("/api/universe/check", {"universe": "sex = male AND region = west"}),
]


# Two server starts each; the PostgreSQL run is marked slow as well.
@pytest.fixture(
    params=["sqlite", pytest.param("postgres", marks=[pytest.mark.postgres, pytest.mark.slow])]
)
def db_url(request, tmp_path):
    yield from backend_url(request.param, tmp_path)


def test_kill_during_burst_loses_no_answered_query(db_url, tmp_path):
    data = make_demo_data(3000, random_state=11)
    data.to_csv(tmp_path / "people.csv")
    demo_metadata(data, beta=100).to_yaml(tmp_path / "meta.yaml")
    with Store(db_url) as store:
        _, token = store.add_account("burst", rate_per_minute=1_000_000)
    port = free_port()
    args = [
        "--data", str(tmp_path / "people.csv"),
        "--metadata", str(tmp_path / "meta.yaml"),
        "--id", "person",
        "--db", db_url,
        "--port", str(port),
        "--log-level", "warning",
    ]  # fmt: skip
    log = tmp_path / "server.log"
    server = start_server(args, log)
    answered: list[tuple[int, str]] = []
    lock = threading.Lock()
    enough = threading.Event()
    stop_clients = threading.Event()

    def client(offset: int) -> int:
        failures = 0
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            i = offset
            while not stop_clients.is_set():
                path, body = QUERIES[i % len(QUERIES)]
                i += 1
                try:
                    response = http.post(path, json=body, headers=headers)
                    payload = response.json()
                except (httpx.HTTPError, json.JSONDecodeError):
                    failures += 1  # the server died mid-request: no answer, nothing owed
                    if failures > 3:
                        return failures
                    continue
                assert response.status_code in (200, 422), response.text
                audit_id = payload.pop("audit_id")
                with lock:
                    answered.append((audit_id, digest_response(payload)))
                    if len(answered) >= 40:
                        enough.set()
        return failures

    try:
        wait_until_up(server, port, log)
        with ThreadPoolExecutor(6) as pool:
            futures = [pool.submit(client, k) for k in range(6)]
            assert enough.wait(120), log.read_text()
            server.send_signal(signal.SIGKILL)  # kill -9 mid-burst
            server.wait(30)
            stop_clients.set()
            failures = [f.result() for f in futures]
        assert server.returncode == -signal.SIGKILL
        assert sum(failures) >= 1  # some requests were cut off by the kill

        with Store(db_url) as store:
            assert store.integrity_check() == "ok"
            entries = {e.id: e for e in store.audit_entries()}
        released = [(i, d) for i, d in answered if entries.get(i) is not None]
        assert len(released) == len(answered), "an answered query is missing from the audit log"
        for audit_id, digest in answered:
            entry = entries[audit_id]
            if entry.outcome == "released":
                assert entry.response_digest == digest
            else:
                assert entry.outcome == "refused"
        last_before = max(entries)

        # The restarted server keeps the log and goes on appending to it.
        server = start_server(args, log)
        wait_until_up(server, port, log)
        again = httpx.post(
            f"http://127.0.0.1:{port}/api/crosstab",
            json=QUERIES[0][1],
            headers={"Authorization": f"Bearer {token}"},
            timeout=30,
        )
        assert again.status_code == 200 and again.json()["audit_id"] > last_before
        # Same universe, same Drop q subsample after the restart (the secret was kept).
        first = next(i for i, _ in answered if entries[i].query.get("rows") == "region")
        assert entries[first].outcome == "released"
        assert entries[first].response_digest == digest_response(
            {k: v for k, v in again.json().items() if k != "audit_id"}
        )
    finally:
        stop_clients.set()
        stop(server)
