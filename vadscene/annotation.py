"""What an annotation session needs from the store: the annotator's view of a video, which
videos are incomplete, and keyboard value choices — the Annotate page is a thin layer on this.

A video is complete for an annotator when every manual factor has a decision (a value or
``ambiguous``); auto factors are measured, so they never make a video incomplete.
"""

from __future__ import annotations

from dataclasses import dataclass

from vadscene.catalogue import AMBIGUOUS, Factor
from vadscene.records import AUTO_ANNOTATOR
from vadscene.store import AnnotationStore


@dataclass(frozen=True)
class FactorState:
    """One factor of one video as an annotator sees it."""

    factor: Factor
    value: str | None  # the annotator's current value
    auto_value: str | None  # the measured pole, for auto factors
    measured: float | None  # the statistic behind the auto pole
    revision: str  # the decisions shown (ids of the annotator's and the auto one); see below

    # A page keys the factor's widget by ``revision``, so the widget is new whenever the
    # store's value changes: a browser that reports a widget's old value (its rerun request
    # left before it had shown the new one) then reports it for a widget that is gone, and
    # the stale value cannot be taken for a click that undoes the change.


def factor_states(store: AnnotationStore, video_id: str, annotator: str) -> list[FactorState]:
    """The annotator's values, and auto poles with their measurements, for every factor."""
    decisions = store.current_decisions(video_id=video_id)
    mine = {d.factor: d for d in decisions if d.annotator == annotator}
    auto = {d.factor: d for d in decisions if d.annotator == AUTO_ANNOTATOR}
    measured = store.measurements().get(video_id, {})
    states = []
    for factor in store.catalogue.factors:
        statistic = factor.auto.statistic if factor.auto else None
        own, pole = mine.get(factor.key), auto.get(factor.key)
        states.append(
            FactorState(
                factor,
                own.value if own else None,
                pole.value if pole else None,
                measured[statistic].value if statistic in measured else None,
                f"{own.decision_id if own else 0}-{pole.decision_id if pole else 0}",
            )
        )
    return states


def incomplete_videos(store: AnnotationStore, annotator: str) -> list[str]:
    """Videos (in id order) where the annotator has not decided every manual factor."""
    manual = {f.key for f in store.catalogue.factors if f.source == "manual"}
    decided: dict[str, set[str]] = {}
    for video_id, factor in store.current_values(annotator):
        decided.setdefault(video_id, set()).add(factor)
    return [v for v in store.video_ids() if not manual <= decided.get(v, set())]


def next_incomplete(store: AnnotationStore, annotator: str, after: str | None) -> str | None:
    """The first incomplete video after ``after`` (wrapping around), or None when all are done."""
    remaining = incomplete_videos(store, annotator)
    if not remaining:
        return None
    later = [v for v in remaining if after is None or v > after]
    return (later or remaining)[0]


def value_for_number(factor: Factor, number: int) -> str | None:
    """Key 1…n picks the factor's n-th value; the key after the last value picks ambiguous."""
    if 1 <= number <= len(factor.values):
        return factor.values[number - 1]
    return AMBIGUOUS if number == len(factor.values) + 1 else None


def new_key_events(events: list[dict], acked: dict | None) -> list[dict]:
    """The browser's key events not handled yet, oldest first.

    The player resends every key event it has not seen acknowledged with each new one, because
    Streamlit may drop a pending rerun's input in favour of a newer one or replay a run's input
    into a later run. ``acked`` is ``{"page": ..., "seq": ...}`` of the last handled event (None
    before the first); an event is new if it comes from another page load (a reload) or has a
    higher sequence number. Malformed entries are ignored: they come from the browser.
    """
    fresh = [
        event
        for event in events
        if isinstance(event, dict)
        and isinstance(event.get("seq"), int)
        and (acked is None or event.get("page") != acked.get("page") or event["seq"] > acked["seq"])
    ]
    return sorted(fresh, key=lambda event: event["seq"])


def key_event_ack(event: dict) -> dict:
    """What to send back to the player once ``event`` is handled (see :func:`new_key_events`)."""
    return {"page": event.get("page"), "seq": event["seq"]}
