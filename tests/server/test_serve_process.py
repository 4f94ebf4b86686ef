"""``sdckit serve`` as a separate process: a busy port, and the demo's clean exit."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from service_helpers import free_port, start_server, stop, wait_until_up


def test_busy_port_is_refused_before_any_token_or_database(tmp_path):
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen(1)
        port = blocker.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "sdckit.cli.main", "serve", "--demo", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "PYTHONUNBUFFERED": "1", "TMPDIR": str(tmp_path)},
        )
    assert result.returncode == 2
    assert "token" not in result.stdout + result.stderr
    assert "http://" not in result.stdout + result.stderr
    assert f"--port {port}" in result.stderr and "choose another --port" in result.stderr
    assert list(tmp_path.iterdir()) == []  # no temporary database left behind


@pytest.mark.parametrize(
    "signum", [signal.SIGTERM, pytest.param(signal.SIGINT, marks=pytest.mark.slow)]
)
def test_demo_removes_its_temporary_database_on_exit(tmp_path, signum):
    port = free_port()
    log = tmp_path / "serve.log"
    process = start_server(["--demo", "--port", str(port)], log)
    try:
        wait_until_up(process, port, log)
        match = re.search(r"Store\('sqlite:///(\S+?demo\.db)'\)", log.read_text())
        assert match, log.read_text()
        database = Path(match.group(1))
        assert database.exists() and database.parent.name.startswith("sdckit-demo-")
        process.send_signal(signum)
        process.wait(timeout=60)
        deadline = time.monotonic() + 10
        while database.parent.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not database.parent.exists(), log.read_text()
    finally:
        stop(process)
