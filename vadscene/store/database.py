"""The SQLite annotation store — all SQL of vadscene lives here and in
:mod:`vadscene.store.migrations` (the schema and its upgrades).

Durability is the point of this module: an annotator's decision is committed in its own
transaction before :meth:`AnnotationStore.record_decision` returns, a threshold rule in one
transaction with the auto poles it changed (:meth:`AnnotationStore.apply_threshold`), and
nothing is ever updated or deleted. Decisions form an append-only log (triggers refuse UPDATE
and DELETE); the current state is derived from it — the latest row per (video, factor,
annotator). Undo appends a row that restores the value in force before the undone decision.
Per-video flags, skips and notes are an append-only log too.

"Current" is the latest ``decided_at`` per (video, factor, annotator), the row id breaking ties
only: merging a colleague's release, which carries older copies of one's own decisions, never
goes back in time. A decision is identified by its content (video, factor, annotator, value,
source, decided_at), so importing one the log already holds adds nothing. The table
``current_decision_ids`` holds the current row per key; a trigger maintains it in the
transaction of every insert, so current-state lookups are index lookups however long the log.

The database runs in WAL mode with ``synchronous=FULL`` (a committed decision survives a power
cut, not only a killed process), so several processes — two annotators, or the app and a CLI —
may write at once. Writes take the lock up front (``BEGIN IMMEDIATE``) so two writers never
deadlock upgrading read locks; a busy lock is waited for (busy timeout) and retried with
backoff for :data:`WRITE_PATIENCE_S`, and writes are short — bulk imports commit in batches of
at most :data:`BATCH_TARGET_S` — so an annotator's click never waits behind an import. Every
write validates its input before it writes and writes nothing when it is refused. A store opened
read-only (``read_only=True``) never takes a write lock, and works on a read-only mount.

Every SQLite failure leaves this module as a :class:`~vadscene.core.errors.StoreError` with a
one-line message: :class:`~vadscene.core.errors.StoreLockedError`,
:class:`~vadscene.core.errors.StoreFullError`, :class:`~vadscene.core.errors.StoreReadOnlyError`
(all :class:`~vadscene.core.errors.StoreUnavailableError`: the input was fine, retry later) or
:class:`~vadscene.core.errors.StoreCorruptError`.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar
from urllib.parse import quote

from vadscene.core.catalogue import AMBIGUOUS, Catalogue
from vadscene.core.errors import (
    StoreCorruptError,
    StoreError,
    StoreFullError,
    StoreLockedError,
    StoreReadOnlyError,
    StoreUnavailableError,
)
from vadscene.core.records import (
    AUTO_ANNOTATOR,
    AutoThreshold,
    DecisionSource,
    FactorDecision,
    Measurement,
    VideoInfo,
    VideoMarks,
)
from vadscene.store.migrations import SCHEMA_VERSION, time_key, upgrade

BUSY_TIMEOUT_S = 2.0
"""How long one attempt to take the write lock waits (SQLite's busy handler)."""

WRITE_PATIENCE_S = 30.0
"""How long a write keeps retrying a busy lock (with backoff) before it gives up with
:class:`~vadscene.core.errors.StoreLockedError`. Writes are short, so only a stuck or foreign writer
holds the lock this long."""

BATCH_TARGET_S = 0.03
"""Bulk writes (imports) commit in batches sized to take about this long, so the write lock is
held well under 100 ms even when a commit's fsync is slow: an annotator's decision waits at
most one batch."""

WAL_AUTOCHECKPOINT_PAGES = 1000
"""SQLite's default: single writes fold the WAL back into the database every 1000 pages."""

CACHE_KIB = 64 * 1024
"""SQLite page cache per connection. A 600k-decision log has five indexes; with SQLite's 2 MB
default their random inserts and lookups miss the cache and an import slows down as it grows."""

MARK_KINDS = ("flag", "skip", "note")


T = TypeVar("T")

_SAME_CONTENT = (
    "d.video_id = i.video_id AND d.factor = i.factor AND d.annotator = i.annotator "
    "AND d.decided_at = i.decided_at AND d.value IS i.value AND d.source = i.source"
)
"""Decision ``d`` has the content of decision ``i``: what identifies a decision across stores."""


def utc_now() -> str:
    """The current time as the ISO 8601 UTC text every timestamp in the store uses."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


@dataclass(frozen=True)
class Decision:
    """One row of the decision log. ``value`` None means the annotator cleared the factor."""

    decision_id: int
    video_id: str
    factor: str
    value: str | None
    annotator: str
    source: DecisionSource
    decided_at: str
    note: str | None
    undoes: int | None
    replaced_auto_value: str | None
    replaced_measurement: float | None


@dataclass(frozen=True)
class Conflict:
    """An imported decision older than the local current one on its key, with another value:
    it joins the log as history and the local (newer) value stays current."""

    video_id: str
    factor: str
    annotator: str
    imported_value: str | None
    imported_at: str
    local_value: str | None
    local_at: str


@dataclass(frozen=True)
class ImportCounts:
    """What a release import added to the store."""

    videos_added: int
    decisions_added: int
    decisions_already_present: int
    marks_set: int
    conflicts: tuple[Conflict, ...] = ()
    added_by_annotator: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Progress:
    """Annotation progress of one annotator over the manual factors."""

    videos: int
    complete: int
    decided_by_factor: dict[str, int]


_DECISION_COLUMNS = (
    "decision_id, video_id, factor, value, annotator, source, decided_at, note, undoes, "
    "replaced_auto_value, replaced_measurement"
)


class AnnotationStore:
    """The annotation database of one workspace.

    One instance holds one connection, shared by threads under a lock (Streamlit runs scripts
    in threads); separate processes open their own instance on the same file.
    """

    def __init__(self, path: Path | str, catalogue: Catalogue, *, read_only: bool = False) -> None:
        self.path = Path(path)
        self.catalogue = catalogue
        self.read_only = read_only
        self._factor_keys = frozenset(catalogue.keys)
        self.last_hold_s = 0.0
        """How long the latest write transaction held the write lock (commit included)."""
        self.longest_hold_s = 0.0
        """The longest such hold since the store was opened (benchmarks report it)."""
        self._lock = threading.RLock()
        if not self.path.parent.is_dir():
            raise StoreError(f"{self.path}: folder {self.path.parent} does not exist")
        if read_only and not self.path.is_file():
            raise StoreError(f"{self.path}: no annotation store there")
        try:
            self._db = self._connect()
        except sqlite3.Error as exc:
            raise _store_error(self.path, exc, opening=True) from None
        try:
            if read_only:
                self._check_readable_version()
            else:
                self._migrate()
        except sqlite3.Error as exc:
            self._db.close()
            raise _store_error(self.path, exc, opening=True) from None
        except BaseException:
            self._db.close()
            raise

    def _connect(self) -> sqlite3.Connection:
        """A connection: read-write (WAL, full sync, foreign keys), or read-only.

        Read-only opens with ``mode=ro``, which takes no write lock and creates nothing; on a
        read-only mount, where SQLite cannot create the WAL index beside the file, it falls
        back to ``immutable=1`` (nobody can be writing a file on a read-only mount).
        """
        if self.read_only:
            uri = f"file:{quote(str(self.path.resolve()))}?mode=ro"
            try:
                db = _sqlite_connect(uri, uri=True)
                db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            except sqlite3.OperationalError:
                db = _sqlite_connect(uri + "&immutable=1", uri=True)
            db.execute("PRAGMA query_only=ON")
            db.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
            return db
        db = _sqlite_connect(self.path)
        self._retry_busy(lambda: db.execute("PRAGMA journal_mode=WAL"))
        db.execute("PRAGMA synchronous=FULL")
        db.execute("PRAGMA foreign_keys=ON")
        db.execute("PRAGMA temp_store=MEMORY")
        db.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
        return db

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> AnnotationStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- plumbing -------------------------------------------------------------------------

    def _retry_busy(self, attempt: Callable[[], object]) -> None:
        """Run ``attempt`` until it does not meet a busy lock, backing off, for at most
        :data:`WRITE_PATIENCE_S`; then :class:`StoreLockedError`."""
        deadline = time.monotonic() + WRITE_PATIENCE_S
        pause = 0.01
        while True:
            try:
                attempt()
                return
            except sqlite3.OperationalError as exc:
                if not _is_busy(exc) or time.monotonic() + pause > deadline:
                    raise
            time.sleep(pause)
            pause = min(pause * 2, 0.5)

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction holding the database lock from its start.

        Taking the lock is retried while another writer holds it; inside the transaction no
        lock is waited for (WAL), so the body runs once. Any SQLite failure rolls back and
        leaves as a :class:`StoreError` subclass.
        """
        if self.read_only:
            raise StoreReadOnlyError(
                f"{self.path}: the store was opened read-only; nothing was written"
            )
        with self._lock:
            try:
                self._retry_busy(lambda: self._db.execute("BEGIN IMMEDIATE"))
            except sqlite3.Error as exc:
                raise _store_error(self.path, exc) from None
            locked_at = time.monotonic()
            try:
                yield self._db
                self._db.execute("COMMIT")
                self.last_hold_s = time.monotonic() - locked_at
                self.longest_hold_s = max(self.longest_hold_s, self.last_hold_s)
            except BaseException as exc:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise _store_error(self.path, exc) from None
                raise

    def _pragma(self, pragma: str) -> None:
        with self._lock:
            try:
                self._db.execute(f"PRAGMA {pragma}").fetchall()
            except sqlite3.Error as exc:
                raise _store_error(self.path, exc) from None

    def _read(self, sql: str, params: Sequence[object] = ()) -> list[tuple]:
        with self._lock:
            try:
                return self._db.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise _store_error(self.path, exc) from None

    def _migrate(self) -> None:
        """Upgrade the schema; takes the write lock only when there is something to upgrade."""
        if self._db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
            return
        with self._write() as db:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            self._refuse_newer(version)
            upgrade(db, version)

    def _check_readable_version(self) -> None:
        """Refuse a newer schema; upgrade an older one once through a writing connection
        (reading commands are often the first to meet a store after a vadscene upgrade)."""
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        self._refuse_newer(version)
        if version == SCHEMA_VERSION:
            return
        try:
            AnnotationStore(self.path, self.catalogue).close()
        except StoreUnavailableError:
            raise StoreError(
                f"{self.path}: store schema version {version} needs upgrading to "
                f"{SCHEMA_VERSION}, which needs write access; run any vadscene command on it "
                "once where it can be written"
            ) from None
        self._db.close()
        self._db = self._connect()

    def _refuse_newer(self, version: int) -> None:
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path}: store schema version {version} is newer than this vadscene "
                f"understands ({SCHEMA_VERSION}); upgrade vadscene"
            )

    @property
    def schema_version(self) -> int:
        return int(self._read("PRAGMA user_version")[0][0])

    # --- metadata and videos --------------------------------------------------------------

    def set_meta(self, key: str, value: str) -> None:
        with self._write() as db:
            db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def register_videos(self, videos: Iterable[VideoInfo]) -> tuple[int, int]:
        """Add or refresh videos, in short transactions; returns (added, updated).

        A re-registered video keeps all its decisions: only its probe fields change.
        """
        counts = [0, 0]

        def register(db: sqlite3.Connection, batch: Sequence[VideoInfo]) -> int:
            added, updated = self._register_videos(db, batch)
            counts[0] += added
            counts[1] += updated
            return added

        self._in_batches(list(videos), register)
        return counts[0], counts[1]

    @staticmethod
    def _register_videos(db: sqlite3.Connection, videos: Iterable[VideoInfo]) -> tuple[int, int]:
        added = updated = 0
        now = utc_now()
        for video in videos:
            fields = video.model_dump()
            columns = list(fields)
            exists = db.execute(
                "SELECT 1 FROM videos WHERE video_id = ?", (video.video_id,)
            ).fetchone()
            if exists:
                db.execute(
                    f"UPDATE videos SET {', '.join(f'{c} = ?' for c in columns[1:])} "
                    "WHERE video_id = ?",
                    [fields[c] for c in columns[1:]] + [video.video_id],
                )
                updated += 1
            else:
                db.execute(
                    f"INSERT INTO videos ({', '.join(columns)}, registered_at) "
                    f"VALUES ({', '.join('?' * (len(columns) + 1))})",
                    [*fields.values(), now],
                )
                added += 1
            db.execute("DELETE FROM unreadable_files WHERE path = ?", (video.path,))
        return added, updated

    def record_unreadable(self, failures: Iterable[tuple[str, str]]) -> None:
        """Remember files that could not be registered, as (path, reason)."""
        now = utc_now()
        with self._write() as db:
            db.executemany(
                "INSERT OR REPLACE INTO unreadable_files (path, reason, seen_at) VALUES (?, ?, ?)",
                [(path, reason, now) for path, reason in failures],
            )

    def unreadable_files(self) -> list[tuple[str, str]]:
        return self._read("SELECT path, reason FROM unreadable_files ORDER BY path")

    def videos(self) -> list[VideoInfo]:
        """Every registered video, sorted by id."""
        names = list(VideoInfo.model_fields)
        rows = self._read(f"SELECT {', '.join(names)} FROM videos ORDER BY video_id")
        return [VideoInfo(**dict(zip(names, row, strict=True))) for row in rows]

    def video(self, video_id: str) -> VideoInfo:
        names = list(VideoInfo.model_fields)
        rows = self._read(f"SELECT {', '.join(names)} FROM videos WHERE video_id = ?", (video_id,))
        if not rows:
            count = self._read("SELECT COUNT(*) FROM videos")[0][0]
            raise StoreError(
                f"unknown video '{video_id}' (the store at {self.path} registers {count} videos)"
            )
        return VideoInfo(**dict(zip(names, rows[0], strict=True)))

    def video_ids(self) -> list[str]:
        return [r[0] for r in self._read("SELECT video_id FROM videos ORDER BY video_id")]

    def _require_video(self, db: sqlite3.Connection, video_id: str) -> None:
        if not db.execute("SELECT 1 FROM videos WHERE video_id = ?", (video_id,)).fetchone():
            count = db.execute("SELECT COUNT(*) FROM videos").fetchone()[0]
            raise StoreError(
                f"unknown video '{video_id}' (the store at {self.path} registers {count} videos)"
            )

    # --- decisions ------------------------------------------------------------------------

    def record_decision(
        self,
        video_id: str,
        factor: str,
        value: str | None,
        *,
        annotator: str,
        source: DecisionSource = "manual",
        note: str | None = None,
        decided_at: str | None = None,
    ) -> Decision:
        """Append one decision and commit it before returning.

        ``value`` is one of the factor's values, ``"ambiguous"``, or None to clear. A manual
        decision on an auto factor is stored with source ``override``, together with the auto
        pole and the measured statistic it replaced. Raises :class:`StoreError` and writes
        nothing for an unknown video or factor, a value the factor does not allow, an empty
        annotator name, or an annotator/source mismatch.
        """
        with self._write() as db:
            return self._append_decision(
                db,
                video_id,
                factor,
                value,
                annotator=annotator,
                source=source,
                note=note,
                decided_at=decided_at,
            )

    def _append_decision(
        self,
        db: sqlite3.Connection,
        video_id: str,
        factor: str,
        value: str | None,
        *,
        annotator: str,
        source: DecisionSource,
        note: str | None,
        decided_at: str | None,
        replaced: tuple[str | None, float | None] | None = None,
    ) -> Decision:
        source = self._checked_source(video_id, factor, value, annotator, source)
        self._require_video(db, video_id)
        if replaced is None:
            replaced = (
                self._auto_state(db, video_id, factor) if source == "override" else (None, None)
            )
        return self._insert_decision(
            db,
            (
                video_id,
                factor,
                value,
                annotator,
                source,
                decided_at or utc_now(),
                note,
                None,
                *replaced,
            ),
        )

    def _checked_source(
        self,
        video_id: str,
        factor: str,
        value: str | None,
        annotator: str,
        source: DecisionSource,
    ) -> DecisionSource:
        """Refuse a decision the catalogue does not allow; returns its source as stored (a
        manual decision on an auto factor is an ``override``)."""
        if factor not in self._factor_keys:
            raise StoreError(
                f"video '{video_id}': unknown factor '{factor}' "
                f"(catalogue '{self.catalogue.name}' has: {', '.join(self.catalogue.keys)})"
            )
        spec = self.catalogue.factor(factor)
        if value is not None and not spec.allows(value):
            raise StoreError(
                f"video '{video_id}', factor '{factor}': value '{value}' is not allowed "
                f"(expected one of: {', '.join([*spec.values, AMBIGUOUS])})"
            )
        _check_annotator(annotator, source)
        if source == "auto" and spec.source != "auto":
            raise StoreError(f"factor '{factor}' is manual; it takes no 'auto' decisions")
        if source == "override" and spec.source != "auto":
            raise StoreError(f"factor '{factor}' is manual; there is no auto pole to override")
        if source == "manual" and spec.source == "auto":
            return "override"
        return source

    def _auto_state(
        self, db: sqlite3.Connection, video_id: str, factor: str
    ) -> tuple[str | None, float | None]:
        row = db.execute(
            "SELECT value FROM current_decisions WHERE video_id = ? AND factor = ? "
            "AND annotator = ?",
            (video_id, factor, AUTO_ANNOTATOR),
        ).fetchone()
        rule = self.catalogue.factor(factor).auto
        measured = db.execute(
            "SELECT value FROM measurements WHERE video_id = ? AND statistic = ?",
            (video_id, rule.statistic if rule else factor),
        ).fetchone()
        return (row[0] if row else None), (measured[0] if measured else None)

    def _insert_decision(self, db: sqlite3.Connection, row: tuple) -> Decision:
        cursor = db.execute(
            f"INSERT INTO decisions ({_DECISION_COLUMNS.split(', ', 1)[1]}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            row,
        )
        # sqlite3 leaves lastrowid None until an INSERT on the cursor succeeds: None would mean
        # the row was not written.
        if cursor.lastrowid is None:
            raise StoreError(f"{self.path}: the decision log gave no id for a new decision")
        return Decision(cursor.lastrowid, *row)

    def undo_last(self, annotator: str) -> Decision | None:
        """Undo the annotator's latest decision that is not yet undone; None if nothing is left.

        Appends a decision (``undoes`` = the undone id) carrying the value that was in force
        for that video, factor and annotator before the undone decision. Repeated calls walk
        further back through the annotator's history.
        """
        with self._write() as db:
            target = db.execute(
                f"SELECT {_DECISION_COLUMNS} FROM decisions AS d WHERE annotator = ? "
                "AND undoes IS NULL AND NOT EXISTS "
                "(SELECT 1 FROM decisions AS u WHERE u.undoes = d.decision_id) "
                "ORDER BY decision_id DESC LIMIT 1",
                (annotator,),
            ).fetchone()
            if target is None:
                return None
            undone = Decision(*target)
            # "before" in the order that defines current: decision time, then row id
            key = time_key("decided_at")
            before = db.execute(
                "SELECT value, source, note, replaced_auto_value, replaced_measurement "
                "FROM decisions WHERE video_id = :video AND factor = :factor "
                f"AND annotator = :annotator AND ({key} < {time_key(':at')} "
                f"OR ({key} = {time_key(':at')} AND decision_id < :id)) "
                f"ORDER BY {key} DESC, decision_id DESC LIMIT 1",
                {
                    "video": undone.video_id,
                    "factor": undone.factor,
                    "annotator": annotator,
                    "at": undone.decided_at,
                    "id": undone.decision_id,
                },
            ).fetchone()
            value, source, note, replaced_value, replaced_measurement = before or (
                None,
                undone.source,
                None,
                None,
                None,
            )
            return self._insert_decision(
                db,
                (
                    undone.video_id,
                    undone.factor,
                    value,
                    annotator,
                    source,
                    utc_now(),
                    note,
                    undone.decision_id,
                    replaced_value,
                    replaced_measurement,
                ),
            )

    def decision_log(self, *, annotator: str | None = None) -> list[Decision]:
        """The whole log in commit order (optionally one annotator's)."""
        where, params = ("WHERE annotator = ?", (annotator,)) if annotator else ("", ())
        rows = self._read(
            f"SELECT {_DECISION_COLUMNS} FROM decisions {where} ORDER BY decision_id", params
        )
        return [Decision(*r) for r in rows]

    def current_decisions(
        self, *, video_id: str | None = None, annotator: str | None = None
    ) -> list[Decision]:
        """The current decision per (video, factor, annotator), cleared ones included: the
        latest ``decided_at``, the row id breaking ties. An index lookup per (video,
        annotator), however long the log."""
        clauses, params = [], []
        if video_id is not None:
            clauses.append("video_id = ?")
            params.append(video_id)
        if annotator is not None:
            clauses.append("annotator = ?")
            params.append(annotator)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        rows = self._read(
            f"SELECT {_DECISION_COLUMNS} FROM current_decisions {where} "
            "ORDER BY video_id, factor, annotator",
            params,
        )
        return [Decision(*r) for r in rows]

    def current_values(self, annotator: str) -> dict[tuple[str, str], str]:
        """(video, factor) → value for one annotator; cleared factors are absent."""
        return {
            (d.video_id, d.factor): d.value
            for d in self.current_decisions(annotator=annotator)
            if d.value is not None
        }

    def annotators(self) -> list[str]:
        """Human annotators with at least one decision or mark."""
        rows = self._read(
            "SELECT annotator FROM decisions WHERE annotator != ? UNION "
            "SELECT annotator FROM marks ORDER BY 1",
            (AUTO_ANNOTATOR,),
        )
        return [r[0] for r in rows]

    def progress(self, annotator: str) -> Progress:
        """How many videos the annotator has decided every manual factor of."""
        manual = [f.key for f in self.catalogue.factors if f.source == "manual"]
        values = self.current_values(annotator)
        per_video: dict[str, int] = {}
        decided = dict.fromkeys(manual, 0)
        for video_id, factor in values:
            if factor in decided:
                decided[factor] += 1
                per_video[video_id] = per_video.get(video_id, 0) + 1
        complete = sum(1 for n in per_video.values() if n == len(manual))
        return Progress(len(self.video_ids()), complete, decided)

    # --- marks ----------------------------------------------------------------------------

    def set_mark(
        self,
        video_id: str,
        kind: str,
        value: bool | str | None,
        *,
        annotator: str,
        marked_at: str | None = None,
    ) -> None:
        """Flag/unflag, skip/unskip (bool) or set the note (text, None clears) of a video."""
        if kind not in MARK_KINDS:
            raise StoreError(f"unknown mark '{kind}' (expected one of: {', '.join(MARK_KINDS)})")
        with self._write() as db:
            self._append_mark(db, video_id, kind, value, annotator, marked_at)

    def _append_mark(
        self,
        db: sqlite3.Connection,
        video_id: str,
        kind: str,
        value: bool | str | None,
        annotator: str,
        marked_at: str | None,
    ) -> None:
        _check_annotator(annotator, "manual")
        if kind == "note":
            if value is not None and not isinstance(value, str):
                raise StoreError(f"video '{video_id}': a note must be text, got {value!r}")
            stored = value or None
        else:
            if not isinstance(value, bool):
                raise StoreError(f"video '{video_id}': mark '{kind}' takes true/false")
            stored = "1" if value else "0"
        self._require_video(db, video_id)
        db.execute(
            "INSERT INTO marks (video_id, annotator, kind, value, marked_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (video_id, annotator, kind, stored, marked_at or utc_now()),
        )

    def marks(self, *, video_id: str | None = None) -> dict[tuple[str, str], dict[str, object]]:
        """(video, annotator) → {'flag': bool, 'skip': bool, 'note': str|None} (current)."""
        with self._lock:
            return self._current_marks(self._db, video_id)

    @staticmethod
    def _current_marks(
        db: sqlite3.Connection, video_id: str | None
    ) -> dict[tuple[str, str], dict[str, object]]:
        where, params = ("WHERE video_id = ?", (video_id,)) if video_id else ("", ())
        rows = db.execute(
            "SELECT video_id, annotator, kind, value FROM marks WHERE mark_id IN "
            f"(SELECT MAX(mark_id) FROM marks {where} GROUP BY video_id, annotator, kind)",
            params,
        ).fetchall()
        current: dict[tuple[str, str], dict[str, object]] = {}
        for vid, annotator, kind, value in rows:
            entry = current.setdefault(
                (vid, annotator), {"flag": False, "skip": False, "note": None}
            )
            entry[kind] = value if kind == "note" else value == "1"
        return current

    # --- measurements and thresholds ------------------------------------------------------

    def record_measurement(self, video_id: str, statistic: str, measurement: Measurement) -> None:
        """Store (replace) one measured statistic of a video."""
        with self._write() as db:
            self._record_measurement(db, video_id, statistic, measurement)

    def _record_measurement(
        self, db: sqlite3.Connection, video_id: str, statistic: str, measurement: Measurement
    ) -> None:
        self._require_video(db, video_id)
        db.execute(
            "INSERT OR REPLACE INTO measurements (video_id, statistic, value, params, "
            "decoder, frames_read, seconds, measured_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                video_id,
                statistic,
                measurement.value,
                json.dumps(measurement.params, sort_keys=True),
                measurement.decoder,
                measurement.frames_read,
                measurement.seconds,
                measurement.measured_at.isoformat(),
            ),
        )

    def record_video_measurements(
        self, video_id: str, stats: dict[str, Measurement], *, undefined: Iterable[str] = ()
    ) -> None:
        """Store every statistic of one video at once and clear its recorded failure.

        ``undefined`` names statistics this measurement found to have no value (motion
        without a normal frame pair): an earlier value of theirs is deleted in the same
        transaction, so it cannot outlive the inputs that made it.
        """
        with self._write() as db:
            for statistic, measurement in stats.items():
                self._record_measurement(db, video_id, statistic, measurement)
            db.executemany(
                "DELETE FROM measurements WHERE video_id = ? AND statistic = ?",
                [(video_id, statistic) for statistic in undefined],
            )
            db.execute("DELETE FROM measurement_failures WHERE video_id = ?", (video_id,))

    def record_measurement_failure(
        self, video_id: str, reason: str, params: Mapping[str, object]
    ) -> None:
        """Remember why a video could not be measured (replacing an earlier failure)."""
        with self._write() as db:
            self._require_video(db, video_id)
            db.execute(
                "INSERT OR REPLACE INTO measurement_failures (video_id, reason, params, "
                "failed_at) VALUES (?, ?, ?, ?)",
                (video_id, reason, json.dumps(params, sort_keys=True), utc_now()),
            )

    def measurement_failures(self) -> list[tuple[str, str]]:
        """(video, reason) of every video whose last measurement failed."""
        return self._read("SELECT video_id, reason FROM measurement_failures ORDER BY video_id")

    def measurements(self, *, video_id: str | None = None) -> dict[str, dict[str, Measurement]]:
        """video → statistic → measurement (of one video, if ``video_id`` is given: a page
        showing a few videos then parses their rows, not the whole workspace's)."""
        where, params = ("WHERE video_id = ?", (video_id,)) if video_id else ("", ())
        rows = self._read(
            "SELECT video_id, statistic, value, params, decoder, frames_read, seconds, "
            f"measured_at FROM measurements {where} ORDER BY video_id, statistic",
            params,
        )
        result: dict[str, dict[str, Measurement]] = {}
        for vid, stat, value, params, decoder, frames, seconds, at in rows:
            result.setdefault(vid, {})[stat] = Measurement(
                value=value,
                params=json.loads(params),
                decoder=decoder,
                frames_read=frames,
                seconds=seconds,
                measured_at=at,
            )
        return result

    def set_threshold(
        self,
        factor: str,
        statistic: str,
        rule: str,
        thresholds: Sequence[float],
        *,
        set_at: str | None = None,
    ) -> None:
        """Record the dataset-level threshold rule of an auto factor."""
        with self._write() as db:
            self._set_threshold(db, factor, statistic, rule, thresholds, set_at)

    def apply_threshold(
        self,
        factor: str,
        statistic: str,
        rule: str,
        thresholds: Sequence[float],
        poles: Iterable[tuple[str, str]],
        *,
        note: str | None = None,
    ) -> None:
        """Record an auto factor's threshold rule and the auto poles it changed, in one
        transaction.

        Each (video, pole) of ``poles`` is appended as a decision of annotator ``auto`` (source
        ``auto``) with ``note``. The rule and every pole are committed together or, refused or
        interrupted, not at all: no pole ever stands under a rule the store does not hold.
        """
        with self._write() as db:
            for video_id, pole in poles:
                self._append_decision(
                    db,
                    video_id,
                    factor,
                    pole,
                    annotator=AUTO_ANNOTATOR,
                    source="auto",
                    note=note,
                    decided_at=None,
                )
            self._set_threshold(db, factor, statistic, rule, thresholds, None)

    def _set_threshold(
        self,
        db: sqlite3.Connection,
        factor: str,
        statistic: str,
        rule: str,
        thresholds: Sequence[float],
        set_at: str | None,
    ) -> None:
        self.catalogue.factor(factor)
        if not all(math.isfinite(t) for t in thresholds):
            raise StoreError(
                f"factor '{factor}': thresholds must be finite numbers, got {list(thresholds)}"
            )
        db.execute(
            "INSERT OR REPLACE INTO thresholds (factor, statistic, rule, thresholds, set_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (factor, statistic, rule, json.dumps(list(thresholds)), set_at or utc_now()),
        )

    def thresholds(self) -> list[tuple[str, str, str, list[float], str]]:
        rows = self._read(
            "SELECT factor, statistic, rule, thresholds, set_at FROM thresholds ORDER BY factor"
        )
        return [(f, s, r, json.loads(t), at) for f, s, r, t, at in rows]

    # --- bulk import ----------------------------------------------------------------------

    def import_rows(
        self,
        *,
        videos: Iterable[VideoInfo],
        decisions: Iterable[tuple[str, str, FactorDecision]],
        marks: Iterable[tuple[str, VideoMarks]],
        measurements: Iterable[tuple[str, str, Measurement]],
        thresholds: Iterable[AutoThreshold],
    ) -> ImportCounts:
        """Merge released rows; every row is checked before anything is written.

        A decision the log already holds (same video, factor, annotator, value, source and
        decision time) is skipped, so importing a release twice changes nothing; any other is
        appended with its original time and provenance and becomes current only if it is the
        latest decision on its key — an imported decision older than the local current one
        with another value is reported as a :class:`Conflict` and stays history.

        Cost is linear in the rows: duplicates are found by one indexed set operation over a
        temporary table, and rows are written in short transactions (:data:`BATCH_TARGET_S`)
        so annotators keep working meanwhile. An interrupted import leaves a prefix of the
        rows, and importing the same release again completes it.
        """
        videos, marks = list(videos), list(marks)
        measurements, thresholds = list(measurements), list(thresholds)
        known = {row[0] for row in self._read("SELECT video_id FROM videos")}
        known.update(v.video_id for v in videos)
        rows = []
        for video_id, factor, d in decisions:
            source = self._checked_source(video_id, factor, d.value, d.annotator, d.source)
            self._require_known(video_id, known)
            rows.append(
                (
                    video_id,
                    factor,
                    d.value,
                    d.annotator,
                    source,
                    d.decided_at.isoformat(timespec="microseconds"),
                    d.note,
                    d.replaced_auto_value,
                    d.replaced_measurement,
                )
            )
        for video_id, m in marks:
            _check_annotator(m.annotator, "manual")
            self._require_known(video_id, known)
        for video_id, _statistic, _measurement in measurements:
            self._require_known(video_id, known)
        for t in thresholds:
            self.catalogue.factor(t.factor)

        new_videos = self._in_batches(videos, lambda db, batch: self._register_videos(db, batch)[0])
        added, conflicts, by_annotator = self._merge_decisions(rows)
        marks_set = self._in_batches(marks, self._merge_marks)
        self._in_batches(measurements, self._merge_measurements)
        with self._write() as db:
            for t in thresholds:
                self._set_threshold(
                    db, t.factor, t.statistic, t.rule, t.thresholds, t.set_at.isoformat()
                )
        return ImportCounts(
            new_videos, added, len(rows) - added, marks_set, conflicts, by_annotator
        )

    def _require_known(self, video_id: str, known: set[str]) -> None:
        if video_id not in known:
            raise StoreError(
                f"unknown video '{video_id}' (the store at {self.path} registers "
                f"{len(known)} videos)"
            )

    def _merge_decisions(
        self, rows: list[tuple]
    ) -> tuple[int, tuple[Conflict, ...], dict[str, int]]:
        """Append the rows the log does not hold yet; (added, conflicts, added per annotator).

        The rows go into a temporary table (private to this connection, so filling it takes
        no lock on the store); one indexed statement marks those already in the log — and
        repeats within the rows — and conflicts are read with one join. Each batch re-marks
        its rows inside its own transaction before inserting, so a concurrent import of the
        same release cannot add a decision twice.
        """
        with self._lock:
            db = self._db
            try:
                db.execute("BEGIN")
                db.execute(
                    "CREATE TEMP TABLE IF NOT EXISTS incoming_decisions (seq INTEGER PRIMARY "
                    "KEY, video_id TEXT, factor TEXT, value TEXT, annotator TEXT, source TEXT, "
                    "decided_at TEXT, note TEXT, replaced_auto_value TEXT, "
                    "replaced_measurement REAL, present INTEGER NOT NULL DEFAULT 0)"
                )
                db.execute(
                    "CREATE INDEX IF NOT EXISTS temp.incoming_by_content ON incoming_decisions "
                    "(video_id, factor, annotator, decided_at)"
                )
                db.execute("DELETE FROM incoming_decisions")
                db.executemany(
                    "INSERT INTO incoming_decisions (video_id, factor, value, annotator, source, "
                    "decided_at, note, replaced_auto_value, replaced_measurement) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    rows,
                )
                db.execute(
                    "UPDATE incoming_decisions AS i SET present = 1 WHERE EXISTS (SELECT 1 FROM "
                    f"decisions AS d WHERE {_SAME_CONTENT}) OR EXISTS (SELECT 1 FROM "
                    f"incoming_decisions AS d WHERE {_SAME_CONTENT} AND d.seq < i.seq)"
                )
                conflicts = tuple(
                    Conflict(*row)
                    for row in db.execute(
                        "SELECT i.video_id, i.factor, i.annotator, i.value, i.decided_at, "
                        "d.value, d.decided_at FROM incoming_decisions AS i "
                        "JOIN current_decision_ids AS c ON c.video_id = i.video_id "
                        "AND c.factor = i.factor AND c.annotator = i.annotator "
                        "JOIN decisions AS d ON d.decision_id = c.decision_id "
                        f"WHERE i.present = 0 AND {time_key('i.decided_at')} < c.decided_key "
                        "AND d.value IS NOT i.value ORDER BY i.seq"
                    )
                )
                pending = [
                    r[0]
                    for r in db.execute(
                        "SELECT seq FROM incoming_decisions WHERE present = 0 ORDER BY seq"
                    )
                ]
                db.execute("COMMIT")
            except BaseException as exc:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise _store_error(self.path, exc) from None
                raise

            def insert(db: sqlite3.Connection, batch: Sequence[int]) -> int:
                bounds = (batch[0], batch[-1])
                db.execute(
                    "UPDATE incoming_decisions AS i SET present = 1 WHERE seq BETWEEN ? AND ? "
                    f"AND present = 0 AND EXISTS (SELECT 1 FROM decisions AS d WHERE "
                    f"{_SAME_CONTENT})",
                    bounds,
                )
                return db.execute(
                    f"INSERT INTO decisions ({_DECISION_COLUMNS.split(', ', 1)[1]}) "
                    "SELECT video_id, factor, value, annotator, source, decided_at, note, NULL, "
                    "replaced_auto_value, replaced_measurement FROM incoming_decisions "
                    "WHERE seq BETWEEN ? AND ? AND present = 0 ORDER BY seq",
                    bounds,
                ).rowcount

            added = self._in_batches(pending, insert)
            by_annotator = dict(
                self._read(
                    "SELECT annotator, COUNT(*) FROM incoming_decisions WHERE present = 0 "
                    "GROUP BY annotator ORDER BY annotator"
                )
            )
            db.execute("DELETE FROM incoming_decisions")
        return added, conflicts, by_annotator

    def _merge_marks(self, db: sqlite3.Connection, batch: Sequence[tuple[str, VideoMarks]]) -> int:
        """Set each imported mark that differs from the current one; returns how many."""
        marks_set = 0
        for video_id, m in batch:
            current = self._current_marks(db, video_id).get(
                (video_id, m.annotator), {"flag": False, "skip": False, "note": None}
            )
            for kind, value in (("flag", m.flagged), ("skip", m.skipped), ("note", m.note)):
                if current[kind] != value:
                    self._append_mark(db, video_id, kind, value, m.annotator, None)
                    marks_set += 1
        return marks_set

    def _merge_measurements(
        self, db: sqlite3.Connection, batch: Sequence[tuple[str, str, Measurement]]
    ) -> int:
        for video_id, statistic, measurement in batch:
            self._record_measurement(db, video_id, statistic, measurement)
        return len(batch)

    def _in_batches(
        self, items: Sequence[T], write: Callable[[sqlite3.Connection, Sequence[T]], int]
    ) -> int:
        """``write`` the items in consecutive transactions sized to hold the write lock for
        about :data:`BATCH_TARGET_S` each (doubling or halving the batch as it goes); returns
        the sum of what ``write`` returned."""
        total, start, size, batches = 0, 0, 64, 0
        # SQLite's automatic checkpoint runs inside COMMIT; between batches it is run here
        # instead (PASSIVE: it waits for nobody), so the lock hold measured is the lock's.
        self._pragma("wal_autocheckpoint=0")
        try:
            while start < len(items):
                batch = items[start : start + size]
                with self._write() as db:
                    total += write(db, batch)
                start += len(batch)
                batches += 1
                if batches % 8 == 0:
                    self._pragma("wal_checkpoint(PASSIVE)")
                if self.last_hold_s < BATCH_TARGET_S / 2:
                    size *= 2
                elif self.last_hold_s > BATCH_TARGET_S:
                    size = max(1, int(size * BATCH_TARGET_S / self.last_hold_s))
        finally:
            self._pragma(f"wal_autocheckpoint={WAL_AUTOCHECKPOINT_PAGES}")
        if batches % 8:
            self._pragma("wal_checkpoint(PASSIVE)")  # leave no WAL for the next click to fold
        return total

    def revision(self) -> tuple[int, int, int, str | None]:
        """Changes whenever decisions, marks or measurements change: a cache key for views."""
        return self._read(
            "SELECT (SELECT COALESCE(MAX(decision_id), 0) FROM decisions), "
            "(SELECT COALESCE(MAX(mark_id), 0) FROM marks), "
            "(SELECT COUNT(*) FROM measurements), (SELECT MAX(measured_at) FROM measurements)"
        )[0]

    def videos_changed_since(self, revision: tuple[int, int, int, str | None]) -> set[str]:
        """Videos with a decision or mark appended after ``revision`` (from :meth:`revision`).

        Both logs are append-only with ever-growing ids, so this is a range scan of the rows
        written since, whoever wrote them (this page, another tab, the CLI, an import)."""
        decision_id, mark_id = revision[0], revision[1]
        rows = self._read(
            "SELECT video_id FROM decisions WHERE decision_id > ? "
            "UNION SELECT video_id FROM marks WHERE mark_id > ?",
            (decision_id, mark_id),
        )
        return {row[0] for row in rows}

    def integrity_check(self) -> str:
        return str(self._read("PRAGMA integrity_check")[0][0])

    def last_decision_id(self, annotator: str) -> int:
        """The id of the annotator's latest decision, 0 before the first: it changes exactly
        when the annotator's log does, so a page can tell whether what it shows is current."""
        return int(
            self._read(
                "SELECT COALESCE(MAX(decision_id), 0) FROM decisions WHERE annotator = ?",
                (annotator,),
            )[0][0]
        )


def _sqlite_connect(database: Path | str, *, uri: bool = False) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are begun explicitly), shared by
    threads under the store's lock, that waits :data:`BUSY_TIMEOUT_S` for a busy lock."""
    return sqlite3.connect(
        database, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False, uri=uri
    )


_BUSY_CODES = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def _is_busy(exc: sqlite3.Error) -> bool:
    return (getattr(exc, "sqlite_errorcode", 0) & 0xFF) in _BUSY_CODES


def _disk_is_full(path: Path) -> bool:
    """Whether the store's disk has no room for another page (SQLite reports a full disk met
    while sizing its shared-memory index as an I/O error)."""
    try:
        stats = os.statvfs(path.parent)
    except OSError:
        return False
    return stats.f_bavail * stats.f_frsize < 64 * 1024


def _store_error(path: Path, exc: sqlite3.Error, *, opening: bool = False) -> StoreError:
    """The one-line :class:`StoreError` subclass for an SQLite failure on the store at ``path``.

    Extended result codes are reduced to their primary code (``& 0xFF``): ``SQLITE_IOERR_*``
    covers many system calls, ``SQLITE_FULL`` and ``SQLITE_READONLY_*`` have variants.
    """
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    action = "could not be opened" if opening else "nothing was saved"
    if code in _BUSY_CODES:
        return StoreLockedError(
            f"{path}: another program kept the store locked for over {WRITE_PATIENCE_S:.0f} s; "
            f"{action} — try again"
        )
    if code == sqlite3.SQLITE_FULL or (code == sqlite3.SQLITE_IOERR and _disk_is_full(path)):
        return StoreFullError(f"{path}: the disk is full; {action} — free some space")
    if code in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM, sqlite3.SQLITE_CANTOPEN) or (
        code == sqlite3.SQLITE_AUTH
    ):
        return StoreReadOnlyError(
            f"{path}: the store or its folder cannot be written (read-only mount or "
            f"permissions); {action}"
        )
    if code in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
        return StoreCorruptError(f"{path}: not a usable vadscene store (the file is damaged)")
    if code == sqlite3.SQLITE_IOERR:
        return StoreUnavailableError(f"{path}: disk input/output error; {action}")
    if opening and isinstance(exc, sqlite3.DatabaseError):
        return StoreCorruptError(f"{path}: not a usable vadscene store ({exc})")
    return StoreError(f"{path}: {exc}")


def _check_annotator(annotator: str, source: str) -> None:
    if not isinstance(annotator, str) or not annotator.strip():
        raise StoreError("an annotator name is required (got an empty name)")
    if (annotator == AUTO_ANNOTATOR) != (source == "auto"):
        raise StoreError(
            f"annotator '{AUTO_ANNOTATOR}' is reserved for measured decisions (source 'auto'); "
            f"got annotator '{annotator}' with source '{source}'"
        )
