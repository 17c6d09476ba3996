"""Times are instants, the store API refuses what a release could not carry, and a refused
import writes nothing (issue 24, items 2–4)."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from helpers import ABUSE, ARSON, small_tmpfs, video_info
from support.snapshots import snapshot_store, store_changes

from vadscene.annotate.session import handle_event
from vadscene.core.catalogue import load_catalogue
from vadscene.core.errors import ReleaseError, StoreError, StoreFullError, UndoRefusedError
from vadscene.core.records import FactorDecision, Measurement
from vadscene.release.releases import (
    build_release,
    import_release,
    parse_release,
    read_release,
    release_json,
    write_release,
)
from vadscene.store.database import AnnotationStore
from vadscene.store.migrations import MIGRATIONS, statements
from vadscene.store.workspace import STORE_NAME, Workspace

HOUR = timedelta(hours=1)


def _release_data(workspace: Workspace) -> dict:
    return json.loads(release_json(build_release(workspace)))


def _decisions_of(data: dict, video_id: str) -> list[dict]:
    video = next(v for v in data["videos"] if v["video_id"] == video_id)
    return [d for a in video["factors"].values() for d in a["decisions"]]


# --- instants, not strings ------------------------------------------------------------------


def test_one_instant_written_with_another_offset_is_already_present(
    annotated: Workspace, tmp_path: Path
) -> None:
    data = _release_data(annotated)
    rewritten = 0
    for video in data["videos"]:
        for assignment in video["factors"].values():
            for d in assignment["decisions"]:
                instant = datetime.fromisoformat(d["decided_at"].replace("Z", "+00:00"))
                d["decided_at"] = instant.astimezone(timezone(timedelta(hours=2))).isoformat()
                rewritten += 1
    before = len(annotated.store.decision_log())

    counts = import_release(parse_release(data), annotated)

    assert rewritten > 10
    assert counts.decisions_added == 0
    assert counts.decisions_already_present == rewritten + sum(
        len(v["withdrawn_decisions"]) for v in data["videos"]
    )
    assert len(annotated.store.decision_log()) == before


def test_an_offset_sqlite_cannot_read_is_still_compared_as_an_instant(
    small_workspace: Workspace,
) -> None:
    store = small_workspace.store
    now = datetime.now(UTC)
    store.record_decision(ABUSE, "crowd", "many", annotator="ana", decided_at=now - HOUR)
    data = _release_data(small_workspace)
    (decision,) = _decisions_of(data, ABUSE)
    # the same key, "few", two hours ago, written with the largest offset ISO 8601 allows
    older = (now - 2 * HOUR).astimezone(timezone(timedelta(hours=23, minutes=59)))
    decision.update(value="few", decided_at=older.isoformat())
    video = next(v for v in data["videos"] if v["video_id"] == ABUSE)
    video["factors"]["crowd"]["value"] = "few"
    for row in data["support"]:
        if row["factor"] == "crowd":
            row["n_positive"], row["n_negative"] = 1, 0

    counts = import_release(parse_release(data), small_workspace)

    assert store.current_values("ana") == {(ABUSE, "crowd"): "many"}
    assert [(c.key, c.imported_value, c.local_value) for c in counts.conflicts] == [
        ("crowd", "few", "many")
    ]


def test_a_decision_from_the_future_is_refused_by_validate_import_and_the_api(
    small_workspace: Workspace, tmp_path: Path
) -> None:
    store = small_workspace.store
    store.record_decision(ABUSE, "crowd", "few", annotator="ana")
    data = _release_data(small_workspace)
    data["created_at"] = data["videos"][0]["factors"]["crowd"]["decisions"][0]["decided_at"] = (
        "2999-01-01T00:00:00+00:00"
    )
    (tmp_path / "future.json").write_text(json.dumps(data))
    with pytest.raises(ReleaseError) as refused:
        read_release(tmp_path / "future.json")
    assert any(
        "$.created_at: 2999-01-01T00:00:00.000000+00:00 is later" in p
        for p in refused.value.problems
    )

    data["created_at"] = "2026-01-01T00:00:00+00:00"  # before the decision: still refused
    with pytest.raises(ReleaseError) as refused:
        parse_release(data)
    assert any(
        p.startswith("$.videos[0].factors.crowd.decisions[0].decided_at: 2999-01-01")
        for p in refused.value.problems
    )
    with pytest.raises(StoreError, match=r"decided_at: 2999-01-01T00:00:00\.000000.*later than"):
        store.record_decision(
            ABUSE, "crowd", "many", annotator="ana", decided_at="2999-01-01T00:00:00+00:00"
        )
    # the case: the annotator presses a key afterwards, and it is what is current
    store.record_decision(ABUSE, "crowd", "many", annotator="ana")
    assert store.current_values("ana") == {(ABUSE, "crowd"): "many"}


# --- the store API refuses what cannot be exported -----------------------------------------

BAD_CALLS = {
    "decided_at_not_a_time": lambda s: s.record_decision(
        ABUSE, "crowd", "few", annotator="ana", decided_at="not a time"
    ),
    "decided_at_naive": lambda s: s.record_decision(
        ABUSE, "crowd", "few", annotator="ana", decided_at="2026-01-01T00:00:00"
    ),
    "decided_at_month_13": lambda s: s.record_decision(
        ABUSE, "crowd", "few", annotator="ana", decided_at="2026-13-01T00:00:00+00:00"
    ),
    "decided_at_future": lambda s: s.record_decision(
        ABUSE, "crowd", "few", annotator="ana", decided_at=datetime.now(UTC) + 2 * HOUR
    ),
    "note_with_a_lone_surrogate": lambda s: s.record_decision(
        ABUSE, "crowd", "few", annotator="ana", note="\udfff"
    ),
    "marked_at_naive": lambda s: s.set_mark(
        ABUSE, "flag", True, annotator="ana", marked_at="2026-01-01 10:00"
    ),
    "mark_note_with_a_lone_surrogate": lambda s: s.set_mark(
        ABUSE, "note", "a\udfff", annotator="ana"
    ),
    "rule_magic": lambda s: s.set_threshold("resolution", "sharpness", "magic", [1.0]),
    "motion_rule_on_sharpness": lambda s: s.set_threshold(
        "motion", "sharpness", "terciles", [1.0, 2.0]
    ),
    "terciles_with_one_threshold": lambda s: s.set_threshold("motion", "motion", "terciles", [1.0]),
    "terciles_decreasing": lambda s: s.set_threshold("motion", "motion", "terciles", [9.0, 1.0]),
    "median_with_three": lambda s: s.set_threshold(
        "resolution", "sharpness", "median", [1.0, 2.0, 3.0]
    ),
    "rule_on_a_manual_factor": lambda s: s.set_threshold("crowd", "motion", "median", [1.0]),
    "set_at_not_a_time": lambda s: s.set_threshold(
        "resolution", "sharpness", "median", [1.0], set_at="soon"
    ),
    "measured_at_future": lambda s: s.record_measurement(
        ABUSE,
        "sharpness",
        Measurement(
            value=1.0,
            decoder="pyav",
            frames_read=1,
            seconds=0.1,
            measured_at=datetime.now(UTC) + 2 * HOUR,
        ),
    ),
}


@pytest.mark.parametrize("call", list(BAD_CALLS), ids=list(BAD_CALLS))
def test_a_bad_api_argument_is_refused_and_the_workspace_still_exports(
    annotated: Workspace, tmp_path: Path, call: str
) -> None:
    path = annotated.store.path
    before = snapshot_store(path)
    with pytest.raises(StoreError) as refused:
        BAD_CALLS[call](annotated.store)
    assert "\n" not in str(refused.value)
    assert store_changes(before, snapshot_store(path)) == []
    write_release(build_release(annotated), tmp_path / "after.json")
    read_release(tmp_path / "after.json")


def test_a_refusal_names_the_field_and_the_value(small_workspace: Workspace) -> None:
    with pytest.raises(StoreError) as refused:
        BAD_CALLS["decided_at_not_a_time"](small_workspace.store)
    assert str(refused.value) == (
        f"video '{ABUSE}', factor 'crowd': decided_at: 'not a time' is not an ISO 8601 time "
        "(expected e.g. 2026-01-02T03:04:05+00:00)"
    )
    with pytest.raises(StoreError) as refused:
        BAD_CALLS["terciles_decreasing"](small_workspace.store)
    assert str(refused.value) == (
        "threshold rule of factor 'motion': thresholds must be in increasing order, got [9.0, 1.0]"
    )


@pytest.mark.parametrize(
    ("rule", "thresholds", "problem"),
    [
        ("terciles", [5.0], "rule 'terciles' gives 2 thresholds, got 1: [5.0]"),
        ("terciles", [9.0, 1.0], "thresholds must be in increasing order, got [9.0, 1.0]"),
        ("median", [1.0, 2.0, 3.0], "rule 'median' gives 1 thresholds, got 3"),
    ],
)
def test_validate_refuses_a_rule_that_contradicts_itself(
    annotated: Workspace, rule: str, thresholds: list[float], problem: str
) -> None:
    data = _release_data(annotated)
    data["thresholds"][0].update(rule=rule, thresholds=thresholds)
    with pytest.raises(ReleaseError) as refused:
        parse_release(data)
    assert any(p.startswith("$.thresholds[0]: ") and problem in p for p in refused.value.problems)


def test_validate_refuses_a_rule_on_the_wrong_statistic(annotated: Workspace) -> None:
    data = _release_data(annotated)
    data["thresholds"][0]["statistic"] = "motion"
    with pytest.raises(ReleaseError) as refused:
        parse_release(data)
    assert "$.thresholds[0]: factor 'resolution' is measured by 'sharpness', not 'motion'" in (
        refused.value.problems
    )


# --- a refused import writes nothing ---------------------------------------------------------


def test_a_lone_surrogate_in_a_mark_note_is_refused_with_nothing_written(
    annotated: Workspace, tmp_path: Path
) -> None:
    data = _release_data(annotated)
    arson = next(v for v in data["videos"] if v["video_id"] == ARSON)
    for d in _decisions_of(data, ARSON):  # decisions the store does not hold yet come first
        d["decided_at"] = "2020-01-01T00:00:00+00:00"
    arson["marks"][0]["note"] = "\udfff"
    arson["marks"][0]["note_at"] = "2020-01-01T00:00:00+00:00"
    release_file = tmp_path / "surrogate.json"
    release_file.write_text(json.dumps(data))  # json escapes it: valid JSON text
    store_bytes = {p.name: p.read_bytes() for p in annotated.root.glob(f"{STORE_NAME}*")}
    counts = {t: _count(annotated.store.path, t) for t in ("decisions", "marks", "videos")}

    with pytest.raises(StoreError, match=r"note: holds U\+DFFF, which is not text"):
        import_release(read_release(release_file), annotated)

    assert {t: _count(annotated.store.path, t) for t in counts} == counts
    assert {p.name: p.read_bytes() for p in annotated.root.glob(f"{STORE_NAME}*")} == store_bytes


def _count(path: Path, table: str) -> int:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return int(db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def test_an_import_stopped_by_a_full_disk_says_how_much_was_saved(tmp_path: Path) -> None:
    source_root = tmp_path / "source"
    ids = [f"Video{i:05d}_x264" for i in range(3000)]
    with Workspace.create(source_root, video_root=None, dataset="full") as source:
        source.store.register_videos([video_info(v) for v in ids])
        at = datetime.now(UTC) - HOUR
        source.store.import_rows(
            videos=[],
            decisions=[
                (
                    v,
                    factor,
                    FactorDecision(
                        annotator="ana", value=value, source="manual", decided_at=at, note="n" * 300
                    ),
                )
                for v in ids
                for factor, value in (("crowd", "few"), ("setting", "indoor"), ("color", "color"))
            ],
            marks=[],
            measurements=[],
            thresholds=[],
        )
        release = build_release(source)
    total = 3 * len(ids)
    with small_tmpfs(tmp_path / "disk", size="2m") as disk:
        root = disk / "ws"
        Workspace.create(root, video_root=None, dataset="full").close()
        with Workspace.open(root) as target, pytest.raises(StoreFullError) as stopped:
            import_release(release, target)
        message = str(stopped.value)
        with Workspace.open(root) as target:
            saved = len(target.store.decision_log())
        assert 0 < saved < total  # the disk filled part-way, as the test means it to
        assert "nothing was saved" not in message
        assert f"{saved:,} decisions were saved" in message
        assert "import the same release again to complete it" in message
    with Workspace.create(tmp_path / "roomy", video_root=None, dataset="full") as roomy:
        import_release(release, roomy)
        again = import_release(release, roomy)
        assert (len(roomy.store.decision_log()), again.decisions_added) == (total, 0)


# --- undo means the annotator's own last action -----------------------------------------------


def test_undo_after_a_merge_undoes_the_last_own_action_not_an_imported_row(
    small_workspace: Workspace, tmp_path: Path
) -> None:
    store = small_workspace.store
    now = datetime.now(UTC)
    store.record_decision(ABUSE, "color", "grayscale", annotator="ana", decided_at=now - 3 * HOUR)
    store.record_decision(ABUSE, "color", "color", annotator="ana", decided_at=now - 2 * HOUR)
    old = build_release(small_workspace)  # ana's color = color, two hours ago
    store.record_decision(ABUSE, "crowd", "few", annotator="ana")  # the last own action
    # a colleague's workspace holds ana's older history: color = grayscale three hours ago
    data = json.loads(release_json(old))
    (decision,) = _decisions_of(data, ABUSE)
    decision.update(
        value="grayscale", decided_at=(now - 3 * HOUR + timedelta(seconds=1)).isoformat()
    )
    video = next(v for v in data["videos"] if v["video_id"] == ABUSE)
    video["factors"]["color"]["value"] = "grayscale"
    for row in data["support"]:
        if row["factor"] == "color":
            row["n_positive"], row["n_negative"] = 0, 1
    assert import_release(parse_release(data), small_workspace).decisions_added == 1

    with Workspace.open(small_workspace.root) as reloaded:  # the page reloads
        undo = {
            "seq": 1,
            "page": "p1",
            "action": "undo",
            "video": ABUSE,
            "head": reloaded.store.last_decision_id("ana"),
        }
        result = handle_event(reloaded.store, "ana", undo, last=None)
        assert (result.status, result.message) == ("recorded", f"undid crowd on {ABUSE}")
        # color is what it was before the merge and the undo: nobody touched it
        assert reloaded.store.current_values("ana") == {(ABUSE, "color"): "color"}


def test_undo_refuses_when_a_newer_merged_decision_replaced_the_action(
    small_workspace: Workspace,
) -> None:
    store = small_workspace.store
    store.record_decision(
        ABUSE, "crowd", "few", annotator="ana", decided_at=datetime.now(UTC) - HOUR
    )
    data = _release_data(small_workspace)
    (decision,) = _decisions_of(data, ABUSE)
    data["created_at"] = datetime.now(UTC).isoformat()
    decision.update(value="many", decided_at=data["created_at"])
    video = next(v for v in data["videos"] if v["video_id"] == ABUSE)
    video["factors"]["crowd"]["value"] = "many"
    for row in data["support"]:
        if row["factor"] == "crowd":
            row["n_positive"], row["n_negative"] = 0, 1
    import_release(parse_release(data), small_workspace)
    before = len(store.decision_log())
    with pytest.raises(UndoRefusedError, match="replaced by a newer decision"):
        store.undo_last("ana")
    assert len(store.decision_log()) == before
    assert store.current_values("ana") == {(ABUSE, "crowd"): "many"}


# --- a store written by an older vadscene -------------------------------------------------------


def test_upgrading_an_old_store_compares_its_times_as_instants(tmp_path: Path) -> None:
    """A version 3 store held times as written; after the upgrade "+02:00" and "Z" spellings of
    one instant are one text, and the newest instant is current."""
    path = tmp_path / "old.db"
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("BEGIN")
    for number, script in enumerate(MIGRATIONS[:3], start=1):
        assert isinstance(script, str)
        for statement in statements(script):
            db.execute(statement)
        db.execute(f"PRAGMA user_version = {number}")
    db.execute(
        "INSERT INTO videos VALUES (?, 'Abuse', NULL, NULL, 1, 1.0, 1.0, 1, 1, 'h264', 1, 'f', "
        "'2020-01-01T00:00:00+00:00')",
        (ABUSE,),
    )
    rows = [
        ("few", "2020-01-01T12:00:00.000000+02:00"),  # 10:00 UTC
        ("many", "2020-01-01T11:00:00.000000+00:00"),  # 11:00 UTC: the newest
        ("ambiguous", "not a time"),  # an older vadscene accepted this text
    ]
    for value, at in rows:
        db.execute(
            "INSERT INTO decisions (video_id, factor, value, annotator, source, decided_at) "
            "VALUES (?, 'crowd', ?, 'ana', 'manual', ?)",
            (ABUSE, value, at),
        )
    db.execute("COMMIT")
    db.close()

    with AnnotationStore(path, load_catalogue()) as store:
        assert store.current_values("ana") == {(ABUSE, "crowd"): "many"}
        times = [d.decided_at for d in store.decision_log()]
    assert times == [
        "2020-01-01T10:00:00.000000+00:00",
        "2020-01-01T11:00:00.000000+00:00",
        "0001-01-01T00:00:00.000000+00:00",
    ]
