"""Pair counts: how often an anomalous frame of video u outscores a normal frame of video v.

    U[u, v] = Σ_{t anomalous in u} Σ_{s normal in v} τ(s_t, s_s),
    τ(x, y) = 1[x > y] + ½·1[x = y]       (docs/metrics.md "Pair counts"; [inside] App. C)

τ is exactly what ``sklearn.metrics.roc_auc_score`` counts, so micro AUROC = 1ᵀU1 / (A·N) and
every other granularity is a block or diagonal sum of U weighted by the video multiplicities k
of a bootstrap replicate (see :mod:`vadscene.audit.compute.metrics`). U itself is never built
as a V × V matrix; :class:`PairCounts` answers the sums the metrics need, in one of two ways
chosen by cost (:func:`pair_counts_of_runs`):

- :class:`RectangularCounts` keeps the rows of U that can be non-zero, the videos with
  anomalous frames, as an (R × V) matrix: cheap when R·V is small (benchmarks of a few
  thousand videos), and every replicate is then a matrix product;
- :class:`SweptCounts` keeps the frames' runs sorted by score and sweeps them once per block
  of replicates with the replicates' weights: memory and time linear in the frames, for
  benchmarks whose R × V would be large.

Every sum is of half-integers, exact in float64 for any realistic benchmark, so both give the
same numbers to the last bit whatever the order of the additions.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from concurrent.futures import ThreadPoolExecutor
from functools import cached_property
from typing import NamedTuple

import numpy as np

from vadscene.core.kernels import compiled

RECTANGULAR_MAX_BYTES = 2**30
"""Above this size of the (R × V) matrix the counts are swept, whatever the cost model says."""
MATRIX_PRODUCT_SPEEDUP = 10.0
"""How many more pair-count terms per second a matrix product adds than the sweep: the cost
model's exchange rate between the two ways (docs/benchmarks.md)."""


SPLIT_SORT_MIN = 4_000_000
"""From this many values on, :func:`ascending_order` sorts two halves at once."""


def ascending_order(values: np.ndarray) -> np.ndarray:
    """The indices that sort ``values`` ascending, ties in any order (``np.argsort``).

    A large array is sorted as two halves on two threads (numpy's sort releases the GIL) and
    the halves merged: a model's one sort is the longest step nothing else can overlap when
    a benchmark has one model."""
    values = np.asarray(values)
    if values.size < SPLIT_SORT_MIN:
        return np.argsort(values)
    half = values.size // 2
    with ThreadPoolExecutor(2) as pool:
        first, second = pool.map(np.argsort, (values[:half], values[half:]))
    merged: np.ndarray = _merged_orders(values, first, second, half)
    return merged


@compiled()
def _merged_orders(values, first, second, offset):  # type: ignore[no-untyped-def]
    # the two halves' orders merged by value; ``second`` indexes the half starting at offset
    merged = np.empty(first.size + second.size, dtype=np.int64)
    i = j = 0
    for position in range(merged.size):
        if j == second.size or (i < first.size and values[first[i]] <= values[second[j] + offset]):
            merged[position] = first[i]
            i += 1
        else:
            merged[position] = second[j] + offset
            j += 1
    return merged


class FrameRuns(NamedTuple):
    """Runs of consecutive frames sharing score, label and video, in frame order."""

    scores: np.ndarray  # float64
    labels: np.ndarray  # bool
    video: np.ndarray  # integer video number
    weight: np.ndarray  # float64 run length


def frame_runs(scores: np.ndarray, labels: np.ndarray, video_index: np.ndarray) -> FrameRuns:
    """Collapse runs of consecutive frames with the same score, label and video.

    Scores repeated per 16-frame snippet shrink sixteenfold before any sort; every frame is
    still counted through the run's weight. float32 scores are compared as float64, which
    keeps their ties.
    """
    scores, labels = np.asarray(scores), np.asarray(labels, dtype=bool)
    video_index = np.asarray(video_index)  # any integer type: int32 halves a large benchmark's
    first = _run_starts(scores, labels)
    first[1:] |= video_index[1:] != video_index[:-1]
    starts = np.flatnonzero(first)
    return _runs_at(starts, scores, labels, video_index[starts])


def runs_of_videos(scores: np.ndarray, labels: np.ndarray, offsets: np.ndarray) -> FrameRuns:
    """:func:`frame_runs` of frames stored video after video, video v's from ``offsets[v]`` to
    ``offsets[v + 1]``: each video's first frame starts a run, and the runs' videos are
    counted off the offsets, so no frame-sized video index is read or built."""
    scores, labels = np.asarray(scores), np.asarray(labels, dtype=bool)
    offsets = np.asarray(offsets)
    first = _run_starts(scores, labels)
    first[offsets[:-1][offsets[:-1] < scores.size]] = True
    starts = np.flatnonzero(first)
    n_videos = offsets.size - 1
    dtype = np.int32 if n_videos < 2**31 else np.int64
    video = np.repeat(np.arange(n_videos, dtype=dtype), np.diff(np.searchsorted(starts, offsets)))
    return _runs_at(starts, scores, labels, video)


def _run_starts(scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Where a frame's score or label differs from the frame before (the first frame too)."""
    first = np.ones(scores.size, dtype=bool)
    # one comparison at a time into ``first``: a frame-sized temporary each, not four
    np.not_equal(scores[1:], scores[:-1], out=first[1:])
    first[1:] |= labels[1:] != labels[:-1]
    return first


def _runs_at(
    starts: np.ndarray, scores: np.ndarray, labels: np.ndarray, video: np.ndarray
) -> FrameRuns:
    weight = np.diff(np.append(starts, scores.size)).astype(np.float64)
    return FrameRuns(scores[starts].astype(np.float64), labels[starts], video, weight)


class PairCounts(ABC):
    """The sums of U (and of its weighted blocks) the metrics read; V = ``n_videos``."""

    n_videos: int

    @abstractmethod
    def block_sums(
        self,
        multiplicities: np.ndarray,
        row_groups: np.ndarray,
        column_groups: np.ndarray,
        shape: tuple[int, int],
    ) -> np.ndarray:
        """S[r, i, j] = Σ_{u: g_u = i} Σ_{v: h_v = j} k_u k_v U[u, v] for every replicate r
        of ``multiplicities`` K (R, V), row groups g and column groups h (V,) in
        [0, shape) or −1 (left out): shape (R, *shape)."""

    @abstractmethod
    def video_sums(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(U_vv, (U1)_v, (1ᵀU)_v): the diagonal, row sums and column sums, each (V,)."""

    def pooled(self, multiplicities: np.ndarray) -> np.ndarray:
        """kᵀUk per replicate."""
        everyone = np.zeros(self.n_videos, dtype=np.intp)
        return self.block_sums(multiplicities, everyone, everyone, (1, 1))[:, 0, 0]

    def category_blocks(
        self, multiplicities: np.ndarray, codes: np.ndarray, n_codes: int, normal: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """The blocks of :meth:`block_sums` (``codes`` grouping both rows and columns) that the
        per-category AUROCs read: S[r, c, c] and S[r, c, normal] (zeros when ``normal`` is
        −1, no such code), each (R, n_codes)."""
        return _same_and_beside(
            self.block_sums(multiplicities, codes, codes, (n_codes, n_codes)), normal
        )

    def granularity_sums(
        self,
        shared: np.ndarray,
        by_category: np.ndarray,
        codes: np.ndarray,
        n_codes: int,
        normal: int,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`pooled` of the ``shared`` multiplicities and :meth:`category_blocks` of the
        ``by_category`` ones (the same array, or other draws of the same videos).

        Here one pass of :meth:`block_sums` over both at once, for counts whose cost is per
        pass (the sweep): every video has a code, so a replicate's blocks add up to its
        pooled count.
        """
        if by_category is shared:
            blocks = self.block_sums(shared, codes, codes, (n_codes, n_codes))
            return blocks.sum((1, 2)), *_same_and_beside(blocks, normal)
        both = self.block_sums(
            np.concatenate([shared, by_category]), codes, codes, (n_codes, n_codes)
        )
        split = shared.shape[0]
        return both[:split].sum((1, 2)), *_same_and_beside(both[split:], normal)

    def diagonal(self) -> np.ndarray:
        return self.video_sums()[0]


def _same_and_beside(blocks: np.ndarray, column: int) -> tuple[np.ndarray, np.ndarray]:
    """The diagonal blocks S[r, c, c] and the column S[r, c, column] (zeros for −1) of block
    sums (R, C, C)."""
    diagonal = np.arange(blocks.shape[1])
    beside = blocks[:, :, column] if column >= 0 else np.zeros(blocks.shape[:2])
    return blocks[:, diagonal, diagonal], beside


class RectangularCounts(PairCounts):
    """U as its rows ``rows`` (the videos whose row can be non-zero) × all V videos."""

    def __init__(self, rows: np.ndarray, matrix: np.ndarray, n_videos: int) -> None:
        self.rows, self.matrix, self.n_videos = rows, matrix, n_videos

    def block_sums(
        self,
        multiplicities: np.ndarray,
        row_groups: np.ndarray,
        column_groups: np.ndarray,
        shape: tuple[int, int],
    ) -> np.ndarray:
        k = np.asarray(multiplicities, dtype=np.float64)
        sums = np.zeros((k.shape[0], *shape))
        groups = row_groups[self.rows]
        kept = groups >= 0
        member = np.zeros((self.rows.size, shape[0]))
        member[np.flatnonzero(kept), groups[kept]] = 1.0
        row_weights = k[:, self.rows]
        for j in range(shape[1]):
            columns = np.flatnonzero(column_groups == j)
            if not columns.size or not kept.any():
                continue
            # (k restricted to the columns of group j) · Uᵀ: each row's weighted pair count
            per_row = k[:, columns] @ self.matrix[:, columns].T
            sums[:, :, j] = (per_row * row_weights) @ member
        return sums

    def pooled(self, multiplicities: np.ndarray) -> np.ndarray:
        # one product over all columns: Σ_u k_u (Σ_v k_v U[u, v])
        k = np.asarray(multiplicities, dtype=np.float64)
        pooled: np.ndarray = np.einsum("ru,ru->r", k @ self.matrix.T, k[:, self.rows])
        return pooled

    def category_blocks(
        self, multiplicities: np.ndarray, codes: np.ndarray, n_codes: int, normal: int
    ) -> tuple[np.ndarray, np.ndarray]:
        # Only the blocks asked for: the Normal columns against every row in one product, and
        # each category's own rows against its own columns — not every (row, column) code pair.
        k = np.asarray(multiplicities, dtype=np.float64)
        same, beside = np.zeros((k.shape[0], n_codes)), np.zeros((k.shape[0], n_codes))
        row_codes = codes[self.rows]
        row_weights = k[:, self.rows]
        if normal >= 0:
            columns = np.flatnonzero(codes == normal)
            per_row = k[:, columns] @ self.matrix[:, columns].T
            per_row *= row_weights
            member = np.zeros((self.rows.size, n_codes))
            member[np.arange(self.rows.size), row_codes] = 1.0
            beside = per_row @ member
        for code in np.unique(row_codes):
            rows = np.flatnonzero(row_codes == code)
            columns = np.flatnonzero(codes == code)
            per_row = k[:, columns] @ self.matrix[np.ix_(rows, columns)].T
            same[:, code] = np.einsum("ru,ru->r", per_row, row_weights[:, rows])
        return same, beside

    def granularity_sums(
        self,
        shared: np.ndarray,
        by_category: np.ndarray,
        codes: np.ndarray,
        n_codes: int,
        normal: int,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # two products of their own beat one over every block of both
        return self.pooled(shared), *self.category_blocks(by_category, codes, n_codes, normal)

    @cached_property
    def _video_sums(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        diagonal, row_sums = np.zeros(self.n_videos), np.zeros(self.n_videos)
        diagonal[self.rows] = self.matrix[np.arange(self.rows.size), self.rows]
        row_sums[self.rows] = self.matrix.sum(1)
        return diagonal, row_sums, self.matrix.sum(0)

    def video_sums(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self._video_sums


class SweptCounts(PairCounts):
    """Weighted entries sorted by score, swept for every sum asked.

    An entry t of video ``video[t]`` plays a row (anomalous) role with weight
    ``row_weight[t]`` and a column (normal) role with ``column_weight[t]``; ``new_group[t]``
    marks the first entry of each group of equal scores. An entry playing both roles meets
    itself with τ = ½, as a frame listed on both sides.
    """

    def __init__(
        self,
        new_group: np.ndarray,
        video: np.ndarray,
        row_weight: np.ndarray,
        column_weight: np.ndarray,
        n_videos: int,
    ) -> None:
        self.new_group, self.video = new_group, video
        self.row_weight, self.column_weight, self.n_videos = row_weight, column_weight, n_videos

    @classmethod
    def of_scores(
        cls,
        scores: np.ndarray,
        video: np.ndarray,
        row_weight: np.ndarray,
        column_weight: np.ndarray,
        n_videos: int,
        order: np.ndarray | None = None,
    ) -> SweptCounts:
        """Sort weighted entries by score (ties form one group: no stable sort needed);
        ``order``: their ascending order, when already known."""
        order = ascending_order(scores) if order is None else order
        ordered = scores[order]
        new_group = np.ones(ordered.size, dtype=bool)
        new_group[1:] = ordered[1:] != ordered[:-1]
        return cls(
            new_group,
            video[order],
            np.ascontiguousarray(row_weight[order], dtype=np.float64),
            np.ascontiguousarray(column_weight[order], dtype=np.float64),
            n_videos,
        )

    def block_sums(
        self,
        multiplicities: np.ndarray,
        row_groups: np.ndarray,
        column_groups: np.ndarray,
        shape: tuple[int, int],
    ) -> np.ndarray:
        # Video-major weights, a run reading its video's k of every replicate contiguously;
        # copy counts as bytes where they fit (they almost always do): the runs come in score
        # order, each from any video, and the sweep's time is these rows' reads.
        k = np.asarray(multiplicities, dtype=np.float64)
        as_bytes = k.astype(np.uint8) if k.size == 0 or (k.min() >= 0 and k.max() <= 255) else None
        if as_bytes is not None and np.array_equal(as_bytes, k):  # whole counts: a byte each
            k = np.ascontiguousarray(as_bytes.T)
        else:
            k = np.ascontiguousarray(k.T)
        sums = _sweep_blocks(
            self.new_group,
            self.video,
            np.asarray(row_groups, dtype=np.int64),
            np.asarray(column_groups, dtype=np.int64),
            self.row_weight,
            self.column_weight,
            k,
            shape[0],
            shape[1],
        )
        return np.ascontiguousarray(np.moveaxis(sums, 2, 0))

    @cached_property
    def _video_sums(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        diagonal, row_sums, column_sums = _sweep_videos(
            self.new_group, self.video, self.row_weight, self.column_weight, self.n_videos
        )
        return diagonal, row_sums, column_sums

    def video_sums(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self._video_sums


def pair_counts(
    scores: np.ndarray,
    labels: np.ndarray,
    video_index: np.ndarray,
    n_videos: int,
    *,
    replicates: int = 1,
    method: str = "auto",
) -> PairCounts:
    """U for one model's frame scores (F,), 0/1 labels (F,) and videos (F,) in [0, n_videos).

    Runs of identical consecutive frames (:func:`frame_runs`) are counted by
    :func:`pair_counts_of_runs`, which picks the cheaper way for ``replicates`` replicates.

    Examples
    --------
    >>> u = pair_counts(np.array([0.9, 0.1, 0.5, 0.5]), np.array([1, 0, 1, 0]),
    ...                 np.array([0, 0, 1, 1]), 2)
    >>> u.block_sums(np.ones((1, 2)), np.arange(2), np.arange(2), (2, 2))[0].tolist()
    [[1.0, 1.0], [1.0, 0.5]]
    """
    return pair_counts_of_runs(
        frame_runs(scores, labels, video_index), n_videos, replicates=replicates, method=method
    )


PAIR_COUNT_METHODS = ("auto", "rectangular", "swept")


def pair_counts_of_runs(
    runs: FrameRuns,
    n_videos: int,
    *,
    replicates: int = 1,
    method: str = "auto",
    order: np.ndarray | None = None,
) -> PairCounts:
    """:func:`pair_counts` of frames already collapsed by :func:`frame_runs` (``order``: the
    runs' ascending score order, when already known).

    ``method="auto"`` compares the cost of the rectangular matrix — filling it, A'·V for A'
    anomalous runs, plus its products, replicates·R·V at :data:`MATRIX_PRODUCT_SPEEDUP` — with
    sweeping the F' runs once per replicate, and keeps the matrix only below
    :data:`RECTANGULAR_MAX_BYTES`.
    """
    if method not in PAIR_COUNT_METHODS:
        raise ValueError(f"method {method!r}: expected one of {', '.join(PAIR_COUNT_METHODS)}")
    rows = np.unique(runs.video[runs.labels])
    if method == "auto":
        method, _ = pair_count_cost(
            runs.scores.size, int(runs.labels.sum()), rows.size, n_videos, replicates
        )
    labels = runs.labels
    if method == "swept":
        return sorted_runs(runs, n_videos, order)
    rank = np.full(n_videos, -1, dtype=np.int64)
    rank[rows] = np.arange(rows.size)
    # ties form one group in the count: no stable sort needed
    order = ascending_order(runs.scores) if order is None else order
    video = runs.video.astype(np.int64)
    matrix = sorted_pair_counts(
        runs.scores[order],
        np.where(labels, rank[video], -1)[order],
        np.where(labels, -1, video)[order],
        runs.weight[order],
        (rows.size, n_videos),
    )
    return RectangularCounts(rows, matrix, n_videos)


def sorted_runs(
    runs: FrameRuns,
    n_videos: int,
    order: np.ndarray | None = None,
    counts: PairCounts | None = None,
) -> SweptCounts:
    """The runs as sweep entries in ascending score order (``order``, when already known): an
    anomalous run a row of its weight, a normal one a column. ``counts`` itself when it is
    these runs swept already (the pair counts of a large benchmark), so nothing is sorted or
    copied twice."""
    if isinstance(counts, SweptCounts) and counts.video.size == runs.scores.size:
        return counts
    return SweptCounts.of_scores(
        runs.scores,
        runs.video,
        np.where(runs.labels, runs.weight, 0.0),
        np.where(runs.labels, 0.0, runs.weight),
        n_videos,
        order,
    )


def pair_count_cost(
    runs: int, anomalous_runs: int, rows: int, videos: int, weighings: int, method: str = "auto"
) -> tuple[str, float]:
    """How :func:`pair_counts_of_runs` counts F' = ``runs`` runs, A' of them anomalous, in
    R = ``rows`` videos with anomalous frames of V, for ``weighings`` evaluations, and the
    cost it weighs that way: the rectangular matrix, A'·V + weighings·R·V /
    :data:`MATRIX_PRODUCT_SPEEDUP`, or the sweep, weighings·(F' + A'); ``auto``: the cheaper,
    the matrix only up to :data:`RECTANGULAR_MAX_BYTES`."""
    rectangular = anomalous_runs * videos + weighings * rows * videos / MATRIX_PRODUCT_SPEEDUP
    swept = weighings * (runs + anomalous_runs)
    if method == "auto":
        small = 8 * rows * videos <= RECTANGULAR_MAX_BYTES
        method = "rectangular" if small and rectangular <= swept else "swept"
    return method, float(rectangular if method == "rectangular" else swept)


def video_constant_counts(values: np.ndarray, a: np.ndarray, n: np.ndarray) -> SweptCounts:
    """U for scores constant within each video (video means, the oracle): one sort of the V
    video values, each video an entry with row weight a_v and column weight n_v, so
    U[u, v] = a_u · n_v · τ(m_u, m_v) — the counts :func:`pair_counts` gives those frame
    scores (within a video every pair ties: U_vv = ½ a_v n_v)."""
    values = np.asarray(values, dtype=np.float64)
    return SweptCounts.of_scores(
        values, np.arange(values.size), np.asarray(a, float), np.asarray(n, float), values.size
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

    The matrix form of the pair counts (docs/metrics.md "Pair counts"): the rectangular U has
    the anomalous videos' runs as rows and normal runs as columns; the definition probes use
    anomalous units as rows and every unit as columns. Every entry is a half-integer, exact in
    float64, so the result does not depend on the order of the additions.
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


@compiled()
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


@compiled()
def _sweep_blocks(  # type: ignore[no-untyped-def]
    new_group, video, row_groups, column_groups, row_weight, column_weight, k, n_rows, n_columns
):
    # The sweep of _count_sorted with every replicate at once: ``below[j, r]`` is column
    # group j's weight (k of its video times the entry's weight) under the current tie group,
    # plus half the group's own; a row entry adds its weight times ``below`` to its group.
    # ``row_groups`` / ``column_groups`` are per video; an entry has its video's group in a
    # role it has weight in, else none (-1): looked up here, once per entry, rather than as
    # two entry-sized arrays made for every call.
    replicates = k.shape[1]
    sums = np.zeros((n_rows, n_columns, replicates))
    below = np.zeros((n_columns, replicates))
    size = video.size
    first = 0
    while first < size:
        end = first + 1
        while end < size and not new_group[end]:
            end += 1
        v = video[first]
        g = row_groups[v] if row_weight[first] > 0 else -1
        h = column_groups[v] if column_weight[first] > 0 else -1
        if end == first + 1 and (g < 0 or h < 0):
            # the common case, an entry of one role alone at its score: no halves to split
            if h >= 0:
                w = column_weight[first]
                for r in range(replicates):
                    below[h, r] += w * k[v, r]
            elif g >= 0:
                w = row_weight[first]
                for j in range(n_columns):
                    for r in range(replicates):
                        sums[g, j, r] += w * k[v, r] * below[j, r]
            first = end
            continue
        for half in range(2):
            if half == 1:
                for t in range(first, end):
                    v = video[t]
                    g = row_groups[v] if row_weight[t] > 0 else -1
                    if g >= 0:
                        w = row_weight[t]
                        for j in range(n_columns):
                            for r in range(replicates):
                                sums[g, j, r] += w * k[v, r] * below[j, r]
            for s in range(first, end):
                v = video[s]
                h = column_groups[v] if column_weight[s] > 0 else -1
                if h >= 0:
                    w = 0.5 * column_weight[s]
                    for r in range(replicates):
                        below[h, r] += w * k[v, r]
        first = end
    return sums


@compiled()
def _sweep_videos(new_group, video, row_weight, column_weight, n_videos):  # type: ignore[no-untyped-def]
    # One sweep for the diagonal and the row and column sums: a row entry meets the column
    # weight below it in its own video (diagonal) and overall (row sum); a column entry meets
    # the row weight above it, the total row weight less what lies below (column sum).
    diagonal = np.zeros(n_videos)
    row_sums = np.zeros(n_videos)
    column_sums = np.zeros(n_videos)
    below_own = np.zeros(n_videos)
    below_columns = 0.0
    below_rows = 0.0
    total_rows = row_weight.sum()
    size = video.size
    first = 0
    while first < size:
        end = first + 1
        while end < size and not new_group[end]:
            end += 1
        for s in range(first, end):
            below_own[video[s]] += 0.5 * column_weight[s]
            below_columns += 0.5 * column_weight[s]
            below_rows += 0.5 * row_weight[s]
        for t in range(first, end):
            v = video[t]
            if row_weight[t] > 0:
                diagonal[v] += row_weight[t] * below_own[v]
                row_sums[v] += row_weight[t] * below_columns
            if column_weight[t] > 0:
                column_sums[v] += column_weight[t] * (total_rows - below_rows)
        for s in range(first, end):
            below_own[video[s]] += 0.5 * column_weight[s]
            below_columns += 0.5 * column_weight[s]
            below_rows += 0.5 * row_weight[s]
        first = end
    return diagonal, row_sums, column_sums
