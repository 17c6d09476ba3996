"""Consensus: the one rule that turns every annotator's current decision into the value a video
carries for a factor.

Review shows it, releases publish it and the audit reads it, so all three call
:func:`resolve_assignment`.
"""

from __future__ import annotations

from collections.abc import Iterable

from vadscene.core.records import FactorAssignment, FactorDecision

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
        if len(humans) > 1:
            resolution = "agreement"
        else:
            resolution = "override" if humans[0].source == "override" else "single"
        return FactorAssignment(value=values.pop(), resolution=resolution, decisions=ordered)
    return FactorAssignment(value=auto[0].value, resolution="auto", decisions=ordered)
