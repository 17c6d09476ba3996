"""The store snapshot the bad-input table compares (:mod:`support.snapshots`) notices every kind
of change: rows, a write still in the WAL, rewritten bytes with the same rows."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from support.examples import GOOD, registry_workspace
from support.snapshots import snapshot_store, store_changes

from vadscene.store.workspace import STORE_NAME, Workspace


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return registry_workspace(tmp_path) / STORE_NAME


def test_an_untouched_store_compares_equal(store_path: Path) -> None:
    before = snapshot_store(store_path)
    with Workspace.open(store_path.parent) as workspace:
        workspace.store.videos()  # open, read, close
    assert store_changes(before, snapshot_store(store_path)) == []


def test_a_committed_decision_is_a_change(store_path: Path) -> None:
    before = snapshot_store(store_path)
    with Workspace.open(store_path.parent) as workspace:
        workspace.store.record_decision(GOOD, "color", "color", annotator="ana")
    changes = store_changes(before, snapshot_store(store_path))
    assert "table decisions changed" in changes
    assert (
        store_changes(
            before,
            snapshot_store(store_path),
            may_change=frozenset({"decisions", "current_decision_ids", "sqlite_sequence"}),
        )
        == []
    )


def test_a_write_still_in_the_wal_is_a_change(store_path: Path) -> None:
    before = snapshot_store(store_path)
    holder = sqlite3.connect(store_path)  # keeps the WAL from being folded back at close
    holder.execute("PRAGMA wal_autocheckpoint = 0")
    holder.execute("INSERT INTO meta (key, value) VALUES ('x', 'y')")
    holder.commit()
    try:
        assert store_changes(before, snapshot_store(store_path)) == ["table meta changed"]
    finally:
        holder.close()


def test_rewritten_bytes_with_the_same_rows_are_a_change(store_path: Path) -> None:
    before = snapshot_store(store_path)
    with sqlite3.connect(store_path) as db:
        db.execute("PRAGMA page_size = 8192")
    with sqlite3.connect(store_path) as db:
        db.execute("PRAGMA journal_mode = DELETE")
        db.execute("VACUUM")
        db.execute("PRAGMA journal_mode = WAL")
    assert store_changes(before, snapshot_store(store_path)) == [
        "the store's bytes changed (its rows did not)"
    ]
