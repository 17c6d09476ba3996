"""Helpers shared by the test modules: the small benchmark's names, real-data location, small
generated videos and benchmarks, and checks of error messages."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pytest
from support.clips import write_clip
from support.examples import BAD, GOOD, NORMAL, ROAD

from vadscene.benchmark.frames import GroundTruth
from vadscene.core.records import VideoInfo

ABUSE, ARSON = GOOD, BAD
"""The small benchmark's videos are the example annotation's (:mod:`support.examples`): ABUSE,
ARSON, NORMAL and ROAD."""

SMALL_BENCHMARK = {
    # file (relative to the video root) → frames
    f"{ABUSE}.mp4": 30,
    f"{ARSON}.mp4": 20,
    f"{NORMAL}.mp4": 25,
    f"nested/{ROAD}.mp4": 15,
}
"""The ``small_videos`` fixture's files (``tests/conftest.py``)."""

REALDATA = Path(
    os.environ.get("VADSCENE_REALDATA")
    or Path(__file__).resolve().parents[2] / "shared" / "realdata"
)


ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
"""Screenshots and other files tests leave for a person to look at (git-ignored)."""
ARTIFACTS.mkdir(exist_ok=True)


def realdata_dir() -> Path:
    """The shared real-data directory, read in place; skip (or fail in CI) when absent."""
    if not REALDATA.is_dir():
        message = f"real data directory {REALDATA} is absent"
        if os.environ.get("VADSCENE_REQUIRE_REALDATA") == "1":
            pytest.fail(f"{message} but VADSCENE_REQUIRE_REALDATA=1 requires it")
        pytest.skip(message)
    return REALDATA


def write_video(
    path: Path,
    codec: str,
    *,
    frames: int = 25,
    fps: int = 25,
    width: int = 64,
    height: int = 48,
    faststart: bool = False,
) -> Path:
    """Encode a small synthetic clip (a moving bar on a changing background) with PyAV: the
    library's :func:`~support.clips.write_clip`, with ``codec`` first and 25 frames."""
    return write_clip(
        path, frames=frames, faststart=faststart, codec=codec, fps=fps, width=width, height=height
    )


def copy_demo(template: Path, dest: Path) -> Path:
    """A copy of the demo workspace at ``dest`` (it holds its benchmark, so it can move);
    ``template`` is the session's ``demo_template`` fixture."""
    shutil.copytree(template, dest)
    return dest


def write_demo_soft_labels(demo: Path) -> Path:
    """Soft labels for a demo workspace, ``demo/soft.csv`` (video, frame, label): 0.75 on its
    annotated intervals (end exclusive), 0 elsewhere."""
    benchmark = demo / "benchmark"
    counts = dict(line.split() for line in (benchmark / "frame_counts.txt").open())
    rows = ["video,frame,label"]
    for line in (benchmark / "ground_truth.txt").read_text().splitlines():
        name, _category, *bounds = line.split()
        video = name.removesuffix(".mp4")
        labels = np.zeros(int(counts[video]))
        for start, end in zip(bounds[::2], bounds[1::2], strict=True):
            if int(start) >= 0:
                labels[int(start) : int(end)] = 0.75
        rows += [f"{video},{frame},{label}" for frame, label in enumerate(labels)]
    path = demo / "soft.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


E = TypeVar("E", bound=Exception)
R = TypeVar("R")


def assert_file_error(
    error_type: type[E], call: Callable[..., object], path: Path, *fragments: str, **kwargs: Any
) -> E:
    """``call(path, **kwargs)`` raises ``error_type`` saying ``"<path>: <reason>"``, with every
    fragment in the reason."""
    with pytest.raises(error_type) as info:
        call(path, **kwargs)
    error: Any = info.value
    assert error.path == path
    assert str(error) == f"{path}: {error.reason}"
    for fragment in fragments:
        assert fragment in error.reason
    return info.value


def result_or_clean_error(
    call: Callable[[Path], R], error_type: type[Exception], path: Path
) -> R | None:
    """``call(path)``, or None where it raised ``error_type`` as ``"<path>: ..."``; any other
    exception propagates (a damaged file must never raise one)."""
    try:
        return call(path)
    except error_type as error:
        assert str(error).startswith(f"{path}: ")
        return None


def damage(path: Path, seed: int) -> Path:
    """Truncate a file at a random point and overwrite 64 random bytes somewhere in it."""
    data = bytearray(path.read_bytes())
    rng = np.random.default_rng(seed)
    data = data[: rng.integers(1, len(data))]
    start = int(rng.integers(0, len(data)))
    data[start : start + 64] = rng.bytes(len(data[start : start + 64]))
    path.write_bytes(data)
    return path


def current_values(root: Path, annotator: str, video: str) -> dict[str, str | None]:
    """factor → value of one annotator on one video, read from the workspace's SQLite file by
    a connection of its own (not through the store under test)."""
    with sqlite3.connect(root / "annotations.db") as db:
        rows = db.execute(
            "SELECT factor, value FROM current_decisions WHERE annotator = ? AND video_id = ?",
            (annotator, video),
        ).fetchall()
    return dict(rows)


@contextmanager
def small_tmpfs(folder: Path, size: str = "64k") -> Iterator[Path]:
    """``folder`` as a fresh tmpfs of ``size`` — a disk that fills up, and that can be
    remounted read-only (``mount -o remount,ro``). Needs permission to mount; skips elsewhere."""
    folder.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=True)


def video_info(video_id: str, category: str = "Abuse") -> VideoInfo:
    """A registry entry for a video no test decodes: the store only needs its fields."""
    return VideoInfo(
        video_id=video_id,
        category=category,
        num_frames=100,
        fps=25.0,
        duration_s=4.0,
        width=320,
        height=240,
        codec="h264",
        size_bytes=1000,
        fingerprint="b2s:0",
    )


def synthetic_benchmark(n_videos: int, frames: int = 4) -> GroundTruth:
    """``n_videos`` videos of ``frames`` frames; every third video is anomalous in its first
    ``video % frames`` frames (so some are mixed, some wholly normal)."""
    labels = np.zeros((n_videos, frames), dtype=bool)
    for video in range(0, n_videos, 3):
        labels[video, : 1 + video % frames] = True
    ids = tuple(f"Abuse{video:05d}" for video in range(n_videos))
    return GroundTruth(
        video_ids=ids,
        categories=tuple("Abuse" if labels[i].any() else "Normal" for i in range(n_videos)),
        offsets=np.arange(0, n_videos * frames + 1, frames, dtype=np.int64),
        labels=labels.ravel(),
        source="synthetic",
    )


def uniform_benchmark(anomalous: bool) -> GroundTruth:
    """Two videos of 3 and 5 frames, every frame anomalous or every frame normal."""
    return GroundTruth(
        video_ids=("Abuse001", "Arson002"),
        categories=("Abuse", "Arson"),
        offsets=np.array([0, 3, 8], dtype=np.int64),
        labels=np.full(8, anomalous),
        source="gt.txt",
    )


PHYSICAL_MEMORY = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
"""This machine's memory in bytes, as the refusals of absurd sizes state it."""

DUPLICATED_KEY = (
    "a key appears twice in one object (the object starting at line {line} column {column})"
)
"""How the strict JSON reader names a duplicated key (format with the object's position)."""

NFC, NFD = unicodedata.normalize("NFC", "Café001"), unicodedata.normalize("NFD", "Café001")
"""One video id in Unicode's composed (NFC) and decomposed (NFD) forms."""

SNIPPET = 16
"""Frames per snippet of the ``snippet_demo`` workspace's snippet-level scores."""
