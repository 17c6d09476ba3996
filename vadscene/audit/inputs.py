"""The audit's inputs: frame ground truth and model frame scores, aligned frame by frame.

Every loader (see :mod:`vadscene.audit.loaders`) produces these; the engine only reads them.
Frames of all videos are concatenated in ``GroundTruth.video_ids`` order; video ``i`` owns
frames ``offsets[i]:offsets[i + 1]``. Scores are aligned to exactly that order.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from vadscene.errors import VadsceneError


class AuditInputError(VadsceneError):
    """Ground truth, scores or scene labels that cannot be audited (message names file/video)."""


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
    """

    video_ids: tuple[str, ...]
    categories: tuple[str, ...]
    offsets: np.ndarray  # int64, shape (V + 1,), offsets[0] == 0
    labels: np.ndarray  # bool, shape (F,)
    source: str
    conventions: dict[str, str] = field(default_factory=dict)
    normal_category: str = "Normal"

    def __post_init__(self) -> None:
        v = len(self.video_ids)
        if len(self.categories) != v or self.offsets.shape != (v + 1,):
            raise AuditInputError(f"{self.source}: inconsistent ground truth arrays")
        if len(set(self.video_ids)) != v:
            seen: set[str] = set()
            duplicates = sorted({i for i in self.video_ids if i in seen or seen.add(i)})
            raise AuditInputError(f"{self.source}: duplicate video ids {duplicates[:10]}")
        if self.offsets[0] != 0 or self.offsets[-1] != self.labels.shape[0]:
            raise AuditInputError(f"{self.source}: offsets do not cover the labels")

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
        return np.bincount(self.video_index(), weights=self.labels, minlength=self.n_videos).astype(
            np.int64
        )

    def labels_of(self, video_id: str) -> np.ndarray:
        i = self.video_ids.index(video_id)
        return self.labels[self.offsets[i] : self.offsets[i + 1]]


@dataclass(frozen=True, eq=False)
class ModelScores:
    """One model's frame scores aligned to a :class:`GroundTruth` (float64, finite)."""

    name: str
    scores: np.ndarray  # float64, shape (F,)
    source: str
    family: str | None = None
    notes: tuple[str, ...] = ()
