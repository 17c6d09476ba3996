"""Retentions are defined only above chance ([inside] Eq. 8, App. E.3), and the run-level
retention summaries ([inside] Tables 3, 10, 11) count only the defined ones.

Every expected value comes from sklearn and plain loops over the videos, never from the
engine's own helpers. Scores sit on a grid of quarters: their sums are exact in float64, so
a video mean is rounded once and two videos' means tie or order exactly as the reference's.
"""

from __future__ import annotations

import json
import math
import statistics
from fractions import Fraction

import numpy as np
import pandas as pd
from sklearn.metrics import average_precision_score, roc_auc_score
from test_audit_engine import make_benchmark, tied_scores

from vadscene.audit.compute.engine import run_audit
from vadscene.audit.io.scores import ModelScores
from vadscene.audit.report.sections_auroc import controls_section
from vadscene.benchmark.frames import GroundTruth

TOL = 1e-12


def mean_replaced(gt: GroundTruth, scores: np.ndarray) -> np.ndarray:
    """Every frame scored with its video's mean score, one video at a time, each mean exact
    (rational) before rounding once, so videos with equal means tie as they should."""
    out = np.empty_like(scores, dtype=np.float64)
    for start, end in zip(gt.offsets[:-1], gt.offsets[1:], strict=True):
        out[start:end] = float(sum(map(Fraction, scores[start:end])) / int(end - start))
    return out


def reference_retentions(gt: GroundTruth, scores: np.ndarray) -> dict[str, float]:
    """R_mean and AP retention from sklearn, NaN where the original is not above chance."""
    replaced = mean_replaced(gt, scores)
    micro, micro_mean = roc_auc_score(gt.labels, scores), roc_auc_score(gt.labels, replaced)
    ap, ap_mean = (
        average_precision_score(gt.labels, scores),
        average_precision_score(gt.labels, replaced),
    )
    prevalence = gt.labels.mean()
    return {
        "micro": micro,
        "micro_video_mean": micro_mean,
        "ap": ap,
        "ap_video_mean": ap_mean,
        "retention_mean": (micro_mean - 0.5) / (micro - 0.5) if micro > 0.5 else math.nan,
        "ap_retention": (
            (ap_mean - prevalence) / (ap - prevalence) if ap > prevalence else math.nan
        ),
    }


def below_chance(gt: GroundTruth, rng: np.random.Generator) -> np.ndarray:
    """Scores that rank normal frames above anomalous ones (inverted informative scores)."""
    return 1.0 - tied_scores(gt, rng, levels=4)


def test_at_and_below_chance_retentions_are_undefined_with_the_reason() -> None:
    gt = make_benchmark(3)
    rng = np.random.default_rng(7)
    constant = np.full(gt.n_frames, 0.3)
    inverted = below_chance(gt, rng)
    # the premises, independently: at chance exactly, and below it on both measures
    assert roc_auc_score(gt.labels, constant) == 0.5
    assert abs(average_precision_score(gt.labels, constant) - gt.labels.mean()) < TOL
    assert roc_auc_score(gt.labels, inverted) < 0.5
    assert average_precision_score(gt.labels, inverted) < gt.labels.mean()
    result = run_audit(
        gt,
        [ModelScores("constant", constant, "mem"), ModelScores("inverted", inverted, "mem")],
        n_bootstrap=0,
    )
    controls = result.controls.set_index("model")
    for model in ("inverted", "constant"):
        row = controls.loc[model]
        assert math.isnan(row["retention_mean"]) and math.isnan(row["ap_retention"])
        assert math.isnan(row["retention_permuted"])
        micro = roc_auc_score(gt.labels, constant if model == "constant" else inverted)
        assert row["retention_mean_note"] == (
            f"undefined: micro AUROC {micro:.4g} is not above chance 0.5"
        )
        assert row["retention_permuted_note"] == row["retention_mean_note"]
        assert row["ap_retention_note"].startswith("undefined: AP ")
        assert f"is not above the prevalence {gt.labels.mean():.4g}" in row["ap_retention_note"]
    # in JSON: null with the reason beside it, never NaN
    records = {r["model"]: r for r in json.loads(result.to_json())["controls"]}
    assert records["inverted"]["retention_mean"] is None
    assert records["inverted"]["ap_retention"] is None
    assert records["inverted"]["retention_mean_note"].startswith("undefined: micro AUROC")


def test_defined_retentions_match_sklearn_and_carry_no_note() -> None:
    for seed in range(4):
        gt = make_benchmark(seed, videos=15)
        scores = tied_scores(gt, np.random.default_rng(seed), levels=4)
        expected = reference_retentions(gt, scores)
        assert expected["micro"] > 0.5 and expected["ap"] > gt.labels.mean()
        row = run_audit(gt, [ModelScores("m", scores, "mem")], n_bootstrap=0).controls.iloc[0]
        for column, value in expected.items():
            assert abs(row[column] - value) < TOL, (seed, column)
        assert pd.isna(row["retention_mean_note"]) and pd.isna(row["ap_retention_note"])


def test_hand_worked_inverted_model_gets_no_retention() -> None:
    # Abuse001: frames 1 1 0 0 0, Normal001: 0 0 0. Anomalous frames score 0, normal ones 1:
    # every one of the 2 × 6 pairs is lost, micro = 0. The video means (0.6 and 1.0) give
    # micro(s̄) = (3 · ½) / 6 = 0.25 per anomalous frame, so the ratio (0.25 − 0.5) / (0 − 0.5)
    # would read 50 % although the model is below chance. Frame AP: both anomalous frames sit
    # at the lowest threshold, AP = 2/8 = the prevalence, also undefined.
    gt = GroundTruth(
        video_ids=("Abuse001", "Normal001"),
        categories=("Abuse", "Normal"),
        offsets=np.array([0, 5, 8]),
        labels=np.array([1, 1, 0, 0, 0, 0, 0, 0], bool),
        source="hand",
    )
    scores = np.array([0, 0, 1, 1, 1, 1, 1, 1], dtype=float)
    row = run_audit(gt, [ModelScores("m", scores, "mem")], n_bootstrap=0).controls.iloc[0]
    assert row["micro"] == 0.0 and row["micro_video_mean"] == 0.25
    assert row["ap"] == 0.25 and row["prevalence"] == 0.25
    assert math.isnan(row["retention_mean"]) and math.isnan(row["ap_retention"])
    assert row["retention_mean_note"] == "undefined: micro AUROC 0 is not above chance 0.5"
    assert row["ap_retention_note"] == "undefined: AP 0.25 is not above the prevalence 0.25"


def test_controls_report_writes_n_a_with_the_reason() -> None:
    gt = make_benchmark(3)
    rng = np.random.default_rng(1)
    result = run_audit(
        gt,
        [
            ModelScores("good", tied_scores(gt, rng, levels=4), "mem"),
            ModelScores("inverted", below_chance(gt, rng), "mem"),
        ],
        n_bootstrap=0,
    )
    section = controls_section(result)
    assert section is not None
    table = next(b for b in section.blocks if hasattr(b, "frame")).frame.set_index("model")
    assert table.loc["inverted", "R_mean"] == "n/a"
    assert table.loc["inverted", "AP retention"] == "n/a"
    assert table.loc["good", "R_mean"] != "n/a"
    text = " ".join(
        " ".join(getattr(b, "items", ())) + getattr(b, "text", "") for b in section.blocks
    )
    note = result.controls.set_index("model").loc["inverted", "retention_mean_note"]
    assert f"inverted: R_mean {note}" in text


def test_retention_summary_counts_only_defined_results() -> None:
    gt = make_benchmark(5, videos=18)
    rng = np.random.default_rng(11)
    models, families = [], ["a", "a", "a", "b", "b", None]
    for i, family in enumerate(families):
        scores = tied_scores(gt, rng, levels=4) if i % 3 != 2 else below_chance(gt, rng)
        models.append(ModelScores(f"m{i}", scores, "mem", family=family))
    result = run_audit(gt, models, n_bootstrap=0)
    expected_rows = {m.name: reference_retentions(gt, m.scores) for m in models}
    summary = result.retention_summary.set_index(["retention", "family"])
    for retention, original, replaced in (
        ("retention_mean", "micro", "micro_video_mean"),
        ("ap_retention", "ap", "ap_video_mean"),
    ):
        for family in ("all", "a", "b"):
            members = [m.name for m in models if family == "all" or m.family == family]
            values = [expected_rows[m][retention] for m in members]
            defined = [v for v in values if not math.isnan(v)]
            row = summary.loc[(retention, family)]
            assert row["results"] == len(members)
            assert row["defined"] == len(defined)
            if family == "all":  # the premise: some results are undefined, some defined
                assert 0 < len(defined) < len(members)
            assert abs(row["median"] - statistics.median(defined)) < TOL
            assert abs(row["minimum"] - min(defined)) < TOL
            assert row["at_least_85"] == sum(v >= 0.85 for v in defined)
            assert row["at_least_90"] == sum(v >= 0.90 for v in defined)
            increases = sum(
                expected_rows[m][replaced] > expected_rows[m][original]
                for m in members
                if not math.isnan(expected_rows[m][retention])
            )
            assert row["increases"] == increases
    # the model without a family is counted in "all" only
    assert set(result.retention_summary["family"]) == {"all", "a", "b"}
