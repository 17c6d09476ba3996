"""Workspaces: creating, scanning real video files, naming rules, re-scans."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from helpers import SMALL_BENCHMARK, realdata_dir, write_video

from vadscene.benchmark.video_lists import read_video_list
from vadscene.core.errors import WorkspaceError
from vadscene.store.workspace import GroundTruthRef, NamingRules, Workspace


def test_scan_registers_every_video_with_probe_fields(small_workspace: Workspace) -> None:
    videos = {v.video_id: v for v in small_workspace.store.videos()}
    assert sorted(videos) == sorted(Path(name).stem for name in SMALL_BENCHMARK)
    for name, frames in SMALL_BENCHMARK.items():
        video = videos[Path(name).stem]
        assert video.num_frames == frames
        assert (video.width, video.height, video.codec, video.fps) == (64, 48, "h264", 25.0)
        assert video.path == name
        assert video.size_bytes == (small_workspace.video_root / name).stat().st_size
    assert videos["Abuse001_x264"].category == "Abuse"
    assert videos["Normal_Videos_003_x264"].category == "Normal"
    assert videos["RoadAccidents004_x264"].category == "RoadAccidents"


def test_workspace_layout_and_reopen(small_workspace: Workspace) -> None:
    root = small_workspace.root
    for part in ("vadscene.yaml", "catalogue.yaml", "annotations.db", "cache", "releases"):
        assert (root / part).exists()
    config = yaml.safe_load((root / "vadscene.yaml").read_text())
    assert config["dataset"] == "small"
    reopened = Workspace.open(root)
    assert reopened.catalogue == small_workspace.catalogue
    assert len(reopened.store.videos()) == len(SMALL_BENCHMARK)
    reopened.close()


def test_unreadable_files_are_listed_not_fatal(tmp_path: Path, small_videos: Path) -> None:
    (small_videos / "Burglary009_x264.mp4").write_text("not a video")
    (small_videos / "Stealing010_x264.avi").write_bytes(b"")
    workspace = Workspace.create(tmp_path / "ws", video_root=small_videos)
    report = workspace.scan()
    assert report.registered == len(SMALL_BENCHMARK)
    reasons = dict(report.unreadable)
    assert set(reasons) == {"Burglary009_x264.mp4", "Stealing010_x264.avi"}
    assert "empty file" in reasons["Stealing010_x264.avi"]
    assert workspace.store.unreadable_files() == sorted(report.unreadable)
    workspace.close()


def test_duplicate_stems_are_refused_with_both_paths(tmp_path: Path, small_videos: Path) -> None:
    write_video(small_videos / "nested" / "Abuse001_x264.avi", "mpeg4", frames=5)
    workspace = Workspace.create(tmp_path / "ws", video_root=small_videos)
    report = workspace.scan()
    [(path, reason)] = report.unreadable
    assert path == "nested/Abuse001_x264.avi"
    assert "duplicate video id 'Abuse001_x264'" in reason and "Abuse001_x264.mp4" in reason
    workspace.close()


def test_rescan_skips_unchanged_reprobes_changed_and_reports_missing(
    small_workspace: Workspace,
) -> None:
    store = small_workspace.store
    store.record_decision("Arson002_x264", "color", "color", annotator="ana")
    root = small_workspace.video_root
    write_video(root / "Abuse001_x264.mp4", "libx264", frames=40)  # changed content
    (root / "Arson002_x264.mp4").unlink()  # vanished
    write_video(root / "Explosion005_x264.mp4", "libx264", frames=10)  # new

    report = small_workspace.scan()
    assert report.added == ["Explosion005_x264"]
    assert report.updated == ["Abuse001_x264"]
    assert sorted(report.unchanged) == ["Normal_Videos_003_x264", "RoadAccidents004_x264"]
    assert report.missing == ["Arson002_x264"]
    assert store.video("Abuse001_x264").num_frames == 40
    assert store.current_values("ana") == {("Arson002_x264", "color"): "color"}  # kept


def test_create_refuses_existing_workspace_and_missing_paths(
    tmp_path: Path, small_workspace: Workspace
) -> None:
    with pytest.raises(WorkspaceError, match="already a vadscene workspace"):
        Workspace.create(small_workspace.root, video_root=small_workspace.video_root)
    with pytest.raises(WorkspaceError, match="does not exist"):
        Workspace.create(tmp_path / "other", video_root=tmp_path / "no-videos")
    with pytest.raises(WorkspaceError, match=r"ground-truth file .*gt.txt \(ucf-crime\)"):
        Workspace.create(
            tmp_path / "other",
            video_root=small_workspace.video_root,
            ground_truth=GroundTruthRef(path=str(tmp_path / "gt.txt"), format="ucf-crime"),
        )


def test_open_explains_what_is_wrong(tmp_path: Path, small_workspace: Workspace) -> None:
    with pytest.raises(WorkspaceError, match=r"not a vadscene workspace.*vadscene init"):
        Workspace.open(tmp_path / "nothing-here")
    config = small_workspace.root / "vadscene.yaml"
    config.write_text(config.read_text().replace("dataset: small", "dataset: 7\nbogus: 1"))
    with pytest.raises(WorkspaceError, match=r"(?s)vadscene.yaml: invalid.*\$\.dataset.*\$\.bogus"):
        Workspace.open(small_workspace.root)


def test_workspace_with_videos_inside_can_be_moved(tmp_path: Path, small_videos: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    shutil.move(small_videos, root / "videos")
    Workspace.create(root, video_root=root / "videos").close()
    moved = tmp_path / "moved"
    shutil.move(root, moved)
    with Workspace.open(moved) as workspace:
        assert workspace.scan().registered == len(SMALL_BENCHMARK)


@pytest.mark.parametrize(
    ("rules", "path", "category"),
    [
        (NamingRules(), "Abuse028_x264.mp4", "Abuse"),
        (NamingRules(), "Normal_Videos_924_x264.mp4", "Normal"),
        (NamingRules(), "RoadAccidents133_x264.mp4", "RoadAccidents"),
        (NamingRules(category_rule="folder"), "Shoplifting/Shoplifting001_x264.mp4", "Shoplifting"),
        (NamingRules(category_rule="folder"), "Testing_Normal/Normal_Videos_1.mp4", "Normal"),
        (
            NamingRules(category_rule="regex", category_regex=r"label_(?P<category>[A-Z]\d)"),
            "v=Riot.Act__#1_label_B1-0-0.mp4",
            "B1",
        ),
        (NamingRules(category_rule="none"), "01_0014.avi", "Unknown"),
    ],
)
def test_category_rules(rules: NamingRules, path: str, category: str) -> None:
    assert rules.category_of(Path(path)) == category


@pytest.mark.realdata
def test_init_on_real_clips_in_place(tmp_path: Path) -> None:
    videos = realdata_dir() / "videos"
    rules = NamingRules(category_rule="regex", category_regex=r"_(?P<category>[A-Za-z]+)\d+_x264")
    with Workspace.create(tmp_path / "ws", video_root=videos, naming=rules) as workspace:
        report = workspace.scan()
        assert report.unreadable == []
        by_id = {v.video_id: v for v in workspace.store.videos()}
    assert by_id["holmesvad_Fighting033_x264_570_841"].category == "Fighting"
    assert by_id["lavad_Robbery102_x264"].category == "Robbery"
    assert by_id["lavad_Robbery102_x264"].num_frames == 1827
    assert by_id["vtest_lamminhthien"].category == "Unknown"
    assert by_id["vtest_lamminhthien"].num_frames == 341


def test_splits_come_from_list_files(tmp_path: Path, small_videos: Path) -> None:
    test_list = tmp_path / "Anomaly_Test.txt"
    test_list.write_text(
        "Abuse/Abuse001_x264.mp4\nNormal/Normal_Videos_003_x264.mp4\n"
        "Burglary/Burglary099_x264.mp4\n"
    )
    train_list = tmp_path / "train.list"
    train_list.write_text("train/Arson002_x264__0.npy\ntrain/Arson002_x264__1.npy\n")
    with Workspace.create(
        tmp_path / "ws", video_root=small_videos, splits={"test": test_list, "train": train_list}
    ) as workspace:
        report = workspace.scan()
        splits = {v.video_id: v.split for v in workspace.store.videos()}
    assert splits == {
        "Abuse001_x264": "test",
        "Normal_Videos_003_x264": "test",
        "Arson002_x264": "train",
        "RoadAccidents004_x264": None,
    }
    assert report.unlisted_in_split == {"test": ["Burglary099_x264"]}


@pytest.mark.realdata
@pytest.mark.parametrize(
    ("relative", "count", "first"),
    [
        ("corevad/Anomaly_Test.txt", 290, "Abuse028_x264"),  # Category/Name.mp4
        ("urdmu/UCF_Test.list", 290, "Abuse028_x264"),  # dataset/Category/Name__crop.npy
        ("pel4vad/list/ucf/test.list", 290, "Abuse028_x264"),  # test/Name__crop.npy
        ("rtfm/SH_Test.txt", 199, "01_001"),  # bare ids
    ],
)
def test_real_video_lists(relative: str, count: int, first: str) -> None:
    ids = read_video_list(realdata_dir() / relative)
    assert len(ids) == count and ids[0] == first
    assert len(set(ids)) == len(ids)
