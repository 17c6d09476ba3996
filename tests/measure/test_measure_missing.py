"""Measuring a workspace some of whose videos have no file: the rest is measured, the missing
ones are listed with the reason, and nothing already stored is lost."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import ABUSE, ARSON, NORMAL, ROAD, write_video

from vadscene.measure.run import measure_workspace
from vadscene.store.workspace import GroundTruthRef, Workspace

GT_LINES = [
    f"{ABUSE}.mp4 Abuse 5 10 -1 -1",
    f"{ARSON}.mp4 Arson 2 8 -1 -1",
    f"{NORMAL}.mp4 Normal -1 -1 -1 -1",
    f"{ROAD}.mp4 RoadAccidents 1 4 -1 -1",
    "Burglary010_x264.mp4 Burglary 1 5 -1 -1",  # the official list names it; the folder lacks it
]


@pytest.fixture
def workspace(tmp_path: Path, small_videos: Path) -> Workspace:
    gt = tmp_path / "gt.txt"
    gt.write_text("".join(f"{line}\n" for line in GT_LINES))
    ws = Workspace.create(
        tmp_path / "ws",
        video_root=small_videos,
        ground_truth=GroundTruthRef(path=str(gt), format="ucf-crime"),
    )
    ws.scan()
    yield ws
    ws.close()


def test_a_ground_truth_video_without_a_file_does_not_stop_the_others(
    workspace: Workspace,
) -> None:
    report = measure_workspace(workspace, workers=1)
    assert sorted(report.measured) == sorted([ABUSE, ARSON, NORMAL, ROAD])
    assert report.failed == []
    [(video, reason)] = report.missing
    assert video == "Burglary010_x264"
    assert "in the ground truth" in reason and "not in the video folder" in reason
    stored = workspace.store.measurements()
    assert sorted(stored) == sorted([ABUSE, ARSON, NORMAL, ROAD])
    # the ground truth still decides which frames are normal
    assert stored[ABUSE]["sharpness"].params["normal_segments"] == "ground truth"


def test_the_missing_video_is_offered_the_registered_id_it_may_mean(
    workspace: Workspace,
) -> None:
    write_video(workspace.video_root / "Burglary010_x264 (1).mp4", "libx264", frames=12)
    workspace.scan()
    report = measure_workspace(workspace, workers=1)
    assert dict(report.missing)["Burglary010_x264"].endswith("did you mean Burglary010_x264 (1)?")


def test_a_registered_video_whose_file_went_keeps_what_was_stored(
    workspace: Workspace,
) -> None:
    measure_workspace(workspace, workers=1)
    before = workspace.store.measurements()[ARSON]
    file = workspace.video_path(ARSON)
    file.unlink()
    # a new interval changes ARSON's normal frames, so its stored statistics are out of date
    workspace.ground_truth_path.write_text(
        "".join(f"{line}\n" for line in GT_LINES).replace("Arson 2 8", "Arson 3 9")
    )
    report = measure_workspace(workspace, workers=1)
    missing = dict(report.missing)
    assert set(missing) == {ARSON, "Burglary010_x264"}
    assert str(file) in missing[ARSON]
    assert "no longer in the video folder" in missing[ARSON]
    assert sorted(report.reused) == sorted([ABUSE, NORMAL, ROAD])
    assert report.failed == []
    assert workspace.store.measurements()[ARSON] == before
    assert workspace.store.measurement_failures() == []


def test_a_registered_video_whose_file_went_is_reused_while_its_statistics_hold(
    workspace: Workspace,
) -> None:
    measure_workspace(workspace, workers=1)
    workspace.video_path(ROAD).unlink()
    report = measure_workspace(workspace, workers=1)
    assert ROAD in report.reused
    assert [video for video, _reason in report.missing] == ["Burglary010_x264"]
