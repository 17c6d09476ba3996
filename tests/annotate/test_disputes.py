"""The lead's dispute queue: its order, skipping, a confirmed consensus, undo, and events that
are applied once. Expected states are read back from the store, or from a read-only store
opened beside it."""

from __future__ import annotations

import pytest

from vadscene.annotate.disputes import (
    Cursor,
    DisputeQueue,
    dispute_cases,
    handle_dispute_event,
    handle_dispute_events,
)
from vadscene.annotate.review import review_table
from vadscene.annotate.session import Ack
from vadscene.store.workspace import Workspace

ABUSE, ARSON, NORMAL, ROAD = (
    "Abuse001_x264",
    "Arson002_x264",
    "Normal_Videos_003_x264",
    "RoadAccidents004_x264",
)
LEAD = "lea"
PAGE = "page-1"


@pytest.fixture
def disputed(small_workspace: Workspace) -> Workspace:
    """Four disagreements — ARSON color and crowd, NORMAL setting, ROAD color — one agreement
    (ABUSE color) and notes by a voter and by someone who did not vote."""
    store = small_workspace.store
    votes = {
        (ABUSE, "color"): {"ana": "color", "ben": "color"},
        (ARSON, "crowd"): {"ana": "few", "ben": "many", "carla": "many"},
        (ARSON, "color"): {"ana": "color", "ben": "grayscale"},
        (ROAD, "color"): {"ana": "grayscale", "carla": "color"},
        (NORMAL, "setting"): {"ben": "indoor", "carla": "ambiguous"},
    }
    for (video, factor), by in votes.items():
        for who, value in by.items():
            store.record_decision(video, factor, value, annotator=who)
    store.set_mark(ARSON, "note", "smoke hides the crowd", annotator="ben")
    store.set_mark(ARSON, "note", "check the end", annotator="dora")
    return small_workspace


def _event(seq: int, action: str, key: tuple[str, str] | None = None, value=None, head=None):
    video, factor = key or (None, None)
    return {
        "page": PAGE,
        "seq": seq,
        "action": action,
        "video": video,
        "factor": factor,
        "value": value,
        "head": head,
    }


def _consensus(workspace: Workspace) -> dict[tuple[str, str], tuple[str, str]]:
    """(video, factor) → (value, annotator) of the current consensus decisions, read through
    a read-only store of the same workspace."""
    with Workspace.open(workspace.root, read_only=True) as reader:
        return {
            (d.video_id, d.factor): (d.value, d.annotator)
            for d in reader.store.current_decisions()
            if d.source == "consensus" and d.value is not None
        }


def test_cases_come_in_video_then_catalogue_order_with_votes_and_notes(
    disputed: Workspace,
) -> None:
    queue = DisputeQueue.build(disputed.store)
    # Catalogue order puts color before crowd, although the crowd votes came first.
    assert [c.key for c in queue.open] == [
        (ARSON, "color"),
        (ARSON, "crowd"),
        (NORMAL, "setting"),
        (ROAD, "color"),
    ]
    crowd = queue.case((ARSON, "crowd"))
    assert crowd is not None
    assert crowd.votes == (("ana", "few"), ("ben", "many"), ("carla", "many"))
    assert crowd.voters("many") == ("ben", "carla")
    assert crowd.notes == (("ben", "smoke hides the crowd"), ("dora", "check the end"))
    assert crowd.choices == ("few", "many", "ambiguous")
    assert crowd.category == "Arson"
    assert crowd.consensus is None and crowd.is_open
    assert queue.case((ABUSE, "color")) is None  # they agree: no case


def test_skip_moves_on_and_wraps_around(disputed: Workspace) -> None:
    store = disputed.store
    queue = DisputeQueue.build(store)
    before = store.decision_log()
    cursor = Cursor()
    seen = []
    last = None
    for seq in range(1, 6):
        case = queue.current(cursor)
        assert case is not None
        seen.append(case.key)
        handled = handle_dispute_event(
            store, LEAD, _event(seq, "skip", case.key), last=last, cursor=cursor
        )
        assert handled.outcome.status == "unchanged"
        assert handled.outcome.message == f"Skipped {case.video} · {case.factor}"
        cursor = handled.cursor
        last = Ack(PAGE, seq, handled.outcome.head)
    assert seen == [
        (ARSON, "color"),
        (ARSON, "crowd"),
        (NORMAL, "setting"),
        (ROAD, "color"),
        (ARSON, "color"),  # past the last: back to the first
    ]
    assert store.decision_log() == before  # skipping writes nothing


def test_confirming_records_the_leads_consensus_and_moves_on(disputed: Workspace) -> None:
    store = disputed.store
    queue = DisputeQueue.build(store)
    case = queue.current(Cursor())
    assert case is not None and case.key == (ARSON, "color")
    handled = handle_dispute_event(
        store, LEAD, _event(1, "decide", case.key, "grayscale"), last=None, cursor=Cursor()
    )
    assert handled.outcome.status == "recorded"
    assert handled.outcome.message == f"Consensus {ARSON} · color = grayscale, recorded as {LEAD}"
    assert _consensus(disputed) == {(ARSON, "color"): ("grayscale", LEAD)}
    (latest,) = store.decision_log()[-1:]
    assert (latest.source, latest.annotator, latest.value) == ("consensus", LEAD, "grayscale")
    assert handled.outcome.head == latest.decision_id
    # The settled case leaves the queue; the next one is shown.
    queue = queue.refresh(store)
    assert queue.case((ARSON, "color")).consensus == "grayscale"
    assert [c.key for c in queue.open] == [(ARSON, "crowd"), (NORMAL, "setting"), (ROAD, "color")]
    assert queue.current(handled.cursor).key == (ARSON, "crowd")
    # Review and releases publish it.
    assert review_table(disputed).set_index("video").loc[ARSON, "color"] == "grayscale"


def test_a_repeated_event_writes_once(disputed: Workspace) -> None:
    store = disputed.store
    events = [_event(1, "decide", (ARSON, "crowd"), "many"), _event(2, "skip", (NORMAL, "setting"))]
    outcomes, last, cursor = handle_dispute_events(store, LEAD, events, last=None, cursor=Cursor())
    assert [o.status for o in outcomes] == ["recorded", "unchanged"]
    count = len(store.decision_log())
    # The browser resends everything it has not seen acknowledged; a rerun replays it.
    again, last_again, cursor_again = handle_dispute_events(
        store, LEAD, events, last=last, cursor=cursor
    )
    assert again == [] and last_again == last and cursor_again == cursor
    assert len(store.decision_log()) == count
    assert _consensus(disputed) == {(ARSON, "crowd"): ("many", LEAD)}
    # The same value again from a fresh page records nothing either.
    fresh = {**_event(1, "decide", (ARSON, "crowd"), "many"), "page": "page-2"}
    handled = handle_dispute_event(store, LEAD, fresh, last=last, cursor=cursor)
    assert handled.outcome.status == "unchanged"
    assert len(store.decision_log()) == count


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ((ARSON, "color"), "sepia", "'sepia' is not one of color, grayscale, ambiguous"),
        ((ARSON, "color"), None, "None is not one of color, grayscale, ambiguous"),
        ((ARSON, "colour"), "color", "unknown factor 'colour'"),
        (("Nowhere999_x264", "color"), "color", "unknown video 'Nowhere999_x264'"),
        ((ABUSE, "color"), "color", f"{ABUSE} · color is no longer a disagreement"),
    ],
)
def test_what_cannot_be_a_consensus_is_refused_and_writes_nothing(
    disputed: Workspace, key: tuple[str, str], value: str | None, message: str
) -> None:
    store = disputed.store
    before = store.decision_log()
    handled = handle_dispute_event(
        store, LEAD, _event(1, "decide", key, value), last=None, cursor=Cursor()
    )
    assert handled.outcome.status == "refused"
    assert message in handled.outcome.message and "\n" not in handled.outcome.message
    assert store.decision_log() == before


def test_undo_takes_back_the_leads_last_consensus_and_reopens_its_case(
    disputed: Workspace,
) -> None:
    store = disputed.store
    events = [
        _event(1, "decide", (ARSON, "color"), "color"),
        _event(2, "decide", (ARSON, "crowd"), "ambiguous"),
    ]
    _, last, cursor = handle_dispute_events(store, LEAD, events, last=None, cursor=Cursor())
    assert _consensus(disputed) == {
        (ARSON, "color"): ("color", LEAD),
        (ARSON, "crowd"): ("ambiguous", LEAD),
    }
    queue = DisputeQueue.build(store)
    assert queue.current(cursor).key == (NORMAL, "setting")

    handled = handle_dispute_event(store, LEAD, _event(3, "undo"), last=last, cursor=cursor)
    assert handled.outcome.status == "recorded"
    assert handled.outcome.message == f"Undid your consensus on {ARSON} · crowd; it is open again"
    assert _consensus(disputed) == {(ARSON, "color"): ("color", LEAD)}
    queue = queue.refresh(store)
    assert queue.current(handled.cursor).key == (ARSON, "crowd")  # shown again
    assert queue.case((ARSON, "crowd")).is_open

    last = Ack(PAGE, 3, handled.outcome.head)
    handled = handle_dispute_event(store, LEAD, _event(4, "undo"), last=last, cursor=cursor)
    assert handled.outcome.status == "recorded"
    assert _consensus(disputed) == {}
    last = Ack(PAGE, 4, handled.outcome.head)
    handled = handle_dispute_event(store, LEAD, _event(5, "undo"), last=last, cursor=cursor)
    assert handled.outcome.status == "unchanged" and handled.outcome.message == "nothing to undo"


def test_undo_refuses_an_annotation_and_a_log_changed_elsewhere(disputed: Workspace) -> None:
    store = disputed.store
    _, last, cursor = handle_dispute_events(
        store, LEAD, [_event(1, "decide", (ARSON, "color"), "color")], last=None, cursor=Cursor()
    )
    # The lead annotates in another tab: their head moves past what this page was shown.
    store.record_decision(ABUSE, "crowd", "few", annotator=LEAD)
    before = store.decision_log()
    handled = handle_dispute_event(store, LEAD, _event(2, "undo"), last=last, cursor=cursor)
    assert handled.outcome.status == "refused"
    assert "changed elsewhere" in handled.outcome.message
    # A fresh page has seen that head, and its last action is an annotation: not undone here.
    fresh = {**_event(1, "undo"), "page": "page-2", "head": store.last_decision_id(LEAD)}
    handled = handle_dispute_event(store, LEAD, fresh, last=last, cursor=cursor)
    assert handled.outcome.status == "refused"
    assert handled.outcome.message == (
        f"not undone: your last decision is an annotation (crowd on {ABUSE}), not a consensus; "
        "undo it on the Annotate page"
    )
    assert store.decision_log() == before
    assert _consensus(disputed) == {(ARSON, "color"): ("color", LEAD)}


def test_a_store_that_cannot_write_keeps_the_event_for_a_retry(disputed: Workspace) -> None:
    event = _event(1, "decide", (ROAD, "color"), "color")
    with Workspace.open(disputed.root, read_only=True) as reader:
        handled = handle_dispute_event(reader.store, LEAD, event, last=None, cursor=Cursor())
    assert handled.outcome.status == "failed" and not handled.outcome.handled
    assert "your key is kept" in handled.outcome.message
    assert _consensus(disputed) == {}
    handled = handle_dispute_event(disputed.store, LEAD, event, last=None, cursor=Cursor())
    assert handled.outcome.status == "recorded"
    assert _consensus(disputed) == {(ROAD, "color"): ("color", LEAD)}


def test_a_refreshed_queue_equals_a_rebuilt_one(disputed: Workspace) -> None:
    store = disputed.store
    queue = DisputeQueue.build(store)
    store.record_decision(ABUSE, "color", "grayscale", annotator="carla")  # a new dispute
    store.record_decision(ROAD, "color", None, annotator="carla")  # one ends
    store.set_mark(NORMAL, "note", "dark", annotator="ben")
    # Another lead settles one, in another process.
    with Workspace.open(disputed.root) as other:
        other.store.record_decision(NORMAL, "setting", "indoor", annotator="mo", source="consensus")
    refreshed = queue.refresh(store)
    assert refreshed == DisputeQueue.build(store)
    assert [c.key for c in refreshed.open] == [(ABUSE, "color"), (ARSON, "color"), (ARSON, "crowd")]
    assert refreshed.case((NORMAL, "setting")).consensus == "indoor"
    assert refreshed.case((NORMAL, "setting")).notes == (("ben", "dark"),)


def test_the_case_list_of_one_video_is_that_of_the_store(disputed: Workspace) -> None:
    store = disputed.store
    every = dispute_cases(store)
    assert [c for c in every if c.video == ARSON] == dispute_cases(store, video_id=ARSON)
    assert DisputeQueue.build(store).current(Cursor((ROAD, "color"), past=True)).key == (
        ARSON,
        "color",
    )
