"""The README's picture: the Annotate page of the demo workspace, taken in headless Chromium.

    python bench/screenshots.py [--out docs/images]

Builds the demo workspace in a temporary folder (``vadscene demo``), serves it with
``vadscene app``, and drives Debian's ``/usr/bin/chromium`` (``VADSCENE_CHROMIUM`` to override)
through Playwright as the README's walkthrough does: it opens ``Shooting001_x264``, adds the
annotator "Sam" in the name dialog and decides a few factors by keyboard, then writes
``annotate.png`` (1440×900, the size the page is laid out for) into ``--out``. Re-run it after a
change to the Annotate page and commit the picture.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

from vadscene.cli import run

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("VADSCENE_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--no-sandbox", "--disable-gpu", "--autoplay-policy=no-user-gesture-required"]
READY = "() => window.__vadsceneAnnotate && window.__vadsceneAnnotate.ready"
VIDEO = "Shooting001_x264"  # the walkthrough's video: no demo annotator has labelled it
SIZE = (1440, 900)
# Keys pressed on the page, top row first: colour, resolution (accept the auto pole), camera
# continuity, elevation; the picture then shows decided rows, an open auto chip (motion) and
# undecided ones, with the focus on field of view.
KEYS = ["1", "ArrowDown", "y", "ArrowDown", "2", "ArrowDown", "2", "ArrowDown"]
FOCUS = "field_of_view"
FRAME_TIME = 2.9  # seconds into the clip: people of the planted scene are in view


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_until_served(url: str, server: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 90
    while True:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the app did not start:\n{log.read_text()[-2000:]}") from None
            time.sleep(0.3)


def _annotate_page(page: Page, url: str) -> None:
    page.goto(f"{url}/?video={VIDEO}")
    page.get_by_role("textbox", name="Your name").fill("Sam")
    page.get_by_role("button", name="Add new annotator").click()
    page.wait_for_function(READY, timeout=60_000)
    video = page.locator("video:not([hidden])")
    video.wait_for(timeout=30_000)
    for key in KEYS:
        page.keyboard.press(key)
    page.locator(f".vs-row.vs-focus[data-factor='{FOCUS}']").wait_for(timeout=30_000)
    page.get_by_text("all saved").wait_for(timeout=30_000)
    # A still frame, so that the picture does not depend on when it was taken.
    video.evaluate(
        "(v, t) => new Promise((done) => { v.pause(); v.addEventListener('seeked', done,"
        " { once: true }); v.currentTime = t; })",
        FRAME_TIME,
    )
    page.wait_for_timeout(500)  # the filmstrip's thumbnails and the frame counter settle


def take_screenshots(out: Path) -> Path:
    """Write ``out/annotate.png`` and return its path."""
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="vadscene-screenshots-") as scratch:
        workspace = Path(scratch) / "demo"
        print(f"building the demo workspace in {workspace} …", flush=True)
        if run(["demo", str(workspace)]) != 0:
            raise SystemExit("vadscene demo failed")
        port = _free_port()
        url = f"http://127.0.0.1:{port}"
        log = Path(scratch) / "server.log"
        command = [sys.executable, "-c", "from vadscene.cli import main; main()", "app"]
        print(f"serving it at {url} …", flush=True)
        with log.open("wb") as sink:
            server = subprocess.Popen(
                [*command, str(workspace), "--port", str(port)], stdout=sink, stderr=sink
            )
        try:
            _wait_until_served(url, server, log)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
                try:
                    width, height = SIZE
                    page = browser.new_page(viewport={"width": width, "height": height})
                    print(f"labelling {VIDEO} in Chromium …", flush=True)
                    _annotate_page(page, url)
                    target = out / "annotate.png"
                    page.screenshot(path=str(target))
                finally:
                    browser.close()
        finally:
            server.terminate()
            server.wait(timeout=10)
    print(f"wrote {target}", flush=True)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, default=ROOT / "docs" / "images", help="folder for annotate.png"
    )
    take_screenshots(parser.parse_args().out)


if __name__ == "__main__":
    main()
