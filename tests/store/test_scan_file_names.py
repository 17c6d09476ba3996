"""Scanning a video folder whose file names are not plain UTF-8 text: a name that is not valid
UTF-8 is listed as unreadable (and the rest registered), a name is read in Unicode's NFC form,
and two names that normalise to one id are one video."""

from __future__ import annotations

import os
from pathlib import Path

from helpers import NFC, NFD
from support.clips import write_clip
from support.examples import GOOD

from vadscene.store.workspace import Workspace


def _clip_with_byte_name(folder: Path, name: bytes) -> None:
    """A real clip whose file name holds ``name``'s raw bytes (not necessarily UTF-8)."""
    write_clip(folder / "renamed.mp4")
    os.rename(os.fsencode(folder / "renamed.mp4"), os.fsencode(folder) + b"/" + name)


def test_a_non_utf8_file_name_is_listed_as_unreadable_and_the_rest_registered(
    tmp_path: Path,
) -> None:
    videos = tmp_path / "videos"
    write_clip(videos / f"{GOOD}.mp4")
    (videos / "sub\xe9").mkdir()  # a UTF-8 folder name is fine
    write_clip(videos / "sub\xe9" / "Arson003_x264.mp4")
    _clip_with_byte_name(videos, b"Arson\xff002_x264.mp4")
    os.mkdir(os.fsencode(videos) + b"/Latin\xe9")  # a Latin-1 folder name
    _clip_with_byte_name(videos, b"Latin\xe9/Burglary005_x264.mp4")

    with Workspace.create(tmp_path / "ws", video_root=videos) as workspace:
        report = workspace.scan()
        registered = sorted(v.video_id for v in workspace.store.videos())
        stored = dict(workspace.store.unreadable_files())

    assert registered == ["Abuse001_x264", "Arson003_x264"]
    assert sorted(report.added) == registered
    reasons = dict(report.unreadable)
    assert sorted(reasons) == ["Arson\\xff002_x264.mp4", "Latin\\xe9/Burglary005_x264.mp4"]
    assert all("file name is not valid UTF-8" in reason for reason in reasons.values())
    assert stored == reasons  # recorded as shown: the store holds only valid text


def test_a_non_utf8_file_name_is_skipped_again_on_rescan(tmp_path: Path) -> None:
    videos = tmp_path / "videos"
    write_clip(videos / f"{GOOD}.mp4")
    _clip_with_byte_name(videos, b"Arson\xff002_x264.mp4")
    with Workspace.create(tmp_path / "ws", video_root=videos) as workspace:
        workspace.scan()
        again = workspace.scan()
    assert again.unchanged == [GOOD]
    assert [path for path, _ in again.unreadable] == ["Arson\\xff002_x264.mp4"]


def test_a_video_file_named_in_nfd_is_registered_under_its_nfc_id(tmp_path: Path) -> None:
    videos = tmp_path / "videos"
    write_clip(videos / f"{NFD}.mp4")
    with Workspace.create(tmp_path / "ws", video_root=videos) as workspace:
        workspace.scan()
        (video,) = workspace.store.videos()
        assert video.video_id == NFC
        assert workspace.video_path(NFC).is_file()  # the file keeps its own bytes


def test_two_files_whose_names_differ_only_in_normalisation_are_one_id(tmp_path: Path) -> None:
    videos = tmp_path / "videos"
    write_clip(videos / f"{NFC}.mp4")
    write_clip(videos / "sub" / f"{NFD}.mp4")
    with Workspace.create(tmp_path / "ws", video_root=videos) as workspace:
        report = workspace.scan()
    assert report.added == [NFC]
    ((path, reason),) = report.unreadable
    assert path == f"sub/{NFD}.mp4"
    assert f"duplicate video id '{NFC}'" in reason
