"""Reliability checks, run at a small scale, and the figures the README reports from them.

Four checks, each shared with the test suite so the README's numbers come from running the
same code the tests run (never typed in):

- **Bad input** — :data:`CASES`, a table of bad inputs (damaged videos, broken score files,
  malformed or inconsistent releases, bad options, refused store writes). Each case builds its
  input in a scratch folder, runs a CLI command in-process or a library call, and
  :func:`run_case` checks the three promises of :mod:`vadscene.core.errors`: one message naming the
  file, video or value and what was expected; a non-zero exit code (exit 0 where the problem
  is reported but not fatal); and the annotation store unchanged byte for byte (or, where the
  command records the problem by design, unchanged outside the tables it records into).
  ``tests/test_bad_input.py`` runs every case.
- **Release fuzzing** — :func:`release_inputs` generates releases with Hypothesis: valid
  random ones (consistent support and resolutions, computed with
  :func:`vadscene.release.releases.pole_support` and
  :func:`vadscene.annotate.consensus.resolve_assignment`) and
  mutations of valid ones. :func:`check_release_import` states the property: importing either
  succeeds and re-exports the same release, or raises a :class:`VadsceneError` and leaves no
  partial write. ``tests/release/test_fuzz_release.py`` runs it on 1000 examples.
- **Concurrent writers** — :func:`concurrent_writers_check`: two processes record decisions
  into one store at once; every decision must be in the log, in each writer's order.
- **Crashes** — :func:`crash_check`: a writer process is SIGKILLed mid-stream; every decision
  it acknowledged must be in the log, in order, and the store must pass its integrity check.

Test machinery, not part of the package: ``bench/reliability_figures.py`` prints the README
table from :func:`reliability_figures`. Needs the ``dev`` extra (Hypothesis).
"""

from __future__ import annotations

import atexit
import contextlib
import copy
import dataclasses
import io
import itertools
import json
import math
import multiprocessing
import os
import shutil
import signal
import socket
import sqlite3
import tempfile
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta, timezone
from functools import cache
from pathlib import Path
from typing import Any, Literal

import av
import numpy as np
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vadscene import __version__
from vadscene.annotate.consensus import resolve_assignment
from vadscene.benchmark.video_lists import category_from_video_id
from vadscene.cli import run
from vadscene.core.catalogue import (
    AMBIGUOUS,
    Catalogue,
    Factor,
    load_catalogue,
)
from vadscene.core.errors import VadsceneError
from vadscene.core.records import (
    AUTO_ANNOTATOR,
    AutoThreshold,
    FactorDecision,
    Measurement,
    Release,
    Selection,
    ToolInfo,
    VideoInfo,
    VideoMarks,
    VideoRecord,
)
from vadscene.release.releases import (
    build_release,
    import_release,
    pole_support,
    read_release,
    release_json,
    workspace_from_release,
)
from vadscene.store.database import AnnotationStore
from vadscene.store.workspace import STORE_NAME, Workspace

# --- the store snapshot -------------------------------------------------------------------


@dataclass(frozen=True)
class StoreSnapshot:
    """An annotation store's bytes (database and WAL file) and every row of every table."""

    database: bytes
    wal: bytes | None
    tables: dict[str, list[tuple[Any, ...]]]


def snapshot_store(path: Path) -> StoreSnapshot:
    """Checkpoint the WAL into the database file, then read the files and the rows.

    Call it with no connection open: the checkpoint moves every committed page into the main
    file, so two snapshots of the same content have the same bytes, and a write that is still
    only in the WAL shows up as a difference.
    """
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=rw", uri=True)) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        tables = {name: db.execute(f'SELECT * FROM "{name}"').fetchall() for name in names}
    wal = Path(f"{path}-wal")
    return StoreSnapshot(path.read_bytes(), wal.read_bytes() if wal.exists() else None, tables)


def store_changes(
    before: StoreSnapshot, after: StoreSnapshot, *, may_change: frozenset[str] = frozenset()
) -> list[str]:
    """What differs between two snapshots; empty when the store is unchanged.

    With ``may_change`` empty the files must be identical byte for byte. Commands that record
    a problem by design (scan: unreadable files; measure: failures) name those tables; every
    other table must keep exactly its rows.
    """
    changed = sorted(
        name
        for name in before.tables.keys() | after.tables.keys()
        if before.tables.get(name) != after.tables.get(name) and name not in may_change
    )
    found = [f"table {name} changed" for name in changed]
    if (
        not may_change
        and not found
        and (before.database, before.wal) != (after.database, after.wal)
    ):
        found.append("the store's bytes changed (its rows did not)")
    return found


# --- building bad input -------------------------------------------------------------------

CLIP_FRAMES = 30


def write_clip(
    path: Path,
    *,
    frames: int = CLIP_FRAMES,
    faststart: bool = False,
    codec: str = "libx264",
    fps: int = 25,
    width: int = 64,
    height: int = 48,
    pix_fmt: str = "yuv420p",
    encoder_options: dict[str, str] | None = None,
) -> Path:
    """A tiny real clip (a moving bar on a changing background), the kind of video the
    workspace tests use; ``faststart`` writes an MP4's index (moov) before the frames."""
    path.parent.mkdir(parents=True, exist_ok=True)
    options = {"movflags": "faststart"} if faststart else {}
    with av.open(str(path), "w", options=options) as container:
        stream = container.add_stream(codec, rate=fps, options=encoder_options or {})
        stream.width, stream.height, stream.pix_fmt = width, height, pix_fmt
        for i in range(frames):
            image = np.full((height, width, 3), (i * 9) % 256, dtype=np.uint8)
            image[:, (i * 3) % width] = 255
            frame = av.VideoFrame.from_ndarray(image, format="rgb24").reformat(format=pix_fmt)
            container.mux(stream.encode(frame))
        container.mux(stream.encode())
    return path


# Bad video files, each written to ``path`` (which is returned). The scan and measure cases
# use :data:`BAD_FILES`; ``tests/video/test_video.py`` and ``tests/measure/test_measure.py``
# use them all.


def cut_short(path: Path, fraction: float = 0.5, *, source: Path | None = None) -> Path:
    """Keep the first ``fraction`` of the bytes of ``source`` (default: ``path`` itself)."""
    data = (source or path).read_bytes()
    path.write_bytes(data[: int(len(data) * fraction)])
    return path


def corrupt_video(path: Path, *, frames: int = CLIP_FRAMES) -> Path:
    """Intact header and index, random frames: opens, but nothing decodes."""
    data = bytearray(write_clip(path, frames=frames, faststart=True).read_bytes())
    payload = data.index(b"mdat") + 4  # moov (the index) stays intact, the frames do not
    data[payload:] = np.random.default_rng(0).bytes(len(data) - payload)
    path.write_bytes(data)
    return path


def truncated_video(
    path: Path, *, frames: int = 60, faststart: bool = True, fraction: float = 0.5, **clip: Any
) -> Path:
    """The first ``fraction`` of a clip (``clip``: more :func:`write_clip` options). With its
    index first (``faststart``) the index promises frames that are missing; without, an MP4
    loses its index (written last)."""
    return cut_short(write_clip(path, frames=frames, faststart=faststart, **clip), fraction)


def empty_file(path: Path) -> Path:
    path.write_bytes(b"")
    return path


def non_video_file(path: Path) -> Path:
    """Text under a video's name."""
    path.write_text("these are not the frames you are looking for\n" * 20, encoding="utf-8")
    return path


def zero_frame_video(path: Path) -> Path:
    """An AVI with a video stream and not one frame."""
    with av.open(str(path), "w") as container:
        stream = container.add_stream("mpeg4", rate=25)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        container.start_encoding()
    return path


def audio_only_file(path: Path, *, cover_art: bool = False) -> Path:
    """A short silent AAC track; ``cover_art`` adds an mjpeg cover picture, which FFmpeg lists
    as a video stream although it is no video."""
    with av.open(str(path), "w") as container:
        audio = container.add_stream("aac", rate=8000)
        if cover_art:
            cover = container.add_stream("mjpeg", rate=1)
            cover.width = cover.height = 32
            cover.pix_fmt = "yuvj420p"
            cover.disposition = av.stream.Disposition.attached_pic
            picture = av.VideoFrame.from_ndarray(np.zeros((32, 32, 3), np.uint8), format="rgb24")
            container.mux(cover.encode(picture))
            container.mux(cover.encode())
        for i in range(10):
            samples = np.zeros((1, 1024), dtype=np.float32)
            frame = av.AudioFrame.from_ndarray(samples, format="fltp", layout="mono")
            frame.sample_rate, frame.pts = 8000, i * 1024
            container.mux(audio.encode(frame))
        container.mux(audio.encode())
    return path


def unknown_codec_video(path: Path) -> Path:
    """An AVI whose codec fourcc names no codec FFmpeg knows."""
    data = write_clip(path, codec="mpeg4").read_bytes()
    path.write_bytes(data.replace(b"FMP4", b"QQQQ"))
    return path


BAD_FILES: dict[str, Callable[[Path], Path]] = {
    "corrupt_video": corrupt_video,
    "truncated_video": truncated_video,
    "empty_file": empty_file,
    "non_video_file": non_video_file,
}
"""Ways to make a file that is not a readable video, by name."""

GOOD, BAD = "Abuse001_x264", "Arson002_x264"
NORMAL = "Normal_Videos_003_x264"


def _video_workspace(folder: Path) -> Path:
    """A workspace over one real clip (video ``GOOD``), scanned; returns its folder."""
    write_clip(folder / "videos" / f"{GOOD}.mp4")
    with Workspace.create(folder / "ws", video_root=folder / "videos") as workspace:
        workspace.scan()
    return folder / "ws"


def _video_info(video_id: str, frames: int) -> VideoInfo:
    return VideoInfo(
        video_id=video_id,
        category=category_from_video_id(video_id) or "Unknown",
        num_frames=frames,
        fps=25.0,
        duration_s=frames / 25,
        width=64,
        height=48,
        codec="h264",
        size_bytes=1000,
        fingerprint="b2s:0",
    )


def registry_workspace(
    folder: Path,
    counts: dict[str, int] | None = None,
    *,
    with_video_folder: bool = False,
    name: str = "ws",
) -> Path:
    """A workspace whose videos are registered without files (cheap); returns its folder.

    With ``with_video_folder`` it has an (empty) video folder, so it behaves like a workspace
    over real videos: a release may only name videos it has registered.
    """
    videos = folder / "videos"
    if with_video_folder:
        videos.mkdir(parents=True, exist_ok=True)
    counts = {GOOD: 30, NORMAL: 25} if counts is None else counts
    root = folder / name
    with Workspace.create(root, video_root=videos if with_video_folder else None) as workspace:
        workspace.store.register_videos(_video_info(v, n) for v, n in counts.items())
    return root


def _release_data(folder: Path) -> dict[str, Any]:
    """A valid release (as parsed JSON) of two videos, one decision and one measurement."""
    root = registry_workspace(folder, name="source-ws")
    with Workspace.open(root) as workspace:
        store = workspace.store
        store.record_decision(GOOD, "color", "grayscale", annotator="ana")
        store.record_measurement(
            GOOD,
            "sharpness",
            Measurement(
                value=12.5,
                decoder="opencv",
                frames_read=30,
                seconds=0.01,
                measured_at=datetime(2026, 1, 2, tzinfo=UTC),
            ),
        )
        return json.loads(release_json(build_release(workspace)))


def _write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _release_file(folder: Path, name: str, mutate: Callable[[dict[str, Any]], None]) -> Path:
    data = _release_data(folder)
    mutate(data)
    return _write_json(folder / name, data)


def _ground_truth(folder: Path, lines: list[str]) -> Path:
    path = folder / "gt.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


GT_LINES = [f"{GOOD} Abuse 5 12", f"{NORMAL} Normal -1 -1"]
"""UCF-Crime style ground truth (no frame counts: the workspace registry gives 30 and 25)."""


def _scores(folder: Path, rows: list[tuple[str, str]]) -> Path:
    path = folder / "scores.csv"
    path.write_text("video,score\n" + "".join(f"{v},{s}\n" for v, s in rows), encoding="utf-8")
    return path


def _good_scores() -> list[tuple[str, str]]:
    return [(GOOD, "0.5")] * 30 + [(NORMAL, "0.1")] * 25


# --- the bad-input cases ------------------------------------------------------------------


@dataclass(frozen=True)
class Attempt:
    """What one case runs once its input is built: a CLI command or a library call."""

    argv: tuple[str, ...] = ()
    call: Callable[[], object] | None = None
    store: Path | None = None
    """Workspace folder whose store must not change (see :func:`store_changes`)."""
    absent: Path | None = None
    """A path the refused command must not create (a workspace folder, a release file)."""


@dataclass(frozen=True)
class BadInputCase:
    """One bad input and what vadscene must answer.

    ``expected`` are fragments of the message, with ``{tmp}`` standing for the case's folder.
    ``exit_code`` is the CLI's; None marks a library call, which must raise a
    :class:`VadsceneError`. ``may_change`` names the store tables the command records the
    problem into by design.
    """

    name: str
    build: Callable[[Path], Attempt]
    expected: tuple[str, ...]
    exit_code: int | None = 1
    stream: Literal["stdout", "stderr"] = "stderr"
    may_change: frozenset[str] = frozenset()


def _cli(*args: str | Path, store: Path | None = None, absent: Path | None = None) -> Attempt:
    return Attempt(argv=tuple(str(a) for a in args), store=store, absent=absent)


def _store_call(root: Path, action: Callable[[AnnotationStore], object]) -> Attempt:
    """A store method called on a freshly opened workspace, closed afterwards."""

    def call() -> object:
        with Workspace.open(root) as workspace:
            return action(workspace.store)

    return Attempt(call=call, store=root)


def _scan_case(kind: str) -> Callable[[Path], Attempt]:
    """A bad file added to a workspace's video folder, then ``vadscene scan``."""

    def build(folder: Path) -> Attempt:
        root = _video_workspace(folder)
        BAD_FILES[kind](folder / "videos" / f"{BAD}.mp4")
        return _cli("scan", root, store=root)

    return build


def _measure_case(kind: str | None) -> Callable[[Path], Attempt]:
    """A registered video replaced by a bad file (or deleted: None), then ``vadscene measure``."""

    def build(folder: Path) -> Attempt:
        root = _video_workspace(folder)
        video = folder / "videos" / f"{GOOD}.mp4"
        if kind is None:
            video.unlink()
        else:
            BAD_FILES[kind](video)
        return _cli("measure", root, "--workers", "1", store=root)

    return build


def _audit_case(
    rows: Callable[[], list[tuple[str, str]]] | None, gt_lines: list[str] = GT_LINES
) -> Callable[[Path], Attempt]:
    """``vadscene audit`` of a score table (None: ground truth only) against a workspace."""

    def build(folder: Path) -> Attempt:
        root = registry_workspace(folder)
        args: list[str | Path] = ["audit", "--out", folder / "report", "--bootstrap", "0"]
        args += ["--gt", _ground_truth(folder, gt_lines), "--workspace", root]
        if rows is not None:
            args += ["--scores", f"model={_scores(folder, rows())}"]
        return _cli(*args, store=root, absent=folder / "report")

    return build


def _with_score(index: int, video: str, value: str) -> Callable[[], list[tuple[str, str]]]:
    def rows() -> list[tuple[str, str]]:
        table = _good_scores()
        table[index] = (video, value)
        return table

    return rows


def _validate_case(
    name: str, mutate: Callable[[dict[str, Any]], None]
) -> Callable[[Path], Attempt]:
    def build(folder: Path) -> Attempt:
        return _cli("validate", _release_file(folder, name, mutate))

    return build


def _import_case(
    name: str, mutate: Callable[[dict[str, Any]], None], *, into: Literal["new", "existing"]
) -> Callable[[Path], Attempt]:
    """``vadscene import`` of a mutated release into a new folder or an existing workspace."""

    def build(folder: Path) -> Attempt:
        release = _release_file(folder, name, mutate)
        if into == "new":
            return _cli("import", folder / "new-ws", release, absent=folder / "new-ws")
        root = registry_workspace(folder)
        return _cli("import", root, release, store=root)

    return build


def _duplicate_video(data: dict[str, Any]) -> None:
    data["videos"].append(data["videos"][0])


def _schema_version_2(data: dict[str, Any]) -> None:
    data["schema_version"] = 2


def _drop_last_factor(data: dict[str, Any]) -> None:
    """A valid release over a catalogue without the last factor ('road')."""
    dropped = data["catalogue"]["factors"].pop()["key"]
    data["support"] = [s for s in data["support"] if s["factor"] != dropped]


def _blank_annotator(data: dict[str, Any]) -> None:
    data["videos"][0]["factors"]["color"]["decisions"][0]["annotator"] = " "
    data["annotators"] = [" "]


def _nan_measurement(data: dict[str, Any]) -> None:
    data["videos"][0]["measurements"]["sharpness"]["value"] = math.nan


def _huge_frame_count(data: dict[str, Any]) -> None:
    data["videos"][0]["num_frames"] = 2**64


def _malformed(folder: Path) -> Path:
    text = json.dumps(_release_data(folder), indent=2)
    path = folder / "cut.json"
    path.write_text(text[: len(text) // 2], encoding="utf-8")
    return path


def _init_with_catalogue(folder: Path) -> Attempt:
    catalogue = load_catalogue().model_dump(mode="json")
    catalogue["factors"][0]["contrasts"] = [{"positive": "color", "negative": "sepia"}]
    path = folder / "catalogue.yaml"
    path.write_text(yaml.safe_dump(catalogue, sort_keys=False), encoding="utf-8")
    (folder / "videos").mkdir()
    ws = folder / "ws"
    return _cli("init", ws, "--videos", folder / "videos", "--catalog", path, absent=ws)


def _init_with(*options: str) -> Callable[[Path], Attempt]:
    def build(folder: Path) -> Attempt:
        write_clip(folder / "videos" / f"{GOOD}.mp4")
        ws = folder / "ws"
        return _cli("init", ws, "--videos", folder / "videos", *options, absent=ws)

    return build


def _export_empty(folder: Path) -> Attempt:
    (folder / "videos").mkdir()
    with Workspace.create(folder / "ws", video_root=folder / "videos"):
        pass
    out = folder / "r.json"
    return _cli("export", folder / "ws", "--out", out, store=folder / "ws", absent=out)


def _taken(folder: Path) -> Path:
    """A regular file where a command wants to make a folder (a workspace, a report)."""
    path = folder / "taken"
    path.write_text("not a folder\n", encoding="utf-8")
    return path


def _init_on_a_file(folder: Path) -> Attempt:
    write_clip(folder / "videos" / f"{GOOD}.mp4")
    return _cli("init", _taken(folder), "--videos", folder / "videos")


def _export_into_a_folder(folder: Path) -> Attempt:
    root = registry_workspace(folder)
    (folder / "releases").mkdir()
    return _cli("export", root, "--out", folder / "releases", store=root)


def _audit_report_on_a_file(folder: Path) -> Attempt:
    root = registry_workspace(folder)
    gt = _ground_truth(folder, GT_LINES)
    args = ("audit", "--out", _taken(folder), "--gt", gt, "--workspace", root, "--bootstrap", "0")
    return _cli(*args, store=root)


def _deep_json(folder: Path) -> Attempt:
    path = folder / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    return _cli("validate", path)


def _audit_with(*options: str) -> Callable[[Path], Attempt]:
    """A good ``vadscene audit`` run with ``options`` appended."""

    def build(folder: Path) -> Attempt:
        attempt = _audit_case(_good_scores)(folder)
        return dataclasses.replace(attempt, argv=(*attempt.argv, *options))

    return build


def _taken_by_a_folder(folder: Path) -> Path:
    """A folder where a command wants to read a file."""
    path = folder / "export.json"
    path.mkdir()
    return path


def _free_port() -> int:
    """A local TCP port nothing listens on (the system's pick, released at once)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _unreachable_scheduler(folder: Path) -> Attempt:
    root = _video_workspace(folder)
    address = f"tcp://127.0.0.1:{_free_port()}"
    options = ("--scheduler", address, "--scheduler-timeout", "1")
    return _cli("measure", root, *options, store=root)


def _store_case(action: Callable[[AnnotationStore], object]) -> Callable[[Path], Attempt]:
    def build(folder: Path) -> Attempt:
        return _store_call(registry_workspace(folder), action)

    return build


# --- the crash list (issue 14): inputs real benchmarks have ----------------------------------


def _non_utf8_name(videos: Path) -> None:
    """A real clip in ``videos`` whose file name is Latin-1 bytes, not UTF-8."""
    write_clip(videos / "renamed.mp4")
    os.rename(os.fsencode(videos / "renamed.mp4"), os.fsencode(videos) + b"/Arson\xe9002.mp4")


def _scan_non_utf8_name(folder: Path) -> Attempt:
    root = _video_workspace(folder)
    _non_utf8_name(folder / "videos")
    return _cli("scan", root, store=root)


def _init_non_utf8_name(folder: Path) -> Attempt:
    write_clip(folder / "videos" / f"{GOOD}.mp4")
    _non_utf8_name(folder / "videos")
    return _cli("init", folder / "ws", "--videos", folder / "videos")


def _audit_into_a_folder_of_other_files(folder: Path) -> Attempt:
    root = registry_workspace(folder)
    (folder / "papers").mkdir()
    (folder / "papers" / "draft.tex").write_text("my paper\n", encoding="utf-8")
    gt = _ground_truth(folder, GT_LINES)
    args = ("audit", "--out", folder / "papers", "--gt", gt, "--workspace", root)
    return _cli(*args, store=root)


def _release_with_a_duplicated_key(folder: Path) -> Path:
    """A valid release whose first decision names its value twice (json.loads keeps the last)."""
    text = json.dumps(_release_data(folder))
    path = folder / "twice.json"
    path.write_text(text.replace('"value": "grayscale"', '"value": "color", "value": "grayscale"'))
    return path


def _models_file_with_a_duplicated_key(folder: Path) -> Attempt:
    attempt = _audit_case(None)(folder)
    models = folder / "models.json"
    models.write_text('[{"name": "m", "path": "scores.csv", "path": "other.csv"}]')
    return replace(attempt, argv=(*attempt.argv, "--models", str(models)))


def _init_with_value_ambiguous(folder: Path) -> Attempt:
    """``vadscene init`` with a catalogue whose factor 'color' has a value " Ambiguous"."""
    catalogue = load_catalogue().model_dump(mode="json")
    catalogue["factors"][0]["values"] = [*catalogue["factors"][0]["values"], " Ambiguous"]
    path = folder / "catalogue.yaml"
    path.write_text(yaml.safe_dump(catalogue, sort_keys=False), encoding="utf-8")
    (folder / "videos").mkdir()
    ws = folder / "ws"
    return _cli("init", ws, "--videos", folder / "videos", "--catalog", path, absent=ws)


def _audit_with(*options: str) -> Callable[[Path], Attempt]:
    """The ground-truth-only audit of :func:`_audit_case`, with more options."""

    def build(folder: Path) -> Attempt:
        attempt = _audit_case(None)(folder)
        return replace(attempt, argv=(*attempt.argv, *options))

    return build


def _thresholds_value(value: str) -> Callable[[Path], Attempt]:
    """``vadscene thresholds … --rule explicit --value VALUE`` on a measured workspace."""

    def build(folder: Path) -> Attempt:
        root = registry_workspace(folder)
        with Workspace.open(root) as workspace:
            for video, sharpness in ((GOOD, 80.0), (NORMAL, 20.0)):
                workspace.store.record_measurement(
                    video,
                    "sharpness",
                    Measurement(
                        value=sharpness,
                        decoder="opencv",
                        frames_read=25,
                        seconds=0.01,
                        measured_at=datetime(2026, 1, 2, tzinfo=UTC),
                    ),
                )
        args = ("thresholds", root, "resolution", "--rule", "explicit", "--value", value)
        return _cli(*args, store=root)

    return build


SCAN_REASONS = {
    "corrupt_video": "no decodable frame",
    "truncated_video": "truncated: file ends inside frame",
    "empty_file": "empty file",
    "non_video_file": "cannot open: Invalid data found when processing input",
}
MEASURE_REASONS = {
    "corrupt_video": "no decodable frame",
    "truncated_video": "truncated or damaged: video packet",
    "empty_file": "empty file",
    "non_video_file": "cannot open: Invalid data found when processing input",
}

CASES: tuple[BadInputCase, ...] = (
    *(
        BadInputCase(
            f"scan_{kind}",
            _scan_case(kind),
            ("1 files could not be registered", f"{BAD}.mp4: {reason}"),
            exit_code=0,
            stream="stdout",
            may_change=frozenset({"unreadable_files"}),
        )
        for kind, reason in SCAN_REASONS.items()
    ),
    *(
        BadInputCase(
            f"measure_{kind}",
            _measure_case(kind),
            (f"failed {GOOD}: {reason}",),
            may_change=frozenset({"measurement_failures"}),
        )
        for kind, reason in MEASURE_REASONS.items()
    ),
    BadInputCase(
        "measure_vanished_video",
        _measure_case(None),
        (f"failed {GOOD}: file not found",),
        may_change=frozenset({"measurement_failures"}),
    ),
    BadInputCase(
        "audit_nan_score",
        _audit_case(_with_score(3, GOOD, "nan")),
        ("{tmp}/scores.csv: video Abuse001_x264: score nan at frame 3 is not finite",),
    ),
    BadInputCase(
        "audit_inf_score",
        _audit_case(_with_score(40, NORMAL, "inf")),
        (f"{{tmp}}/scores.csv: video {NORMAL}: score inf at frame 10 is not finite",),
    ),
    BadInputCase(
        "audit_scores_shorter_than_ground_truth",
        _audit_case(lambda: _good_scores()[:-2]),
        (f"{{tmp}}/scores.csv: video {NORMAL}: 23 scores but the ground truth has 25 frames",),
    ),
    BadInputCase(
        "audit_unknown_video_in_scores",
        _audit_case(lambda: [*_good_scores(), ("Stealing009_x264", "0.3")]),
        (
            "{tmp}/scores.csv: scores do not cover the ground truth ({tmp}/gt.txt)",
            "1 videos not in the ground truth: Stealing009_x264",
        ),
    ),
    BadInputCase(
        "audit_duplicate_video_in_ground_truth",
        _audit_case(None, [GT_LINES[0], GT_LINES[0]]),
        ("{tmp}/gt.txt:2: the video of this line is listed twice (first on line 1)",),
    ),
    BadInputCase(
        "audit_interval_past_video_end",
        _audit_case(None, [f"{GOOD} Abuse 5 60", GT_LINES[1]]),
        (
            f"{{tmp}}/gt.txt:1: video {GOOD}: interval [5, 60] (exclusive end) ends past the "
            "video's end: the video has 30 frames",
            "overrun 30 > tolerance 16",
        ),
    ),
    BadInputCase(
        "validate_duplicate_video_in_release",
        _validate_case("dup.json", _duplicate_video),
        (
            "{tmp}/dup.json: invalid release",
            f"$.videos[2].video_id: duplicate video id '{GOOD}' (also $.videos[0])",
        ),
    ),
    BadInputCase(
        "import_duplicate_video_in_release",
        _import_case("dup.json", _duplicate_video, into="existing"),
        ("{tmp}/dup.json: invalid release", f"duplicate video id '{GOOD}'"),
    ),
    BadInputCase(
        "validate_malformed_json",
        lambda folder: _cli("validate", _malformed(folder)),
        ("{tmp}/cut.json: not valid JSON",),
    ),
    BadInputCase(
        "import_malformed_json",
        lambda folder: _cli(
            "import", registry_workspace(folder), _malformed(folder), store=folder / "ws"
        ),
        ("{tmp}/cut.json: not valid JSON",),
    ),
    BadInputCase(
        "validate_wrong_schema_version",
        _validate_case("v2.json", _schema_version_2),
        (
            "{tmp}/v2.json: invalid release",
            "$.schema_version: unsupported release schema version 2 (this vadscene reads "
            "version 1)",
        ),
    ),
    BadInputCase(
        "import_wrong_schema_version_into_new_folder",
        _import_case("v2.json", _schema_version_2, into="new"),
        ("{tmp}/v2.json: invalid release", "unsupported release schema version 2"),
    ),
    BadInputCase(
        "import_release_with_other_catalogue",
        _import_case("other.json", _drop_last_factor, into="existing"),
        (
            "{tmp}/other.json: its catalogue differs from the workspace's ({tmp}/ws)",
            "factors only in the workspace: road",
        ),
    ),
    BadInputCase(
        "import_unregistered_videos",
        lambda folder: _cli(
            "import",
            registry_workspace(folder, {GOOD: 30}, with_video_folder=True),
            _write_json(folder / "r.json", _release_data(folder)),
            store=folder / "ws",
        ),
        ("{tmp}/r.json: 1 released videos are not registered in {tmp}/ws", NORMAL),
    ),
    BadInputCase(
        "validate_release_not_found",
        lambda folder: _cli("validate", folder / "none.json"),
        ("{tmp}/none.json: release file not found",),
    ),
    BadInputCase(
        "import_release_not_found",
        lambda folder: _cli(
            "import", registry_workspace(folder), folder / "none.json", store=folder / "ws"
        ),
        ("{tmp}/none.json: release file not found",),
    ),
    BadInputCase(
        "init_catalogue_contrast_names_unknown_value",
        _init_with_catalogue,
        (
            "{tmp}/catalogue.yaml: invalid catalogue",
            "factor 'color': $.factors[0]: contrast 'color vs sepia' names unknown value "
            "'sepia' (values: color, grayscale)",
        ),
    ),
    BadInputCase(
        "init_unknown_category_rule",
        _init_with("--category-rule", "prefix"),
        ("unknown --category-rule 'prefix' (expected one of: ucf-crime, folder, regex, none)",),
    ),
    BadInputCase(
        "init_regex_rule_without_regex",
        _init_with("--category-rule", "regex"),
        ("--category-rule regex needs --category-regex with a group 'category'",),
    ),
    BadInputCase(
        "export_workspace_without_videos",
        _export_empty,
        ("{tmp}/ws: the workspace has no videos; nothing to release",),
    ),
    BadInputCase(
        "store_unknown_factor",
        _store_case(lambda s: s.record_decision(GOOD, "colour", "color", annotator="ana")),
        (f"video '{GOOD}': unknown factor 'colour' (catalogue 'ucf-crime' has: color,",),
        exit_code=None,
    ),
    BadInputCase(
        "store_value_not_in_factor",
        _store_case(lambda s: s.record_decision(GOOD, "color", "sepia", annotator="ana")),
        (
            f"video '{GOOD}', factor 'color': value 'sepia' is not allowed (expected one of: "
            "color, grayscale, ambiguous)",
        ),
        exit_code=None,
    ),
    BadInputCase(
        "store_unknown_video",
        _store_case(lambda s: s.record_decision("Nobody999", "color", "color", annotator="ana")),
        ("unknown video 'Nobody999' (the store at {tmp}/ws/annotations.db registers 2 videos)",),
        exit_code=None,
    ),
    BadInputCase(
        "store_unknown_mark",
        _store_case(lambda s: s.set_mark(GOOD, "star", True, annotator="ana")),
        ("unknown mark 'star' (expected one of: flag, skip, note)",),
        exit_code=None,
    ),
    BadInputCase(
        "init_invalid_category_regex",
        _init_with("--category-rule", "regex", "--category-regex", "(?P<category"),
        ("--category-regex", "not a valid regular expression"),
    ),
    BadInputCase(
        "init_category_regex_without_category_group",
        _init_with("--category-rule", "regex", "--category-regex", "^[A-Z][a-z]+"),
        ("--category-regex", "group 'category'"),
    ),
    BadInputCase(
        "init_workspace_path_is_a_file",
        _init_on_a_file,
        ("{tmp}/taken is a file; a workspace is a folder",),
    ),
    BadInputCase(
        "export_out_is_a_folder",
        _export_into_a_folder,
        ("{tmp}/releases is a folder; give a file name",),
    ),
    BadInputCase(
        "audit_out_is_a_file",
        _audit_report_on_a_file,
        ("cannot write the audit report there, {tmp}/taken is a file",),
    ),
    BadInputCase(
        "validate_deeply_nested_json",
        _deep_json,
        ("{tmp}/deep.json: JSON nested too deeply to read",),
    ),
    BadInputCase(
        "import_blank_annotator_into_new_folder",
        _import_case("blank.json", _blank_annotator, into="new"),
        ("{tmp}/blank.json: invalid release", "$.videos[0].factors.color.decisions[0].annotator"),
    ),
    BadInputCase(
        "import_nan_measurement_into_new_folder",
        _import_case("nan.json", _nan_measurement, into="new"),
        ("{tmp}/nan.json: invalid release", "$.videos[0].measurements.sharpness.value"),
    ),
    BadInputCase(
        "import_frame_count_beyond_64_bits_into_new_folder",
        _import_case("huge.json", _huge_frame_count, into="new"),
        ("{tmp}/huge.json: invalid release", "$.videos[0].num_frames"),
    ),
    BadInputCase(
        "export_without_out_option",
        lambda folder: _cli("export", registry_workspace(folder), store=folder / "ws"),
        ("vadscene export: Missing option '--out'", "(see 'vadscene export --help')"),
        exit_code=2,
    ),
    BadInputCase(
        "cli_unknown_command",
        lambda folder: _cli(
            "exprot",
            registry_workspace(folder),
            "--out",
            folder / "r.json",
            absent=folder / "r.json",
        ),
        ("vadscene: No such command 'exprot'", "(see 'vadscene --help')"),
        exit_code=2,
    ),
    BadInputCase(
        "measure_unknown_option",
        lambda folder: _cli(
            "measure", root := registry_workspace(folder), "--worker", "1", store=root
        ),
        ("vadscene measure: No such option: --worker (Possible options: --workers)",),
        exit_code=2,
    ),
    BadInputCase(
        "audit_bootstrap_not_an_integer",
        _audit_with("--bootstrap", "abc"),
        ("vadscene audit: Invalid value for '--bootstrap'", "valid integer", "(got 'abc')"),
        exit_code=2,
    ),
    BadInputCase(
        "labelstudio_import_export_is_a_folder",
        lambda folder: _cli(
            "labelstudio-import",
            root := registry_workspace(folder),
            _taken_by_a_folder(folder),
            store=root,
        ),
        ("error: {tmp}/export.json: is a folder; expected a file",),
    ),
    BadInputCase(
        "measure_unreachable_scheduler",
        _unreachable_scheduler,
        (
            "--scheduler tcp://127.0.0.1:",
            "cannot connect to the Dask scheduler within 1 s",
            "expected a running scheduler at an address like tcp://host:8786",
        ),
    ),
    # --- the crash list (issue 14) ---
    BadInputCase(
        "scan_non_utf8_file_name",
        _scan_non_utf8_name,
        ("1 files could not be registered", "Arson\\xe9002.mp4: file name is not valid UTF-8"),
        exit_code=0,
        stream="stdout",
        may_change=frozenset({"unreadable_files"}),
    ),
    BadInputCase(
        "init_non_utf8_file_name",
        _init_non_utf8_name,
        (
            "1 videos registered",
            "1 files could not be registered",
            "Arson\\xe9002.mp4: file name is not valid UTF-8",
        ),
        exit_code=0,
        stream="stdout",
    ),
    BadInputCase(
        "audit_every_frame_anomalous",
        _audit_case(None, [f"{GOOD} Abuse 0 30", f"{NORMAL} Normal 0 25"]),
        (
            "{tmp}/gt.txt: all 55 frames of the 2 videos are anomalous; AUROC compares "
            "anomalous with normal frames",
        ),
    ),
    BadInputCase(
        "audit_no_frame_anomalous",
        _audit_case(_good_scores, [f"{GOOD} Abuse -1 -1", GT_LINES[1]]),
        ("{tmp}/gt.txt: none of the 55 frames of the 2 videos is anomalous",),
    ),
    BadInputCase(
        "audit_frame_count_of_ten_to_the_fourteen",
        _audit_case(None, [f"{GOOD} 100000000000000 Abuse 5 12", f"{NORMAL} 25 Normal -1 -1"]),
        (
            "{tmp}/gt.txt: the ground truth's 2 videos hold 100,000,000,000,025 frames in all "
            f"(video {GOOD} alone 100,000,000,000,000",
            "GiB of memory; this machine has",
        ),
    ),
    BadInputCase(
        "audit_negative_seed",
        _audit_with("--seed", "-1"),
        ("the bootstrap seed must be an integer ≥ 0, got -1",),
    ),
    BadInputCase(
        "demo_negative_seed",
        lambda folder: _cli("demo", folder / "demo", "--seed", "-1", absent=folder / "demo"),
        ("the demo seed must be an integer ≥ 0, got -1",),
    ),
    BadInputCase(
        "thresholds_nan_value",
        _thresholds_value("nan"),
        ("rule 'explicit': thresholds must be finite numbers, got (nan,)",),
    ),
    BadInputCase(
        "validate_duplicated_json_key",
        lambda folder: _cli("validate", _release_with_a_duplicated_key(folder)),
        (
            "{tmp}/twice.json: not valid JSON (a key appears twice in one object (the object "
            "starting at line 1 column ",
        ),
    ),
    BadInputCase(
        "import_duplicated_json_key",
        lambda folder: _cli(
            "import",
            registry_workspace(folder),
            _release_with_a_duplicated_key(folder),
            store=folder / "ws",
        ),
        (
            "{tmp}/twice.json: not valid JSON (a key appears twice in one object (the object "
            "starting at line 1 column ",
        ),
    ),
    BadInputCase(
        "audit_models_file_duplicated_json_key",
        _models_file_with_a_duplicated_key,
        (
            "{tmp}/models.json: not valid JSON (a key appears twice in one object (the object "
            "starting at line 1 column 2)",
        ),
    ),
    BadInputCase(
        "init_catalogue_value_spelling_ambiguous",
        _init_with_value_ambiguous,
        (
            "{tmp}/catalogue.yaml: invalid catalogue",
            "factor 'color': $.factors[0]: ' Ambiguous' is reserved (every factor admits "
            "'ambiguous', in any case or spacing)",
        ),
    ),
    BadInputCase(
        "audit_report_into_a_folder_of_other_files",
        _audit_into_a_folder_of_other_files,
        ("{tmp}/papers: holds files that are not an audit report (e.g. draft.tex)",),
    ),
)
"""Every bad-input case; ``tests/test_bad_input.py`` runs each one."""


@dataclass
class CaseOutcome:
    """What one case did, and each promise it broke (``problems``; empty = passed)."""

    case: BadInputCase
    exit_code: int | None
    message: str
    problems: list[str]

    @property
    def passed(self) -> bool:
        return not self.problems


def run_case(case: BadInputCase, folder: Path) -> CaseOutcome:
    """Build the case's input in ``folder`` (created), run it, and check every promise."""
    folder.mkdir(parents=True, exist_ok=True)
    attempt = case.build(folder)
    before = snapshot_store(attempt.store / STORE_NAME) if attempt.store else None
    problems: list[str] = []
    exit_code: int | None = None
    if attempt.call is not None:
        try:
            attempt.call()
        except VadsceneError as exc:
            message = str(exc)
        except Exception as exc:
            message = traceback.format_exc()
            problems.append(f"raised {type(exc).__name__} instead of a VadsceneError: {exc}")
        else:
            message = ""
            problems.append("no error was raised")
    else:
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                exit_code = run(list(attempt.argv))
            except Exception as exc:
                traceback.print_exc()
                problems.append(f"raw {type(exc).__name__} escaped the CLI: {exc}")
        message = (stdout if case.stream == "stdout" else stderr).getvalue()
        if "Traceback" in stdout.getvalue() + stderr.getvalue():
            problems.append("a traceback was printed")
        if exit_code != case.exit_code:
            problems.append(f"exit code {exit_code}, expected {case.exit_code}")
    for fragment in case.expected:
        wanted = fragment.format(tmp=folder)
        if wanted not in message:
            problems.append(f"message lacks {wanted!r}")
    if before is not None and attempt.store is not None:
        after = snapshot_store(attempt.store / STORE_NAME)
        problems += store_changes(before, after, may_change=case.may_change)
        if case.may_change and all(before.tables[t] == after.tables[t] for t in case.may_change):
            problems.append(f"nothing was recorded in {', '.join(sorted(case.may_change))}")
    if attempt.absent is not None and attempt.absent.exists():
        problems.append(f"{attempt.absent} was created by a refused command")
    return CaseOutcome(case, exit_code, message, problems)


# --- an annotated workspace ---------------------------------------------------------------

ROAD = "RoadAccidents004_x264"
SHARPNESS = {GOOD: 80.0, BAD: 20.0, NORMAL: 55.0, ROAD: 10.0}
"""Each example video's sharpness: GOOD and NORMAL get the resolution pole high, BAD and ROAD
low (the median rule's threshold, 37.5, lies between)."""


def annotate_example(store: AnnotationStore, *, full: bool = False) -> None:
    """Record decisions by several annotators, sharpness with the auto resolution poles it
    gives, an override and marks: the release of the fuzzing :func:`template`, and (``full``)
    the test suite's ``annotated`` workspace (``tests/conftest.py``).

    On ``GOOD``, ``BAD`` and ``NORMAL`` (the template's release, which the README's fuzz
    figures and ``tests/release/test_fuzz_release.py`` rest on: keep it as it is):

    - GOOD: ana and ben agree (color: grayscale);
    - BAD: ana and ben disagree (color); ana overrides the auto resolution pole (low to high);
      ben flags the video, with a note;
    - NORMAL: ana says few people, carla decides many (consensus); ben finds the setting
      ambiguous, with a note;
    - each: a sharpness measurement (:data:`SHARPNESS`), its auto pole, the median rule.

    ``full`` adds (the store must register ``ROAD`` too):

    - GOOD: a second decision of ana's (crowd: few);
    - NORMAL: ben says many people; carla decides a factor on her own (activity: single), so
      she has a manual decision beside her consensus one; ana names the location;
    - ROAD: a sharpness measurement and its auto pole (low); ben decides the elevation and
      clears it again, so no human decision stands on ROAD.
    """
    store.record_decision(GOOD, "color", "grayscale", annotator="ana")
    store.record_decision(GOOD, "color", "grayscale", annotator="ben")
    store.record_decision(BAD, "color", "color", annotator="ana")
    store.record_decision(BAD, "color", "grayscale", annotator="ben")
    store.record_decision(NORMAL, "crowd", "few", annotator="ana")
    store.record_decision(NORMAL, "crowd", "many", annotator="carla", source="consensus")
    store.record_decision(NORMAL, "setting", AMBIGUOUS, annotator="ben", note="tunnel")
    for video_id in (GOOD, BAD, NORMAL, ROAD) if full else (GOOD, BAD, NORMAL):
        sharpness = SHARPNESS[video_id]
        store.record_measurement(
            video_id,
            "sharpness",
            Measurement(
                value=sharpness,
                params={"stride": 1},
                decoder="opencv",
                frames_read=30,
                seconds=0.01,
                measured_at=datetime(2026, 1, 2, tzinfo=UTC),
            ),
        )
        pole = "high" if sharpness > 37.5 else "low"
        store.record_decision(video_id, "resolution", pole, annotator=AUTO_ANNOTATOR, source="auto")
    store.set_threshold("resolution", "sharpness", "median", [37.5])
    store.record_decision(BAD, "resolution", "high", annotator="ana")  # an override
    store.set_mark(BAD, "flag", True, annotator="ben")
    store.set_mark(BAD, "note", "two cameras?", annotator="ben")
    if full:
        store.record_decision(GOOD, "crowd", "few", annotator="ana")
        store.record_decision(NORMAL, "crowd", "many", annotator="ben")
        store.record_decision(NORMAL, "activity", "single", annotator="carla")
        store.record_decision(NORMAL, "location", "fuel-station", annotator="ana")
        store.record_decision(ROAD, "elevation", "elevated", annotator="ben")
        store.record_decision(ROAD, "elevation", None, annotator="ben")  # cleared


# --- release fuzzing ----------------------------------------------------------------------

SQLITE_INT = (-(2**63), 2**63 - 1)
HUMANS = ("ana", "ben", "carla")


Target = Literal["new", "merge", "merge-with-videos"]
TARGETS: tuple[Target, ...] = ("new", "merge", "merge-with-videos")
"""Where a generated release is imported: a new folder (:func:`workspace_from_release`), or
merged (:func:`import_release`) into a copy of the template's workspace without video files
(which registers new videos) or with a video folder (which refuses unregistered videos)."""


@dataclass(frozen=True)
class ReleaseInput:
    """One generated import: release JSON, whether it was built valid, and where it goes."""

    data: Any
    valid: bool
    target: Target


@dataclass(frozen=True)
class Template:
    """The release every mutation starts from, and closed workspaces holding it (by target)."""

    data: dict[str, Any]
    catalogue: Catalogue
    workspaces: dict[str, Path]


@cache
def template() -> Template:
    """Built once per process (in a temporary folder removed at exit)."""
    folder = Path(tempfile.mkdtemp(prefix="vadscene-template-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    root = registry_workspace(folder, {GOOD: 30, BAD: 20, NORMAL: 25}, name="source")
    with Workspace.open(root) as workspace:
        annotate_example(workspace.store)
        release = build_release(workspace)
    with workspace_from_release(release, folder / "merge"):
        pass
    ids = {v.video_id: v.num_frames for v in release.videos}
    root = registry_workspace(folder, ids, with_video_folder=True, name="merge-with-videos")
    with Workspace.open(root) as workspace:
        import_release(release, workspace)
    workspaces = {target: folder / target for target in TARGETS[1:]}
    return Template(json.loads(release_json(release)), release.catalogue, workspaces)


# Strategies for the pieces of a release. Texts are any unicode Hypothesis draws (no lone
# surrogates: JSON text read as UTF-8 cannot carry them, and pydantic refuses them).

_texts = st.text(max_size=12)
_names = st.sampled_from(HUMANS) | st.text(min_size=1, max_size=8).filter(
    lambda s: s.strip() != "" and s != AUTO_ANNOTATOR
)
_finite = st.floats(allow_nan=False, allow_infinity=False)
_non_negative = st.floats(min_value=0, allow_infinity=False)
_counts = st.integers(0, SQLITE_INT[1])
_zones = st.builds(
    timezone,
    st.timedeltas(
        min_value=timedelta(hours=-23, minutes=-59), max_value=timedelta(hours=23, minutes=59)
    ),
)
_aware = st.datetimes(timezones=st.just(UTC) | _zones)
_timestamps = (_aware | st.datetimes()).map(datetime.isoformat)
"""Timestamp text, with and without a time zone."""
_video_ids = st.builds(
    "{}{:03d}_x264".format,
    st.sampled_from(["Abuse", "Arson", "Normal_Videos_"]),
    st.integers(0, 999),
) | st.text(min_size=1, max_size=10)


@st.composite
def _video_infos(draw: st.DrawFn, video_id: str) -> dict[str, Any]:
    return {
        "video_id": video_id,
        "category": draw(st.text(min_size=1, max_size=10)),
        "split": draw(st.none() | _texts),
        "path": draw(st.none() | _texts),
        "num_frames": draw(_counts),
        "fps": draw(_non_negative),
        "duration_s": draw(_non_negative),
        "width": draw(_counts),
        "height": draw(_counts),
        "codec": draw(_texts),
        "size_bytes": draw(_counts),
        "fingerprint": draw(_texts),
    }


@st.composite
def _decisions(draw: st.DrawFn, factor: Factor, humans: list[str]) -> list[FactorDecision]:
    """Current decisions on one factor: distinct annotators, sources the store keeps as given.

    A manual factor takes ``manual`` and ``consensus``; an auto factor an ``auto`` pole and
    humans' ``override`` and ``consensus`` (validation refuses ``manual`` there).
    """
    values = st.sampled_from([*factor.values, AMBIGUOUS])
    human_sources = (
        ["manual", "consensus"] if factor.source == "manual" else ["override", "consensus"]
    )
    auto = factor.source == "auto"
    who = draw(st.lists(st.sampled_from(humans), unique=True, min_size=0 if auto else 1))
    decisions = []
    for name in ([AUTO_ANNOTATOR] if auto and (not who or draw(st.booleans())) else []) + who:
        source = "auto" if name == AUTO_ANNOTATOR else draw(st.sampled_from(human_sources))
        replaced = source == "override" and draw(st.booleans())
        decisions.append(
            FactorDecision(
                annotator=name,
                value=draw(values),
                source=source,
                decided_at=draw(_aware),
                note=draw(st.none() | _texts),
                replaced_auto_value=draw(st.sampled_from(factor.values)) if replaced else None,
                replaced_measurement=draw(st.none() | _finite) if replaced else None,
            )
        )
    return decisions


_measurements = st.builds(
    Measurement,
    value=_finite,
    params=st.dictionaries(
        _texts, st.none() | st.booleans() | st.integers(*SQLITE_INT) | _finite | _texts, max_size=3
    ),
    decoder=_texts,
    frames_read=_counts,
    seconds=_non_negative,
    measured_at=_aware,
)


@st.composite
def _marks(draw: st.DrawFn, annotator: str) -> VideoMarks:
    """Marks that say something: a flag, a skip or a non-empty note."""
    flagged, skipped = draw(st.booleans()), draw(st.booleans())
    notes = st.text(min_size=1, max_size=12)
    note = draw(st.none() | notes if flagged or skipped else notes)
    return VideoMarks(annotator=annotator, flagged=flagged, skipped=skipped, note=note)


@st.composite
def valid_releases(draw: st.DrawFn, catalogue: Catalogue) -> dict[str, Any]:
    """A random release that is valid and canonical (as ``vadscene export`` writes them).

    Values follow from the decisions (:func:`resolve_assignment`), support from the values
    (:func:`pole_support`); videos are sorted by id, decisions by annotator; marks are one
    per annotator and say something; thresholds are one per auto factor, sorted.
    """
    humans = draw(st.lists(_names, min_size=1, max_size=3, unique=True))
    mode = draw(st.sampled_from(["consensus", "annotator"]))
    chosen = draw(st.sampled_from(humans)) if mode == "annotator" else None
    if chosen is not None:
        humans = [chosen]
    records = []
    for video_id in sorted(draw(st.lists(_video_ids, min_size=1, max_size=4, unique=True))):
        factors = draw(
            st.lists(st.sampled_from(catalogue.factors), unique_by=lambda f: f.key, max_size=3)
        )
        marks = [
            draw(_marks(name))
            for name in sorted(draw(st.lists(st.sampled_from(humans), unique=True)))
        ]
        records.append(
            VideoRecord(
                **draw(_video_infos(video_id)),
                factors={
                    f.key: resolve_assignment(draw(_decisions(f, humans)))
                    for f in catalogue.factors
                    if f in factors
                },
                measurements=draw(st.dictionaries(_texts, _measurements, max_size=2)),
                marks=tuple(marks),
            )
        )
    named = {d.annotator for r in records for a in r.factors.values() for d in a.decisions}
    annotators = sorted(
        (named | {m.annotator for r in records for m in r.marks}) - {AUTO_ANNOTATOR}
    )
    if chosen is not None and chosen not in annotators:
        first = records[0]
        records[0] = first.model_copy(
            update={"marks": (VideoMarks(annotator=chosen, flagged=True),)}
        )
        annotators = [chosen]
    thresholds = [
        AutoThreshold(
            factor=key,
            statistic=rule.statistic,
            rule=draw(st.sampled_from(["median", "terciles", "explicit"])),
            thresholds=tuple(draw(st.lists(_finite, max_size=2))),
            set_at=draw(_aware),
        )
        for key, rule in sorted((f.key, f.auto) for f in catalogue.factors if f.auto)
        if draw(st.booleans())
    ]
    release = Release(
        schema_version=1,
        dataset=draw(st.text(min_size=1, max_size=10)),
        created_at=draw(_aware),
        tool=ToolInfo(version=__version__),
        selection=Selection(mode=mode, annotator=chosen),
        catalogue=catalogue,
        annotators=tuple(annotators),
        thresholds=tuple(thresholds),
        videos=tuple(records),
        support=pole_support(catalogue, records),
    )
    return json.loads(release_json(release))


def _vocabulary(catalogue: Catalogue) -> list[Any]:
    """Words a release uses, so mutations often stay plausible (and get past the parser)."""
    words: list[Any] = [AMBIGUOUS, AUTO_ANNOTATOR, *HUMANS, GOOD, BAD, NORMAL, "", " "]
    words += ["manual", "auto", "override", "consensus", "annotator"]
    words += ["agreement", "single", "disagreement", "median", "terciles", "explicit"]
    words += ["2026-01-02T00:00:00Z", "2026-01-02T00:00:00", "2026-13-02T00:00:00Z", "yesterday"]
    words += [0, -1, 1, 2, 2**63, 0.5, -0.5, True, False, None, [], {}]
    for factor in catalogue.factors:
        words += [factor.key, *factor.values]
    return words


def _json_values() -> st.SearchStrategy[Any]:
    scalars = st.none() | st.booleans() | st.integers() | st.floats() | _texts
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_texts, inner, max_size=3),
        max_leaves=6,
    )


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every location inside a JSON value, as key/index tuples."""
    children = (
        node.items()
        if isinstance(node, dict)
        else enumerate(node)
        if isinstance(node, list)
        else ()
    )
    for key, child in children:
        yield (*prefix, key)
        yield from _paths(child, (*prefix, key))


MUTATIONS = ("delete", "replace", "retype", "duplicate", "swap", "extra_key")


@st.composite
def mutated(draw: st.DrawFn, base: Any, catalogue: Catalogue) -> Any:
    """``base`` with one to three random edits.

    Edits land anywhere, half of them inside ``videos``: delete a field or element; replace a
    value with a release word (a factor value, annotator, source, timestamp, number, ...) or
    random text; give it another JSON type; duplicate or swap list elements (duplicate
    videos, decisions, marks); add an unknown key. Rarely, the whole document is random JSON.
    """
    if draw(st.integers(0, 30)) == 0:
        return draw(_json_values())
    data = copy.deepcopy(base)
    words = st.sampled_from(_vocabulary(catalogue))
    for _ in range(draw(st.integers(1, 3))):
        paths = list(_paths(data))
        if not paths:
            break
        inside = [p for p in paths if p[0] == "videos"]
        path = draw(st.sampled_from(inside if inside and draw(st.booleans()) else paths))
        parent = data
        for key in path[:-1]:
            parent = parent[key]
        key, node = path[-1], parent[path[-1]]
        operation = draw(st.sampled_from(MUTATIONS))
        if operation == "delete":
            del parent[key]
        elif operation == "replace":
            parent[key] = draw(words | _texts | _timestamps | st.floats() | st.integers())
        elif operation == "retype":
            parent[key] = draw(_json_values())
        elif operation == "duplicate" and isinstance(node, list) and node:
            node.append(copy.deepcopy(draw(st.sampled_from(node))))
        elif operation == "swap" and isinstance(node, list) and len(node) > 1:
            i, j = draw(st.permutations(range(len(node))))[:2]
            node[i], node[j] = node[j], node[i]
        elif operation == "extra_key" and isinstance(node, dict):
            node[draw(_texts)] = draw(_json_values())
        else:
            parent[key] = draw(words)
    return data


def release_inputs() -> st.SearchStrategy[ReleaseInput]:
    """Valid random releases, and mutations of the template or of a valid random release."""
    base = template()
    valid = valid_releases(base.catalogue)
    targets = st.sampled_from(TARGETS)
    return st.builds(ReleaseInput, valid, st.just(True), targets) | st.builds(
        ReleaseInput,
        mutated(base.data, base.catalogue) | valid.flatmap(lambda d: mutated(d, base.catalogue)),
        st.just(False),
        targets,
    )


@dataclass
class ImportVerdict:
    """How one generated release fared: refused or imported (``problems``: the property broke)."""

    outcome: Literal["refused", "imported"]
    detail: str
    problems: list[str] = field(default_factory=list)


def _comparable(path: Path) -> dict[str, Any]:
    """A release file without what an export stamps anew: its time and the writing tool."""
    data = json.loads(path.read_text(encoding="utf-8"))
    data.pop("created_at", None)
    data.pop("tool", None)
    return data


def _reexport(root: Path, release: Release, scratch: Path) -> list[str]:
    """Re-open the workspace, export it as the release was selected, and compare."""
    out = scratch / "again.json"
    with Workspace.open(root) as workspace:
        again = build_release(workspace, annotator=release.selection.annotator)
    out.write_text(release_json(again), encoding="utf-8")  # as write_release, minus the schema
    found = []
    try:
        read_release(out)
    except VadsceneError as exc:
        found.append(f"the re-exported release is invalid: {exc}")
    expected = json.loads(release_json(release))
    expected.pop("created_at")
    expected.pop("tool")
    if _comparable(out) != expected:
        found.append("the re-exported release differs from the imported one")
    return found


def _check_merge(release: Release, root: Path) -> list[str]:
    """After a merge: every released decision is current unless the store holds a later one on
    its key (merges never go back in time), every mark is current; a second merge adds
    nothing."""
    with Workspace.open(root) as workspace:
        store = workspace.store
        current = {(d.video_id, d.factor, d.annotator): d for d in store.current_decisions()}
        marks = store.marks()
        found = []
        for video in release.videos:
            for key, assignment in video.factors.items():
                for d in assignment.decisions:
                    now = current.get((video.video_id, key, d.annotator))
                    released = (d.value, d.source, d.decided_at.isoformat(timespec="microseconds"))
                    if now is None or (
                        (now.value, now.source, now.decided_at) != released
                        and datetime.fromisoformat(now.decided_at) <= d.decided_at
                    ):
                        found.append(f"{video.video_id}/{key}/{d.annotator}: not current")
            for m in video.marks:
                released_marks = {"flag": m.flagged, "skip": m.skipped, "note": m.note}
                if marks.get((video.video_id, m.annotator)) != released_marks:
                    found.append(f"{video.video_id}: marks of {m.annotator} not current")
        again = import_release(release, workspace)
        if (again.videos_added, again.decisions_added, again.marks_set) != (0, 0, 0):
            found.append(f"importing the same release twice added {again}")
    return found


def _import(release: Release, target: Target, root: Path) -> None:
    if target == "new":
        workspace_from_release(release, root).close()
    else:
        with Workspace.open(root) as workspace:
            import_release(release, workspace)


def check_release_import(item: ReleaseInput, scratch: Path) -> ImportVerdict:
    """The property: refused with a :class:`VadsceneError` and nothing written, or imported
    and reproduced.

    Refused: a new folder must not exist afterwards, a merged-into store must be unchanged
    byte for byte; a release built valid must not be refused (except by a workspace over
    videos it does not have). Imported into a new folder: exporting again gives the same
    release (except ``created_at`` and ``tool``, which describe the export itself). Merged:
    every released decision and mark is current, and merging again adds nothing.
    """
    source = _write_json(scratch / "release.json", item.data)
    try:
        release = read_release(source)
    except VadsceneError as exc:
        problems = [f"a valid release was refused: {exc}"] if item.valid else []
        return ImportVerdict("refused", str(exc).splitlines()[-1][:120], problems)
    except Exception as exc:
        return ImportVerdict("refused", "raw", [f"read_release raised {type(exc).__name__}: {exc}"])
    root = scratch / "target"
    before = None
    if item.target != "new":
        shutil.copytree(template().workspaces[item.target], root)
        before = snapshot_store(root / STORE_NAME)
    try:
        _import(release, item.target, root)
    except VadsceneError as exc:
        verdict = ImportVerdict("refused", f"on import: {str(exc).splitlines()[0][:120]}")
        if item.valid and item.target != "merge-with-videos":
            verdict.problems.append(f"a valid release was refused on import: {exc}")
    except Exception as exc:
        verdict = ImportVerdict("refused", "raw", [f"import raised {type(exc).__name__}: {exc}"])
    else:
        try:
            if item.target == "new":
                return ImportVerdict("imported", item.target, _reexport(root, release, scratch))
            return ImportVerdict("imported", item.target, _check_merge(release, root))
        except Exception as exc:
            problem = f"checking the import raised {type(exc).__name__}: {exc}"
            return ImportVerdict("imported", item.target, [problem])
    if item.target == "new" and root.exists():
        verdict.problems.append(f"the refused import left {root} behind")
    if before is not None:
        verdict.problems += store_changes(before, snapshot_store(root / STORE_NAME))
    return verdict


FUZZ_SETTINGS = settings(
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
"""Examples are whole imports (slow for a unit test); no example database is kept on disk."""


@dataclass
class FuzzTally:
    """Generated releases by outcome: refused, imported, or failed (the property)."""

    examples: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)

    def add(self, verdict: ImportVerdict) -> None:
        self.examples += 1
        outcome = "failed" if verdict.problems else verdict.outcome
        self.outcomes[outcome] = self.outcomes.get(outcome, 0) + 1
        if verdict.problems:
            self.failures.append(f"{verdict.detail}: {'; '.join(verdict.problems)}")


def fuzz_release_imports(examples: int) -> FuzzTally:
    """Run the import property on ``examples`` generated releases (deterministically)."""
    tally = FuzzTally()

    @settings(FUZZ_SETTINGS, max_examples=examples, derandomize=True)
    @given(release_inputs())
    def one(item: ReleaseInput) -> None:
        with tempfile.TemporaryDirectory() as scratch:
            tally.add(check_release_import(item, Path(scratch)))

    one()
    return tally


# --- concurrent writers -------------------------------------------------------------------


def _write_decisions(
    path: str, annotator: str, catalogue_json: str, count: int | None, acks: Any = None
) -> None:
    """One writer process: ``count`` decisions (None: until killed), each note numbering it;
    with ``acks`` (a pipe end), each decision's number is sent once it is committed."""
    catalogue = Catalogue.model_validate_json(catalogue_json)
    factors = [f for f in catalogue.factors if f.source == "manual"]
    with AnnotationStore(path, catalogue) as store:
        for i in range(count) if count is not None else itertools.count():
            factor = factors[i % len(factors)]
            store.record_decision(
                (GOOD, NORMAL)[i % 2],
                factor.key,
                factor.values[i % 2],
                annotator=annotator,
                note=f"{annotator}-{i}",
            )
            if acks is not None:
                acks.send(i)


def concurrent_writers_check(decisions_per_writer: int) -> int:
    """Two processes write into one store at once; returns the decisions found intact.

    Intact: present in the log, in its writer's order, with the store's integrity check ok.
    """
    catalogue = load_catalogue()
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / STORE_NAME
        with AnnotationStore(path, catalogue) as store:
            store.register_videos([_video_info(GOOD, 30), _video_info(NORMAL, 25)])
        context = multiprocessing.get_context("spawn")
        writers = [
            context.Process(
                target=_write_decisions,
                args=(str(path), name, catalogue.model_dump_json(), decisions_per_writer),
            )
            for name in ("ana", "ben")
        ]
        for writer in writers:
            writer.start()
        for writer in writers:
            writer.join(timeout=600)
        with AnnotationStore(path, catalogue) as store:
            if store.integrity_check() != "ok":
                return 0
            log = store.decision_log()
    intact = 0
    for name in ("ana", "ben"):
        notes = [d.note for d in log if d.annotator == name]
        if notes == [f"{name}-{i}" for i in range(decisions_per_writer)]:
            intact += len(notes)
    return intact


def crash_check(kills: int) -> tuple[int, int]:
    """SIGKILL a writer process mid-stream ``kills`` times, each after a different number of
    acknowledged decisions; returns (decisions acknowledged, of those found after the kill).

    Found: in the log in the writer's order, with the store passing its integrity check (the
    test suite's browser version of this is ``tests/store/test_durability.py``).
    """
    catalogue = load_catalogue()
    context = multiprocessing.get_context("spawn")
    acknowledged = found = 0
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / STORE_NAME
        with AnnotationStore(path, catalogue) as store:
            store.register_videos([_video_info(GOOD, 30), _video_info(NORMAL, 25)])
        for kill in range(kills):
            annotator = f"crash-{kill}"
            receiving, sending = context.Pipe(duplex=False)
            writer = context.Process(
                target=_write_decisions,
                args=(str(path), annotator, catalogue.model_dump_json(), None, sending),
            )
            writer.start()
            sending.close()
            acked = []
            while len(acked) < 10 + 13 * kill and receiving.poll(60):
                acked.append(receiving.recv())
            os.kill(writer.pid, signal.SIGKILL)
            writer.join()
            with contextlib.suppress(EOFError, OSError):
                while receiving.poll(0):  # sent before the kill: acknowledged too
                    acked.append(receiving.recv())
            receiving.close()
            with AnnotationStore(path, catalogue) as store:
                intact = store.integrity_check() == "ok"
                notes = [d.note for d in store.decision_log(annotator=annotator)]
            acknowledged += len(acked)
            if intact and notes[: len(acked)] == [f"{annotator}-{i}" for i in acked]:
                found += len(acked)
    return acknowledged, found


# --- the figures --------------------------------------------------------------------------


def reliability_figures(
    *,
    cases: tuple[BadInputCase, ...] = CASES,
    fuzz_examples: int = 1000,
    decisions_per_writer: int = 500,
    kills: int = 5,
) -> dict[str, int]:
    """Run every check at a small scale and count what each did."""
    with tempfile.TemporaryDirectory() as scratch:
        outcomes = [run_case(case, Path(scratch) / case.name) for case in cases]
    tally = fuzz_release_imports(fuzz_examples)
    acknowledged, found = crash_check(kills)
    return {
        "bad_input_cases": len(outcomes),
        "bad_input_passed": sum(o.passed for o in outcomes),
        "bad_input_failures": sum(not o.passed for o in outcomes),
        "fuzz_examples": tally.examples,
        "fuzz_refused": tally.outcomes.get("refused", 0),
        "fuzz_imported": tally.outcomes.get("imported", 0),
        "fuzz_failures": tally.outcomes.get("failed", 0),
        "concurrent_decisions_written": 2 * decisions_per_writer,
        "concurrent_decisions_intact": concurrent_writers_check(decisions_per_writer),
        "crash_kills": kills,
        "crash_decisions_acknowledged": acknowledged,
        "crash_decisions_found": found,
    }
