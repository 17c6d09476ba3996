"""Video-level AUROC ([inside] §6): one score per video (max or mean of its frame scores)
against the video's label (holds an anomalous frame), with its paired-bootstrap interval,
against sklearn on every replicate."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from sklearn.metrics import roc_auc_score
from support.dense_pairs import video_multiplicities
from test_audit_engine import make_benchmark, tied_scores
from test_controls_defined import mean_replaced

from vadscene.audit.compute.controls import (
    video_level_aurocs,
    video_level_counts,
    video_level_rows,
    video_scores,
)
from vadscene.audit.compute.engine import bootstrap_draws, run_audit
from vadscene.audit.compute.pairs import frame_runs
from vadscene.audit.io.scores import ModelScores
from vadscene.audit.report.document import Note, Table
from vadscene.audit.report.sections import build_document
from vadscene.benchmark.frames import GroundTruth

TOL = 1e-12


def per_video(gt: GroundTruth, scores: np.ndarray) -> dict[str, np.ndarray]:
    """Each video's max and mean frame score and its label, one video at a time; the mean
    exact before one rounding (scores on a grid of quarters sum exactly, so the engine's
    means tie and order as these do)."""
    spans = list(zip(gt.offsets[:-1], gt.offsets[1:], strict=True))
    return {
        "max": np.array([scores[s:e].max() for s, e in spans]),
        "mean": np.array([float(sum(map(Fraction, scores[s:e])) / int(e - s)) for s, e in spans]),
        "label": np.array([gt.labels[s:e].any() for s, e in spans]),
    }


def test_video_level_auroc_matches_sklearn() -> None:
    for seed in range(3):
        gt = make_benchmark(seed, videos=18)
        scores = tied_scores(gt, np.random.default_rng(seed), levels=4)
        reference = per_video(gt, scores)
        result = run_audit(gt, [ModelScores("m", scores, "mem", family="f")], n_bootstrap=0)
        table = result.video_level.set_index("video_score")
        assert list(table.index) == ["max", "mean"]
        for name in ("max", "mean"):
            expected = roc_auc_score(reference["label"], reference[name])
            assert abs(table.loc[name, "auroc"] - expected) < TOL, (seed, name)
        assert set(table["family"]) == {"f"}


def test_hand_worked_video_level_auroc() -> None:
    # Abuse001 (anomalous) scores 0.1 0.9 → max 0.9, mean 0.5; Normal002 0.6 0.6 → 0.6, 0.6;
    # Normal003 0.2 0.95 → 0.95, 0.575. Max: 0.9 beats 0.6, loses to 0.95 → ½.
    # Mean: 0.5 loses to both → 0.
    gt = GroundTruth(
        video_ids=("Abuse001", "Normal002", "Normal003"),
        categories=("Abuse", "Normal", "Normal"),
        offsets=np.array([0, 2, 4, 6]),
        labels=np.array([0, 1, 0, 0, 0, 0], bool),
        source="hand",
    )
    scores = np.array([0.1, 0.9, 0.6, 0.6, 0.2, 0.95])
    table = run_audit(gt, [ModelScores("m", scores, "mem")], n_bootstrap=0).video_level
    assert table.set_index("video_score")["auroc"].to_dict() == {"max": 0.5, "mean": 0.0}


def test_bootstrap_interval_matches_weighted_sklearn_per_replicate() -> None:
    gt = make_benchmark(4, videos=24)
    scores = tied_scores(gt, np.random.default_rng(4), levels=4)
    reference = per_video(gt, scores)
    resamples = video_multiplicities(gt.n_videos, 300, np.random.default_rng(9))
    a = gt.anomalous_counts().astype(float)
    values = video_scores(frame_runs(scores, gt.labels, gt.video_index()), gt.n_videos)
    replicates = {
        name: video_level_aurocs(video_level_counts(values[name], a), a, resamples)
        for name in values
    }
    rows = {r["video_score"]: r for r in video_level_rows("m", None, values, a, replicates)}
    for name in ("max", "mean"):
        replicates = []
        for k in resamples:
            present = k > 0
            if len(set(reference["label"][present])) < 2:
                continue  # one class only: undefined, left out of the interval
            replicates.append(
                roc_auc_score(
                    reference["label"][present], reference[name][present], sample_weight=k[present]
                )
            )
        low, high = np.quantile(replicates, [0.025, 0.975])
        assert abs(rows[name]["ci_low"] - low) < TOL and abs(rows[name]["ci_high"] - high) < TOL


def test_engine_interval_uses_the_shared_video_resamples() -> None:
    # The engine's video draws (bootstrap_draws), the same for every model and granularity.
    gt = make_benchmark(6, videos=18)
    scores = tied_scores(gt, np.random.default_rng(6), levels=4)
    result = run_audit(gt, [ModelScores("m", scores, "mem")], n_bootstrap=200, seed=3)
    resamples = bootstrap_draws(3, gt.categories, 200)[0].matrix()
    reference = per_video(gt, scores)
    table = result.video_level.set_index("video_score")
    for name in ("max", "mean"):
        replicates = [
            roc_auc_score(reference["label"][k > 0], reference[name][k > 0], sample_weight=k[k > 0])
            for k in resamples
            if len(set(reference["label"][k > 0])) == 2
        ]
        low, high = np.quantile(replicates, [0.025, 0.975])
        assert abs(table.loc[name, "ci_low"] - low) < TOL
        assert abs(table.loc[name, "ci_high"] - high) < TOL
    # without replicates the interval is undefined (null in JSON), the estimate is not
    zero = run_audit(gt, [ModelScores("m", scores, "mem")], n_bootstrap=0).video_level
    assert zero["ci_low"].isna().all() and zero["auroc"].notna().all()


def test_report_sections_show_video_level_auroc_and_the_retention_summary() -> None:
    gt = make_benchmark(8, videos=18)
    rng = np.random.default_rng(8)
    models = [
        ModelScores("up", tied_scores(gt, rng, levels=4), "mem", family="f"),
        ModelScores("down", 1.0 - tied_scores(gt, rng, levels=4), "mem", family="f"),
    ]
    result = run_audit(gt, models, n_bootstrap=20)
    document = build_document(result)
    sections = {s.title: s for s in document.sections}
    video = next(b for b in sections["Video-level AUROC"].blocks if isinstance(b, Table)).frame
    row = video.set_index("model").loc["up"]
    reference = per_video(gt, models[0].scores)
    expected = roc_auc_score(reference["label"], reference["max"])
    assert row["video score = max"].startswith(f"{expected:.4f} [")
    assert any(isinstance(b, Note) for b in sections["Video-level AUROC"].blocks)
    summary = next(
        b for b in sections["Run-level retention summary"].blocks if isinstance(b, Table)
    ).frame
    first = summary.iloc[0]  # R_mean over all models: "down" is below chance, left out
    assert (first["n"], first["defined n"]) == ("2", "1")
    up = models[0].scores
    micro = roc_auc_score(gt.labels, up)
    r_mean = (roc_auc_score(gt.labels, mean_replaced(gt, up)) - 0.5) / (micro - 0.5)
    assert first["≥ 85 %"] == f"{int(r_mean >= 0.85)}/1"
    assert first["median"] == f"{100 * r_mean:.3g} %"  # the report's percentages: 3 digits
