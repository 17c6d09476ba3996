"""The example videos, workspaces and annotation the harnesses and tests build on.

Four videos in UCF-Crime's naming: ``GOOD`` and ``BAD`` (anomalous), ``NORMAL`` and ``ROAD``.
:func:`registry_workspace` registers videos without files; :func:`video_workspace` scans one
real clip; :func:`annotate_example` records the decisions, measurements and marks of the
fuzzing template (:mod:`support.release_fuzz`) and of the suite's ``annotated`` workspace.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from support.clips import write_clip
from vadscene.benchmark.video_lists import category_from_video_id
from vadscene.core.catalogue import AMBIGUOUS
from vadscene.core.records import AUTO_ANNOTATOR, Measurement, VideoInfo
from vadscene.release.releases import build_release, release_json
from vadscene.store.database import AnnotationStore
from vadscene.store.workspace import Workspace

GOOD, BAD = "Abuse001_x264", "Arson002_x264"
NORMAL = "Normal_Videos_003_x264"
ROAD = "RoadAccidents004_x264"


def video_workspace(folder: Path) -> Path:
    """A workspace over one real clip (video ``GOOD``), scanned; returns its folder."""
    write_clip(folder / "videos" / f"{GOOD}.mp4")
    with Workspace.create(folder / "ws", video_root=folder / "videos") as workspace:
        workspace.scan()
    return folder / "ws"


def clip_info(video_id: str, frames: int) -> VideoInfo:
    """A registry entry for a 64×48 clip of ``frames`` frames that no test decodes."""
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
        workspace.store.register_videos(clip_info(v, n) for v, n in counts.items())
    return root


def release_data(folder: Path) -> dict[str, Any]:
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


def write_json(path: Path, data: Any) -> Path:
    """``data`` written to ``path`` as JSON; returns ``path``."""
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


SHARPNESS = {GOOD: 80.0, BAD: 20.0, NORMAL: 55.0, ROAD: 10.0}
"""Each example video's sharpness: GOOD and NORMAL get the resolution pole high, BAD and ROAD
low (the median rule's threshold, 37.5, lies between)."""


def annotate_example(store: AnnotationStore, *, full: bool = False) -> None:
    """Record decisions by several annotators, sharpness with the auto resolution poles it
    gives, an override and marks: the release of the fuzzing template
    (:func:`support.release_fuzz.template`), and (``full``) the test suite's ``annotated``
    workspace (``tests/conftest.py``).

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
