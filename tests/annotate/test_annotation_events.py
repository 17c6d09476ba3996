"""The one writer under the Annotate page: :func:`vadscene.annotate.session.handle_event`, with a
real
store. Expected logs are read back by a separate SQLite connection."""

from __future__ import annotations

import sqlite3

import pytest
from helpers import ABUSE, ARSON, NORMAL, ROAD

from vadscene.annotate.session import (
    Ack,
    handle_event,
    handle_events,
    video_queue,
)
from vadscene.store.workspace import Workspace

WHO = "dana"


def _log(workspace: Workspace, annotator: str = WHO) -> list[tuple[str, str, str | None]]:
    with sqlite3.connect(workspace.store.path) as db:
        return db.execute(
            "SELECT video_id, factor, value FROM decisions WHERE annotator = ? "
            "ORDER BY decision_id",
            (annotator,),
        ).fetchall()


def _marks(workspace: Workspace) -> list[tuple[str, str, str | None]]:
    with sqlite3.connect(workspace.store.path) as db:
        return db.execute(
            "SELECT video_id, kind, value FROM marks WHERE annotator = ? ORDER BY mark_id", (WHO,)
        ).fetchall()


def _event(seq: int, action: str = "decide", page: str = "tab-1", **fields: object) -> dict:
    return {"page": page, "seq": seq, "action": action, "video": ABUSE, **fields}


def _run(workspace: Workspace, events: list[dict], last: Ack | None = None):
    return handle_events(workspace.store, WHO, events, last=last)


def test_each_pressed_value_is_recorded_once_and_a_stored_value_records_nothing(
    small_workspace: Workspace,
) -> None:
    events = [
        _event(1, factor="color", value="grayscale"),
        _event(2, factor="color", value="color"),  # a correction
        _event(3, factor="color", value="color"),  # pressed again: already stored
        _event(4, factor="crowd", value="ambiguous"),
    ]
    outcomes, last = _run(small_workspace, events)
    assert [o.status for o in outcomes] == ["recorded", "recorded", "unchanged", "recorded"]
    assert _log(small_workspace) == [
        (ABUSE, "color", "grayscale"),
        (ABUSE, "color", "color"),
        (ABUSE, "crowd", "ambiguous"),
    ]
    assert (last.page, last.seq) == ("tab-1", 4)


def test_a_resent_or_replayed_event_is_handled_once(small_workspace: Workspace) -> None:
    first = [_event(1, factor="color", value="grayscale"), _event(2, factor="color", value="color")]
    _, last = _run(small_workspace, first)
    # The browser resends 1 and 2 with 3 (it has not seen them acknowledged yet); a replayed
    # run sends 1 and 2 alone.
    outcomes, last = _run(small_workspace, [*first, _event(3, factor="crowd", value="few")], last)
    assert [(o.seq, o.status) for o in outcomes] == [(3, "recorded")]
    assert _run(small_workspace, first, last)[0] == []
    assert handle_event(small_workspace.store, WHO, first[0], last=last).status == "duplicate"
    assert _log(small_workspace) == [
        (ABUSE, "color", "grayscale"),
        (ABUSE, "color", "color"),
        (ABUSE, "crowd", "few"),
    ]
    # A reloaded page numbers its events afresh: its seq 1 is a new event.
    reloaded = _event(1, page="tab-2", factor="color", value="grayscale")
    assert _run(small_workspace, [reloaded], last)[0][0].status == "recorded"


def test_undo_applies_to_the_log_the_page_saw_and_is_refused_when_it_went_stale(
    small_workspace: Workspace,
) -> None:
    store = small_workspace.store
    _, last = _run(
        small_workspace,
        [_event(1, factor="color", value="grayscale"), _event(2, factor="color", value="color")],
    )
    # Another tab (or the CLI) writes under the same name: the page's head is stale.
    store.record_decision(NORMAL, "crowd", "many", annotator=WHO)
    before = _log(small_workspace)
    outcomes, after = _run(small_workspace, [_event(3, "undo")], last)
    assert outcomes[0].status == "refused" and "changed elsewhere" in outcomes[0].message
    assert _log(small_workspace) == before  # nothing undone
    assert after.head == store.last_decision_id(WHO)  # the page is now told the real head

    # With the head it was told, the next undo goes through and restores the value before.
    outcomes, _ = _run(small_workspace, [_event(4, "undo")], after)
    assert outcomes[0].status == "recorded"
    assert _log(small_workspace)[-1] == (NORMAL, "crowd", None)
    # A fresh page sends the head it was drawn with.
    head = store.last_decision_id(WHO)
    fresh = _event(1, "undo", page="tab-2", head=head)
    assert handle_event(store, WHO, fresh, last=None).status == "recorded"
    assert _log(small_workspace)[-1] == (ABUSE, "color", "grayscale")
    stale = _event(2, "undo", page="tab-3", head=head)
    assert handle_event(store, WHO, stale, last=None).status == "refused"


def test_the_flag_is_a_state_so_a_repeat_records_nothing(small_workspace: Workspace) -> None:
    outcomes, _ = _run(
        small_workspace,
        [
            _event(1, "flag", value=True),
            _event(2, "flag", value=True),
            _event(3, "flag", value=False),
            _event(4, "flag", value="yes"),
        ],
    )
    assert [o.status for o in outcomes] == ["recorded", "unchanged", "recorded", "refused"]
    assert _marks(small_workspace) == [(ABUSE, "flag", "1"), (ABUSE, "flag", "0")]


def test_the_note_is_saved_once_per_change_and_empty_text_clears_it(
    small_workspace: Workspace,
) -> None:
    outcomes, _ = _run(
        small_workspace,
        [
            _event(1, "note", value="cut at 4 s"),
            _event(2, "note", value="cut at 4 s"),
            _event(3, "note", value=""),
        ],
    )
    assert [o.status for o in outcomes] == ["recorded", "unchanged", "recorded"]
    assert _marks(small_workspace) == [(ABUSE, "note", "cut at 4 s"), (ABUSE, "note", None)]


def test_accepting_the_auto_pole_makes_it_the_persons_decision(annotated: Workspace) -> None:
    # ROAD: only the auto pole stands (sharpness 10 < median 37.5: low resolution).
    with sqlite3.connect(annotated.store.path) as db:
        (pole,) = db.execute(
            "SELECT value FROM current_decisions WHERE video_id = ? AND factor = 'resolution' "
            "AND annotator = 'auto'",
            (ROAD,),
        ).fetchone()
    assert pole == "low"
    other = "high"
    events = [
        _event(1, "accept_auto", video=ROAD, factor="resolution", value=other),  # not the pole
        _event(2, "accept_auto", video=ROAD, factor="resolution", value=pole),
        _event(3, "accept_auto", video=ROAD, factor="resolution", value=pole),
        _event(4, "accept_auto", video=ROAD, factor="color", value="color"),  # no auto pole
    ]
    outcomes, _ = _run(annotated, events)
    assert [o.status for o in outcomes] == ["refused", "recorded", "unchanged", "refused"]
    assert "is now low" in outcomes[0].message
    with sqlite3.connect(annotated.store.path) as db:
        rows = db.execute(
            "SELECT value, source, replaced_auto_value FROM decisions WHERE annotator = ?", (WHO,)
        ).fetchall()
    assert rows == [("low", "override", "low")]


@pytest.mark.parametrize(
    ("event", "fragment"),
    [
        (_event(1, video="Nope001_x264", factor="color", value="color"), "unknown video"),
        (_event(1, factor="colour", value="color"), "unknown factor"),
        (_event(1, factor="color", value="sepia"), "'sepia' is not one of color, grayscale"),
        (_event(1, "rename", value="x"), "unknown action"),
    ],
)
def test_an_event_that_cannot_apply_is_refused_and_writes_nothing(
    small_workspace: Workspace, event: dict, fragment: str
) -> None:
    outcome = handle_event(small_workspace.store, WHO, event, last=None)
    assert outcome.status == "refused" and outcome.handled
    assert fragment in outcome.message
    assert _log(small_workspace) == [] and _marks(small_workspace) == []


def test_a_commit_the_database_refuses_keeps_the_event_and_everything_behind_it(
    small_workspace: Workspace,
) -> None:
    """The database refuses writes (as when the disk is full); the event is not acknowledged,
    so the browser keeps it and resends it, and the keys behind it wait in order."""
    path = small_workspace.store.path
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TRIGGER refuse_writes BEFORE INSERT ON decisions "
            "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
        )
    events = [_event(1, factor="color", value="grayscale"), _event(2, factor="crowd", value="few")]
    outcomes, last = _run(small_workspace, events)
    assert [o.status for o in outcomes] == ["failed"]
    assert "not saved" in outcomes[0].message and "disk is full" in outcomes[0].message
    assert "will be retried" in outcomes[0].message and last is None
    with sqlite3.connect(path) as db:
        db.execute("DROP TRIGGER refuse_writes")
    outcomes, last = _run(small_workspace, events, last)  # the browser resends both
    assert [o.status for o in outcomes] == ["recorded", "recorded"]
    assert _log(small_workspace) == [(ABUSE, "color", "grayscale"), (ABUSE, "crowd", "few")]


def test_the_queue_says_where_each_video_stands(annotated: Workspace) -> None:
    store = annotated.store
    manual = [f.key for f in store.catalogue.factors if f.source == "manual"]
    for factor in manual:  # dana completes ABUSE agreeing with nobody in particular …
        store.record_decision(ABUSE, factor, "ambiguous", annotator=WHO)
        store.record_decision(ROAD, factor, "ambiguous", annotator=WHO)
    store.set_mark(ARSON, "flag", True, annotator=WHO)
    # ana said color = color on ABUSE: dana's ambiguous disagrees. Nobody else rated ROAD's
    # manual factors but ben cleared his elevation, which is not a disagreement.
    assert dict(video_queue(store, WHO)) == {
        ABUSE: "disagreement",
        ARSON: "flagged",
        NORMAL: "incomplete",
        ROAD: "complete",
    }


def test_an_event_naming_another_annotator_is_refused_and_records_nothing(
    small_workspace: Workspace,
) -> None:
    """Who writes is the session's: a forged ``annotator`` field in an event is refused with
    a message, and nothing is recorded for anyone."""
    store = small_workspace.store
    forged = {
        "page": "p",
        "seq": 1,
        "action": "decide",
        "video": ABUSE,
        "factor": "crowd",
        "value": "few",
        "annotator": "ben",
    }
    result = handle_event(store, WHO, forged, last=None)
    assert (result.status, result.message) == (
        "refused",
        f"not saved: this page writes as {WHO} only, not as 'ben'",
    )
    assert store.decision_log() == []
