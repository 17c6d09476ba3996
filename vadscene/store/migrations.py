"""The schema of the annotation store and its upgrades.

The schema is versioned with SQLite's ``PRAGMA user_version``: a store at version *n* has run
the first *n* scripts of :data:`MIGRATIONS`, and :func:`upgrade` runs the rest. A migration is
never edited once released, only appended, so every store reaches the same schema whatever
version it started from.

A migration is SQL text, or a function of the connection where it needs Python
(migration 4 re-spells every stored time with :func:`vadscene.core.instants.canonical`).

"Current" state is kept by the schema itself: the tables ``current_decision_ids`` and
``current_mark_ids`` hold the current row per key of the append-only ``decisions`` and
``marks`` logs — the latest time, the row id breaking ties — and triggers update them in the
transaction of every insert. Since migration 4 every stored time is canonical UTC text, so the
latest time is the greatest text.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from vadscene.core.instants import readable_or_earliest


def time_key(column: str) -> str:
    """SQL for the sort key of a stored time before migration 4 (used by migration 3 only):
    the instant in UTC, to the microsecond.

    Stored times are ISO 8601 with microseconds and an offset (``…T05:00:00.123456+05:00``).
    ``datetime()`` converts to UTC but keeps whole seconds; the fraction is the same in every
    offset, so it is appended from the text. Keys compare as text in time order, so the
    release's own offsets are kept as written and still order correctly. An offset SQLite
    cannot read (one with seconds, which Python writes and no benchmark tool does) falls back
    to the text as written.
    """
    fraction = f"substr({column}, 20, 7)"
    return (
        f"COALESCE(datetime({column}) || CASE WHEN substr({column}, 20, 1) = '.' "
        f"THEN {fraction} ELSE '.000000' END, {column})"
    )


def _canonical_times(db: sqlite3.Connection) -> None:
    """Migration 4: every stored time in one canonical UTC spelling, compared as an instant;
    imported decisions told apart from the annotator's own actions; current marks kept like
    current decisions; a measurement that has no value recorded (a withdrawal) rather than
    deleted.

    The logs stay append-only: their no-update triggers are lifted only inside this
    transaction, to re-spell each time as the same instant (one that cannot be read becomes
    :data:`~vadscene.core.instants.EARLIEST`, so it never wins).
    """
    db.create_function("canonical_time", 1, readable_or_earliest, deterministic=True)
    for statement in statements(_CANONICAL_TIMES):
        db.execute(statement)


_CANONICAL_TIMES = """
    DROP TRIGGER decisions_no_update;
    UPDATE decisions SET decided_at = canonical_time(decided_at)
        WHERE decided_at IS NOT canonical_time(decided_at);
    CREATE TRIGGER decisions_no_update BEFORE UPDATE ON decisions
        BEGIN SELECT RAISE(ABORT, 'the decision log is append-only'); END;
    ALTER TABLE decisions ADD COLUMN imported INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX decisions_local_by_annotator ON decisions (annotator, imported, decision_id);
    DROP TRIGGER decisions_keep_current;
    DELETE FROM current_decision_ids;
    INSERT INTO current_decision_ids (video_id, factor, annotator, decided_key, decision_id)
        SELECT video_id, factor, annotator, decided_at, decision_id FROM (
            SELECT video_id, factor, annotator, decided_at, decision_id, ROW_NUMBER() OVER (
                PARTITION BY video_id, factor, annotator
                ORDER BY decided_at DESC, decision_id DESC) AS rank
            FROM decisions)
        WHERE rank = 1;
    CREATE TRIGGER decisions_keep_current AFTER INSERT ON decisions BEGIN
        INSERT INTO current_decision_ids (video_id, factor, annotator, decided_key, decision_id)
        VALUES (NEW.video_id, NEW.factor, NEW.annotator, NEW.decided_at, NEW.decision_id)
        ON CONFLICT (video_id, factor, annotator) DO UPDATE
        SET decided_key = excluded.decided_key, decision_id = excluded.decision_id
        WHERE excluded.decided_key > current_decision_ids.decided_key
           OR (excluded.decided_key = current_decision_ids.decided_key
               AND excluded.decision_id > current_decision_ids.decision_id);
    END;
    DROP TRIGGER marks_no_update;
    UPDATE marks SET marked_at = canonical_time(marked_at)
        WHERE marked_at IS NOT canonical_time(marked_at);
    CREATE TRIGGER marks_no_update BEFORE UPDATE ON marks
        BEGIN SELECT RAISE(ABORT, 'the mark log is append-only'); END;
    CREATE INDEX marks_by_content ON marks (video_id, annotator, kind, marked_at);
    CREATE TABLE current_mark_ids (
        video_id TEXT NOT NULL,
        annotator TEXT NOT NULL,
        kind TEXT NOT NULL,
        marked_at TEXT NOT NULL,
        mark_id INTEGER NOT NULL REFERENCES marks(mark_id),
        PRIMARY KEY (video_id, annotator, kind)
    ) WITHOUT ROWID;
    INSERT INTO current_mark_ids (video_id, annotator, kind, marked_at, mark_id)
        SELECT video_id, annotator, kind, marked_at, mark_id FROM (
            SELECT video_id, annotator, kind, marked_at, mark_id, ROW_NUMBER() OVER (
                PARTITION BY video_id, annotator, kind
                ORDER BY marked_at DESC, mark_id DESC) AS rank
            FROM marks)
        WHERE rank = 1;
    CREATE TRIGGER marks_keep_current AFTER INSERT ON marks BEGIN
        INSERT INTO current_mark_ids (video_id, annotator, kind, marked_at, mark_id)
        VALUES (NEW.video_id, NEW.annotator, NEW.kind, NEW.marked_at, NEW.mark_id)
        ON CONFLICT (video_id, annotator, kind) DO UPDATE
        SET marked_at = excluded.marked_at, mark_id = excluded.mark_id
        WHERE excluded.marked_at > current_mark_ids.marked_at
           OR (excluded.marked_at = current_mark_ids.marked_at
               AND excluded.mark_id > current_mark_ids.mark_id);
    END;
    CREATE TABLE measurements_v4 (
        video_id TEXT NOT NULL REFERENCES videos(video_id),
        statistic TEXT NOT NULL,
        value REAL,
        params TEXT NOT NULL,
        decoder TEXT NOT NULL,
        frames_read INTEGER NOT NULL,
        seconds REAL NOT NULL,
        measured_at TEXT NOT NULL,
        PRIMARY KEY (video_id, statistic)
    );
    INSERT INTO measurements_v4 SELECT video_id, statistic, value, params, decoder,
        frames_read, seconds, canonical_time(measured_at) FROM measurements;
    DROP TABLE measurements;
    ALTER TABLE measurements_v4 RENAME TO measurements;
    UPDATE thresholds SET set_at = canonical_time(set_at);
"""


Migration = str | Callable[[sqlite3.Connection], None]

MIGRATIONS: tuple[Migration, ...] = (
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
    # 3: "current" is the latest decision time (row id breaks ties), kept in a table a trigger
    # maintains; an index finds a decision by its content.
    f"""
    CREATE TABLE current_decision_ids (
        video_id TEXT NOT NULL,
        factor TEXT NOT NULL,
        annotator TEXT NOT NULL,
        decided_key TEXT NOT NULL,
        decision_id INTEGER NOT NULL REFERENCES decisions(decision_id),
        PRIMARY KEY (video_id, factor, annotator)
    ) WITHOUT ROWID;
    CREATE INDEX current_by_annotator ON current_decision_ids (annotator, video_id);
    CREATE INDEX decisions_by_content ON decisions (video_id, factor, annotator, decided_at);
    INSERT INTO current_decision_ids (video_id, factor, annotator, decided_key, decision_id)
        SELECT video_id, factor, annotator, decided_key, decision_id FROM (
            SELECT video_id, factor, annotator, {time_key("decided_at")} AS decided_key,
                decision_id, ROW_NUMBER() OVER (
                PARTITION BY video_id, factor, annotator
                ORDER BY {time_key("decided_at")} DESC, decision_id DESC) AS rank
            FROM decisions)
        WHERE rank = 1;
    CREATE TRIGGER decisions_keep_current AFTER INSERT ON decisions BEGIN
        INSERT INTO current_decision_ids (video_id, factor, annotator, decided_key, decision_id)
        VALUES (NEW.video_id, NEW.factor, NEW.annotator, {time_key("NEW.decided_at")},
            NEW.decision_id)
        ON CONFLICT (video_id, factor, annotator) DO UPDATE
        SET decided_key = excluded.decided_key, decision_id = excluded.decision_id
        WHERE excluded.decided_key > current_decision_ids.decided_key
           OR (excluded.decided_key = current_decision_ids.decided_key
               AND excluded.decision_id > current_decision_ids.decision_id);
    END;
    DROP VIEW current_decisions;
    CREATE VIEW current_decisions AS
        SELECT d.decision_id, c.video_id, c.factor, d.value, c.annotator, d.source,
            d.decided_at, d.note, d.undoes, d.replaced_auto_value, d.replaced_measurement
        FROM current_decision_ids AS c
        JOIN decisions AS d ON d.decision_id = c.decision_id;
    """,
    # 4: canonical instants, imported rows marked, current marks, measurement withdrawals.
    _canonical_times,
    # 5: the team: registered annotators and their log, aliases left by renames and merges,
    # access links and sessions (hashes only), refused logins, assignments merged by time.
    """
    CREATE TABLE annotators (
        annotator TEXT PRIMARY KEY,
        display_name TEXT NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('annotator', 'lead')),
        email TEXT UNIQUE,
        added_at TEXT NOT NULL,
        revoked_at TEXT
    );
    CREATE TABLE annotator_events (
        event_id INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL,
        annotator TEXT NOT NULL,
        target TEXT,
        at TEXT NOT NULL,
        by TEXT
    );
    CREATE TRIGGER annotator_events_no_update BEFORE UPDATE ON annotator_events
        BEGIN SELECT RAISE(ABORT, 'the annotator log is append-only'); END;
    CREATE TRIGGER annotator_events_no_delete BEFORE DELETE ON annotator_events
        BEGIN SELECT RAISE(ABORT, 'the annotator log is append-only'); END;
    CREATE TABLE annotator_aliases (
        alias TEXT PRIMARY KEY, annotator TEXT NOT NULL, at TEXT NOT NULL
    );
    CREATE TABLE access_links (
        secret_hash TEXT PRIMARY KEY,
        annotator TEXT NOT NULL,
        created_at TEXT NOT NULL,
        revoked_at TEXT
    );
    CREATE TABLE sessions (
        session_hash TEXT PRIMARY KEY,
        annotator TEXT NOT NULL,
        via TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE TABLE login_failures (
        failure_id INTEGER PRIMARY KEY AUTOINCREMENT,
        at TEXT NOT NULL,
        remote TEXT NOT NULL,
        reason TEXT NOT NULL
    );
    CREATE INDEX login_failures_by_remote ON login_failures (remote, at);
    CREATE TABLE assignments (
        assignment_id INTEGER PRIMARY KEY AUTOINCREMENT,
        video_id TEXT NOT NULL REFERENCES videos(video_id),
        annotator TEXT NOT NULL,
        assigned INTEGER NOT NULL CHECK (assigned IN (0, 1)),
        assigned_at TEXT NOT NULL,
        assigned_by TEXT
    );
    CREATE INDEX assignments_by_content ON assignments (video_id, annotator, assigned_at);
    CREATE TRIGGER assignments_no_update BEFORE UPDATE ON assignments
        BEGIN SELECT RAISE(ABORT, 'the assignment log is append-only'); END;
    CREATE TRIGGER assignments_no_delete BEFORE DELETE ON assignments
        BEGIN SELECT RAISE(ABORT, 'the assignment log is append-only'); END;
    CREATE TABLE current_assignment_ids (
        video_id TEXT NOT NULL,
        annotator TEXT NOT NULL,
        assigned_at TEXT NOT NULL,
        assignment_id INTEGER NOT NULL REFERENCES assignments(assignment_id),
        PRIMARY KEY (video_id, annotator)
    ) WITHOUT ROWID;
    CREATE TRIGGER assignments_keep_current AFTER INSERT ON assignments BEGIN
        INSERT INTO current_assignment_ids (video_id, annotator, assigned_at, assignment_id)
        VALUES (NEW.video_id, NEW.annotator, NEW.assigned_at, NEW.assignment_id)
        ON CONFLICT (video_id, annotator) DO UPDATE
        SET assigned_at = excluded.assigned_at, assignment_id = excluded.assignment_id
        WHERE excluded.assigned_at > current_assignment_ids.assigned_at
           OR (excluded.assigned_at = current_assignment_ids.assigned_at
               AND excluded.assignment_id > current_assignment_ids.assignment_id);
    END;
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)
"""The schema version this vadscene writes and understands."""


def upgrade(db: sqlite3.Connection, version: int) -> None:
    """Run the migrations after ``version`` on ``db``, inside the caller's write transaction,
    recording each one's number as the ``user_version``."""
    for number, migration in enumerate(MIGRATIONS[version:], start=version + 1):
        if callable(migration):
            migration(db)
        else:
            for statement in statements(migration):
                db.execute(statement)
        db.execute(f"PRAGMA user_version = {number}")


def statements(script: str) -> list[str]:
    """Split a migration script into statements (triggers contain ';' inside BEGIN … END)."""
    found: list[str] = []
    current: list[str] = []
    for line in script.strip().splitlines():
        current.append(line)
        text = "\n".join(current).strip()
        if text.endswith(";") and sqlite3.complete_statement(text):
            found.append(text)
            current = []
    return found
