"""What the Annotate page says about a real clip (AppTest, reading what the page sends its
surface to draw): the ground truth's category, and that "resolution" is measured sharpness."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from helpers import ABUSE, write_video
from streamlit.testing.v1 import AppTest

from vadscene.core.paths import app_entry_point
from vadscene.core.records import Measurement
from vadscene.measure.thresholds import apply_rule
from vadscene.store.workspace import GroundTruthRef, Workspace

REAL_CLIP = "holmesvad_Fighting033_x264_570_841"
"""A real UCF-Crime clip's name (realdata/videos): its name yields no category."""


def _surface(root: Path, monkeypatch: pytest.MonkeyPatch, video: str) -> dict:
    """The data the Annotate page sends its surface for ``video``: what the surface draws."""
    monkeypatch.setenv("VADSCENE_WORKSPACE", str(root))
    app = AppTest.from_file(str(app_entry_point()), default_timeout=60)
    app.query_params["annotator"] = "ana"
    app.query_params["video"] = video
    app.run()
    assert not app.exception
    assert not app.markdown  # the surface draws everything: no stray text above it
    [surface] = app.get("bidi_component")
    return json.loads(surface.proto.json)


def test_a_real_clip_shows_the_ground_truths_category(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    videos = tmp_path / "videos"
    write_video(videos / f"{REAL_CLIP}.mp4", "libx264", frames=20)
    write_video(videos / "vtest_lamminhthien.mp4", "libx264", frames=20)
    gt = tmp_path / "Temporal_Anomaly_Annotation.txt"
    gt.write_text(f"{REAL_CLIP}.mp4  Fighting  3  9  -1  -1\n")
    with Workspace.create(
        tmp_path / "ws",
        video_root=videos,
        ground_truth=GroundTruthRef(path=str(gt), format="ucf-crime"),
    ) as workspace:
        workspace.scan()
    data = _surface(tmp_path / "ws", monkeypatch, REAL_CLIP)
    assert data["videos"][REAL_CLIP]["category"] == "Fighting"  # was "Unknown"
    assert data["videos"]["vtest_lamminhthien"]["category"] == "Unknown"  # not in the truth


def test_the_resolution_row_says_it_is_measured_sharpness(
    annotated: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ``annotated`` workspace: ABUSE's sharpness is 80, the median rule's threshold 37.5.
    ABUSE's motion is recorded here as 2.5, with an explicit threshold of 3."""
    store = annotated.store
    store.record_measurement(
        ABUSE,
        "motion",
        Measurement(
            value=2.5,
            params={"stride": 1},
            decoder="opencv",
            frames_read=29,
            seconds=0.01,
            measured_at=datetime(2026, 1, 2, tzinfo=UTC),
        ),
    )
    apply_rule(store, "motion", "explicit", (3.0,))
    data = _surface(annotated.root, monkeypatch, ABUSE)
    measured = data["videos"][ABUSE]["measured"]
    assert measured["resolution"] == "Laplacian-variance sharpness 80 (median split at 37.5)"
    assert measured["motion"] == "mean frame-difference motion 2.5 (threshold at 3)"
    assert measured["color"] is None  # a manual factor: nothing measured beside it
    rules = {f["key"]: f["rule"] for f in data["factors"]}
    assert rules["resolution"] == "auto: Laplacian-variance sharpness, median threshold 37.5"
