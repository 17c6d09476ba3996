"""The pair-count matrix: one V × V matrix per model from which every AUROC variant follows.

    U[u, v] = Σ_{t anomalous in u} Σ_{s normal in v} τ(s_t, s_s),
    τ(x, y) = 1[x > y] + ½·1[x = y]       (docs/metrics.md "Pair counts"; [inside] App. C)

τ is exactly what ``sklearn.metrics.roc_auc_score`` counts, so micro AUROC = 1ᵀU1 / (A·N) and
every other granularity is a block or diagonal sum of U (see :mod:`vadscene.audit.metrics`).
Entries are half-integers, exact in float64 for any realistic benchmark.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

_CHUNK_CELLS = 4_000_000  # rows × videos per chunk: bounds memory at ~32 MB per buffer


class FrameRuns(NamedTuple):
    """Runs of consecutive frames sharing score, label and video, in frame order."""

    scores: np.ndarray  # float64
    labels: np.ndarray  # bool
    video: np.ndarray  # intp
    weight: np.ndarray  # float64 run length


def frame_runs(scores: np.ndarray, labels: np.ndarray, video_index: np.ndarray) -> FrameRuns:
    """Collapse runs of consecutive frames with the same score, label and video.

    Scores repeated per 16-frame snippet shrink sixteenfold before any sort; every frame is
    still counted through the run's weight.
    """
    scores = np.asarray(scores)
    labels = np.asarray(labels).astype(bool)
    video_index = np.asarray(video_index, dtype=np.intp)
    first = np.ones(scores.size, dtype=bool)
    first[1:] = (
        (scores[1:] != scores[:-1])
        | (labels[1:] != labels[:-1])
        | (video_index[1:] != video_index[:-1])
    )
    starts = np.flatnonzero(first)
    weight = np.diff(np.append(starts, scores.size)).astype(np.float64)
    return FrameRuns(scores[starts].astype(np.float64), labels[starts], video_index[starts], weight)


def merge_identical(
    scores: np.ndarray, labels: np.ndarray, video: np.ndarray, weight: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Sort weighted entries by score and merge neighbours with equal (score, label, video).

    Merging is only a saving — entries left apart count the same — so the fast unstable
    sort serves.
    """
    order = np.argsort(scores)
    s, y, v, w = scores[order], labels[order], video[order], weight[order]
    first = np.ones(s.size, dtype=bool)
    first[1:] = (s[1:] != s[:-1]) | (y[1:] != y[:-1]) | (v[1:] != v[:-1])
    starts = np.flatnonzero(first)
    return s[starts], y[starts], v[starts], np.add.reduceat(w, starts) if starts.size else w


def video_constant_pair_counts(values: np.ndarray, a: np.ndarray, n: np.ndarray) -> np.ndarray:
    """U for scores constant within each video (video means, the oracle): no sort needed.

    U[u, v] = a_u · n_v · τ(m_u, m_v) for video values m — the same matrix
    :func:`pair_count_matrix` gives those frame scores.
    """
    values = np.asarray(values, dtype=np.float64)
    above = (values[:, None] > values[None, :]) + 0.5 * (values[:, None] == values[None, :])
    return np.outer(a, n) * above


def pair_count_matrix(
    scores: np.ndarray, labels: np.ndarray, video_index: np.ndarray, n_videos: int
) -> np.ndarray:
    """U[u, v] for one model's frame scores: float64, shape (n_videos, n_videos).

    Parameters
    ----------
    scores : (F,) finite scores; compared as float64 (upcasting float32 keeps ties).
    labels : (F,) 0/1 or bool, 1 = anomalous frame.
    video_index : (F,) int in [0, n_videos), the video of each frame.

    Method (no loop over frames or pairs): runs of identical consecutive frames
    (:func:`frame_runs`) are sorted once by score and identical (score, label, video)
    entries merged with their multiplicity w (:func:`merge_identical`). For a normal entry
    s of video v, the anomalous entries of video u above it count
    A_u − ½(C_u(k⁻_s) + C_u(k⁺_s)), where k⁻/k⁺ = searchsorted left/right of s into the
    sorted anomalous scores and C_u(k) = weight of u among the first k of them. Summing by
    videos gives U = a ⊗ n − R with R[u, v] = Σ_j [u_j = u] w_j T[j, v], where
    T[j, v] = ½ Σ_{s ∈ v} w_s (1[k⁻_s > j] + 1[k⁺_s > j]) is a suffix sum over j computed
    in chunks. Cost O(F + F' log F' + A'·V) for F' runs and A' distinct anomalous entries
    (scores repeated per 16-frame snippet: F' ≈ F/16).

    Examples
    --------
    >>> pair_count_matrix(np.array([0.9, 0.1, 0.5, 0.5]), np.array([1, 0, 1, 0]),
    ...                   np.array([0, 0, 1, 1]), 2).tolist()
    [[1.0, 1.0], [1.0, 0.5]]
    """
    return pair_counts_of_runs(frame_runs(scores, labels, video_index), n_videos)


def pair_counts_of_runs(runs: FrameRuns, n_videos: int) -> np.ndarray:
    """:func:`pair_count_matrix` of frames already collapsed by :func:`frame_runs`."""
    s, y, v, weight = merge_identical(*runs)
    anomalous_scores, anomalous_video, anomalous_weight = s[y], v[y], weight[y]
    normal_scores, normal_video, normal_weight = s[~y], v[~y], weight[~y]
    if anomalous_scores.size == 0 or normal_scores.size == 0:
        return np.zeros((n_videos, n_videos))
    anomalous_total = np.bincount(anomalous_video, anomalous_weight, minlength=n_videos)
    normal_total = np.bincount(normal_video, normal_weight, minlength=n_videos)

    # Events: each normal entry adds w/2 at k⁻ and at k⁺ (positions in the anomalous order).
    event_k = np.concatenate(
        [
            np.searchsorted(anomalous_scores, normal_scores, "left"),
            np.searchsorted(anomalous_scores, normal_scores, "right"),
        ]
    )
    by_k = np.argsort(event_k, kind="stable")  # two sorted runs: a linear merge
    event_k = event_k[by_k]
    event_video = np.concatenate([normal_video, normal_video])[by_k]
    event_weight = np.concatenate([normal_weight, normal_weight])[by_k] * 0.5

    rows = anomalous_scores.size
    top = np.searchsorted(event_k, rows, "left")  # normal entries above every anomalous one
    tail = np.bincount(event_video[top:], event_weight[top:], minlength=n_videos)  # k ≥ j1
    reduction = np.zeros((n_videos, n_videos))
    chunk = max(1, _CHUNK_CELLS // max(n_videos, 1))
    for j1 in range(rows, 0, -chunk):
        j0 = max(0, j1 - chunk)
        lo = np.searchsorted(event_k, j0, "left")
        hi = np.searchsorted(event_k, j1, "left")
        # Row m holds events at k = j1 − m (row 0 stays empty); after the cumulative sum,
        # row m = Σ events with j1 − m ≤ k < j1, so T[j] − tail = row j1 − 1 − j.
        cumulative = (
            np.bincount(
                (j1 - event_k[lo:hi]) * n_videos + event_video[lo:hi],
                weights=event_weight[lo:hi],
                minlength=(j1 - j0 + 1) * n_videos,
            )
            .reshape(j1 - j0 + 1, n_videos)
            .astype(np.float64, copy=False)
        )  # empty → int64
        np.cumsum(cumulative, axis=0, out=cumulative)
        owner = anomalous_video[j0:j1]
        group = np.argsort(owner, kind="stable")
        owner_sorted = owner[group]
        weights = anomalous_weight[j0:j1][group]
        weighted = np.take(cumulative, (j1 - 1 - j0) - group, axis=0)
        weighted *= weights[:, None]
        boundaries = np.flatnonzero(np.r_[True, owner_sorted[1:] != owner_sorted[:-1]])
        owners = owner_sorted[boundaries]
        reduction[owners] += np.add.reduceat(weighted, boundaries, axis=0)
        reduction[owners] += np.outer(np.add.reduceat(weights, boundaries), tail)
        tail = tail + cumulative[-1]
    return np.outer(anomalous_total, normal_total) - reduction
