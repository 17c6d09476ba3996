"""Output files: permissions from the umask, atomic replacement, several files together or not
at all, leftovers of killed writers removed, and one-line errors on a full or read-only disk."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from helpers import small_tmpfs

from vadscene.core.errors import OutputError
from vadscene.core.files import atomic_write, replace_together
from vadscene.release.labelstudio import LabelStudioUsers, write_labelstudio
from vadscene.release.releases import build_release, write_release
from vadscene.store.workspace import CONFIG_NAME, Workspace


@contextmanager
def umask(mask: int) -> Iterator[None]:
    previous = os.umask(mask)
    try:
        yield
    finally:
        os.umask(previous)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _dead_pid() -> int:
    """The id of a process that has ended (and, the moment after, exists no more)."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o077, 0o600)])
def test_every_output_takes_its_permissions_from_the_umask(
    annotated: Workspace, tmp_path: Path, mask: int, expected: int
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    with umask(mask):
        schema = write_release(build_release(annotated), out / "r.json", csv_path=out / "r.csv")
        team = LabelStudioUsers.gather(["ana=ana@lab.org", "ben=ben@lab.org", "carla=c@lab.org"])
        write_labelstudio(annotated, out / "ls", users=team)
        annotated.save_config()
        atomic_write(out / "plain.txt", "text")
    written = [out / "r.json", out / "r.csv", schema, annotated.root / CONFIG_NAME]
    written += [*sorted((out / "ls").iterdir()), out / "plain.txt"]
    assert {path.name: oct(_mode(path)) for path in written} == {
        path.name: oct(expected) for path in written
    }


def test_a_replaced_file_has_the_new_content_and_no_temporary_is_left(tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    target.write_text("old")
    atomic_write(target, "new")
    assert target.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_temporaries_of_killed_writers_are_removed_by_the_next_write(tmp_path: Path) -> None:
    dead = _dead_pid()
    stale = tmp_path / f".r.json.{dead}-0123abcd.tmp"
    stale.write_bytes(b"x" * 1000)
    live = tmp_path / f".r.json.{os.getppid()}-89abcdef.tmp"  # a live writer's: kept
    live.write_bytes(b"y")
    atomic_write(tmp_path / "other.csv", "a,b\n")
    assert not stale.exists()
    assert live.exists()


def test_a_release_killed_between_its_renames_is_completed_by_the_next_write(
    tmp_path: Path,
) -> None:
    """The writer renamed the new JSON and was killed before renaming the new CSV: the next
    write into the folder completes the pair, so JSON and CSV agree again."""
    json_path, csv_path = tmp_path / "r.json", tmp_path / "r.csv"
    json_path.write_text("new json")  # already renamed
    csv_path.write_text("old csv")
    dead = _dead_pid()
    pending_csv = tmp_path / f".r.csv.{dead}-00000002.tmp"
    pending_csv.write_text("new csv")
    intent = tmp_path / f".r.json.{dead}-00000001.intent"
    intent.write_text(
        json.dumps(
            {
                "replace": [
                    [str(tmp_path / f".r.json.{dead}-00000001.tmp"), str(json_path)],
                    [str(pending_csv), str(csv_path)],
                ]
            }
        )
    )
    atomic_write(tmp_path / "unrelated.txt", "x")
    assert (json_path.read_text(), csv_path.read_text()) == ("new json", "new csv")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.csv", "r.json", "unrelated.txt"]


def test_a_failed_write_of_one_file_replaces_none(tmp_path: Path) -> None:
    first, second = tmp_path / "a.json", tmp_path / "missing" / "b.csv"
    first.write_text("old")
    with pytest.raises(OutputError, match=r"b\.csv: folder .*missing does not exist"):
        replace_together([(first, "new"), (second, "new")])
    assert first.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json"]


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    with small_tmpfs(tmp_path / "small") as folder:
        yield folder


def test_a_full_disk_is_one_line_and_keeps_the_old_file(small_disk: Path) -> None:
    target = small_disk / "r.json"
    target.write_text("old")
    with pytest.raises(OutputError) as info:
        atomic_write(target, "x" * 200_000)
    assert str(info.value) == f"{target}: the disk is full; nothing was written — free some space"
    assert target.read_text() == "old"
    assert sorted(p.name for p in small_disk.iterdir()) == ["r.json"]


def test_a_read_only_folder_is_one_line(small_disk: Path) -> None:
    target = small_disk / "r.json"
    target.write_text("old")
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    with pytest.raises(OutputError, match=r"r\.json: cannot write there \(read-only file system\)"):
        atomic_write(target, "new")
    assert target.read_text() == "old"
