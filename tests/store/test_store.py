"""The SQLite annotation store: durability, undo, refusals, append-only log, concurrency."""

from __future__ import annotations

import math
import multiprocessing
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest
from helpers import video_info

from vadscene.core.catalogue import Catalogue
from vadscene.core.errors import StoreError
from vadscene.core.records import VideoInfo
from vadscene.store.database import AnnotationStore, Decision
from vadscene.store.migrations import MIGRATIONS, statements

VIDEOS = ["Abuse001_x264", "Arson002_x264", "Normal_Videos_003_x264"]


def _video(video_id: str) -> VideoInfo:
    return video_info(video_id, category=video_id.split("0")[0])


@pytest.fixture
def store(tmp_path: Path, catalogue: Catalogue) -> AnnotationStore:
    with AnnotationStore(tmp_path / "annotations.db", catalogue) as opened:
        opened.register_videos(_video(v) for v in VIDEOS)
        yield opened


def _dump(path: Path) -> list[str]:
    """Every row of every table, read through a separate connection."""
    with sqlite3.connect(path) as db:
        return list(db.iterdump())


def test_decisions_survive_reopening(tmp_path: Path, catalogue: Catalogue) -> None:
    path = tmp_path / "annotations.db"
    with AnnotationStore(path, catalogue) as first:
        first.register_videos([_video(VIDEOS[0])])
        first.record_decision(VIDEOS[0], "color", "grayscale", annotator="ana")
        first.record_decision(VIDEOS[0], "crowd", "ambiguous", annotator="ana", note="dark")
    with AnnotationStore(path, catalogue) as second:
        assert second.current_values("ana") == {
            (VIDEOS[0], "color"): "grayscale",
            (VIDEOS[0], "crowd"): "ambiguous",
        }
        assert [d.note for d in second.decision_log()] == [None, "dark"]


def test_committed_before_return_is_visible_to_another_connection(
    store: AnnotationStore,
) -> None:
    store.record_decision(VIDEOS[1], "setting", "indoor", annotator="ana")
    with sqlite3.connect(store.path) as other:
        rows = other.execute("SELECT video_id, factor, value, annotator FROM decisions").fetchall()
    assert rows == [(VIDEOS[1], "setting", "indoor", "ana")]


def test_wal_mode_and_schema_version(store: AnnotationStore) -> None:
    with sqlite3.connect(store.path) as other:
        assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert other.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)


def test_newer_schema_is_refused(tmp_path: Path, catalogue: Catalogue) -> None:
    path = tmp_path / "future.db"
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    with pytest.raises(StoreError, match="newer than this vadscene understands"):
        AnnotationStore(path, catalogue)


def test_not_a_database_is_refused(tmp_path: Path, catalogue: Catalogue) -> None:
    path = tmp_path / "annotations.db"
    path.write_text("this is not sqlite " * 100)
    with pytest.raises(StoreError, match="not a usable vadscene store"):
        AnnotationStore(path, catalogue)


def test_undo_walks_back_through_an_annotators_history(store: AnnotationStore) -> None:
    v = VIDEOS[0]
    store.record_decision(v, "color", "grayscale", annotator="ana")
    store.record_decision(v, "color", "color", annotator="ana")
    store.record_decision(v, "crowd", "few", annotator="ana")
    store.record_decision(v, "color", "ambiguous", annotator="ben")  # another annotator

    undo_crowd = store.undo_last("ana")
    assert (undo_crowd.factor, undo_crowd.value) == ("crowd", None)
    assert store.current_values("ana") == {(v, "color"): "color"}

    store.undo_last("ana")
    assert store.current_values("ana") == {(v, "color"): "grayscale"}
    store.undo_last("ana")
    assert store.current_values("ana") == {}
    assert store.undo_last("ana") is None
    assert store.current_values("ben") == {(v, "color"): "ambiguous"}  # untouched
    assert len(store.decision_log()) == 7  # four decisions + three undo rows: nothing deleted


def test_undo_after_new_decision_restores_the_undone_ones_predecessor(
    store: AnnotationStore,
) -> None:
    v = VIDEOS[0]
    store.record_decision(v, "color", "grayscale", annotator="ana")
    store.record_decision(v, "color", "color", annotator="ana")
    store.undo_last("ana")  # back to grayscale
    store.record_decision(v, "color", "ambiguous", annotator="ana")
    store.undo_last("ana")
    assert store.current_values("ana") == {(v, "color"): "grayscale"}


@pytest.mark.parametrize(
    ("video", "factor", "value", "annotator", "fragments"),
    [
        ("Nope001", "color", "color", "ana", ["unknown video 'Nope001'", "registers 3 videos"]),
        (VIDEOS[0], "colour", "color", "ana", ["unknown factor 'colour'", "color, resolution"]),
        (
            VIDEOS[0],
            "color",
            "red",
            "ana",
            ["value 'red' is not allowed", "color, grayscale, ambiguous"],
        ),
        (VIDEOS[0], "location", "fuel station", "ana", ["'fuel station'", "fuel-station"]),
        (VIDEOS[0], "color", "color", "", ["annotator name is required"]),
        (VIDEOS[0], "color", "color", "auto", ["reserved for measured decisions"]),
    ],
    ids=[
        "unknown-video",
        "unknown-factor",
        "bad-value",
        "near-miss-value",
        "no-annotator",
        "reserved-annotator",
    ],
)
def test_refused_decision_writes_nothing(
    store: AnnotationStore,
    video: str,
    factor: str,
    value: str,
    annotator: str,
    fragments: list[str],
) -> None:
    store.record_decision(VIDEOS[0], "color", "color", annotator="ana")
    before = _dump(store.path)
    with pytest.raises(StoreError) as caught:
        store.record_decision(video, factor, value, annotator=annotator)
    for fragment in fragments:
        assert fragment in str(caught.value)
    assert _dump(store.path) == before


def test_log_is_append_only(store: AnnotationStore) -> None:
    store.record_decision(VIDEOS[0], "color", "color", annotator="ana")
    with sqlite3.connect(store.path) as other:
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            other.execute("UPDATE decisions SET value = 'grayscale'")
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            other.execute("DELETE FROM decisions")


def test_manual_decision_on_auto_factor_is_an_override(store: AnnotationStore) -> None:
    from vadscene.core.records import Measurement

    v = VIDEOS[0]
    store.record_measurement(
        v,
        "sharpness",
        Measurement(
            value=12.5,
            decoder="opencv",
            frames_read=100,
            seconds=0.1,
            measured_at=datetime.now(UTC),
        ),
    )
    store.record_decision(v, "resolution", "low", annotator="auto", source="auto")
    override = store.record_decision(v, "resolution", "high", annotator="ana")
    assert override.source == "override"
    assert (override.replaced_auto_value, override.replaced_measurement) == ("low", 12.5)
    with pytest.raises(StoreError, match="manual; it takes no 'auto' decisions"):
        store.record_decision(v, "color", "color", annotator="auto", source="auto")


def test_measurements_of_one_video(store: AnnotationStore) -> None:
    from vadscene.core.records import Measurement

    for i, video in enumerate(VIDEOS[:2]):
        store.record_measurement(
            video,
            "sharpness",
            Measurement(
                value=float(i), decoder="opencv", frames_read=10, seconds=0.1,
                measured_at=datetime.now(UTC),
            ),
        )  # fmt: skip
    assert set(store.measurements()) == set(VIDEOS[:2])
    one = store.measurements(video_id=VIDEOS[1])
    assert list(one) == [VIDEOS[1]]
    assert one[VIDEOS[1]]["sharpness"].value == 1.0
    assert store.measurements(video_id=VIDEOS[2]) == {}


def test_marks_are_logged_and_current_state_is_latest(store: AnnotationStore) -> None:
    v = VIDEOS[2]
    store.set_mark(v, "flag", True, annotator="ana")
    store.set_mark(v, "note", "camera shakes", annotator="ana")
    store.set_mark(v, "flag", False, annotator="ana")
    assert store.marks() == {(v, "ana"): {"flag": False, "skip": False, "note": "camera shakes"}}
    with pytest.raises(StoreError, match="unknown mark"):
        store.set_mark(v, "star", True, annotator="ana")


def test_progress_counts_videos_with_every_manual_factor(
    store: AnnotationStore, catalogue: Catalogue
) -> None:
    manual = [f for f in catalogue.factors if f.source == "manual"]
    for factor in manual:
        store.record_decision(VIDEOS[0], factor.key, factor.values[0], annotator="ana")
    store.record_decision(VIDEOS[1], "color", "color", annotator="ana")
    progress = store.progress("ana")
    assert (progress.videos, progress.complete) == (3, 1)
    assert progress.decided_by_factor["color"] == 2
    assert progress.decided_by_factor["crowd"] == 1


# --- two processes writing at once ---------------------------------------------------------

DECISIONS_PER_PROCESS = 500


def _write_many(path: str, annotator: str, catalogue_json: str) -> None:
    catalogue = Catalogue.model_validate_json(catalogue_json)
    factors = [f for f in catalogue.factors if f.source == "manual"]
    with AnnotationStore(path, catalogue) as store:
        for i in range(DECISIONS_PER_PROCESS):
            factor = factors[i % len(factors)]
            store.record_decision(
                VIDEOS[i % len(VIDEOS)],
                factor.key,
                factor.values[i % 2],
                annotator=annotator,
                note=f"{annotator}-{i}",
            )


def _replay(log: list[Decision]) -> dict[tuple[str, str, str], str | None]:
    state: dict[tuple[str, str, str], str | None] = {}
    for d in log:
        state[(d.video_id, d.factor, d.annotator)] = d.value
    return state


def test_two_processes_writing_concurrently_lose_nothing(
    store: AnnotationStore, catalogue: Catalogue
) -> None:
    context = multiprocessing.get_context("spawn")
    workers = [
        context.Process(
            target=_write_many, args=(str(store.path), name, catalogue.model_dump_json())
        )
        for name in ("ana", "ben")
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=300)
        assert worker.exitcode == 0

    log = store.decision_log()
    assert len(log) == 2 * DECISIONS_PER_PROCESS
    for name in ("ana", "ben"):
        notes = [d.note for d in log if d.annotator == name]
        assert notes == [f"{name}-{i}" for i in range(DECISIONS_PER_PROCESS)]  # none lost
    current = {(d.video_id, d.factor, d.annotator): d.value for d in store.current_decisions()}
    assert current == _replay(log)
    assert store.integrity_check() == "ok"


def test_a_threshold_rule_is_written_with_its_poles_or_not_at_all(
    store: AnnotationStore,
) -> None:
    store.apply_threshold(
        "resolution",
        "sharpness",
        "median",
        [40.0],
        [(VIDEOS[0], "high"), (VIDEOS[1], "low")],
        note="sharpness median [40.0]",
    )
    assert [rule[:4] for rule in store.thresholds()] == [
        ("resolution", "sharpness", "median", [40.0])
    ]
    poles = store.current_decisions(annotator="auto")
    assert [(d.video_id, d.factor, d.value, d.source) for d in poles] == [
        (VIDEOS[0], "resolution", "high", "auto"),
        (VIDEOS[1], "resolution", "low", "auto"),
    ]
    assert {d.note for d in poles} == {"sharpness median [40.0]"}
    before = _dump(store.path)
    refused = [
        ([(VIDEOS[0], "low"), ("Nowhere999_x264", "high")], [40.0]),  # unknown video
        ([(VIDEOS[0], "low"), (VIDEOS[1], "sideways")], [40.0]),  # not a pole of the factor
        ([(VIDEOS[0], "low")], [math.nan]),  # the rule itself is refused after the poles
    ]
    for changed, thresholds in refused:
        with pytest.raises(StoreError):
            store.apply_threshold("resolution", "sharpness", "explicit", thresholds, changed)
        assert _dump(store.path) == before


def test_an_older_store_is_migrated_and_keeps_its_decisions(
    tmp_path: Path, catalogue: Catalogue
) -> None:
    path = tmp_path / "v1.db"
    with sqlite3.connect(path) as db:  # a store as schema version 1 left it
        for statement in statements(MIGRATIONS[0]):
            db.execute(statement)
        db.execute("PRAGMA user_version = 1")
        db.execute(
            "INSERT INTO videos VALUES ('Abuse001_x264', 'Abuse', NULL, 'a.mp4', 10, 25, 0.4, "
            "64, 48, 'h264', 100, 'b2s:0', '2026-01-01T00:00:00+00:00')"
        )
        db.execute(
            "INSERT INTO decisions (video_id, factor, value, annotator, source, decided_at) "
            "VALUES ('Abuse001_x264', 'color', 'grayscale', 'ana', 'manual', "
            "'2026-01-01T00:00:00+00:00')"
        )
    with AnnotationStore(path, catalogue) as store:
        assert store.schema_version == len(MIGRATIONS) > 1
        assert store.current_values("ana") == {("Abuse001_x264", "color"): "grayscale"}
        store.record_measurement_failure("Abuse001_x264", "zero frames", {"stride": 1})
        assert store.measurement_failures() == [("Abuse001_x264", "zero frames")]


def test_revision_changes_with_every_kind_of_write(store: AnnotationStore) -> None:
    from vadscene.core.records import Measurement

    seen = {store.revision()}
    store.record_decision(VIDEOS[0], "color", "color", annotator="ana")
    seen.add(store.revision())
    store.set_mark(VIDEOS[0], "flag", True, annotator="ana")
    seen.add(store.revision())
    store.record_measurement(
        VIDEOS[0],
        "sharpness",
        Measurement(
            value=1.0, decoder="pyav", frames_read=1, seconds=0.0, measured_at=datetime.now(UTC)
        ),
    )
    seen.add(store.revision())
    assert len(seen) == 4
    assert store.revision() == store.revision()  # reading changes nothing


def test_migration_makes_the_latest_decision_time_current(
    tmp_path: Path, catalogue: Catalogue
) -> None:
    """A version-2 store where a merge appended an older decision after a newer one (the row
    order says few, the decision times say many): after the upgrade, many is current."""
    path = tmp_path / "v2.db"
    with sqlite3.connect(path) as db:
        for script in MIGRATIONS[:2]:
            for statement in statements(script):
                db.execute(statement)
        db.execute("PRAGMA user_version = 2")
        db.execute(
            "INSERT INTO videos VALUES ('Abuse001_x264', 'Abuse', NULL, 'a.mp4', 10, 25, 0.4, "
            "64, 48, 'h264', 100, 'b2s:0', '2026-01-01T00:00:00+00:00')"
        )
        for value, at in (("few", "2026-01-01"), ("many", "2026-01-03"), ("few", "2026-01-01")):
            db.execute(
                "INSERT INTO decisions (video_id, factor, value, annotator, source, decided_at) "
                f"VALUES ('Abuse001_x264', 'crowd', '{value}', 'ana', 'manual', "
                f"'{at}T00:00:00.000000+00:00')"
            )
    with AnnotationStore(path, catalogue) as store:
        assert store.current_values("ana") == {("Abuse001_x264", "crowd"): "many"}
        store.record_decision("Abuse001_x264", "crowd", "few", annotator="ana")
        assert store.current_values("ana") == {("Abuse001_x264", "crowd"): "few"}


def test_a_read_only_open_upgrades_an_older_store_once(
    tmp_path: Path, catalogue: Catalogue
) -> None:
    path = tmp_path / "v2.db"
    with sqlite3.connect(path) as db:
        for script in MIGRATIONS[:2]:
            for statement in statements(script):
                db.execute(statement)
        db.execute("PRAGMA user_version = 2")
    with AnnotationStore(path, catalogue, read_only=True) as store:
        assert store.schema_version == len(MIGRATIONS)
        assert store.current_decisions() == []
