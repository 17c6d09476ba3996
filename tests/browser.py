"""Headless Chromium for tests: Debian's /usr/bin/chromium driven by Playwright.

Browser tests skip where Chromium is absent, except when VADSCENE_REQUIRE_BROWSER=1 (CI), where
that is a failure — a skipped browser test must not pass CI silently.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager

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
