"""The annotation session logic under the Annotate page: completeness (the event handler is
tested in test_annotation_events.py)."""

from __future__ import annotations

from helpers import ABUSE, ARSON, NORMAL, ROAD

from vadscene.annotate.session import AnnotatorQueue
from vadscene.core.catalogue import AMBIGUOUS
from vadscene.store.workspace import Workspace


def test_next_incomplete_wraps_around_skips_flags_and_ends_when_all_are_done(
    small_workspace: Workspace,
) -> None:
    store = small_workspace.store
    queue = AnnotatorQueue.build(store, "ann")
    assert queue.next_incomplete() == min([ABUSE, ARSON, NORMAL, ROAD])
    manual = [f.key for f in store.catalogue.factors if f.source == "manual"]
    for factor in manual:
        store.record_decision(ARSON, factor, AMBIGUOUS, annotator="ann")
    queue = queue.refresh(store, store.video_ids())
    assert queue.next_incomplete(ABUSE) == NORMAL  # Arson is complete: skipped
    assert queue.next_incomplete(ROAD) == ABUSE  # wraps around
    store.set_mark(NORMAL, "flag", True, annotator="ann")
    queue = queue.refresh(store, store.video_ids())
    assert queue.next_incomplete(ABUSE) == ROAD  # set aside: skipped too
    for video in (ABUSE, NORMAL, ROAD):
        for factor in manual:
            store.record_decision(video, factor, AMBIGUOUS, annotator="ann")
    store.set_mark(NORMAL, "flag", False, annotator="ann")
    assert queue.refresh(store, store.video_ids()).next_incomplete() is None
