"""A scan against the workspace's ground truth: the videos it names that the folder lacks (with
"did you mean"), and every video's category as the ground truth gives it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers import ABUSE, ARSON, NORMAL, ROAD, write_video

from vadscene.benchmark.frames import AuditInputError
from vadscene.store.workspace import GroundTruthRef, Workspace


def _workspace(tmp_path: Path, videos: Path, gt_lines: list[str]) -> Workspace:
    gt = tmp_path / "gt.txt"
    gt.write_text("".join(f"{line}\n" for line in gt_lines))
    return Workspace.create(
        tmp_path / "ws",
        video_root=videos,
        ground_truth=GroundTruthRef(path=str(gt), format="ucf-crime"),
    )


def test_scan_lists_ground_truth_videos_the_folder_lacks_with_the_id_they_may_mean(
    tmp_path: Path, small_videos: Path
) -> None:
    write_video(small_videos / "Stealing019_x264 (1).mp4", "libx264", frames=12)  # a copy's name
    write_video(small_videos / "shooting007_X264.mp4", "libx264", frames=12)  # other case
    lines = [
        f"{ABUSE}.mp4 Abuse 5 10 -1 -1",
        f"{ARSON}.mp4 Arson 2 8 -1 -1",
        f"{NORMAL}.mp4 Normal -1 -1 -1 -1",
        f"{ROAD}.mp4 RoadAccidents 1 4 -1 -1",
        "Stealing019_x264.mp4 Stealing 1 5 -1 -1",
        "Shooting007_x264.mp4 Shooting 1 5 -1 -1",
        "Burglary010_x264.mp4 Burglary 1 5 -1 -1",
    ]
    with _workspace(tmp_path, small_videos, lines) as workspace:
        report = workspace.scan()
    assert report.not_in_folder == {
        "Burglary010_x264": None,
        "Shooting007_x264": "shooting007_X264",
        "Stealing019_x264": "Stealing019_x264 (1)",
    }
    assert report.registered == 6 and report.ground_truth_problem is None


def test_a_ucf_short_name_in_the_ground_truth_is_the_registered_video(
    tmp_path: Path, small_videos: Path
) -> None:
    """The ground-truth reader matches frame counts by UCF-Crime short name (Abuse001 ↔
    Abuse001_x264), so such a video is not missing."""
    with _workspace(tmp_path, small_videos, ["Abuse001 Abuse 5 10 -1 -1"]) as workspace:
        report = workspace.scan()
        assert report.not_in_folder == {}
        assert workspace.store.video(ABUSE).category == "Abuse"


def test_the_category_comes_from_the_ground_truth_as_the_audit_reads_it(
    tmp_path: Path,
) -> None:
    videos = tmp_path / "videos"
    write_video(videos / "holmesvad_Fighting033_x264_570_841.mp4", "libx264", frames=20)
    write_video(videos / "01_0014.mp4", "libx264", frames=20)
    write_video(videos / "01_0015.mp4", "libx264", frames=20)
    write_video(videos / "clip_without_truth.mp4", "libx264", frames=20)
    lines = ["holmesvad_Fighting033_x264_570_841 Fighting 3 9 -1 -1"]
    with _workspace(tmp_path, videos, lines) as workspace:
        workspace.scan()
        by_id = {v.video_id: v.category for v in workspace.store.videos()}
    # the naming rule alone reads "Unknown" for all four
    assert by_id["holmesvad_Fighting033_x264_570_841"] == "Fighting"
    assert by_id["clip_without_truth"] == "Unknown"

    # ShanghaiTech-like names in the XD layout (no category column): the audit's reader calls
    # a video with an anomalous frame "Anomaly", one without the normal category
    xd = tmp_path / "xd"
    xd.mkdir()
    shutil.copytree(videos, xd / "videos")
    gt = xd / "gt.txt"
    gt.write_text("01_0014 2 6\n")
    with Workspace.create(
        xd / "ws",
        video_root=xd / "videos",
        ground_truth=GroundTruthRef(path=str(gt), format="ucf-crime"),
    ) as workspace:
        workspace.scan()
        by_id = {v.video_id: v.category for v in workspace.store.videos()}
    assert by_id["01_0014"] == "Anomaly"
    assert by_id["01_0015"] == "Normal"  # counted, not annotated: all-normal


def test_a_rescan_takes_a_changed_ground_truth_category_without_probing_again(
    tmp_path: Path, small_videos: Path
) -> None:
    lines = [f"{ABUSE} Abuse 5 10 -1 -1"]
    with _workspace(tmp_path, small_videos, lines) as workspace:
        workspace.scan()
        workspace.store.record_decision(ABUSE, "color", "color", annotator="ana")
        workspace.ground_truth_path.write_text(f"{ABUSE} Vandalism 5 10 -1 -1\n")
        report = workspace.scan()
        assert report.recategorised == [ABUSE]
        assert ABUSE in report.unchanged  # same file: not probed again
        assert workspace.store.video(ABUSE).category == "Vandalism"
        assert workspace.store.current_values("ana") == {(ABUSE, "color"): "color"}


def test_a_ground_truth_that_does_not_fit_the_videos_is_reported_not_fatal(
    tmp_path: Path, small_videos: Path
) -> None:
    lines = [f"{ABUSE} Vandalism 500 900 -1 -1", "Burglary010_x264 Burglary 1 5 -1 -1"]
    with _workspace(tmp_path, small_videos, lines) as workspace:
        report = workspace.scan()
        assert report.registered == 4
        assert report.not_in_folder == {"Burglary010_x264": None}
        assert report.ground_truth_problem is not None
        assert f"video {ABUSE}: interval [500, 900]" in report.ground_truth_problem
        assert workspace.store.video(ABUSE).category == "Abuse"  # from its name


def test_create_refuses_a_ground_truth_it_cannot_read(tmp_path: Path, small_videos: Path) -> None:
    gt = tmp_path / "gt.txt"
    gt.write_text(f"{ABUSE} Abuse 5 10 -1 -1\n{ARSON} Arson 2 x -1 -1\n")
    with pytest.raises(AuditInputError, match=r"gt\.txt:2: expected integer interval bounds"):
        Workspace.create(
            tmp_path / "ws",
            video_root=small_videos,
            ground_truth=GroundTruthRef(path=str(gt), format="ucf-crime"),
        )
    assert not (tmp_path / "ws").exists()
