"""Prototype readout: how well a model's pre-classifier features separate anomalous from
normal snippets, at the three granularities (docs/metrics.md, "Representation readout";
paper [audit] §3.2, Table 2).

For snippet features z_i and support sets S± the prototypes are the class means
p± = mean_{j∈S±} z_j, and the snippet's score is q_i = cos(z_i, p⁺) − cos(z_i, p⁻). q is
repeated over the snippet's frames (as scores are, :func:`vadscene.audit.io.scores.load_scores`)
and read with the AUROC of the matching granularity:

- global: S⁺ = snippets of anomalous videos, S⁻ = snippets of normal videos (video labels
  only) — read with micro AUROC;
- per-category: for each category c, S± = anomalous / normal snippets of c's videos (snippet
  labels); c's videos are scored with c's prototypes — read with the mean same-category AUROC;
- within-video: S± = anomalous / normal snippets of the same video without the query snippet,
  p±₋ᵢ = (n±·p± − z_i)/(n± − 1) in closed form — read with the macro (mean per-video) AUROC.

Every video a readout does not read is left out and counted with its reason
(:data:`LEFT_OUT_REASONS`): global reads every video once both video labels occur;
per-category leaves out the Normal category and the categories without both snippet labels
(no prototype pair); within-video leaves out the videos without both anomalous and normal
frames (they hold no within-video pair) and the mixed ones with fewer than two snippets of a
label (a leave-one-out prototype needs two).

Snippet labels: snippet j of a video covers the frames f with min(⌊f/k⌋, m − 1) = j (k frames
per snippet, m snippets; the last snippet also covers the frames a feature extractor
dropped); it is anomalous when at least half of those frames are (ties count as anomalous).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from vadscene.audit.compute import metrics
from vadscene.audit.compute.bootstrap import percentile_interval
from vadscene.audit.compute.pairs import pair_counts
from vadscene.audit.io.features import Features
from vadscene.benchmark.frames import GroundTruth

READOUTS: tuple[tuple[str, str], ...] = (
    ("global", "micro"),
    ("per_category", "per_category"),
    ("within_video", "macro"),
)
"""(prototype granularity, the AUROC granularity that reads it)."""

LEFT_OUT_REASONS: dict[str, tuple[str, ...]] = {
    "global": ("of a benchmark without both anomalous and normal videos",),
    "per_category": (
        "of the Normal category",
        "of categories without both an anomalous and a normal snippet",
    ),
    "within_video": (
        "without both anomalous and normal frames",
        "mixed, with fewer than two snippets of a label",
    ),
}
"""Why a readout leaves a video out, per readout, in the order the report lists them."""

SNIPPET_LABEL_RULE = (
    "snippet j covers the frames f with min(floor(f/k), m-1) = j; it is anomalous when at "
    "least half of them are (ties: anomalous)"
)


def snippet_labels(ground_truth: GroundTruth, features: Features) -> list[np.ndarray]:
    """Each video's snippet labels by :data:`SNIPPET_LABEL_RULE`."""
    labels = []
    for i, z in enumerate(features.per_video):
        frames = ground_truth.labels[ground_truth.offsets[i] : ground_truth.offsets[i + 1]]
        snippet = np.minimum(np.arange(frames.size) // features.snippet_repeat, z.shape[0] - 1)
        anomalous = np.bincount(snippet, weights=frames, minlength=z.shape[0])
        total = np.bincount(snippet, minlength=z.shape[0])
        labels.append(2 * anomalous >= np.maximum(total, 1))
    return labels


def _cosine(dot: np.ndarray, left: np.ndarray, right: np.ndarray | float) -> np.ndarray:
    """dot / (left·right), 0 where either norm is 0."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((left > 0) & (right > 0), dot / (left * right), 0.0)


def prototype_scores(
    ground_truth: GroundTruth, features: Features
) -> tuple[dict[str, list[np.ndarray | None]], dict[str, list[str]]]:
    """Snippet scores q per readout and video (None: the video is not scored at that
    granularity), and per readout the reason (of :data:`LEFT_OUT_REASONS`) each video it
    does not score is left out, in video order.

    Two passes over the features: class sums per video, then one (m × d)·(d × 6) product per
    video against the global, category and own-video [normal, anomalous] vectors.
    """
    labels = snippet_labels(ground_truth, features)
    anomalous_frames = ground_truth.anomalous_counts()
    anomalous_video = anomalous_frames > 0
    video_sums, video_sizes = [], []
    for z, y in zip(features.per_video, labels, strict=True):
        video_sums.append(np.stack([z[~y].sum(0, dtype=np.float64), z[y].sum(0, dtype=np.float64)]))
        video_sizes.append(np.array([(~y).sum(), y.sum()], dtype=np.float64))
    sums, sizes = np.stack(video_sums), np.stack(video_sizes)  # (V, 2, d), (V, 2)
    by_video = sums.sum(1)
    global_sides = np.stack([by_video[~anomalous_video].sum(0), by_video[anomalous_video].sum(0)])
    global_sizes = np.array(
        [sizes[~anomalous_video].sum(), sizes[anomalous_video].sum()], dtype=np.float64
    )
    categories = np.array(ground_truth.categories, dtype=object)
    category_means = {}
    for category in set(ground_truth.categories) - {ground_truth.normal_category}:
        members = categories == category
        total = sizes[members].sum(0)
        if total.all():
            category_means[category] = sums[members].sum(0) / total[:, None]
    scores: dict[str, list[np.ndarray | None]] = {name: [] for name, _ in READOUTS}
    left_out: dict[str, list[str]] = {name: [] for name, _ in READOUTS}
    mixed = anomalous_video & (anomalous_frames < ground_truth.frame_counts)
    for i, z in enumerate(features.per_video):
        z = z.astype(np.float64, copy=False)
        prototype = category_means.get(ground_truth.categories[i])
        vectors = [
            global_sides / np.maximum(global_sizes, 1)[:, None],
            prototype if prototype is not None else np.zeros((2, z.shape[1])),
            sums[i],
        ]
        stacked = np.concatenate(vectors)  # rows: global −/+, category −/+, video sums −/+
        dots = z @ stacked.T
        z_norm = np.sqrt(np.einsum("ij,ij->i", z, z))
        norms = np.linalg.norm(stacked, axis=1)

        scores["global"].append(_margin(dots, z_norm, norms, 0) if global_sizes.all() else None)
        if not global_sizes.all():
            left_out["global"].append(LEFT_OUT_REASONS["global"][0])
        scores["per_category"].append(
            _margin(dots, z_norm, norms, 2) if prototype is not None else None
        )
        if prototype is None:
            normal = ground_truth.categories[i] == ground_truth.normal_category
            left_out["per_category"].append(LEFT_OUT_REASONS["per_category"][0 if normal else 1])
        if (sizes[i] < 2).any():
            left_out["within_video"].append(LEFT_OUT_REASONS["within_video"][int(mixed[i])])
            scores["within_video"].append(None)
        else:
            scores["within_video"].append(
                _leave_one_out(dots[:, 4:], z_norm, labels[i], sums[i], norms[4:])
            )
    return scores, left_out


def _margin(dots: np.ndarray, z_norm: np.ndarray, norms: np.ndarray, first: int) -> np.ndarray:
    """cos(z, p⁺) − cos(z, p⁻) with p⁻, p⁺ the vectors ``first``, ``first + 1``."""
    margin: np.ndarray = _cosine(dots[:, first + 1], z_norm, norms[first + 1]) - _cosine(
        dots[:, first], z_norm, norms[first]
    )
    return margin


def _leave_one_out(
    dots: np.ndarray, z_norm: np.ndarray, y: np.ndarray, sums: np.ndarray, sum_norms: np.ndarray
) -> np.ndarray:
    """q_i with the query left out of its own side's prototype, in closed form.

    For the side s holding z_i: n_s·p_s − z_i = S_s − z_i (S_s the side's sum), so with
    ⟨z_i, S_s − z_i⟩ = z_i·S_s − |z_i|² and |S_s − z_i|² = |S_s|² − 2 z_i·S_s + |z_i|²
    the cosine needs only z_i·S_s (the 1/(n_s − 1) scale cancels in a cosine). ``dots``
    holds z_i·S⁻ and z_i·S⁺ per snippet.
    """
    squares = z_norm**2
    cosines = np.empty_like(dots)
    for side in (0, 1):
        mine = y if side else ~y
        left_dot = np.where(mine, dots[:, side] - squares, dots[:, side])
        left_square = np.where(
            mine, sum_norms[side] ** 2 - 2 * dots[:, side] + squares, sum_norms[side] ** 2
        )
        cosines[:, side] = _cosine(left_dot, z_norm, np.sqrt(np.maximum(left_square, 0.0)))
    margin: np.ndarray = cosines[:, 1] - cosines[:, 0]
    return margin


def audit_features(
    ground_truth: GroundTruth,
    models: Sequence[Features],
    *,
    resamples: np.ndarray | None = None,
    by_category: np.ndarray | None = None,
) -> pd.DataFrame:
    """One row per model × readout: the prototype AUROC, its 95 % paired video bootstrap
    interval (``resamples``: the engine's multiplicities; ``by_category``: those of the
    per-category granularity, default ``resamples``), the videos it reads and those it
    leaves out, counted per reason (``left_out_reasons``, e.g. "3 of the Normal category";
    the categories named)."""
    rows = []
    video_index = ground_truth.video_index()
    categories = np.array(ground_truth.categories, dtype=object)
    weights, category_weights = (
        np.vstack(
            [metrics.ones(ground_truth.n_videos)]
            + ([draws] if draws is not None and draws.size else [])
        )
        for draws in (resamples, resamples if by_category is None else by_category)
    )
    for model in models:
        with threadpool_limits(limits=1, user_api="blas"):  # one small product per video
            scores, left_out = prototype_scores(ground_truth, model)
        for readout, granularity in READOUTS:
            frame_scores, scored = _frame_scores(
                ground_truth, scores[readout], model.snippet_repeat
            )
            keep = scored[video_index]
            labels = ground_truth.labels & keep
            a = np.bincount(video_index, weights=labels, minlength=ground_truth.n_videos)
            n = np.bincount(video_index, weights=~ground_truth.labels & keep, minlength=a.size)
            u = pair_counts(
                frame_scores[keep],
                ground_truth.labels[keep],
                video_index[keep],
                a.size,
                replicates=2 * weights.shape[0],
            )
            values = metrics.all_granularities(
                u,
                a,
                n,
                weights,
                categories,
                ground_truth.normal_category,
                by_category=category_weights,
            )[granularity]
            low, high = percentile_interval(values[1:]) if values.size > 1 else (np.nan, np.nan)
            rows.append(
                {
                    "model": model.name,
                    "family": model.family,
                    "readout": readout,
                    "granularity": granularity,
                    "auroc": float(values[0]),
                    "ci_low": low,
                    "ci_high": high,
                    "videos": int(scored.sum()),
                    "left_out": len(left_out[readout]),
                    "left_out_reasons": _reasons(
                        readout, left_out[readout], _unread_categories(ground_truth, scored)
                    ),
                }
            )
    return pd.DataFrame(rows, columns=READOUT_COLUMNS)


READOUT_COLUMNS = [
    "model",
    "family",
    "readout",
    "granularity",
    "auroc",
    "ci_low",
    "ci_high",
    "videos",
    "left_out",
    "left_out_reasons",
]


def _reasons(readout: str, reasons: list[str], categories: list[str]) -> str:
    """``"150 without both …; 3 mixed, …"``: the count per reason in the order of
    :data:`LEFT_OUT_REASONS`, the categories without a prototype named; "none" if none."""
    counts = []
    for reason in LEFT_OUT_REASONS[readout]:
        if n := reasons.count(reason):
            named = readout == "per_category" and reason == LEFT_OUT_REASONS[readout][1]
            counts.append(f"{n} {reason}" + (f" ({', '.join(categories)})" if named else ""))
    return "; ".join(counts) or "none"


def _unread_categories(ground_truth: GroundTruth, scored: np.ndarray) -> list[str]:
    """The anomaly categories none of whose videos a readout scored, sorted."""
    read = {c for c, s in zip(ground_truth.categories, scored, strict=True) if s}
    return sorted(set(ground_truth.categories) - read - {ground_truth.normal_category})


def _frame_scores(
    ground_truth: GroundTruth, per_video: list[np.ndarray | None], k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Snippet scores repeated over their frames (0 for unscored videos, masked out)."""
    out = np.zeros(ground_truth.n_frames)
    scored = np.array([q is not None for q in per_video])
    for i, q in enumerate(per_video):
        if q is None:
            continue
        n = ground_truth.offsets[i + 1] - ground_truth.offsets[i]
        snippet = np.minimum(np.arange(n) // k, q.size - 1)
        out[ground_truth.offsets[i] : ground_truth.offsets[i + 1]] = q[snippet]
    return out, scored
