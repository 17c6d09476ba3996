"""The Annotate page's queue kept current by
:meth:`vadscene.annotate.session.AnnotatorQueue.refresh`
(re-reading only the videos written since) must equal a full recomputation after every kind of
write, from this page or from anywhere else."""

from __future__ import annotations

from helpers import ABUSE, ARSON, NORMAL, ROAD

from vadscene.annotate.consensus import disputes
from vadscene.annotate.review import review_table
from vadscene.annotate.session import AnnotatorQueue, handle_events, video_queue
from vadscene.store.database import AnnotationStore
from vadscene.store.workspace import Workspace

WHO = "dana"


def _recomputed(store: AnnotationStore) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """Statuses and dana's values from the whole store, the rule restated here: flagged; else
    incomplete while a manual factor lacks a value; else disagreement when dana's manual or
    override value on a factor differs from another person's manual or override value there
    (auto poles and consensus decisions are not votes); else complete."""
    manual = {f.key for f in store.catalogue.factors if f.source == "manual"}
    mine: dict[str, dict[str, str]] = {}
    for (video, factor), value in store.current_values(WHO).items():
        mine.setdefault(video, {})[factor] = value
    statuses = {}
    for video in store.video_ids():
        values = mine.get(video, {})
        votes = [
            d
            for d in store.current_decisions(video_id=video)
            if d.source in ("manual", "override") and d.value is not None
        ]
        my_votes = {d.factor: d.value for d in votes if d.annotator == WHO}
        if store.marks(video_id=video).get((video, WHO), {}).get("flag"):
            statuses[video] = "flagged"
        elif not all(factor in values for factor in manual):
            statuses[video] = "incomplete"
        elif any(
            d.annotator != WHO and d.factor in my_votes and my_votes[d.factor] != d.value
            for d in votes
        ):
            statuses[video] = "disagreement"
        else:
            statuses[video] = "complete"
    return statuses, mine


def _check(held: AnnotatorQueue, store: AnnotationStore) -> AnnotatorQueue:
    held = held.refresh(store, store.video_ids())
    statuses, values = _recomputed(store)
    assert dict(held.queue) == statuses
    assert held.queue == video_queue(store, WHO)
    assert held.values == values
    return held


def test_a_refreshed_queue_equals_a_full_recomputation_after_every_write(
    annotated: Workspace,
) -> None:
    store = annotated.store
    manual = [f for f in store.catalogue.factors if f.source == "manual"]
    held = AnnotatorQueue.build(store, WHO)
    assert set(dict(held.queue).values()) == {"incomplete"}

    # the page's own keys complete ABUSE, each value other than ana's: a disagreement
    ana = {
        d.factor: d.value for d in store.current_decisions(video_id=ABUSE) if d.annotator == "ana"
    }
    events = [
        {"page": "p", "seq": i, "action": "decide", "video": ABUSE, "factor": f.key}
        | {"value": next(v for v in f.values if v != ana.get(f.key))}
        for i, f in enumerate(manual, start=1)
    ]
    outcomes, _last = handle_events(store, WHO, events, last=None)
    assert [o.status for o in outcomes] == ["recorded"] * len(manual)
    held = _check(held, store)
    assert dict(held.queue)[ABUSE] == "disagreement"

    # complete ROAD the same way, then undo its last decision: incomplete again
    for f in manual:
        store.record_decision(ROAD, f.key, f.values[0], annotator=WHO)
    held = _check(held, store)
    assert dict(held.queue)[ROAD] == "complete"
    store.undo_last(WHO)
    held = _check(held, store)
    assert dict(held.queue)[ROAD] == "incomplete"

    # another writer (a second connection: another tab, the CLI) disagrees, then agrees
    with Workspace.open(annotated.root) as elsewhere:
        elsewhere.store.record_decision(ROAD, manual[-1].key, manual[-1].values[0], annotator=WHO)
        elsewhere.store.record_decision(ROAD, manual[0].key, manual[0].values[1], annotator="eve")
    held = _check(held, store)
    assert dict(held.queue)[ROAD] == "disagreement"
    store.record_decision(ROAD, manual[0].key, manual[0].values[0], annotator="eve")
    held = _check(held, store)
    assert dict(held.queue)[ROAD] == "complete"

    # a flag and its removal; a cleared value
    store.set_mark(NORMAL, "flag", True, annotator=WHO)
    held = _check(held, store)
    assert dict(held.queue)[NORMAL] == "flagged"
    store.set_mark(NORMAL, "flag", False, annotator=WHO)
    store.record_decision(ROAD, manual[0].key, None, annotator=WHO)
    held = _check(held, store)
    assert dict(held.queue)[NORMAL] == "incomplete"
    assert dict(held.queue)[ROAD] == "incomplete"

    # a new measurement changes the revision, not the queue
    before = held.queue
    measured = store.measurements()[ARSON]["sharpness"]
    store.record_measurement(ARSON, "sharpness", measured.model_copy(update={"value": 99.0}))
    held = _check(held, store)
    assert held.queue == before


def test_a_new_video_enters_the_refreshed_queue(annotated: Workspace) -> None:
    store = annotated.store
    held = AnnotatorQueue.build(store, WHO)
    source = store.video(ABUSE)
    newcomer = "Abuse999_x264"
    store.register_videos(
        [source.model_copy(update={"video_id": newcomer, "path": f"{newcomer}.mp4"})]
    )
    held = _check(held, store)
    assert dict(held.queue)[newcomer] == "incomplete"


def test_an_unchanged_store_keeps_the_queue(annotated: Workspace) -> None:
    store = annotated.store
    held = AnnotatorQueue.build(store, WHO)
    assert held.refresh(store, store.video_ids()) is held


def test_the_queue_and_the_review_table_share_one_disagreement_rule(annotated: Workspace) -> None:
    """A consensus is not a vote: when a lead adjudicates a video where dana agrees with
    everyone who voted, her queue says complete; when dana votes against another person,
    both her queue and the Review table say so."""
    store = annotated.store
    manual = [f for f in store.catalogue.factors if f.source == "manual"]
    disputed = {video for video, _ in disputes(store.current_decisions())}
    quiet = next(video for video in store.video_ids() if video not in disputed)
    votes = {
        d.factor: d.value
        for d in store.current_decisions(video_id=quiet)
        if d.source in ("manual", "override") and d.value is not None
    }
    agreeing = {}
    for f in manual:  # dana takes the value the others took, or the first where nobody voted
        agreeing[f.key] = votes.get(f.key, f.values[0])
        store.record_decision(quiet, f.key, agreeing[f.key], annotator=WHO)
    assert not [key for key in disputes(store.current_decisions()) if key[0] == quiet]
    assert dict(video_queue(store, WHO))[quiet] == "complete"

    # a consensus with another value is recorded, not voted: still no dispute
    factor = manual[0]
    other = next(v for v in factor.values if v != agreeing[factor.key])
    store.record_decision(quiet, factor.key, other, annotator="lead", source="consensus")
    held = _check(AnnotatorQueue.build(store, WHO), store)
    assert dict(held.queue)[quiet] == "complete"
    assert not review_table(annotated).set_index("video").loc[quiet, "disagree"]

    # eve votes against dana: a dispute in which dana votes, in both places
    store.record_decision(quiet, factor.key, other, annotator="eve")
    held = _check(held, store)
    assert dict(held.queue)[quiet] == "disagreement"
    assert review_table(annotated).set_index("video").loc[quiet, "disagree"]
