"""The crash list of issue 14: inputs real benchmarks (or careless hands) produce that used to
crash vadscene or be quietly misread. Each test failed on the code before its fix.

The CLI-facing cases (message, exit code, store unchanged) are also rows of the bad-input
table (:data:`vadscene.reliability.CASES`); these tests check what the table cannot: that the
good part of the input is still used, and the library-level behaviour.
"""

from __future__ import annotations

import os
from pathlib import Path

from vadscene.reliability import GOOD, write_clip
from vadscene.workspace import Workspace

# --- 1. file names that are not UTF-8 --------------------------------------------------------


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
