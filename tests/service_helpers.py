"""Helpers of the service tests: database backends (SQLite, PostgreSQL) and a uvicorn subprocess."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa

POSTGRES_ENV = "SDCKIT_TEST_POSTGRES_URL"

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


def postgres_url_or_skip() -> str:
    url = os.environ.get(POSTGRES_ENV)
    if not url:
        reason = (
            f"{POSTGRES_ENV} is not set (make test starts PostgreSQL through "
            "scripts/test-services.sh); skipping the PostgreSQL run"
        )
        print(f"skipping: {reason}")
        pytest.skip(reason)
    return url


def create_postgres_database(base_url: str) -> str:
    """A fresh, empty database on the test server; its URL."""
    url = sa.make_url(base_url)
    name = f"sdckit_t_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    finally:
        admin.dispose()
    return url.set(database=name).render_as_string(hide_password=False)


def drop_postgres_database(url: str) -> None:
    target = sa.make_url(url)
    admin = sa.create_engine(target.set(database="postgres"), isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{target.database}" WITH (FORCE)'))
    finally:
        admin.dispose()


def backend_url(backend: str, directory: Path):
    """Yield a database URL for ``backend`` in a fresh database, dropped afterwards."""
    if backend == "sqlite":
        yield f"sqlite:///{directory / 'service.db'}"
        return
    url = create_postgres_database(postgres_url_or_skip())
    try:
        yield url
    finally:
        drop_postgres_database(url)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(args: list[str], log_path: Path) -> subprocess.Popen:
    """``sdckit serve ARGS`` in a subprocess (stdout+stderr to ``log_path``)."""
    log = log_path.open("wb")
    return subprocess.Popen(
        [sys.executable, "-m", "sdckit.cli.main", "serve", *args],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def wait_until_up(process: subprocess.Popen, port: int, log_path: Path, timeout: float = 120):
    """Wait for /api/health; fail with the server's log if it dies or never answers."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"server exited with {process.returncode}:\n{log_path.read_text()}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    process.kill()
    pytest.fail(f"server did not answer within {timeout} s:\n{log_path.read_text()}")


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def serving(args: list[str], log_path: Path) -> Iterator[str]:
    """``sdckit serve ARGS`` on a free port until the block ends; yields its URL once it answers."""
    port = free_port()
    process = start_server([*args, "--port", str(port)], log_path)
    try:
        wait_until_up(process, port, log_path)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(process)
