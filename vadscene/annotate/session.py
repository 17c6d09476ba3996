"""What an annotation session needs from the store: the annotator's view of a video, their
queue of videos, and the one function that turns a person's key or click into a store write.

Every change a person makes on the Annotate page — a value, accepting an auto pole, undo, the
flag, the note — arrives as an event ``{page, seq, video, factor, action, value}`` and is
handled by :func:`handle_event`, exactly once; nothing else on the page writes decisions. The
browser resends every event it has not seen acknowledged (a rerun request can be folded into a
newer one or replayed into a later run), so the handler must recognise a repeat, and an event
whose value the store already holds records nothing.

A video is complete for an annotator when every manual factor has a decision (a value or
``ambiguous``); auto factors are measured, so they never make a video incomplete.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from itertools import zip_longest
from typing import Literal

from vadscene.annotate.consensus import disputes
from vadscene.core.catalogue import AMBIGUOUS, Factor
from vadscene.core.errors import StoreError, UndoRefusedError, VadsceneError
from vadscene.core.records import AUTO_ANNOTATOR
from vadscene.store.database import AnnotationStore, Decision

ACTIONS = ("decide", "accept_auto", "undo", "flag", "note")
"""What an event can ask: set a factor's value, take the auto pole as one's own decision, undo
one's latest decision, set the video's flag (true/false, not a toggle, so a repeat is
harmless), set its note ("" clears it)."""

QueueStatus = Literal["complete", "incomplete", "flagged", "disagreement"]
OutcomeStatus = Literal["recorded", "unchanged", "duplicate", "refused", "failed"]
_Reply = Callable[[OutcomeStatus, str], "Outcome"]


@dataclass(frozen=True)
class FactorState:
    """One factor of one video as an annotator sees it."""

    factor: Factor
    value: str | None  # the annotator's current value
    auto_value: str | None  # the measured pole, for auto factors
    measured: float | None  # the statistic behind the auto pole


@dataclass(frozen=True)
class Ack:
    """The last event a page's session handled: ``(page, seq)``, and the annotator's log head
    (:meth:`~vadscene.store.database.AnnotationStore.last_decision_id`) right after it."""

    page: str
    seq: int
    head: int


@dataclass(frozen=True)
class Outcome:
    """What became of one event.

    ``recorded``: committed. ``unchanged``: the store already held it, nothing written.
    ``duplicate``: this (page, seq) was handled before. ``refused``: the event cannot be
    applied (unknown video, a value the factor does not allow, an undo of a log that changed
    elsewhere); dropping it is right. ``failed``: the store could not commit (busy, disk full,
    read-only); the browser keeps the event and sends it again.
    """

    page: str
    seq: int
    status: OutcomeStatus
    message: str
    head: int

    @property
    def handled(self) -> bool:
        """Whether the browser may forget the event (everything but a failed commit)."""
        return self.status != "failed"


def factor_states(store: AnnotationStore, video_id: str, annotator: str) -> list[FactorState]:
    """The annotator's values, and auto poles with their measurements, for every factor.

    Reads this video's rows only: the Annotate page asks about a few videos per key, and the
    whole workspace's measurements (thousands of rows to parse) would cost more than the key."""
    decisions = store.current_decisions(video_id=video_id)
    mine = {d.factor: d.value for d in decisions if d.annotator == annotator}
    auto = {d.factor: d.value for d in decisions if d.annotator == AUTO_ANNOTATOR}
    measured = store.measurements(video_id=video_id).get(video_id, {})
    states = []
    for factor in store.catalogue.factors:
        statistic = factor.auto.statistic if factor.auto else None
        states.append(
            FactorState(
                factor,
                mine.get(factor.key),
                auto.get(factor.key),
                measured[statistic].value if statistic in measured else None,
            )
        )
    return states


def video_queue(store: AnnotationStore, annotator: str) -> list[tuple[str, QueueStatus]]:
    """The annotator's videos in working order (:func:`working_order`) with where each stands
    for them.

    ``flagged``: they flagged it. ``incomplete``: a manual factor is undecided. ``disagreement``:
    complete, and they vote in a dispute on some factor
    (:func:`vadscene.annotate.consensus.disputes`, the one definition of annotators
    disagreeing: auto poles and consensus decisions are not votes). ``complete`` otherwise.
    """
    decisions = store.current_decisions()
    mine = _values_of(decisions, annotator)
    disputed = _disputed_videos(decisions, annotator)
    flagged = {video for (video, who), m in store.marks().items() if who == annotator and m["flag"]}
    manual = _manual_keys(store)
    return [
        (video, _status(mine.get(video, {}), video in disputed, video in flagged, manual))
        for video in _order(store, store.video_ids(), _assigned(store, annotator))
    ]


def working_order(
    video_ids: Sequence[str], assigned: Collection[str], categories: Mapping[str, str]
) -> list[str]:
    """The order an annotator works in: the videos ``assigned`` to them first, taking one of
    each category in turn (categories by name, videos by id within one), so a queue does not
    run through one category after another; then every other video by id, still within
    reach. Without assignments, every video by id."""
    mine = set(assigned)
    by_category: dict[str, list[str]] = {}
    for video in sorted(mine):
        by_category.setdefault(categories[video], []).append(video)
    rounds = zip_longest(*(by_category[c] for c in sorted(by_category)))
    first = [video for taken in rounds for video in taken if video is not None]
    return first + [video for video in video_ids if video not in mine]


def _assigned(store: AnnotationStore, annotator: str) -> tuple[str, ...]:
    """The videos assigned to the annotator now, sorted."""
    return tuple(store.assignments().get(store.resolve_annotator(annotator), ()))


def _order(store: AnnotationStore, video_ids: list[str], assigned: tuple[str, ...]) -> list[str]:
    if not assigned:
        return video_ids
    categories = {video.video_id: video.category for video in store.videos()}
    return working_order(video_ids, [v for v in assigned if v in categories], categories)


def _manual_keys(store: AnnotationStore) -> set[str]:
    return {f.key for f in store.catalogue.factors if f.source == "manual"}


def _values_of(decisions: list[Decision], annotator: str) -> dict[str, dict[str, str]]:
    """The annotator's current values per video, ``{factor: value}`` (cleared ones left out)."""
    mine: dict[str, dict[str, str]] = {}
    for d in decisions:
        if d.value is not None and d.annotator == annotator != AUTO_ANNOTATOR:
            mine.setdefault(d.video_id, {})[d.factor] = d.value
    return mine


def _disputed_videos(decisions: list[Decision], annotator: str) -> set[str]:
    """The videos with a dispute in which ``annotator`` votes."""
    return {
        dispute.video
        for dispute in disputes(decisions).values()
        if any(who == annotator for who, _ in dispute.votes)
    }


def _status(values: dict[str, str], disputed: bool, flagged: bool, manual: set[str]) -> QueueStatus:
    """Where one video stands (see :func:`video_queue`)."""
    if flagged:
        return "flagged"
    if not manual <= values.keys():
        return "incomplete"
    return "disagreement" if disputed else "complete"


REFRESH_LIMIT = 200
"""Beyond this many changed videos (a bulk import, another annotator's session), a refresh
reads the whole store once rather than video by video."""


@dataclass(frozen=True)
class AnnotatorQueue:
    """:func:`video_queue` and the annotator's current values as of a store ``revision``, kept
    current by :meth:`refresh` without re-reading the whole store after every key.

    A key changes one video, so rebuilding the queue of a large workspace for it would cost a
    read of every current decision; :meth:`refresh` re-reads only the videos whose decisions or
    marks were appended since ``revision``, whoever appended them."""

    annotator: str
    revision: tuple[int, int, int, str | None]
    statuses: dict[str, QueueStatus]  # in working order (:func:`working_order`)
    values: dict[str, dict[str, str]]  # the annotator's current values, per video
    assigned: tuple[str, ...] = ()  # the videos assigned to the annotator, sorted
    team_revision: tuple[int, int] = (0, 0)  # of assignments and aliases, when built

    @classmethod
    def build(cls, store: AnnotationStore, annotator: str) -> AnnotatorQueue:
        """Read the whole store. The revision is read first: a write landing meanwhile is then
        re-read by the next refresh, never missed."""
        revision, team_revision = store.revision(), store.team_revision()
        assigned = _assigned(store, annotator)
        decisions = store.current_decisions()
        mine = _values_of(decisions, annotator)
        disputed = _disputed_videos(decisions, annotator)
        marks = store.marks()
        manual = _manual_keys(store)
        statuses = {
            video: _status(
                mine.get(video, {}),
                video in disputed,
                bool(marks.get((video, annotator), {}).get("flag")),
                manual,
            )
            for video in _order(store, store.video_ids(), assigned)
        }
        return cls(annotator, revision, statuses, mine, assigned, team_revision)

    def refresh(self, store: AnnotationStore, video_ids: list[str]) -> AnnotatorQueue:
        """This queue as the store stands now; ``video_ids`` is ``store.video_ids()``. A new
        or removed video, a change of the annotator's assignments, or many changed videos
        rebuild it whole."""
        revision = store.revision()
        if self.statuses.keys() != set(video_ids) or store.team_revision() != self.team_revision:
            return AnnotatorQueue.build(store, self.annotator)
        if revision == self.revision:
            return self
        changed = store.videos_changed_since(self.revision)
        if len(changed) > REFRESH_LIMIT:
            return AnnotatorQueue.build(store, self.annotator)
        statuses, values = dict(self.statuses), dict(self.values)
        manual = _manual_keys(store)
        for video in changed:
            decisions = store.current_decisions(video_id=video)
            mine = _values_of(decisions, self.annotator)
            mark = store.marks(video_id=video).get((video, self.annotator), {})
            statuses[video] = _status(
                mine.get(video, {}),
                video in _disputed_videos(decisions, self.annotator),
                bool(mark.get("flag")),
                manual,
            )
            values.pop(video, None)
            if video in mine:
                values[video] = mine[video]
        return AnnotatorQueue(
            self.annotator, revision, statuses, values, self.assigned, self.team_revision
        )

    @property
    def queue(self) -> list[tuple[str, QueueStatus]]:
        """As :func:`video_queue` returns it."""
        return list(self.statuses.items())

    def next_incomplete(self, after: str | None = None) -> str | None:
        """The first ``incomplete`` video after ``after`` in working order (wrapping around),
        or None when none is left. Flagged videos are set aside, so they are skipped."""
        order = list(self.statuses)
        start = order.index(after) + 1 if after in self.statuses else 0
        for video in order[start:] + order[:start]:
            if self.statuses[video] == "incomplete":
                return video
        return None


def pending_events(events: object) -> list[dict]:
    """The well-formed events of what the browser sent, oldest first (malformed entries come
    from the browser and are ignored; :func:`handle_event` recognises repeats)."""
    if not isinstance(events, list):
        return []
    fresh = [
        event
        for event in events
        if isinstance(event, dict)
        and isinstance(event.get("page"), str)
        and isinstance(event.get("seq"), int)
        and not isinstance(event.get("seq"), bool)
    ]
    return sorted(fresh, key=lambda event: (event["page"], event["seq"]))


def handle_event(
    store: AnnotationStore, annotator: str, event: dict, *, last: Ack | None
) -> Outcome:
    """Apply one event from the Annotate page to the store, once.

    ``last`` is the session's :class:`Ack` (None before its first event). An event of the
    same page with ``seq <= last.seq`` is a repeat: ``duplicate``, nothing written. A value,
    flag or note equal to what the store holds records nothing (``unchanged``) — a key can be
    pressed twice or resent after a server restart. A value is what the person pressed, never
    derived from what the page shows, so press-then-move at any speed writes only pressed
    values.

    Undo is the one relative action ("my latest decision"), so it applies only when the
    annotator's log head is the one the page expects: ``last.head`` for the page that sent
    ``last``, else the ``head`` the event carries (what the page was last shown). If another
    tab or process wrote since, the undo is refused rather than undoing something the person
    has not seen.

    A store failure on commit (busy, disk full, read-only — any :class:`VadsceneError` or
    SQLite error) gives ``failed``: the caller keeps the event and the browser resends it.
    """
    page, seq = event.get("page"), event.get("seq")
    if not isinstance(page, str) or not isinstance(seq, int):
        return Outcome(str(page), -1, "refused", "malformed event (no page or seq)", -1)
    if last is not None and page == last.page and seq <= last.seq:
        return Outcome(page, seq, "duplicate", "already handled", last.head)
    head = store.last_decision_id(annotator)

    def outcome(status: OutcomeStatus, message: str) -> Outcome:
        return Outcome(page, seq, status, message, store.last_decision_id(annotator))

    action, video, factor_key, value = (
        event.get("action"),
        event.get("video"),
        event.get("factor"),
        event.get("value"),
    )
    if action not in ACTIONS:
        return outcome("refused", f"unknown action {action!r} (expected one of {ACTIONS})")
    claimed = event.get("annotator")
    if claimed is not None and claimed != annotator:
        # the page never names an annotator: who writes is the session's, not the event's
        return outcome(
            "refused", f"not saved: this page writes as {annotator} only, not as {claimed!r}"
        )
    if not isinstance(video, str):
        return outcome("refused", f"event {seq}: no video named")
    try:
        store.video(video)
    except StoreError as exc:
        return outcome("refused", str(exc))
    try:
        if action in ("decide", "accept_auto"):
            return _decide(store, annotator, video, factor_key, value, action, outcome)
        if action == "undo":
            expected = last.head if last is not None and last.page == page else event.get("head")
            if expected != head:
                return outcome(
                    "refused",
                    "not undone: your decisions changed elsewhere since this page was drawn "
                    "(another tab, the CLI or a merged release); the page now shows what is stored",
                )
            try:
                undone = store.undo_last(annotator)
            except UndoRefusedError as exc:
                return outcome("refused", str(exc))
            if undone is None:
                return outcome("unchanged", "nothing to undo")
            return outcome("recorded", f"undid {undone.factor} on {undone.video_id}")
        return _mark(store, annotator, video, action, value, outcome)
    except (VadsceneError, sqlite3.Error) as exc:
        # SQLite errors too: a busy or read-only database must reach the person as a message
        # and leave the key queued, whichever layer reports it.
        return Outcome(
            page, seq, "failed", f"not saved: {exc} — your key is kept and will be retried", head
        )


def _decide(
    store: AnnotationStore,
    annotator: str,
    video: str,
    factor_key: object,
    value: object,
    action: str,
    outcome: _Reply,
) -> Outcome:
    """A value (``decide``) or the auto pole the page showed (``accept_auto``)."""
    if factor_key not in store.catalogue.keys:
        return outcome("refused", f"video '{video}': unknown factor {factor_key!r}")
    factor = store.catalogue.factor(factor_key)
    if not isinstance(value, str) or not factor.allows(value):
        allowed = ", ".join([*factor.values, AMBIGUOUS])
        return outcome(
            "refused", f"video '{video}', factor '{factor_key}': {value!r} is not one of {allowed}"
        )
    current = {
        d.annotator: d.value
        for d in store.current_decisions(video_id=video)
        if d.factor == factor_key
    }
    if action == "accept_auto":
        pole = current.get(AUTO_ANNOTATOR)
        if pole is None:
            return outcome("refused", f"video '{video}': {factor_key} has no auto pole to accept")
        if pole != value:
            return outcome(
                "refused",
                f"video '{video}': the auto pole of {factor_key} is now {pole}, not {value}; "
                "press again to accept it",
            )
    if current.get(annotator) == value:
        return outcome("unchanged", f"{factor_key} = {value} (already saved)")
    decision = store.record_decision(video, factor_key, value, annotator=annotator)
    override = " (override)" if decision.source == "override" else ""
    return outcome("recorded", f"Saved {factor_key} = {value}{override}")


def _mark(
    store: AnnotationStore, annotator: str, video: str, action: str, value: object, outcome: _Reply
) -> Outcome:
    """The flag (a bool: the state wanted) or the note (text; "" clears it)."""
    marks = store.marks(video_id=video).get((video, annotator), {"flag": False, "note": None})
    if action == "flag":
        if not isinstance(value, bool):
            return outcome("refused", f"video '{video}': a flag event needs true or false")
        if bool(marks["flag"]) == value:
            return outcome("unchanged", "flagged" if value else "not flagged")
        store.set_mark(video, "flag", value, annotator=annotator)
        return outcome("recorded", "flagged for review" if value else "unflagged")
    if not isinstance(value, str):
        return outcome("refused", f"video '{video}': a note event needs text")
    if (marks["note"] or "") == value:
        return outcome("unchanged", "note saved")
    store.set_mark(video, "note", value, annotator=annotator)
    return outcome("recorded", "note saved")


def handle_events(
    store: AnnotationStore, annotator: str, events: object, *, last: Ack | None
) -> tuple[list[Outcome], Ack | None]:
    """Handle what the browser sent (:func:`pending_events`) in order with
    :func:`handle_event`; returns the outcomes of the events not handled before, and the new
    acknowledgement. Stops at the first failed commit: the events after it wait behind it, so
    they still land in the order they were pressed once the store accepts writes again."""
    outcomes = []
    for event in pending_events(events):
        outcome = handle_event(store, annotator, event, last=last)
        if outcome.status == "duplicate":
            continue
        outcomes.append(outcome)
        if not outcome.handled:
            break
        last = Ack(outcome.page, outcome.seq, outcome.head)
    return outcomes, last
