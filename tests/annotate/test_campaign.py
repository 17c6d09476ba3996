"""The campaign overview, worked out by hand on a small store, its CSV and its chart."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from helpers import video_info

from vadscene.annotate.campaign import (
    ANNOTATOR_COLUMNS,
    FACTOR_COLUMNS,
    PACE_DAYS,
    SITTING_GAP,
    campaign_overview,
    overview_csv,
    progress_chart,
)
from vadscene.annotate.review import agreement
from vadscene.core.catalogue import parse_catalogue
from vadscene.store.database import AnnotationStore

CATALOGUE = parse_catalogue(
    {
        "name": "two",
        "factors": [
            {
                "key": key,
                "name": key.upper(),
                "level": "recording",
                "values": ["x", "y"],
                "criterion": "what it looks like",
                "source": "manual",
            }
            for key in ("a", "b")
        ],
    }
)
VIDEOS = ("v1", "v2", "v3", "v4")


def at(day: int, clock: str) -> str:
    """A time on 2026-11-<day> (UTC), before the test machine's clock."""
    return f"2026-11-{day:02d}T{clock}+00:00"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[AnnotationStore]:
    with AnnotationStore(tmp_path / "annotations.db", CATALOGUE) as opened:
        opened.register_videos(video_info(v, "Abuse" if v < "v3" else "Arson") for v in VIDEOS)
        yield opened


@pytest.fixture
def campaign(store: AnnotationStore) -> AnnotationStore:
    """ana: v1..v4 assigned, three complete (v1 revised a day later), v2 flagged.
    bo (first registered as "bob", renamed after his first day): v1, v2 assigned; v1 done,
    v3 done outside his assignment, v2 completed and then a factor cleared.
    cy: never registered, one decision. dee: registered, v4 assigned, nothing done."""
    for name in ("ana", "bob", "dee"):
        store.register_annotator(name)

    def decide(video: str, factor: str, value: str | None, who: str, when: str) -> None:
        store.record_decision(video, factor, value, annotator=who, decided_at=when)

    decide("v1", "a", "x", "ana", at(2, "09:00:00"))
    decide("v1", "b", "x", "ana", at(2, "09:00:30"))
    decide("v2", "a", "x", "ana", at(2, "09:02:00"))
    decide("v2", "b", "y", "ana", at(2, "09:02:20"))
    decide("v3", "a", "x", "ana", at(3, "10:00:00"))
    decide("v3", "b", "x", "ana", at(3, "10:01:00"))
    decide("v1", "a", "y", "ana", at(3, "10:03:00"))
    decide("v4", "a", "x", "ana", at(3, "10:04:00"))
    store.set_mark("v2", "flag", True, annotator="ana")
    store.set_mark("v3", "flag", True, annotator="ana", marked_at=at(3, "10:00:00"))
    store.set_mark("v3", "flag", False, annotator="ana", marked_at=at(3, "10:00:05"))

    decide("v1", "a", "x", "bob", at(2, "09:00:00"))
    decide("v1", "b", "y", "bob", at(2, "09:05:00"))
    store.rename_annotator("bob", "Bo")
    decide("v3", "a", "y", "bo", at(5, "08:00:00"))
    decide("v3", "b", "y", "bo", at(5, "08:00:40"))
    decide("v2", "a", "x", "bo", at(5, "08:01:00"))
    decide("v2", "b", "x", "bo", at(5, "08:01:10"))
    decide("v2", "b", None, "bo", at(5, "08:02:00"))

    decide("v1", "a", "x", "cy", at(2, "09:10:00"))

    store.record_assignments(
        [(v, "ana", True) for v in VIDEOS]
        + [("v1", "bo", True), ("v2", "bo", True), ("v4", "dee", True)],
        by="lead",
    )
    return store


def test_overview_matches_the_hand_worked_campaign(campaign: AnnotationStore) -> None:
    overview = campaign_overview(campaign)
    by_name = {a.annotator: a for a in overview.annotators}
    assert list(by_name) == ["ana", "bo", "cy", "dee"]
    assert overview.videos == 4

    ana = by_name["ana"]
    # v1: 30 s to its second key, +120 s for the revision; v2: 90 + 20; v3: the night's gap
    # counts as the cap (600), +60; v4: 60. The first key of all counts nothing.
    assert (ana.assigned, ana.complete, ana.remaining, ana.outside_assignment) == (4, 3, 1, 0)
    assert (ana.flagged, ana.videos_timed) == (1, 4)
    assert ana.median_seconds == (110 + 150) / 2 and ana.total_seconds == 150 + 110 + 660 + 60
    assert (ana.working_days, ana.pace) == (2, 3 / 2)  # v1, v2 on the 2nd, v3 on the 3rd
    assert ana.days_left == pytest.approx(1 / 1.5) and ana.days_left_reason == ""
    assert (ana.role, ana.display_name, ana.active) == ("annotator", "ana", True)
    assert (
        ana.last_decision_at == "2026-11-03T10:04:00.000000+00:00" and ana.days_left_text == "0.7"
    )

    bo = by_name["bo"]  # his rows as "bob" count as his
    assert (bo.assigned, bo.complete, bo.remaining, bo.outside_assignment) == (2, 1, 1, 1)
    assert (bo.flagged, bo.videos_timed) == (0, 3)
    assert bo.median_seconds == 300 and bo.total_seconds == 300 + (600 + 40) + (20 + 10 + 50)
    assert (bo.working_days, bo.pace) == (2, 1.0)  # v1 on the 2nd, v3 on the 5th; v2 undone
    assert bo.days_left == 1.0 and bo.display_name == "Bo"

    cy = by_name["cy"]
    assert (cy.role, cy.assigned, cy.complete, cy.videos_timed) == (None, 0, 0, 1)
    assert (cy.median_seconds, cy.total_seconds, cy.pace) == (0.0, 0.0, 0.0)
    assert (cy.days_left, cy.days_left_text) == (None, "nothing assigned")

    dee = by_name["dee"]
    assert (dee.assigned, dee.complete, dee.videos_timed, dee.median_seconds) == (1, 0, 0, None)
    assert (dee.pace, dee.days_left, dee.days_left_reason) == (None, None, "no decision yet")

    assert overview.days_left is None  # dee has work and no estimate
    # The store's own count of complete videos (assigned or not) agrees.
    for a in (ana, bo, cy):
        assert a.complete + a.outside_assignment == campaign.progress(a.annotator).complete
    assert overview.agreement == tuple(agreement(campaign))
    assert [f.factor for f in overview.agreement] == ["a", "b"]


def test_campaign_days_left_is_the_slowest_annotators(campaign: AnnotationStore) -> None:
    campaign.record_assignments([("v4", "dee", False)])
    assert campaign_overview(campaign).days_left == 1.0  # bo's 1.0 after ana's 0.67


def test_pace_counts_the_latest_working_days_only(store: AnnotationStore) -> None:
    """Five videos a day on two early days, then one a day: the pace is the recent one."""
    store.register_annotator("ana")
    videos = [f"w{i:02d}" for i in range(20)]
    store.register_videos(video_info(v) for v in videos)
    per_day = [5, 5] + [1] * PACE_DAYS
    start = datetime(2026, 10, 1, 9, tzinfo=UTC)
    done = iter(videos)
    for day, count in enumerate(per_day):
        for i in range(count):
            video = next(done)
            for factor in ("a", "b"):
                when = start + timedelta(days=day, minutes=i, seconds=10 if factor == "b" else 0)
                store.record_decision(video, factor, "x", annotator="ana", decided_at=when)
    assigned = videos[: sum(per_day) + 3]
    store.record_assignments([(v, "ana", True) for v in assigned])
    (ana,) = campaign_overview(store).annotators
    assert (ana.working_days, ana.pace) == (PACE_DAYS, 1.0)
    assert ana.days_left == 3.0


def test_a_long_break_counts_as_the_cap(store: AnnotationStore) -> None:
    store.record_decision("v1", "a", "x", annotator="ana", decided_at=at(2, "09:00:00"))
    store.record_decision("v2", "a", "x", annotator="ana", decided_at=at(2, "09:09:00"))
    store.record_decision("v3", "a", "x", annotator="ana", decided_at=at(2, "12:00:00"))
    (ana,) = campaign_overview(store).annotators
    assert ana.total_seconds == 9 * 60 + SITTING_GAP.total_seconds()
    (short,) = campaign_overview(store, sitting_gap=timedelta(minutes=5)).annotators
    assert short.total_seconds == 5 * 60 + 5 * 60


def test_without_assignments_completed_videos_count_as_outside(store: AnnotationStore) -> None:
    for factor in ("a", "b"):
        store.record_decision("v1", factor, "y", annotator="ana")
    (ana,) = campaign_overview(store).annotators
    assert (ana.assigned, ana.complete, ana.outside_assignment) == (0, 0, 1)
    assert ana.days_left_reason == "nothing assigned"


def test_csv_reads_back_and_is_safe_in_a_spreadsheet(campaign: AnnotationStore) -> None:
    campaign.register_annotator("=HYPERLINK(1)")
    text = overview_csv(campaign_overview(campaign))
    rows = list(csv.reader(io.StringIO(text)))
    blank = rows.index([])
    annotators, factors = rows[:blank], rows[blank + 1 :]
    assert tuple(annotators[0]) == ANNOTATOR_COLUMNS and tuple(factors[0]) == FACTOR_COLUMNS
    table = {row[0]: dict(zip(ANNOTATOR_COLUMNS, row, strict=True)) for row in annotators[1:]}
    assert list(table) == ["'=hyperlink(1)", "ana", "bo", "cy", "dee"]
    assert table["'=hyperlink(1)"]["name"] == "'=HYPERLINK(1)"
    ana = table["ana"]
    assert (ana["assigned"], ana["complete"], ana["remaining"], ana["flagged"]) == (
        "4",
        "3",
        "1",
        "1",
    )
    assert float(ana["median_minutes_per_video"]) == round(130 / 60, 2)
    assert float(ana["total_hours"]) == round(980 / 3600, 2)
    assert (float(ana["pace_videos_per_day"]), float(ana["days_left"])) == (1.5, 0.7)
    assert table["dee"]["days_left"] == "" and table["dee"]["days_left_note"] == "no decision yet"
    assert table["cy"]["role"] == "unregistered"
    # Text is quoted, numbers are not: a spreadsheet reads the counts as numbers.
    assert '"ana","ana","annotator","yes",4,3,1,0,1,4,' in text
    by_factor = {row[0]: dict(zip(FACTOR_COLUMNS, row, strict=True)) for row in factors[1:]}
    expected = {f.factor: f for f in agreement(campaign)}
    assert list(by_factor) == list(expected)
    for key, row in by_factor.items():
        stat = expected[key]
        assert row["statistic"] == stat.statistic and int(row["videos"]) == stat.videos
        if math.isnan(stat.kappa):
            assert row["kappa"] == "" and row["kappa_note"] == stat.kappa_text
        else:
            assert float(row["kappa"]) == round(stat.kappa, 3) and row["kappa_note"] == ""


def test_negative_kappa_stays_a_number(store: AnnotationStore) -> None:
    """Two annotators who disagree on both videos: κ = -1, a number and no formula."""
    for video, (first, second) in {"v1": ("x", "y"), "v2": ("y", "x")}.items():
        store.record_decision(video, "a", first, annotator="ana")
        store.record_decision(video, "a", second, annotator="bo")
    text = overview_csv(campaign_overview(store))
    assert '\n"a","cohen_kappa",-1.0,"",0.0,"ana, bo",2\n' in text


def test_progress_chart_shows_annotators_with_assigned_videos(campaign: AnnotationStore) -> None:
    chart = progress_chart(campaign_overview(campaign))
    assert chart is not None
    data = chart.to_dict()["datasets"]
    (rows,) = data.values()
    assert [(r["annotator"], r["assigned"], r["complete"]) for r in rows] == [
        ("ana", 4, 3),
        ("Bo", 2, 1),
        ("dee", 1, 0),
    ]
