"""The papers' further tables: metric agreement, AUCA, Prob-AUC, spread (docs/metrics.md,
"Further tables"; [inside] §5.3, App. G, Tables 5, 17; [audit] Table 3). Interval AP, whose
columns the ``further`` table holds too, is computed in :mod:`.intervals`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from vadscene.audit.compute.pairs import PairCounts, video_constant_counts


def auca(u: PairCounts, a: np.ndarray, n: np.ndarray) -> dict[str, float]:
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
    oracle = video_constant_counts(a_s / np.maximum(a_s + n_s, 1), a_s, n_s)
    inside = np.where(keep, 0, -1)
    kept_pairs = u.block_sums(np.ones((1, a.size)), inside, inside, (1, 1))[0, 0, 0]
    cross_all = float(a.sum() * n.sum() - (a * n).sum())
    return {
        "auca": float(kept_pairs / pairs) if pairs else float("nan"),
        "cross_mass_kept": (pairs - float((a_s * n_s).sum())) / cross_all
        if cross_all
        else float("nan"),
        "max_auca": float(oracle.pooled(np.ones((1, a_s.size)))[0] / pairs)
        if pairs
        else float("nan"),
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
