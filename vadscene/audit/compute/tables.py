"""The papers' further tables: metric agreement, AUCA, interval AP, Prob-AUC, spread
(docs/metrics.md, "Further tables"; [inside] §5.3, App. G, Tables 5, 17–21; [audit] Table 3).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from vadscene.audit.compute.pairs import video_constant_pair_counts

IOU_THRESHOLDS: tuple[float, ...] = (0.1, 0.2, 0.3, 0.4, 0.5)
"""tIoU thresholds of the released VadCLIP evaluation; the reported value is their mean."""

PROPOSAL_RANGE_SHARE = 0.6
"""Proposal threshold max − 0.6·(max − min) of the video's scores (VadCLIP's ``thr``)."""

CLASS_SCORE_WEIGHT = 0.7


def auca(u: np.ndarray, a: np.ndarray, n: np.ndarray) -> dict[str, float]:
    """AUCA, the cross-video mass it keeps and its maximum ([inside] Table 17).

    AUCA = micro AUROC over the frames of anomaly-containing videos S = {v: a_v > 0}:
    Σ_{u,v∈S} U[u, v] / (A_S·N_S). cross mass kept = (A_S·N_S − Σ_{v∈S} a_v n_v) /
    (A·N − Σ_v a_v n_v), the share of all cross-video pairs AUCA still compares. maximum
    AUCA = the oracle video-constant AUROC (score a_v / (a_v + n_v)) on S: what one score
    per video can reach there.
    """
    keep = a > 0
    a_s, n_s = a[keep], n[keep]
    pairs = float(a_s.sum() * n_s.sum())
    oracle = video_constant_pair_counts(a_s / np.maximum(a_s + n_s, 1), a_s, n_s)
    cross_all = float(a.sum() * n.sum() - (a * n).sum())
    return {
        "auca": float(u[np.ix_(keep, keep)].sum() / pairs) if pairs else float("nan"),
        "cross_mass_kept": (pairs - float((a_s * n_s).sum())) / cross_all
        if cross_all
        else float("nan"),
        "max_auca": float(oracle.sum() / pairs) if pairs else float("nan"),
    }


def prob_auc(scores: np.ndarray, soft_labels: np.ndarray) -> float:
    """AUROC under soft frame labels y ∈ [0, 1] (several annotators; [audit] Table 2):
    every frame counts as a positive with weight y_i and as a negative with weight 1 − y_i,
    i.e. Σ_{i,j} y_i (1 − y_j) τ(s_i, s_j) / (Σy · Σ(1 − y)) — ``roc_auc_score`` on the frames
    duplicated with those sample weights. One sort, no loop over pairs."""
    scores = np.asarray(scores, dtype=np.float64)
    y = np.asarray(soft_labels, dtype=np.float64)
    if scores.shape != y.shape or not np.isfinite(y).all() or (y < 0).any() or (y > 1).any():
        raise ValueError("soft labels must be finite values in [0, 1], one per score")
    order = np.argsort(scores, kind="stable")
    s, positive, negative = scores[order], y[order], 1 - y[order]
    first = np.r_[True, s[1:] != s[:-1]]
    starts = np.flatnonzero(first)
    positive_tie = np.add.reduceat(positive, starts)
    negative_tie = np.add.reduceat(negative, starts)
    negatives_below = np.cumsum(negative_tie) - negative_tie
    pairs = float(np.sum(positive_tie * (negatives_below + 0.5 * negative_tie)))
    total = float(positive.sum() * negative.sum())
    return pairs / total if total > 0 else float("nan")


def metric_agreement(table: pd.DataFrame, reference: str = "micro") -> pd.DataFrame:
    """Per granularity g ≠ ``reference``: over model pairs, how often g orders a pair
    opposite to the reference (pairs tied in either are left out), Spearman's ρ between the
    two rankings, and the spread (max − min) of g's point estimates ([inside] Table 5;
    [audit] Table 3). ``table``: the audit's ``metrics`` table."""
    wide = table.pivot_table(index="model", columns="granularity", values="value", sort=False)
    rows = []
    for granularity in wide.columns:
        values = wide[granularity].dropna()
        if granularity == reference or reference not in wide:
            rows.append(_spread_row(granularity, values))
            continue
        both = wide[[reference, granularity]].dropna()
        first, second = np.triu_indices(len(both), k=1)  # every model pair once
        ref, other = both[reference].to_numpy(), both[granularity].to_numpy()
        d_ref, d_g = ref[first] - ref[second], other[first] - other[second]
        strict = (d_ref != 0) & (d_g != 0)
        compared = int(strict.sum())
        reversals = int(((d_ref > 0) != (d_g > 0))[strict].sum())
        rho = (
            # Spearman's ρ is Pearson's r of the (average) ranks; pandas' method="spearman"
            # would import scipy, which is not a runtime dependency.
            float(both[reference].rank().corr(both[granularity].rank()))
            if len(both) >= 3
            else float("nan")
        )
        rows.append(
            {
                **_spread_row(granularity, values),
                "pairs": compared,
                "reversals": reversals,
                "spearman_rho": rho,
            }
        )
    return pd.DataFrame(rows, columns=AGREEMENT_COLUMNS)


AGREEMENT_COLUMNS = ["granularity", "models", "spread", "pairs", "reversals", "spearman_rho"]


def _spread_row(granularity: str, values: pd.Series) -> dict:
    return {
        "granularity": granularity,
        "models": int(values.size),
        "spread": float(values.max() - values.min()) if values.size else float("nan"),
        "pairs": 0,
        "reversals": 0,
        "spearman_rho": float("nan"),
    }


# --- interval AP (the released VadCLIP evaluation, binary) ------------------------------------


def proposals(scores: np.ndarray) -> list[tuple[int, int, float]]:
    """One video's proposals ``(start, end, confidence)`` by the released VadCLIP rule.

    The video's class score c = mean of its ⌊T/16⌋ highest scores (no proposal when c ≤ 0 or
    undefined); threshold = max − 0.6·(max − min); proposals are the maximal runs of frames
    with score strictly above it lasting ≥ 2 frames, confidence = run maximum + 0.7·c. The
    released code then applies non-maximum suppression at IoU 0.6; maximal runs of one
    threshold never overlap (IoU 0), so it removes nothing and is not repeated here. A
    constant score sequence gives no proposal (its threshold equals the constant).
    """
    scores = np.asarray(scores, dtype=np.float64)
    top = scores.size // 16
    class_score = float(np.mean(np.sort(scores)[::-1][:top])) if top else float("nan")
    if not class_score > 0:
        return []
    high, low = scores.max(), scores.min()
    above = scores > high - (high - low) * PROPOSAL_RANGE_SHARE
    edges = np.diff(np.r_[0, above.astype(np.int8), 0])
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    keep = ends - starts >= 2
    starts, ends = starts[keep], ends[keep]
    if not starts.size:
        return []
    peaks = _run_maxima(scores, starts, ends)
    confidence = peaks + CLASS_SCORE_WEIGHT * class_score
    order = np.argsort(-confidence, kind="stable")
    return [(int(starts[i]), int(ends[i]), float(confidence[i])) for i in order]


def _run_maxima(scores: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """max of scores[s:e] for disjoint, increasing runs (one reduceat over their bounds)."""
    bounds = np.ravel(np.column_stack([starts, ends]))
    if bounds[-1] == scores.size:
        bounds = bounds[:-1]
    return np.maximum.reduceat(scores, bounds)[::2][: starts.size]


def interval_ap(
    predictions: list[list[tuple[int, int, float]]],
    events: list[list[tuple[int, int]]],
    iou: float,
) -> float:
    """Detection AP of interval predictions at one tIoU threshold, matched as the released
    VadCLIP evaluation does: predictions of all videos by confidence (highest first; ties in
    video order); each is a true positive when an unmatched event of its video overlaps it
    with IoU ≥ ``iou`` (the best one is consumed); AP = Σ_k precision_k·tp_k / #events.
    No prediction at all gives 0.

    Matching only consumes events of the prediction's own video, so it runs video by video
    (in confidence order) and only over predictions that overlap some event enough.
    """
    total = sum(len(video) for video in events)
    flat = [(v, s, e, c) for v, video in enumerate(predictions) for s, e, c in video]
    if not flat or total == 0:
        return 0.0
    confidence = np.array([p[3] for p in flat])
    video_of = np.array([p[0] for p in flat])
    order = np.argsort(-confidence, kind="stable")
    hits = np.zeros(len(flat))
    for video in np.unique(video_of):
        if not events[video]:
            continue
        mine = order[video_of[order] == video]  # this video's predictions, in global order
        bounds = np.array([(flat[k][1], flat[k][2]) for k in mine], dtype=np.float64)
        truth = np.array(events[video], dtype=np.float64)
        overlap = np.clip(
            np.minimum(bounds[:, None, 1], truth[None, :, 1])
            - np.maximum(bounds[:, None, 0], truth[None, :, 0]),
            0,
            None,
        )
        union = (bounds[:, 1] - bounds[:, 0])[:, None] + (truth[:, 1] - truth[:, 0])[None] - overlap
        ious = overlap / union
        free = np.ones(truth.shape[0], dtype=bool)
        for row in np.flatnonzero((ious >= iou).any(1)):
            candidates = np.where(free & (ious[row] >= iou), ious[row], -1.0)
            best = int(np.argmax(candidates))
            if candidates[best] >= 0:
                hits[mine[row]] = 1.0
                free[best] = False
    hits = hits[order]
    true_positives = np.cumsum(hits)
    precision = true_positives / np.arange(1, len(flat) + 1)
    return float(np.sum(precision * hits) / total)


def events_of(labels: np.ndarray) -> list[tuple[int, int]]:
    """The maximal runs of anomalous frames of one video, as [start, end)."""
    edges = np.diff(np.r_[0, np.asarray(labels).astype(np.int8), 0])
    return list(
        zip(np.flatnonzero(edges == 1).tolist(), np.flatnonzero(edges == -1).tolist(), strict=True)
    )


def interval_aps(scores: np.ndarray, labels: np.ndarray, offsets: np.ndarray) -> dict[str, float]:
    """Mean interval AP over :data:`IOU_THRESHOLDS` (and at 0.5) for the original scores,
    after video-mean replacement, and with one whole-video interval [0, T) per video scored
    by its mean ([inside] Tables 18–21). Frames are the time unit."""
    pieces = [scores[offsets[i] : offsets[i + 1]] for i in range(offsets.size - 1)]
    events = [events_of(labels[offsets[i] : offsets[i + 1]]) for i in range(offsets.size - 1)]
    original = [proposals(p) for p in pieces]
    replaced = [proposals(np.full(p.size, p.mean())) for p in pieces]
    whole = [[(0, p.size, float(p.mean()))] for p in pieces]
    out = {}
    for name, predicted in (("", original), ("_video_mean", replaced), ("_whole_video", whole)):
        values = [interval_ap(predicted, events, t) for t in IOU_THRESHOLDS]
        out[f"interval_ap{name}"] = float(np.mean(values))
        out[f"interval_ap{name}_at_05"] = values[-1]
    return out


FURTHER_COLUMNS = [
    "model",
    "family",
    "auca",
    "cross_mass_kept",
    "max_auca",
    "interval_ap",
    "interval_ap_at_05",
    "interval_ap_video_mean",
    "interval_ap_video_mean_at_05",
    "interval_ap_whole_video",
    "interval_ap_whole_video_at_05",
]
"""Columns of the ``further`` table: one row per model."""


def spread_table(table: pd.DataFrame) -> pd.DataFrame:
    """max − min of the models' point estimates per granularity, over all models and within
    each family ([audit] Table 3's spread column). ``table``: the audit's ``metrics``."""
    rows = []
    families = sorted(f for f in table["family"].dropna().unique())
    for granularity, group in table.groupby("granularity", sort=False):
        for family, members in [("all", group)] + [
            (f, group[group["family"] == f]) for f in families
        ]:
            values = members["value"].dropna()
            rows.append(
                {
                    "granularity": granularity,
                    "family": family,
                    "models": int(values.size),
                    "spread": float(values.max() - values.min()) if values.size else float("nan"),
                }
            )
    return pd.DataFrame(rows, columns=["granularity", "family", "models", "spread"])


SIGNIFICANT_DELTA_SCENE = 0.01
"""A contrast counts as significant for Table S3 when |mean over models of Δscene| ≥ this."""


def pair_type_means(scene_pairs: pd.DataFrame, scene_conditioned: pd.DataFrame) -> pd.DataFrame:
    """Mean pair-type AUROC per model over the significant contrasts ([audit] Table S3): those
    whose Δscene = AUC_ref − AUC_cond, averaged over the models, is at least 0.01 in size."""
    columns = ["model", "pair_type", "auroc", "contrasts"]
    if scene_conditioned.empty:
        return pd.DataFrame(columns=columns)
    keys = ["factor", "positive", "negative"]
    mean_delta = scene_conditioned.groupby(keys)["delta_scene"].mean()
    significant = mean_delta[mean_delta.abs() >= SIGNIFICANT_DELTA_SCENE].index
    chosen = scene_pairs.set_index(keys).loc[lambda t: t.index.isin(significant)].reset_index()
    if chosen.empty:
        return pd.DataFrame(columns=columns)
    means = chosen.groupby(["model", "pair_type"], sort=False)["auroc"].mean().reset_index()
    means["contrasts"] = len(significant)
    return means[columns]


def overlap_band(lows: np.ndarray, highs: np.ndarray) -> tuple[float, float] | None:
    """The first stretch of the axis covered by the most intervals [low, high] (the band
    where most confidence intervals overlap, [audit] Fig. S1); None without intervals."""
    lows, highs = np.asarray(lows, float), np.asarray(highs, float)
    keep = np.isfinite(lows) & np.isfinite(highs)
    if not keep.any():
        return None
    points = np.r_[lows[keep], highs[keep]]
    # Starts before ends at the same point: touching intervals count as overlapping.
    kinds = np.r_[np.zeros(keep.sum()), np.ones(keep.sum())]
    order = np.lexsort((kinds, points))
    depth = np.cumsum(np.where(kinds[order] == 0, 1, -1))
    best = int(np.argmax(depth))
    return float(points[order][best]), float(points[order][best + 1])
