"""Merges never make an older value current, for every piece of state (issue 24).

Examples with real workspaces over the same videos, each change dated explicitly: marks,
threshold rules and measurements merged in both orders, a round trip A → B → A, and
withdrawals (a cleared decision, note and flag; a statistic found to have no value) that
travel through two releases. The fuzzed property over every kind of state is
:func:`support.release_fuzz.check_release_import`; its oracle is checked last.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from helpers import ABUSE, ARSON
from support.release_fuzz import merge_problems

from vadscene.core.errors import ReleaseError
from vadscene.core.records import Measurement, Release
from vadscene.release.releases import (
    build_release,
    import_release,
    parse_release,
    read_release,
    release_json,
    write_release,
)
from vadscene.store.workspace import Workspace

EARLY = "2026-01-01T09:00:00+00:00"
LATE = "2026-01-01T08:00:00-03:00"
"""11:00 in UTC, two hours after :data:`EARLY`, though its text sorts before it: the merge
compares instants, not spellings."""


def _instant(text: str | None) -> datetime:
    assert text is not None
    return datetime.fromisoformat(text)


def _colleague(folder: Path, videos: Path) -> Workspace:
    workspace = Workspace.create(folder, video_root=videos, dataset="small")
    workspace.scan()
    return workspace


def _exported(workspace: Workspace, path: Path) -> Release:
    """The workspace's release, through its file (as a colleague receives it)."""
    write_release(build_release(workspace), path)
    return read_release(path)


def _without_export_stamp(release: Release) -> dict[str, Any]:
    data = json.loads(release_json(release))
    del data["created_at"], data["tool"]
    return data


def _sharpness(value: float, at: str) -> Measurement:
    return Measurement.model_validate(
        {"value": value, "decoder": "pyav", "frames_read": 20, "seconds": 0.1, "measured_at": at}
    )


def _conflicts(counts: Any) -> list[tuple[str, str, str, str]]:
    return sorted((c.kind, c.video_id, c.key, c.annotator) for c in counts.conflicts)


# --- each kind, both orders -------------------------------------------------------------------

ORDERS = pytest.mark.parametrize(
    "imported_is_newer", [False, True], ids=["local-newer-stays", "imported-newer-wins"]
)


@ORDERS
def test_marks_merge_by_time(
    small_workspace: Workspace, small_videos: Path, tmp_path: Path, imported_is_newer: bool
) -> None:
    """A flags ARSON for ben with a note; B unflags it and writes another note."""
    a_at, b_at = (LATE, EARLY) if imported_is_newer else (EARLY, LATE)
    a = small_workspace
    a.store.set_mark(ARSON, "flag", True, annotator="ben", marked_at=a_at)
    a.store.set_mark(ARSON, "note", "two cameras?", annotator="ben", marked_at=a_at)
    release = _exported(a, tmp_path / "a.json")
    with _colleague(tmp_path / "b", small_videos) as b:
        b.store.set_mark(ARSON, "flag", False, annotator="ben", marked_at=b_at)
        b.store.set_mark(ARSON, "note", "one camera", annotator="ben", marked_at=b_at)

        counts = import_release(release, b)

        marks = b.store.marks()
        timed = b.store.marks_with_times()[ARSON, "ben"]
    if imported_is_newer:
        assert marks == {(ARSON, "ben"): {"flag": True, "skip": False, "note": "two cameras?"}}
        assert _conflicts(counts) == []
    else:
        assert marks == {(ARSON, "ben"): {"flag": False, "skip": False, "note": "one camera"}}
        assert _conflicts(counts) == [
            ("mark", ARSON, "flag", "ben"),
            ("mark", ARSON, "note", "ben"),
        ]
    newer = _instant(LATE)
    assert (_instant(timed["flag"][1]), _instant(timed["note"][1])) == (newer, newer)
    assert timed["skip"] == (False, None)


@ORDERS
def test_threshold_rules_merge_by_time(
    small_workspace: Workspace, small_videos: Path, tmp_path: Path, imported_is_newer: bool
) -> None:
    a_at, b_at = (LATE, EARLY) if imported_is_newer else (EARLY, LATE)
    a = small_workspace
    a.store.set_threshold("resolution", "sharpness", "median", [37.5], set_at=a_at)
    release = _exported(a, tmp_path / "a.json")
    with _colleague(tmp_path / "b", small_videos) as b:
        b.store.set_threshold("resolution", "sharpness", "explicit", [10.0, 20.0], set_at=b_at)

        counts = import_release(release, b)

        rules = b.store.thresholds()
    winner = ("median", [37.5]) if imported_is_newer else ("explicit", [10.0, 20.0])
    assert [(f, s, r, t) for f, s, r, t, _at in rules] == [("resolution", "sharpness", *winner)]
    assert _instant(rules[0][4]) == _instant(LATE)
    assert counts.rules_updated == (1 if imported_is_newer else 0)
    assert _conflicts(counts) == ([] if imported_is_newer else [("rule", "", "resolution", "")])


@ORDERS
def test_measurements_merge_by_time(
    small_workspace: Workspace, small_videos: Path, tmp_path: Path, imported_is_newer: bool
) -> None:
    a_at, b_at = (LATE, EARLY) if imported_is_newer else (EARLY, LATE)
    a = small_workspace
    a.store.record_measurement(ARSON, "sharpness", _sharpness(20.0, a_at))
    release = _exported(a, tmp_path / "a.json")
    with _colleague(tmp_path / "b", small_videos) as b:
        b.store.record_measurement(ARSON, "sharpness", _sharpness(25.0, b_at))

        counts = import_release(release, b)

        kept = b.store.measurements()[ARSON]["sharpness"]
    assert kept.value == (20.0 if imported_is_newer else 25.0)
    assert kept.measured_at == _instant(LATE)
    assert counts.measurements_updated == (1 if imported_is_newer else 0)
    expected = [] if imported_is_newer else [("measurement", ARSON, "sharpness", "")]
    assert _conflicts(counts) == expected


# --- a round trip -----------------------------------------------------------------------------


def test_a_round_trip_a_b_a_ends_with_the_newer_values(
    small_workspace: Workspace, small_videos: Path, tmp_path: Path
) -> None:
    """A exports; B imports and changes every piece of state later; A imports B's release:
    A holds B's values, and A's own older release, merged again, brings none of them back."""
    a = small_workspace
    a.store.record_decision(ABUSE, "crowd", "few", annotator="ana", decided_at=EARLY)
    a.store.set_mark(ARSON, "flag", True, annotator="ben", marked_at=EARLY)
    a.store.set_mark(ARSON, "note", "two cameras?", annotator="ben", marked_at=EARLY)
    a.store.set_threshold("resolution", "sharpness", "median", [37.5], set_at=EARLY)
    a.store.record_measurement(ARSON, "sharpness", _sharpness(20.0, EARLY))
    from_a = _exported(a, tmp_path / "a.json")
    with _colleague(tmp_path / "b", small_videos) as b:
        import_release(from_a, b)
        b.store.record_decision(ABUSE, "crowd", "many", annotator="ana", decided_at=LATE)
        b.store.set_mark(ARSON, "flag", False, annotator="ben", marked_at=LATE)
        b.store.set_mark(ARSON, "note", "one camera", annotator="ben", marked_at=LATE)
        b.store.set_threshold("resolution", "sharpness", "explicit", [10.0], set_at=LATE)
        b.store.record_measurement(ARSON, "sharpness", _sharpness(25.0, LATE))
        from_b = _exported(b, tmp_path / "b.json")

    counts = import_release(from_b, a)

    def state() -> tuple[Any, ...]:
        rules = [(f, s, r, t) for f, s, r, t, _at in a.store.thresholds()]
        sharpness = a.store.measurements()[ARSON]["sharpness"].value
        return a.store.current_values("ana"), a.store.marks(), rules, sharpness

    newer = (
        {(ABUSE, "crowd"): "many"},
        {(ARSON, "ben"): {"flag": False, "skip": False, "note": "one camera"}},
        [("resolution", "sharpness", "explicit", [10.0])],
        25.0,
    )
    assert state() == newer
    assert counts.conflicts == ()
    assert _without_export_stamp(build_release(a)) == _without_export_stamp(from_b)

    import_release(from_a, a)  # A's own release, older on every key

    assert state() == newer
    assert _without_export_stamp(build_release(a)) == _without_export_stamp(from_b)


# --- withdrawals travel -----------------------------------------------------------------------


def test_a_cleared_decision_note_and_flag_travel_through_two_releases(
    small_workspace: Workspace, small_videos: Path, tmp_path: Path
) -> None:
    """A, B and C hold ana's crowd decision and ben's flag and note; A clears all three and
    exports; B imports (cleared there) and exports; C imports B's release: cleared in C."""
    a = small_workspace
    a.store.record_decision(ABUSE, "crowd", "few", annotator="ana", decided_at=EARLY)
    a.store.set_mark(ARSON, "flag", True, annotator="ben", marked_at=EARLY)
    a.store.set_mark(ARSON, "note", "two cameras?", annotator="ben", marked_at=EARLY)
    first = _exported(a, tmp_path / "first.json")
    with (
        _colleague(tmp_path / "b", small_videos) as b,
        _colleague(tmp_path / "c", small_videos) as c,
    ):
        for colleague in (b, c):
            import_release(first, colleague)
            assert colleague.store.current_values("ana") == {(ABUSE, "crowd"): "few"}
        a.store.record_decision(ABUSE, "crowd", None, annotator="ana", decided_at=LATE)
        a.store.set_mark(ARSON, "flag", False, annotator="ben", marked_at=LATE)
        a.store.set_mark(ARSON, "note", None, annotator="ben", marked_at=LATE)
        from_a = _exported(a, tmp_path / "a.json")

        import_release(from_a, b)
        from_b = _exported(b, tmp_path / "b.json")
        import_release(from_b, c)
        import_release(first, c)  # the value's own release, older: it stays cleared

        for holder in (b, c):
            assert holder.store.current_values("ana") == {}
            assert holder.store.marks() == {
                (ARSON, "ben"): {"flag": False, "skip": False, "note": None}
            }
            cleared = holder.store.current_decisions(video_id=ABUSE, annotator="ana")
            assert [(d.factor, d.value, _instant(d.decided_at)) for d in cleared] == [
                ("crowd", None, _instant(LATE))
            ]
    abuse, arson = from_b.videos[0], from_b.videos[1]
    assert [(w.factor, w.annotator, w.withdrawn_at) for w in abuse.withdrawn_decisions] == [
        ("crowd", "ana", _instant(LATE))
    ]
    assert [(m.flagged, m.flagged_at, m.note, m.note_at) for m in arson.marks] == [
        (False, _instant(LATE), None, _instant(LATE))
    ]


def test_a_statistic_found_to_have_no_value_travels_through_two_releases(
    small_workspace: Workspace, small_videos: Path, tmp_path: Path
) -> None:
    """Motion measured on ABUSE reaches B and C; A measures again and finds none; the
    withdrawal reaches B, and from B's release C."""
    a = small_workspace
    a.store.record_measurement(ABUSE, "motion", _sharpness(3.0, EARLY))
    first = _exported(a, tmp_path / "first.json")
    with (
        _colleague(tmp_path / "b", small_videos) as b,
        _colleague(tmp_path / "c", small_videos) as c,
    ):
        for colleague in (b, c):
            import_release(first, colleague)
            assert colleague.store.measurements()[ABUSE]["motion"].value == 3.0
        a.store.record_video_measurements(
            ABUSE, {"sharpness": _sharpness(80.0, LATE)}, undefined=["motion"]
        )
        from_a = _exported(a, tmp_path / "a.json")

        import_release(from_a, b)
        from_b = _exported(b, tmp_path / "b.json")
        import_release(from_b, c)
        import_release(first, c)

        for holder in (b, c):
            assert set(holder.store.measurements()[ABUSE]) == {"sharpness"}
            withdrawn = holder.store.measurement_withdrawals()[ABUSE]
            assert {s: _instant(at) for s, at in withdrawn.items()} == {"motion": _instant(LATE)}
    assert [(w.statistic, w.withdrawn_at) for w in from_b.videos[0].withdrawn_measurements] == [
        ("motion", _instant(LATE))
    ]


# --- the fuzzed property's oracle -------------------------------------------------------------


def test_the_merge_oracle_refuses_an_older_value_made_current() -> None:
    """Guard against a property that cannot fail: :func:`merge_problems` on hand-made states."""
    old, new = datetime(2001, 1, 1, tzinfo=UTC), datetime(2002, 1, 1, tzinfo=UTC)
    key = ("mark", ABUSE, "note", "ben")
    assert merge_problems({key: ("ours", new)}, {key: ("theirs", old)}, {key: ("ours", new)}) == []
    assert merge_problems({key: ("ours", old)}, {key: ("theirs", new)}, {key: ("ours", old)})
    assert merge_problems({key: ("ours", new)}, {key: ("theirs", old)}, {key: ("theirs", old)})
    assert merge_problems({key: ("ours", new)}, {}, {})  # a value lost
    assert merge_problems({}, {}, {key: ("ours", new)})  # a value from nowhere
    for either in ("ours", "theirs"):  # a tie: either, as long as it is one of them
        assert (
            merge_problems({key: ("ours", new)}, {key: ("theirs", new)}, {key: (either, new)}) == []
        )


@pytest.mark.parametrize(
    ("factor", "source", "annotator", "problem"),
    [
        ("resolution", "manual", "ana", "'resolution' is measured"),
        ("color", "override", "ana", "'color' is a manual factor"),
        ("color", "auto", "auto", "'color' is a manual factor"),
        ("color", "manual", " ", "the annotator name is blank"),
    ],
)
def test_a_withdrawal_the_store_could_not_hold_is_refused_by_validation(
    annotated: Workspace, factor: str, source: str, annotator: str, problem: str
) -> None:
    """Found by the fuzzer's author: withdrawals were checked less than decisions, so a
    'manual' withdrawal on a measured factor validated and came back as an 'override'."""
    data = json.loads(release_json(build_release(annotated)))
    data["videos"][0]["withdrawn_decisions"] = [
        {
            "factor": factor,
            "annotator": annotator,
            "source": source,
            "withdrawn_at": "2013-06-15T12:00:00Z",
        }
    ]
    with pytest.raises(ReleaseError) as refused:
        parse_release(data)
    assert any(
        p.startswith("$.videos[0].withdrawn_decisions[0]") and problem in p
        for p in refused.value.problems
    ), refused.value.problems
