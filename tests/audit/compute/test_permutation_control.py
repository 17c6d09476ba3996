"""The within-video permutation control ([inside] App. E) against every permutation of tiny
videos and against seeded Monte-Carlo shuffles, and N_eff ([inside] App. F) by hand and on
the real XD-Violence ground truth."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from helpers import realdata_dir
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score
from test_audit_engine import brute_auc, make_benchmark, tied_scores

from vadscene.audit import load_ground_truth
from vadscene.audit.compute.controls import (
    permuted_micro_expectation,
    within_effective_videos,
)
from vadscene.audit.compute.engine import run_audit
from vadscene.audit.compute.pairs import frame_runs
from vadscene.audit.io.scores import ModelScores
from vadscene.benchmark.frames import GroundTruth

TOL = 1e-12


def tiny_benchmark() -> tuple[GroundTruth, np.ndarray]:
    """Three videos of 3, 4 and 2 frames (mixed, mixed, normal) with tied scores."""
    gt = GroundTruth(
        video_ids=("Abuse001", "Arson002", "Normal003"),
        categories=("Abuse", "Arson", "Normal"),
        offsets=np.array([0, 3, 7, 9]),
        labels=np.array([1, 0, 0, 1, 1, 0, 0, 0, 0], bool),
        source="tiny",
    )
    scores = np.array([0.7, 0.2, 0.2, 0.9, 0.5, 0.1, 0.5, 0.4, 0.2])
    return gt, scores


def every_within_video_permutation(gt: GroundTruth, scores: np.ndarray):
    """Every assignment of each video's scores to its own frames (as position orders, so
    tied scores are distinct arrangements, as a uniform permutation draws them)."""
    blocks = [
        list(itertools.permutations(scores[start:end]))
        for start, end in zip(gt.offsets[:-1], gt.offsets[1:], strict=True)
    ]
    for combination in itertools.product(*blocks):
        yield np.concatenate(combination)


def test_expected_micro_equals_the_mean_over_every_permutation() -> None:
    gt, scores = tiny_benchmark()
    aurocs = [roc_auc_score(gt.labels, p) for p in every_within_video_permutation(gt, scores)]
    assert len(aurocs) == math.factorial(3) * math.factorial(4) * math.factorial(2)
    a = gt.anomalous_counts().astype(float)
    n = gt.frame_counts.astype(float) - a
    expected = permuted_micro_expectation(frame_runs(scores, gt.labels, gt.video_index()), a, n)
    assert abs(expected - np.mean(aurocs)) < TOL
    row = run_audit(gt, [ModelScores("m", scores, "mem")], n_bootstrap=0).controls.iloc[0]
    assert abs(row["micro_permuted"] - np.mean(aurocs)) < TOL
    micro = roc_auc_score(gt.labels, scores)
    assert micro > 0.5
    assert abs(row["retention_permuted"] - (np.mean(aurocs) - 0.5) / (micro - 0.5)) < TOL


def test_within_video_pairs_average_one_half_over_every_permutation() -> None:
    # the closed form's within term: over every permutation a video's own pairs average ½
    gt, scores = tiny_benchmark()
    for video in (0, 1):
        start, end = gt.offsets[video], gt.offsets[video + 1]
        labels = gt.labels[start:end]
        values = [
            roc_auc_score(labels, np.array(p)) for p in itertools.permutations(scores[start:end])
        ]
        assert abs(np.mean(values) - 0.5) < TOL


def test_expected_micro_agrees_with_seeded_monte_carlo_shuffles() -> None:
    gt = make_benchmark(5, videos=20)
    scores = tied_scores(gt, np.random.default_rng(5))
    rng = np.random.default_rng(123)
    draws = 4000
    shuffled = scores.copy()
    values = np.empty(draws)
    for i in range(draws):
        for start, end in zip(gt.offsets[:-1], gt.offsets[1:], strict=True):
            shuffled[start:end] = rng.permutation(scores[start:end])
        values[i] = roc_auc_score(gt.labels, shuffled)
    standard_error = values.std(ddof=1) / np.sqrt(draws)
    row = run_audit(gt, [ModelScores("m", scores, "mem")], n_bootstrap=0).controls.iloc[0]
    assert standard_error > 0
    assert abs(row["micro_permuted"] - values.mean()) < 4 * standard_error


def test_video_constant_scores_are_unchanged_by_permutation() -> None:
    gt = make_benchmark(2, videos=15)
    constant = np.random.default_rng(2).random(gt.n_videos)[gt.video_index()]
    row = run_audit(gt, [ModelScores("c", constant, "mem")], n_bootstrap=0).controls.iloc[0]
    assert abs(row["micro_permuted"] - roc_auc_score(gt.labels, constant)) < TOL


def test_effective_videos_by_hand() -> None:
    # a·n per video: 2·3 = 6, 1·1 = 1, 0 (fully anomalous), 0 (normal): (6 + 1)² / (36 + 1)
    gt = GroundTruth(
        video_ids=("Abuse001", "Abuse002", "Arson003", "Normal004"),
        categories=("Abuse", "Abuse", "Arson", "Normal"),
        offsets=np.array([0, 5, 7, 9, 12]),
        labels=np.array([1, 1, 0, 0, 0, 1, 0, 1, 1, 0, 0, 0], bool),
        source="hand",
    )
    assert abs(run_audit(gt, n_bootstrap=0).summary["within_effective_videos"] - 49 / 37) < TOL
    # k videos with equal pair counts: exactly k equally weighted videos
    assert within_effective_videos(np.full(7, 3.0), np.full(7, 5.0)) == 7.0
    assert math.isnan(within_effective_videos(np.array([2.0, 0.0]), np.array([0.0, 4.0])))


@st.composite
def tiny_videos(draw: st.DrawFn) -> tuple[GroundTruth, np.ndarray]:
    """2–3 videos of 1–3 frames, labels and scores (on a grid: ties) drawn freely, with at
    least one anomalous and one normal frame in all."""
    lengths = draw(st.lists(st.integers(1, 3), min_size=2, max_size=3))
    frames = sum(lengths)
    labels = np.array(draw(st.lists(st.booleans(), min_size=frames, max_size=frames)))
    assume(labels.any() and not labels.all())
    grid = st.sampled_from([0.0, 0.25, 0.5, 1.0])
    scores = np.array(draw(st.lists(grid, min_size=frames, max_size=frames)))
    gt = GroundTruth(
        video_ids=tuple(f"Abuse{i:03d}" for i in range(len(lengths))),
        categories=("Abuse",) * len(lengths),
        offsets=np.r_[0, np.cumsum(lengths)],
        labels=labels,
        source="drawn",
    )
    return gt, scores


@settings(max_examples=60, deadline=None)
@given(tiny_videos())
def test_property_expected_micro_is_the_mean_over_every_permutation(drawn) -> None:
    gt, scores = drawn
    mean = np.mean(
        [brute_auc(p[gt.labels], p[~gt.labels]) for p in every_within_video_permutation(gt, scores)]
    )
    a = gt.anomalous_counts().astype(float)
    n = gt.frame_counts.astype(float) - a
    assert (
        abs(
            permuted_micro_expectation(frame_runs(scores, gt.labels, gt.video_index()), a, n) - mean
        )
        < TOL
    )


@pytest.mark.realdata
def test_xd_violence_effective_videos_match_the_paper() -> None:
    """XD-Violence test set (PEL4VAD's per-video frame labels, 800 videos): N_eff rounds to
    43.7, the upper end of the 18.7–43.7 [inside] App. F reports across its benchmarks."""
    gt = load_ground_truth(realdata_dir() / "pel4vad" / "list" / "xd" / "xd-gt")
    assert (gt.n_videos, gt.n_frames) == (800, 2_330_384)
    assert round(run_audit(gt, n_bootstrap=0).summary["within_effective_videos"], 1) == 43.7
