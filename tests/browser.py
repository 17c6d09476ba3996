"""Headless Chromium for tests: Debian's /usr/bin/chromium driven by Playwright.

Browser tests skip where Chromium is absent, except when VADSCENE_REQUIRE_BROWSER=1 (CI), where
that is a failure — a skipped browser test must not pass CI silently.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("VADSCENE_CHROMIUM", "/usr/bin/chromium")
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def require_chromium() -> str:
    if shutil.which(CHROMIUM) is None:
        message = f"Chromium not found at {CHROMIUM} (apt-get install chromium)"
        if os.environ.get("VADSCENE_REQUIRE_BROWSER") == "1":
            pytest.fail(f"{message}, and VADSCENE_REQUIRE_BROWSER=1 requires it")
        pytest.skip(message)
    return CHROMIUM


@contextmanager
def chromium_page(width: int = 1300, height: int = 1000) -> Iterator[object]:
    """A Playwright page in headless Debian Chromium."""
    from playwright.sync_api import sync_playwright

    executable = require_chromium()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=FLAGS)
        try:
            yield browser.new_page(viewport={"width": width, "height": height})
        finally:
            browser.close()


@contextmanager
def served_app(root: Path, log_path: Path, python: Path | None = None) -> Iterator[str]:
    """``vadscene app ROOT`` on a free port, its output in ``log_path``; yields its URL once
    Streamlit answers its health check, and stops it afterwards. ``python``: the interpreter
    to serve with (default: this one)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    interpreter = str(python or sys.executable)
    command = [interpreter, "-c", "from vadscene.cli import main; main()", "app", str(root)]
    with log_path.open("wb") as log:
        server = subprocess.Popen([*command, "--port", str(port)], stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=1) as response:
                    if response.status == 200:
                        break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"the app did not start: {log_path.read_text()[-2000:]}")
                time.sleep(0.3)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=10)
