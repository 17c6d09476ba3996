"""The bad-input corpus: every case of :data:`support.reliability.CASES`, one test each.

Each case builds its bad input in ``tmp_path``, runs a CLI command in-process (stdout and
stderr captured by :func:`support.reliability.run_case`) or a library call, and checks the
message names the file / video / value and what was expected, the exit code, and that the
annotation store is unchanged byte for byte (scan and measure record the problem by design:
only the table they record it in may change, and it must). The cases live in
``tests/support/reliability.py`` so the README's reliability figures
(``bench/reliability_figures.py``) come from running exactly these cases.
"""

from __future__ import annotations

import inspect
import sqlite3
from pathlib import Path

import pytest
from support.reliability import (
    CASES,
    GOOD,
    registry_workspace,
    reliability_figures,
    run_case,
    snapshot_store,
    store_changes,
)

from vadscene.store.workspace import STORE_NAME, Workspace


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_bad_input_gets_a_clear_message_and_leaves_the_store_alone(case, tmp_path: Path) -> None:
    outcome = run_case(case, tmp_path)
    assert outcome.passed, (
        f"{case.name}: " + "; ".join(outcome.problems) + f"\n--- message ---\n{outcome.message}"
    )


def test_the_corpus_covers_cli_and_library_with_concrete_expectations() -> None:
    names = [case.name for case in CASES]
    assert len(names) == len(set(names)) >= 20
    assert all(case.expected and all(f.strip() for f in case.expected) for case in CASES)
    commands = {case.name.split("_")[0] for case in CASES}
    assert {"scan", "measure", "audit", "validate", "import", "init", "export"} <= commands
    assert any(case.exit_code is None for case in CASES)  # library calls too


# --- the snapshot helper notices every kind of change --------------------------------------


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


# --- the README figures count exactly what these tests run ---------------------------------


def test_reliability_figures_count_what_the_tests_run() -> None:
    # Every case already runs above: the figures are checked on two cheap ones, and the
    # README's run (bench/reliability_figures.py) takes the default, the whole table.
    assert inspect.signature(reliability_figures).parameters["cases"].default is CASES
    cheap = tuple(
        c for c in CASES if c.name in {"validate_release_not_found", "store_unknown_mark"}
    )
    figures = reliability_figures(cases=cheap, fuzz_examples=25, decisions_per_writer=25, kills=2)
    assert figures["bad_input_cases"] == figures["bad_input_passed"] == len(cheap) == 2
    assert figures["bad_input_failures"] == 0
    assert figures["fuzz_examples"] == 25
    outcomes = ("fuzz_refused", "fuzz_imported", "fuzz_failures")
    assert sum(figures[key] for key in outcomes) == 25
    assert figures["fuzz_failures"] == 0
    assert figures["concurrent_decisions_written"] == 50
    assert figures["concurrent_decisions_intact"] == 50
    assert figures["crash_kills"] == 2
    assert figures["crash_decisions_acknowledged"] >= 10 + 23  # the kills come after 10 and 23
    assert figures["crash_decisions_found"] == figures["crash_decisions_acknowledged"]
