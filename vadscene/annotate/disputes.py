"""The lead's dispute queue: every open disagreement, one at a time, settled by keyboard.

A case is one (video, factor) of :func:`vadscene.annotate.consensus.disputes` — the one
definition of annotators disagreeing — with the votes, the annotators' notes on the video and
the consensus so far. The queue holds the open cases (no consensus yet) in working order: by
video id, then the catalogue's factor order, so a video's factors come one after another while
it plays. A consensus takes its case out of the queue; undoing it brings the case back.

The Disputes page sends what the lead presses as events ``{page, seq, action, video, factor,
value, head}``, as the Annotate page does (:mod:`vadscene.annotate.session`): ``decide``
records a consensus through :func:`~vadscene.annotate.consensus.adjudicate`, ``skip`` moves on
without writing, ``undo`` takes back the lead's latest consensus through
:meth:`~vadscene.store.database.AnnotationStore.undo_last`. :func:`handle_dispute_event`
applies each event once: the browser resends what it has not seen acknowledged.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from vadscene.annotate.consensus import adjudicate, disputes
from vadscene.annotate.session import Ack, Outcome, OutcomeStatus, pending_events
from vadscene.core.catalogue import AMBIGUOUS
from vadscene.core.errors import StoreError, UndoRefusedError, VadsceneError
from vadscene.store.database import AnnotationStore, Decision

DISPUTE_ACTIONS = ("decide", "skip", "undo")
"""What a dispute event can ask: record the chosen consensus, move on, undo the last one."""

CaseKey = tuple[str, str]
"""(video, factor) of a case."""


@dataclass(frozen=True)
class Cursor:
    """Where the lead is in the queue: at the case ``key`` (shown while it is open), or just
    ``past`` it (skipped). The start of the queue without a key."""

    key: CaseKey | None = None
    past: bool = False


@dataclass(frozen=True)
class DisputeCase:
    """One disagreement as the lead sees it."""

    video: str
    category: str
    factor: str
    choices: tuple[str, ...]
    """The factor's values, then "ambiguous": number key n picks ``choices[n - 1]``."""
    votes: tuple[tuple[str, str], ...]
    """Every human annotator's (name, current value), by name."""
    notes: tuple[tuple[str, str], ...]
    """(name, note) of everyone with a note on the video, by name."""
    consensus: str | None
    """The latest consensus value (None while the case is open)."""

    @property
    def key(self) -> CaseKey:
        return (self.video, self.factor)

    @property
    def is_open(self) -> bool:
        return self.consensus is None

    def voters(self, value: str) -> tuple[str, ...]:
        """The annotators who voted ``value``, by name."""
        return tuple(who for who, vote in self.votes if vote == value)


def dispute_cases(
    store: AnnotationStore,
    *,
    decisions: Sequence[Decision] | None = None,
    video_id: str | None = None,
) -> list[DisputeCase]:
    """Every case of the store, or of the video ``video_id``, settled ones included, in
    working order. ``decisions``: the current decisions already read (of the same scope)."""
    if decisions is None:
        decisions = store.current_decisions(video_id=video_id)
    found = disputes(decisions)
    if not found:
        return []
    settled: dict[CaseKey, list[Decision]] = {}
    for d in decisions:
        if d.source == "consensus" and d.value is not None and (d.video_id, d.factor) in found:
            settled.setdefault((d.video_id, d.factor), []).append(d)
    notes: dict[str, list[tuple[str, str]]] = {}
    for (video, who), mark in store.marks(video_id=video_id).items():
        if mark["note"]:
            notes.setdefault(video, []).append((who, str(mark["note"])))
    if video_id is None:
        categories = {v.video_id: v.category for v in store.videos()}
    else:
        categories = {video_id: store.video(video_id).category}
    catalogue = store.catalogue
    cases = [
        DisputeCase(
            video=video,
            category=categories.get(video, ""),
            factor=factor,
            choices=(*catalogue.factor(factor).values, AMBIGUOUS),
            votes=dispute.votes,
            notes=tuple(sorted(notes.get(video, ()))),
            consensus=_latest(settled[(video, factor)]) if (video, factor) in settled else None,
        )
        for (video, factor), dispute in found.items()
        if factor in catalogue.keys
    ]
    return sorted(cases, key=lambda c: _place(c.key, catalogue.keys))


def _latest(consensus: list[Decision]) -> str | None:
    """The value :func:`~vadscene.annotate.consensus.resolve_assignment` takes from these
    consensus decisions: the latest, the first annotator by name among tied times."""
    by_name = sorted(consensus, key=lambda d: d.annotator)
    return max(by_name, key=lambda d: d.decided_at).value


def _place(key: CaseKey, factors: Sequence[str]) -> tuple[str, int]:
    """Where a (video, factor) sorts in working order."""
    return (key[0], list(factors).index(key[1]) if key[1] in factors else len(factors))


@dataclass(frozen=True)
class DisputeQueue:
    """Every case as of a store ``revision``, kept current by :meth:`refresh`, which re-reads
    only the videos changed since (a consensus changes one video)."""

    revision: tuple[int, int, int, str | None]
    factors: tuple[str, ...]
    cases: tuple[DisputeCase, ...]

    @classmethod
    def build(cls, store: AnnotationStore) -> DisputeQueue:
        """Read the whole store; the revision first, so a write landing meanwhile is re-read
        by the next refresh, never missed."""
        revision = store.revision()
        return cls(revision, tuple(store.catalogue.keys), tuple(dispute_cases(store)))

    def refresh(self, store: AnnotationStore) -> DisputeQueue:
        """This queue as the store stands now."""
        revision = store.revision()
        if revision == self.revision:
            return self
        changed = store.videos_changed_since(self.revision)
        kept = [c for c in self.cases if c.video not in changed]
        registered = set(store.video_ids())
        for video in sorted(changed & registered):
            kept.extend(dispute_cases(store, video_id=video))
        kept.sort(key=lambda c: _place(c.key, self.factors))
        return DisputeQueue(revision, self.factors, tuple(kept))

    @property
    def open(self) -> list[DisputeCase]:
        """The cases waiting for a consensus, in working order."""
        return [c for c in self.cases if c.is_open]

    def case(self, key: CaseKey) -> DisputeCase | None:
        """The case of ``key``, open or settled; None when it is no disagreement."""
        return next((c for c in self.cases if c.key == key), None)

    def current(self, cursor: Cursor) -> DisputeCase | None:
        """The case to show: the one at ``cursor`` while it is open and not skipped, else the
        next open one after it (wrapping around); None when every case is settled."""
        here = self.case(cursor.key) if cursor.key is not None and not cursor.past else None
        return here if here is not None and here.is_open else self.after(cursor.key)

    def after(self, cursor: CaseKey | None) -> DisputeCase | None:
        """The first open case after ``cursor`` in working order, wrapping around: the case
        at ``cursor`` itself only when no other is open."""
        waiting = self.open
        if cursor is None or not waiting:
            return waiting[0] if waiting else None
        place = _place(cursor, self.factors)
        later = [c for c in waiting if _place(c.key, self.factors) > place]
        return (later or waiting)[0]


_Reply = Callable[..., "DisputeOutcome"]


@dataclass(frozen=True)
class DisputeOutcome:
    """What became of one dispute event (a :class:`~vadscene.annotate.session.Outcome`), and
    where the queue stands afterwards."""

    outcome: Outcome
    cursor: Cursor


def handle_dispute_event(
    store: AnnotationStore,
    lead: str,
    event: dict,
    *,
    last: Ack | None,
    cursor: Cursor,
) -> DisputeOutcome:
    """Apply one event from the Disputes page, once, as ``lead``.

    A repeat (same page, ``seq <= last.seq``) is ``duplicate`` and writes nothing.

    - ``decide`` records ``lead``'s consensus on the event's video and factor. Refused,
      writing nothing: an unknown video or factor, a value the factor does not allow, a case
      that is no longer a disagreement. ``unchanged`` when the latest consensus already holds
      the value.
    - ``skip`` writes nothing; the queue moves past the event's case.
    - ``undo`` undoes the lead's latest action only when it is a consensus and the lead's log
      head is the one the page was shown (``last.head``, else the event's ``head``): it never
      takes back something the lead has not seen, nor an annotation of theirs. The case it
      reopens is shown again.

    A store failure on commit (busy, disk full, read-only) gives ``failed``: the browser
    keeps the event and sends it again. Who the lead is comes from the caller (the page's
    login), never from the event.
    """
    page, seq = event.get("page"), event.get("seq")
    if not isinstance(page, str) or not isinstance(seq, int):
        return DisputeOutcome(
            Outcome(str(page), -1, "refused", "malformed event (no page or seq)", -1), cursor
        )
    if last is not None and page == last.page and seq <= last.seq:
        return DisputeOutcome(Outcome(page, seq, "duplicate", "already handled", last.head), cursor)
    if not lead.strip():
        return DisputeOutcome(
            Outcome(page, seq, "refused", "no lead named: nothing recorded", -1), cursor
        )
    head = store.last_decision_id(lead)

    def reply(status: OutcomeStatus, message: str, moved: Cursor = cursor) -> DisputeOutcome:
        return DisputeOutcome(
            Outcome(page, seq, status, message, store.last_decision_id(lead)), moved
        )

    action, video, factor = event.get("action"), event.get("video"), event.get("factor")
    if action not in DISPUTE_ACTIONS:
        return reply("refused", f"unknown action {action!r} (expected one of {DISPUTE_ACTIONS})")
    try:
        if action == "undo":
            expected = last.head if last is not None and last.page == page else event.get("head")
            return _undo(store, lead, expected == head, reply)
        if not isinstance(video, str) or not isinstance(factor, str):
            return reply("refused", f"event {seq}: no video and factor named")
        try:
            store.video(video)
        except StoreError as exc:
            return reply("refused", str(exc))
        if factor not in store.catalogue.keys:
            return reply("refused", f"video '{video}': unknown factor {factor!r}")
        if action == "skip":
            return reply("unchanged", f"Skipped {video} · {factor}", Cursor((video, factor), True))
        return _decide(store, lead, video, factor, event.get("value"), reply)
    except (VadsceneError, sqlite3.Error) as exc:
        # SQLite errors too: a busy or read-only database must reach the lead as a message
        # and leave the key queued, whichever layer reports it.
        return DisputeOutcome(
            Outcome(page, seq, "failed", f"not saved: {exc} — your key is kept and retried", head),
            cursor,
        )


def _decide(
    store: AnnotationStore, lead: str, video: str, factor: str, value: object, reply: _Reply
) -> DisputeOutcome:
    choices = (*store.catalogue.factor(factor).values, AMBIGUOUS)
    if not isinstance(value, str) or value not in choices:
        return reply(
            "refused",
            f"video '{video}', factor '{factor}': {value!r} is not one of "
            f"{', '.join(choices)}; nothing recorded",
        )
    case = next((c for c in dispute_cases(store, video_id=video) if c.factor == factor), None)
    if case is None:
        return reply(
            "refused",
            f"{video} · {factor} is no longer a disagreement (the votes changed); nothing recorded",
        )
    if case.consensus == value:
        return reply("unchanged", f"{video} · {factor}: the consensus is already {value}")
    adjudicate(store, video, factor, value, annotator=lead)
    return reply(
        "recorded",
        f"Consensus {video} · {factor} = {value}, recorded as {lead}",
        Cursor((video, factor)),
    )


def _undo(store: AnnotationStore, lead: str, seen: bool, reply: _Reply) -> DisputeOutcome:
    if not seen:
        return reply(
            "refused",
            "not undone: your decisions changed elsewhere since this page was drawn (another "
            "tab, the CLI or a merged release); the page now shows what is stored",
        )
    target = _last_action(store, lead)
    if target is None:
        return reply("unchanged", "nothing to undo")
    if target.source != "consensus":
        return reply(
            "refused",
            f"not undone: your last decision is an annotation ({target.factor} on "
            f"{target.video_id}), not a consensus; undo it on the Annotate page",
        )
    try:
        undone = store.undo_last(lead)
    except UndoRefusedError as exc:
        return reply("refused", str(exc))
    if undone is None:
        return reply("unchanged", "nothing to undo")
    return reply(
        "recorded",
        f"Undid your consensus on {undone.video_id} · {undone.factor}; it is open again",
        Cursor((undone.video_id, undone.factor)),
    )


def _last_action(store: AnnotationStore, lead: str) -> Decision | None:
    """The decision :meth:`~vadscene.store.database.AnnotationStore.undo_last` would undo:
    the lead's latest that is no undo and not undone. (Rows an import brought are not the
    lead's actions; the store leaves them out, and an import of a lead's own consensus
    history is the one case where this reads a row the store would skip.)"""
    log = store.decision_log(annotator=lead)
    undone = {d.undoes for d in log if d.undoes is not None}
    actions = [d for d in log if d.undoes is None and d.decision_id not in undone]
    return actions[-1] if actions else None


def handle_dispute_events(
    store: AnnotationStore,
    lead: str,
    events: object,
    *,
    last: Ack | None,
    cursor: Cursor,
) -> tuple[list[Outcome], Ack | None, Cursor]:
    """Handle what the browser sent (:func:`~vadscene.annotate.session.pending_events`) in
    order; returns the outcomes of the events not handled before, the new acknowledgement
    and the cursor. Stops at the first failed commit: the events after it wait behind it."""
    outcomes = []
    for event in pending_events(events):
        handled = handle_dispute_event(store, lead, event, last=last, cursor=cursor)
        outcome = handled.outcome
        if outcome.status == "duplicate":
            continue
        outcomes.append(outcome)
        if not outcome.handled:
            break
        last, cursor = Ack(outcome.page, outcome.seq, outcome.head), handled.cursor
    return outcomes, last, cursor
