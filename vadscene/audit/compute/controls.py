"""Video-level controls of one model's frame scores, and the run-level summaries over models.

Per model (table ``controls``): video-mean replacement with its retentions R_mean and AP
retention ([inside] §5.1, App. E.3), the exact expectation of micro AUROC under within-video
permutation ([inside] App. E) with its retention, and the clustered SE of micro. Per model
and video score (table ``video_level``): the video-level AUROC [inside] §6 recommends beside
the frame metrics. Over the models (table ``retention_summary``): the run-level retention
summaries of [inside] Tables 3, 10 and 11. On the benchmark: the effective number of videos
behind Within-AUROC, N_eff ([inside] App. F). Formulas: docs/metrics.md "Video-level
controls".

A retention divides by the original's margin above chance, so it is defined only where that
margin is positive: elsewhere it is NaN with a note saying why, and the summaries count only
the defined ones, as the papers do.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from vadscene.audit.compute import metrics
from vadscene.audit.compute.bootstrap import (
    obuchowski_covariance,
    percentile_interval,
)
from vadscene.audit.compute.pairs import (
    FrameRuns,
    PairCounts,
    sorted_runs,
    video_constant_counts,
)
from vadscene.core.kernels import compiled

CHANCE_AUROC = 0.5
"""The AUROC of scores that carry no information: the chance level of R_mean."""

CONVENTIONS: dict[str, str] = {
    "retention": "defined only when the original is above chance (AUROC 0.5, AP the "
    "prevalence); otherwise n/a, with the reason in its note column (e.g. retention_mean_note)",
    "permutation_control": "exact expectation of micro AUROC when each video's scores are "
    "permuted uniformly among its own frames (closed form, no Monte Carlo)",
    "video_level_auroc": "one example per video: label = holds an anomalous frame, score = "
    "the max and the mean of its frame scores (both reported)",
    "retention_summary": "each model one result, grouped by family; median, minimum and "
    "counts over the defined retentions only",
}
"""How the controls, the video-level AUROC and the summaries were computed, as the report's
conventions state it (key ``controls``, with models)."""

CONTROL_COLUMNS: tuple[str, ...] = (
    "model",
    "family",
    "micro",
    "micro_video_mean",
    "retention_mean",
    "retention_mean_note",
    "within_video_mean",
    "ap",
    "ap_video_mean",
    "ap_retention",
    "ap_retention_note",
    "prevalence",
    "obuchowski_se",
    "micro_permuted",
    "retention_permuted",
    "retention_permuted_note",
)
"""Columns of the ``controls`` table; a ``*_note`` column holds why the retention before it
is undefined (None where it is defined)."""

VIDEO_SCORES: tuple[str, ...] = ("max", "mean")
"""How one video score is made from a video's frame scores for the video-level AUROC."""

VIDEO_LEVEL_COLUMNS: tuple[str, ...] = (
    "model",
    "family",
    "video_score",
    "auroc",
    "ci_low",
    "ci_high",
)

RETENTIONS: dict[str, tuple[str, str]] = {
    "retention_mean": ("micro", "micro_video_mean"),
    "ap_retention": ("ap", "ap_video_mean"),
    "retention_permuted": ("micro", "micro_permuted"),
}
"""Each retention of ``controls`` with the columns of its original and replaced values."""

RETENTION_THRESHOLDS: tuple[float, ...] = (0.85, 0.90)
"""The retention levels the run-level summaries count results at ([inside] Tables 3, 10, 11)."""

RETENTION_SUMMARY_COLUMNS: tuple[str, ...] = (
    "retention",
    "family",
    "results",
    "defined",
    "median",
    "minimum",
    "increases",
    "at_least_85",
    "at_least_90",
)


def retention(
    replaced: float, original: float, chance: float, *, measure: str, chance_name: str
) -> tuple[float, str | None]:
    """(replaced − chance) / (original − chance) (docs/metrics.md "Video-level controls";
    [inside] Eq. 8 and App. E.3), and None; or NaN and the reason when the original is not
    above chance, where the papers call the ratio undefined."""
    if not original > chance:  # NaN originals too
        shown = f"{original:.4g}" if np.isfinite(original) else "undefined"
        return float("nan"), (
            f"undefined: {measure} {shown} is not above {chance_name} {chance:.4g}"
        )
    return (replaced - chance) / (original - chance), None


def control_row(
    model: str,
    family: str | None,
    runs: FrameRuns,
    order: np.ndarray,
    u: PairCounts,
    micro: float,
    a: np.ndarray,
    n: np.ndarray,
) -> dict:
    """One model's ``controls`` row: video-mean replacement, AP retention, the clustered SE
    of micro ([inside] §4–5; spec) and the within-video permutation control ([inside] App. E).

    ``runs`` are the runs of the model's frame scores (:func:`~.pairs.frame_runs`) and
    ``order`` their ascending score order, ``u`` its
    pair counts, ``a`` / ``n`` the anomalous / normal frames per video.
    """
    n_videos = a.size
    ones = metrics.ones(n_videos)
    means = metrics.video_means(runs.scores, runs.video, n_videos, weights=runs.weight)
    u_mean = video_constant_counts(means, a, n)
    micro_mean = float(metrics.micro_auroc(u_mean, a, n, ones)[0])
    prevalence = float(a.sum() / (a.sum() + n.sum()))
    ap = metrics.average_precision(runs.scores, runs.labels, runs.weight, ascending=order)
    ap_mean = _video_mean_average_precision(means, runs, n_videos)
    variance = obuchowski_covariance(u, u, a, n)
    permuted = permuted_micro_expectation(runs, a, n, order, counts=u)
    r_mean, r_mean_note = retention(
        micro_mean, micro, CHANCE_AUROC, measure="micro AUROC", chance_name="chance"
    )
    r_ap, r_ap_note = retention(ap_mean, ap, prevalence, measure="AP", chance_name="the prevalence")
    r_perm, r_perm_note = retention(
        permuted, micro, CHANCE_AUROC, measure="micro AUROC", chance_name="chance"
    )
    return {
        "model": model,
        "family": family,
        "micro": micro,
        "micro_video_mean": micro_mean,
        "retention_mean": r_mean,
        "retention_mean_note": r_mean_note,
        "within_video_mean": float(metrics.within_auroc(u_mean, a, n, ones)[0]),
        "ap": ap,
        "ap_video_mean": ap_mean,
        "ap_retention": r_ap,
        "ap_retention_note": r_ap_note,
        "prevalence": prevalence,
        "obuchowski_se": float(np.sqrt(variance)) if variance >= 0 else float("nan"),
        "micro_permuted": permuted,
        "retention_permuted": r_perm,
        "retention_permuted_note": r_perm_note,
    }


def _video_mean_average_precision(means: np.ndarray, runs: FrameRuns, n_videos: int) -> float:
    """Frame AP of every frame scored with its video's mean, from one entry per video and
    label (its anomalous and its normal weight, both at the video's mean) rather than one per
    run: a video's frames all tie, and AP reads only each tie's cumulative counts."""
    anomalous = np.bincount(runs.video, weights=runs.weight * runs.labels, minlength=n_videos)
    normal = np.bincount(runs.video, weights=runs.weight * ~runs.labels, minlength=n_videos)
    present = np.flatnonzero(anomalous + normal > 0)
    return metrics.average_precision(
        np.r_[means[present], means[present]],
        np.r_[np.ones(present.size, bool), np.zeros(present.size, bool)],
        np.r_[anomalous[present], normal[present]],
    )


def permuted_micro_expectation(
    runs: FrameRuns,
    a: np.ndarray,
    n: np.ndarray,
    order: np.ndarray | None = None,
    *,
    counts: PairCounts | None = None,
) -> float:
    """E[micro AUROC] when each video's scores are permuted uniformly among its own frames,
    the labels fixed ([inside] App. E; docs/metrics.md "Within-video permutation control").

    Exact, no Monte Carlo: a within-video pair compares two distinct frames of one video, so
    its expected τ is ½ (τ(x, y) + τ(y, x) = 1); a cross pair (i ≠ j) compares a uniform draw
    from video i's scores with an independent one from video j's, so

        E[U_ij] = a_i n_j · M_ij / (T_i T_j),   M_ij = Σ_{s ∈ i} Σ_{t ∈ j} τ(x_s, x_t),

    over all T_i frames of i and T_j of j, and E[micro] = (Σ_i ½ a_i n_i + Σ_{i≠j} E[U_ij]) /
    (A·N), the denominator being fixed. M is one sorted pair count in which every frame is a
    row of its video (when that video holds anomalous frames) and a column (when it holds
    normal ones). ``order``: the runs' ascending order; ``counts``: their pair counts, whose
    sorted runs are reused when they sweep them (:func:`~.pairs.sorted_runs`).
    """
    frames = np.maximum(a + n, 1)  # a video without frames has a = n = 0: no pair either way
    entries = sorted_runs(runs, a.size, order, counts)
    # Every frame a row of weight a_i / T_i and a column of weight n_i / T_i (labels do not
    # matter once frames are permuted): the sweep's total is Σ_ij a_i n_j M_ij / (T_i T_j),
    # its within-video part the i = j terms, to replace by ½ a_i n_i.
    total, within = _permuted_sums(
        entries.new_group,
        entries.video,
        entries.row_weight,
        entries.column_weight,
        a / frames,
        n / frames,
        a.size,
    )
    return float((total - within + 0.5 * (a * n).sum()) / (a.sum() * n.sum()))


@compiled()
def _permuted_sums(  # type: ignore[no-untyped-def]
    new_group, video, row_weight, column_weight, row_factor, column_factor, n_videos
):
    # The sweep of pairs._sweep_videos over the runs in score order, read in sequence, every
    # run (of weight w: its row or its column weight, the other is 0) both a row of weight
    # w·row_factor[v] and a column of weight w·column_factor[v]: the total and its same-video
    # part.
    below_own = np.zeros(n_videos)
    below = 0.0
    total = 0.0
    within = 0.0
    size = video.size
    first = 0
    while first < size:
        end = first + 1
        while end < size and not new_group[end]:
            end += 1
        for half in range(2):
            if half == 1:
                for t in range(first, end):
                    v = video[t]
                    row = (row_weight[t] + column_weight[t]) * row_factor[v]
                    total += row * below
                    within += row * below_own[v]
            for t in range(first, end):
                v = video[t]
                column = 0.5 * (row_weight[t] + column_weight[t]) * column_factor[v]
                below_own[v] += column
                below += column
        first = end
    return total, within


def within_effective_videos(a: np.ndarray, n: np.ndarray) -> float:
    """N_eff = (Σ a_i n_i)² / Σ (a_i n_i)²: the number of equally weighted videos whose
    within-video pairs would spread Within-AUROC's weight as evenly as the actual pair counts
    do ([inside] App. F; docs/metrics.md "Effective number of videos behind within AUROC").
    Not a sample size; NaN without a mixed video."""
    pairs = np.asarray(a, dtype=np.float64) * np.asarray(n, dtype=np.float64)
    squares = float((pairs**2).sum())
    return float(pairs.sum() ** 2 / squares) if squares > 0 else float("nan")


def video_level_rows(
    model: str,
    family: str | None,
    per_video: dict[str, np.ndarray],
    a: np.ndarray,
    replicates: dict[str, np.ndarray],
) -> list[dict]:
    """Video-level AUROC of one model ([inside] §6; docs/metrics.md "Video-level AUROC"):
    video label = holds an anomalous frame, video score = the max or the mean of its frame
    scores (``per_video``, :func:`video_scores`); the 95 % interval from its values on the
    shared paired video bootstrap (``replicates``, :func:`video_level_aurocs`)."""
    n_videos = a.size
    rows = []
    for name in VIDEO_SCORES:
        counts = video_level_counts(per_video[name], a)
        estimate = video_level_aurocs(counts, a, metrics.ones(n_videos))[0]
        low, high = percentile_interval(replicates[name])
        rows.append(
            {
                "model": model,
                "family": family,
                "video_score": name,
                "auroc": float(estimate),
                "ci_low": low,
                "ci_high": high,
            }
        )
    return rows


def video_scores(runs: FrameRuns, n_videos: int) -> dict[str, np.ndarray]:
    """Each video's max and mean frame score (NaN for a video without frames)."""
    maxima = np.full(n_videos, np.nan)
    if runs.video.size:
        # runs come in video order, so each video's runs are one contiguous block
        starts = np.flatnonzero(np.r_[True, runs.video[1:] != runs.video[:-1]])
        maxima[runs.video[starts]] = np.maximum.reduceat(runs.scores, starts)
    return {
        "max": maxima,
        "mean": metrics.video_means(runs.scores, runs.video, n_videos, weights=runs.weight),
    }


def video_level_counts(values: np.ndarray, a: np.ndarray) -> PairCounts:
    """The pair counts of the video level: each video one entry, labelled a_v > 0, scored
    ``values`` (one sort of the V values)."""
    positive = (a > 0).astype(np.float64)
    return video_constant_counts(values, positive, 1.0 - positive)


def video_level_aurocs(counts: PairCounts, a: np.ndarray, multiplicities: np.ndarray) -> np.ndarray:
    """Video-level AUROC per replicate from :func:`video_level_counts`, a replicate's copies
    of a video counting as that many videos."""
    positive = (a > 0).astype(np.float64)
    return metrics.micro_auroc(counts, positive, 1.0 - positive, multiplicities)


def retention_summary(controls: pd.DataFrame) -> pd.DataFrame:
    """Run-level retention summaries over the audited models, each model one result
    ([inside] Tables 3, 10, 11; docs/metrics.md "Run-level retention summaries"): per
    retention and group (``all`` models, then each family), the results, how many are
    defined, and over the defined ones only the median, the minimum, the increases (replaced
    value above the original) and the counts at or above each of
    :data:`RETENTION_THRESHOLDS`."""
    if controls.empty:
        return pd.DataFrame(columns=list(RETENTION_SUMMARY_COLUMNS))
    families = sorted({f for f in controls["family"] if isinstance(f, str) and f})
    groups = [("all", controls)] + [(f, controls[controls["family"] == f]) for f in families]
    rows = []
    for name, (original, replaced) in RETENTIONS.items():
        for family, members in groups:
            values = members[name].to_numpy(dtype=np.float64)
            defined = ~np.isnan(values)
            kept = values[defined]
            rows.append(
                {
                    "retention": name,
                    "family": family,
                    "results": int(values.size),
                    "defined": int(defined.sum()),
                    "median": float(np.median(kept)) if kept.size else float("nan"),
                    "minimum": float(kept.min()) if kept.size else float("nan"),
                    "increases": int(
                        (
                            members[replaced].to_numpy(dtype=np.float64)[defined]
                            > members[original].to_numpy(dtype=np.float64)[defined]
                        ).sum()
                    ),
                    **{
                        f"at_least_{round(100 * t)}": int((kept >= t).sum())
                        for t in RETENTION_THRESHOLDS
                    },
                }
            )
    return pd.DataFrame(rows, columns=list(RETENTION_SUMMARY_COLUMNS))
