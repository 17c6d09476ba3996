"""The Review page's data: the videos × factors table, its filters, and agreement statistics."""

from __future__ import annotations

import math
import random
from collections import Counter
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from sklearn.metrics import cohen_kappa_score

from vadscene.annotate.consensus import adjudicate, disputes
from vadscene.annotate.review import (
    FILTERS,
    HEATMAP_CELLS_WIDTH,
    agreement,
    annotate_url,
    auto_agreement,
    cohen_kappa,
    filter_review,
    fleiss_kappa,
    kappa_heatmap,
    review_table,
    vote_count,
)
from vadscene.core.catalogue import load_catalogue
from vadscene.core.errors import CatalogueError, StoreError
from vadscene.release.releases import build_release
from vadscene.store.database import MARK_KINDS
from vadscene.store.workspace import Workspace

ABUSE, ARSON, NORMAL, ROAD = (
    "Abuse001_x264",
    "Arson002_x264",
    "Normal_Videos_003_x264",
    "RoadAccidents004_x264",
)
VIDEOS = (ABUSE, ARSON, NORMAL, ROAD)


@pytest.fixture
def reviewed(small_workspace: Workspace) -> Workspace:
    """Every manual factor decided by ana and every auto pole set, then one case per filter.

    ABUSE raises no flag; ARSON has annotators who disagree; NORMAL is ambiguous and flagged;
    ROAD is incomplete and has an override that contradicts its auto pole.
    """
    store = small_workspace.store
    for video in VIDEOS:
        for factor in small_workspace.catalogue.factors:
            if factor.source == "manual":
                store.record_decision(video, factor.key, factor.values[0], annotator="ana")
            else:
                store.record_decision(
                    video, factor.key, factor.values[0], annotator="auto", source="auto"
                )
    store.record_decision(ABUSE, "resolution", "high", annotator="ben")  # agrees with auto
    store.set_mark(ABUSE, "flag", True, annotator="erin")
    store.set_mark(ABUSE, "flag", False, annotator="erin")  # taken back: neither flag nor name
    store.record_decision(ARSON, "color", "grayscale", annotator="ben")  # ana: color
    store.record_decision(ARSON, "crowd", "many", annotator="ben")  # ana: few …
    store.record_decision(
        ARSON, "crowd", "many", annotator="carla", source="consensus"
    )  # … settled
    store.record_decision(NORMAL, "setting", "ambiguous", annotator="ana")
    store.set_mark(NORMAL, "flag", True, annotator="dora")
    store.record_decision(ROAD, "road", None, annotator="ana")  # cleared: undecided again
    store.record_decision(ROAD, "resolution", "low", annotator="ana")  # auto pole: high
    return small_workspace


def _cell(assignment, factor: str) -> str:
    """What the review grid shows for a release's assignment: its value, or for an
    unadjudicated disagreement each human vote's value and count, "value n", the most voted
    first (ties in catalogue order, "ambiguous" last), joined by " · "."""
    if assignment.resolution != "disagreement":
        return assignment.value or ""
    counts = Counter(
        d.value
        for d in assignment.decisions
        if d.source in ("manual", "override") and d.value is not None
    )
    order = [*load_catalogue().factor(factor).values, "ambiguous"]
    ranked = sorted(counts, key=lambda value: (-counts[value], order.index(value)))
    return " · ".join(f"{value} {counts[value]}" for value in ranked)


def _release_view(workspace: Workspace) -> dict[str, dict[str, str]]:
    """video → factor → grid cell (see :func:`_cell`; "" for none) and 'annotators', from a
    consensus release."""
    view = {}
    for record in build_release(workspace).videos:
        row = {
            key: _cell(record.factors[key], key) if key in record.factors else ""
            for key in workspace.catalogue.keys
        }
        names = {m.annotator for m in record.marks if m.flagged or m.skipped or m.note} | {
            d.annotator
            for assignment in record.factors.values()
            for d in assignment.decisions
            if d.source != "auto"
        }
        row["annotators"] = ", ".join(sorted(names))
        view[record.video_id] = row
    return view


# --- review table ---------------------------------------------------------------------------


def test_table_columns_and_values_follow_the_release(reviewed: Workspace) -> None:
    table = review_table(reviewed)
    keys = list(reviewed.catalogue.keys)
    assert list(table.columns) == ["video", "category", *keys, *FILTERS, "annotators"]
    assert list(table["video"]) == sorted(VIDEOS)
    assert list(table["category"]) == ["Abuse", "Arson", "Normal", "RoadAccidents"]
    assert all(table[key].dtype == bool for key in FILTERS)
    expected = _release_view(reviewed)
    for row in table.to_dict("records"):
        assert {k: row[k] for k in [*keys, "annotators"]} == expected[row["video"]]
    by_video = table.set_index("video")
    assert by_video.loc[ARSON, "color"] == "color 1 · grayscale 1"  # not adjudicated
    assert by_video.loc[ARSON, "crowd"] == "many"  # consensus
    assert by_video.loc[ROAD, "road"] == ""  # cleared
    assert by_video.loc[ROAD, "resolution"] == "low"  # override
    assert by_video.loc[NORMAL, "annotators"] == "ana, dora"  # dora only flagged it


def test_each_filter_flags_its_videos(reviewed: Workspace) -> None:
    by_video = review_table(reviewed).set_index("video")
    flagged = {key: sorted(by_video.index[by_video[key]]) for key in FILTERS}
    assert flagged == {
        "incomplete": [ROAD],
        "ambiguous": [NORMAL],
        "flagged": [NORMAL],
        "manual_vs_auto": [ROAD],
        "disagree": [ARSON],
    }


def test_an_adjudicated_disagreement_still_counts(reviewed: Workspace) -> None:
    store = reviewed.store
    store.record_decision(ARSON, "color", "color", annotator="carla", source="consensus")
    by_video = review_table(reviewed).set_index("video")
    assert by_video.loc[ARSON, "color"] == "color"
    assert by_video.loc[ARSON, "disagree"]


def test_filters_select_rows_matching_any(reviewed: Workspace) -> None:
    table = review_table(reviewed)

    def videos(selected: list[str]) -> list[str]:
        return list(filter_review(table, selected)["video"])

    assert videos([]) == sorted(VIDEOS)
    assert videos(["flagged"]) == [NORMAL]
    assert videos(["disagree", "flagged"]) == [ARSON, NORMAL]
    assert videos(["incomplete", "manual_vs_auto"]) == [ROAD]
    assert videos(list(FILTERS)) == [ARSON, NORMAL, ROAD]
    with pytest.raises(ValueError, match="unknown review filters \\['starred'\\]"):
        filter_review(table, ["starred"])


def test_values_match_the_release_under_random_histories(small_workspace: Workspace) -> None:
    """Random decisions — several consensus decisions at tied and time-zone-shifted times
    included — resolve as in a release (the table resolves each decision pattern once)."""
    store = small_workspace.store
    rng = random.Random(7)
    people = ("ana", "ben", "carla")
    offsets = ("+00:00", "+02:00", "-05:00")
    for _ in range(3):
        for video in VIDEOS:
            for factor in small_workspace.catalogue.factors:
                choices = [*factor.values, "ambiguous", None]
                if factor.source == "auto":
                    store.record_decision(
                        video,
                        factor.key,
                        rng.choice(factor.values),
                        annotator="auto",
                        source="auto",
                    )
                for who in rng.sample(people, rng.randint(0, 3)):
                    source = rng.choice(("manual", "manual", "consensus"))
                    at = f"2026-01-0{rng.randint(1, 2)}T{rng.randint(10, 12)}:00:00"
                    store.record_decision(
                        video,
                        factor.key,
                        rng.choice(choices),
                        annotator=who,
                        source=source,
                        decided_at=at + rng.choice(offsets),
                    )
        table = review_table(small_workspace)
        expected = _release_view(small_workspace)
        for row in table.to_dict("records"):
            assert {k: row[k] for k in expected[row["video"]]} == expected[row["video"]]


TEN = ("ana", "ben", "carla", "dora", "erin", "fay", "gus", "hana", "ivo", "jun")


def test_a_disagreement_of_ten_shows_a_vote_count(small_workspace: Workspace) -> None:
    """The defect: with seven or more annotators a cell listed every "name: value" and the
    grid cut it off; a count of each value, the most voted first, stays short."""
    store = small_workspace.store
    for who, value in zip(TEN, ["grayscale"] * 4 + ["color"] * 3, strict=False):
        store.record_decision(ARSON, "color", value, annotator=who)
    for who, value in zip(TEN, ["many", "few", "ambiguous", "few", "many"], strict=False):
        store.record_decision(ARSON, "crowd", value, annotator=who)
    for who in TEN[:3]:
        store.record_decision(ABUSE, "color", "color", annotator=who)
    by_video = review_table(small_workspace).set_index("video")
    assert by_video.loc[ARSON, "color"] == "grayscale 4 · color 3"
    assert by_video.loc[ARSON, "crowd"] == "few 2 · many 2 · ambiguous 1"  # ties: catalogue order
    assert by_video.loc[ABUSE, "color"] == "color"  # they agree: the value
    assert vote_count(["a", "b", "b"], ["a", "b"]) == "b 2 · a 1"
    assert vote_count([], ["a"]) == ""


def _reference_table(workspace: Workspace) -> pd.DataFrame:
    """The review table built slowly, video by video, from a consensus release."""
    manual = [f.key for f in workspace.catalogue.factors if f.source == "manual"]
    cells = _release_view(workspace)
    rows = []
    for record in build_release(workspace).videos:
        assignments = record.factors.values()

        def human(assignment) -> set[str]:
            return {d.value for d in assignment.decisions if d.source in ("manual", "override")}

        def differs(assignment) -> bool:
            poles = {d.value for d in assignment.decisions if d.source == "auto"}
            return any(d.value not in poles for d in assignment.decisions if d.source != "auto")

        rows.append(
            {
                "video": record.video_id,
                "category": record.category,
                **{key: cells[record.video_id][key] for key in workspace.catalogue.keys},
                "incomplete": any(key not in record.factors for key in manual),
                "ambiguous": any(a.value == "ambiguous" for a in assignments),
                "flagged": any(m.flagged for m in record.marks),
                "manual_vs_auto": any(
                    differs(a) for a in assignments if any(d.source == "auto" for d in a.decisions)
                ),
                "disagree": any(len(human(a)) > 1 for a in assignments),
                "annotators": cells[record.video_id]["annotators"],
            }
        )
    return pd.DataFrame(rows)


@pytest.mark.parametrize("seed", range(3))
def test_the_table_equals_a_reference_built_from_the_release(
    small_workspace: Workspace, seed: int
) -> None:
    """Ten annotators' random histories — overrides, consensus at tied and shifted times,
    cleared values, flags and notes — give, cell for cell and flag for flag, the table a slow
    per-video reading of the release gives."""
    store = small_workspace.store
    rng = random.Random(seed)
    for video in VIDEOS:
        for factor in small_workspace.catalogue.factors:
            if factor.source == "auto" and rng.random() < 0.8:
                store.record_decision(
                    video, factor.key, rng.choice(factor.values), annotator="auto", source="auto"
                )
            for who in rng.sample(TEN, rng.randint(0, len(TEN))):
                store.record_decision(
                    video,
                    factor.key,
                    rng.choice([*factor.values, "ambiguous", None]),
                    annotator=who,
                    source=rng.choice(("manual",) * 5 + ("consensus",)),
                    decided_at=f"2026-01-0{rng.randint(1, 2)}T1{rng.randint(0, 2)}:00:00"
                    + rng.choice(("+00:00", "+02:00", "-05:00")),
                )
        for who in rng.sample(TEN, 3):
            store.set_mark(video, rng.choice(MARK_KINDS[:2]), rng.random() < 0.7, annotator=who)
        if rng.random() < 0.5:
            store.set_mark(video, "note", "look again", annotator=rng.choice(TEN))
    table = review_table(small_workspace)
    pd.testing.assert_frame_equal(
        table.astype(object), _reference_table(small_workspace).astype(object)
    )
    assert {k for k, flags in table.set_index("video")["disagree"].items() if flags} == {
        video for video, _ in disputes(store.current_decisions())
    }


def test_the_latest_consensus_is_found_across_time_zones(small_workspace: Workspace) -> None:
    store = small_workspace.store
    store.record_decision(ARSON, "color", "color", annotator="ana")
    store.record_decision(ARSON, "color", "grayscale", annotator="ben")
    # 09:00 UTC, though its text sorts after the 10:00 UTC one below.
    store.record_decision(
        ARSON,
        "color",
        "color",
        annotator="carla",
        source="consensus",
        decided_at="2026-01-01T11:00:00+02:00",
    )
    store.record_decision(
        ARSON,
        "color",
        "grayscale",
        annotator="dora",
        source="consensus",
        decided_at="2026-01-01T10:00:00+00:00",
    )
    by_video = review_table(small_workspace).set_index("video")
    assert by_video.loc[ARSON, "color"] == _release_view(small_workspace)[ARSON]["color"]
    assert by_video.loc[ARSON, "color"] == "grayscale"


def test_an_empty_workspace_gives_an_empty_table(tmp_path: Path) -> None:
    with Workspace.create(tmp_path / "ws", video_root=None, dataset="empty") as workspace:
        table = review_table(workspace)
        assert table.empty
        assert list(table.columns) == [
            "video",
            "category",
            *workspace.catalogue.keys,
            *FILTERS,
            "annotators",
        ]
        assert all(a.statistic == "none" for a in agreement(workspace.store))


def test_a_factor_key_that_clashes_with_a_review_column_is_refused(tmp_path: Path) -> None:
    data = load_catalogue().model_dump(mode="json")
    data["factors"][0]["key"] = "flagged"
    path = tmp_path / "clash.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with (
        Workspace.create(tmp_path / "ws", video_root=None, catalogue_path=path) as workspace,
        pytest.raises(CatalogueError, match=r"\['flagged'\] clash with review columns"),
    ):
        review_table(workspace)


# --- Cohen's and Fleiss' kappa --------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:A single label was found")
@pytest.mark.parametrize("seed", range(12))
def test_cohen_kappa_equals_sklearn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    labels = ["color", "grayscale", "ambiguous"]
    n = int(rng.integers(1, 40))
    # Skewed label frequencies make one-label raters (κ undefined or 0) come up too.
    a = rng.choice(labels, size=n, p=rng.dirichlet([0.3] * 3)).tolist()
    b = rng.choice(labels, size=n, p=rng.dirichlet([0.3] * 3)).tolist()
    expected = cohen_kappa_score(a, b)
    if math.isnan(expected):
        assert math.isnan(cohen_kappa(a, b))
    else:
        assert cohen_kappa(a, b) == pytest.approx(expected, abs=1e-12)


@pytest.mark.filterwarnings("ignore:A single label was found")
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.UndefinedMetricWarning")
def test_cohen_kappa_edge_cases() -> None:
    same = ["ambiguous"] * 5
    assert math.isnan(cohen_kappa(same, same))  # p_e = 1: undefined …
    assert math.isnan(cohen_kappa_score(same, same))  # … as in sklearn
    assert cohen_kappa(["color"] * 3, ["grayscale"] * 3) == 0.0
    assert cohen_kappa_score(["color"] * 3, ["grayscale"] * 3) == 0.0
    assert cohen_kappa(["color", "grayscale"], ["color", "grayscale"]) == 1.0
    assert math.isnan(cohen_kappa([], []))  # sklearn raises; nothing co-rated yet is normal
    with pytest.raises(ValueError, match="different numbers of subjects"):
        cohen_kappa(["color"], [])


WIKIPEDIA_FLEISS = np.array(
    # https://en.wikipedia.org/wiki/Fleiss%27_kappa#Worked_example: 10 subjects, 14 raters.
    [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
)


def test_fleiss_kappa_worked_example() -> None:
    # P̄ = 0.378, P̄_e = 0.213 → κ = 0.210 in the worked example.
    assert fleiss_kappa(WIKIPEDIA_FLEISS) == pytest.approx(0.210, abs=5e-4)


@pytest.mark.parametrize("seed", range(5))
def test_fleiss_kappa_of_two_raters_is_scotts_pi(seed: int) -> None:
    """With two raters Fleiss' κ reduces to Scott's π (Fleiss 1971), computed here directly."""
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, 3, size=(2, 30))
    pooled = np.bincount(np.concatenate([a, b]), minlength=3) / 60
    chance = float((pooled**2).sum())
    scott_pi = (float((a == b).mean()) - chance) / (1 - chance)
    counts = np.stack([np.bincount([x, y], minlength=3) for x, y in zip(a, b, strict=True)])
    assert fleiss_kappa(counts) == pytest.approx(scott_pi, abs=1e-12)


def test_fleiss_kappa_edge_cases() -> None:
    assert fleiss_kappa(np.array([[3, 0], [0, 3]])) == 1.0
    assert math.isnan(fleiss_kappa(np.array([[3, 0], [3, 0]])))  # one category: undefined
    assert math.isnan(fleiss_kappa(np.zeros((0, 2), dtype=int)))
    with pytest.raises(ValueError, match="same number"):
        fleiss_kappa(np.array([[3, 0], [1, 1]]))
    with pytest.raises(ValueError, match="same number"):
        fleiss_kappa(np.array([[1, 0], [0, 1]]))  # one rater
    with pytest.raises(ValueError, match="non-negative integers"):
        fleiss_kappa(np.array([[1.5, 1.5]]))
    with pytest.raises(ValueError, match="subjects × categories"):
        fleiss_kappa(np.array([3, 0]))


# --- agreement from a store -----------------------------------------------------------------


def _by_factor(workspace: Workspace) -> dict:
    results = agreement(workspace.store)
    manual = [f.key for f in workspace.catalogue.factors if f.source == "manual"]
    assert [r.factor for r in results] == manual
    return {r.factor: r for r in results}


def test_agreement_of_two_annotators_is_cohens_kappa(small_workspace: Workspace) -> None:
    store = small_workspace.store
    ana = ["color", "grayscale", "ambiguous", "color"]
    ben = ["color", "color", "ambiguous", "grayscale"]
    for video, a, b in zip(VIDEOS, ana, ben, strict=True):
        store.record_decision(video, "color", a, annotator="ana")
        store.record_decision(video, "color", b, annotator="ben")
    store.record_decision(ABUSE, "color", "color", annotator="carla", source="consensus")
    store.record_decision(ABUSE, "crowd", "few", annotator="ana")
    store.record_decision(ARSON, "crowd", "few", annotator="ana")
    for video, value in ((ARSON, "many"), (NORMAL, "few"), (ROAD, "few")):
        store.record_decision(video, "crowd", value, annotator="ben")
    store.record_decision(ABUSE, "setting", "indoor", annotator="ana")
    store.record_decision(ABUSE, "setting", "indoor", annotator="ben")
    store.record_decision(ABUSE, "setting", None, annotator="ben")  # cleared: ana is alone
    store.record_decision(ABUSE, "resolution", "low", annotator="ana")  # auto factor: not rated
    for who in ("ana", "ben"):
        store.record_decision(ABUSE, "elevation", "elevated", annotator=who)  # one category
    store.record_decision(ABUSE, "field_of_view", "close", annotator="ana")  # no shared video
    store.record_decision(ARSON, "field_of_view", "close", annotator="ben")

    results = _by_factor(small_workspace)
    color = results["color"]
    assert (color.statistic, color.annotators, color.videos) == (
        "cohen_kappa",
        ("ana", "ben"),
        4,
    )
    assert color.kappa == pytest.approx(cohen_kappa_score(ana, ben), abs=1e-12)
    assert color.observed_agreement == pytest.approx(0.5)
    assert color.categories == ("color", "grayscale", "ambiguous")
    crowd = results["crowd"]  # only ARSON is rated by both
    assert (crowd.statistic, crowd.videos, crowd.categories) == ("cohen_kappa", 1, ("few", "many"))
    assert crowd.kappa == cohen_kappa_score(["few"], ["many"]) == 0.0
    assert crowd.observed_agreement == 0.0
    setting = results["setting"]
    assert (setting.statistic, setting.annotators, setting.videos) == ("none", ("ana",), 1)
    assert math.isnan(setting.kappa) and math.isnan(setting.observed_agreement)
    road = results["road"]
    assert (road.statistic, road.annotators, road.videos, road.categories) == ("none", (), 0, ())
    elevation = results["elevation"]  # p_e = 1: κ = 0/0
    assert (elevation.statistic, elevation.videos) == ("cohen_kappa", 1)
    assert math.isnan(elevation.kappa) and elevation.observed_agreement == 1.0
    # What the Review page shows instead of a bare NaN:
    assert color.kappa_text == f"{cohen_kappa_score(ana, ben):.3f}"
    assert setting.kappa_text == road.kappa_text == "— (needs two annotators)"
    assert elevation.kappa_text == "undefined (every rating in one category)"
    assert results["field_of_view"].kappa_text == "— (no video rated by all of them)"


def test_agreement_of_three_annotators_is_fleiss_kappa(small_workspace: Workspace) -> None:
    store = small_workspace.store
    ratings = {
        ABUSE: {"ana": "outdoor", "ben": "outdoor", "carla": "outdoor"},
        ARSON: {"ana": "indoor", "ben": "indoor", "carla": "outdoor"},
        NORMAL: {"ana": "indoor", "ben": "indoor", "carla": "indoor"},
        ROAD: {"ana": "ambiguous", "ben": "indoor", "carla": "outdoor"},
    }
    for video, by_annotator in ratings.items():
        for who, value in by_annotator.items():
            store.record_decision(video, "setting", value, annotator=who)
    store.record_decision(ROAD, "setting", None, annotator="carla")  # ROAD: not rated by all
    store.record_decision(ROAD, "setting", "indoor", annotator="dora", source="consensus")

    setting = _by_factor(small_workspace)["setting"]
    assert (setting.statistic, setting.annotators, setting.videos) == (
        "fleiss_kappa",
        ("ana", "ben", "carla"),
        3,
    )
    assert setting.categories == ("outdoor", "indoor")  # ROAD's "ambiguous" is left out
    # By hand over ABUSE, ARSON, NORMAL — counts (outdoor, indoor): (3,0), (1,2), (0,3):
    # P_i = 1, 1/3, 1 → P̄ = 7/9; p = (4/9, 5/9) → P̄_e = 41/81; κ = (63 − 41)/(81 − 41) = 11/20.
    assert setting.observed_agreement == pytest.approx(float(Fraction(7, 9)))
    assert setting.kappa == pytest.approx(float(Fraction(11, 20)))


# --- disputes: the one "annotators disagree" rule -------------------------------------------


def test_disputes_hold_every_human_vote(reviewed: Workspace) -> None:
    store = reviewed.store
    store.record_decision(ARSON, "crowd", "few", annotator="dora")  # agrees with ana
    found = disputes(store.current_decisions())
    assert sorted(found) == [(ARSON, "color"), (ARSON, "crowd")]
    crowd = found[(ARSON, "crowd")]
    # carla's consensus is no vote; the dispute stands after it.
    assert crowd.votes == (("ana", "few"), ("ben", "many"), ("dora", "few"))
    assert crowd.text == "ana: few · ben: many · dora: few"
    assert crowd.voters("few") == ("ana", "dora")
    assert crowd.voters("ambiguous") == ()
    # The same rule on one video's decisions, as the page reads them.
    assert disputes(store.current_decisions(video_id=ARSON)) == found
    assert disputes(store.current_decisions(video_id=ABUSE)) == {}  # ben agrees with auto


def test_a_cleared_vote_ends_a_dispute(reviewed: Workspace) -> None:
    reviewed.store.record_decision(ARSON, "color", None, annotator="ben")
    assert list(disputes(reviewed.store.current_decisions())) == [(ARSON, "crowd")]
    by_video = review_table(reviewed).set_index("video")
    assert by_video.loc[ARSON, "color"] == "color"  # ana's alone
    assert by_video.loc[ARSON, "disagree"]  # crowd is still disputed
    reviewed.store.record_decision(ARSON, "crowd", None, annotator="ben")
    assert not review_table(reviewed).set_index("video").loc[ARSON, "disagree"]


# --- adjudication: the one writer of consensus decisions ---------------------------------------


def test_adjudicating_records_a_consensus_that_settles_the_value(reviewed: Workspace) -> None:
    store = reviewed.store
    decision = adjudicate(store, ARSON, "color", "grayscale", annotator="carla")
    assert (decision.video_id, decision.factor, decision.value) == (ARSON, "color", "grayscale")
    assert (decision.annotator, decision.source) == ("carla", "consensus")
    assert store.decision_log()[-1] == decision  # committed before adjudicate returned
    by_video = review_table(reviewed).set_index("video")
    assert by_video.loc[ARSON, "color"] == "grayscale"
    assert by_video.loc[ARSON, "disagree"]  # settled, and still findable
    (record,) = [v for v in build_release(reviewed).videos if v.video_id == ARSON]
    assert (record.factors["color"].value, record.factors["color"].resolution) == (
        "grayscale",
        "consensus",
    )


def test_adjudicating_ambiguous_is_a_consensus_too(reviewed: Workspace) -> None:
    adjudicate(reviewed.store, ARSON, "color", "ambiguous", annotator="carla")
    assert review_table(reviewed).set_index("video").loc[ARSON, "color"] == "ambiguous"


@pytest.mark.parametrize(
    ("video", "factor", "value", "annotator", "message"),
    [
        (
            ARSON,
            "colour",
            "color",
            "carla",
            f"video '{ARSON}': unknown factor 'colour' (catalogue 'ucf-crime' has: ",
        ),
        (
            ARSON,
            "color",
            "sepia",
            "carla",
            f"video '{ARSON}', factor 'color': value 'sepia' is not allowed "
            "(expected one of: color, grayscale, ambiguous)",
        ),
        (ARSON, "color", "color", " ", "an annotator name is required (got an empty name)"),
        ("Nowhere999_x264", "color", "color", "carla", "unknown video 'Nowhere999_x264' ("),
    ],
)
def test_adjudicating_refuses_what_the_catalogue_does_not_allow_and_writes_nothing(
    reviewed: Workspace, video: str, factor: str, value: str, annotator: str, message: str
) -> None:
    store = reviewed.store
    before = store.decision_log()
    with pytest.raises(StoreError) as info:
        adjudicate(store, video, factor, value, annotator=annotator)
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)
    assert store.decision_log() == before


def test_the_annotate_link_encodes_the_name() -> None:
    from urllib.parse import parse_qs, urlsplit

    name = "ana & bo/1+é=x"
    link = annotate_url("Arson002_x264", name)
    parts = urlsplit(link)
    assert parts.path == "/"
    assert parse_qs(parts.query, strict_parsing=True) == {
        "annotator": [name],
        "video": ["Arson002_x264"],
    }
    assert parse_qs(urlsplit(annotate_url("Arson002_x264")).query) == {"video": ["Arson002_x264"]}


# --- pairwise κ, Fleiss' κ on all, and agreement with the auto pole -------------------------


@pytest.mark.filterwarnings("ignore:A single label was found")
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.UndefinedMetricWarning")
@pytest.mark.parametrize("seed", range(4))
def test_every_pair_gets_cohens_kappa_over_the_videos_both_rated(
    small_workspace: Workspace, seed: int
) -> None:
    """Four annotators rate random subsets; each pair's κ and shared-video count match
    sklearn's cohen_kappa_score over the videos that pair both rated."""
    store = small_workspace.store
    rng = random.Random(seed)
    people = ("ana", "ben", "carla", "dora")
    given: dict[str, dict[str, str]] = {who: {} for who in people}
    for video in VIDEOS:
        for who in people:
            if rng.random() < 0.8:
                value = rng.choice(["few", "many", "ambiguous"])
                store.record_decision(video, "crowd", value, annotator=who)
                given[who][video] = value
    crowd = _by_factor(small_workspace)["crowd"]
    raters = sorted(who for who in people if given[who])
    assert crowd.annotators == tuple(raters)
    expected_pairs = []
    for i, first in enumerate(raters):
        for second in raters[i + 1 :]:
            both = [v for v in VIDEOS if v in given[first] and v in given[second]]
            a = [given[first][v] for v in both]
            b = [given[second][v] for v in both]
            kappa = cohen_kappa_score(a, b) if both else math.nan
            expected_pairs.append((first, second, len(both), kappa))
    got = [(p.first, p.second, p.videos, p.kappa) for p in crowd.pairs]
    assert [g[:3] for g in got] == [e[:3] for e in expected_pairs]
    for (*_, kappa), (*_, expected) in zip(got, expected_pairs, strict=True):
        if math.isnan(expected):
            assert math.isnan(kappa)
        else:
            assert kappa == pytest.approx(expected, abs=1e-12)


def test_one_partial_annotator_leaves_the_pairs_their_videos(small_workspace: Workspace) -> None:
    """The defect: with a third annotator who rated one other video, κ read "—" for all."""
    store = small_workspace.store
    ana = ["indoor", "outdoor", "indoor", "outdoor"]
    ben = ["indoor", "outdoor", "outdoor", "outdoor"]
    for video, a, b in zip(VIDEOS, ana, ben, strict=True):
        store.record_decision(video, "setting", a, annotator="ana")
        store.record_decision(video, "setting", b, annotator="ben")
    store.record_decision(ABUSE, "setting", None, annotator="ben")  # ben: three videos
    store.record_decision(ABUSE, "setting", "indoor", annotator="carla")  # carla: only ABUSE
    setting = _by_factor(small_workspace)["setting"]
    assert (setting.statistic, setting.videos) == ("fleiss_kappa", 0)
    assert setting.kappa_text == "— (no video rated by all of them)"
    pairs = {(p.first, p.second): p for p in setting.pairs}
    assert list(pairs) == [("ana", "ben"), ("ana", "carla"), ("ben", "carla")]
    ana_ben = pairs[("ana", "ben")]
    assert ana_ben.videos == 3
    assert ana_ben.kappa == pytest.approx(cohen_kappa_score(ana[1:], ben[1:]), abs=1e-12)
    assert ana_ben.kappa_text == f"{cohen_kappa_score(ana[1:], ben[1:]):.3f}"
    assert pairs[("ana", "carla")].videos == 1
    assert pairs[("ana", "carla")].kappa_text == "undefined (every rating in one category)"
    assert pairs[("ben", "carla")].kappa_text == "— (no video rated by both)"


def test_fleiss_kappa_on_the_videos_rated_by_all_beside_the_pairs(
    small_workspace: Workspace,
) -> None:
    store = small_workspace.store
    ratings = {
        ABUSE: {"ana": "few", "ben": "few", "carla": "few"},
        ARSON: {"ana": "few", "ben": "many", "carla": "many"},
        NORMAL: {"ana": "many", "ben": "many", "carla": "few"},
        ROAD: {"ana": "many", "ben": "few"},  # carla did not rate ROAD
    }
    for video, by_annotator in ratings.items():
        for who, value in by_annotator.items():
            store.record_decision(video, "crowd", value, annotator=who)
    crowd = _by_factor(small_workspace)["crowd"]
    assert (crowd.statistic, crowd.videos) == ("fleiss_kappa", 3)
    # By hand over ABUSE, ARSON, NORMAL — counts (few, many): (3,0), (1,2), (1,2):
    # P_i = 1, 1/3, 1/3 → P̄ = 5/9 = 45/81; p = (5/9, 4/9) → P̄_e = 41/81;
    # κ = (45 − 41) / (81 − 41) = 1/10.
    assert crowd.observed_agreement == pytest.approx(5 / 9)
    assert crowd.kappa == pytest.approx(0.1, abs=1e-12)
    ana_ben = crowd.pairs[0]
    assert (ana_ben.first, ana_ben.second, ana_ben.videos) == ("ana", "ben", 4)  # ROAD too
    assert ana_ben.observed_agreement == pytest.approx(0.5)


@pytest.mark.filterwarnings("ignore:A single label was found")
def test_people_are_compared_with_the_auto_pole_on_measured_factors(
    small_workspace: Workspace,
) -> None:
    store = small_workspace.store
    poles = dict(zip(VIDEOS, ["high", "low", "high", "low"], strict=True))
    for video, pole in poles.items():
        store.record_decision(video, "resolution", pole, annotator="auto", source="auto")
    ana = {ABUSE: "high", ARSON: "high", NORMAL: "low", ROAD: "low"}
    for video, value in ana.items():
        store.record_decision(video, "resolution", value, annotator="ana")  # overrides
    store.record_decision(ARSON, "resolution", "ambiguous", annotator="ben")
    store.record_decision(NORMAL, "resolution", "high", annotator="ben")
    store.record_decision(ROAD, "resolution", "high", annotator="carla", source="consensus")
    store.record_decision(ABUSE, "color", "grayscale", annotator="ana")  # a manual factor

    results = auto_agreement(store)
    assert [(r.factor, r.annotator, r.videos, r.agreed) for r in results] == [
        ("resolution", "ana", 4, 2),
        ("resolution", "ben", 2, 1),
    ]
    ana_result, ben_result = results
    expected = cohen_kappa_score([ana[v] for v in VIDEOS], [poles[v] for v in VIDEOS])
    assert ana_result.kappa == pytest.approx(expected, abs=1e-12)
    assert ana_result.observed_agreement == 0.5
    expected = cohen_kappa_score(["ambiguous", "high"], [poles[ARSON], poles[NORMAL]])
    assert ben_result.kappa == pytest.approx(expected, abs=1e-12)


def test_the_kappa_heatmap_holds_every_pair(small_workspace: Workspace) -> None:
    store = small_workspace.store
    ana, ben = ["few", "many", "few", "few"], ["few", "many", "many", "few"]
    for video, a, b in zip(VIDEOS, ana, ben, strict=True):
        store.record_decision(video, "crowd", a, annotator="ana")
        store.record_decision(video, "crowd", b, annotator="ben")
    store.record_decision(ABUSE, "color", "color", annotator="ana")
    store.record_decision(ABUSE, "color", "color", annotator="carla")
    spec = kappa_heatmap(agreement(store)).to_dict()
    [rows] = [v for v in spec["datasets"].values()]
    cells = {(r["factor"], r["pair"]): (r["kappa"], r["videos"]) for r in rows}
    expected = cohen_kappa_score(ana, ben)
    assert cells.keys() == {("crowd", "ana – ben"), ("color", "ana – carla")}
    assert cells[("crowd", "ana – ben")][0] == pytest.approx(expected)
    assert cells[("crowd", "ana – ben")][1] == 4
    assert cells[("color", "ana – carla")] == (None, 1)  # κ undefined: grey


def test_no_heatmap_without_a_pair(small_workspace: Workspace) -> None:
    small_workspace.store.record_decision(ABUSE, "crowd", "few", annotator="ana")
    assert kappa_heatmap(agreement(small_workspace.store)) is None


def _axes(spec: dict) -> tuple[str, str]:
    """The fields on a heatmap spec's x and y axes."""
    encoding = spec["layer"][0]["encoding"]
    return encoding["x"]["field"], encoding["y"]["field"]


def test_the_heatmap_of_ten_annotators_grows_down_not_across(small_workspace: Workspace) -> None:
    """The defect: 45 pairs across, at least 90 px each, ran off a 1440 px screen. Beyond five
    annotators the pairs run down and the factors across, within the cells' width."""
    store = small_workspace.store
    manual = [f for f in small_workspace.catalogue.factors if f.source == "manual"]
    for i, who in enumerate(TEN):
        for video in VIDEOS:
            for factor in manual:
                store.record_decision(video, factor.key, factor.values[i % 2], annotator=who)
    spec = kappa_heatmap(agreement(store)).to_dict()
    assert _axes(spec) == ("factor", "pair")
    pairs = spec["layer"][0]["encoding"]["y"]["sort"]
    assert len(pairs) == 45 and pairs[:2] == ["ana – ben", "ana – carla"]
    assert spec["width"]["step"] * len(manual) <= HEATMAP_CELLS_WIDTH

    for who in TEN[5:]:  # five annotators left: ten pairs, across as before
        for video in VIDEOS:
            for factor in manual:
                store.record_decision(video, factor.key, None, annotator=who)
    spec = kappa_heatmap(agreement(store)).to_dict()
    assert _axes(spec) == ("pair", "factor")
    assert spec["width"]["step"] * 10 <= HEATMAP_CELLS_WIDTH


def test_one_read_of_the_decisions_serves_every_view(annotated: Workspace) -> None:
    """The page reads the current decisions once and hands them to all three views."""
    store = annotated.store
    decisions = store.current_decisions()
    assert review_table(annotated, decisions=decisions).equals(review_table(annotated))
    assert agreement(store, decisions=decisions) == agreement(store)
    assert auto_agreement(store, decisions=decisions) == auto_agreement(store)
    assert auto_agreement(store)  # the example overrides an auto pole: something to compare
