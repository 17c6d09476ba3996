"""The README's five-minute walkthrough, run as a newcomer runs it.

The fenced blocks after a ``<!-- walkthrough`` comment are the walkthrough's terminals. Their
commands run one by one with bash in a fresh folder that holds only a ``.venv`` (this
interpreter's environment, as ``make app`` leaves it in a checkout) and with that environment's
``bin`` taken off PATH, so ``vadscene`` is found only through the README's
``. .venv/bin/activate``. ``vadscene app`` is started in the background, as the README leaves it
running, on a free port instead of the README's (which may be taken on a test machine); the URL
the README gives is opened on that port.

With Chromium, the video is labelled as step 2 says — the name dialog, a value key per row and
``y`` on the measured rows — and the release and the audit must show the new labels; without it
(the ``slow`` test), the same commands must run on the demo as built. Either way every command
must succeed, the figure file the README names must exist and hold the figure, and the numbers
the README quotes must be the report's.
"""

from __future__ import annotations

import csv
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from browser import chromium_page

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
MARK = "<!-- walkthrough"
ACTIVATE = ". .venv/bin/activate"

# What the walkthrough's prose tells the reader to do and to expect; each must be in its text.
VIDEO = "Shooting001_x264"
ADD_BUTTON = "Add new annotator"
DONE = "12 / 12 decided"
LABELLED = "`color: 10 of 12 videos`"
BEFORE = "(9 before)"
FIGURE_FILE = "my-report/report.html"
FIGURE_TITLE = "The same scores read under different pairing rules"
SECTIONS = ("AUROC at each granularity", "Scene bias on normal footage")
VIDEO_CONSTANT = "a micro AUROC of 0.82 but exactly 0.50 within videos"

READY = "() => window.__vadsceneAnnotate && window.__vadsceneAnnotate.ready"


def walkthrough_text() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("## Your first video, in five minutes")
    return text[start : text.index("\n## ", start + 1)]


def prose() -> str:
    """The walkthrough's text with its line breaks as spaces, as it reads."""
    return re.sub(r"\s+", " ", walkthrough_text())


def terminals(text: str) -> list[list[str]]:
    """The commands of each fenced block that follows a walkthrough mark, one per line once
    backslash continuations are joined; comment lines left out."""
    blocks = re.findall(rf"^{re.escape(MARK)}.*?-->\n```bash\n(.*?)^```", text, re.M | re.S)
    return [
        [line for line in block.replace("\\\n", " ").splitlines() if line.split("#")[0].strip()]
        for block in blocks
    ]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _newcomer_env() -> dict[str, str]:
    """This environment without the venv activated: its bin off PATH, no VIRTUAL_ENV."""
    venv_bin = str(Path(sys.prefix) / "bin")
    env = {key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"}
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if p != venv_bin)
    return env


@dataclass
class Walkthrough:
    """The walkthrough's terminals run in ``folder``; the app's URL once it serves."""

    folder: Path
    port: int = field(default_factory=_free_port)
    outputs: dict[str, str] = field(default_factory=dict)
    url: str = ""

    def __post_init__(self) -> None:
        activate = Path(sys.prefix) / "bin" / "activate"
        assert activate.exists(), f"the tests must run in a venv ({sys.prefix} has no activate)"
        (self.folder / ".venv").symlink_to(sys.prefix, target_is_directory=True)
        self.env = _newcomer_env()
        probe = subprocess.run(
            ["bash", "-c", "command -v vadscene"], env=self.env, capture_output=True, check=False
        )
        assert probe.returncode != 0, "vadscene is on PATH before the README's activation"

    def script(self, prefix: list[str], command: str) -> list[str]:
        return ["bash", "-c", "\n".join(["set -euo pipefail", *prefix, command])]

    def run(self, prefix: list[str], command: str) -> str:
        done = subprocess.run(
            self.script(prefix, command),
            cwd=self.folder,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, (
            f"README walkthrough: `{command}` exited {done.returncode}\n"
            f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        )
        words = command.split()
        self.outputs[words[1] if words[0] == "vadscene" else command] = done.stdout + done.stderr
        return done.stdout

    @contextmanager
    def serving(self, prefix: list[str], command: str, readme_port: str) -> Iterator[None]:
        log_path = self.folder / "app.log"
        command = command.replace(f"--port {readme_port}", f"--port {self.port}")
        with log_path.open("wb") as log:
            server = subprocess.Popen(
                self.script(prefix, f"exec {command}"),
                cwd=self.folder,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self.url = f"http://127.0.0.1:{self.port}"
        try:
            deadline = time.monotonic() + 90
            while True:
                try:
                    with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=1):
                        break
                except OSError:
                    if server.poll() is not None or time.monotonic() > deadline:
                        pytest.fail(f"`{command}` did not serve: {log_path.read_text()[-2000:]}")
                    time.sleep(0.3)
            yield
        finally:
            server.terminate()
            server.wait(timeout=15)


def run_walkthrough(folder: Path, while_serving: Callable[[str], None]) -> Walkthrough:
    """Run every terminal of the walkthrough in ``folder``; ``while_serving(url)`` is step 2,
    done once the app serves, with the README's link on the test's port."""
    text = walkthrough_text()
    (first, second) = terminals(text)
    (readme_url,) = re.findall(r"<(http://127\.0\.0\.1:\d+/[^>]*)>", text)
    readme_port = readme_url.split(":")[2].split("/")[0]
    walk = Walkthrough(folder)
    app_lines = [line for line in first if line.startswith("vadscene app ")]
    assert len(app_lines) == 1 and f"--port {readme_port}" in app_lines[0]
    prefix: list[str] = []
    for command in first[: first.index(app_lines[0])]:
        if command.startswith(ACTIVATE):
            prefix.append(command)
        else:
            walk.run(prefix, command)
    assert prefix, "the first terminal activates .venv"
    with walk.serving(prefix, app_lines[0], readme_port):
        while_serving(readme_url.replace(f":{readme_port}/", f":{walk.port}/"))
        prefix = []
        for command in second:
            if command.startswith(ACTIVATE):
                prefix.append(command)
            else:
                walk.run(prefix, command)
        assert prefix, "the second terminal activates .venv too"
    return walk


def _assert_the_report_is_as_the_readme_says(walk: Walkthrough) -> None:
    text = prose()
    assert f"`{FIGURE_FILE}`" in text and FIGURE_TITLE in text
    report = walk.folder / FIGURE_FILE
    html = report.read_text(encoding="utf-8")
    assert FIGURE_TITLE in html
    for section in SECTIONS:
        assert f'"{section}"' in text and section in html
    with (report.parent / "metrics.csv").open(newline="") as table:
        values = {
            row["granularity"]: float(row["value"])
            for row in csv.DictReader(table)
            if row["model"] == "video_constant"
        }
    assert VIDEO_CONSTANT in text
    assert (f"{values['micro']:.2f}", f"{values['within']:.2f}") == ("0.82", "0.50")


@pytest.mark.slow
def test_the_walkthrough_commands_run_on_a_fresh_checkout(tmp_path: Path) -> None:
    def open_the_link(url: str) -> None:
        with urllib.request.urlopen(url, timeout=30) as response:
            assert response.status == 200

    walk = run_walkthrough(tmp_path, open_the_link)
    assert "annotators: demo-ana, demo-ben" in walk.outputs["export"]
    assert "OK" in walk.outputs["validate"]
    # nobody has labelled the colour of the README's video yet: the README's "before" count
    assert "color: 9 of 12 videos" in walk.outputs["audit"]
    assert BEFORE in prose()
    _assert_the_report_is_as_the_readme_says(walk)


@pytest.mark.browser
def test_the_walkthrough_with_its_video_labelled_in_the_browser(tmp_path: Path) -> None:
    text = prose()
    for told in (VIDEO, f"**{ADD_BUTTON}**", f"**{DONE}**", "`y`", "`↓`", LABELLED, BEFORE):
        assert told in text

    def label_the_video(url: str) -> None:
        assert f"?video={VIDEO}" in url
        with chromium_page(1440, 900) as page:
            page.goto(url)
            page.get_by_role("textbox", name="Your name").fill("Sam")
            page.get_by_role("button", name=ADD_BUTTON).click()
            page.wait_for_function(READY, timeout=60_000)
            page.get_by_text(VIDEO, exact=False).first.wait_for(timeout=30_000)
            rows = page.locator(".vs-row").evaluate_all(
                "rows => rows.map(r => r.querySelector('.vs-auto') !== null)"
            )
            assert len(rows) == 12
            for measured in rows:  # a value per row, the auto chip accepted on measured rows
                page.keyboard.press("y" if measured else "1")
                page.keyboard.press("ArrowDown")
            page.get_by_text(DONE).wait_for(timeout=30_000)
            page.get_by_text("all saved").wait_for(timeout=30_000)

    walk = run_walkthrough(tmp_path, label_the_video)
    assert "annotators: demo-ana, demo-ben, sam" in walk.outputs["export"]
    assert LABELLED.strip("`") in walk.outputs["audit"]
    # the labels went through the release: every factor the demo left open now covers one video
    for factor in ("elevation", "viewpoint", "road"):
        assert f"{factor}: 1 of 12 videos" in walk.outputs["audit"]
    _assert_the_report_is_as_the_readme_says(walk)
