"""The campaign overview a lead reads: per annotator how far they are, how long a video takes
them and when they will be done; per manual factor how well the annotators agree so far.

The rules behind the numbers, per annotator (their current id; rows written under a former id
of theirs count as theirs):

- **assigned**: the videos currently assigned to them (:meth:`~vadscene.store.team.TeamStore.
  assignments`); **complete**: those of them on which they hold a current value for every
  manual factor (the rule of :meth:`~vadscene.store.database.AnnotationStore.progress`);
  **outside assignment**: videos they completed that are not assigned to them (all of their
  completed videos in a workspace nobody has assigned anything in); **flagged**: videos their
  current flag is set on.
- **time per video**: the annotator's decisions (every row of theirs in the log: decisions,
  clears, undos, adjudications, imported copies of their own work) are put in time order,
  and each gap since their previous decision — on whatever video — is time spent on the video
  of the later decision, up to :data:`SITTING_GAP`. The time before the first key on a video
  is spent watching it, so it belongs to that video, not to the one before. A longer gap is a
  break: it starts a new sitting and counts as the cap, since what they did before that key
  is unknown. Their very first decision counts nothing. The median and the total are over
  the videos they made a decision on.
- **completed at**: the first instant, replaying their decisions in time order, at which a
  video held a value for every manual factor (a later revision does not move it; only
  videos complete now count).
- **working day**: a UTC calendar day with at least one decision of theirs; **pace**: videos
  completed on their latest :data:`PACE_DAYS` working days, per such day; **days left**:
  assigned videos not yet complete ÷ pace, or None with the reason when there is no pace (no
  decision yet, or nothing completed on those days) or nothing assigned.

Agreement per factor is :func:`vadscene.annotate.review.agreement` on the current decisions.
"""

from __future__ import annotations

import csv
import io
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta

import altair as alt
import pandas as pd

from vadscene.annotate.review import FactorAgreement, agreement
from vadscene.annotate.serving import login_path
from vadscene.core.cells import spreadsheet_safe
from vadscene.core.records import AUTO_ANNOTATOR
from vadscene.store.database import AnnotationStore, Decision

SITTING_GAP = timedelta(minutes=10)
"""The longest gap between two decisions of one annotator that still counts in full."""

PACE_DAYS = 7
"""How many of an annotator's latest working days their pace is measured over."""


@dataclass(frozen=True)
class AnnotatorProgress:
    """One annotator's line of the overview (rules: the module docstring)."""

    annotator: str
    display_name: str
    role: str | None
    """"annotator" or "lead"; None for a name found only in the logs (never registered)."""
    active: bool
    assigned: int
    complete: int
    outside_assignment: int
    flagged: int
    videos_timed: int
    median_seconds: float | None
    """None without any decision."""
    total_seconds: float
    working_days: int
    """Working days in the pace window (at most :data:`PACE_DAYS`)."""
    pace: float | None
    """Videos completed per working day; None without any decision."""
    days_left: float | None
    days_left_reason: str
    """Why ``days_left`` is None ("" when it is a number)."""
    last_decision_at: str | None

    @property
    def remaining(self) -> int:
        return self.assigned - self.complete

    @property
    def days_left_text(self) -> str:
        return self.days_left_reason if self.days_left is None else f"{self.days_left:.1f}"


@dataclass(frozen=True)
class CampaignOverview:
    """The whole overview: every annotator (registered, assigned or with decisions or marks,
    by id) and every manual factor's agreement (catalogue order)."""

    videos: int
    annotators: tuple[AnnotatorProgress, ...]
    agreement: tuple[FactorAgreement, ...]

    @property
    def days_left(self) -> float | None:
        """When the last annotator with assigned work left will be done, in working days
        (they work in parallel); None when one of them has no estimate."""
        busy = [a for a in self.annotators if a.remaining > 0]
        if any(a.days_left is None for a in busy):
            return None
        return max((a.days_left for a in busy if a.days_left is not None), default=0.0)


def campaign_overview(
    store: AnnotationStore, *, sitting_gap: timedelta = SITTING_GAP
) -> CampaignOverview:
    """The overview of the store's campaign (rules: the module docstring).

    One read each of the decision log, the current decisions, the marks, the assignments and
    the registry, however many annotators.
    """
    aliases = store.aliases()
    manual = frozenset(f.key for f in store.catalogue.factors if f.source == "manual")
    registry = {entry.annotator_id: entry for entry in store.annotator_registry()}
    assigned = {name: set(videos) for name, videos in store.assignments().items()}
    current = store.current_decisions()
    values: dict[str, dict[str, set[str]]] = {}
    for d in current:
        if d.value is not None and d.factor in manual and d.annotator != AUTO_ANNOTATOR:
            values.setdefault(d.annotator, {}).setdefault(d.video_id, set()).add(d.factor)
    logs: dict[str, list[Decision]] = {}
    for d in store.decision_log():
        if d.annotator != AUTO_ANNOTATOR:
            logs.setdefault(aliases.get(d.annotator, d.annotator), []).append(d)
    flagged: dict[str, int] = {}
    for (_video, who), mark in store.marks().items():
        if mark["flag"]:
            flagged[who] = flagged.get(who, 0) + 1
    names = sorted({*registry, *assigned, *values, *logs, *flagged, *store.annotators()})
    anyone_assigned = bool(assigned)
    lines = []
    for name in names:
        entry = registry.get(name)
        complete = {v for v, factors in values.get(name, {}).items() if factors == manual}
        mine = assigned.get(name, set())
        log = sorted(logs.get(name, []), key=lambda d: (d.decided_at, d.decision_id))
        seconds = _seconds_per_video(log, sitting_gap)
        completed_on = _completion_days(log, manual, complete)
        days = sorted({_day(d.decided_at) for d in log})[-PACE_DAYS:]
        pace = sum(1 for day in completed_on.values() if day in days) / len(days) if days else None
        remaining = len(mine - complete)
        days_left, reason = _days_left(len(mine), remaining, pace)
        lines.append(
            AnnotatorProgress(
                annotator=name,
                display_name=entry.display_name if entry else name,
                role=entry.role if entry else None,
                active=entry.active if entry else True,
                assigned=len(mine),
                complete=len(mine & complete),
                outside_assignment=len(complete - mine) if anyone_assigned else len(complete),
                flagged=flagged.get(name, 0),
                videos_timed=len(seconds),
                median_seconds=statistics.median(seconds.values()) if seconds else None,
                total_seconds=sum(seconds.values()),
                working_days=len(days),
                pace=pace,
                days_left=days_left,
                days_left_reason=reason,
                last_decision_at=log[-1].decided_at if log else None,
            )
        )
    return CampaignOverview(
        videos=len(store.video_ids()),
        annotators=tuple(lines),
        agreement=tuple(agreement(store, decisions=current)),
    )


def _seconds_per_video(log: Sequence[Decision], cap: timedelta) -> dict[str, float]:
    """Video → seconds spent, from one annotator's decisions in time order."""
    seconds: dict[str, float] = {}
    previous: datetime | None = None
    for d in log:
        at = datetime.fromisoformat(d.decided_at)
        gap = min(at - previous, cap) if previous is not None else timedelta(0)
        seconds[d.video_id] = seconds.get(d.video_id, 0.0) + gap.total_seconds()
        previous = at
    return seconds


def _completion_days(
    log: Sequence[Decision], manual: frozenset[str], complete: set[str]
) -> dict[str, date]:
    """Video (of ``complete``) → the UTC day it first held a value for every manual factor."""
    held: dict[str, dict[str, str | None]] = {}
    days: dict[str, date] = {}
    for d in log:
        if d.video_id not in complete or d.video_id in days or d.factor not in manual:
            continue
        state = held.setdefault(d.video_id, {})
        state[d.factor] = d.value
        if len(state) == len(manual) and all(v is not None for v in state.values()):
            days[d.video_id] = _day(d.decided_at)
    return days


def _day(instant: str) -> date:
    return datetime.fromisoformat(instant).date()  # stored times are UTC


def _days_left(assigned: int, remaining: int, pace: float | None) -> tuple[float | None, str]:
    if assigned == 0:
        return None, "nothing assigned"
    if remaining == 0:
        return 0.0, ""
    if pace is None:
        return None, "no decision yet"
    if pace == 0:
        return None, f"no video completed on the last {PACE_DAYS} working days"
    return remaining / pace, ""


# --- the CSV --------------------------------------------------------------------------------

ANNOTATOR_COLUMNS = (
    "annotator",
    "name",
    "role",
    "active",
    "assigned",
    "complete",
    "remaining",
    "outside_assignment",
    "flagged",
    "videos_timed",
    "median_minutes_per_video",
    "total_hours",
    "working_days",
    "pace_videos_per_day",
    "days_left",
    "days_left_note",
    "last_decision_at",
)
FACTOR_COLUMNS = (
    "factor",
    "statistic",
    "kappa",
    "kappa_note",
    "observed_agreement",
    "annotators",
    "videos",
)


def annotator_rows(overview: CampaignOverview) -> list[list[object]]:
    """The annotator table's rows (:data:`ANNOTATOR_COLUMNS`): minutes per video, hours in
    total, None where there is no number (the note column says why for days left)."""
    return [
        [
            a.annotator,
            a.display_name,
            a.role or "unregistered",
            "yes" if a.active else "revoked",
            a.assigned,
            a.complete,
            a.remaining,
            a.outside_assignment,
            a.flagged,
            a.videos_timed,
            None if a.median_seconds is None else round(a.median_seconds / 60, 2),
            round(a.total_seconds / 3600, 2),
            a.working_days,
            None if a.pace is None else round(a.pace, 2),
            None if a.days_left is None else round(a.days_left, 1),
            a.days_left_reason,
            a.last_decision_at,
        ]
        for a in overview.annotators
    ]


def factor_rows(overview: CampaignOverview) -> list[list[object]]:
    """The factor table's rows (:data:`FACTOR_COLUMNS`); κ None when undefined, with the
    reason in ``kappa_note``."""
    rows: list[list[object]] = []
    for f in overview.agreement:
        defined = not math.isnan(f.kappa)
        observed = None if math.isnan(f.observed_agreement) else round(f.observed_agreement, 3)
        rows.append(
            [
                f.factor,
                f.statistic,
                round(f.kappa, 3) if defined else None,
                "" if defined else f.kappa_text,
                observed,
                ", ".join(f.annotators),
                f.videos,
            ]
        )
    return rows


def overview_csv(overview: CampaignOverview) -> str:
    """The overview as CSV: the annotator table (:func:`annotator_rows`), an empty line, then
    the factor table (:func:`factor_rows`), each under its header.

    Text cells are quoted, and those starting with ``=``, ``+``, ``-``, ``@``, tab or carriage
    return are prefixed with ``'`` so a spreadsheet shows them as text instead of running them
    as formulas (OWASP CSV injection) — an annotator may be called "=1+1". Numbers stay
    unquoted numbers; a missing number is an empty cell.
    """
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n")
    writer.writerow(ANNOTATOR_COLUMNS)
    writer.writerows([_safe_cell(c) for c in row] for row in annotator_rows(overview))
    writer.writerow([])
    writer.writerow(FACTOR_COLUMNS)
    writer.writerows([_safe_cell(c) for c in row] for row in factor_rows(overview))
    return out.getvalue()


def _safe_cell(cell: object) -> object:
    """A missing number is an empty cell; text is :func:`spreadsheet_safe`."""
    return "" if cell is None else spreadsheet_safe(cell)


# --- the page's chart -----------------------------------------------------------------------


def progress_chart(overview: CampaignOverview) -> alt.LayerChart | None:
    """Per annotator with assigned videos, a bar of the assigned videos with the completed
    ones filled in; None when nothing is assigned."""
    rows = [
        {"annotator": a.display_name, "assigned": a.assigned, "complete": a.complete}
        for a in overview.annotators
        if a.assigned
    ]
    if not rows:
        return None
    data = pd.DataFrame(rows)
    order = list(data["annotator"])
    base = alt.Chart(data).encode(y=alt.Y("annotator:N", sort=order, title=None))
    assigned = base.mark_bar(color="#d9d9d9").encode(
        x=alt.X("assigned:Q", title="videos"),
        tooltip=["annotator", "assigned:Q", "complete:Q"],
    )
    complete = base.mark_bar(color="#1f77b4").encode(
        x="complete:Q", tooltip=["annotator", "assigned:Q", "complete:Q"]
    )
    return alt.LayerChart(
        layer=[assigned, complete],
        height=alt.Step(28),
        title=alt.TitleParams(
            "Completed of assigned", subtitle=["grey: assigned, blue: complete"], anchor="start"
        ),
    )


def access_link(base_url: str, secret: str) -> str:
    """A personal access link: the app's address (scheme, host, port) and the secret's path
    (:func:`~vadscene.annotate.serving.login_path`)."""
    return base_url.rstrip("/") + login_path(secret)
