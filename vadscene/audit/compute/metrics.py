"""Every AUROC granularity as a function of the pair counts U and video multiplicities.

Each function reads the pair counts U through :class:`~.pairs.PairCounts` and takes
``multiplicities`` K of shape (R, V): row r gives how many copies of every
video replicate r holds. The point estimate is the single row K = 1 (:func:`ones`); a paired
video bootstrap passes its resampled counts (docs/metrics.md, "Paired video bootstrap";
[audit] §3.3). One code path serves both, so a replicate is computed exactly like the
estimate. Copies of a video are
distinct videos: pooled pairs between two copies count (micro), a copy's own frames do not
add to another copy's within-video pairs.

Notation: a_v / n_v anomalous / normal frames of video v; A = Σa, N = Σn; mixed video: a_v > 0
and n_v > 0. Undefined values (no pairs) are NaN.
"""

from __future__ import annotations

import numpy as np

from vadscene.audit.compute.pairs import PairCounts
from vadscene.core.kernels import compiled


def ones(n_videos: int) -> np.ndarray:
    """The multiplicities of the original sample: one copy of every video, shape (1, V)."""
    return np.ones((1, n_videos))


def ratio_or_nan(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(
            denominator > 0, numerator / np.where(denominator > 0, denominator, 1), np.nan
        )


def pooled_pair_sums(counts: PairCounts, multiplicities: np.ndarray) -> np.ndarray:
    """kᵀUk per replicate: the weighted pair count over all anomalous/normal frame pairs."""
    return counts.pooled(multiplicities)


def micro_auroc(
    counts: PairCounts,
    a: np.ndarray,
    n: np.ndarray,
    multiplicities: np.ndarray,
    *,
    pooled: np.ndarray | None = None,
) -> np.ndarray:
    """Pooled frame AUROC (A Eq. 1, L "Micro-AUROC"): kᵀUk / ((k·a)(k·n)).

    Equals ``roc_auc_score(y, s, sample_weight=k[video])`` exactly. ``pooled`` passes kᵀUk
    when it is already computed.
    """
    pooled = counts.pooled(multiplicities) if pooled is None else pooled
    return ratio_or_nan(pooled, (multiplicities @ a) * (multiplicities @ n))


def within_auroc(
    counts: PairCounts, a: np.ndarray, n: np.ndarray, multiplicities: np.ndarray
) -> np.ndarray:
    """Pair-weighted within-video AUROC (L): Σ k_v U_vv / Σ k_v a_v n_v."""
    return ratio_or_nan(multiplicities @ counts.diagonal(), multiplicities @ (a * n))


def cross_auroc(
    counts: PairCounts,
    a: np.ndarray,
    n: np.ndarray,
    multiplicities: np.ndarray,
    *,
    pooled: np.ndarray | None = None,
) -> np.ndarray:
    """Cross-video AUROC (L): (kᵀUk − Σ k_v U_vv) / ((k·a)(k·n) − Σ k_v a_v n_v)."""
    within_pairs = multiplicities @ counts.diagonal()
    pooled = counts.pooled(multiplicities) if pooled is None else pooled
    return ratio_or_nan(
        pooled - within_pairs,
        (multiplicities @ a) * (multiplicities @ n) - multiplicities @ (a * n),
    )


def within_pair_fraction(a: np.ndarray, n: np.ndarray) -> float:
    """w = Σ a_v n_v / (A·N): the share of pairs inside one video (L Eq. 2); micro =
    w·within + (1 − w)·cross, and improving within from chance to perfect gains at most w/2
    (L Cor. 1)."""
    total = float(a.sum() * n.sum())
    return float((a * n).sum()) / total if total > 0 else float("nan")


def per_video_auroc(counts: PairCounts, a: np.ndarray, n: np.ndarray) -> np.ndarray:
    """AUROC of each video's own frames, U_vv / (a_v n_v); NaN unless the video is mixed."""
    return ratio_or_nan(counts.diagonal(), a * n)


def macro_auroc(
    counts: PairCounts, a: np.ndarray, n: np.ndarray, multiplicities: np.ndarray
) -> np.ndarray:
    """Mean per-video AUROC over mixed videos (the "within-video AUC" of A Eq. 3):
    Σ_mixed k_v AUC_v / Σ_mixed k_v."""
    per_video = per_video_auroc(counts, a, n)
    mixed = ~np.isnan(per_video)
    return ratio_or_nan(
        _row_sums_in_order(multiplicities[:, mixed], per_video[mixed]),
        multiplicities[:, mixed].sum(1),
    )


@compiled()
def _row_sums_in_order(k, values):  # type: ignore[no-untyped-def]
    # Σ_v k[r, v]·values[v] added in video order: a replicate's sum of these non-integers is
    # then the same to the last bit whatever block of replicates (or machine) computes it,
    # where a matrix product or numpy's sum may order the additions by the array's shape.
    sums = np.zeros(k.shape[0])
    for r in range(k.shape[0]):
        total = 0.0
        for v in range(values.size):
            total += k[r, v] * values[v]
        sums[r] = total
    return sums


def category_aurocs(
    counts: PairCounts,
    a: np.ndarray,
    n: np.ndarray,
    multiplicities: np.ndarray,
    categories: np.ndarray,
    normal_category: str,
    *,
    against_normal_videos: bool,
) -> dict[str, np.ndarray]:
    """Per anomaly category c ≠ Normal, one AUROC per replicate, from blocks of U.

    Same-category (A Eq. 2): anomalous frames of c vs normal frames of c, both from videos of
    category c. With ``against_normal_videos`` (the common variant, reported apart): the
    normal frames of c's videos plus every frame of the Normal videos.
    """
    same, versus_normal = both_category_aurocs(
        counts, a, n, multiplicities, categories, normal_category
    )
    return versus_normal if against_normal_videos else same


def both_category_aurocs(
    counts: PairCounts,
    a: np.ndarray,
    n: np.ndarray,
    multiplicities: np.ndarray,
    categories: np.ndarray,
    normal_category: str,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """:func:`category_aurocs` of both variants (same-category, then against the Normal
    videos too) from one reading of the counts."""
    names, codes = np.unique(np.asarray(categories).astype(str), return_inverse=True)
    normal = _code_of(names, normal_category)
    blocks = counts.category_blocks(multiplicities, codes, names.size, normal)
    return _category_aurocs(blocks, a, n, multiplicities, names, codes, normal)


def _code_of(names: np.ndarray, name: str) -> int:
    """The code of ``name`` among the sorted ``names``; −1 if absent."""
    found = np.flatnonzero(names == name)
    return int(found[0]) if found.size else -1


def _category_aurocs(
    blocks: tuple[np.ndarray, np.ndarray],
    a: np.ndarray,
    n: np.ndarray,
    multiplicities: np.ndarray,
    names: np.ndarray,
    codes: np.ndarray,
    normal: int,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Both variants of the per-category AUROCs from the blocks S[r, c, c] and S[r, c, Normal]
    of the categories ``names`` (``codes`` per video, every code held by a video; ``normal``
    the Normal code, −1 for none)."""
    same, beside_normal = blocks
    # every category's anomalous and normal frames per replicate: the videos ordered by
    # category, each category's columns summed as one contiguous run
    order = np.argsort(codes, kind="stable")
    starts = np.searchsorted(codes[order], np.arange(names.size))
    ordered = multiplicities[:, order]
    anomalous = np.add.reduceat(ordered * a[order], starts, axis=1)
    normal_frames = np.add.reduceat(ordered * n[order], starts, axis=1)
    within, versus_normal = {}, {}
    for c, name in enumerate(names):
        if c == normal:
            continue
        within[str(name)] = ratio_or_nan(same[:, c], anomalous[:, c] * normal_frames[:, c])
        versus_normal[str(name)] = (
            ratio_or_nan(
                same[:, c] + beside_normal[:, c],
                anomalous[:, c] * (normal_frames[:, c] + normal_frames[:, normal]),
            )
            if normal >= 0
            else within[str(name)]
        )
    return within, versus_normal


def mean_over_categories(per_category: dict[str, np.ndarray], replicates: int) -> np.ndarray:
    """Mean over the categories defined in each replicate (NaN where none is)."""
    if not per_category:
        return np.full(replicates, np.nan)
    stacked = np.vstack(list(per_category.values()))
    defined = ~np.isnan(stacked)
    with np.errstate(invalid="ignore"):
        return np.where(defined.any(0), np.nansum(stacked, 0) / defined.sum(0), np.nan)


def all_granularities(
    counts: PairCounts,
    a: np.ndarray,
    n: np.ndarray,
    multiplicities: np.ndarray,
    categories: np.ndarray,
    normal_category: str,
    *,
    by_category: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Every granularity of :data:`vadscene.audit.compute.result.GRANULARITIES`, per replicate;
    the two means over categories read ``by_category`` (default ``multiplicities``), e.g.
    replicates stratified by category (docs/metrics.md, "The per-category estimand")."""
    by_category = multiplicities if by_category is None else by_category
    replicates = by_category.shape[0]
    names, codes = np.unique(np.asarray(categories).astype(str), return_inverse=True)
    normal = _code_of(names, normal_category)
    pooled, same, beside_normal = counts.granularity_sums(
        multiplicities, by_category, codes, names.size, normal
    )
    within_category, versus_normal = _category_aurocs(
        (same, beside_normal), a, n, by_category, names, codes, normal
    )
    per_category = {
        "per_category": mean_over_categories(within_category, replicates),
        "category_vs_normal": mean_over_categories(versus_normal, replicates),
    }
    return {
        "micro": micro_auroc(counts, a, n, multiplicities, pooled=pooled),
        "within": within_auroc(counts, a, n, multiplicities),
        "cross": cross_auroc(counts, a, n, multiplicities, pooled=pooled),
        "macro": macro_auroc(counts, a, n, multiplicities),
        **per_category,
    }


def video_means(
    scores: np.ndarray,
    video_index: np.ndarray,
    n_videos: int,
    *,
    weights: np.ndarray | None = None,
    mask: np.ndarray | None = None,
) -> np.ndarray:
    """Mean score of each video's frames (those selected by ``mask``); NaN where none are.

    Entries come video by video; ``weights`` counts each entry that many frames (runs). A
    video whose selected scores are all equal gets exactly that value: a summed-then-divided
    mean can be an ulp off it, and ties between videos must stay ties.
    """
    weights = np.ones(scores.size) if weights is None else weights
    if mask is not None:
        scores, video_index, weights = scores[mask], video_index[mask], weights[mask]
    counts = np.bincount(video_index, weights, minlength=n_videos)
    means = ratio_or_nan(np.bincount(video_index, scores * weights, minlength=n_videos), counts)
    present = np.flatnonzero(counts)
    if present.size:
        starts = np.searchsorted(video_index, present)
        lowest = np.minimum.reduceat(scores, starts)
        constant = lowest == np.maximum.reduceat(scores, starts)
        means[present[constant]] = lowest[constant]
    return means


def one_bit_auroc(a: np.ndarray, n: np.ndarray) -> float:
    """AUROC of scoring 1 on anomalous videos and 0 on normal ones (L §4):
    1 − ½·N⁻_anom / N, N⁻_anom = normal frames inside anomalous videos."""
    return 1.0 - 0.5 * float(n[a > 0].sum()) / float(n.sum())


def average_precision(
    scores: np.ndarray,
    labels: np.ndarray,
    weights: np.ndarray | None = None,
    *,
    ascending: np.ndarray | None = None,
) -> float:
    """Frame AP as ``sklearn.metrics.average_precision_score``: Σ_k (R_k − R_{k−1})·P_k over
    the distinct score thresholds, highest first (no interpolation). ``weights`` counts each
    entry that many times (runs of identical frames, see :func:`~.pairs.frame_runs`);
    ``ascending``: the scores' ascending order, when already known (within a tie the order does
    not matter: only each tie's last cumulative count is read)."""
    scores = np.asarray(scores, dtype=np.float64)
    labels = np.asarray(labels).astype(bool)
    weights = np.ones(scores.size) if weights is None else np.asarray(weights, dtype=np.float64)
    positives = weights[labels].sum()
    if positives == 0:
        return float("nan")
    order = np.argsort(scores) if ascending is None else ascending
    return float(_average_precision_descending(order, scores, labels, weights, positives))


@compiled(error_model="numpy")
def _average_precision_descending(order, scores, labels, weights, positives):  # type: ignore[no-untyped-def]
    # the entries from the highest score down, read through ``order`` (ascending) rather than
    # gathered: at the last entry of each tie, recall's step times the precision there
    true_positives = 0.0
    predicted = 0.0
    recall_before = 0.0
    total = 0.0
    for position in range(order.size - 1, -1, -1):
        entry = order[position]
        predicted += weights[entry]
        if labels[entry]:
            true_positives += weights[entry]
        if position == 0 or scores[order[position - 1]] != scores[entry]:
            recall = true_positives / positives
            total += (recall - recall_before) * (true_positives / predicted)
            recall_before = recall
    return total
