"""The audit's V × V engine as it was before the pair counts became rectangular or swept: the
slow reference the new ways of counting must equal, and the draws tests make up themselves.

``DenseCounts`` holds the whole V × V matrix U (filled by a double loop over frame pairs) and
answers the engine's sums by the same einsum the old engine computed; everything the metrics
do with it goes through :class:`vadscene.audit.compute.pairs.PairCounts`.
"""

from __future__ import annotations

import numpy as np

from vadscene.audit.compute.pairs import PairCounts


def brute_u(scores, labels, video, n_videos) -> np.ndarray:
    """U[u, v] by the definition: every anomalous frame of u against every normal frame of v."""
    labels = np.asarray(labels).astype(bool)
    u = np.zeros((n_videos, n_videos))
    for t in np.flatnonzero(labels):
        for s in np.flatnonzero(~labels):
            u[video[t], video[s]] += (
                1.0 if scores[t] > scores[s] else (0.5 if scores[t] == scores[s] else 0.0)
            )
    return u


class DenseCounts(PairCounts):
    """U as a full V × V matrix."""

    def __init__(self, matrix: np.ndarray) -> None:
        self.matrix, self.n_videos = np.asarray(matrix, dtype=np.float64), len(matrix)

    def block_sums(self, multiplicities, row_groups, column_groups, shape) -> np.ndarray:
        rows = np.zeros((self.n_videos, shape[0]))
        rows[np.flatnonzero(row_groups >= 0), row_groups[row_groups >= 0]] = 1.0
        columns = np.zeros((self.n_videos, shape[1]))
        columns[np.flatnonzero(column_groups >= 0), column_groups[column_groups >= 0]] = 1.0
        k = np.asarray(multiplicities, dtype=np.float64)
        return np.einsum("ru,rv,uv,ui,vj->rij", k, k, self.matrix, rows, columns)

    def video_sums(self):
        return np.diag(self.matrix).copy(), self.matrix.sum(1), self.matrix.sum(0)


def dense_counts(scores, labels, video, n_videos) -> DenseCounts:
    return DenseCounts(brute_u(scores, labels, video, n_videos))


def video_multiplicities(n_videos: int, replicates: int, rng: np.random.Generator) -> np.ndarray:
    """(replicates, V) copy counts of V videos drawn uniformly with replacement."""
    if replicates == 0 or n_videos == 0:
        return np.zeros((replicates, n_videos))
    return rng.multinomial(n_videos, np.full(n_videos, 1.0 / n_videos), size=replicates).astype(
        np.float64
    )


def stratified_multiplicities(strata, replicates: int, rng: np.random.Generator) -> np.ndarray:
    """(replicates, V): the n_s videos of every stratum s drawn with replacement within s."""
    names, codes = np.unique(np.asarray(strata).astype(str), return_inverse=True)
    counts = np.zeros((replicates, codes.size))
    for code in range(names.size):
        members = np.flatnonzero(codes == code)
        counts[:, members] = rng.multinomial(
            members.size, np.full(members.size, 1.0 / members.size), size=replicates
        )
    return counts
