"""Soft frame labels (the share of annotators marking a frame anomalous) for Prob-AUC
(:mod:`vadscene.audit.compute.uncertainty`; docs/metrics.md, "Prob-AUC at three granularities").
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vadscene.benchmark.frames import AuditInputError, GroundTruth
from vadscene.benchmark.ground_truth import check_video_sets
from vadscene.benchmark.readers import TABLE_SEPARATORS, group_rows, read_table


def load_soft_labels(path: Path | str, ground_truth: GroundTruth) -> np.ndarray:
    """Soft frame labels y ∈ [0, 1] aligned to ``ground_truth`` from a table ``video, frame,
    label`` (CSV/TSV/Parquet; e.g. the share of annotators marking the frame anomalous);
    every ground-truth frame needs exactly one row."""
    path = Path(path)
    if not path.is_file() or path.suffix.lower() not in TABLE_SEPARATORS:
        raise AuditInputError(f"{path}: soft labels must be a .csv/.tsv/.parquet table file")
    table = read_table(path, required=("video", "frame", "label"))
    videos, rows = group_rows(path, table, indexed_by="frame")
    check_video_sets(path, ground_truth, videos)
    values = table["label"].to_numpy()
    if values.dtype.kind not in "biuf":
        raise AuditInputError(f"{path}: labels must be numbers in [0, 1]")
    per_video = dict(zip(videos, rows, strict=True))
    aligned = []
    for video, n in zip(ground_truth.video_ids, ground_truth.frame_counts.tolist(), strict=True):
        labels = values[per_video[video]].astype(np.float64)
        if labels.size != n:
            raise AuditInputError(
                f"{path}: video {video}: {labels.size} soft labels but the ground truth has "
                f"{n} frames"
            )
        bad = np.flatnonzero(~((labels >= 0) & (labels <= 1)))
        if bad.size:
            raise AuditInputError(
                f"{path}: video {video}: soft label {labels[bad[0]]} at frame {bad[0]} is not "
                "in [0, 1]"
            )
        aligned.append(labels)
    return np.concatenate(aligned)
