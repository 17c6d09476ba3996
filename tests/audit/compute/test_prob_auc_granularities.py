"""Prob-AUC (soft labels) at micro, per-category and macro, against brute force over frame
pairs and sklearn on the frames duplicated with soft weights, with its paired intervals."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score
from support.dense_pairs import stratified_multiplicities, video_multiplicities

from vadscene.audit.compute.bootstrap import percentile_interval
from vadscene.audit.compute.engine import bootstrap_draws, run_audit
from vadscene.audit.compute.uncertainty import prob_auc_granularities, soft_pair_counts
from vadscene.audit.io.scores import ModelScores
from vadscene.benchmark.frames import AuditInputError, GroundTruth

TOL = 1e-12


def soft_benchmark(seed: int, videos: int = 9) -> tuple[GroundTruth, np.ndarray]:
    """Hard ground truth in three categories and Normal, and soft labels on a quarter grid
    (several annotators) that agree with it only roughly."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(3, 12, videos)
    categories = [("Normal", "Abuse", "Arson")[i % 3] for i in range(videos)]
    labels = []
    for category, count in zip(categories, counts, strict=True):
        frames = np.zeros(count, bool)
        if category != "Normal":
            start = rng.integers(0, count - 1)
            frames[start : rng.integers(start + 1, count + 1)] = True
        labels.append(frames)
    gt = GroundTruth(
        video_ids=tuple(f"v{i}" for i in range(videos)),
        categories=tuple(categories),
        offsets=np.r_[0, np.cumsum(counts)],
        labels=np.concatenate(labels),
        source="synthetic",
    )
    soft = np.clip(gt.labels * 0.75 + np.round(rng.random(gt.n_frames) * 2) / 4 - 0.25, 0, 1)
    return gt, soft


def tau(x: float, y: float) -> float:
    return 1.0 if x > y else 0.5 if x == y else 0.0


def brute_soft_auc(scores, soft, frames, weight=None) -> float:
    """Σ_{i,j} w_i w_j y_i (1 − y_j) τ(s_i, s_j) / (Σ w y · Σ w (1 − y)) over ``frames``."""
    weight = np.ones(scores.size) if weight is None else weight
    pairs = sum(
        weight[i] * weight[j] * soft[i] * (1 - soft[j]) * tau(scores[i], scores[j])
        for i in frames
        for j in frames
    )
    total = (weight[frames] * soft[frames]).sum() * (weight[frames] * (1 - soft[frames])).sum()
    return pairs / total if total > 0 else float("nan")


def test_soft_pair_counts_are_the_pair_loop() -> None:
    gt, soft = soft_benchmark(1)
    scores = np.round(np.random.default_rng(2).random(gt.n_frames) * 4) / 4
    video = gt.video_index()
    pairs = soft_pair_counts(scores, soft, video, gt.n_videos)
    expected = np.zeros((gt.n_videos, gt.n_videos))
    for i in range(gt.n_frames):
        for j in range(gt.n_frames):
            expected[video[i], video[j]] += soft[i] * (1 - soft[j]) * tau(scores[i], scores[j])
    videos = np.arange(gt.n_videos)
    counted = pairs.pairs.block_sums(np.ones((1, videos.size)), videos, videos, (videos.size,) * 2)
    assert counted[0] == pytest.approx(expected, abs=1e-9)
    assert pairs.positive == pytest.approx(np.bincount(video, soft), abs=TOL)
    assert pairs.negative == pytest.approx(np.bincount(video, 1 - soft), abs=TOL)


def test_three_granularities_against_brute_force_and_sklearn() -> None:
    gt, soft = soft_benchmark(3)
    scores = np.round(np.random.default_rng(4).random(gt.n_frames) * 5 + soft) / 5
    video = gt.video_index()
    categories = np.array(gt.categories, dtype=object)
    ones = np.ones((1, gt.n_videos))
    values = prob_auc_granularities(
        soft_pair_counts(scores, soft, video, gt.n_videos), ones, ones, categories, "Normal"
    )
    everything = np.arange(gt.n_frames)
    duplicated = roc_auc_score(
        np.r_[np.ones(gt.n_frames), np.zeros(gt.n_frames)],
        np.r_[scores, scores],
        sample_weight=np.r_[soft, 1 - soft],
    )
    assert values["micro"][0] == pytest.approx(duplicated, abs=TOL)
    assert values["micro"][0] == pytest.approx(brute_soft_auc(scores, soft, everything), abs=TOL)
    frame_category = categories[video]
    per_category = [
        brute_soft_auc(scores, soft, np.flatnonzero(frame_category == c))
        for c in ("Abuse", "Arson")
    ]
    assert values["per_category"][0] == pytest.approx(np.mean(per_category), abs=TOL)
    per_video = [
        brute_soft_auc(scores, soft, np.flatnonzero(video == v)) for v in range(gt.n_videos)
    ]
    assert values["macro"][0] == pytest.approx(np.nanmean(per_video), abs=TOL)


def test_replicates_are_the_weighted_duplicated_auroc() -> None:
    gt, soft = soft_benchmark(5)
    scores = np.round(np.random.default_rng(6).random(gt.n_frames) * 3 + soft) / 3
    video = gt.video_index()
    categories = np.array(gt.categories, dtype=object)
    shared = video_multiplicities(gt.n_videos, 6, np.random.default_rng(7))
    by_category = stratified_multiplicities(categories, 6, np.random.default_rng(8))
    values = prob_auc_granularities(
        soft_pair_counts(scores, soft, video, gt.n_videos),
        shared,
        by_category,
        categories,
        "Normal",
    )
    for r in range(6):
        weight = shared[r, video]
        expected = roc_auc_score(
            np.r_[np.ones(gt.n_frames), np.zeros(gt.n_frames)],
            np.r_[scores, scores],
            sample_weight=np.r_[weight * soft, weight * (1 - soft)],
        )
        assert values["micro"][r] == pytest.approx(expected, abs=TOL)
        drawn = [v for v in range(gt.n_videos) if shared[r, v] > 0]
        per_video = {v: brute_soft_auc(scores, soft, np.flatnonzero(video == v)) for v in drawn}
        kept = [v for v in drawn if np.isfinite(per_video[v])]
        macro = sum(shared[r, v] * per_video[v] for v in kept) / sum(shared[r, v] for v in kept)
        assert values["macro"][r] == pytest.approx(macro, abs=TOL)
        category_weight = by_category[r, video]
        per_category = [
            brute_soft_auc(
                scores, soft, np.flatnonzero(categories[video] == c), weight=category_weight
            )
            for c in ("Abuse", "Arson")
        ]
        assert values["per_category"][r] == pytest.approx(np.mean(per_category), abs=TOL)


def test_hard_labels_give_the_ordinary_granularities() -> None:
    gt, _ = soft_benchmark(9)
    scores = np.round(np.random.default_rng(10).random(gt.n_frames) * 4 + gt.labels) / 4
    result = run_audit(
        gt, [ModelScores("m", scores, "mem")], n_bootstrap=50, soft_labels=gt.labels * 1.0
    )
    soft = result.prob_auc.set_index("granularity")
    hard = result.metrics.set_index("granularity")
    for granularity in ("micro", "per_category", "macro"):
        assert soft.loc[granularity, "value"] == pytest.approx(
            hard.loc[granularity, "value"], abs=TOL
        )
        # the same draws (shared resamples, category draws for per-category): same intervals
        assert soft.loc[granularity, "ci_low"] == pytest.approx(
            hard.loc[granularity, "ci_low"], abs=TOL
        )
        assert soft.loc[granularity, "ci_high"] == pytest.approx(
            hard.loc[granularity, "ci_high"], abs=TOL
        )


def test_the_audit_reports_prob_auc_long_with_paired_intervals() -> None:
    gt, soft = soft_benchmark(11, videos=12)
    rng = np.random.default_rng(12)
    models = [
        ModelScores(name, np.round(rng.random(gt.n_frames) * 4 + soft) / 4, "mem") for name in "ab"
    ]
    result = run_audit(gt, models, n_bootstrap=40, seed=3, soft_labels=soft)
    table = result.prob_auc
    assert list(table.columns) == ["model", "family", "granularity", "value", "ci_low", "ci_high"]
    assert list(table["granularity"]) == ["micro", "per_category", "macro"] * 2
    video = gt.video_index()
    shared = bootstrap_draws(3, gt.categories, 40)[0].matrix()
    for model in models:
        row = table[(table["model"] == model.name) & (table["granularity"] == "micro")].iloc[0]
        replicates = [
            roc_auc_score(
                np.r_[np.ones(gt.n_frames), np.zeros(gt.n_frames)],
                np.r_[model.scores, model.scores],
                sample_weight=np.r_[k[video] * soft, k[video] * (1 - soft)],
            )
            for k in shared
        ]
        assert (row["ci_low"], row["ci_high"]) == pytest.approx(
            percentile_interval(np.array(replicates)), abs=TOL
        )
    assert "NaN" not in result.to_json()


def test_soft_labels_outside_zero_one_are_refused() -> None:
    gt, soft = soft_benchmark(13)
    scores = np.random.default_rng(14).random(gt.n_frames)
    bad = soft.copy()
    bad[5] = 1.5
    with pytest.raises(AuditInputError, match=r"soft labels.*\[0, 1\].*frame 5"):
        run_audit(gt, [ModelScores("m", scores, "mem")], n_bootstrap=0, soft_labels=bad)
