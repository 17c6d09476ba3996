"""Clustered (video-cluster) covariances of micro, within and macro AUROC, against direct
loops over frames and videos, a hand-worked case and scipy's normal distribution."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm
from sklearn.metrics import roc_auc_score

from vadscene.audit.compute.engine import run_audit
from vadscene.audit.compute.pairs import pair_counts
from vadscene.audit.compute.uncertainty import cluster_terms, clustered_covariances
from vadscene.audit.io.scores import ModelScores
from vadscene.benchmark.frames import GroundTruth

TOL = 1e-12


def benchmark(seed: int, videos: int = 10) -> GroundTruth:
    """Mixed, fully anomalous and Normal videos, a few frames each."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(3, 10, videos)
    labels = []
    for i, count in enumerate(counts):
        frames = np.zeros(count, bool)
        if i % 4 == 1:
            frames[:] = True
        elif i % 4 != 3:
            start = rng.integers(0, count - 1)
            frames[start : rng.integers(start + 1, count)] = True
        labels.append(frames)
    return GroundTruth(
        video_ids=tuple(f"v{i}" for i in range(videos)),
        categories=tuple("Normal" if i % 4 == 3 else "Abuse" for i in range(videos)),
        offsets=np.r_[0, np.cumsum(counts)],
        labels=np.concatenate(labels),
        source="synthetic",
    )


def tau(x: float, y: float) -> float:
    return 1.0 if x > y else 0.5 if x == y else 0.0


def loop_micro_covariance(gt: GroundTruth, first: np.ndarray, second: np.ndarray) -> float:
    """Obuchowski (1997) from its definitions, frame by frame: the structural components
    V10 of each anomalous frame (its share of normal frames beaten) and V01 of each normal
    frame, summed per video, centred, then the S10, S01, S11 sums of the paper."""
    video, labels = gt.video_index(), gt.labels
    positives, negatives = np.flatnonzero(labels), np.flatnonzero(~labels)
    big_a, big_n = len(positives), len(negatives)

    def components(scores):
        v10 = np.zeros(gt.n_videos)
        v01 = np.zeros(gt.n_videos)
        for t in positives:
            v10[video[t]] += sum(tau(scores[t], scores[s]) for s in negatives) / big_n
        for s in negatives:
            v01[video[s]] += sum(tau(scores[t], scores[s]) for t in positives) / big_a
        theta = sum(tau(scores[t], scores[s]) for t in positives for s in negatives) / (
            big_a * big_n
        )
        a = np.bincount(video[positives], minlength=gt.n_videos)
        n = np.bincount(video[negatives], minlength=gt.n_videos)
        return v10 - a * theta, v01 - n * theta, a, n

    r10, r01, a, n = components(first)
    s10, s01, _, _ = components(second)
    i10, i01, clusters = (a > 0).sum(), (n > 0).sum(), gt.n_videos
    s_10 = i10 / ((i10 - 1) * big_a) * sum(r10[i] * s10[i] for i in range(clusters))
    s_01 = i01 / ((i01 - 1) * big_n) * sum(r01[i] * s01[i] for i in range(clusters))
    s_11 = (
        clusters / (clusters - 1) * sum(r10[i] * s01[i] + s10[i] * r01[i] for i in range(clusters))
    )
    return s_10 / big_a + s_01 / big_n + s_11 / (big_a * big_n)


def loop_within_and_macro(gt: GroundTruth, first: np.ndarray, second: np.ndarray):
    """Video by video with roc_auc_score: within = Σ wins / Σ pairs as a ratio of video sums
    (linearised variance), macro = mean of per-video AUROCs (variance of a mean)."""
    video = gt.video_index()
    wins_a, wins_b, pairs, auc_a, auc_b = [], [], [], [], []
    for v in range(gt.n_videos):
        keep = video == v
        y = gt.labels[keep]
        if y.all() or not y.any():
            continue
        m = y.sum() * (~y).sum()
        auc_a.append(roc_auc_score(y, first[keep]))
        auc_b.append(roc_auc_score(y, second[keep]))
        wins_a.append(auc_a[-1] * m)
        wins_b.append(auc_b[-1] * m)
        pairs.append(m)
    wins_a, wins_b, pairs = map(np.array, (wins_a, wins_b, pairs))
    mixed = len(pairs)
    theta_a, theta_b = wins_a.sum() / pairs.sum(), wins_b.sum() / pairs.sum()
    within = (
        mixed
        / (mixed - 1)
        * float(((wins_a - theta_a * pairs) * (wins_b - theta_b * pairs)).sum())
        / pairs.sum() ** 2
    )
    macro = float(np.cov(auc_a, auc_b, ddof=1)[0, 1]) / mixed
    return within, macro


def counts(gt: GroundTruth) -> tuple[np.ndarray, np.ndarray]:
    a = gt.anomalous_counts().astype(float)
    return a, gt.frame_counts - a


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_covariances_against_loops_over_frames_and_videos(seed: int) -> None:
    gt = benchmark(seed)
    rng = np.random.default_rng(seed + 10)
    first = np.round(rng.random(gt.n_frames) * 4 + gt.labels) / 4
    second = np.round(first * 2 + rng.random(gt.n_frames)) / 3  # correlated with the first
    video = gt.video_index()
    a, n = counts(gt)
    terms = [
        cluster_terms(pair_counts(s, gt.labels, video, gt.n_videos), a, n) for s in (first, second)
    ]
    covariance = clustered_covariances(terms[0], terms[1], a, n)
    variance = clustered_covariances(terms[0], terms[0], a, n)
    assert covariance["micro"] == pytest.approx(loop_micro_covariance(gt, first, second), abs=TOL)
    assert variance["micro"] == pytest.approx(loop_micro_covariance(gt, first, first), abs=TOL)
    within, macro = loop_within_and_macro(gt, first, second)
    assert covariance["within"] == pytest.approx(within, abs=TOL)
    assert covariance["macro"] == pytest.approx(macro, abs=TOL)
    assert variance["macro"] == pytest.approx(loop_within_and_macro(gt, first, first)[1], abs=TOL)


def test_macro_variance_by_hand() -> None:
    # three mixed videos of 1 anomalous + 1 normal frame whose AUROCs are 1, ½ and 0:
    # mean ½, Σ d² = ½, Var = ½ / (3 · 2) = 1/12; within is the same ratio here
    gt = GroundTruth(
        video_ids=("a", "b", "c"),
        categories=("Abuse",) * 3,
        offsets=np.array([0, 2, 4, 6]),
        labels=np.array([1, 0, 1, 0, 1, 0], bool),
        source="hand",
    )
    scores = np.array([0.9, 0.1, 0.5, 0.5, 0.2, 0.8])
    a, n = counts(gt)
    terms = cluster_terms(pair_counts(scores, gt.labels, gt.video_index(), 3), a, n)
    variance = clustered_covariances(terms, terms, a, n)
    assert variance["macro"] == pytest.approx(1 / 12, abs=TOL)
    assert variance["within"] == pytest.approx(1 / 12, abs=TOL)


def test_fewer_than_two_mixed_videos_leave_the_variance_undefined() -> None:
    gt = GroundTruth(
        video_ids=("a", "b"),
        categories=("Abuse", "Normal"),
        offsets=np.array([0, 3, 6]),
        labels=np.array([1, 1, 0, 0, 0, 0], bool),
        source="hand",
    )
    a, n = counts(gt)
    scores = np.array([0.9, 0.2, 0.1, 0.5, 0.3, 0.4])
    terms = cluster_terms(pair_counts(scores, gt.labels, gt.video_index(), 2), a, n)
    variance = clustered_covariances(terms, terms, a, n)
    assert math.isnan(variance["within"]) and math.isnan(variance["macro"])
    assert math.isnan(variance["micro"])  # one video with anomalous frames


def test_the_audit_reports_pairs_and_clustered_se() -> None:
    gt = benchmark(4, videos=16)
    rng = np.random.default_rng(5)
    first = np.round(rng.random(gt.n_frames) * 4 + gt.labels) / 4
    second = np.round(rng.random(gt.n_frames) * 4 + gt.labels * 0.5) / 4
    models = [
        ModelScores("a", first, "mem", family="i3d"),
        ModelScores("b", second, "mem", family="clip"),
        ModelScores("a_again", first.copy(), "mem", family="i3d"),
    ]
    result = run_audit(gt, models, n_bootstrap=20)
    metrics = result.metrics.set_index(["model", "granularity"])
    within, macro = loop_within_and_macro(gt, first, first)
    assert metrics.loc[("a", "micro"), "clustered_se"] == pytest.approx(
        math.sqrt(loop_micro_covariance(gt, first, first)), abs=TOL
    )
    assert metrics.loc[("a", "within"), "clustered_se"] == pytest.approx(math.sqrt(within), abs=TOL)
    assert metrics.loc[("a", "macro"), "clustered_se"] == pytest.approx(math.sqrt(macro), abs=TOL)
    for granularity in ("cross", "per_category", "category_vs_normal"):
        assert math.isnan(metrics.loc[("a", granularity), "clustered_se"])
    table = result.covariance.set_index(["model_a", "model_b", "granularity"])
    row = table.loc[("a", "b", "micro")]
    var_a = loop_micro_covariance(gt, first, first)
    var_b = loop_micro_covariance(gt, second, second)
    cov = loop_micro_covariance(gt, first, second)
    se = math.sqrt(var_a + var_b - 2 * cov)
    difference = metrics.loc[("a", "micro"), "value"] - metrics.loc[("b", "micro"), "value"]
    assert row["covariance"] == pytest.approx(cov, abs=TOL)
    assert row["correlation"] == pytest.approx(cov / math.sqrt(var_a * var_b), abs=1e-10)
    assert row["se_difference"] == pytest.approx(se, abs=TOL)
    assert row["z"] == pytest.approx(difference / se, abs=1e-9)
    assert row["p_value"] == pytest.approx(2 * norm.sf(abs(difference / se)), abs=1e-9)
    assert row["scope"] == "cross_family" and pd.isna(row["reason"])  # JSON null
    same = table.loc[("a", "a_again", "micro")]
    assert same["se_difference"] == 0 and math.isnan(same["z"]) and "SE 0" in same["reason"]
    assert table.loc[("a", "a_again", "within"), "scope"] == "within_family"
    assert "NaN" not in result.to_json()


def test_clustered_se_is_close_to_the_bootstrap_sd_on_large_random_data() -> None:
    # an extra sanity check, not the reference: both estimate the same video-level spread
    rng = np.random.default_rng(6)
    gt = benchmark(7, videos=120)
    scores = np.round(rng.random(gt.n_frames) * 8 + gt.labels * 1.5) / 8
    result = run_audit(gt, [ModelScores("m", scores, "mem")], n_bootstrap=600, seed=1)
    metrics = result.metrics.set_index("granularity")
    for granularity in ("micro", "within", "macro"):
        low, high = metrics.loc[granularity, ["ci_low", "ci_high"]]
        bootstrap_sd = (high - low) / (2 * 1.96)
        assert metrics.loc[granularity, "clustered_se"] == pytest.approx(bootstrap_sd, rel=0.3)
