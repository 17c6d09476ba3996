"""The one-line summary of an audit, as ``vadscene audit`` prints it and the Audit page shows
it."""

from __future__ import annotations

from vadscene.audit.compute.result import AuditResult


def summary_line(result: AuditResult) -> str:
    """``12 videos, 3030 frames, w = 7.141 % within-video pairs, oracle video-constant AUROC
    0.8286``: the benchmark's size, the within-pair fraction w and the oracle video-constant
    AUROC (docs/metrics.md)."""
    summary = result.summary
    return (
        f"{summary['videos']} videos, {summary['frames']} frames, "
        f"w = {100 * summary['within_pair_fraction']:.3f} % within-video pairs, oracle "
        f"video-constant AUROC {summary['oracle_video_constant_auroc']:.4f}"
    )
