"""Ground truth checked for consistency: a Normal-category video with anomalous frames is an
error naming it (or, asked for, an anomalous video listed in the conventions); touching or
overlapping intervals are listed; the annotated segments are kept as written."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers import write_video

from vadscene.audit import run_audit
from vadscene.audit.io.definitions import classes_from_categories
from vadscene.benchmark.frames import AuditInputError, GroundTruth
from vadscene.benchmark.ground_truth import load_ground_truth
from vadscene.cli import run
from vadscene.store.workspace import Workspace

ANNOTATION = (
    "Abuse001_x264 100 Abuse 10 30 -1 -1\n"
    "Normal_Videos_001_x264 80 Normal 5 15 -1 -1\n"
    "Normal_Videos_002_x264 60 Normal -1 -1 -1 -1\n"
)


def test_a_normal_video_with_anomalous_frames_is_an_error_naming_it(tmp_path: Path) -> None:
    gt = tmp_path / "gt.txt"
    gt.write_text(ANNOTATION)
    with pytest.raises(AuditInputError) as error:
        load_ground_truth(gt)
    assert str(error.value) == (
        f"{gt}: 1 video(s) of category 'Normal' have anomalous frames: "
        "Normal_Videos_001_x264 (10 anomalous frames); fix the ground truth, or count them as "
        "anomalous with normal_with_anomaly='anomalous' (vadscene audit --normal-with-anomaly "
        "anomalous)"
    )


def test_a_category_from_the_name_is_checked_too(tmp_path: Path) -> None:
    """Per-frame formats take the category from the video name: Normal_Videos_… is Normal."""
    gt = tmp_path / "gt.json"
    labels = [0] * 6 + [1] * 2
    gt.write_text(json.dumps({"Normal_Videos_003_x264": {"num_frames": 8, "labels": labels}}))
    with pytest.raises(AuditInputError, match=r"Normal_Videos_003_x264 \(2 anomalous frames\)"):
        load_ground_truth(gt)


def test_anomalous_counts_the_video_as_anomalous_everywhere(tmp_path: Path) -> None:
    """normal_with_anomaly='anomalous': its category becomes 'Anomaly', so it is a mixed
    anomalous video and leaves the Normal-only populations; the conventions list it."""
    gt_path = tmp_path / "gt.txt"
    gt_path.write_text(ANNOTATION)
    gt = load_ground_truth(gt_path, normal_with_anomaly="anomalous")
    assert gt.categories == ("Abuse", "Anomaly", "Normal")
    assert gt.conventions["normal_with_anomaly"] == (
        "anomalous: 1 video(s) of category 'Normal' with anomalous frames counted as "
        "anomalous everywhere, category set to 'Anomaly': Normal_Videos_001_x264 (10 anomalous "
        "frames)"
    )
    composition = run_audit(gt, n_bootstrap=0).composition.set_index("video")
    assert composition.loc["Normal_Videos_001_x264", "category"] == "Anomaly"
    assert bool(composition.loc["Normal_Videos_001_x264", "mixed"])
    # the class of its anomalous frames is its category, no longer a refused 'Normal'
    assert classes_from_categories(gt).classes == ("Abuse", "Anomaly")
    clean = tmp_path / "clean.txt"
    clean.write_text(ANNOTATION.replace("Normal 5 15", "Normal -1 -1"))
    assert load_ground_truth(clean).conventions["normal_with_anomaly"] == (
        "error: no video of category 'Normal' has anomalous frames"
    )
    with pytest.raises(AuditInputError, match="normal_with_anomaly must be one of error, anom"):
        load_ground_truth(clean, normal_with_anomaly="drop")  # type: ignore[arg-type]


def test_the_option_through_the_cli(tmp_path: Path) -> None:
    gt = tmp_path / "gt.txt"
    gt.write_text(ANNOTATION)
    assert run(["audit", "--gt", str(gt), "--out", str(tmp_path / "refused")]) != 0
    out = tmp_path / "out"
    assert (
        run(["audit", "--gt", str(gt), "--normal-with-anomaly", "anomalous", "--out", str(out)])
        == 0
    )
    report = json.loads((out / "report.json").read_text())
    assert "Normal_Videos_001_x264" in report["conventions"]["normal_with_anomaly"]


@pytest.mark.parametrize(
    ("intervals", "interval_end", "listed"),
    [
        ("10 20 20 30", "exclusive", True),  # [10, 20) and [20, 30) leave no frame between
        ("10 19 20 30", "exclusive", False),  # frame 19 lies between
        ("10 19 20 30", "inclusive", True),  # [10, 19] and [20, 30] touch
        ("10 30 20 40", "exclusive", True),  # overlap
        ("20 40 10 30", "inclusive", True),  # overlap, listed out of order
        ("10 20 40 50", "inclusive", False),
    ],
)
def test_touching_or_overlapping_intervals_are_listed(
    tmp_path: Path, intervals: str, interval_end: str, listed: bool
) -> None:
    gt_path = tmp_path / "gt.txt"
    gt_path.write_text(f"Abuse001_x264 100 Abuse {intervals}\nNormal_Videos_002_x264 60 Normal\n")
    gt = load_ground_truth(gt_path, interval_end=interval_end)  # type: ignore[arg-type]
    numbers = [int(x) for x in intervals.split()]
    pairs = list(zip(numbers[::2], numbers[1::2], strict=True))
    assert gt.segments == (tuple(pairs), ())  # as annotated: unmerged, in file order
    if listed:
        shown = " ".join(f"[{s}, {e}]" for s, e in pairs)
        assert gt.conventions["overlapping_intervals"] == (
            f"1 video(s) with touching or overlapping intervals ({interval_end} ends), merged "
            "into one run of frame labels and kept apart for interval AP under the vadclip "
            f"rule: Abuse001_x264 {shown}"
        )
    else:
        assert "overlapping_intervals" not in gt.conventions


def test_segments_are_the_annotated_numbers_and_label_runs_elsewhere(tmp_path: Path) -> None:
    """An end overrunning the frame count (within the tolerance) is clipped in the labels and
    kept in the segment; per-frame formats' segments are their label runs."""
    text = tmp_path / "gt.txt"
    text.write_text("Abuse001_x264 100 Abuse 90 105\n")
    gt = load_ground_truth(text)
    assert gt.segments == (((90, 105),),)
    assert int(gt.labels.sum()) == 10
    assert gt.conventions["segments"].startswith("annotated intervals as written, unmerged")
    per_frame = tmp_path / "gt.json"
    labels = [0, 1, 1, 0, 1, 0, 0, 1]
    per_frame.write_text(json.dumps({"01_0014": {"num_frames": 8, "labels": labels}}))
    gt = load_ground_truth(per_frame)
    assert gt.segments == (((1, 3), (4, 5), (7, 8)),)
    assert gt.conventions["segments"].startswith("runs of anomalous frame labels")


def test_segments_given_in_python_are_checked() -> None:
    labels = np.zeros(10, bool)
    offsets = np.array([0, 10])
    with pytest.raises(AuditInputError, match="segments for 2 videos, expected one sequence"):
        GroundTruth(("v",), ("Abuse",), offsets, labels, "py", segments=((), ()))
    with pytest.raises(AuditInputError, match=r"video v: segment \[10, 12\) must satisfy"):
        GroundTruth(("v",), ("Abuse",), offsets, labels, "py", segments=(((10, 12),),))
    with pytest.raises(AuditInputError, match=r"video v: segment \(1\.5, 3\) must be two integer"):
        GroundTruth(("v",), ("Abuse",), offsets, labels, "py", segments=(((1.5, 3),),))  # type: ignore[arg-type]


def test_a_labelling_campaign_is_not_stopped_by_it(tmp_path: Path) -> None:
    """`vadscene init` on such a ground truth registers every video (labelling needs ids and
    frame counts, not consistency); the audit on that workspace still refuses it unless told."""
    gt = tmp_path / "gt.txt"
    gt.write_text(ANNOTATION)
    for line in ANNOTATION.splitlines():
        name, frames = line.split()[:2]
        write_video(tmp_path / "videos" / f"{name}.mp4", "libx264", frames=int(frames))
    workspace = tmp_path / "ws"
    init = ["init", str(workspace), "--videos", str(tmp_path / "videos"), "--gt", str(gt)]
    assert run([*init, "--gt-format", "ucf-crime"]) == 0
    with Workspace.open(workspace) as opened:
        assert sorted(opened.store.video_ids()) == sorted(
            line.split()[0] for line in ANNOTATION.splitlines()
        )
    audit = ["audit", "--workspace", str(workspace), "--out", str(tmp_path / "report")]
    assert run(audit) == 1
    assert run([*audit, "--normal-with-anomaly", "anomalous"]) == 0
