"""Consensus: where human annotators disagree, how every current decision resolves to the value
a video carries for a factor, and the adjudication that settles a disagreement.

Review shows the resolved value, releases publish it and the audit reads it, so all three call
:func:`resolve_assignment`; :func:`disputes` is the one definition of a disagreement, and
:func:`adjudicate` the one writer of ``consensus`` decisions.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from vadscene.core.records import FactorAssignment, FactorDecision, Resolution
from vadscene.store.database import AnnotationStore, Decision

HUMAN_SOURCES = ("manual", "override")
"""Decision sources that a person chose (an override replaced an auto pole)."""


def resolve_assignment(decisions: Iterable[FactorDecision]) -> FactorAssignment:
    """Choose the value the audit uses from every current decision on one video and factor.

    Precedence: the latest ``consensus`` decision; else the human decisions (manual or
    override) when they all agree (``single`` for one annotator — ``override`` when that one
    replaced an auto pole — ``agreement`` for several); else, with no human decision, the auto
    pole; human annotators who differ with nobody adjudicating give ``disagreement`` and no
    value. Decisions are kept sorted by annotator.
    """
    ordered = tuple(sorted(decisions, key=lambda d: d.annotator))
    consensus = [d for d in ordered if d.source == "consensus"]
    humans = [d for d in ordered if d.source in HUMAN_SOURCES]
    auto = [d for d in ordered if d.source == "auto"]
    if consensus:
        latest = max(consensus, key=lambda d: d.decided_at)
        return FactorAssignment(value=latest.value, resolution="consensus", decisions=ordered)
    if humans:
        values = {d.value for d in humans}
        if len(values) > 1:
            return FactorAssignment(value=None, resolution="disagreement", decisions=ordered)
        resolution: Resolution
        if len(humans) > 1:
            resolution = "agreement"
        else:
            resolution = "override" if humans[0].source == "override" else "single"
        return FactorAssignment(value=values.pop(), resolution=resolution, decisions=ordered)
    return FactorAssignment(value=auto[0].value, resolution="auto", decisions=ordered)


@dataclass(frozen=True)
class Dispute:
    """Human annotators' differing current values on one (video, factor).

    ``votes`` holds every human annotator's (name, value), sorted by name — also those who
    agree with someone — so the page can show who voted what.
    """

    video: str
    factor: str
    votes: tuple[tuple[str, str], ...]

    @property
    def text(self) -> str:
        """The votes as a person reads them in a table cell: "ana: few · bo: many"."""
        return " · ".join(f"{annotator}: {value}" for annotator, value in self.votes)

    def voters(self, value: str) -> tuple[str, ...]:
        """The annotators who voted ``value``, by name (empty when nobody did)."""
        return tuple(annotator for annotator, vote in self.votes if vote == value)


def disputes(decisions: Iterable[Decision]) -> dict[tuple[str, str], Dispute]:
    """(video, factor) → :class:`Dispute` wherever human annotators disagree.

    ``decisions`` are current decisions
    (:meth:`~vadscene.store.database.AnnotationStore.current_decisions`, for the whole store or
    one video). Annotators disagree on a (video, factor) when their current manual or override
    values (cleared ones left out) are not all equal. Auto poles
    and consensus decisions are not votes; a consensus settles the value a release publishes
    but does not end the dispute, so adjudicated videos stay findable.

    This is the one definition of "annotators disagree": the Review table's cells and filter,
    the Review page's adjudication and the annotation queue all use it.
    """
    votes: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for d in decisions:
        if d.value is not None and d.source in HUMAN_SOURCES:
            votes.setdefault((d.video_id, d.factor), []).append((d.annotator, d.value))
    return {
        key: Dispute(video=key[0], factor=key[1], votes=tuple(sorted(cast)))
        for key, cast in votes.items()
        if len({value for _, value in cast}) > 1
    }


def adjudicate(
    store: AnnotationStore, video_id: str, factor: str, value: str, *, annotator: str
) -> Decision:
    """Record ``annotator``'s adjudicated ``value`` for a video's factor: a ``consensus``
    decision, which :func:`resolve_assignment` prefers over every vote.

    ``value`` is one of the factor's values or ``"ambiguous"``. Refuses with a one-line
    :class:`~vadscene.core.errors.StoreError`, writing nothing, an unknown video or factor, a
    value the factor does not allow, or an empty annotator name; the decision is committed
    before this returns.
    """
    return store.record_decision(video_id, factor, value, annotator=annotator, source="consensus")
