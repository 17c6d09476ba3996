"""The annotation session logic under the Annotate page: completeness, key numbers, key events."""

from __future__ import annotations

from conftest import ABUSE, ARSON, NORMAL, ROAD

from vadscene.annotation import (
    incomplete_videos,
    key_event_ack,
    new_key_events,
    next_incomplete,
    value_for_number,
)
from vadscene.catalogue import AMBIGUOUS, Catalogue
from vadscene.workspace import Workspace


def _event(seq: int, page: str = "tab-1", **extra: object) -> dict:
    return {"page": page, "seq": seq, "action": "value", "number": 1, **extra}


def test_every_event_is_new_before_the_first_acknowledgement() -> None:
    events = [_event(2), _event(1), _event(3)]
    assert [e["seq"] for e in new_key_events(events, None)] == [1, 2, 3]  # in pressed order


def test_resent_and_replayed_events_are_handled_once() -> None:
    # The player resends 4 and 5 with 6 because it has not yet seen them acknowledged.
    acked = key_event_ack(_event(5))
    assert [e["seq"] for e in new_key_events([_event(4), _event(5), _event(6)], acked)] == [6]
    # A run's input replayed into a later run: nothing new.
    assert new_key_events([_event(4), _event(5)], acked) == []


def test_a_reloaded_page_starts_its_own_sequence() -> None:
    acked = key_event_ack(_event(40, page="before-reload"))
    fresh = new_key_events([_event(1, page="after-reload")], acked)
    assert [(e["page"], e["seq"]) for e in fresh] == [("after-reload", 1)]


def test_malformed_events_from_the_browser_are_ignored() -> None:
    events = ["1", None, {"seq": "2"}, {"page": "tab-1"}, _event(3)]
    assert new_key_events(events, None) == [_event(3)]


def test_number_keys_pick_values_then_ambiguous(catalogue: Catalogue) -> None:
    location = catalogue.factor("location")  # three values
    assert [value_for_number(location, n) for n in range(0, 6)] == [
        None,
        "residential",
        "commercial",
        "fuel-station",
        AMBIGUOUS,
        None,
    ]


def test_next_incomplete_wraps_around_and_ends_when_all_are_done(
    small_workspace: Workspace,
) -> None:
    store = small_workspace.store
    assert incomplete_videos(store, "ann") == sorted([ABUSE, ARSON, NORMAL, ROAD])
    manual = [f.key for f in store.catalogue.factors if f.source == "manual"]
    for factor in manual:
        store.record_decision(ARSON, factor, AMBIGUOUS, annotator="ann")
    assert next_incomplete(store, "ann", ABUSE) == NORMAL  # Arson is complete: skipped
    assert next_incomplete(store, "ann", ROAD) == ABUSE  # wraps around
    for video in (ABUSE, NORMAL, ROAD):
        for factor in manual:
            store.record_decision(video, factor, AMBIGUOUS, annotator="ann")
    assert next_incomplete(store, "ann", None) is None
