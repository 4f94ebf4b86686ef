"""Concurrency and cost: migrations under a lock, a CPU budget per account, a maximum run time."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest
from fastapi.testclient import TestClient

from sdckit.server.app import ServiceSettings, create_app
from sdckit.server.demo import demo_metadata, make_demo_data
from sdckit.server.store import Store

MIGRATE = "from sdckit.server.store import Store; Store({url!r}).close(); print('ok')"


def test_concurrent_migrations_of_a_fresh_database(tmp_path):
    # serve and add-user started together used to both create the tables.
    url = f"sqlite:///{tmp_path / 'fresh.db'}"
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", MIGRATE.format(url=url)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    outputs = [p.communicate(timeout=180) for p in processes]
    assert [p.returncode for p in processes] == [0] * 4, outputs
    with Store(url) as store:
        assert store.schema_revision() is not None
        _, token = store.add_account("after")
        assert store.authenticate(token).name == "after"


@pytest.fixture(scope="module")
def small_data():
    data = make_demo_data(3000, random_state=3)
    return data, demo_metadata(data, beta=100)


HEAVY = {
    "universe": None,
    "formula": "employed ~ age + square(age) + hours + education + sex + region + age:sex"
    " + hours:sex + age:education",
    "family": "logit",
}
LIGHT = {"universe": "sex = female", "rows": "region"}


def test_an_expensive_account_is_held_back_and_does_not_starve_another(small_data, tmp_path):
    data, metadata = small_data
    store = Store(f"sqlite:///{tmp_path / 'cost.db'}")
    _, heavy = store.add_account("heavy", rate_per_minute=10_000)
    _, light = store.add_account("light", rate_per_minute=10_000)
    settings = ServiceSettings(cpu_seconds_per_minute=0.5)
    client = TestClient(create_app(data, metadata, store=store, settings=settings))
    heavy_codes: list[int] = []
    light_codes: list[int] = []
    retry_after: list[str] = []

    def hammer() -> None:
        for _ in range(12):
            r = client.post(
                "/api/regression", json=HEAVY, headers={"Authorization": f"Bearer {heavy}"}
            )
            heavy_codes.append(r.status_code)
            if r.status_code == 429:
                assert r.json()["error"] == "cost_budget_exhausted"
                retry_after.append(r.headers["Retry-After"])

    threads = [threading.Thread(target=hammer) for _ in range(2)]
    for t in threads:
        t.start()
    for _ in range(10):
        r = client.post("/api/crosstab", json=LIGHT, headers={"Authorization": f"Bearer {light}"})
        light_codes.append(r.status_code)
    for t in threads:
        t.join()
    assert 200 in heavy_codes and 429 in heavy_codes
    assert all(int(v) >= 1 for v in retry_after)
    assert light_codes == [200] * 10
    store.close()


def test_maximum_run_time_per_analysis(small_data, tmp_path):
    data, metadata = small_data
    store = Store(f"sqlite:///{tmp_path / 'slow.db'}")
    _, token = store.add_account("patient")
    settings = ServiceSettings(max_analysis_seconds=1e-6)
    client = TestClient(create_app(data, metadata, store=store, settings=settings))
    r = client.post("/api/regression", json=HEAVY, headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 400
    assert r.json()["error"] == "invalid_query"
    assert "longer than the server allows" in r.json()["message"]
    assert [e.outcome for e in store.audit_entries(limit=5)] == ["error"]
    store.close()
