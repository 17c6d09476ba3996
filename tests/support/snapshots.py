"""An annotation store's bytes and rows, taken before and after a command, to tell whether the
command changed the store (:func:`store_changes`)."""

from __future__ import annotations

import contextlib
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class StoreSnapshot:
    """An annotation store's bytes (database and WAL file) and every row of every table."""

    database: bytes
    wal: bytes | None
    tables: dict[str, list[tuple[Any, ...]]]


def snapshot_store(path: Path) -> StoreSnapshot:
    """Checkpoint the WAL into the database file, then read the files and the rows.

    Call it with no connection open: the checkpoint moves every committed page into the main
    file, so two snapshots of the same content have the same bytes, and a write that is still
    only in the WAL shows up as a difference.
    """
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=rw", uri=True)) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        tables = {name: db.execute(f'SELECT * FROM "{name}"').fetchall() for name in names}
    wal = Path(f"{path}-wal")
    return StoreSnapshot(path.read_bytes(), wal.read_bytes() if wal.exists() else None, tables)


def store_changes(
    before: StoreSnapshot, after: StoreSnapshot, *, may_change: frozenset[str] = frozenset()
) -> list[str]:
    """What differs between two snapshots; empty when the store is unchanged.

    With ``may_change`` empty the files must be identical byte for byte. Commands that record
    a problem by design (scan: unreadable files; measure: failures) name those tables; every
    other table must keep exactly its rows.
    """
    changed = sorted(
        name
        for name in before.tables.keys() | after.tables.keys()
        if before.tables.get(name) != after.tables.get(name) and name not in may_change
    )
    found = [f"table {name} changed" for name in changed]
    if (
        not may_change
        and not found
        and (before.database, before.wal) != (after.database, after.wal)
    ):
        found.append("the store's bytes changed (its rows did not)")
    return found
