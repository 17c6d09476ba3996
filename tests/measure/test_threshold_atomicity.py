"""Applying a threshold rule is all or nothing: a writer killed half-way leaves the old state.

A rule and the auto poles it gives belong together — a release publishes both, and a pole
written under a rule the store does not hold cannot be explained. The test applies a rule to
a real SQLite store of :data:`VIDEOS` measured videos in a writer subprocess and SIGKILLs that
process after it has written half of the pole changes, then checks the store holds the old
rule, the old poles and the same number of rows in every table.

How "half-way" is made deterministic without replacing any code: the writer installs an
SQLite trace callback (``sqlite3.Connection.set_trace_callback``, which SQLite calls as each
statement starts) on the store's connection. At the pole insert number :func:`halt_at` it
prints ``halted`` and then blocks reading its stdin, which the test never writes: the writer is
stopped inside ``apply_rule`` with exactly that many pole inserts begun. The test waits for the
line and SIGKILLs the process there. A writer that committed each pole on its own would leave
``halt_at - 1`` new poles behind under the old rule; one transaction leaves none.
"""

from __future__ import annotations

import os
import select
import signal
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from helpers import video_info

from vadscene.core.records import AUTO_ANNOTATOR, AutoThreshold, FactorDecision, Measurement
from vadscene.measure.thresholds import apply_rule, pole_of, preview_rule, rule_thresholds
from vadscene.store.workspace import STORE_NAME, Workspace

pytestmark = pytest.mark.durability

VIDEOS = 3000
FACTOR, STATISTIC = "resolution", "sharpness"
HALT_TIMEOUT_S = 120.0  # the writer reaching the halting insert, on a loaded 2-core box
AT = datetime(2026, 1, 2, tzinfo=UTC)

WRITER = """
import sys

from vadscene.measure.thresholds import apply_rule
from vadscene.store.workspace import Workspace

root, halt_at = sys.argv[1], int(sys.argv[2])
begun = set()


def halt_at_a_pole(statement):
    # SQLite reports an insert again for each trigger it fires; its text (with the values
    # bound, so the video) tells one pole insert from the next.
    if statement.startswith("INSERT INTO decisions") and statement not in begun:
        begun.add(statement)
        if len(begun) == halt_at:
            print("halted", flush=True)
            sys.stdin.readline()  # never written: the test SIGKILLs this process here


with Workspace.open(root) as workspace:
    workspace.store._db.set_trace_callback(halt_at_a_pole)
    apply_rule(workspace.store, sys.argv[3], sys.argv[4])
print("finished", flush=True)
"""


def _measured_workspace(root: Path) -> None:
    """VIDEOS videos with sharpness 0 … VIDEOS-1, under the median rule with its poles."""
    ids = [f"Abuse{i:05d}_x264" for i in range(VIDEOS)]
    sharpness = {video: float(i) for i, video in enumerate(ids)}
    with Workspace.create(root, video_root=None, dataset="atomicity") as workspace:
        factor = workspace.catalogue.factor(FACTOR)
        thresholds = rule_thresholds(np.array(list(sharpness.values())), "median")
        workspace.store.import_rows(
            videos=[video_info(video) for video in ids],
            decisions=[
                (video, FACTOR, _pole(pole_of(value, thresholds, factor)))
                for video, value in sharpness.items()
            ],
            marks=[],
            measurements=[(video, STATISTIC, _sharpness(v)) for video, v in sharpness.items()],
            thresholds=[
                AutoThreshold(
                    factor=FACTOR,
                    statistic=STATISTIC,
                    rule="median",
                    thresholds=thresholds,
                    set_at=AT,
                )
            ],
        )


def _pole(value: str) -> FactorDecision:
    return FactorDecision(annotator=AUTO_ANNOTATOR, value=value, source="auto", decided_at=AT)


def _sharpness(value: float) -> Measurement:
    return Measurement(value=value, decoder="pyav", frames_read=25, seconds=0.01, measured_at=AT)


@dataclass(frozen=True)
class StoreState:
    integrity: str
    rules: list[tuple]
    poles: list[tuple]
    rows: dict[str, int]


def _state(root: Path) -> StoreState:
    """The rules, the current auto poles and every table's row count, read by a connection of
    the test's own (which also rolls back whatever a killed writer left uncommitted)."""
    db = sqlite3.connect(root / STORE_NAME)
    try:
        tables = [
            row[0]
            for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if not row[0].startswith("sqlite_")
        ]
        return StoreState(
            integrity=db.execute("PRAGMA integrity_check").fetchone()[0],
            rules=db.execute("SELECT * FROM thresholds ORDER BY factor").fetchall(),
            poles=db.execute(
                "SELECT video_id, value, decided_at FROM current_decisions "
                "WHERE annotator = ? AND factor = ? ORDER BY video_id",
                (AUTO_ANNOTATOR, FACTOR),
            ).fetchall(),
            rows={t: db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in tables},
        )
    finally:
        db.close()


def halt_at(changes: int) -> int:
    """The pole insert the writer halts at: half of the changes the rule makes."""
    return changes // 2


def test_a_writer_killed_half_way_through_a_rule_leaves_the_old_rule_and_poles(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    _measured_workspace(root)
    with Workspace.open(root) as workspace:
        changes = len(preview_rule(workspace.store, FACTOR, "terciles").changed)
    assert changes > 100  # the middle third of the videos turns ambiguous
    before = _state(root)
    assert before.integrity == "ok"

    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(root), str(halt_at(changes)), FACTOR, "terciles"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert writer.stdout is not None
        ready, _, _ = select.select([writer.stdout], [], [], HALT_TIMEOUT_S)
        line = writer.stdout.readline().decode().strip() if ready else "(nothing in time)"
        assert line == "halted", writer.stderr.read().decode() if writer.stderr else line
    finally:
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait(timeout=30)
    assert writer.returncode == -signal.SIGKILL

    assert _state(root) == before

    # The store is whole and unlocked: the same rule applied again completes.
    with Workspace.open(root) as workspace:
        applied = apply_rule(workspace.store, FACTOR, "terciles")
    assert len(applied.changed) == changes
    after = _state(root)
    assert [rule[:3] for rule in after.rules] == [(FACTOR, STATISTIC, "terciles")]
    assert after.rows["decisions"] == before.rows["decisions"] + changes
