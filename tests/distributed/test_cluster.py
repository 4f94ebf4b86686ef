"""Local cluster by default, an existing scheduler by address or $DASK_SCHEDULER_ADDRESS."""

from __future__ import annotations

import pytest

from sdckit.distributed import SCHEDULER_ENV, dask_client, scheduler_address
from sdckit.distributed.risk import key_risk_by_partition
from sdckit.errors import ParameterError


def test_address_from_option_then_environment(monkeypatch):
    monkeypatch.delenv(SCHEDULER_ENV, raising=False)
    assert scheduler_address(None) is None
    monkeypatch.setenv(SCHEDULER_ENV, "tcp://10.0.0.5:8786")
    assert scheduler_address(None) == "tcp://10.0.0.5:8786"
    assert scheduler_address("tcp://other:8786") == "tcp://other:8786"


def test_connects_to_existing_scheduler_from_environment(census, monkeypatch):
    _, directory = census
    monkeypatch.delenv(SCHEDULER_ENV, raising=False)
    with dask_client(n_workers=1, processes=False, dashboard_address=None) as local:
        address = local.scheduler.address
        monkeypatch.setenv(SCHEDULER_ENV, address)
        with dask_client() as remote:
            assert remote.scheduler.address == address
            assert key_risk_by_partition(directory, ["sex"]).n_records == 3000


def test_workers_checked():
    with pytest.raises(ParameterError, match="n_workers"), dask_client(n_workers=0):
        pass


def test_progress_follows_the_scheduler_to_the_last_task(census, client):
    _, directory = census
    seen: list[tuple[int, int]] = []
    key_risk_by_partition(
        directory, ["sex"], progress=lambda done, total: seen.append((done, total))
    )
    assert seen, "the scheduler reported no progress"
    done, total = seen[-1]
    assert done == total >= 4  # at least one task per file (a file is read and counted in one)
    assert all(d <= t for d, t in seen)


def test_progress_without_a_cluster_counts_local_tasks(census):
    import dask

    _, directory = census
    seen: list[tuple[int, int]] = []
    with dask.config.set(scheduler="sync"):
        key_risk_by_partition(
            directory, ["sex"], progress=lambda done, total: seen.append((done, total))
        )
    assert seen[0][0] == 0 and seen[-1][0] == seen[-1][1] >= 4  # one task per file at least
