"""What an audit will need before it runs: ``vadscene audit --dry-run``.

:func:`plan_audit` reads an :class:`~vadscene.audit.request.AuditRequest`'s shapes as cheaply
as it can — the ground truth and scene labels in full (they decide every count), of each score
file only its format, its data type and, for a folder, which videos it holds — and returns an
:class:`AuditPlan`: the peak memory — the inputs held plus the engine's analytic model of its
arrays (:func:`~vadscene.audit.compute.budget.memory_estimate`) — the time from a short calibration
(the real engine on a subsample of the videos, extrapolated by a stated cost model,
:data:`COST_MODEL`), and whether the run fits this machine's physical memory and, given a Dask
client, the cluster's workers. Nothing is audited and nothing is written.
"""

from __future__ import annotations

import itertools
import math
import os
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.lib import format as npy_format

from vadscene.audit.compute import budget
from vadscene.audit.compute.budget import memory_estimate
from vadscene.audit.compute.engine import run_audit
from vadscene.audit.compute.pairs import pair_count_cost
from vadscene.audit.compute.uncertainty import CategoryBootstrap
from vadscene.audit.io.scene_labels import SceneLabels
from vadscene.audit.io.scores import ModelScores, ModelSpec, score_column
from vadscene.audit.request import AuditRequest, checked_request, read_benchmark, read_lists
from vadscene.benchmark.arrow_tables import ARROW_SUFFIXES
from vadscene.benchmark.frames import AuditInputError, GroundTruth
from vadscene.benchmark.ground_truth import check_video_sets
from vadscene.benchmark.readers import TABLE_SEPARATORS
from vadscene.benchmark.video_lists import video_id_from_entry

CALIBRATION_FRAMES = 2_000_000
"""Frames of the calibration subsample (fewer when the benchmark has fewer)."""
CALIBRATION_REPEATS = 2
"""Each calibration run is timed this many times, the fastest kept (the machine is shared)."""
CALIBRATION_REPLICATES = 50
"""Bootstrap replicates of every calibration run (at most the run's own B)."""
MIN_CALIBRATION_VIDEOS = 40
"""The subsample keeps at least this many videos (all of a smaller benchmark)."""
SORT_CALIBRATION = 1_000_000
"""Values of the ``np.argsort`` that measures the sort's cost per F'·log₂F'."""
WIDE_VIDEOS = 6_000
"""Videos of the calibration run cut to short windows (:func:`video_windows`)."""
WIDE_WINDOW_SNIPPETS = 4
"""Snippets of each of its windows."""
LOCAL_THREADS = 2
"""Tasks the engine runs at once on this machine (:class:`.execution.LocalRunner`)."""
DASK_PAUSE_FRACTION = 0.8
"""Dask pauses a worker whose memory reaches this share of its limit (its default)."""

COST_MODEL = (
    "time = t_first + t_run + c_frames·F·models + c_sort·Σ_models F'·log₂F' / min(2, models) "
    "+ c_rectangular·(Σ_rectangular models (A'·V + (2B + 1)·V_a·V / 10) + C·B·V) "
    "+ c_swept·Σ_swept models (2B + 1)·(F' + A'), with F' a model's runs of equal consecutive "
    "scores (about F / snippet repeat), A' its anomalous runs, V videos, V_a videos with "
    "anomalous frames, C scene contrasts, and each model counted the way the engine chooses "
    "(the cheaper of the two pair-count costs); c_sort from one np.argsort, t_first from the "
    "first run (kernels loaded), the others fitted to the calibration runs"
)
"""How the calibration's times are extrapolated to the full shape (stated in every plan)."""

NOT_MODELLED = {
    "definition_scores": "the definition probes",
    "features": "the prototype readout",
    "soft_labels": "Prob-AUC",
    "interval_ap": "interval AP",
}
"""Optional inputs and tables whose working memory and time the plan leaves out (it says so)."""


@dataclass(frozen=True)
class ModelShape:
    """One model's scores as the audit will hold them: read from its file's header only."""

    name: str
    source: str
    format: str
    dtype: str  # of the scores held in memory: float32 kept, everything else float64
    snippet_repeat: int
    runs: int = 0  # of equal consecutive scores, label and video: what the engine sorts
    anomalous_runs: int = 0


@dataclass(frozen=True)
class PlannedShape:
    """The sizes that decide an audit's memory and time."""

    videos: int
    frames: int
    anomalous_videos: int
    anomalous_frames: int
    categories: int
    models: tuple[ModelShape, ...]
    bootstrap: int
    scene_contrasts: int
    optional: dict[str, int] = field(default_factory=dict)  # input → how many given
    replicate_memory: int = budget.DEFAULT_REPLICATE_MEMORY  # bytes of one block's draws


@dataclass(frozen=True)
class Calibration:
    """The calibration runs: the subsample's size, each run's wall time, the fitted terms."""

    videos: int
    frames: int
    anomalous_videos: int
    replicates: int
    seconds: dict[str, float]  # run → seconds
    coefficients: dict[str, float]  # t_run (s), c_sort and c_work (s per unit)


@dataclass(frozen=True)
class Fit:
    """Whether the run fits one place: this machine, or a cluster's workers."""

    where: str
    memory_bytes: int  # what the place has: physical memory, or the smallest worker limit
    needed_bytes: int  # what the place must hold: the run, or one worker's share
    workers: int
    fits: bool
    seconds: float | None
    reason: str


@dataclass(frozen=True)
class AuditPlan:
    """What :func:`plan_audit` found: shapes, memory, time, and where the run fits."""

    shape: PlannedShape
    memory_bytes: int
    input_bytes: int
    seconds: float
    cost_model: str
    calibration: Calibration | None
    fits: tuple[Fit, ...]
    not_modelled: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """The plan as JSON has it (``vadscene audit --dry-run --json``; no NaN: null)."""
        document = asdict(self)
        document["memory_gib"] = round(self.memory_bytes / 2**30, 3)
        document["seconds"] = self.seconds if math.isfinite(self.seconds) else None
        return document

    def lines(self) -> list[str]:
        """The plan as ``vadscene audit --dry-run`` prints it."""
        s = self.shape
        models = ", ".join(
            f"{m.name} ({m.format}, {m.dtype}, snippet ×{m.snippet_repeat})" for m in s.models
        )
        lines = [
            f"shape: {s.videos:,} videos, {s.frames:,} frames, {s.anomalous_videos:,} "
            f"anomalous videos ({s.anomalous_frames:,} anomalous frames), {s.categories} "
            f"categories, {len(s.models)} models, B = {s.bootstrap:,}, "
            f"{s.scene_contrasts} scene contrasts",
            f"models: {models or 'none (a ground-truth-only run)'}",
        ]
        if s.optional:
            lines.append(
                "optional inputs: " + ", ".join(f"{k} ({v})" for k, v in s.optional.items())
            )
        lines.append(
            f"memory: about {_size(self.memory_bytes)} at peak ({_size(self.input_bytes)} of "
            "inputs and the engine's analytic model of its arrays)"
        )
        if self.calibration is not None:
            c = self.calibration
            runs = ", ".join(f"{name} {seconds:.2f} s" for name, seconds in c.seconds.items())
            lines += [
                f"time: about {_duration(self.seconds)} on this machine (a rough extrapolation "
                "from the calibration below: on benchmarks far larger than it, off several-fold)",
                f"  calibrated on {c.videos:,} videos ({c.frames:,} frames, "
                f"{c.anomalous_videos} anomalous, synthetic scores): {runs}",
                f"  cost model: {self.cost_model}",
            ]
        for fit in self.fits:
            verdict = "fits" if fit.fits else "does NOT fit"
            lines.append(f"{verdict} {fit.where}: {fit.reason}")
        if self.not_modelled:
            lines.append(f"not in the estimate: {', '.join(self.not_modelled)}")
        lines.append("dry run: nothing was audited and no report was written")
        return lines


def plan_audit(
    request: AuditRequest,
    *,
    calibrate: bool = True,
    client: Any = None,
) -> AuditPlan:
    """The plan of ``request``'s audit: refused as the run refuses it, nothing written.

    The checks :func:`~vadscene.audit.request.prepare` makes before reading (protocol, SVG
    renderer, report folder) are made first; then the ground truth and scene labels are read,
    and each model's score file as far as its format, data type and videos. ``calibrate``
    times the real engine on a subsample (:func:`calibrate_time`); ``client`` (a
    ``distributed.Client``) adds whether the cluster's workers hold the run.
    """
    request = checked_request(request)
    specs, probe_lists = read_lists(request)
    ground_truth, _, scene = read_benchmark(request)
    models = tuple(
        score_shape(spec, ground_truth, request.snippet_repeat, request.video_order)
        for spec in specs
    )
    check_settings(ground_truth, request.bootstrap, request.seed)  # the engine's first checks
    optional = {
        "definition_scores": len(request.definition_scores)
        + sum(len(p.definition_scores) for p in probe_lists),
        "features": len(request.features) + sum(len(p.features) for p in probe_lists),
        "soft_labels": int(request.soft_labels is not None),
        "interval_ap": int(request.interval_ap),
    }
    return plan_shapes(
        ground_truth,
        models,
        scene,
        bootstrap=request.bootstrap,
        seed=request.seed,
        category_bootstrap=request.category_bootstrap,
        optional={name: count for name, count in optional.items() if count},
        calibrate=calibrate,
        client=client,
        replicate_memory=request.replicate_memory,
    )


def plan_shapes(
    ground_truth: GroundTruth,
    models: Sequence[ModelShape],
    scene: SceneLabels | None = None,
    *,
    bootstrap: int,
    seed: int = 0,
    category_bootstrap: CategoryBootstrap = "stratified",
    optional: dict[str, int] | None = None,
    calibrate: bool = True,
    client: Any = None,
    replicate_memory: int = budget.DEFAULT_REPLICATE_MEMORY,
) -> AuditPlan:
    """The plan of an audit of ``models`` (their shapes: :func:`score_shape`) on a ground
    truth already read: what :func:`plan_audit` returns once it has read the request."""
    shape = replace(
        planned_shape(ground_truth, models, bootstrap, scene, optional),
        replicate_memory=replicate_memory,
    )
    inputs = input_bytes(shape)
    memory = inputs + memory_estimate(engine_shape(shape))
    calibration = (
        calibrate_time(ground_truth, shape, scene, seed, category_bootstrap) if calibrate else None
    )
    seconds = local_seconds(shape, calibration) if calibration is not None else math.nan
    fits = [machine_fit(memory, seconds)]
    if client is not None:
        fits.append(cluster_fit(client, shape, calibration))
    return AuditPlan(
        shape=shape,
        memory_bytes=memory,
        input_bytes=inputs,
        seconds=seconds,
        cost_model=COST_MODEL,
        calibration=calibration,
        fits=tuple(fits),
        not_modelled=tuple(NOT_MODELLED[k] for k in NOT_MODELLED if shape.optional.get(k)),
    )


# --- shapes -------------------------------------------------------------------------------


def check_settings(ground_truth: GroundTruth, bootstrap: int, seed: int) -> None:
    """Refuse what :func:`~vadscene.audit.compute.engine.run_audit` refuses of the settings
    and the ground truth alone, in its words, without its memory refusal (a plan reports
    what does not fit rather than refusing it)."""
    if bootstrap < 0:
        raise AuditInputError(f"the number of bootstrap replicates must be ≥ 0, got {bootstrap}")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise AuditInputError(f"the bootstrap seed must be an integer ≥ 0, got {seed!r}")
    anomalous = int(ground_truth.labels.sum())
    if 0 < anomalous < ground_truth.n_frames:
        return
    frames = f"{ground_truth.n_frames} frames of the {ground_truth.n_videos} videos"
    if anomalous:
        found = f"all {frames} are anomalous"
        hint = "check the interval convention (interval_end) and the frame counts"
    else:
        found = f"none of the {frames} is anomalous"
        hint = "check the ground-truth format and that its intervals name these videos"
    raise AuditInputError(
        f"{ground_truth.source}: {found}; AUROC compares anomalous with normal frames, so "
        f"there is no pair to audit ({hint})"
    )


def score_shape(
    spec: ModelSpec,
    ground_truth: GroundTruth,
    snippet_repeat: int,
    video_order: Path | None,
) -> ModelShape:
    """One model's format and held data type from its file's header (a folder: its first
    file's, and its videos checked against the ground truth by their file names)."""
    path = Path(spec.path)
    repeat = spec.snippet_repeat if spec.snippet_repeat is not None else snippet_repeat
    if not path.exists():
        raise AuditInputError(f"{path}: score file or folder not found")
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        raise AuditInputError(f"{path}: snippet_repeat must be >= 1, got {repeat}")
    suffix = path.suffix.lower()
    if video_order is not None and not (path.is_file() and suffix == ".npy"):
        raise AuditInputError(
            f"{path}: video_order applies to one concatenated .npy score array only"
        )
    if path.is_dir():
        files = sorted(path.glob("*.npy"))
        if not files:
            raise AuditInputError(f"{path}: no .npy score files in the folder")
        check_video_sets(path, ground_truth, [video_id_from_entry(f.name) for f in files])
        kind, dtype = "npy folder", _npy_dtype(files[0])
    elif suffix == ".npy":
        kind, dtype = "concatenated npy", _npy_dtype(path)
    elif suffix in ARROW_SUFFIXES:
        column = score_column(path, spec.name)
        kind, dtype = f"{suffix[1:]} table, column {column}", _arrow_dtype(path, column)
    elif suffix in TABLE_SEPARATORS:
        kind, dtype = f"{suffix[1:]} table", np.dtype(np.float64)  # text parses to float64
    else:
        raise AuditInputError(
            f"{path}: unsupported score file; expected a folder of .npy files, one "
            "concatenated .npy, or a .csv/.tsv/.parquet/.arrow/.feather table"
        )
    held = "float32" if dtype == np.float32 else "float64"
    return ModelShape(spec.name, str(path), kind, held, repeat)


def _npy_dtype(file: Path) -> np.dtype:
    """The data type a ``.npy`` file's header declares (nothing else is read)."""
    try:
        with file.open("rb") as handle:
            version = npy_format.read_magic(handle)
            read = (
                npy_format.read_array_header_1_0
                if version == (1, 0)
                else npy_format.read_array_header_2_0
            )
            dtype: np.dtype = read(handle)[2]
    except (OSError, ValueError) as exc:
        raise AuditInputError(f"{file}: not a readable .npy file ({exc})") from None
    return dtype


def _arrow_dtype(path: Path, column: str) -> np.dtype:
    """The type of a Parquet or Arrow IPC table's ``column`` from its schema (no data read)."""
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    try:
        if path.suffix.lower() == ".parquet":
            schema = pq.read_schema(path)
        else:
            try:
                schema = pa.ipc.open_file(pa.memory_map(str(path))).schema
            except pa.ArrowInvalid:
                schema = pa.ipc.open_stream(pa.memory_map(str(path))).schema
    except (OSError, pa.ArrowException) as exc:
        raise AuditInputError(f"{path}: cannot read the table's schema ({exc})") from None
    if column not in schema.names:
        raise AuditInputError(
            f"{path}: missing column(s) {column}; expected columns video, {column}"
        )
    kind = schema.field(column).type
    dtype: np.dtype = np.dtype(np.float32 if pa.types.is_float32(kind) else np.float64)
    return dtype


def planned_shape(
    ground_truth: GroundTruth,
    models: Sequence[ModelShape],
    bootstrap: int,
    scene: SceneLabels | None,
    optional: dict[str, int] | None = None,
) -> PlannedShape:
    """The sizes of an audit of ``models`` on ``ground_truth``, each model's runs counted
    from the ground truth as its snippet scores make them (:func:`model_runs`)."""
    a = ground_truth.anomalous_counts()
    return PlannedShape(
        videos=ground_truth.n_videos,
        frames=ground_truth.n_frames,
        anomalous_videos=int((a > 0).sum()),
        anomalous_frames=int(a.sum()),
        categories=len(set(ground_truth.categories)),
        models=tuple(
            replace(m, runs=runs, anomalous_runs=anomalous)
            for m in models
            for runs, anomalous in [model_runs(ground_truth, m.snippet_repeat)]
        ),
        bootstrap=bootstrap,
        scene_contrasts=len(scene.contrasts) if scene is not None else 0,
        optional=dict(optional or {}),
    )


def model_runs(ground_truth: GroundTruth, snippet_repeat: int) -> tuple[int, int]:
    """(runs, anomalous runs) of scores constant over each ``snippet_repeat`` frames: a run
    ends at every snippet, label change and video end (distinct scores assumed, so an upper
    bound where scores tie)."""
    frames = ground_truth.n_frames
    video = ground_truth.video_index()
    within = np.arange(frames) - ground_truth.offsets[:-1][video]
    first = within % snippet_repeat == 0
    first[1:] |= ground_truth.labels[1:] != ground_truth.labels[:-1]
    return int(first.sum()), int((first & ground_truth.labels).sum())


def engine_shape(shape: PlannedShape, models: int | None = None) -> budget.AuditShape:
    """The engine's own shape (:class:`.compute.budget.AuditShape`) of ``shape`` (of its
    first ``models`` models when given)."""
    held = shape.models if models is None else shape.models[:models]
    return budget.AuditShape(
        videos=shape.videos,
        frames=shape.frames,
        anomalous_videos=shape.anomalous_videos,
        models=len(held),
        runs=max((m.runs for m in held), default=0),
        bootstrap=shape.bootstrap,
        contrasts=shape.scene_contrasts,
        anomalous_runs=max((m.anomalous_runs for m in held), default=0),
        replicate_memory=shape.replicate_memory,
    )


def input_bytes(shape: PlannedShape, models: int | None = None) -> int:
    """Bytes of the inputs the run holds: a label per frame and every model's scores."""
    held = shape.models if models is None else shape.models[:models]
    return shape.frames * (1 + sum(np.dtype(m.dtype).itemsize for m in held))


# --- time ---------------------------------------------------------------------------------


def calibration_subsample(
    ground_truth: GroundTruth, videos: int, rng: np.random.Generator
) -> GroundTruth:
    """``videos`` of the ground truth's videos (all of them when it has no more), drawn
    within each (category, holds anomalous frames) stratum in proportion to its size (at
    least one of each), in the ground truth's order."""
    if videos >= ground_truth.n_videos:
        return ground_truth
    anomalous = ground_truth.anomalous_counts() > 0
    strata: dict[tuple[str, bool], list[int]] = {}
    for i, (category, flag) in enumerate(zip(ground_truth.categories, anomalous, strict=True)):
        strata.setdefault((category, bool(flag)), []).append(i)
    share = videos / ground_truth.n_videos
    chosen = np.sort(
        np.concatenate(
            [
                rng.choice(members, max(1, round(len(members) * share)), replace=False)
                for members in strata.values()
            ]
        )
    )
    offsets = ground_truth.offsets
    counts = np.diff(offsets)[chosen]
    labels = np.concatenate([ground_truth.labels[offsets[i] : offsets[i + 1]] for i in chosen])
    segments = ground_truth.segments
    return GroundTruth(
        video_ids=tuple(ground_truth.video_ids[i] for i in chosen),
        categories=tuple(ground_truth.categories[i] for i in chosen),
        offsets=np.r_[0, np.cumsum(counts)].astype(np.int64),
        labels=labels,
        source=f"{ground_truth.source} (calibration subsample of {chosen.size} videos)",
        conventions=dict(ground_truth.conventions),
        normal_category=ground_truth.normal_category,
        segments=tuple(segments[i] for i in chosen) if segments is not None else None,
    )


def video_windows(ground_truth: GroundTruth, frames: int) -> GroundTruth:
    """Each video cut to a window of at most ``frames`` frames, around its first anomalous
    frame where it has one: as many videos and anomalous videos in few frames, so that the
    terms growing with the videos show beside those growing with the frames."""
    offsets = ground_truth.offsets
    starts, lengths = [], []
    for i in range(ground_truth.n_videos):
        labels = ground_truth.labels[offsets[i] : offsets[i + 1]]
        length = min(frames, labels.size)
        anomalous = np.flatnonzero(labels)
        centre = int(anomalous[0]) if anomalous.size else 0
        start = min(max(centre - length // 2, 0), labels.size - length)
        starts.append(int(offsets[i]) + start)
        lengths.append(length)
    cut = np.concatenate(
        [ground_truth.labels[a : a + n] for a, n in zip(starts, lengths, strict=True)]
    )
    return GroundTruth(
        video_ids=ground_truth.video_ids,
        categories=ground_truth.categories,
        offsets=np.r_[0, np.cumsum(lengths)].astype(np.int64),
        labels=cut,
        source=f"{ground_truth.source} (windows of {frames} frames)",
        conventions=dict(ground_truth.conventions),
        normal_category=ground_truth.normal_category,
    )


def synthetic_models(
    ground_truth: GroundTruth, models: Sequence[ModelShape], rng: np.random.Generator
) -> list[ModelScores]:
    """Uniform random scores in each model's held data type, one per snippet of its snippet
    repeat, repeated over the snippet's frames: the runs of equal scores the engine collapses
    are as many as in the model's own scores."""
    frames = np.diff(ground_truth.offsets)
    video = ground_truth.video_index()
    within = np.arange(ground_truth.n_frames) - ground_truth.offsets[:-1][video]
    synthetic = []
    for model in models:
        per_video = -(-frames // model.snippet_repeat)
        snippet = np.r_[0, np.cumsum(per_video)[:-1]][video] + within // model.snippet_repeat
        values = rng.random(int(per_video.sum()), dtype=np.dtype(model.dtype).type)
        synthetic.append(
            ModelScores(model.name, values[snippet], source="calibration (synthetic scores)")
        )
    return synthetic


def cost_units(shape: PlannedShape, method: str = "auto") -> dict[str, float]:
    """The units of :data:`COST_MODEL` of ``shape``: frames (F per model), sort (Σ F'·log₂F'
    / min(2, models)), rectangular (the pair counts of the models counted by the
    rectangular matrix, and the scene contrasts' C·B·V) and swept (those of the others);
    ``method`` other than ``auto``: every model counted that way (``pair_count_method``)."""
    weighings = 2 * shape.bootstrap + 1
    units = {
        "frames": float(shape.frames * max(1, len(shape.models))),
        "sort": sum(m.runs * math.log2(max(m.runs, 2)) for m in shape.models)
        / max(1, min(2, len(shape.models))),
        "rectangular": float(shape.scene_contrasts * shape.bootstrap * shape.videos),
        "swept": 0.0,
    }
    for m in shape.models:
        way, cost = pair_count_cost(
            m.runs, m.anomalous_runs, shape.anomalous_videos, shape.videos, weighings, method
        )
        units[way] += cost
    return units


def calibrate_time(
    ground_truth: GroundTruth,
    shape: PlannedShape,
    scene: SceneLabels | None,
    seed: int = 0,
    category_bootstrap: CategoryBootstrap = "stratified",
) -> Calibration:
    """Time the real engine on a subsample of the videos, synthetic scores of each model's
    snippet repeat and data type, and fit the coefficients of :data:`COST_MODEL`.

    c_sort is one ``np.argsort`` of :data:`SORT_CALIBRATION` values per F'·log₂F'. A first
    run on a few videos loads the compiled kernels (t_first: once per process); then a
    quarter, a half and all of the subsample, and :data:`WIDE_VIDEOS` videos cut to short
    windows (:func:`video_windows`: the work growing with the videos, beside that growing
    with the frames) counted each way (``pair_count_method``), each with
    :data:`CALIBRATION_REPLICATES`
    replicates (at most B); t_run, c_frames, c_rectangular and c_swept are the non-negative
    least-squares fit of their times (the fastest of :data:`CALIBRATION_REPEATS`) less the
    sort's. At most two models are timed (the
    engine counts two at a time); the model counts the others.
    """
    rng = np.random.default_rng(0)
    values = rng.random(SORT_CALIBRATION)
    start = time.perf_counter()
    np.argsort(values)
    c_sort = (time.perf_counter() - start) / (SORT_CALIBRATION * math.log2(SORT_CALIBRATION))
    videos = max(
        MIN_CALIBRATION_VIDEOS,
        round(ground_truth.n_videos * CALIBRATION_FRAMES / max(ground_truth.n_frames, 1)),
    )
    subsample = calibration_subsample(ground_truth, videos, rng)
    half = calibration_subsample(subsample, max(videos // 2, 8), rng)
    quarter = calibration_subsample(half, max(videos // 4, 8), rng)
    timed_models = shape.models[:2]
    replicates = min(CALIBRATION_REPLICATES, shape.bootstrap)

    def timed(
        truth: GroundTruth,
        n_bootstrap: int,
        repeats: int = CALIBRATION_REPEATS,
        method: str = "auto",
    ) -> tuple[str, float, dict[str, float]]:
        models = synthetic_models(truth, timed_models, rng)
        labels = _restricted(scene, truth) if scene is not None else None
        seconds = math.inf
        for _ in range(repeats):
            start = time.perf_counter()
            run_audit(
                truth,
                models,
                labels,
                n_bootstrap=n_bootstrap,
                seed=seed,
                category_bootstrap=category_bootstrap,
                pair_count_method=method,
            )
            seconds = min(seconds, time.perf_counter() - start)
        units = cost_units(planned_shape(truth, timed_models, n_bootstrap, labels), method)
        way = "" if method == "auto" else f" {method}"
        return f"{truth.n_videos} videos B = {n_bootstrap}{way}", seconds, units

    wide = video_windows(
        calibration_subsample(ground_truth, WIDE_VIDEOS, rng),
        WIDE_WINDOW_SNIPPETS * max((m.snippet_repeat for m in timed_models), default=1),
    )
    _, first, _ = timed(calibration_subsample(quarter, 8, rng), 2, repeats=1)
    # the same B throughout: the engine may count another way without replicates
    runs = [timed(truth, replicates) for truth in (quarter, half, subsample)]
    # the pair counting both ways, where it shows: many videos, few frames
    runs += [timed(wide, replicates, method=way) for way in ("rectangular", "swept")]
    rest = np.array([seconds - c_sort * units["sort"] for _, seconds, units in runs])
    terms = np.array(
        [[1.0, units["frames"], units["rectangular"], units["swept"]] for _, _, units in runs]
    )
    t_run, c_frames, c_rectangular, c_swept = _nonnegative_fit(terms, rest)
    return Calibration(
        videos=subsample.n_videos,
        frames=subsample.n_frames,
        anomalous_videos=int((subsample.anomalous_counts() > 0).sum()),
        replicates=replicates,
        seconds={"first run (kernels loaded)": first}
        | {name: seconds for name, seconds, _ in runs},
        coefficients={
            "t_first": max(first - t_run, 0.0),
            "t_run": t_run,
            "c_frames": c_frames,
            "c_sort": c_sort,
            "c_rectangular": c_rectangular,
            "c_swept": c_swept,
        },
    )


def _nonnegative_fit(terms: np.ndarray, seconds: np.ndarray) -> tuple[float, ...]:
    """Non-negative least squares of seconds ≈ terms · c over the few columns of ``terms``:
    the best fit among those of every subset of the columns whose coefficients are all
    ≥ 0 (the others 0)."""
    columns = terms.shape[1]
    best, best_residual = np.zeros(columns), float(seconds @ seconds)
    for subset in itertools.product((False, True), repeat=columns):
        chosen = np.flatnonzero(subset)
        if not chosen.size:
            continue
        fitted, *_ = np.linalg.lstsq(terms[:, chosen], seconds, rcond=None)
        if (fitted < 0).any():
            continue
        residual = seconds - terms[:, chosen] @ fitted
        if float(residual @ residual) < best_residual - 1e-15:
            best = np.zeros(columns)
            best[chosen] = fitted
            best_residual = float(residual @ residual)
    return tuple(float(c) for c in best)


def local_seconds(shape: PlannedShape, calibration: Calibration, threads: int = 0) -> float:
    """The time :data:`COST_MODEL` gives ``shape`` with ``calibration``'s coefficients, on
    this machine (``threads`` 0) or a cluster of ``threads`` worker threads (the sorts of
    different models and the pair-count work spread over them)."""
    c = calibration.coefficients
    units = cost_units(shape)
    fixed = c["t_first"] + c["t_run"] + c["c_frames"] * units["frames"]
    work = c["c_rectangular"] * units["rectangular"] + c["c_swept"] * units["swept"]
    if not threads:
        return fixed + c["c_sort"] * units["sort"] + work
    models = max(1, len(shape.models))
    sort = units["sort"] * min(2, models) / min(threads, models)
    return fixed + c["c_sort"] * sort + work * LOCAL_THREADS / threads


def _restricted(scene: SceneLabels, ground_truth: GroundTruth) -> SceneLabels:
    """The scene labels of the ground truth's videos only (a subsample's)."""
    keep = set(ground_truth.video_ids)
    return SceneLabels(
        scene.contrasts,
        {
            factor: {video: value for video, value in values.items() if video in keep}
            for factor, values in scene.values.items()
        },
        scene.source,
    )


# --- where it fits ------------------------------------------------------------------------


def physical_memory() -> int:
    """This machine's physical memory in bytes (what the run's memory refusal compares)."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def machine_fit(memory: int, seconds: float) -> Fit:
    """Whether ``memory`` bytes fit this machine (the run refuses what does not)."""
    available = physical_memory()
    fits = memory <= available
    return Fit(
        where="this machine",
        memory_bytes=available,
        needed_bytes=memory,
        workers=1,
        fits=fits,
        seconds=seconds if math.isfinite(seconds) else None,
        reason=f"needs about {_size(memory)} of its {_size(available)} physical memory"
        + ("" if fits else "; the run would be refused"),
    )


def cluster_fit(client: Any, shape: PlannedShape, calibration: Calibration | None) -> Fit:
    """Whether the cluster behind ``client`` (a ``distributed.Client``) holds the run: a
    worker holds the per-frame arrays, one model's scores, its pair counting and a block of
    replicates (the engine's model with one model), within :data:`DASK_PAUSE_FRACTION` of
    the smallest worker memory limit; the time spreads the work over the workers' threads."""
    workers = client.scheduler_info().get("workers", {})
    limits = [int(w.get("memory_limit") or 0) for w in workers.values()]
    threads = sum(int(w.get("nthreads") or 1) for w in workers.values())
    where = f"the cluster at {getattr(client.scheduler, 'address', client.scheduler)}"
    if not limits:
        return Fit(where, 0, 0, 0, False, None, "the scheduler has no workers")
    smallest = min(limits) if all(limits) else physical_memory()
    held = min(1, len(shape.models))
    needed = input_bytes(shape, held) + memory_estimate(
        replace(engine_shape(shape, held), contrasts=0)
    )
    fits = needed <= DASK_PAUSE_FRACTION * smallest
    seconds = local_seconds(shape, calibration, threads) if calibration is not None else None
    timing = f"; about {_duration(seconds)} on its {threads} threads" if seconds else ""
    return Fit(
        where=where,
        memory_bytes=smallest,
        needed_bytes=needed,
        workers=len(limits),
        fits=fits,
        seconds=seconds,
        reason=f"{len(limits)} workers; a worker needs about {_size(needed)}, the smallest "
        f"memory limit is {_size(smallest)} (Dask pauses a worker at "
        f"{DASK_PAUSE_FRACTION:.0%}){timing}; this machine still holds the inputs "
        f"({_size(input_bytes(shape))})",
    )


def _size(size: int | float) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20)):
        if size >= scale:
            return f"{size / scale:,.1f} {unit}"
    return f"{size / 2**10:,.0f} KiB"


def _duration(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "n/a"
    if seconds < 120:
        return f"{seconds:.1f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"
