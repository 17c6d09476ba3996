"""Frame-aligned benchmark arrays: per-frame ground truth, and the checks every frame input passes.

Frames of all videos are concatenated in ``GroundTruth.video_ids`` order; video ``i`` owns
frames ``offsets[i]:offsets[i + 1]``. Model scores (:class:`vadscene.audit.io.scores.ModelScores`)
are aligned to exactly that order.

:class:`GroundTruth` validates itself when constructed, with the words the file loaders use
(:func:`numeric_scores`, :func:`require_finite`, :func:`binary_labels`), so an audit built in
Python refuses exactly what ``vadscene audit`` refuses.
"""

from __future__ import annotations

import numbers
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vadscene.core.errors import VadsceneError


class AuditInputError(VadsceneError):
    """Ground truth, scores or scene labels that cannot be audited (message names file/video)."""


EXACT_INTEGER_LIMIT = 2**53
"""Integers up to this magnitude are exact in float64; larger integer scores are refused."""


def numeric_scores(
    values: Any, where: str, unit: str = "frame", *, keep_float32: bool = False
) -> np.ndarray:
    """``values`` as a new float64 array, refused unless they are numbers that float64 holds
    exactly; with ``keep_float32``, float32 (and float16) values become float32 instead, which
    holds them exactly in half the memory.

    Accepts arrays and sequences (a plain list included) of booleans, integers and floats.
    Integers beyond ±2⁵³ are refused: float64 would round them, silently merging distinct
    scores and so changing every rank statistic.
    """
    array = np.asarray(values)
    if array.dtype == object and all(
        isinstance(v, numbers.Integral) for v in array.ravel().tolist()
    ):
        _refuse_inexact_integers(array.ravel().tolist(), where, unit)
        array = array.astype(np.float64)
    if array.dtype.kind not in "biuf":
        raise AuditInputError(f"{where}: scores must be numbers, got values of type {array.dtype}")
    if array.dtype.kind in "iu":
        _refuse_inexact_integers(array.ravel(), where, unit)
    if keep_float32 and array.dtype.kind == "f" and array.dtype.itemsize <= 4:  # any byte order
        return array.astype(np.float32)
    return array.astype(np.float64)


def _refuse_inexact_integers(values: Sequence[int] | np.ndarray, where: str, unit: str) -> None:
    if isinstance(values, np.ndarray):  # machine integers: compared as arrays, without abs()
        too_large = np.flatnonzero((values > EXACT_INTEGER_LIMIT) | (values < -EXACT_INTEGER_LIMIT))
    else:  # Python integers of any size
        too_large = np.array([i for i, v in enumerate(values) if abs(v) > EXACT_INTEGER_LIMIT])
    if too_large.size:
        i = int(too_large[0])
        raise AuditInputError(
            f"{where}: integer score {int(values[i])} at {unit} {i} is beyond ±2⁵³ and cannot "
            f"be held exactly as float64 ({too_large.size} such scores); rescale the scores"
        )


def require_finite(values: np.ndarray, where: str, unit: str = "frame", scope: str = "") -> None:
    """Refuse NaN and ±inf, naming the first one and how many there are."""
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        raise AuditInputError(
            f"{where}: score {values[bad[0]]} at {unit} {bad[0]} is not finite ({bad.size} "
            f"non-finite scores{scope})"
        )


def binary_labels(values: Any, where: str) -> np.ndarray:
    """Bool labels from 0/1 values (bool, integer or float); anything else is an error."""
    array = np.asarray(values)
    if array.dtype == bool:
        return array
    if array.dtype.kind not in "iuf":
        raise AuditInputError(f"{where}: labels must be 0/1, got values of type {array.dtype}")
    bad = np.flatnonzero((array != 0) & (array != 1))
    if bad.size:
        raise AuditInputError(
            f"{where}: labels must be 0/1, got {array.flat[bad[0]].item()} at frame {bad[0]} "
            f"({bad.size} such frames)"
        )
    labels: np.ndarray = array == 1
    return labels


def _frozen(array: np.ndarray) -> np.ndarray:
    """A read-only copy: a validated input cannot be changed afterwards."""
    array = array.copy()
    array.flags.writeable = False
    return array


def _names(values: Any, what: str, where: str) -> tuple[str, ...]:
    names = tuple(values)
    wrong = [v for v in names if not isinstance(v, str) or not v]
    if wrong:
        raise AuditInputError(f"{where}: {what} must be non-empty strings, got {wrong[0]!r}")
    return names


def refuse_beyond_memory(needed_bytes: int, what: str) -> None:
    """Refuse, before allocating, work whose arrays would not fit in this machine's memory.

    ``what`` names the input and its size ("gt.txt: 10⁶ videos ..."); the message adds the
    estimate and the machine's physical memory, so an absurd input fails in a second with a
    reason instead of in numpy's allocator (or the kernel's OOM killer) later.
    """
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    if needed_bytes > memory:
        raise AuditInputError(
            f"{what} would need about {needed_bytes / 2**30:,.1f} GiB of memory; this machine "
            f"has {memory / 2**30:,.1f} GiB"
        )


@dataclass(frozen=True, eq=False)
class GroundTruth:
    """Per-frame anomaly labels of a benchmark's videos.

    ``conventions`` records how the labels were read (interval end convention, where frame
    counts came from, snippet repetition) so every report can state them.

    ``segments`` holds each video's annotated anomaly segments as ``(start, end)`` frame
    numbers read half-open, ``[start, end)``, in annotation order and unmerged: the events
    interval AP matches under the ``vadclip`` rule (docs/metrics.md, "Interval AP"). They
    may touch or overlap, and an end may pass the video's last frame as annotated. ``None``
    (the default) takes the maximal runs of anomalous frame labels, as per-frame formats
    have no other segments.
    """

    video_ids: tuple[str, ...]
    categories: tuple[str, ...]
    offsets: np.ndarray  # int64, shape (V + 1,), offsets[0] == 0
    labels: np.ndarray  # bool, shape (F,)
    source: str
    conventions: dict[str, str] = field(default_factory=dict)
    normal_category: str = "Normal"
    segments: tuple[tuple[tuple[int, int], ...], ...] | None = None

    def __post_init__(self) -> None:
        where = f"{self.source}: ground truth"
        ids = _names(self.video_ids, "video ids", where)
        object.__setattr__(self, "video_ids", ids)
        object.__setattr__(self, "categories", _names(self.categories, "categories", where))
        v = len(self.video_ids)
        if len(self.categories) != v:
            raise AuditInputError(f"{where}: {len(self.categories)} categories for {v} videos")
        labels = np.asarray(self.labels)
        if labels.ndim != 1:
            raise AuditInputError(f"{where}: labels must be 1-D (F,), got shape {labels.shape}")
        object.__setattr__(self, "labels", _frozen(binary_labels(labels, where)))
        offsets = np.asarray(self.offsets)
        if offsets.dtype.kind not in "iu" or offsets.shape != (v + 1,):
            raise AuditInputError(
                f"{where}: offsets must be {v + 1} integers (one more than the videos), got "
                f"shape {offsets.shape} of type {offsets.dtype}"
            )
        object.__setattr__(self, "offsets", _frozen(offsets.astype(np.int64)))
        empty = np.flatnonzero(np.diff(self.offsets) <= 0)
        if empty.size:
            raise AuditInputError(
                f"{where}: video {self.video_ids[empty[0]]} has "
                f"{int(np.diff(self.offsets)[empty[0]])} frames; every video needs at least one"
            )
        if len(set(self.video_ids)) != v:
            duplicates = sorted(i for i, n in Counter(self.video_ids).items() if n > 1)
            raise AuditInputError(f"{self.source}: duplicate video ids {duplicates[:10]}")
        if self.offsets[0] != 0 or self.offsets[-1] != self.labels.shape[0]:
            raise AuditInputError(
                f"{where}: offsets run from {self.offsets[0]} to {self.offsets[-1]} but must "
                f"cover the {self.labels.shape[0]} labels from 0"
            )
        object.__setattr__(
            self,
            "segments",
            label_runs(self.labels, self.offsets)
            if self.segments is None
            else _checked_segments(self.segments, self.video_ids, self.frame_counts, where),
        )

    @property
    def n_videos(self) -> int:
        return len(self.video_ids)

    @property
    def n_frames(self) -> int:
        return int(self.labels.shape[0])

    @property
    def frame_counts(self) -> np.ndarray:
        return np.diff(self.offsets)

    def video_index(self) -> np.ndarray:
        """Video number of every frame, shape (F,)."""
        return np.repeat(np.arange(self.n_videos), self.frame_counts)

    def anomalous_counts(self) -> np.ndarray:
        """a_v: anomalous frames per video."""
        # the video of each anomalous frame (a few % of them): the last video starting at or
        # before it — no frame-sized index built
        video = np.searchsorted(self.offsets, np.flatnonzero(self.labels), side="right") - 1
        return np.bincount(video, minlength=self.n_videos).astype(np.int64)

    def labels_of(self, video_id: str) -> np.ndarray:
        i = self.video_ids.index(video_id)
        return self.labels[self.offsets[i] : self.offsets[i + 1]]


def label_runs(labels: np.ndarray, offsets: np.ndarray) -> tuple[tuple[tuple[int, int], ...], ...]:
    """Each video's maximal runs of anomalous frames as ``[start, end)`` frame numbers of the
    video (a run never crosses a video boundary)."""
    flags = np.asarray(labels, dtype=bool)
    first = np.zeros(flags.size, dtype=bool)
    first[offsets[:-1]] = True
    previous = np.r_[False, flags[:-1]] & ~first
    last = np.zeros(flags.size, dtype=bool)
    last[offsets[1:] - 1] = True
    following = np.r_[flags[1:], False] & ~last
    starts = np.flatnonzero(flags & ~previous)
    ends = np.flatnonzero(flags & ~following) + 1
    video = np.searchsorted(offsets, starts, side="right") - 1
    runs: list[list[tuple[int, int]]] = [[] for _ in range(offsets.size - 1)]
    for v, start, end in zip(video.tolist(), starts.tolist(), ends.tolist(), strict=True):
        runs[v].append((start - int(offsets[v]), end - int(offsets[v])))
    return tuple(tuple(video_runs) for video_runs in runs)


def _checked_segments(
    segments: Sequence[Sequence[tuple[int, int]]],
    video_ids: tuple[str, ...],
    frame_counts: np.ndarray,
    where: str,
) -> tuple[tuple[tuple[int, int], ...], ...]:
    """Segments as integer pairs, one sequence per video, each starting inside its video."""
    if len(segments) != len(video_ids):
        raise AuditInputError(
            f"{where}: segments for {len(segments)} videos, expected one sequence per video "
            f"({len(video_ids)})"
        )
    checked = []
    for video, frames, given in zip(video_ids, frame_counts.tolist(), segments, strict=True):
        pairs = []
        for pair in given:
            if len(pair) != 2 or not all(
                isinstance(x, numbers.Integral) and not isinstance(x, bool) for x in pair
            ):
                raise AuditInputError(
                    f"{where}: video {video}: segment {pair!r} must be two integer frame numbers"
                )
            start, end = int(pair[0]), int(pair[1])
            if not 0 <= start <= end or start >= frames:
                raise AuditInputError(
                    f"{where}: video {video}: segment [{start}, {end}) must satisfy "
                    f"0 <= start <= end and start < {frames} (the video's frames)"
                )
            pairs.append((start, end))
        checked.append(tuple(pairs))
    return tuple(checked)
