"""What an audit will hold in memory, from the shapes of its inputs.

The engine refuses a run this machine cannot hold before it allocates anything
(:func:`vadscene.benchmark.frames.refuse_beyond_memory`), and ``vadscene audit --dry-run``
prints the same estimate. The terms follow the engine's arrays (docs/benchmarks.md, "Memory"):
per frame, for the two models counted at once, their run boundaries, and per run their runs
and sorted copies; per model the rectangular pair counts when they are kept; per block of
replicates its draws; per scene contrast its pole resamples and shuffles.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from vadscene.audit.compute.bootstrap import replicate_spans
from vadscene.audit.compute.pairs import RECTANGULAR_MAX_BYTES, pair_count_cost
from vadscene.core.kernels import compiled

DEFAULT_REPLICATE_MEMORY = 256 * 2**20
"""Bytes the draws of one block of bootstrap replicates may take (``replicate_memory``)."""
MODELS_AT_ONCE = 2
"""Models counted at the same time on one machine (two threads)."""
BYTES_PER_FRAME = 2
"""Per frame of a model being counted: its run boundaries and the comparisons behind them
(bool arrays, freed as the runs are taken; measured, docs/benchmarks.md "Memory")."""
BYTES_PER_RUN = 100
"""Per run of a model being counted: the runs, their sort and the sorted (or swept) copies
(set from measured runs of snippet and of frame scores, docs/benchmarks.md "Memory")."""
BLOCKS_IN_FLIGHT = 2
"""Blocks of replicates drawn and not yet evaluated by every model (the engine keeps no more):
what bounds the memory of the draws to a few blocks whatever B is."""
DRAWS_PER_BLOCK = 2
"""(block × V) float64 arrays a drawn block holds: the shared and the per-category draws."""
ARRAYS_PER_MODEL_AT_WORK = 3
"""(block × V) float64 arrays a model evaluating a block adds: both draws stacked for the one
pass over its counts, and their byte copy with the products (about one more)."""


@dataclass(frozen=True)
class AuditShape:
    """The sizes that set an audit's memory and time."""

    videos: int
    frames: int
    anomalous_videos: int
    models: int
    runs: int  # runs of equal consecutive scores of the model with the most
    bootstrap: int
    contrasts: int = 0
    replicate_memory: int = DEFAULT_REPLICATE_MEMORY
    anomalous_runs: int | None = None  # of the model with the most; None: not known


def audit_shape(
    offsets: np.ndarray,
    labels: np.ndarray,
    model_scores: Sequence[np.ndarray],
    n_bootstrap: int,
    *,
    contrasts: int = 0,
    replicate_memory: int = DEFAULT_REPLICATE_MEMORY,
) -> AuditShape:
    """The shape of an audit of these frames (``offsets``: where each video's frames start,
    and the end; ``labels`` per frame) and models' scores."""
    labels = np.asarray(labels, dtype=bool)
    boundary = labels[1:] != labels[:-1]
    starts = offsets[1:-1]
    boundary[starts[(starts > 0) & (starts < labels.size)] - 1] = True  # a new video, a new run
    runs, anomalous_runs = 0, 0
    for scores in model_scores:
        if scores.size:
            counted, anomalous_counted = _runs_counted(scores, labels, boundary)
            runs, anomalous_runs = max(runs, counted), max(anomalous_runs, anomalous_counted)
    # the video of every anomalous frame: the last video starting at or before it
    anomalous = np.unique(np.searchsorted(offsets, np.flatnonzero(labels), side="right") - 1).size
    return AuditShape(
        videos=offsets.size - 1,
        frames=int(labels.size),
        anomalous_videos=int(anomalous),
        models=len(model_scores),
        runs=runs,
        bootstrap=n_bootstrap,
        contrasts=contrasts,
        replicate_memory=replicate_memory,
        anomalous_runs=anomalous_runs,
    )


def memory_estimate(shape: AuditShape) -> int:
    """Rough peak bytes of :func:`~vadscene.audit.compute.engine.run_audit` beyond its inputs.

    The terms that grow: for the models counted at once, :data:`BYTES_PER_FRAME` per frame,
    :data:`BYTES_PER_RUN` per run and the rectangular pair counts (8 · R · V, when the engine
    keeps them: :func:`keeps_rectangular`); the blocks of replicates in flight, each
    :data:`DRAWS_PER_BLOCK` (block × V) arrays of draws, and :data:`ARRAYS_PER_MODEL_AT_WORK`
    per model at work (a block is sized by ``replicate_memory``, or less when B needs less);
    the scene contrasts' pole resamples and shuffles (two populations, 9 bytes per video and
    replicate); the replicate values kept (8 granularities, 8 bytes each).
    """
    at_once = min(shape.models, MODELS_AT_ONCE)
    rectangular = 8 * shape.anomalous_videos * shape.videos if keeps_rectangular(shape) else 0
    spans = replicate_spans(shape.bootstrap, shape.videos, shape.replicate_memory)
    block_rows = spans[0][1] - spans[0][0] if spans else 0
    arrays = (
        DRAWS_PER_BLOCK * min(BLOCKS_IN_FLIGHT, len(spans)) + ARRAYS_PER_MODEL_AT_WORK * at_once
    )
    block = 8 * arrays * block_rows * shape.videos
    per_model = BYTES_PER_FRAME * shape.frames + BYTES_PER_RUN * shape.runs + rectangular
    scene = 2 * 9 * shape.contrasts * shape.bootstrap * shape.videos
    # one set even without models: the per-category draws' missing categories are counted
    kept = 8 * 8 * max(shape.models, 1) * shape.bootstrap
    return at_once * per_model + block + scene + kept


def keeps_rectangular(shape: AuditShape) -> bool:
    """Whether the engine keeps a model's pair counts as the rectangular (R × V) matrix —
    the choice :func:`.pairs.pair_counts_of_runs` makes (``method="auto"``) for the 2B + 1
    weighings of a run, on the model with the most runs; without the anomalous runs known,
    whenever the matrix is small enough to be kept."""
    if shape.anomalous_runs is None:
        return 8 * shape.anomalous_videos * shape.videos <= RECTANGULAR_MAX_BYTES
    method, _ = pair_count_cost(
        shape.runs,
        shape.anomalous_runs,
        shape.anomalous_videos,
        shape.videos,
        2 * shape.bootstrap + 1,
    )
    return method == "rectangular"


@compiled()
def _runs_counted(scores, labels, boundary):  # type: ignore[no-untyped-def]
    # one pass, no frame-sized temporaries: the frames that start a run of equal score and
    # label within a video (``boundary[i]``: frame i + 1 starts one whatever its score), and
    # how many of them are anomalous; without branches, which the compiler vectorises
    if scores.size == 0:
        return 0, 0
    runs = 1
    anomalous = 1 if labels[0] else 0
    for i in range(1, scores.size):
        starts = boundary[i - 1] | (scores[i] != scores[i - 1])
        runs += starts
        anomalous += starts & labels[i]
    return runs, anomalous
