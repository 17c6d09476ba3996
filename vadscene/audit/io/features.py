"""Per-snippet features of a model's pre-classifier layer, read for the prototype readout
(:mod:`vadscene.audit.compute.prototypes`; docs/metrics.md, "Representation readout").
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vadscene.benchmark.frames import AuditInputError, GroundTruth
from vadscene.benchmark.ground_truth import check_video_sets
from vadscene.benchmark.readers import load_npy
from vadscene.benchmark.video_lists import video_id_from_entry


@dataclass(frozen=True, eq=False)
class Features:
    """One model's per-snippet features, per ground-truth video (in its order)."""

    name: str
    per_video: tuple[np.ndarray, ...]  # (m_v, d) each
    snippet_repeat: int
    source: str
    family: str | None = None


def load_features(
    path: Path | str,
    ground_truth: GroundTruth,
    *,
    name: str,
    family: str | None = None,
    snippet_repeat: int = 16,
) -> Features:
    """A folder of per-video ``(snippets × d)`` ``.npy`` features (ids from the stems).

    A video of n frames needs m snippets with m·k within the range the scores allow
    (:func:`vadscene.audit.io.scores.load_scores`: up to k − 1 frames too many, up to k too
    few); every video the same d; values finite.
    """
    path = Path(path)
    if not path.is_dir():
        raise AuditInputError(f"{path}: features folder not found")
    if (
        isinstance(snippet_repeat, bool)
        or not isinstance(snippet_repeat, int)
        or snippet_repeat < 1
    ):
        raise AuditInputError(f"{path}: snippet_repeat must be an integer >= 1")
    files = {video_id_from_entry(f.name): f for f in sorted(path.glob("*.npy"))}
    if not files:
        raise AuditInputError(f"{path}: no .npy feature files in the folder")
    check_video_sets(path, ground_truth, list(files))
    k = snippet_repeat
    width: tuple[str, int] | None = None
    per_video = []
    for video, n in zip(ground_truth.video_ids, ground_truth.frame_counts.tolist(), strict=True):
        file = files[video]
        array = load_npy(file)
        if array.ndim != 2 or array.dtype.kind not in "fiu":
            raise AuditInputError(
                f"{file}: video {video}: expected numeric features of shape (snippets, d), got "
                f"{array.shape} of type {array.dtype}"
            )
        m = array.shape[0]
        if not (n - k <= m * k < n + k) or m == 0 or (k == 1 and m != n):
            raise AuditInputError(
                f"{file}: video {video}: {m} snippets × {k} = {m * k} frames, but the ground "
                f"truth has {n} frames (allowed {max(n - k, 1)}..{n + k - 1})"
            )
        width = width or (video, array.shape[1])
        if array.shape[1] != width[1]:
            raise AuditInputError(
                f"{file}: video {video}: features of dimension {array.shape[1]}, but video "
                f"{width[0]} has {width[1]}"
            )
        if not np.isfinite(array).all():
            raise AuditInputError(f"{file}: video {video}: features hold non-finite values")
        per_video.append(array)
    return Features(name, tuple(per_video), k, str(path), family)
