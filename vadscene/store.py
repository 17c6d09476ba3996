"""The SQLite annotation store — all SQL of vadscene lives here.

Durability is the point of this module: an annotator's decision is committed in its own
transaction before :meth:`AnnotationStore.record_decision` returns, and nothing is ever updated
or deleted. Decisions form an append-only log (triggers refuse UPDATE and DELETE); the current
state is derived from it — the latest row per (video, factor, annotator). Undo appends a row that
restores the value in force before the undone decision. Per-video flags, skips and notes are an
append-only log too.

The database runs in WAL mode with ``synchronous=FULL`` (a committed decision survives a power
cut, not only a killed process) and a busy timeout, so several processes — two annotators, or
the app and a CLI — may write at once. Writes take the lock up front (``BEGIN IMMEDIATE``) so two
writers never deadlock upgrading read locks. Every write validates its input inside that
transaction and writes nothing when it is refused.

The schema is versioned with ``PRAGMA user_version`` and upgraded by :data:`MIGRATIONS`.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from vadscene.catalogue import AMBIGUOUS, Catalogue
from vadscene.errors import StoreError
from vadscene.records import (
    AUTO_ANNOTATOR,
    AutoThreshold,
    DecisionSource,
    FactorDecision,
    Measurement,
    VideoInfo,
    VideoMarks,
)

MIGRATIONS: tuple[str, ...] = (
    # 1: videos, the decision log, marks, measurements, thresholds.
    """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE videos (
        video_id TEXT PRIMARY KEY,
        category TEXT NOT NULL,
        split TEXT,
        path TEXT,
        num_frames INTEGER NOT NULL,
        fps REAL NOT NULL,
        duration_s REAL NOT NULL,
        width INTEGER NOT NULL,
        height INTEGER NOT NULL,
        codec TEXT NOT NULL,
        size_bytes INTEGER NOT NULL,
        fingerprint TEXT NOT NULL,
        registered_at TEXT NOT NULL
    );
    CREATE TABLE unreadable_files (
        path TEXT PRIMARY KEY, reason TEXT NOT NULL, seen_at TEXT NOT NULL
    );
    CREATE TABLE decisions (
        decision_id INTEGER PRIMARY KEY AUTOINCREMENT,
        video_id TEXT NOT NULL REFERENCES videos(video_id),
        factor TEXT NOT NULL,
        value TEXT,
        annotator TEXT NOT NULL,
        source TEXT NOT NULL CHECK (source IN ('manual', 'auto', 'override', 'consensus')),
        decided_at TEXT NOT NULL,
        note TEXT,
        undoes INTEGER REFERENCES decisions(decision_id),
        replaced_auto_value TEXT,
        replaced_measurement REAL
    );
    CREATE INDEX decisions_by_key ON decisions (video_id, factor, annotator, decision_id);
    CREATE INDEX decisions_by_annotator ON decisions (annotator, decision_id);
    CREATE TRIGGER decisions_no_update BEFORE UPDATE ON decisions
        BEGIN SELECT RAISE(ABORT, 'the decision log is append-only'); END;
    CREATE TRIGGER decisions_no_delete BEFORE DELETE ON decisions
        BEGIN SELECT RAISE(ABORT, 'the decision log is append-only'); END;
    CREATE VIEW current_decisions AS
        SELECT d.* FROM decisions AS d
        JOIN (SELECT MAX(decision_id) AS latest FROM decisions
              GROUP BY video_id, factor, annotator) AS m ON d.decision_id = m.latest;
    CREATE TABLE marks (
        mark_id INTEGER PRIMARY KEY AUTOINCREMENT,
        video_id TEXT NOT NULL REFERENCES videos(video_id),
        annotator TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('flag', 'skip', 'note')),
        value TEXT,
        marked_at TEXT NOT NULL
    );
    CREATE INDEX marks_by_key ON marks (video_id, annotator, kind, mark_id);
    CREATE TRIGGER marks_no_update BEFORE UPDATE ON marks
        BEGIN SELECT RAISE(ABORT, 'the mark log is append-only'); END;
    CREATE TRIGGER marks_no_delete BEFORE DELETE ON marks
        BEGIN SELECT RAISE(ABORT, 'the mark log is append-only'); END;
    CREATE TABLE measurements (
        video_id TEXT NOT NULL REFERENCES videos(video_id),
        statistic TEXT NOT NULL,
        value REAL NOT NULL,
        params TEXT NOT NULL,
        decoder TEXT NOT NULL,
        frames_read INTEGER NOT NULL,
        seconds REAL NOT NULL,
        measured_at TEXT NOT NULL,
        PRIMARY KEY (video_id, statistic)
    );
    CREATE TABLE thresholds (
        factor TEXT PRIMARY KEY,
        statistic TEXT NOT NULL,
        rule TEXT NOT NULL,
        thresholds TEXT NOT NULL,
        set_at TEXT NOT NULL
    );
    """,
    # 2: measurement failures, so a corpus run reports and retries them.
    """
    CREATE TABLE measurement_failures (
        video_id TEXT PRIMARY KEY REFERENCES videos(video_id),
        reason TEXT NOT NULL,
        params TEXT NOT NULL,
        failed_at TEXT NOT NULL
    );
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)

MARK_KINDS = ("flag", "skip", "note")


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
class ImportCounts:
    """What a release import added to the store."""

    videos_added: int
    decisions_added: int
    decisions_already_present: int
    marks_set: int


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

    def __init__(self, path: Path | str, catalogue: Catalogue) -> None:
        self.path = Path(path)
        self.catalogue = catalogue
        self._lock = threading.RLock()
        if not self.path.parent.is_dir():
            raise StoreError(f"{self.path}: folder {self.path.parent} does not exist")
        try:
            self._db = sqlite3.connect(
                self.path, timeout=30.0, isolation_level=None, check_same_thread=False
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._migrate()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: not a usable vadscene store ({exc})") from None

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> AnnotationStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- plumbing -------------------------------------------------------------------------

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction holding the database lock from its start."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _read(self, sql: str, params: Sequence[object] = ()) -> list[tuple]:
        with self._lock:
            return self._db.execute(sql, params).fetchall()

    def _migrate(self) -> None:
        with self._write() as db:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path}: store schema version {version} is newer than this vadscene "
                    f"understands ({SCHEMA_VERSION}); upgrade vadscene"
                )
            for number, script in enumerate(MIGRATIONS[version:], start=version + 1):
                for statement in _statements(script):
                    db.execute(statement)
                db.execute(f"PRAGMA user_version = {number}")

    @property
    def schema_version(self) -> int:
        return self._read("PRAGMA user_version")[0][0]

    # --- metadata and videos --------------------------------------------------------------

    def set_meta(self, key: str, value: str) -> None:
        with self._write() as db:
            db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def get_meta(self, key: str) -> str | None:
        rows = self._read("SELECT value FROM meta WHERE key = ?", (key,))
        return rows[0][0] if rows else None

    def register_videos(self, videos: Iterable[VideoInfo]) -> tuple[int, int]:
        """Add or refresh videos in one transaction; returns (added, updated).

        A re-registered video keeps all its decisions: only its probe fields change.
        """
        with self._write() as db:
            return self._register_videos(db, videos)

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
        if factor not in self.catalogue.keys:
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
            source = "override"
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

    @staticmethod
    def _insert_decision(db: sqlite3.Connection, row: tuple) -> Decision:
        cursor = db.execute(
            f"INSERT INTO decisions ({_DECISION_COLUMNS.split(', ', 1)[1]}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            row,
        )
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
            before = db.execute(
                "SELECT value, source, note, replaced_auto_value, replaced_measurement "
                "FROM decisions WHERE video_id = ? AND factor = ? AND annotator = ? "
                "AND decision_id < ? ORDER BY decision_id DESC LIMIT 1",
                (undone.video_id, undone.factor, annotator, undone.decision_id),
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
        """The latest decision per (video, factor, annotator), cleared ones included."""
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

    def record_video_measurements(self, video_id: str, stats: dict[str, Measurement]) -> None:
        """Store every statistic of one video at once and clear its recorded failure."""
        with self._write() as db:
            for statistic, measurement in stats.items():
                self._record_measurement(db, video_id, statistic, measurement)
            db.execute("DELETE FROM measurement_failures WHERE video_id = ?", (video_id,))

    def record_measurement_failure(
        self, video_id: str, reason: str, params: dict[str, object]
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

    def measurements(self) -> dict[str, dict[str, Measurement]]:
        """video → statistic → measurement."""
        rows = self._read(
            "SELECT video_id, statistic, value, params, decoder, frames_read, seconds, "
            "measured_at FROM measurements ORDER BY video_id, statistic"
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
        """Merge released rows in one transaction: all of it lands, or nothing does.

        A decision identical to the annotator's current one (value, source and time) is
        skipped, so importing the same release twice changes nothing; any other decision is
        appended to the log with its original time and provenance.
        """
        added = skipped = marks_set = 0
        with self._write() as db:
            new_videos, _ = self._register_videos(db, videos)
            for video_id, factor, d in decisions:
                decided_at = d.decided_at.isoformat(timespec="microseconds")
                current = db.execute(
                    "SELECT value, source, decided_at FROM current_decisions "
                    "WHERE video_id = ? AND factor = ? AND annotator = ?",
                    (video_id, factor, d.annotator),
                ).fetchone()
                if current == (d.value, d.source, decided_at):
                    skipped += 1
                    continue
                self._append_decision(
                    db,
                    video_id,
                    factor,
                    d.value,
                    annotator=d.annotator,
                    source=d.source,
                    note=d.note,
                    decided_at=decided_at,
                    replaced=(d.replaced_auto_value, d.replaced_measurement),
                )
                added += 1
            for video_id, m in marks:
                current = self._current_marks(db, video_id).get(
                    (video_id, m.annotator), {"flag": False, "skip": False, "note": None}
                )
                for kind, value in (("flag", m.flagged), ("skip", m.skipped), ("note", m.note)):
                    if current[kind] != value:
                        self._append_mark(db, video_id, kind, value, m.annotator, None)
                        marks_set += 1
            for video_id, statistic, measurement in measurements:
                self._record_measurement(db, video_id, statistic, measurement)
            for t in thresholds:
                self._set_threshold(
                    db, t.factor, t.statistic, t.rule, t.thresholds, t.set_at.isoformat()
                )
        return ImportCounts(new_videos, added, skipped, marks_set)

    def revision(self) -> tuple[int, int, int, str | None]:
        """Changes whenever decisions, marks or measurements change: a cache key for views."""
        return self._read(
            "SELECT (SELECT COALESCE(MAX(decision_id), 0) FROM decisions), "
            "(SELECT COALESCE(MAX(mark_id), 0) FROM marks), "
            "(SELECT COUNT(*) FROM measurements), (SELECT MAX(measured_at) FROM measurements)"
        )[0]

    def integrity_check(self) -> str:
        return self._read("PRAGMA integrity_check")[0][0]

    def last_decision_id(self, annotator: str) -> int:
        """The id of the annotator's latest decision, 0 before the first: it changes exactly
        when the annotator's log does, so a page can tell whether what it shows is current."""
        return self._read(
            "SELECT COALESCE(MAX(decision_id), 0) FROM decisions WHERE annotator = ?",
            (annotator,),
        )[0][0]


def _check_annotator(annotator: str, source: str) -> None:
    if not isinstance(annotator, str) or not annotator.strip():
        raise StoreError("an annotator name is required (got an empty name)")
    if (annotator == AUTO_ANNOTATOR) != (source == "auto"):
        raise StoreError(
            f"annotator '{AUTO_ANNOTATOR}' is reserved for measured decisions (source 'auto'); "
            f"got annotator '{annotator}' with source '{source}'"
        )


def _statements(script: str) -> list[str]:
    """Split a migration script into statements (triggers contain ';' inside BEGIN … END)."""
    statements, current = [], []
    for line in script.strip().splitlines():
        current.append(line)
        text = "\n".join(current).strip()
        if text.endswith(";") and sqlite3.complete_statement(text):
            statements.append(text)
            current = []
    return statements
