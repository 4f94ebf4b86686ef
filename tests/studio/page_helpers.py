"""Helpers of the studio page's browser tests: a served app and a headless Chromium tab.

The tab reaches only the studio: every request elsewhere is aborted and
recorded, as are failed requests, uncaught page errors and console errors,
so a test can assert the page worked offline and cleanly.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from chromium import CHROMIUM, CHROMIUM_ARGS, chromium_or_skip
from service_helpers import free_port, stop


@contextmanager
def serve_asgi(app: Any) -> Iterator[str]:
    """Serve ``app`` with uvicorn on 127.0.0.1 in a thread; yield its base URL."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the studio app did not start within 30 s")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@dataclass
class TabLog:
    """What went wrong in a tab: requests that left the studio, failures, errors."""

    outside: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def assert_clean(self) -> None:
        assert self.outside == [], f"requests outside the studio: {self.outside}"
        assert self.failed == [], f"failed requests: {self.failed}"
        assert self.errors == [], f"page errors: {self.errors}"


@contextmanager
def studio_tab(
    base_url: str, viewport: tuple[int, int] = (1280, 1000)
) -> Iterator[tuple[Any, TabLog]]:
    """A headless Chromium tab whose network reaches only ``base_url``; yield (page, log)."""
    chromium_or_skip()
    playwright = pytest.importorskip("playwright.sync_api")
    log = TabLog()

    def only_local(route: Any, request: Any) -> None:
        if request.url.startswith(base_url + "/") or request.url.startswith("data:"):
            route.continue_()
        else:
            log.outside.append(request.url)
            route.abort()

    def failed(request: Any) -> None:
        if not request.url.startswith(base_url + "/"):
            return  # already recorded as outside
        log.failed.append(f"{request.url}: {request.failure}")

    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
            page.set_default_timeout(60_000)
            page.route("**/*", only_local)
            page.on("requestfailed", failed)
            page.on("pageerror", lambda exc: log.errors.append(str(exc)))
            # A 4xx answer the page shows as a message is logged by Chromium as a failed
            # resource load: expected, not an error of the page.
            page.on(
                "console",
                lambda m: (
                    log.errors.append(m.text)
                    if m.type == "error" and not m.text.startswith("Failed to load resource")
                    else None
                ),
            )
            yield page, log
        finally:
            browser.close()


@contextmanager
def running_studio(
    arguments: list[str], cwd: Path, env: dict[str, str] | None = None
) -> Iterator[str]:
    """``sdckit studio ARGUMENTS --no-browser`` in a subprocess; yield the URL it prints.

    The URL carries the one-time token, as a steward would copy it.
    """
    port = free_port()
    command = [sys.executable, "-m", "sdckit", "studio", *arguments, "--no-browser"]
    command += ["--port", str(port)]
    process = subprocess.Popen(
        command,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
    )
    try:
        assert process.stdout is not None
        printed: list[str] = []
        url = None
        for line in process.stdout:
            printed.append(line)
            match = re.search(r"(http://127\.0\.0\.1:\d+/\?token=\S+)", line)
            if match:
                url = match.group(1)
                break
        assert url is not None, "".join(printed)
        base = url.split("/?", 1)[0]
        deadline = time.monotonic() + 60
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError(
                        "sdckit studio did not listen: " + "".join(printed)
                    ) from None
                time.sleep(0.1)
        assert base.endswith(f":{port}")
        yield url
    finally:
        stop(process)


#: Where the session test writes its screenshots: ``docs/images`` regenerates the ones of
#: docs/studio.md (``SDCKIT_STUDIO_SCREENSHOTS=docs/images``); by default test-artifacts/.
SCREENSHOTS = Path(
    os.environ.get(
        "SDCKIT_STUDIO_SCREENSHOTS", Path(__file__).resolve().parents[2] / "test-artifacts"
    )
)


def screenshot(page: Any, name: str) -> Path:
    """The visible page as ``studio-NAME.png``, reduced to 64 colours to stay small."""
    from PIL import Image

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"studio-{name}.png"
    raw = path.with_suffix(".raw.png")
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(raw))
    with Image.open(raw) as image:
        image.convert("RGB").quantize(colors=64).save(path, optimize=True)
    raw.unlink()
    return path


@contextmanager
def served_studio(studio: Any) -> Iterator[tuple[str, str]]:
    """The real app over a studio session (the ``studio`` fixture), served in a thread:
    ``(base URL, URL with the token)``."""
    from sdckit.studio.app import create_app

    with serve_asgi(create_app(studio)) as url:
        yield url, f"{url}/?token={studio.token}"


def open_page(page: Any, url: str) -> None:
    """Go to the studio's URL and wait until the page has loaded the state and the forms."""
    page.goto(url)
    page.wait_for_selector("body[data-ready=true]")
