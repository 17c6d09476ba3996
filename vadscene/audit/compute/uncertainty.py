"""Uncertainty as the papers state it (docs/metrics.md, "Uncertainty of the granularities").

- the per-category estimand: replicates that resample videos within each category, so every
  category is in every replicate ([audit] §3.3, Eq. 2);
- Prob-AUC under soft labels at the three granularities of [audit] Table 2, with paired video
  bootstrap intervals;
- clustered (video-cluster) variances and covariances of micro, within and macro AUROC, and the
  z-test of each model pair's difference they give (Obuchowski 1997; [inside] §7);
- whether a model pair is compared within one backbone family or across families ([audit]
  Table 3, Table S4).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Literal, NamedTuple

import numpy as np

from vadscene.audit.compute import metrics
from vadscene.audit.compute.bootstrap import (
    VideoDraws,
    clustered_micro_covariance,
    obuchowski_residuals,
)
from vadscene.audit.compute.pairs import PairCounts, RectangularCounts, sorted_pair_counts

CategoryBootstrap = Literal["stratified", "unstratified"]
CATEGORY_BOOTSTRAPS: tuple[CategoryBootstrap, ...] = ("stratified", "unstratified")
"""stratified (default): the per-category granularities read replicates drawn within each
category; unstratified: the video resamples every other granularity reads."""

PROB_AUC_GRANULARITIES: tuple[str, ...] = ("micro", "per_category", "macro")
"""[audit] Table 2's Global, Per-category and Within-video columns."""

CLUSTERED_GRANULARITIES: tuple[str, ...] = ("micro", "within", "macro")
"""The granularities with a clustered variance (docs/metrics.md)."""

CLUSTERED_SE_STATEMENT = (
    "videos as the independent units; micro: Obuchowski (1997); within: ratio of video sums; "
    "macro: mean over mixed videos; none for cross and the per-category granularities (their "
    "bootstrap interval only)"
)
"""How the report states the clustered SEs (conventions ``clustered_se``)."""

FamilyScope = Literal["within_family", "cross_family"]


# --- the per-category estimand ----------------------------------------------------------------


def replicates_missing_a_category(
    multiplicities: np.ndarray,
    a: np.ndarray,
    n: np.ndarray,
    categories: np.ndarray,
    normal_category: str,
) -> int:
    """How many replicates leave out at least one category the per-category AUROC averages on
    the sample: none of its videos drawn, or none of its anomalous or of its normal frames —
    its same-category AUROC is then undefined and the replicate averages fewer categories."""
    names = np.asarray(categories).astype(str)
    missing = np.zeros(multiplicities.shape[0], dtype=bool)
    for category in np.unique(names):
        members = names == category
        if category == normal_category or not (a[members].sum() and n[members].sum()):
            continue
        drawn = multiplicities[:, members]
        missing |= (drawn @ a[members] == 0) | (drawn @ n[members] == 0)
    return int(missing.sum())


def category_draws(
    mode: CategoryBootstrap, categories: np.ndarray, resamples: VideoDraws
) -> VideoDraws:
    """The draws the per-category granularities read: within each category (their own seeds,
    key 1 of the video stream), or the shared video ``resamples`` themselves (unstratified)."""
    if mode == "unstratified":
        return resamples
    _, strata = np.unique(np.asarray(categories).astype(str), return_inverse=True)
    return replace(resamples, purpose=1, strata=strata)


# --- Prob-AUC at three granularities ---------------------------------------------------------


class SoftPairs(NamedTuple):
    """Soft pair counts of one model: P (the rows of the videos with positive mass × V) and
    each video's positive and negative mass."""

    pairs: RectangularCounts
    positive: np.ndarray  # Σ y over the video's frames
    negative: np.ndarray  # Σ (1 − y)


def soft_pair_counts(
    scores: np.ndarray, soft_labels: np.ndarray, video_index: np.ndarray, n_videos: int
) -> SoftPairs:
    """P[u, v] = Σ_{i in u} Σ_{j in v} y_i (1 − y_j) τ(s_i, s_j) for soft labels y ∈ [0, 1].

    Every frame enters once as a positive of weight y_i and once as a negative of weight
    1 − y_i (a frame meets itself with τ = ½), as in :func:`.tables.prob_auc`; with 0/1 labels
    P is the pair-count matrix U. Runs of consecutive frames with equal score, label and video
    are merged first, then one sorted sweep counts (:func:`.pairs.sorted_pair_counts`).
    """
    scores = np.asarray(scores, dtype=np.float64)
    y = np.asarray(soft_labels, dtype=np.float64)
    video = np.asarray(video_index, dtype=np.int64)
    first = np.ones(scores.size, dtype=bool)
    first[1:] = (scores[1:] != scores[:-1]) | (y[1:] != y[:-1]) | (video[1:] != video[:-1])
    starts = np.flatnonzero(first)
    length = np.diff(np.append(starts, scores.size)).astype(np.float64)
    scores, y, video = scores[starts], y[starts], video[starts]
    positive, negative = length * y, length * (1.0 - y)
    rows, columns = positive > 0, negative > 0
    row_videos = np.unique(video[rows])
    rank = np.full(n_videos, -1, dtype=np.int64)
    rank[row_videos] = np.arange(row_videos.size)
    entries = np.r_[scores[rows], scores[columns]]
    order = np.argsort(entries)  # ties form one group in the count: no stable sort needed
    row = np.r_[rank[video[rows]], np.full(int(columns.sum()), -1)]
    column = np.r_[np.full(int(rows.sum()), -1), video[columns]]
    weight = np.r_[positive[rows], negative[columns]]
    pairs = sorted_pair_counts(
        entries[order], row[order], column[order], weight[order], (row_videos.size, n_videos)
    )
    return SoftPairs(
        RectangularCounts(row_videos, pairs, n_videos),
        np.bincount(video, positive, minlength=n_videos),
        np.bincount(video, negative, minlength=n_videos),
    )


def prob_auc_granularities(
    soft: SoftPairs,
    multiplicities: np.ndarray,
    by_category: np.ndarray,
    categories: np.ndarray,
    normal_category: str,
) -> dict[str, np.ndarray]:
    """Prob-AUC per replicate at [audit] Table 2's granularities: micro (all frames), per
    category (mean over c ≠ Normal of the Prob-AUC of c's videos' frames, replicates
    ``by_category``) and macro (mean over the videos with positive and negative mass of each
    video's own Prob-AUC) — the hard-label formulas of :mod:`.metrics` with a, n the videos'
    positive and negative mass (docs/metrics.md, "Prob-AUC at three granularities")."""
    p, y, negative = soft
    return {
        "micro": metrics.micro_auroc(p, y, negative, multiplicities),
        "per_category": metrics.mean_over_categories(
            metrics.category_aurocs(
                p,
                y,
                negative,
                by_category,
                categories,
                normal_category,
                against_normal_videos=False,
            ),
            by_category.shape[0],
        ),
        "macro": metrics.macro_auroc(p, y, negative, multiplicities),
    }


# --- clustered covariances -------------------------------------------------------------------


class ClusterTerms(NamedTuple):
    """One model's per-video terms of the clustered covariances (docs/metrics.md,
    "Clustered covariance of two models"); each is a length-V vector, 0 where the video does
    not contribute."""

    anomalous: np.ndarray  # r10_v of micro
    normal: np.ndarray  # r01_v of micro
    within: np.ndarray  # U_vv − θ_within·a_v n_v
    macro: np.ndarray  # AUC_v − macro on mixed videos


def cluster_terms(u: PairCounts, a: np.ndarray, n: np.ndarray) -> ClusterTerms:
    """The terms of one model's pair-count matrix ``u`` from which every clustered variance
    and covariance of :data:`CLUSTERED_GRANULARITIES` follows."""
    r10, r01 = obuchowski_residuals(u, a, n)
    diagonal, pairs = u.diagonal(), a * n
    mixed = pairs > 0
    within = diagonal.sum() / pairs.sum() if mixed.any() else float("nan")
    per_video = metrics.per_video_auroc(u, a, n)
    macro = np.where(mixed, per_video - (per_video[mixed].mean() if mixed.any() else 0.0), 0.0)
    return ClusterTerms(r10, r01, np.where(mixed, diagonal - within * pairs, 0.0), macro)


def clustered_covariances(
    first: ClusterTerms, second: ClusterTerms, a: np.ndarray, n: np.ndarray
) -> dict[str, float]:
    """Clustered covariance of two models' micro, within and macro AUROCs with videos as the
    independent units (``first is second``: the variances); NaN with fewer than two
    contributing videos.

    micro: Obuchowski (1997). within = Σ U_vv / Σ m_v, m_v = a_v n_v, is a ratio of video
    sums: I/(I − 1) · Σ e_v e'_v / (Σ m_v)², e_v = U_vv − θ_within m_v. macro, a mean over the
    I mixed videos: Σ d_v d'_v / (I (I − 1)), d_v = AUC_v − macro.
    """
    mixed = int(((a > 0) & (n > 0)).sum())
    pairs = float((a * n).sum())
    if mixed < 2:
        within = macro = float("nan")
    else:
        within = mixed / (mixed - 1) * float(first.within @ second.within) / pairs**2
        macro = float(first.macro @ second.macro) / (mixed * (mixed - 1))
    micro = clustered_micro_covariance(
        (first.anomalous, first.normal), (second.anomalous, second.normal), a, n
    )
    return {"micro": micro, "within": within, "macro": macro}


def clustered_se(variance: float) -> float:
    """√variance; NaN where the variance is undefined or (rounding) negative."""
    return math.sqrt(variance) if variance >= 0 else float("nan")


def difference_test(
    difference: float, variance_a: float, variance_b: float, covariance: float
) -> dict[str, float | str | None]:
    """The clustered z-test of a paired difference: its SE √(Var_A + Var_B − 2 Cov), the
    correlation Cov / √(Var_A Var_B), z = difference / SE and the two-sided normal p-value
    erfc(|z| / √2); ``reason`` says why a value is undefined (None when all are defined)."""
    values = (difference, variance_a, variance_b, covariance)
    if not all(math.isfinite(v) for v in values):
        nan = float("nan")
        return {
            "correlation": nan,
            "se_difference": nan,
            "z": nan,
            "p_value": nan,
            "reason": "fewer than two videos contribute to the clustered variance",
        }
    product = variance_a * variance_b
    correlation = covariance / math.sqrt(product) if product > 0 else float("nan")
    # max(…, 0): rounding can leave a tiny negative for two models with identical terms
    se = math.sqrt(max(variance_a + variance_b - 2 * covariance, 0.0))
    z = difference / se if se > 0 else float("nan")
    reason = None
    if se == 0:
        reason = "the two models' clustered terms are identical: the difference has SE 0"
    elif product <= 0:
        reason = "a model's clustered variance is 0: no correlation"
    return {
        "correlation": correlation,
        "se_difference": se,
        "z": z,
        "p_value": math.erfc(abs(z) / math.sqrt(2)) if math.isfinite(z) else float("nan"),
        "reason": reason,
    }


# --- families -------------------------------------------------------------------------------


def family_scope(family_a: str | None, family_b: str | None) -> FamilyScope | None:
    """within_family when both models carry the same backbone family, cross_family when both
    carry different ones, None when either has none ([audit] Table S4)."""
    if not family_a or not family_b:
        return None
    return "within_family" if family_a == family_b else "cross_family"
