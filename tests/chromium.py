"""The headless Chromium of the browser tests (``SDCKIT_CHROMIUM`` names another binary)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CHROMIUM = Path(os.environ.get("SDCKIT_CHROMIUM", "/usr/bin/chromium"))


def chromium_or_skip() -> Path:
    """The Chromium binary; the test is skipped, saying why, when it is absent."""
    if not CHROMIUM.exists():
        reason = f"{CHROMIUM} is absent; install the Debian package 'chromium' to run this test"
        print(f"skipping: {reason}")
        pytest.skip(reason)
    return CHROMIUM


#: Flags of every headless browser test: no sandbox (containers), and nothing the browser
#: would fetch by itself (updates, sync), so a test sees only the page's own requests.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
