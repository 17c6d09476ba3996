"""``scan`` with a new video folder: a workspace re-pointed at its videos (one imported from a
release included), what matched, what changed content, and a folder that is not there."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers import ABUSE, ARSON, NORMAL, ROAD, write_video

from vadscene.core.errors import WorkspaceError
from vadscene.release.releases import build_release, workspace_from_release
from vadscene.store.workspace import CONFIG_NAME, Workspace


def test_a_moved_video_folder_is_matched_by_id_and_changed_content_is_reported(
    tmp_path: Path, small_workspace: Workspace
) -> None:
    store = small_workspace.store
    store.record_decision(ABUSE, "color", "color", annotator="ana")
    store.record_decision(ARSON, "color", "grayscale", annotator="ana")
    moved = tmp_path / "moved"
    shutil.copytree(small_workspace.video_root, moved)
    write_video(moved / f"{ABUSE}.mp4", "libx264", frames=33)  # another file under its name
    (moved / f"{NORMAL}.mp4").unlink()

    report = small_workspace.scan(video_root=moved)
    assert report.content_changed == [ABUSE]
    assert sorted(report.unchanged) == [ARSON, ROAD]
    assert report.missing == [NORMAL]
    assert store.video(ABUSE).num_frames == 33
    assert store.current_values("ana") == {(ABUSE, "color"): "color", (ARSON, "color"): "grayscale"}
    small_workspace.close()
    with Workspace.open(small_workspace.root) as reopened:
        assert reopened.video_root == moved.resolve()


def test_a_folder_that_does_not_exist_is_refused_and_the_configuration_kept(
    tmp_path: Path, small_workspace: Workspace
) -> None:
    config = (small_workspace.root / CONFIG_NAME).read_bytes()
    root_before = small_workspace.video_root
    videos_before = small_workspace.store.videos()
    with pytest.raises(WorkspaceError, match=r"video folder .*nowhere does not exist") as caught:
        small_workspace.scan(video_root=tmp_path / "nowhere")
    assert str(small_workspace.video_root) in str(caught.value)  # where it still points
    assert (small_workspace.root / CONFIG_NAME).read_bytes() == config
    assert small_workspace.video_root == root_before
    assert small_workspace.store.videos() == videos_before
    (tmp_path / "a-file").write_text("not a folder")
    with pytest.raises(WorkspaceError, match="a-file does not exist or is not a folder"):
        small_workspace.scan(video_root=tmp_path / "a-file")


def test_an_imported_workspace_is_pointed_at_its_videos(
    tmp_path: Path, small_workspace: Workspace
) -> None:
    small_workspace.store.record_decision(ARSON, "color", "grayscale", annotator="ana")
    release = build_release(small_workspace)
    imported = workspace_from_release(release, tmp_path / "imported")
    assert imported.video_root is None
    with pytest.raises(WorkspaceError, match="no video folder to scan"):
        imported.scan()
    videos = tmp_path / "their-copy"
    shutil.copytree(small_workspace.video_root, videos)
    write_video(videos / f"{ROAD}.mp4", "libx264", frames=9)  # moved up a folder, new content
    shutil.rmtree(videos / "nested")

    report = imported.scan(video_root=videos)
    assert sorted(report.unchanged) == [ABUSE, ARSON, NORMAL]  # release fingerprints match
    assert report.content_changed == [ROAD]
    assert report.added == [] and report.missing == []
    assert imported.video_path(ROAD) == videos / f"{ROAD}.mp4"
    assert imported.store.current_values("ana") == {(ARSON, "color"): "grayscale"}
    assert {v.video_id: v.category for v in imported.store.videos()} == {
        v.video_id: v.category for v in small_workspace.store.videos()
    }
    imported.close()
