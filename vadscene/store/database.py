"""The SQLite annotation store — all SQL of vadscene lives here and in
:mod:`vadscene.store.migrations` (the schema and its upgrades).

Durability is the point of this module: an annotator's decision is committed in its own
transaction before :meth:`AnnotationStore.record_decision` returns, a threshold rule in one
transaction with the auto poles it changed (:meth:`AnnotationStore.apply_threshold`), and
nothing is ever updated or deleted. Decisions form an append-only log (triggers refuse UPDATE
and DELETE); the current state is derived from it — the latest row per (video, factor,
annotator). Undo appends a row that restores the value in force before the undone decision.
Per-video flags, skips and notes are an append-only log too.

"Current" is the latest time per key, the row id breaking ties only — for every piece of
state: decisions per (video, factor, annotator), marks per (video, annotator, kind),
measurements per (video, statistic), threshold rules per factor. Merging a colleague's
release, which carries older copies of one's own state, never goes back in time; an older
imported value joins the history and is reported as a :class:`Conflict`. A withdrawal (a
cleared decision or note, a removed flag, a statistic measured to have no value) is a row with
its time like any other, so it travels and wins when newer. Every time is parsed at this
boundary into a UTC instant and stored canonically (:mod:`vadscene.core.instants`), so text
order is time order and one instant has one spelling; a time later than this clock plus
:data:`~vadscene.core.instants.CLOCK_SKEW` is refused. A decision is identified by its
content (video, factor, annotator, value, source, instant), so importing one the log already
holds adds nothing. The tables ``current_decision_ids`` and ``current_mark_ids`` hold the
current row per key; triggers maintain them in the transaction of every insert, so
current-state lookups are index lookups however long the logs.

The database runs in WAL mode with ``synchronous=FULL`` (a committed decision survives a power
cut, not only a killed process), so several processes — two annotators, or the app and a CLI —
may write at once. Writes take the lock up front (``BEGIN IMMEDIATE``) so two writers never
deadlock upgrading read locks; a busy lock is waited for (busy timeout) and retried with
backoff for :data:`WRITE_PATIENCE_S`, and writes are short — bulk imports commit in batches of
at most :data:`BATCH_TARGET_S` — so an annotator's click never waits behind an import. Every
write validates its input before it writes and writes nothing when it is refused: every
argument is checked with the rules a release is validated by, so whatever the store accepts
can be exported. A store opened read-only (``read_only=True``) never takes a write lock, and
works on a read-only mount.

Every SQLite failure leaves this module as a :class:`~vadscene.core.errors.StoreError` with a
one-line message: :class:`~vadscene.core.errors.StoreLockedError`,
:class:`~vadscene.core.errors.StoreFullError`, :class:`~vadscene.core.errors.StoreReadOnlyError`
(all :class:`~vadscene.core.errors.StoreUnavailableError`: the input was fine, retry later) or
:class:`~vadscene.core.errors.StoreCorruptError`.
"""

from __future__ import annotations

import gc
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Literal, NamedTuple, TypeVar
from urllib.parse import quote

from vadscene.core.catalogue import AMBIGUOUS, Catalogue, threshold_rule_problems
from vadscene.core.errors import (
    StoreCorruptError,
    StoreError,
    StoreFullError,
    StoreLockedError,
    StoreReadOnlyError,
    StoreUnavailableError,
    UndoRefusedError,
)
from vadscene.core.instants import canonical, now, stored_time
from vadscene.core.records import (
    AUTO_ANNOTATOR,
    AutoThreshold,
    DecisionSource,
    DecisionWithdrawal,
    FactorDecision,
    Measurement,
    MeasurementWithdrawal,
    VideoAssignment,
    VideoInfo,
    VideoMarks,
)
from vadscene.store.migrations import SCHEMA_VERSION, upgrade
from vadscene.store.team import TeamStore

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
_NO_MARKS: dict[str, tuple[object, str | None]] = {
    "flag": (False, None),
    "skip": (False, None),
    "note": (None, None),
}
"""Each mark kind's value (and time) before it was ever set."""


T = TypeVar("T")

_SAME_CONTENT = (
    "d.video_id = i.video_id AND d.factor = i.factor AND d.annotator = i.annotator "
    "AND d.decided_at = i.decided_at AND d.value IS i.value AND d.source = i.source"
)
"""Decision ``d`` has the content of decision ``i``: what identifies a decision across stores."""


def utc_now() -> str:
    """The current time as the canonical UTC text every timestamp in the store uses."""
    return canonical(now())


Time = str | datetime
"""A time given to the store API: an aware ``datetime`` or ISO 8601 text with an offset."""


class Decision(NamedTuple):
    """One row of the decision log. ``value`` None means the annotator cleared the factor.

    A named tuple rather than a dataclass: reads build one per current decision (tens of
    thousands for the Review table), and a tuple is built at C speed."""

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


StateKind = Literal["decision", "mark", "measurement", "rule", "assignment"]


@dataclass(frozen=True)
class Conflict:
    """An imported value older than the local current one on its key, with another value: it
    joins the history (decisions and marks) or is dropped (measurements and rules, which keep
    only their current value), and the local (newer) value stays current.

    ``key`` is the factor (decision, rule), the mark kind or the statistic; ``video_id`` is
    empty for a rule, ``annotator`` for a measurement or rule. Values are as stored (text;
    a measurement's number as its shortest text, a rule as ``rule [thresholds]``).
    """

    kind: StateKind
    video_id: str
    key: str
    annotator: str
    imported_value: str | None
    imported_at: str
    local_value: str | None
    local_at: str

    def describe(self) -> str:
        """One line: where, what was imported and what was kept."""
        who = f"({self.annotator})" if self.annotator else ""
        where = " ".join(part for part in (self.kind, self.video_id, self.key, who) if part)
        return (
            f"{where}: imported {self.imported_value} of {self.imported_at}, kept "
            f"{self.local_value} of {self.local_at}"
        )


@dataclass(frozen=True)
class ImportCounts:
    """What a release import added to the store."""

    videos_added: int
    decisions_added: int
    decisions_already_present: int
    marks_added: int
    measurements_updated: int = 0
    rules_updated: int = 0
    assignments_added: int = 0
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


class AnnotationStore(TeamStore):
    """The annotation database of one workspace.

    One instance holds one connection, shared by threads under a lock (Streamlit runs scripts
    in threads); separate processes open their own instance on the same file.

    Every read applies the aliases renames and merges left (:mod:`vadscene.store.team`): an
    annotator's decisions and marks include those logged under their former ids, and where two
    former ids meet on one key the later in time is current. Writes through the API resolve the
    annotator name first, so a former name writes as the current one.
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
    def _write(self, saved: Callable[[], str] | None = None) -> Iterator[sqlite3.Connection]:
        """One write transaction holding the database lock from its start.

        Taking the lock is retried while another writer holds it; inside the transaction no
        lock is waited for (WAL), so the body runs once. Any SQLite failure rolls back and
        leaves as a :class:`StoreError` subclass whose message ends with ``saved()`` — what
        earlier transactions of a bulk write committed — or "nothing was saved".
        """
        if self.read_only:
            raise StoreReadOnlyError(
                f"{self.path}: the store was opened read-only; nothing was written"
            )
        with self._lock:
            action = saved() if saved is not None else None
            try:
                self._retry_busy(lambda: self._db.execute("BEGIN IMMEDIATE"))
            except sqlite3.Error as exc:
                raise _store_error(self.path, exc, action=action) from None
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
                    raise _store_error(self.path, exc, action=action) from None
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
        decided_at: Time | None = None,
    ) -> Decision:
        """Append one decision and commit it before returning.

        ``value`` is one of the factor's values, ``"ambiguous"``, or None to clear. A manual
        decision on an auto factor is stored with source ``override``, together with the auto
        pole and the measured statistic it replaced. ``decided_at`` defaults to now. Raises
        :class:`StoreError` and writes nothing for an unknown video or factor, a value the
        factor does not allow, an empty annotator name, an annotator/source mismatch, a time
        that is not an aware ISO 8601 time or lies in the future, or text that is not UTF-8.
        """
        annotator = self.resolve_annotator(annotator) if isinstance(annotator, str) else annotator
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
        decided_at: Time | None,
        replaced: tuple[str | None, float | None] | None = None,
    ) -> Decision:
        source = self._checked_source(video_id, factor, value, annotator, source)
        where = f"video '{video_id}', factor '{factor}'"
        _check_text(note, f"{where}: note")
        at = _stored_time(decided_at, f"{where}: decided_at")
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
                at,
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
        _check_text(video_id, "video id")
        _check_text(annotator, f"video '{video_id}': annotator")
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
        """Undo the annotator's latest own action not yet undone; None if nothing is left.

        An action is a decision the annotator made in this workspace — never a row an import
        brought (a colleague's copy of their history). Appends a decision (``undoes`` = the
        undone id) carrying the value that was current on that video, factor and annotator
        before the undone decision, in time order. Repeated calls walk further back. When a
        newer decision on that key has become current since (merged from elsewhere), undoing
        would bring an older value back: :class:`~vadscene.core.errors.UndoRefusedError`.
        """
        annotator = self.resolve_annotator(annotator)
        names = self._names_of(annotator)
        among = f"annotator IN ({', '.join('?' * len(names))})"
        with self._write() as db:
            target = db.execute(
                f"SELECT {_DECISION_COLUMNS} FROM decisions AS d WHERE {among} "
                "AND imported = 0 AND undoes IS NULL AND NOT EXISTS "
                "(SELECT 1 FROM decisions AS u WHERE u.undoes = d.decision_id) "
                "ORDER BY decision_id DESC LIMIT 1",
                names,
            ).fetchone()
            if target is None:
                return None
            undone = Decision(*target)
            newer_import = db.execute(
                "SELECT d.decided_at FROM current_decision_ids AS c "
                "JOIN decisions AS d ON d.decision_id = c.decision_id WHERE c.video_id = ? "
                f"AND c.factor = ? AND c.{among} AND d.imported = 1 AND d.decided_at > ?",
                (undone.video_id, undone.factor, *names, undone.decided_at),
            ).fetchone()
            if newer_import is not None:
                raise UndoRefusedError(
                    f"not undone: your last change ({undone.factor} on {undone.video_id}) has "
                    f"since been replaced by a newer decision of yours made at {newer_import[0]} "
                    "(merged from another workspace); decide the factor again to change it"
                )
            before = db.execute(
                "SELECT value, source, note, replaced_auto_value, replaced_measurement "
                "FROM decisions WHERE video_id = :video AND factor = :factor "
                f"AND annotator IN ({', '.join(f':n{i}' for i in range(len(names)))}) "
                "AND (decided_at < :at OR (decided_at = :at AND decision_id < :id)) "
                "ORDER BY decided_at DESC, decision_id DESC LIMIT 1",
                {
                    "video": undone.video_id,
                    "factor": undone.factor,
                    "at": undone.decided_at,
                    "id": undone.decision_id,
                    **{f"n{i}": name for i, name in enumerate(names)},
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
        """The whole log in commit order (optionally one annotator's, former ids included), as
        stored: rows keep the name they were written under."""
        names = self._names_of(self.resolve_annotator(annotator)) if annotator else []
        where = f"WHERE annotator IN ({', '.join('?' * len(names))})" if names else ""
        rows = self._read(
            f"SELECT {_DECISION_COLUMNS} FROM decisions {where} ORDER BY decision_id", names
        )
        return [Decision._make(r) for r in rows]

    def current_decisions(
        self, *, video_id: str | None = None, annotator: str | None = None
    ) -> list[Decision]:
        """The current decision per (video, factor, annotator), cleared ones included: the
        latest ``decided_at``, the row id breaking ties, under the annotator's current id. An
        index lookup per (video, annotator), however long the log."""
        aliases = self.aliases()
        clauses: list[str] = []
        params: list[object] = []
        if video_id is not None:
            clauses.append("video_id = ?")
            params.append(video_id)
        if annotator is not None:
            names = self._names_of(self.resolve_annotator(annotator), aliases)
            clauses.append(f"annotator IN ({', '.join('?' * len(names))})")
            params.extend(names)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        with _collection_paused():
            rows = [
                Decision._make(r)
                for r in self._read(
                    f"SELECT {_DECISION_COLUMNS} FROM current_decisions {where} "
                    "ORDER BY video_id, factor, annotator",
                    params,
                )
            ]
        if not aliases:
            return rows
        latest: dict[tuple[str, str, str], Decision] = {}
        for d in rows:
            d = d._replace(annotator=aliases.get(d.annotator, d.annotator))
            key = (d.video_id, d.factor, d.annotator)
            held = latest.get(key)
            if held is None or (d.decided_at, d.decision_id) > (held.decided_at, held.decision_id):
                latest[key] = d
        return [latest[key] for key in sorted(latest)]

    def current_values(self, annotator: str) -> dict[tuple[str, str], str]:
        """(video, factor) → value for one annotator; cleared factors are absent."""
        return {
            (d.video_id, d.factor): d.value
            for d in self.current_decisions(annotator=annotator)
            if d.value is not None
        }

    def annotators(self) -> list[str]:
        """Human annotators with at least one decision, mark or assignment, under their current
        ids."""
        rows = self._read(
            "SELECT annotator FROM decisions WHERE annotator != ? UNION "
            "SELECT annotator FROM marks UNION SELECT annotator FROM assignments ORDER BY 1",
            (AUTO_ANNOTATOR,),
        )
        aliases = self.aliases()
        return sorted({aliases.get(r[0], r[0]) for r in rows})

    def _names_of(self, annotator: str, aliases: dict[str, str] | None = None) -> list[str]:
        """The names ``annotator``'s rows may be stored under: the id and its former ids."""
        aliases = self.aliases() if aliases is None else aliases
        return [annotator, *sorted(a for a, target in aliases.items() if target == annotator)]

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
        marked_at: Time | None = None,
    ) -> None:
        """Flag/unflag, skip/unskip (bool) or set the note (text, None clears) of a video.

        Unflagging, unskipping and clearing are marks with their time like any other, so they
        travel in releases and win over an older flag or note. ``marked_at`` defaults to now.
        """
        if kind not in MARK_KINDS:
            raise StoreError(f"unknown mark '{kind}' (expected one of: {', '.join(MARK_KINDS)})")
        annotator = self.resolve_annotator(annotator) if isinstance(annotator, str) else annotator
        with self._write() as db:
            self._append_mark(db, video_id, kind, value, annotator, marked_at)

    def _append_mark(
        self,
        db: sqlite3.Connection,
        video_id: str,
        kind: str,
        value: bool | str | None,
        annotator: str,
        marked_at: Time | None,
    ) -> None:
        row = self._checked_mark(video_id, kind, value, annotator, marked_at)
        self._require_video(db, video_id)
        db.execute(
            "INSERT INTO marks (video_id, annotator, kind, value, marked_at) "
            "VALUES (?, ?, ?, ?, ?)",
            row,
        )

    @staticmethod
    def _checked_mark(
        video_id: str,
        kind: str,
        value: bool | str | None,
        annotator: str,
        marked_at: Time | None,
    ) -> tuple[str, str, str, str | None, str]:
        """The marks row of a mark, or :class:`StoreError` for one a release could not carry."""
        _check_text(video_id, "video id")
        _check_annotator(annotator, "manual")
        _check_text(annotator, f"video '{video_id}': annotator")
        stored: str | None
        if kind == "note":
            if value is not None and not isinstance(value, str):
                raise StoreError(f"video '{video_id}': a note must be text, got {value!r}")
            _check_text(value, f"video '{video_id}': note")
            stored = value or None
        else:
            if not isinstance(value, bool):
                raise StoreError(f"video '{video_id}': mark '{kind}' takes true/false")
            stored = "1" if value else "0"
        at = _stored_time(marked_at, f"video '{video_id}', mark '{kind}': marked_at")
        return video_id, annotator, kind, stored, at

    def marks(self, *, video_id: str | None = None) -> dict[tuple[str, str], dict[str, object]]:
        """(video, annotator) → {'flag': bool, 'skip': bool, 'note': str|None} (current)."""
        return {
            key: {kind: value for kind, (value, _at) in entry.items()}
            for key, entry in self.marks_with_times(video_id=video_id).items()
        }

    def marks_with_times(
        self, *, video_id: str | None = None
    ) -> dict[tuple[str, str], dict[str, tuple[object, str | None]]]:
        """(video, annotator) → kind → (current value, when it was set; None: never set), under
        current ids (of two former ids' marks of one kind, the later is current)."""
        with self._lock:
            current = self._current_marks(self._db, video_id)
        aliases = self.aliases()
        if not aliases:
            return current
        merged: dict[tuple[str, str], dict[str, tuple[object, str | None]]] = {}
        for (vid, who), kinds in sorted(current.items()):
            entry = merged.setdefault((vid, aliases.get(who, who)), dict(_NO_MARKS))
            for kind, (value, at) in kinds.items():
                if at is not None and (entry[kind][1] is None or at > str(entry[kind][1])):
                    entry[kind] = (value, at)
        return merged

    @staticmethod
    def _current_marks(
        db: sqlite3.Connection, video_id: str | None
    ) -> dict[tuple[str, str], dict[str, tuple[object, str | None]]]:
        where, params = ("WHERE c.video_id = ?", (video_id,)) if video_id else ("", ())
        rows = db.execute(
            "SELECT c.video_id, c.annotator, c.kind, m.value, c.marked_at "
            f"FROM current_mark_ids AS c JOIN marks AS m ON m.mark_id = c.mark_id {where}",
            params,
        ).fetchall()
        current: dict[tuple[str, str], dict[str, tuple[object, str | None]]] = {}
        for vid, annotator, kind, value, at in rows:
            entry = current.setdefault(
                (vid, annotator),
                {"flag": (False, None), "skip": (False, None), "note": (None, None)},
            )
            entry[kind] = (value if kind == "note" else value == "1", at)
        return current

    # --- measurements and thresholds ------------------------------------------------------

    def record_measurement(self, video_id: str, statistic: str, measurement: Measurement) -> None:
        """Store (replace) one measured statistic of a video."""
        with self._write() as db:
            self._record_measurement(db, video_id, statistic, measurement)

    def _record_measurement(
        self, db: sqlite3.Connection, video_id: str, statistic: str, measurement: Measurement
    ) -> None:
        row = _measurement_row(video_id, statistic, measurement)
        self._require_video(db, video_id)
        db.execute(_REPLACE_MEASUREMENT, row)

    def record_video_measurements(
        self, video_id: str, stats: dict[str, Measurement], *, undefined: Iterable[str] = ()
    ) -> None:
        """Store every statistic of one video at once and clear its recorded failure.

        ``undefined`` names statistics this measurement found to have no value (motion
        without a normal frame pair): they are recorded as withdrawn at the measurement's time,
        in the same transaction, so an earlier value outlives neither the inputs that made it
        nor a merge of an older release.
        """
        at = max((m.measured_at for m in stats.values()), default=None)
        withdrawn_at = canonical(at) if at is not None else utc_now()
        with self._write() as db:
            for statistic, measurement in stats.items():
                self._record_measurement(db, video_id, statistic, measurement)
            for statistic in undefined:
                db.execute(_REPLACE_MEASUREMENT, _withdrawal_row(video_id, statistic, withdrawn_at))
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
        where, params = ("AND video_id = ?", (video_id,)) if video_id else ("", ())
        rows = self._read(
            "SELECT video_id, statistic, value, params, decoder, frames_read, seconds, "
            f"measured_at FROM measurements WHERE value IS NOT NULL {where} "
            "ORDER BY video_id, statistic",
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

    def measurement_withdrawals(self) -> dict[str, dict[str, str]]:
        """video → statistic → when it was measured to have no value (and has none since)."""
        result: dict[str, dict[str, str]] = {}
        for video_id, statistic, at in self._read(
            "SELECT video_id, statistic, measured_at FROM measurements WHERE value IS NULL "
            "ORDER BY video_id, statistic"
        ):
            result.setdefault(video_id, {})[statistic] = at
        return result

    def set_threshold(
        self,
        factor: str,
        statistic: str,
        rule: str,
        thresholds: Sequence[float],
        *,
        set_at: Time | None = None,
    ) -> None:
        """Record the dataset-level threshold rule of an auto factor (refused, with
        :class:`StoreError`, unless :func:`~vadscene.core.catalogue.threshold_rule_problems`
        finds nothing wrong with it)."""
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
        ``auto``) with ``note``, at the rule's own time. The rule and every pole are committed
        together or, refused or interrupted, not at all: no pole ever stands under a rule the
        store does not hold.
        """
        at = utc_now()
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
                    decided_at=at,
                )
            self._set_threshold(db, factor, statistic, rule, thresholds, at)

    def _set_threshold(
        self,
        db: sqlite3.Connection,
        factor: str,
        statistic: str,
        rule: str,
        thresholds: Sequence[float],
        set_at: Time | None,
    ) -> None:
        db.execute(
            "INSERT OR REPLACE INTO thresholds (factor, statistic, rule, thresholds, set_at) "
            "VALUES (?, ?, ?, ?, ?)",
            self._checked_rule(factor, statistic, rule, thresholds, set_at),
        )

    def _checked_rule(
        self,
        factor: str,
        statistic: str,
        rule: str,
        thresholds: Sequence[float],
        set_at: Time | None,
    ) -> tuple[str, str, str, str, str]:
        """The thresholds row of a rule, or :class:`StoreError` naming what is wrong."""
        problems = threshold_rule_problems(self.catalogue, factor, statistic, rule, thresholds)
        if problems:
            raise StoreError(f"threshold rule of factor '{factor}': {'; '.join(problems)}")
        at = _stored_time(set_at, f"threshold rule of factor '{factor}': set_at")
        return factor, statistic, rule, json.dumps([float(t) for t in thresholds]), at

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
        withdrawn_decisions: Iterable[tuple[str, DecisionWithdrawal]] = (),
        withdrawn_measurements: Iterable[tuple[str, MeasurementWithdrawal]] = (),
        assignments: Iterable[tuple[str, VideoAssignment]] = (),
        progress: Callable[[int, int], None] | None = None,
    ) -> ImportCounts:
        """Merge released rows; every row is checked before anything is written.

        Every piece of state merges by its time, the newer per key winning: a decision or mark
        the log already holds (same key, value and instant) is skipped, so importing a release
        twice changes nothing; any other is appended with its original time and provenance and
        becomes current only if it is the latest on its key. A measurement or rule replaces the
        local one only when newer. An imported value older than the local current one, with
        another value, is reported as a :class:`Conflict`. Withdrawals are rows like any other.

        Every row is checked first — videos known, values the catalogue allows, times that are
        instants and not in the future, text that is UTF-8, rules that
        :func:`~vadscene.core.catalogue.threshold_rule_problems` accepts — so a refused import
        writes nothing. Rows are then written in short transactions (:data:`BATCH_TARGET_S`) so
        annotators keep working meanwhile; should the disk fill or the lock be held part-way,
        the error says how many rows were saved, and importing the same release again
        completes it. Cost is linear in the rows: duplicates are found by one indexed set
        operation over a temporary table. ``progress(done, total)`` counts the checked rows
        as they are merged (``total`` is every row but the rules), once per transaction.
        """
        videos = list(videos)
        known = {row[0] for row in self._read("SELECT video_id FROM videos")}
        known.update(v.video_id for v in videos)
        decision_rows = [
            self._imported_decision(video_id, factor, d, known) for video_id, factor, d in decisions
        ]
        decision_rows += [
            self._imported_withdrawal(video_id, w, known) for video_id, w in withdrawn_decisions
        ]
        mark_rows = [
            row for video_id, m in marks for row in self._imported_marks(video_id, m, known)
        ]
        measurement_rows = []
        for video_id, statistic, m in measurements:
            self._require_known(video_id, known)
            measurement_rows.append(_measurement_row(video_id, statistic, m))
        for video_id, w in withdrawn_measurements:
            self._require_known(video_id, known)
            at = _stored_time(w.withdrawn_at, f"video '{video_id}', {w.statistic}: withdrawn_at")
            measurement_rows.append(_withdrawal_row(video_id, w.statistic, at))
        rule_rows = [
            self._checked_rule(t.factor, t.statistic, t.rule, t.thresholds, t.set_at)
            for t in thresholds
        ]
        # a colleague's "Ana" or former name lands on this workspace's registered id
        names: dict[str, str] = {}

        def resolved(name: str) -> str:
            if name not in names:
                names[name] = self.resolve_annotator(name)
            return names[name]

        decision_rows = [(*r[:3], resolved(r[3]), *r[4:]) for r in decision_rows]
        mark_rows = [(r[0], resolved(r[1]), *r[2:]) for r in mark_rows]
        assignment_rows = []
        for video_id, a in assignments:
            self._require_known(video_id, known)
            where = f"video '{video_id}', assignment of '{a.annotator}'"
            _check_text(a.annotator, f"{where}: annotator")
            _check_text(a.assigned_by, f"{where}: assigned_by")
            at = _stored_time(a.assigned_at, f"{where}: assigned_at")
            assignment_rows.append(
                (video_id, resolved(a.annotator), int(a.assigned), at, a.assigned_by)
            )

        written = {
            "videos": 0,
            "decisions": 0,
            "marks": 0,
            "measurements": 0,
            "rules": 0,
            "assignments": 0,
        }

        def saved() -> str:
            done = [f"{n:,} {what}" for what, n in written.items() if n]
            if not done:
                return "nothing was saved"
            return (
                f"the import stopped part-way: {', '.join(done)} were saved; import the same "
                "release again to complete it"
            )

        def register(db: sqlite3.Connection, batch: Sequence[VideoInfo]) -> int:
            added = self._register_videos(db, batch)[0]
            written["videos"] += len(batch)
            return added

        total = (
            len(videos)
            + len(decision_rows)
            + len(mark_rows)
            + len(measurement_rows)
            + len(assignment_rows)
        )
        merged = 0

        def advance(rows: int) -> None:
            nonlocal merged
            merged += rows
            if progress is not None:
                progress(merged, total)

        advance(0)
        conflicts: list[Conflict] = []
        new_videos = self._in_batches(videos, register, saved=saved, advance=advance)
        added, decision_conflicts, by_annotator = self._merge_decisions(
            decision_rows, written, saved, advance
        )
        conflicts += decision_conflicts
        marks_added = self._in_batches(
            mark_rows,
            lambda db, b: self._merge_marks(db, b, conflicts, written),
            saved=saved,
            advance=advance,
        )
        measurements_updated = self._in_batches(
            measurement_rows,
            lambda db, b: self._merge_measurements(db, b, conflicts, written),
            saved=saved,
            advance=advance,
        )
        with self._write(saved) as db:
            rules_updated = self._merge_rules(db, rule_rows, conflicts)
            written["rules"] += rules_updated
        assignments_added = self._in_batches(
            assignment_rows,
            lambda db, b: self._merge_assignments(db, b, conflicts, written),
            saved=saved,
            advance=advance,
        )
        return ImportCounts(
            videos_added=new_videos,
            decisions_added=added,
            decisions_already_present=len(decision_rows) - added,
            marks_added=marks_added,
            measurements_updated=measurements_updated,
            rules_updated=rules_updated,
            assignments_added=assignments_added,
            conflicts=tuple(conflicts),
            added_by_annotator=by_annotator,
        )

    def _imported_decision(
        self, video_id: str, factor: str, d: FactorDecision, known: set[str]
    ) -> tuple:
        """The log row of a released decision, checked like one recorded here."""
        source = self._checked_source(video_id, factor, d.value, d.annotator, d.source)
        self._require_known(video_id, known)
        where = f"video '{video_id}', factor '{factor}' ({d.annotator})"
        _check_text(d.note, f"{where}: note")
        _check_text(d.replaced_auto_value, f"{where}: replaced_auto_value")
        return (
            video_id,
            factor,
            d.value,
            d.annotator,
            source,
            _stored_time(d.decided_at, f"{where}: decided_at"),
            d.note,
            d.replaced_auto_value,
            d.replaced_measurement,
        )

    def _imported_withdrawal(self, video_id: str, w: DecisionWithdrawal, known: set[str]) -> tuple:
        """The log row of a released withdrawal: a decision with no value, at its time."""
        source = self._checked_source(video_id, w.factor, None, w.annotator, w.source)
        self._require_known(video_id, known)
        where = f"video '{video_id}', factor '{w.factor}' ({w.annotator})"
        at = _stored_time(w.withdrawn_at, f"{where}: withdrawn_at")
        return (video_id, w.factor, None, w.annotator, source, at, None, None, None)

    def _imported_marks(
        self, video_id: str, m: VideoMarks, known: set[str]
    ) -> list[tuple[str, str, str, str | None, str]]:
        """The mark rows of a released mark: one per kind that carries a time."""
        self._require_known(video_id, known)
        return [
            self._checked_mark(video_id, kind, value, m.annotator, at)
            for kind, value, at in (
                ("flag", m.flagged, m.flagged_at),
                ("skip", m.skipped, m.skipped_at),
                ("note", m.note, m.note_at),
            )
            if at is not None
        ]

    def _require_known(self, video_id: str, known: set[str]) -> None:
        if video_id not in known:
            raise StoreError(
                f"unknown video '{video_id}' (the store at {self.path} registers "
                f"{len(known)} videos)"
            )

    def _merge_decisions(
        self,
        rows: list[tuple],
        written: dict[str, int],
        saved: Callable[[], str],
        advance: Callable[[int], None],
    ) -> tuple[int, list[Conflict], dict[str, int]]:
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
                conflicts = [
                    Conflict("decision", *row)
                    for row in db.execute(
                        "SELECT i.video_id, i.factor, i.annotator, i.value, i.decided_at, "
                        "d.value, d.decided_at FROM incoming_decisions AS i "
                        "JOIN current_decision_ids AS c ON c.video_id = i.video_id "
                        "AND c.factor = i.factor AND c.annotator = i.annotator "
                        "JOIN decisions AS d ON d.decision_id = c.decision_id "
                        "WHERE i.present = 0 AND i.decided_at < c.decided_key "
                        "AND d.value IS NOT i.value ORDER BY i.seq"
                    )
                ]
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
                inserted: int = db.execute(
                    f"INSERT INTO decisions ({_DECISION_COLUMNS.split(', ', 1)[1]}, imported) "
                    "SELECT video_id, factor, value, annotator, source, decided_at, note, NULL, "
                    "replaced_auto_value, replaced_measurement, 1 FROM incoming_decisions "
                    "WHERE seq BETWEEN ? AND ? AND present = 0 ORDER BY seq",
                    bounds,
                ).rowcount
                written["decisions"] += inserted
                return inserted

            advance(len(rows) - len(pending))  # already in the log: nothing to write
            added = self._in_batches(pending, insert, saved=saved, advance=advance)
            by_annotator = dict(
                self._read(
                    "SELECT annotator, COUNT(*) FROM incoming_decisions WHERE present = 0 "
                    "GROUP BY annotator ORDER BY annotator"
                )
            )
            db.execute("DELETE FROM incoming_decisions")
        return added, conflicts, by_annotator

    def _merge_marks(
        self,
        db: sqlite3.Connection,
        batch: Sequence[tuple[str, str, str, str | None, str]],
        conflicts: list[Conflict],
        written: dict[str, int],
    ) -> int:
        """Append each imported mark row the log does not hold; returns how many. The newest
        per (video, annotator, kind) is current (a trigger keeps it)."""
        added = 0
        for video_id, annotator, kind, value, at in batch:
            if db.execute(
                "SELECT 1 FROM marks WHERE video_id = ? AND annotator = ? AND kind = ? "
                "AND marked_at = ? AND value IS ?",
                (video_id, annotator, kind, at, value),
            ).fetchone():
                continue
            current = db.execute(
                "SELECT m.value, c.marked_at FROM current_mark_ids AS c JOIN marks AS m "
                "ON m.mark_id = c.mark_id WHERE c.video_id = ? AND c.annotator = ? "
                "AND c.kind = ?",
                (video_id, annotator, kind),
            ).fetchone()
            if current is not None and at < current[1] and value != current[0]:
                conflicts.append(
                    Conflict("mark", video_id, kind, annotator, value, at, current[0], current[1])
                )
            db.execute(
                "INSERT INTO marks (video_id, annotator, kind, value, marked_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (video_id, annotator, kind, value, at),
            )
            added += 1
        written["marks"] += added
        return added

    def _merge_measurements(
        self,
        db: sqlite3.Connection,
        batch: Sequence[tuple],
        conflicts: list[Conflict],
        written: dict[str, int],
    ) -> int:
        """Store each imported measurement (or withdrawal) newer than the local one on its
        (video, statistic); returns how many replaced or added one."""
        updated = 0
        for row in batch:
            video_id, statistic, value, at = row[0], row[1], row[2], row[7]
            current = db.execute(
                "SELECT value, measured_at FROM measurements WHERE video_id = ? AND statistic = ?",
                (video_id, statistic),
            ).fetchone()
            if current is None or at > current[1]:
                db.execute(_REPLACE_MEASUREMENT, row)
                updated += 1
            elif value != current[0]:
                conflicts.append(
                    Conflict(
                        "measurement",
                        video_id,
                        statistic,
                        "",
                        _number_text(value),
                        at,
                        _number_text(current[0]),
                        current[1],
                    )
                )
        written["measurements"] += updated
        return updated

    @staticmethod
    def _merge_assignments(
        db: sqlite3.Connection,
        batch: Sequence[tuple[str, str, int, str, str | None]],
        conflicts: list[Conflict],
        written: dict[str, int],
    ) -> int:
        """Append each imported assignment row the log does not hold; the newest per (video,
        annotator) is current (a trigger keeps it). Returns how many were appended."""
        added = 0
        for video_id, annotator, assigned, at, by in batch:
            if db.execute(
                "SELECT 1 FROM assignments WHERE video_id = ? AND annotator = ? "
                "AND assigned_at = ? AND assigned = ?",
                (video_id, annotator, at, assigned),
            ).fetchone():
                continue
            current = db.execute(
                "SELECT a.assigned, c.assigned_at FROM current_assignment_ids AS c "
                "JOIN assignments AS a ON a.assignment_id = c.assignment_id "
                "WHERE c.video_id = ? AND c.annotator = ?",
                (video_id, annotator),
            ).fetchone()
            if current is not None and at < current[1] and assigned != current[0]:
                conflicts.append(
                    Conflict(
                        "assignment",
                        video_id,
                        "assigned",
                        annotator,
                        str(bool(assigned)).lower(),
                        at,
                        str(bool(current[0])).lower(),
                        current[1],
                    )
                )
            db.execute(
                "INSERT INTO assignments (video_id, annotator, assigned, assigned_at, "
                "assigned_by) VALUES (?, ?, ?, ?, ?)",
                (video_id, annotator, assigned, at, by),
            )
            added += 1
        written["assignments"] += added
        return added

    @staticmethod
    def _merge_rules(
        db: sqlite3.Connection,
        rows: Sequence[tuple[str, str, str, str, str]],
        conflicts: list[Conflict],
    ) -> int:
        """Store each imported threshold rule newer than the local one of its factor."""
        updated = 0
        for factor, statistic, rule, thresholds, at in rows:
            current = db.execute(
                "SELECT statistic, rule, thresholds, set_at FROM thresholds WHERE factor = ?",
                (factor,),
            ).fetchone()
            if current is None or at > current[3]:
                db.execute(
                    "INSERT OR REPLACE INTO thresholds (factor, statistic, rule, thresholds, "
                    "set_at) VALUES (?, ?, ?, ?, ?)",
                    (factor, statistic, rule, thresholds, at),
                )
                updated += 1
            elif (statistic, rule, thresholds) != tuple(current[:3]):
                conflicts.append(
                    Conflict(
                        "rule",
                        "",
                        factor,
                        "",
                        f"{rule} {thresholds}",
                        at,
                        f"{current[1]} {current[2]}",
                        current[3],
                    )
                )
        return updated

    def _in_batches(
        self,
        items: Sequence[T],
        write: Callable[[sqlite3.Connection, Sequence[T]], int],
        *,
        saved: Callable[[], str] | None = None,
        advance: Callable[[int], None] | None = None,
    ) -> int:
        """``write`` the items in consecutive transactions sized to hold the write lock for
        about :data:`BATCH_TARGET_S` each (doubling or halving the batch as it goes); returns
        the sum of what ``write`` returned, and calls ``advance(len(batch))`` after each
        commit. A failure's message ends with ``saved()`` (what the earlier batches
        committed)."""
        total, start, size, batches = 0, 0, 64, 0
        # SQLite's automatic checkpoint runs inside COMMIT; between batches it is run here
        # instead (PASSIVE: it waits for nobody), so the lock hold measured is the lock's.
        self._pragma("wal_autocheckpoint=0")
        try:
            while start < len(items):
                batch = items[start : start + size]
                with self._write(saved) as db:
                    total += write(db, batch)
                start += len(batch)
                if advance is not None:
                    advance(len(batch))
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
        names = self._names_of(self.resolve_annotator(annotator))
        return int(
            self._read(
                "SELECT COALESCE(MAX(decision_id), 0) FROM decisions WHERE annotator IN "
                f"({', '.join('?' * len(names))})",
                names,
            )[0][0]
        )


@contextmanager
def _collection_paused() -> Iterator[None]:
    """Python's cyclic garbage collector held off while a read builds its rows.

    Rows are tuples of text and numbers, which hold no cycles; but allocating tens of
    thousands of them (the Review table reads every current decision) sets off full
    collections of the whole process, which cost more than the read itself. Collection
    resumes, as it was, when the rows are built.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


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


def _store_error(
    path: Path, exc: sqlite3.Error, *, opening: bool = False, action: str | None = None
) -> StoreError:
    """The one-line :class:`StoreError` subclass for an SQLite failure on the store at ``path``;
    ``action`` says what was written (default: nothing).

    Extended result codes are reduced to their primary code (``& 0xFF``): ``SQLITE_IOERR_*``
    covers many system calls, ``SQLITE_FULL`` and ``SQLITE_READONLY_*`` have variants.
    """
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    if action is None:
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


def _check_text(text: object, field: str) -> None:
    """Refuse text that cannot be written as UTF-8 (a lone surrogate such as ``"\\udfff"`` is
    valid JSON and a valid Python string, but no file or database can hold it)."""
    if isinstance(text, str):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise StoreError(
                f"{field}: holds U+{ord(text[exc.start]):04X}, which is not text (a lone "
                "surrogate cannot be stored as UTF-8)"
            ) from None


def _stored_time(value: object | None, field: str) -> str:
    """:func:`~vadscene.core.instants.stored_time`, refusing with :class:`StoreError`."""
    try:
        return stored_time(value, field=field)
    except ValueError as exc:
        raise StoreError(str(exc)) from None


_REPLACE_MEASUREMENT = (
    "INSERT OR REPLACE INTO measurements (video_id, statistic, value, params, decoder, "
    "frames_read, seconds, measured_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)


def _measurement_row(video_id: str, statistic: str, measurement: Measurement) -> tuple:
    """The measurements row of a measured statistic, checked like a release's."""
    where = f"video '{video_id}', {statistic}"
    _check_text(video_id, "video id")
    _check_text(statistic, f"video '{video_id}': statistic")
    _check_text(measurement.decoder, f"{where}: decoder")
    return (
        video_id,
        statistic,
        measurement.value,
        json.dumps(measurement.params, sort_keys=True),
        measurement.decoder,
        measurement.frames_read,
        measurement.seconds,
        _stored_time(measurement.measured_at, f"{where}: measured_at"),
    )


def _withdrawal_row(video_id: str, statistic: str, at: str) -> tuple:
    """The measurements row of a statistic measured to have no value at ``at``."""
    _check_text(statistic, f"video '{video_id}': statistic")
    return (video_id, statistic, None, "{}", "", 0, 0.0, at)


def _number_text(value: float | None) -> str | None:
    return None if value is None else repr(value)
