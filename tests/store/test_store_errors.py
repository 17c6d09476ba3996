"""Every store failure is a one-line message: a lock held too long, a full disk, a read-only
mount, a damaged file — through the Python API and the CLI — and reading needs no lock."""

from __future__ import annotations

import contextlib
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import ABUSE, small_tmpfs, video_info

from vadscene.cli import run
from vadscene.core.catalogue import Catalogue
from vadscene.core.errors import (
    StoreCorruptError,
    StoreFullError,
    StoreLockedError,
    StoreReadOnlyError,
    StoreUnavailableError,
    WorkspaceError,
)
from vadscene.store import database as store_module
from vadscene.store.database import AnnotationStore
from vadscene.store.workspace import STORE_NAME, Workspace


@pytest.fixture
def workspace_root(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    with Workspace.create(root, video_root=None, dataset="errors") as workspace:
        workspace.store.register_videos([video_info(ABUSE)])
        workspace.store.record_decision(ABUSE, "crowd", "few", annotator="ana")
    return root


@pytest.fixture
def lock_holder(workspace_root: Path) -> Iterator[sqlite3.Connection]:
    """Another program holding the store's write lock until the test ends."""
    holder = sqlite3.connect(workspace_root / STORE_NAME, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    yield holder
    holder.execute("ROLLBACK")
    holder.close()


def test_a_lock_held_too_long_is_one_line_and_saves_nothing(
    workspace_root: Path, lock_holder: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_module, "WRITE_PATIENCE_S", 0.5)
    monkeypatch.setattr(store_module, "BUSY_TIMEOUT_S", 0.1)
    with Workspace.open(workspace_root) as workspace:
        with pytest.raises(StoreLockedError) as info:
            workspace.store.record_decision(ABUSE, "crowd", "many", annotator="ana")
        message = str(info.value)
        assert "\n" not in message
        assert message.startswith(f"{workspace_root / STORE_NAME}: another program kept")
        assert isinstance(info.value, StoreUnavailableError)  # the page keeps the key, retries
    lock_holder.execute("ROLLBACK")
    lock_holder.execute("BEGIN")
    with Workspace.open(workspace_root, read_only=True) as workspace:
        assert workspace.store.current_values("ana") == {(ABUSE, "crowd"): "few"}


def test_read_only_commands_work_while_a_writer_holds_the_lock(
    workspace_root: Path,
    lock_holder: sqlite3.Connection,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run(["status", str(workspace_root)]) == 0
    assert run(["export", str(workspace_root), "--out", str(tmp_path / "r.json")]) == 0
    assert "ana" in capsys.readouterr().out
    assert (tmp_path / "r.json").is_file()


@pytest.fixture
def mounted_workspace(tmp_path: Path) -> Iterator[Path]:
    with small_tmpfs(tmp_path / "disk", size="1m") as disk:
        root = disk / "ws"
        with Workspace.create(root, video_root=None, dataset="errors") as workspace:
            workspace.store.register_videos([video_info(ABUSE)])
            workspace.store.record_decision(ABUSE, "crowd", "few", annotator="ana")
        yield root


def test_a_read_only_mount_is_read_and_refuses_writes_in_one_line(
    mounted_workspace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(mounted_workspace.parent)], check=True)
    assert run(["status", str(mounted_workspace)]) == 0
    assert run(["export", str(mounted_workspace), "--out", str(tmp_path / "r.json")]) == 0
    capsys.readouterr()
    with Workspace.open(mounted_workspace) as ws, pytest.raises(StoreReadOnlyError) as info:
        ws.store.record_decision(ABUSE, "crowd", "many", annotator="ana")
    assert "\n" not in str(info.value)
    assert "cannot be written (read-only mount or permissions)" in str(info.value)
    with Workspace.open(mounted_workspace, read_only=True) as workspace:
        assert workspace.store.current_values("ana") == {(ABUSE, "crowd"): "few"}


def test_a_full_disk_is_one_line_and_keeps_what_was_saved(
    mounted_workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    filler = mounted_workspace.parent / "filler"

    def fill_the_disk() -> None:
        with filler.open("ab", buffering=0) as handle, contextlib.suppress(OSError):
            while True:
                handle.write(b"\0" * 4096)

    with Workspace.open(mounted_workspace) as workspace:
        workspace.store.current_values("ana")  # the app has the store open
        fill_the_disk()
        with pytest.raises(StoreFullError) as info:
            for index in range(2000):  # the WAL grows until a page no longer fits
                workspace.store.record_decision(
                    ABUSE, "crowd", ("few", "many")[index % 2], annotator="ben", note="x" * 500
                )
    assert str(info.value) == (
        f"{mounted_workspace / STORE_NAME}: the disk is full; nothing was saved — free some space"
    )
    fill_the_disk()
    with pytest.raises(StoreFullError, match=r"the disk is full; could not be opened"):
        Workspace.open(mounted_workspace).store.videos()
    filler.unlink()
    with Workspace.open(mounted_workspace) as workspace:
        assert workspace.store.current_values("ana") == {(ABUSE, "crowd"): "few"}
        assert workspace.store.integrity_check() == "ok"


def test_a_damaged_store_is_one_line(tmp_path: Path, catalogue: Catalogue) -> None:
    path = tmp_path / STORE_NAME
    path.write_bytes(b"SQLite format 3\0" + b"\xff" * 5000)
    with pytest.raises(StoreCorruptError) as info:
        AnnotationStore(path, catalogue)
    assert str(info.value).startswith(f"{path}: not a usable vadscene store")
    assert "\n" not in str(info.value)


# --- interrupted creation leaves nothing that looks like a workspace ---------------------------

KILLED_IMPORT = """
import os, signal, sys
import vadscene.release.releases as release_module
from vadscene.release.releases import read_release, workspace_from_release

real_import = release_module.import_release

def import_then_die(release, workspace, **kwargs):
    real_import(release, workspace, **kwargs)
    os.kill(os.getpid(), signal.SIGKILL)  # the import is in the store; nothing after it ran

release_module.import_release = import_then_die
workspace_from_release(read_release(sys.argv[1]), sys.argv[2])
"""


def test_a_killed_import_into_a_new_folder_leaves_no_workspace(
    annotated: Workspace, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from vadscene.release.releases import build_release, write_release

    release_path = tmp_path / "r.json"
    write_release(build_release(annotated), release_path)
    target = tmp_path / "new" / "ws"
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_IMPORT, str(release_path), str(target)], check=False
    )
    assert killed.returncode == -signal.SIGKILL
    assert not (target / "vadscene.yaml").exists()
    with pytest.raises(WorkspaceError, match="creating this workspace was interrupted"):
        Workspace.open(target)

    assert run(["import", str(target), str(release_path)]) == 0
    assert "created" in capsys.readouterr().out  # a fresh workspace, not a merge into leftovers
    with Workspace.open(target) as fresh:
        # cleared decisions travel too, as withdrawals
        assert len(fresh.store.decision_log()) == len(annotated.store.current_decisions())
    assert not (target / ".vadscene-incomplete").exists()


def test_init_onto_a_full_disk_is_one_line_and_leaves_nothing(
    tmp_path: Path, small_videos: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with small_tmpfs(tmp_path / "disk", size="24k") as disk:
        code = run(["init", str(disk / "ws"), "--videos", str(small_videos)])
        message = capsys.readouterr().err.strip()
        assert code == 1
        assert message.startswith(f"error: {disk / 'ws'}")
        assert "the disk is full" in message
        assert "\n" not in message
        assert list(disk.iterdir()) == []
