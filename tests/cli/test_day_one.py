"""Day one on a real benchmark: `init` with a ground truth naming videos the folder lacks,
`measure` going on without them (exit 3: partial), `scan --videos` re-pointing a workspace."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from helpers import ABUSE, ARSON, NORMAL, ROAD, realdata_dir, write_video

from vadscene.cli import run
from vadscene.release.releases import build_release, write_release
from vadscene.store.workspace import CONFIG_NAME, Workspace

SMALL_GT = [
    f"{ABUSE}.mp4 Abuse 5 10 -1 -1",
    f"{ARSON}.mp4 Arson 2 8 -1 -1",
    f"{NORMAL}.mp4 Normal -1 -1 -1 -1",
    f"{ROAD}.mp4 RoadAccidents 1 4 -1 -1",
    "Burglary010_x264.mp4 Burglary 1 5 -1 -1",
]


def _cli(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = run([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, " ".join(captured.err.split())  # unwrapped


def _init(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, videos: Path, lines: list[str]
) -> tuple[int, str, str]:
    gt = tmp_path / "gt.txt"
    gt.write_text("".join(f"{line}\n" for line in lines))
    return _cli(capsys, "init", tmp_path / "ws", "--videos", videos, "--gt", gt)


def test_init_names_the_ground_truth_videos_the_folder_lacks(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, small_videos: Path
) -> None:
    write_video(small_videos / "burglary010_x264.MP4.mp4", "libx264", frames=12)
    code, out, err = _init(capsys, tmp_path, small_videos, SMALL_GT)
    assert code == 0, err  # the workspace is made; the warning says what to do
    assert "5 videos registered" in out
    assert (
        f"1 ground-truth video is not in the video folder ({small_videos}): Burglary010_x264 "
        "(did you mean burglary010_x264.MP4?)"
    ) in err
    assert f"run `vadscene scan {tmp_path / 'ws'}`" in err
    assert (tmp_path / "ws" / CONFIG_NAME).is_file()


def test_init_lists_at_most_ten_missing_videos_and_counts_the_rest(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, small_videos: Path
) -> None:
    absent = [f"Shoplifting{i:03d}_x264" for i in range(1, 14)]
    code, _out, err = _init(
        capsys,
        tmp_path,
        small_videos,
        SMALL_GT[:4] + [f"{v} Shoplifting 1 2 -1 -1" for v in absent],
    )
    assert code == 0
    assert "13 ground-truth videos are not in the video folder" in err
    assert ", ".join(absent[:10]) + " … and 3 more" in err
    assert absent[10] not in err


@pytest.mark.realdata
def test_the_official_ucf_crime_test_annotation_with_one_video_absent(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The 290 videos of UCF-Crime's Temporal_Anomaly_Annotation.txt, each a copy of one small
    clip: one is absent, one was saved by a browser as "… (1).mp4"."""
    official = realdata_dir() / "sultani" / "Temporal_Anomaly_Annotation.txt"
    ids = [line.split()[0].removesuffix(".mp4") for line in official.read_text().splitlines()]
    assert len(ids) == 290
    clip = write_video(tmp_path / "clip.mp4", "libx264", frames=5)
    videos = tmp_path / "UCF_Crimes"
    videos.mkdir()
    renamed, absent = ids[0], ids[137]
    for video in ids:
        if video != absent:
            name = f"{video} (1)" if video == renamed else video
            os.link(clip, videos / f"{name}.mp4")
    code, out, err = _cli(capsys, "init", tmp_path / "ws", "--videos", videos, "--gt", official)
    assert code == 0, err
    assert "289 videos registered" in out
    assert (
        f"2 ground-truth videos are not in the video folder ({videos}): {renamed} (did you "
        f"mean {renamed} (1)?), {absent}"
    ) in err


def test_measure_measures_the_rest_and_exits_3_for_partial(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, small_videos: Path
) -> None:
    assert _init(capsys, tmp_path, small_videos, SMALL_GT)[0] == 0
    code, out, err = _cli(capsys, "measure", tmp_path / "ws", "--workers", "1")
    assert code == 3, err
    assert re.search(r"measured 4 videos .* failed 0, missing 1", out)
    assert (
        "missing Burglary010_x264: in the ground truth "
        f"({(tmp_path / 'gt.txt').resolve()}) but not in the video folder"
    ) in err
    with Workspace.open(tmp_path / "ws") as workspace:
        assert len(workspace.store.measurements()) == 4
    # run again: the four are reused, the missing one is still missing
    code, out, _err = _cli(capsys, "measure", tmp_path / "ws", "--workers", "1")
    assert code == 3 and "reused 4" in out


def test_measure_help_documents_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = _cli(capsys, "measure", "--help")
    flat = " ".join(re.sub(r"[│╭╮╰╯─]", " ", out).split())
    assert code == 0
    assert "Exit code 0: every video measured" in flat
    assert "3: partial" in flat


def test_scan_videos_repoints_an_imported_workspace(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, small_workspace: Workspace
) -> None:
    release = tmp_path / "release.json"
    write_release(build_release(small_workspace), release)
    assert _cli(capsys, "import", tmp_path / "imported", release)[0] == 0
    code, _out, err = _cli(capsys, "measure", tmp_path / "imported")
    assert code == 1 and "--videos VIDEO_FOLDER" in err

    videos = tmp_path / "videos-here"
    shutil.copytree(small_workspace.video_root, videos)
    write_video(videos / f"{ABUSE}.mp4", "libx264", frames=31)
    code, out, err = _cli(capsys, "scan", tmp_path / "imported", "--videos", videos)
    assert code == 0, err
    flat = " ".join(out.split())
    assert f"video folder: none → {videos.resolve()}" in flat
    assert "4 of 4 registered videos found" in flat
    assert (
        "1 video's content differs from what was registered (decisions kept; measure it "
        f"again): {ABUSE}"
    ) in flat
    with Workspace.open(tmp_path / "imported") as workspace:
        assert workspace.video_root == videos.resolve()


def test_scan_videos_refuses_a_folder_that_is_not_there(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, small_workspace: Workspace
) -> None:
    config = (small_workspace.root / CONFIG_NAME).read_bytes()
    code, _out, err = _cli(capsys, "scan", small_workspace.root, "--videos", tmp_path / "typo")
    assert code == 1
    assert f"video folder {tmp_path / 'typo'} does not exist or is not a folder" in err
    assert (small_workspace.root / CONFIG_NAME).read_bytes() == config
