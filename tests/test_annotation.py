"""The annotation session logic under the Annotate page: completeness (the event handler is
tested in test_annotation_events.py)."""

from __future__ import annotations

from conftest import ABUSE, ARSON, NORMAL, ROAD

from vadscene.annotation import incomplete_videos, next_incomplete
from vadscene.catalogue import AMBIGUOUS
from vadscene.workspace import Workspace


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
