"""A video file whose name holds a control character (issue 24 item 6b): its id would hold the
character too, and the app cannot play it, so the scan lists the file as unreadable with the
reason (``init``, ``scan`` and ``status`` show it, escaped, on one line) and registers the rest.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.clips import write_clip
from support.examples import GOOD

from vadscene.cli import run
from vadscene.store.workspace import Workspace

NEWLINE_NAME, BELL_NAME = "Arson\n002_x264.mp4", "Road\x07003.mp4"

EXPECTED = [
    ("Arson\\x0a002_x264.mp4", "file name holds a control character (U+000A); rename the file"),
    ("nested/Road\\x07003.mp4", "file name holds a control character (U+0007); rename the file"),
]
"""(path as shown, reason), sorted by path as the store lists them."""


@pytest.fixture
def videos(tmp_path: Path) -> Path:
    root = tmp_path / "videos"
    write_clip(root / f"{GOOD}.mp4")
    write_clip(root / NEWLINE_NAME)
    write_clip(root / "nested" / BELL_NAME)
    return root


def test_the_scan_lists_such_files_as_unreadable_and_registers_the_rest(
    tmp_path: Path, videos: Path
) -> None:
    with Workspace.create(tmp_path / "ws", video_root=videos) as workspace:
        report = workspace.scan()
        registered = [v.video_id for v in workspace.store.videos()]
        stored = workspace.store.unreadable_files()
        again = workspace.scan()
    assert registered == [GOOD] and report.added == [GOOD]
    assert sorted(report.unreadable) == EXPECTED
    assert stored == EXPECTED
    assert again.unchanged == [GOOD] and sorted(again.unreadable) == EXPECTED
    assert again.missing == []  # the files are still there: not "no longer in the folder"


def test_renaming_the_file_registers_it(tmp_path: Path, videos: Path) -> None:
    with Workspace.create(tmp_path / "ws", video_root=videos) as workspace:
        workspace.scan()
        (videos / NEWLINE_NAME).rename(videos / "Arson002_x264.mp4")
        report = workspace.scan()
    assert report.added == ["Arson002_x264"]
    assert report.unreadable == [EXPECTED[1]]


def test_init_scan_and_status_print_each_such_file_on_one_line(
    tmp_path: Path, videos: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace = tmp_path / "ws"
    lines = [f"  {path}: {reason}" for path, reason in EXPECTED]

    assert run(["init", str(workspace), "--videos", str(videos)]) == 0
    init = capsys.readouterr().out.splitlines()
    assert init[0] == f"{workspace}: 1 videos registered (1 new, 0 re-probed, 0 unchanged)"
    assert init[1:] == ["2 files could not be registered:", *lines]

    assert run(["scan", str(workspace)]) == 0
    scan = capsys.readouterr().out.splitlines()
    assert scan[1:] == ["2 files could not be registered:", *lines]

    assert run(["status", str(workspace)]) == 0
    status = capsys.readouterr().out.splitlines()
    assert f"at {workspace}: 1 videos," in status[0]
    assert status[-2:] == [f"unreadable {path}: {reason}" for path, reason in EXPECTED]
