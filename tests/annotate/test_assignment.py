"""The assignment planner (:func:`vadscene.annotate.assignment.plan_assignment`): every video
to exactly k team members, loads within one, categories in proportion, the same plan for the
same seed, started work never moved, and — when started work constrains it — the most
balanced plan there is, checked against every valid plan of small campaigns.

Every expectation is counted here from the plan itself, never with the planner's helpers."""

from __future__ import annotations

import itertools
import json
import os
import random
import subprocess
import sys
from collections import Counter
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from support.examples import registry_workspace

from vadscene.annotate.assignment import AssignmentError, plan_assignment
from vadscene.annotate.review import agreement
from vadscene.annotate.session import AnnotatorQueue, video_queue
from vadscene.store.database import AnnotationStore
from vadscene.store.workspace import Workspace

CATEGORIES = ("Abuse", "Arson", "Normal", "Road")
PROPERTY = settings(max_examples=150, deadline=None, database=None)

Plan = Mapping[str, tuple[str, ...]]


@st.composite
def campaigns(
    draw: st.DrawFn, *, max_videos: int = 40, max_team: int = 6, categories: int = 4
) -> tuple[dict[str, str], list[str], int]:
    """(video → category, team, overlap)."""
    team = [f"a{i}" for i in range(draw(st.integers(1, max_team)))]
    overlap = draw(st.integers(1, len(team)))
    count = draw(st.integers(0, max_videos))
    videos = {f"v{i:03d}": draw(st.sampled_from(CATEGORIES[:categories])) for i in range(count)}
    return videos, team, overlap


@st.composite
def campaigns_under_way(
    draw: st.DrawFn, *, max_videos: int = 40, max_team: int = 6, categories: int = 4
) -> tuple[dict[str, str], list[str], int, dict[str, set[str]], dict[str, set[str]]]:
    """A campaign with current assignments and started work (each video started by at most
    k of the team, and by some who are not in it)."""
    videos, team, overlap = draw(
        campaigns(max_videos=max_videos, max_team=max_team, categories=categories)
    )
    names = st.sampled_from([*team, "outsider"])
    current = {v: set(draw(st.lists(names, max_size=overlap + 1))) for v in videos}
    started = {}
    for video in videos:
        mine = draw(st.lists(st.sampled_from(team), max_size=overlap, unique=True))
        started[video] = set(mine) | ({"outsider"} if draw(st.booleans()) else set())
    return videos, team, overlap, current, started


def loads(plan: Plan, team: list[str]) -> Counter[str]:
    counted = Counter({name: 0 for name in team})
    for names in plan.values():
        counted.update(names)
    return counted


def category_counts(plan: Plan, videos: Mapping[str, str], team: list[str]) -> dict[str, Counter]:
    counts = {c: Counter({name: 0 for name in team}) for c in set(videos.values())}
    for video, names in plan.items():
        counts[videos[video]].update(names)
    return counts


def spread(counter: Counter[str]) -> int:
    return max(counter.values()) - min(counter.values())


@PROPERTY
@given(campaigns(), st.booleans(), st.integers())
def test_every_video_gets_exactly_k_distinct_team_members(
    campaign: tuple[dict[str, str], list[str], int], stratify: bool, seed: int
) -> None:
    videos, team, k = campaign
    plan = plan_assignment(videos, team, k, stratify=stratify, seed=seed, current={}, started={})
    assert set(plan) == set(videos)
    for names in plan.values():
        assert len(names) == len(set(names)) == k
        assert set(names) <= set(team)


@PROPERTY
@given(campaigns(), st.booleans(), st.integers())
def test_loads_are_within_one(
    campaign: tuple[dict[str, str], list[str], int], stratify: bool, seed: int
) -> None:
    videos, team, k = campaign
    plan = plan_assignment(videos, team, k, stratify=stratify, seed=seed, current={}, started={})
    counted = loads(plan, team)
    assert sum(counted.values()) == k * len(videos)
    assert spread(counted) <= 1


@PROPERTY
@given(campaigns(max_videos=60), st.integers())
def test_stratified_every_annotator_sees_every_category_in_proportion(
    campaign: tuple[dict[str, str], list[str], int], seed: int
) -> None:
    videos, team, k = campaign
    plan = plan_assignment(videos, team, k, stratify=True, seed=seed, current={}, started={})
    for category, counted in category_counts(plan, videos, team).items():
        in_category = sum(1 for c in videos.values() if c == category)
        assert spread(counted) <= 1, category
        # in proportion: k / n of the category's videos each, rounded either way
        for count in counted.values():
            assert abs(count * len(team) - k * in_category) < len(team)
    assert spread(loads(plan, team)) <= 1


def test_without_stratification_a_category_can_land_on_few_annotators() -> None:
    """Stratification is what spreads categories: here it changes the plan."""
    videos = {f"v{i:02d}": ("Abuse" if i < 6 else "Road") for i in range(12)}
    team = ["ana", "bo", "cy"]
    uneven = [
        seed
        for seed in range(40)
        if any(
            spread(c) > 1
            for c in category_counts(
                plan_assignment(videos, team, 1, stratify=False, seed=seed, current={}, started={}),
                videos,
                team,
            ).values()
        )
    ]
    assert uneven


@PROPERTY
@given(campaigns_under_way(), st.booleans(), st.integers(), st.randoms(use_true_random=False))
def test_same_seed_same_plan_whatever_the_order_of_the_inputs(
    campaign: tuple[dict[str, str], list[str], int, dict[str, set[str]], dict[str, set[str]]],
    stratify: bool,
    seed: int,
    shuffler: random.Random,
) -> None:
    videos, team, k, current, started = campaign
    plan = plan_assignment(
        videos, team, k, stratify=stratify, seed=seed, current=current, started=started
    )
    order = list(videos)
    shuffler.shuffle(order)
    reordered_team = team[:]
    shuffler.shuffle(reordered_team)
    again = plan_assignment(
        {v: videos[v] for v in order},
        reordered_team,
        k,
        stratify=stratify,
        seed=seed,
        current={v: sorted(current[v], reverse=True) for v in reversed(order)},
        started={v: list(started[v]) for v in order},
    )
    assert again == plan
    assert list(again) == sorted(videos)


def test_same_seed_same_plan_in_another_process() -> None:
    """Python's string hashing differs per process: a plan must not depend on set order."""
    script = (
        "import json\n"
        "from vadscene.annotate.assignment import plan_assignment\n"
        "videos = {f'v{i:02d}': ['Abuse', 'Road', 'Normal'][i % 3] for i in range(30)}\n"
        "current = {v: {'ana', 'bo'} for v in list(videos)[:10]}\n"
        "started = {v: {'cy'} for v in list(videos)[5:15]}\n"
        "plan = plan_assignment(videos, ['ana', 'bo', 'cy', 'dee'], 2, stratify=True, seed=7,\n"
        "                       current=current, started=started)\n"
        "print(json.dumps(plan))\n"
    )
    plans = []
    for hash_seed in ("1", "2", "3"):
        result = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
        )
        plans.append(json.loads(result.stdout))
    assert plans[0] == plans[1] == plans[2]


def test_another_seed_another_plan() -> None:
    videos = {f"v{i:02d}": "Abuse" for i in range(20)}
    plans = {
        json.dumps(
            plan_assignment(
                videos, ["ana", "bo", "cy"], 1, stratify=False, seed=s, current={}, started={}
            )
        )
        for s in range(5)
    }
    assert len(plans) > 1


@PROPERTY
@given(campaigns_under_way(), st.booleans(), st.integers())
def test_replanning_keeps_every_started_pair_of_the_team(
    campaign: tuple[dict[str, str], list[str], int, dict[str, set[str]], dict[str, set[str]]],
    stratify: bool,
    seed: int,
) -> None:
    videos, team, k, current, started = campaign
    plan = plan_assignment(
        videos, team, k, stratify=stratify, seed=seed, current=current, started=started
    )
    for video, names in plan.items():
        assert started[video] & set(team) <= set(names)
        assert len(names) == len(set(names)) == k  # at most k of the team started it
        assert set(names) <= set(team)  # the outsider's started work is outside the plan


def test_a_video_started_by_more_than_k_keeps_them_all() -> None:
    plan = plan_assignment(
        {"v1": "Abuse", "v2": "Abuse"},
        ["ana", "bo", "cy"],
        2,
        stratify=False,
        seed=0,
        current={},
        started={"v1": {"ana", "bo", "cy"}},
    )
    assert plan["v1"] == ("ana", "bo", "cy")
    assert len(plan["v2"]) == 2


@PROPERTY
@given(campaigns_under_way(), st.booleans(), st.integers(), st.integers())
def test_replanning_an_unchanged_campaign_changes_nothing(
    campaign: tuple[dict[str, str], list[str], int, dict[str, set[str]], dict[str, set[str]]],
    stratify: bool,
    seed: int,
    other_seed: int,
) -> None:
    """A balanced plan, re-planned with some of its work started, whatever the seed, is kept."""
    videos, team, k, _current, started = campaign
    plan = plan_assignment(videos, team, k, stratify=stratify, seed=seed, current={}, started={})
    started_in_plan = {v: started[v] & set(plan[v]) for v in videos}
    again = plan_assignment(
        videos,
        team,
        k,
        stratify=stratify,
        seed=other_seed,
        current={v: set(names) for v, names in plan.items()},
        started=started_in_plan,
    )
    assert again == plan


def test_a_new_annotator_takes_over_unstarted_work_only() -> None:
    videos = {f"v{i:02d}": ("Abuse" if i % 2 else "Road") for i in range(30)}
    first = plan_assignment(videos, ["ana", "bo"], 1, stratify=True, seed=3, current={}, started={})
    started = {v: set(names) for v, names in list(first.items())[:10]}
    second = plan_assignment(
        videos,
        ["ana", "bo", "cy"],
        1,
        stratify=True,
        seed=3,
        current={v: set(names) for v, names in first.items()},
        started=started,
    )
    assert loads(second, ["ana", "bo", "cy"]) == Counter({"ana": 10, "bo": 10, "cy": 10})
    moved = [v for v in videos if second[v] != first[v]]
    assert len(moved) == 10  # cy's ten, each taken from unstarted work
    assert not set(moved) & set(started)


# --- the most balanced plan when kept work constrains it: every valid plan, counted ---------


def _valid_plans(
    videos: Mapping[str, str], team: list[str], k: int, started: Mapping[str, set[str]]
) -> list[dict[str, tuple[str, ...]]]:
    per_video = []
    for video in sorted(videos):
        kept = started[video] & set(team)
        free = [a for a in team if a not in kept]
        need = max(k, len(kept)) - len(kept)
        per_video.append(
            [tuple(sorted(kept | set(extra))) for extra in itertools.combinations(free, need)]
        )
    return [
        dict(zip(sorted(videos), choice, strict=True)) for choice in itertools.product(*per_video)
    ]


def _square_sums(plan: Plan, videos: Mapping[str, str], team: list[str], stratify: bool) -> tuple:
    per_category = (
        sum(
            c**2
            for counted in category_counts(plan, videos, team).values()
            for c in counted.values()
        )
        if stratify
        else 0
    )
    return per_category, sum(c**2 for c in loads(plan, team).values())


def _kept_current(plan: Plan, current: Mapping[str, set[str]]) -> int:
    return sum(len(set(names) & current.get(v, set())) for v, names in plan.items())


@settings(PROPERTY, max_examples=200, suppress_health_check=[HealthCheck.filter_too_much])
@given(campaigns_under_way(max_videos=5, max_team=4, categories=2), st.booleans(), st.integers())
def test_with_started_work_the_plan_is_the_most_balanced_valid_plan(
    campaign: tuple[dict[str, str], list[str], int, dict[str, set[str]], dict[str, set[str]]],
    stratify: bool,
    seed: int,
) -> None:
    """The module's three criteria against every valid plan: (1) with stratify, the smallest
    sum of squared per-category counts; (2) then the smallest sum of squared loads — which
    is also the smallest largest load, then second largest, …; (3) then the most current
    assignments kept."""
    videos, team, k, current, started = campaign
    everything = _valid_plans(videos, team, k, started)
    assume(len(everything) <= 4000)
    plan = plan_assignment(
        videos, team, k, stratify=stratify, seed=seed, current=current, started=started
    )
    assert plan in everything
    best = min(_square_sums(p, videos, team, stratify) for p in everything)
    assert _square_sums(plan, videos, team, stratify) == best
    meeting_1 = [p for p in everything if _square_sums(p, videos, team, stratify)[0] == best[0]]
    descending = sorted(loads(plan, team).values(), reverse=True)
    assert descending == min(sorted(loads(p, team).values(), reverse=True) for p in meeting_1)
    balanced = [p for p in everything if _square_sums(p, videos, team, stratify) == best]
    assert _kept_current(plan, current) == max(_kept_current(p, current) for p in balanced)


def test_balanced_with_kept_work_by_example() -> None:
    """Ana started four videos; four more are left for a team of three with k = 1: even
    shares (8 / 3) are out of reach, so Ana gets nothing new and Bo and Cy two each."""
    videos = {f"v{i}": "Abuse" for i in range(8)}
    started = {f"v{i}": {"ana"} for i in range(4)}
    plan = plan_assignment(
        videos, ["ana", "bo", "cy"], 1, stratify=False, seed=1, current={}, started=started
    )
    assert loads(plan, ["ana", "bo", "cy"]) == Counter({"ana": 4, "bo": 2, "cy": 2})


# --- refusals -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("team", "overlap", "message"),
    [
        ([], 1, "an assignment needs at least one annotator (none given)"),
        (["ana", "bo", "ana"], 1, "annotator 'ana' is listed twice; list each annotator once"),
        (["ana"], 0, "the overlap must be at least 1 annotator per video (got 0)"),
        (
            ["ana", "bo"],
            3,
            "an overlap of 3 annotators per video needs at least 3 annotators; 2 given (ana, bo)",
        ),
    ],
)
def test_refusals_say_what_was_expected(team: list[str], overlap: int, message: str) -> None:
    with pytest.raises(AssignmentError) as refused:
        plan_assignment(
            {"v1": "Abuse"}, team, overlap, stratify=False, seed=0, current={}, started={}
        )
    assert str(refused.value) == message


# --- the annotator's queue: assigned videos first, categories interleaved -------------------

QUEUE_VIDEOS = (
    "Abuse001_x264",
    "Abuse002_x264",
    "Abuse003_x264",
    "Arson001_x264",
    "Arson002_x264",
    "Normal_Videos_001_x264",
    "RoadAccidents001_x264",
)
ANAS = (
    "Abuse001_x264",
    "Abuse002_x264",
    "Abuse003_x264",
    "Arson002_x264",
    "Normal_Videos_001_x264",
)
ANAS_ORDER = [
    "Abuse001_x264",  # one of each category in turn: Abuse, Arson, Normal
    "Arson002_x264",
    "Normal_Videos_001_x264",
    "Abuse002_x264",  # then what is left of each
    "Abuse003_x264",
    "Arson001_x264",  # then the others, by id
    "RoadAccidents001_x264",
]


@pytest.fixture
def assigned_store(tmp_path: Path) -> Iterator[AnnotationStore]:
    root = registry_workspace(tmp_path, dict.fromkeys(QUEUE_VIDEOS, 30))
    with Workspace.open(root) as workspace:
        workspace.store.register_annotator("Ana")
        workspace.store.record_assignments([(video, "ana", True) for video in ANAS])
        yield workspace.store


def _order(queue: list[tuple[str, str]]) -> list[str]:
    return [video for video, _status in queue]


def _complete(store: AnnotationStore, video: str, annotator: str) -> None:
    for factor in store.catalogue.factors:
        if factor.source == "manual":
            store.record_decision(video, factor.key, factor.values[0], annotator=annotator)


def test_the_queue_holds_the_assigned_videos_first_interleaving_categories(
    assigned_store: AnnotationStore,
) -> None:
    store = assigned_store
    assert _order(AnnotatorQueue.build(store, "ana").queue) == ANAS_ORDER
    assert _order(video_queue(store, "ANA")) == ANAS_ORDER  # the name resolves to the id
    assert _order(AnnotatorQueue.build(store, "bo").queue) == list(QUEUE_VIDEOS)  # unassigned


def test_next_incomplete_follows_the_working_order(assigned_store: AnnotationStore) -> None:
    store = assigned_store
    _complete(store, "Abuse001_x264", "ana")
    held = AnnotatorQueue.build(store, "ana")
    assert held.next_incomplete() == "Arson002_x264"  # by id it would be Abuse002
    assert held.next_incomplete("Abuse003_x264") == "Arson001_x264"  # on into the others
    assert held.next_incomplete("RoadAccidents001_x264") == "Arson002_x264"  # wraps around
    for video in ANAS[1:]:
        _complete(store, video, "ana")
    held = held.refresh(store, store.video_ids())
    assert held.next_incomplete() == "Arson001_x264"  # assigned work done: the rest in reach


def test_a_refreshed_queue_follows_a_re_assignment(assigned_store: AnnotationStore) -> None:
    store = assigned_store
    held = AnnotatorQueue.build(store, "ana")
    store.record_assignments(
        [("Abuse003_x264", "ana", False), ("RoadAccidents001_x264", "ana", True)]
    )
    held = held.refresh(store, store.video_ids())
    expected = [
        "Abuse001_x264",
        "Arson002_x264",
        "Normal_Videos_001_x264",
        "RoadAccidents001_x264",
        "Abuse002_x264",
        "Abuse003_x264",
        "Arson001_x264",
    ]
    assert _order(held.queue) == expected
    _complete(store, "Normal_Videos_001_x264", "ana")
    held = held.refresh(store, store.video_ids())
    assert _order(held.queue) == expected
    assert dict(held.queue)["Normal_Videos_001_x264"] == "complete"
    assert held.queue == AnnotatorQueue.build(store, "ana").queue == video_queue(store, "ana")


def test_the_queue_follows_a_rename(assigned_store: AnnotationStore) -> None:
    store = assigned_store
    store.rename_annotator("ana", "Ana María")
    assert _order(AnnotatorQueue.build(store, "ana maría").queue) == ANAS_ORDER


# --- κ on the planned overlap ---------------------------------------------------------------


def test_agreement_restricted_to_the_planned_overlap(assigned_store: AnnotationStore) -> None:
    """Ana and Bo both rate four videos; two of them are assigned to both. Restricted, their
    pair counts those two only; a third annotator with nothing assigned keeps every rating."""
    store = assigned_store
    store.register_annotator("Bo")
    store.record_assignments(
        [(v, "bo", True) for v in ("Abuse001_x264", "Arson002_x264", "Arson001_x264")]
    )
    # on the planned overlap (Abuse001, Arson002) they agree; off it they disagree
    ratings = {
        "Abuse001_x264": ("grayscale", "grayscale"),
        "Arson002_x264": ("color", "color"),
        "Abuse002_x264": ("color", "grayscale"),
        "Arson001_x264": ("grayscale", "color"),
    }
    for video, (ana, bo) in ratings.items():
        store.record_decision(video, "color", ana, annotator="ana")
        store.record_decision(video, "color", bo, annotator="bo")
        store.record_decision(video, "color", "color", annotator="cy")

    def pair(restrict_to: Mapping[str, Collection[str]] | None, first: str, second: str):
        color = next(a for a in agreement(store, restrict_to=restrict_to) if a.factor == "color")
        return next(p for p in color.pairs if (p.first, p.second) == (first, second))

    everything = pair(None, "ana", "bo")
    assert (everything.videos, everything.observed_agreement) == (4, 0.5)
    planned = pair(store.assignments(), "ana", "bo")
    assert (planned.videos, planned.observed_agreement, planned.kappa) == (2, 1.0, 1.0)
    # cy has nothing assigned, so counts wherever the other of the pair is planned and rated:
    # ana on Abuse001, Arson002, Abuse002 (Arson001 is not hers); bo on his three
    assert pair(store.assignments(), "ana", "cy").videos == 3
    assert pair(store.assignments(), "bo", "cy").videos == 3
    assert pair({}, "ana", "bo").videos == 4  # no assignments: no restriction
