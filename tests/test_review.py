"""The Review page's data: the videos × factors table, its filters, and agreement statistics."""

from __future__ import annotations

import math
import random
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import yaml
from sklearn.metrics import cohen_kappa_score

from vadscene.catalogue import load_catalogue
from vadscene.errors import CatalogueError
from vadscene.release import build_release
from vadscene.review import (
    FILTERS,
    agreement,
    cohen_kappa,
    filter_review,
    fleiss_kappa,
    review_table,
)
from vadscene.workspace import Workspace

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


def _release_view(workspace: Workspace) -> dict[str, dict[str, str]]:
    """video → factor → value ("" for none) and 'annotators', as a consensus release has them."""
    view = {}
    for record in build_release(workspace).videos:
        row = {
            key: (record.factors[key].value or "") if key in record.factors else ""
            for key in workspace.catalogue.keys
        }
        names = {m.annotator for m in record.marks} | {
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
    assert by_video.loc[ARSON, "color"] == ""  # unadjudicated disagreement
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
