"""Fixtures shared by the test modules."""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from browser import require_chromium, served_app
from helpers import SMALL_BENCHMARK, SNIPPET, copy_demo, write_video
from support.examples import annotate_example

from vadscene.cli import run
from vadscene.core.catalogue import Catalogue, load_catalogue
from vadscene.store.workspace import Workspace


@pytest.fixture(autouse=True)
def _main_module_restored() -> Iterator[None]:
    """``sys.modules["__main__"]`` as it was before the test.

    Streamlit's script runner (AppTest) makes each script it runs the ``__main__`` module and
    leaves it there; a process pool spawned later in the same test process would then run that
    script — a deleted temporary file, for ``AppTest.from_function`` — as its workers' main
    module, and every worker would die on start."""
    main = sys.modules.get("__main__")
    yield
    if main is not None:
        sys.modules["__main__"] = main


@pytest.fixture(scope="session")
def catalogue() -> Catalogue:
    return load_catalogue()


@pytest.fixture
def small_videos(tmp_path: Path) -> Path:
    """A folder of four tiny real H.264 videos with UCF-Crime style names."""
    root = tmp_path / "videos"
    for name, frames in SMALL_BENCHMARK.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        write_video(root / name, "libx264", frames=frames)
    return root


@pytest.fixture
def small_workspace(tmp_path: Path, small_videos: Path) -> Workspace:
    """A scanned workspace over :func:`small_videos` with the default catalogue."""
    workspace = Workspace.create(tmp_path / "ws", video_root=small_videos, dataset="small")
    workspace.scan()
    yield workspace
    workspace.close()


@pytest.fixture
def annotated(small_workspace: Workspace) -> Workspace:
    """:func:`small_workspace` annotated (:func:`support.examples.annotate_example`, full).

    ABUSE: ana and ben agree on color; ana has a second decision (crowd: few).
    ARSON: ana and ben disagree on color; ana overrides the auto resolution pole (low to
    high); ben's marks (a flag, a note).
    NORMAL: crowd few (ana), many (ben), many as carla's consensus; setting ambiguous (ben,
    with a note); carla's own decision (activity), ana's location.
    ROAD: only the auto pole stands; ben decided the elevation and cleared it.
    Every video has a sharpness measurement (ABUSE 80, ARSON 20, NORMAL 55, ROAD 10) and the
    resolution pole it gives; the threshold rule is the median (37.5).
    """
    annotate_example(small_workspace.store, full=True)
    return small_workspace


@pytest.fixture(scope="session")
def demo_build(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, str]:
    """`vadscene demo` run once per test run: (workspace, exit code, stdout).

    Rendering the demo's videos is slow, so every test that needs a demo workspace copies this
    one (:func:`copy_demo`) instead of building its own. Under pytest-xdist the workers share
    one build: the first to take the lock builds it in the run's common temporary folder, the
    others wait and read its exit code and output.
    """
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the folder every worker's basetemp lives in, fresh per run
    folder = base / "demo-template"
    outcome = folder / "outcome.json"
    with open(base / "demo-template.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not outcome.exists():
            folder.mkdir()
            stdout = io.StringIO()
            with contextlib.redirect_stdout(stdout):
                code = run(["demo", str(folder / "demo")])
            outcome.write_text(json.dumps({"code": code, "output": stdout.getvalue()}))
    result = json.loads(outcome.read_text())
    return folder / "demo", result["code"], result["output"]


@pytest.fixture(scope="session")
def demo_template(demo_build: tuple[Path, int, str]) -> Path:
    """The session's demo workspace; never changed — copy it (:func:`copy_demo`) to write."""
    root, code, output = demo_build
    assert code == 0, output
    return root


@pytest.fixture(scope="module")
def served(
    demo_template: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Path]]:
    """`vadscene app` serving a fresh copy of the demo workspace, for one test module's
    browser tests: (url, workspace root)."""
    require_chromium()
    base = tmp_path_factory.mktemp("served")
    root = copy_demo(demo_template, base / "demo")
    with served_app(root, base / "server.log") as url:
        yield url, root


@pytest.fixture(scope="module")
def snippet_demo(demo_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the demo workspace plus a snippet-level copy of its localizer's scores, in
    ``benchmark/scores/localizer_snippets`` (the mean of each :data:`helpers.SNIPPET` frames,
    the last snippet possibly short)."""
    root = copy_demo(demo_template, tmp_path_factory.mktemp("ergonomics") / "demo")
    snippets = root / "benchmark" / "scores" / "localizer_snippets"
    snippets.mkdir()
    for file in sorted((root / "benchmark" / "scores" / "localizer").glob("*.npy")):
        frames = np.load(file)
        starts = np.arange(0, frames.size, SNIPPET)
        np.save(
            snippets / file.name, np.add.reduceat(frames, starts) / np.diff([*starts, frames.size])
        )
    return root
