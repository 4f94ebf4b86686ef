"""Fixtures of the distributed tests: census-like Parquet directories and a 2-worker cluster."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from distributed_data import census_like, write_parts

pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")


@pytest.fixture(scope="session")
def client():
    """A local cluster of 2 worker processes (one thread each), started once per test process.

    Processes, as ``sdckit distributed`` runs by default: every task and its
    arguments are pickled to another interpreter, as on a real cluster.
    """
    from sdckit.distributed import dask_client

    with dask_client(n_workers=2, processes=True, memory_limit="1GB", dashboard_address=None) as c:
        yield c


@pytest.fixture
def census(tmp_path: Path) -> tuple[pd.DataFrame, Path]:
    """3,000 records in 4 files, and the frame itself."""
    frame = census_like(3000, 18)
    return frame, write_parts(frame, tmp_path / "census", 4)
