"""The pair-count matrix: one V × V matrix per model from which every AUROC variant follows.

    U[u, v] = Σ_{t anomalous in u} Σ_{s normal in v} τ(s_t, s_s),
    τ(x, y) = 1[x > y] + ½·1[x = y]       (docs/metrics.md "Pair counts"; [inside] App. C)

τ is exactly what ``sklearn.metrics.roc_auc_score`` counts, so micro AUROC = 1ᵀU1 / (A·N) and
every other granularity is a block or diagonal sum of U (see :mod:`vadscene.audit.compute.metrics`).
Entries are half-integers, exact in float64 for any realistic benchmark.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit


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


def video_constant_pair_counts(values: np.ndarray, a: np.ndarray, n: np.ndarray) -> np.ndarray:
    """U for scores constant within each video (video means, the oracle): no sort needed.

    U[u, v] = a_u · n_v · τ(m_u, m_v) for video values m — the same matrix
    :func:`pair_count_matrix` gives those frame scores.
    """
    values = np.asarray(values, dtype=np.float64)
    above = (values[:, None] > values[None, :]) + 0.5 * (values[:, None] == values[None, :])
    counts: np.ndarray = np.outer(a, n) * above
    return counts


def pair_count_matrix(
    scores: np.ndarray, labels: np.ndarray, video_index: np.ndarray, n_videos: int
) -> np.ndarray:
    """U[u, v] for one model's frame scores: float64, shape (n_videos, n_videos).

    Parameters
    ----------
    scores : (F,) finite scores; compared as float64 (upcasting float32 keeps ties).
    labels : (F,) 0/1 or bool, 1 = anomalous frame.
    video_index : (F,) int in [0, n_videos), the video of each frame.

    Method: runs of identical consecutive frames (:func:`frame_runs`) are sorted once by
    score and counted by :func:`sorted_pair_counts`. Cost O(F + F' log F' + A'·V) for F'
    runs and A' anomalous runs (scores repeated per 16-frame snippet: F' ≈ F/16).

    Examples
    --------
    >>> pair_count_matrix(np.array([0.9, 0.1, 0.5, 0.5]), np.array([1, 0, 1, 0]),
    ...                   np.array([0, 0, 1, 1]), 2).tolist()
    [[1.0, 1.0], [1.0, 0.5]]
    """
    return pair_counts_of_runs(frame_runs(scores, labels, video_index), n_videos)


def pair_counts_of_runs(runs: FrameRuns, n_videos: int) -> np.ndarray:
    """:func:`pair_count_matrix` of frames already collapsed by :func:`frame_runs`."""
    order = np.argsort(runs.scores)  # ties form one group in the count: no stable sort needed
    video = runs.video.astype(np.int64)
    return sorted_pair_counts(
        runs.scores[order],
        np.where(runs.labels, video, -1)[order],
        np.where(runs.labels, -1, video)[order],
        runs.weight[order],
        (n_videos, n_videos),
    )


def sorted_pair_counts(
    scores: np.ndarray,
    row: np.ndarray,
    column: np.ndarray,
    weight: np.ndarray,
    shape: tuple[int, int],
) -> np.ndarray:
    """W[r, c] = Σ_{t: row_t = r} Σ_{s: column_s = c} w_t·w_s·τ(x_t, x_s) over weighted
    entries sorted by score x (ascending); row or column −1: the entry plays no such role, and
    an entry may play both (then it meets itself with τ = ½, as a frame listed on both sides).

    The one pair-count engine of the audit (docs/metrics.md "Pair counts"): U is W with
    anomalous runs as rows and normal runs as columns; the definition probes use anomalous
    units as rows and every unit as columns. Every entry is a half-integer, exact in float64,
    so the result does not depend on the order of the additions.
    """
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    counts: np.ndarray = _count_sorted(
        scores,
        np.ascontiguousarray(row, dtype=np.int64),
        np.ascontiguousarray(column, dtype=np.int64),
        np.ascontiguousarray(weight, dtype=np.float64),
        shape[0],
        shape[1],
    )
    return counts


@njit(cache=True, nogil=True)
def _count_sorted(scores, row, column, weight, n_rows, n_columns):  # type: ignore[no-untyped-def]
    # One ascending sweep over the tie groups. ``below`` holds each column's weight under the
    # current group plus half of the group's own (τ = ½ on ties), so a row entry of the group
    # adds w_t·below to its row: O(entries + row entries × columns), no pair enumerated.
    counts = np.zeros((n_rows, n_columns))
    below = np.zeros(n_columns)
    size = scores.size
    first = 0
    while first < size:
        end = first + 1
        while end < size and scores[end] == scores[first]:
            end += 1
        for s in range(first, end):
            if column[s] >= 0:
                below[column[s]] += 0.5 * weight[s]
        for t in range(first, end):
            if row[t] >= 0:
                target = counts[row[t]]
                w = weight[t]
                for c in range(n_columns):
                    target[c] += w * below[c]
        for s in range(first, end):
            if column[s] >= 0:
                below[column[s]] += 0.5 * weight[s]
        first = end
    return counts
