"""The audit engine: ground truth + model scores (+ scene labels) → :class:`AuditResult`.

One pair-count matrix per model (:func:`vadscene.audit.compute.pairs.pair_count_matrix`) feeds every
AUROC granularity, each bootstrap replicate, the scene-conditioned AUCs and the clustered
variance. Seeded: the same inputs and seed give identical numbers.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from vadscene.audit.compute import controls, intervals, metrics, tables, uncertainty
from vadscene.audit.compute.bootstrap import (
    VideoDraws,
    percentile_interval,
    replicate_spans,
    uniform_copy_counts,
)
from vadscene.audit.compute.budget import (
    BLOCKS_IN_FLIGHT,
    DEFAULT_REPLICATE_MEMORY,
    audit_shape,
    memory_estimate,
)
from vadscene.audit.compute.definitions import audit_definitions
from vadscene.audit.compute.execution import LocalRunner, Runner
from vadscene.audit.compute.pairs import (
    PAIR_COUNT_METHODS,
    FrameRuns,
    PairCounts,
    ascending_order,
    pair_counts_of_runs,
    runs_of_videos,
    video_constant_counts,
)
from vadscene.audit.compute.prototypes import SNIPPET_LABEL_RULE, audit_features
from vadscene.audit.compute.result import GRANULARITIES, AuditResult
from vadscene.audit.compute.scene import (
    PAIR_TYPES,
    bias_auroc,
    holm_adjusted,
    permutation_p_value,
    scene_conditioned,
)
from vadscene.audit.io.definitions import (
    DefinitionScores,
    FrameClasses,
    Query,
    check_definition_inputs,
    classes_from_categories,
)
from vadscene.audit.io.features import Features
from vadscene.audit.io.scene_labels import SceneContrast, SceneLabels, match_to_ground_truth
from vadscene.audit.io.scores import ModelScores
from vadscene.benchmark.frames import AuditInputError, GroundTruth, refuse_beyond_memory

AuditProgress = Callable[[str, int, int], None]
"""Called as ``progress(step, done, total)``."""

BIAS_MARGIN = 0.05
"""p_bias counts replicates with |b − 0.5| > BIAS_MARGIN (A §4)."""
MIN_POLE_SUPPORT = 10
"""Below this many videos at either pole a bias cell reads "insufficient support": p_bias is
then uninformative, and the cell is left out of the Holm family."""
SIGNIFICANCE_LEVEL = 0.05
"""Family-wise error rate of the Holm-corrected permutation tests, per model and population."""
BIAS_POPULATIONS = ("all", "leak_free")
"""all: the normal frames of every video (the paper's s̄⁰, the default); leak_free: Normal
videos only, which no anomaly can leak into (docs/metrics.md)."""


@dataclass(frozen=True)
class _Videos:
    """Per-video quantities every model and replicate shares: small enough to send to every
    task (V values each)."""

    a: np.ndarray  # anomalous frames per video
    n: np.ndarray  # normal frames per video
    categories: np.ndarray
    normal_category: str

    @property
    def n_videos(self) -> int:
        return self.a.size

    def granularities(
        self,
        counts: PairCounts,
        multiplicities: np.ndarray,
        by_category: np.ndarray | None = None,
    ) -> dict[str, np.ndarray]:
        return metrics.all_granularities(
            counts,
            self.a,
            self.n,
            multiplicities,
            self.categories,
            self.normal_category,
            by_category=by_category,
        )


@dataclass(frozen=True)
class _Frames:
    """The ground truth's per-frame arrays a model's pair counting reads."""

    labels: np.ndarray
    offsets: np.ndarray  # where each video's frames start, V + 1


class _Benchmark:
    """The ground truth and what every model shares of it."""

    def __init__(self, ground_truth: GroundTruth) -> None:
        self.gt = ground_truth
        a = ground_truth.anomalous_counts().astype(np.float64)
        self.videos = _Videos(
            a,
            ground_truth.frame_counts.astype(np.float64) - a,
            np.array(ground_truth.categories, dtype=object),
            ground_truth.normal_category,
        )
        self.frames = _Frames(ground_truth.labels, ground_truth.offsets)
        self.ones = metrics.ones(ground_truth.n_videos)

    @property
    def a(self) -> np.ndarray:
        return self.videos.a

    @property
    def n(self) -> np.ndarray:
        return self.videos.n

    @property
    def categories(self) -> np.ndarray:
        return self.videos.categories


def bootstrap_draws(
    seed: int,
    categories: Sequence[str] | np.ndarray,
    n_bootstrap: int,
    category_bootstrap: uncertainty.CategoryBootstrap = "stratified",
) -> tuple[VideoDraws, VideoDraws]:
    """The paired video bootstrap's draws of :func:`run_audit` for this seed: the shared video
    resamples, and those the per-category granularities read (stratified by category, or the
    shared ones). Replicate r of either is drawn from its own child seed of the seed's first
    stream, so a block of replicates is drawn alone, anywhere, and the same."""
    video_stream = np.random.SeedSequence(seed).spawn(3)[0]
    resamples = VideoDraws(len(categories), n_bootstrap, video_stream, purpose=0)
    return resamples, uncertainty.category_draws(
        category_bootstrap, np.asarray(categories), resamples
    )


def run_audit(
    ground_truth: GroundTruth,
    models: Sequence[ModelScores] = (),
    scene: SceneLabels | None = None,
    *,
    n_bootstrap: int = 1000,
    seed: int = 0,
    progress: AuditProgress | None = None,
    definition_scores: Sequence[DefinitionScores] = (),
    classes: FrameClasses | None = None,
    queries: Sequence[Query] = (),
    features: Sequence[Features] = (),
    soft_labels: np.ndarray | None = None,
    interval_ap: bool = False,
    interval_ap_events: intervals.EventRule = "vadclip",
    category_bootstrap: uncertainty.CategoryBootstrap = "stratified",
    client: Any = None,
    replicate_memory: int = DEFAULT_REPLICATE_MEMORY,
    pair_count_method: str = "auto",
) -> AuditResult:
    """Audit models' frame scores against ground truth (and scene labels).

    Without models it reports the benchmark's composition: per-video counts, the within-pair
    fraction w, the oracle video-constant AUROC and the one-bit control.

    ``definition_scores`` (scores per frame and definition) add the definition-conditioned
    probes (:mod:`.definitions`), with frame classes from ``classes`` (an events table,
    :func:`.definitions.load_events`) or else the video categories, and D@5 over
    ``queries`` (default: one singleton query per class). ``features`` (per-snippet
    features) add the prototype readout (:mod:`.prototypes`). Both share the models' paired
    video bootstrap draws. ``soft_labels`` (F,) in [0, 1] add each model's Prob-AUC at
    micro, per-category and macro with paired intervals (:mod:`.uncertainty`).
    ``interval_ap`` adds the interval AP columns of the
    ``further`` table and the ``interval_ap`` table (tIoU 0.1–0.9, all and anomaly-containing
    videos), and with definition scores the ``class_wise_map`` table (the released VadCLIP
    rule, :mod:`.intervals`; a Python pass over every video's proposals, so it is asked for
    rather than always run); ``interval_ap_events`` is its event rule (``vadclip``: each
    annotated segment, ``merged``: the runs of frame labels).
    ``category_bootstrap``: the replicates of the
    per-category granularities (and their Prob-AUC) resample videos within each category
    (``stratified``, every category in every replicate) or are the shared video resamples
    (``unstratified``); either way the draws are the same for every model.

    ``client``: a ``distributed.Client``; each model's pair counting and its blocks of
    bootstrap replicates then run on that Dask cluster (:mod:`.execution`), with results equal
    to a local run to the last bit. ``replicate_memory``: bytes the draws of one block of
    replicates may take — memory is bounded by it, not by ``n_bootstrap``, and the results do
    not depend on it. ``pair_count_method``: how each model's pair counts are kept
    (:data:`.pairs.PAIR_COUNT_METHODS`; ``auto`` picks the cheaper, and every way gives the
    same numbers).

    Three steps: every input is checked first (:func:`_validate`), so a bad one is refused
    before any model is scored; then the tables are computed; then the conventions that
    state how they were computed are assembled.
    """
    if pair_count_method not in PAIR_COUNT_METHODS:
        raise AuditInputError(
            f"pair_count_method {pair_count_method!r}: expected one of "
            f"{', '.join(PAIR_COUNT_METHODS)}"
        )
    if interval_ap_events not in intervals.EVENT_RULES:
        raise AuditInputError(
            f"interval_ap_events {interval_ap_events!r}: expected one of "
            f"{', '.join(intervals.EVENT_RULES)}"
        )
    checked = _validate(
        ground_truth,
        models,
        scene,
        n_bootstrap=n_bootstrap,
        seed=seed,
        definition_scores=definition_scores,
        classes=classes,
        queries=queries,
        features=features,
        soft_labels=soft_labels,
        category_bootstrap=category_bootstrap,
        replicate_memory=replicate_memory,
    )
    report = progress or _no_progress
    bench = _Benchmark(ground_truth)
    # The scene contrasts' bootstrap and their permutations: the seed's second and third
    # streams (the first is the video draws', :func:`bootstrap_draws`).
    _, scene_stream, test_stream = np.random.SeedSequence(seed).spawn(3)
    resamples, by_category = bootstrap_draws(
        seed, bench.categories, n_bootstrap, category_bootstrap
    )
    spans = replicate_spans(n_bootstrap, ground_truth.n_videos, replicate_memory)
    runner = _runner(client)
    try:
        audited = _audit_models(
            bench,
            models,
            checked.scene,
            (resamples, by_category),
            (scene_stream, test_stream),
            events=intervals.video_events(ground_truth, interval_ap_events)
            if interval_ap
            else None,
            runner=runner,
            spans=spans,
            method=pair_count_method,
            report=report,
        )
    finally:
        if isinstance(runner, LocalRunner):
            runner.close()
    rows = audited.rows
    rows["comparisons"] = _comparisons(models, audited.estimates, audited.replicates)
    rows["resolved"] = _resolved_counts(models, rows["comparisons"])
    optional = _model_tables(models, rows)
    optional["covariance"] = _covariance_table(bench, models, audited)
    if soft_labels is not None:
        optional["prob_auc"] = _prob_auc_table(
            bench, models, soft_labels, (resamples.matrix(), by_category.matrix())
        )
    optional["video_level"] = pd.DataFrame(
        rows["video_level"], columns=list(controls.VIDEO_LEVEL_COLUMNS)
    )
    optional["retention_summary"] = controls.retention_summary(_frame("controls", rows["controls"]))
    if checked.classes is not None:
        optional |= _definition_tables(
            ground_truth,
            definition_scores,
            checked.classes,
            queries,
            resamples.matrix(),
            seed,
            report,
        )
    if features:
        optional["readout"] = _readout(
            ground_truth, features, (resamples.matrix(), by_category.matrix()), report
        )
    if interval_ap and checked.classes is not None:
        optional["class_wise_map"] = intervals.class_wise_map(
            ground_truth, definition_scores, checked.classes, interval_ap_events
        )
    return AuditResult(
        conventions=_conventions(
            ground_truth,
            models,
            checked.scene,
            n_bootstrap,
            seed,
            audited.empty_contrasts,
            interval_ap_events=interval_ap_events if interval_ap else None,
            category_bootstrap=_category_draws_stated(category_bootstrap, audited.missing),
            definition_scores=definition_scores,
            classes=classes,
            queries=queries,
            features=features,
            client=client,
        ),
        summary=_summary(bench),
        composition=_composition(bench),
        **{name: _frame(name, rows[name]) for name in AuditResult.TABLES if name != "composition"},
        models=tuple(m.name for m in models),
        **optional,
    )


def _no_progress(step: str, done: int, total: int) -> None:
    """The progress callback of a run that asked for none."""


def _runner(client: Any) -> Runner:
    """Threads of this process, or the Dask cluster of ``client``."""
    if client is None:
        return LocalRunner()
    from vadscene.audit.compute.cluster import dask_runner  # only runs with a cluster need it

    return dask_runner(client)


# --- validate -----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Checked:
    """What validation resolved: the scene labels matched to the ground truth, and the frame
    classes of the definition probes (the given ones, else the video categories; None
    without definition scores)."""

    scene: SceneLabels | None
    classes: FrameClasses | None


def _validate(
    ground_truth: GroundTruth,
    models: Sequence[ModelScores],
    scene: SceneLabels | None,
    *,
    n_bootstrap: int,
    seed: int,
    definition_scores: Sequence[DefinitionScores],
    classes: FrameClasses | None,
    queries: Sequence[Query],
    features: Sequence[Features],
    soft_labels: np.ndarray | None,
    category_bootstrap: str,
    replicate_memory: int,
) -> _Checked:
    """Refuse any input :func:`run_audit` cannot audit, cheapest checks first, before any
    model is scored."""
    if n_bootstrap < 0:
        raise AuditInputError(f"the number of bootstrap replicates must be ≥ 0, got {n_bootstrap}")
    if isinstance(replicate_memory, bool) or not isinstance(replicate_memory, int | np.integer):
        raise AuditInputError(
            f"replicate_memory must be a number of bytes, got {replicate_memory!r}"
        )
    if replicate_memory <= 0:
        raise AuditInputError(f"replicate_memory must be > 0 bytes, got {replicate_memory}")
    if category_bootstrap not in uncertainty.CATEGORY_BOOTSTRAPS:
        raise AuditInputError(
            f"category_bootstrap {category_bootstrap!r}: expected one of "
            f"{', '.join(uncertainty.CATEGORY_BOOTSTRAPS)}"
        )
    _check_types(ground_truth, models, scene)
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise AuditInputError(f"the bootstrap seed must be an integer ≥ 0, got {seed!r}")
    names = [m.name for m in models]
    if len(set(names)) != len(names):
        raise AuditInputError(f"model names must be unique, got {names}")
    for model in models:
        if model.scores.shape != ground_truth.labels.shape:
            raise AuditInputError(
                f"{model.source}: model '{model.name}': {model.scores.shape[0]} scores but the "
                f"ground truth has {ground_truth.n_frames} frames ({ground_truth.source})"
            )
    _refuse_one_kind_of_frame(ground_truth)
    refuse_beyond_memory(
        memory_estimate(
            audit_shape(
                ground_truth.offsets,
                ground_truth.labels,
                [m.scores for m in models],
                n_bootstrap,
                contrasts=len(scene.contrasts) if scene is not None else 0,
                replicate_memory=replicate_memory,
            )
        ),
        f"{ground_truth.source}: an audit of {ground_truth.n_videos:,} videos and "
        f"{ground_truth.n_frames:,} frames, {len(models)} models and {n_bootstrap:,} bootstrap "
        "replicates",
    )
    matched = match_to_ground_truth(scene, ground_truth) if scene is not None else None
    _check_soft_labels(ground_truth, soft_labels)
    resolved = (
        _checked_definitions(ground_truth, definition_scores, classes, queries)
        if definition_scores
        else None
    )
    _check_features(ground_truth, features)
    return _Checked(scene=matched, classes=resolved)


def _check_types(ground_truth: object, models: object, scene: object) -> None:
    """Refuse arguments of the wrong kind with what was expected, not an AttributeError."""
    if not isinstance(ground_truth, GroundTruth):
        raise AuditInputError(
            f"ground_truth must be a GroundTruth (see load_ground_truth), got "
            f"{type(ground_truth).__name__}"
        )
    if isinstance(models, ModelScores) or not isinstance(models, Sequence):
        raise AuditInputError(
            f"models must be a sequence of ModelScores, got {type(models).__name__}"
        )
    for i, model in enumerate(models):
        if not isinstance(model, ModelScores):
            raise AuditInputError(
                f"models[{i}] must be a ModelScores, e.g. ModelScores('name', scores, "
                f"source='...') or load_scores(...); got {type(model).__name__}"
            )
    if scene is not None and not isinstance(scene, SceneLabels):
        raise AuditInputError(
            f"scene must be SceneLabels (see load_scene_labels) or None, got {type(scene).__name__}"
        )


def _refuse_one_kind_of_frame(ground_truth: GroundTruth) -> None:
    """AUROC ranks anomalous against normal frames: a benchmark without both has no pair."""
    anomalous = int(ground_truth.labels.sum())
    if 0 < anomalous < ground_truth.n_frames:
        return
    frames = f"{ground_truth.n_frames} frames of the {ground_truth.n_videos} videos"
    if anomalous:
        found, hint = (
            f"all {frames} are anomalous",
            "check the interval convention (interval_end) and the frame counts",
        )
    else:
        found, hint = (
            f"none of the {frames} is anomalous",
            "check the ground-truth format and that its intervals name these videos",
        )
    raise AuditInputError(
        f"{ground_truth.source}: {found}; AUROC compares anomalous with normal frames, so "
        f"there is no pair to audit ({hint})"
    )


def _check_soft_labels(ground_truth: GroundTruth, soft_labels: np.ndarray | None) -> None:
    """Soft labels are one value in [0, 1] per ground-truth frame (see load_soft_labels)."""
    if soft_labels is None:
        return
    if not isinstance(soft_labels, np.ndarray):
        raise AuditInputError(
            "soft_labels must be a numpy array of one label per frame (see load_soft_labels), "
            f"got {type(soft_labels).__name__}"
        )
    if soft_labels.shape != ground_truth.labels.shape:
        raise AuditInputError(
            f"{soft_labels.shape[0]} soft labels for {ground_truth.n_frames} ground-truth frames"
        )
    with np.errstate(invalid="ignore"):
        outside = ~((soft_labels >= 0) & (soft_labels <= 1))  # NaN is outside too
    if outside.any():
        first = int(np.flatnonzero(outside)[0])
        video = int(ground_truth.video_index()[first])
        raise AuditInputError(
            f"soft labels must be finite values in [0, 1]: {int(outside.sum())} are not, the "
            f"first is video {ground_truth.video_ids[video]} frame "
            f"{first - int(ground_truth.offsets[video])} (frame {first} of the ground truth): "
            f"{soft_labels[first]}"
        )


def _checked_definitions(
    ground_truth: GroundTruth,
    definition_scores: Sequence[DefinitionScores],
    classes: FrameClasses | None,
    queries: Sequence[Query],
) -> FrameClasses:
    """The frame classes of the definition probes, once every model's scores, the classes
    and the queries are known to fit the ground truth and each other."""
    for i, model in enumerate(definition_scores):
        if not isinstance(model, DefinitionScores):
            raise AuditInputError(
                f"definition_scores[{i}] must be DefinitionScores (see load_definition_scores), "
                f"got {type(model).__name__}"
            )
        if model.scores.shape[0] != ground_truth.n_frames:
            raise AuditInputError(
                f"{model.source}: model '{model.name}': definition scores for "
                f"{model.scores.shape[0]} frames but the ground truth has "
                f"{ground_truth.n_frames} ({ground_truth.source})"
            )
    if classes is not None and not isinstance(classes, FrameClasses):
        raise AuditInputError(
            f"classes must be FrameClasses (see load_events) or None, got {type(classes).__name__}"
        )
    resolved = classes if classes is not None else classes_from_categories(ground_truth)
    if resolved.codes.shape != ground_truth.labels.shape:
        raise AuditInputError(
            f"{resolved.source}: classes for {resolved.codes.shape[0]} frames but the ground "
            f"truth has {ground_truth.n_frames} ({ground_truth.source})"
        )
    check_definition_inputs(resolved, definition_scores, list(queries))
    return resolved


def _check_features(ground_truth: GroundTruth, features: Sequence[Features]) -> None:
    """Features hold one array per ground-truth video (see load_features)."""
    for i, model in enumerate(features):
        if not isinstance(model, Features):
            raise AuditInputError(
                f"features[{i}] must be Features (see load_features), got {type(model).__name__}"
            )
        if len(model.per_video) != ground_truth.n_videos:
            raise AuditInputError(
                f"{model.source}: features '{model.name}': {len(model.per_video)} videos but "
                f"the ground truth has {ground_truth.n_videos} ({ground_truth.source})"
            )


# --- compute ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _ModelsAudited:
    """Every model's table rows (in the models' order), point estimates and bootstrap
    replicates per granularity, and the scene contrasts left out for want of support; the
    terms of the clustered covariances per model."""

    rows: dict[str, list[dict]]
    estimates: dict[str, dict[str, float]]
    replicates: dict[str, dict[str, np.ndarray]]
    empty_contrasts: list[str]
    terms: dict[str, uncertainty.ClusterTerms]
    missing: tuple[int, int]  # replicates leaving a category out (:func:`block_missing`)


def _audit_models(
    bench: _Benchmark,
    models: Sequence[ModelScores],
    scene: SceneLabels | None,
    draws: tuple[VideoDraws, VideoDraws],
    streams: tuple[np.random.SeedSequence, np.random.SeedSequence],
    *,
    events: list[list[intervals.Event]] | None,
    runner: Runner,
    spans: list[tuple[int, int]],
    method: str,
    report: AuditProgress,
) -> _ModelsAudited:
    """Audit every model through ``runner``: its pair counting, then its point estimates and
    table rows beside its blocks of bootstrap replicates (``spans``), while this thread draws
    the scene contrasts' resamples from ``streams`` (the bias bootstrap's and the permutation
    tests'). ``draws``: the shared video resamples and the per-category granularities'."""
    rows: dict[str, list[dict]] = {name: [] for name in AuditResult.TABLES}
    rows["further"] = []
    rows["interval_ap"] = []  # with events: interval AP asked for, under their event rule
    rows["video_level"] = []
    replicates: dict[str, dict[str, np.ndarray]] = {}
    estimates: dict[str, dict[str, float]] = {}
    terms: dict[str, uncertainty.ClusterTerms] = {}
    report("models", 0, len(models))
    # The replicates' matrix products are small and many: BLAS threads beside the runner's
    # threads only oversubscribe the cores.
    with threadpool_limits(limits=1, user_api="blas"):
        videos, frames = runner.put(bench.videos), runner.put(bench.frames)
        # both ways of counting read each kept replicate twice (shared and per-category draws)
        weighings = 2 * draws[0].replicates + 1
        scores = [runner.put(model.scores) for model in models]
        counted = [runner.submit(count_model, videos, frames, s, weighings, method) for s in scores]
        contrasts, empty = (
            _contrast_draws(bench, scene, draws[0].replicates, *streams)
            if scene is not None
            else ([], [])
        )
        shared = runner.put(contrasts)
        points = [
            runner.submit(
                model_point,
                videos,
                frames,
                counts,
                model_scores,
                (model.name, model.family),
                shared,
                events,
            )
            for model, model_scores, counts in zip(models, scores, counted, strict=True)
        ]
        blocks, missing = _replicate_blocks(runner, videos, counted, draws, spans)
        for done, (model, point) in enumerate(zip(models, points, strict=True), 1):
            audited = runner.gather([point])[0]
            model_replicates = _joined([block[done - 1] for block in blocks], audited.estimates)
            estimates[model.name], replicates[model.name] = audited.estimates, model_replicates
            terms[model.name] = audited.terms
            for name, new_rows in audited.rows.items():
                rows[name].extend(new_rows)
            rows["metrics"].extend(_metric_rows(bench, model, audited, model_replicates))
            rows["video_level"].extend(
                controls.video_level_rows(
                    model.name,
                    model.family,
                    audited.video_scores,
                    bench.a,
                    {name: model_replicates[f"video_{name}"] for name in controls.VIDEO_SCORES},
                )
            )
            report("models", done, len(models))
    return _ModelsAudited(rows, estimates, replicates, empty, terms, missing)


def _replicate_blocks(
    runner: Runner,
    videos: Any,
    counted: list[Any],
    draws: tuple[VideoDraws, VideoDraws],
    spans: list[tuple[int, int]],
) -> tuple[list[list[dict[str, np.ndarray]]], tuple[int, int]]:
    """Per block of replicates (``spans``), every model's replicate values: each block drawn
    once, evaluated by every model (``counted``: their pair counts' handles), at most
    :data:`BLOCKS_IN_FLIGHT` blocks at a time; and the replicates that leave a category out
    (:func:`block_missing`, summed over the blocks)."""
    done: list[list[Any]] = []
    pending: list[list[Any]] = []
    for start, stop in spans:
        drawn = runner.submit(draw_block, draws, start, stop)
        pending.append(
            [
                runner.submit(block_missing, videos, drawn),
                *(runner.submit(replicate_block, videos, c, drawn) for c in counted),
            ]
        )
        if len(pending) >= BLOCKS_IN_FLIGHT:
            done.append(runner.gather(pending.pop(0)))
    done.extend(runner.gather(block) for block in pending)
    missing = (sum(block[0][0] for block in done), sum(block[0][1] for block in done))
    return [block[1:] for block in done], missing


def block_missing(videos: _Videos, drawn: tuple[np.ndarray, np.ndarray]) -> tuple[int, int]:
    """How many replicates of a drawn block (:func:`draw_block`) leave a category out, under
    the shared draws and under the per-category draws."""
    resamples, by_category = drawn

    def missing(multiplicities: np.ndarray) -> int:
        return uncertainty.replicates_missing_a_category(
            multiplicities, videos.a, videos.n, videos.categories, videos.normal_category
        )

    unstratified = missing(resamples)
    # unstratified, the per-category draws are the shared resamples: counted once
    return unstratified, unstratified if by_category is resamples else missing(by_category)


def draw_block(
    draws: tuple[VideoDraws, VideoDraws], start: int, stop: int
) -> tuple[np.ndarray, np.ndarray]:
    """Replicates start … stop − 1 of the shared and the per-category draws (one array when
    they are the same draws)."""
    resamples = draws[0].block(start, stop)
    return resamples, resamples if draws[1] is draws[0] else draws[1].block(start, stop)


def _joined(
    blocks: list[dict[str, np.ndarray]], estimates: dict[str, float]
) -> dict[str, np.ndarray]:
    """One model's replicate values per quantity, its blocks put end to end."""
    names = [*estimates, *(f"video_{name}" for name in controls.VIDEO_SCORES)]
    return {
        name: np.concatenate([block[name] for block in blocks]) if blocks else np.zeros(0)
        for name in names
    }


def _metric_rows(
    bench: _Benchmark, model: ModelScores, audited: ModelPoint, replicates: dict[str, np.ndarray]
) -> list[dict]:
    """One model's ``metrics`` rows: estimate, percentile interval, clustered SE."""
    variances = uncertainty.clustered_covariances(audited.terms, audited.terms, bench.a, bench.n)
    rows = []
    for granularity in GRANULARITIES:
        low, high = percentile_interval(replicates[granularity])
        rows.append(
            {
                "model": model.name,
                "family": model.family,
                "granularity": granularity,
                "value": audited.estimates[granularity],
                "ci_low": low,
                "ci_high": high,
                "clustered_se": uncertainty.clustered_se(variances.get(granularity, float("nan"))),
            }
        )
    return rows


def _model_tables(
    models: Sequence[ModelScores], rows: dict[str, list[dict]]
) -> dict[str, pd.DataFrame]:
    """The optional tables drawn from the models' rows: further metrics, the metrics'
    agreement and spread (two models or more), pair-type means."""
    tables_: dict[str, pd.DataFrame] = {
        "further": pd.DataFrame(rows["further"], columns=tables.FURTHER_COLUMNS),
        "interval_ap": pd.DataFrame(rows["interval_ap"], columns=intervals.INTERVAL_AP_COLUMNS),
    }
    if len(models) >= 2:
        metric_rows = pd.DataFrame(rows["metrics"], columns=_COLUMNS["metrics"])
        tables_["agreement"] = tables.metric_agreement(metric_rows)
        tables_["spread"] = tables.spread_table(metric_rows)
    tables_["pair_type_means"] = tables.pair_type_means(
        _frame("scene_pairs", rows["scene_pairs"]),
        _frame("scene_conditioned", rows["scene_conditioned"]),
    )
    return tables_


COVARIANCE_COLUMNS = [
    "model_a",
    "model_b",
    "family_a",
    "family_b",
    "scope",
    "granularity",
    "difference",
    "se_a",
    "se_b",
    "covariance",
    "correlation",
    "se_difference",
    "z",
    "p_value",
    "reason",
]
PROB_AUC_COLUMNS = ["model", "family", "granularity", "value", "ci_low", "ci_high"]


def _pair_of(first: ModelScores, second: ModelScores) -> dict[str, str | None]:
    """The columns naming a model pair: the two models, their families and whether the pair
    lies within one family or across two (Table S4's split)."""
    return {
        "model_a": first.name,
        "model_b": second.name,
        "family_a": first.family,
        "family_b": second.family,
        "scope": uncertainty.family_scope(first.family, second.family),
    }


def _covariance_table(
    bench: _Benchmark, models: Sequence[ModelScores], audited: _ModelsAudited
) -> pd.DataFrame:
    """Per model pair and clustered granularity (micro, within, macro): the clustered
    covariance of the two AUROCs and the z-test of their difference it gives
    (docs/metrics.md, "Clustered covariance of two models")."""
    rows = []
    for first, second in itertools.combinations(models, 2):
        terms_a, terms_b = audited.terms[first.name], audited.terms[second.name]
        variance_a = uncertainty.clustered_covariances(terms_a, terms_a, bench.a, bench.n)
        variance_b = uncertainty.clustered_covariances(terms_b, terms_b, bench.a, bench.n)
        covariance = uncertainty.clustered_covariances(terms_a, terms_b, bench.a, bench.n)
        for granularity in uncertainty.CLUSTERED_GRANULARITIES:
            difference = (
                audited.estimates[first.name][granularity]
                - audited.estimates[second.name][granularity]
            )
            rows.append(
                {
                    **_pair_of(first, second),
                    "granularity": granularity,
                    "difference": difference,
                    "se_a": uncertainty.clustered_se(variance_a[granularity]),
                    "se_b": uncertainty.clustered_se(variance_b[granularity]),
                    "covariance": covariance[granularity],
                    **uncertainty.difference_test(
                        difference,
                        variance_a[granularity],
                        variance_b[granularity],
                        covariance[granularity],
                    ),
                }
            )
    return pd.DataFrame(rows, columns=COVARIANCE_COLUMNS)


def _prob_auc_table(
    bench: _Benchmark,
    models: Sequence[ModelScores],
    soft_labels: np.ndarray,
    draws: tuple[np.ndarray, np.ndarray],
) -> pd.DataFrame:
    """Each model's Prob-AUC at micro, per-category and macro ([audit] Table 2) with 95 %
    intervals over the shared video resamples (the category draws for per-category)."""
    resamples, by_category = draws
    rows = []
    for model in models:
        soft = uncertainty.soft_pair_counts(
            model.scores, soft_labels, bench.gt.video_index(), bench.gt.n_videos
        )
        normal = bench.gt.normal_category
        estimates = uncertainty.prob_auc_granularities(
            soft, bench.ones, bench.ones, bench.categories, normal
        )
        replicates = uncertainty.prob_auc_granularities(
            soft, resamples, by_category, bench.categories, normal
        )
        for granularity in uncertainty.PROB_AUC_GRANULARITIES:
            low, high = percentile_interval(replicates[granularity])
            rows.append(
                {
                    "model": model.name,
                    "family": model.family,
                    "granularity": granularity,
                    "value": float(estimates[granularity][0]),
                    "ci_low": low,
                    "ci_high": high,
                }
            )
    return pd.DataFrame(rows, columns=PROB_AUC_COLUMNS)


def _category_draws_stated(
    mode: uncertainty.CategoryBootstrap, missing: tuple[int, int]
) -> dict[str, object]:
    """The bootstrap conventions of the per-category granularities: which draws they read,
    and how many replicates leave a category out (``missing``, :func:`block_missing` summed
    over the blocks) — under the unstratified draws always (what the stratified ones avoid)
    and under the draws used."""
    resampling = (
        "stratified: videos with replacement within each category (every category in every "
        "replicate), the same draws for every model"
        if mode == "stratified"
        else "unstratified: the shared video resamples (a replicate that misses a category "
        "averages the others)"
    )
    return {
        "category_resampling": f"{resampling}; read by per_category, category_vs_normal, the "
        "per-category Prob-AUC and the per-category prototype readout",
        "replicates_missing_a_category_unstratified": missing[0],
        "replicates_missing_a_category": missing[1],
    }


def _definition_tables(
    ground_truth: GroundTruth,
    definition_scores: Sequence[DefinitionScores],
    classes: FrameClasses,
    queries: Sequence[Query],
    resamples: np.ndarray,
    seed: int,
    report: AuditProgress,
) -> dict[str, pd.DataFrame]:
    """The definition-conditioned probes, on the models' paired video draws."""
    report("definitions", 0, 1)
    probes = audit_definitions(
        ground_truth,
        definition_scores,
        classes,
        queries,
        resamples=resamples,
        selection_seed=seed,
    )
    report("definitions", 1, 1)
    return {
        "definition_probes": probes.probes,
        "definition_queries": probes.queries,
        "definition_classes": probes.classes,
    }


def _readout(
    ground_truth: GroundTruth,
    features: Sequence[Features],
    draws: tuple[np.ndarray, np.ndarray],
    report: AuditProgress,
) -> pd.DataFrame:
    """The prototype readout of the features, on the models' paired video draws (``draws``:
    the shared resamples and those of the per-category granularity)."""
    report("features", 0, 1)
    readout = audit_features(ground_truth, features, resamples=draws[0], by_category=draws[1])
    report("features", 1, 1)
    return readout


@dataclass(frozen=True)
class ModelCounts:
    """One model's runs of frames and its pair counts: what its tasks share."""

    runs: FrameRuns
    order: np.ndarray  # the runs' ascending score order
    pairs: PairCounts
    video_scores: dict[str, np.ndarray]  # the video-level scores (max, mean) per video
    video_counts: dict[str, PairCounts]  # their pair counts, videos against videos


def count_model(
    videos: _Videos, frames: _Frames, scores: np.ndarray, weighings: int, method: str = "auto"
) -> ModelCounts:
    """The runs and pair counts of one model's frame scores, kept by ``method`` (``auto``: the
    cheaper way for ``weighings`` evaluations, :func:`.pairs.pair_counts_of_runs`), and those
    of its video-level scores (sorted once here, read by every block of replicates)."""
    runs = runs_of_videos(scores, frames.labels, frames.offsets)
    n_videos = frames.offsets.size - 1
    order = ascending_order(runs.scores)  # sorted once: for the pair counts, AP, the controls
    per_video = controls.video_scores(runs, n_videos)
    return ModelCounts(
        runs,
        order,
        pair_counts_of_runs(runs, n_videos, replicates=weighings, method=method, order=order),
        per_video,
        {name: controls.video_level_counts(values, videos.a) for name, values in per_video.items()},
    )


def replicate_block(
    videos: _Videos, counts: ModelCounts, drawn: tuple[np.ndarray, np.ndarray]
) -> dict[str, np.ndarray]:
    """Every granularity and video-level AUROC of one model on a block of replicates
    (``drawn``: their shared and per-category multiplicities, :func:`draw_block`)."""
    resamples, by_category = drawn
    values = videos.granularities(counts.pairs, resamples, by_category)
    for name in controls.VIDEO_SCORES:
        values[f"video_{name}"] = controls.video_level_aurocs(
            counts.video_counts[name], videos.a, resamples
        )
    return values


@dataclass(frozen=True)
class ModelPoint:
    """One model's point estimates, the terms of its clustered covariances, its table rows
    but the metrics' and the video level's (which wait for the replicates) and its video
    scores."""

    estimates: dict[str, float]
    terms: uncertainty.ClusterTerms
    rows: dict[str, list[dict]]
    video_scores: dict[str, np.ndarray]


def model_point(
    videos: _Videos,
    frames: _Frames,
    counts: ModelCounts,
    scores: np.ndarray,
    label: tuple[str, str | None],
    contrasts: list[_ContrastDraws],
    events: list[list[intervals.Event]] | None,
) -> ModelPoint:
    """Everything about one model but its bootstrap replicates: estimates, controls, interval
    AP, AUCA, per-category rows, bias-AUC (with its own within-pole bootstrap) and
    scene-conditioned AUC on every contrast (``contrasts``: their draws)."""
    name, family = label
    a, n, u = videos.a, videos.n, counts.pairs
    ones = metrics.ones(videos.n_videos)
    estimates = {g: float(v[0]) for g, v in videos.granularities(u, ones).items()}
    rows: dict[str, list[dict]] = {table: [] for table in AuditResult.TABLES}
    rows["controls"].append(
        controls.control_row(name, family, counts.runs, counts.order, u, estimates["micro"], a, n)
    )
    interval_rows = (
        intervals.interval_ap_rows(scores, frames.offsets, events, a) if events is not None else []
    )
    rows["interval_ap"] = [{"model": name, "family": family, **row} for row in interval_rows]
    rows["further"] = [
        {
            "model": name,
            "family": family,
            **tables.auca(u, a, n),
            **intervals.further_interval_columns(interval_rows),
        }
    ]
    rows["per_category"].extend(_per_category(videos, name, u))
    _scene_rows(videos, (name, family), counts.runs, u, contrasts, rows)
    return ModelPoint(estimates, uncertainty.cluster_terms(u, a, n), rows, counts.video_scores)


def _per_category(videos: _Videos, model: str, u: PairCounts) -> list[dict]:
    same, versus_normal = metrics.both_category_aurocs(
        u,
        videos.a,
        videos.n,
        metrics.ones(videos.n_videos),
        videos.categories,
        videos.normal_category,
    )
    rows = []
    for category in same:
        members = videos.categories == category
        rows.append(
            {
                "model": model,
                "category": category,
                "videos": int(members.sum()),
                "anomalous_frames": int(videos.a[members].sum()),
                "normal_frames": int(videos.n[members].sum()),
                "same_category_auroc": float(same[category][0]),
                "category_vs_normal_auroc": float(versus_normal[category][0]),
            }
        )
    return rows


@dataclass(frozen=True)
class _PopulationDraws:
    """A contrast's poles within one bias population, their within-pole resamples (CI and
    p_bias) and pole-label shuffles (permutation test) — drawn once, shared by every model."""

    plus: np.ndarray  # bool (V,)
    minus: np.ndarray  # bool (V,)
    plus_counts: np.ndarray  # (B, n⁺) copy counts
    minus_counts: np.ndarray  # (B, n⁻)
    permuted: np.ndarray  # bool (B, n⁺ + n⁻): ⊕ membership of the support videos, shuffled


@dataclass(frozen=True)
class _ContrastDraws:
    contrast: SceneContrast
    plus: np.ndarray  # the whole ⊕ pole (scene-conditioned AUC)
    minus: np.ndarray
    populations: dict[str, _PopulationDraws]


def _contrast_draws(
    bench: _Benchmark,
    scene: SceneLabels,
    n_bootstrap: int,
    stream: np.random.SeedSequence,
    test_stream: np.random.SeedSequence,
) -> tuple[list[_ContrastDraws], list[str]]:
    """Draws of every contrast with a labelled ground-truth video; the labels of contrasts
    with none (0/0 support) are returned apart, to be listed once instead of as n/a rows."""
    members = {
        "all": bench.n > 0,
        "leak_free": (bench.categories == bench.gt.normal_category)
        & (bench.a == 0)
        & (bench.n > 0),
    }
    draws, empty = [], []
    seeds = zip(
        scene.contrasts,
        stream.spawn(len(scene.contrasts)),
        test_stream.spawn(len(scene.contrasts)),
        strict=True,
    )
    for contrast, seed, test_seed in seeds:
        plus, minus = scene.poles(contrast, bench.gt.video_ids)
        if not (plus.any() or minus.any()):
            empty.append(f"{contrast.factor}: {contrast.positive} vs {contrast.negative}")
            continue
        leak_free_rng, *permutation_rngs = map(np.random.default_rng, test_seed.spawn(3))
        bootstrap_rngs = {"all": np.random.default_rng(seed), "leak_free": leak_free_rng}
        populations = {
            name: _population_draws(
                plus & inside,
                minus & inside,
                n_bootstrap,
                bootstrap_rngs[name],
                permutation_rng,
            )
            for (name, inside), permutation_rng in zip(
                members.items(), permutation_rngs, strict=True
            )
        }
        draws.append(_ContrastDraws(contrast, plus, minus, populations))
    return draws, empty


def _population_draws(
    plus: np.ndarray,
    minus: np.ndarray,
    n_bootstrap: int,
    bootstrap_rng: np.random.Generator,
    permutation_rng: np.random.Generator,
) -> _PopulationDraws:
    sizes = int(plus.sum()), int(minus.sum())
    replicates = n_bootstrap if all(sizes) else 0
    plus_counts, minus_counts = (
        uniform_copy_counts(bootstrap_rng, size, replicates) for size in sizes
    )
    support_is_plus = plus[plus | minus]
    permuted = permutation_rng.permuted(np.tile(support_is_plus, (n_bootstrap, 1)), axis=1)
    return _PopulationDraws(plus, minus, plus_counts, minus_counts, permuted)


def _scene_rows(
    videos: _Videos,
    model: tuple[str, str | None],
    runs: FrameRuns,
    u: PairCounts,
    contrasts: list[_ContrastDraws],
    rows: dict[str, list[dict]],
) -> None:
    """Bias-AUC in both populations (A §4; docs/metrics.md) and scene-conditioned AUC
    (A S1.2) of one model (name, family) on every contrast."""
    if not contrasts:  # no scene contrast: nothing reads the normal-footage means
        return
    name, family = model
    means = metrics.video_means(
        runs.scores, runs.video, videos.n_videos, weights=runs.weight, mask=~runs.labels
    )
    bias_rows = []
    for draw in contrasts:
        contrast = draw.contrast
        label = {
            "model": name,
            "factor": contrast.factor,
            "positive": contrast.positive,
            "negative": contrast.negative,
        }
        everyone = draw.populations["all"]
        row = {
            **label,
            "family": family,
            "primary": contrast.primary,
            "role": contrast.role,
            "anomalous_share_positive": _anomalous_share(videos.a, everyone.plus),
            "anomalous_share_negative": _anomalous_share(videos.a, everyone.minus),
        }
        for population, draws in draw.populations.items():
            suffix = "" if population == "all" else f"_{population}"
            cells = _bias_cells(means, draws)
            row |= {f"{name}{suffix}": value for name, value in cells.items()}
        row["leakage_warning"] = _leakage_warning(row)
        bias_rows.append(row)
        pairs, reference, conditioned = scene_conditioned(
            u, videos.a, videos.n, draw.plus, draw.minus
        )
        for pair_type in PAIR_TYPES:
            auroc, weight = pairs[pair_type]
            rows["scene_pairs"].append(
                {**label, "pair_type": pair_type, "auroc": auroc, "weight": weight}
            )
        rows["scene_conditioned"].append(
            {
                **label,
                "family": family,
                "auroc_ref": reference,
                "auroc_cond": conditioned,
                "delta_scene": reference - conditioned,
            }
        )
    _holm_across_factors(bias_rows)
    rows["bias"].extend(bias_rows)


def _bias_cells(means: np.ndarray, draws: _PopulationDraws) -> dict[str, float | int | bool]:
    """bias-AUC with its CI and p_bias (within-pole bootstrap, A §4), the permutation p-value,
    and whether both poles reach :data:`MIN_POLE_SUPPORT`."""
    x, y = means[draws.plus], means[draws.minus]
    estimate = bias_auroc(x, y, np.ones((1, x.size)), np.ones((1, y.size)))[0]
    if draws.plus_counts.shape[0]:
        resampled = bias_auroc(x, y, draws.plus_counts, draws.minus_counts)
        low, high = percentile_interval(resampled)
        p_bias = float(np.mean(np.abs(resampled - 0.5) > BIAS_MARGIN))
    else:
        low = high = p_bias = float("nan")
    support = draws.plus | draws.minus
    return {
        "n_positive": int(x.size),
        "n_negative": int(y.size),
        "bias_auroc": float(estimate),
        "ci_low": low,
        "ci_high": high,
        "p_bias": p_bias,
        "p_permutation": permutation_p_value(means[support], draws.plus[support], draws.permuted),
        "supported": min(x.size, y.size) >= MIN_POLE_SUPPORT,
    }


def _anomalous_share(a: np.ndarray, pole: np.ndarray) -> float:
    """Share of a pole's population-(a) videos that hold anomalous frames."""
    return float((a[pole] > 0).mean()) if pole.any() else float("nan")


def _leakage_warning(row: dict) -> bool:
    """The poles hold different shares of anomalous videos and the two populations' 95 %
    intervals do not overlap: population (a) then measures anomaly leakage, not the scene."""
    shares_differ = row["anomalous_share_positive"] != row["anomalous_share_negative"]
    bounds = [row[k] for k in ("ci_low", "ci_high", "ci_low_leak_free", "ci_high_leak_free")]
    if not shares_differ or not all(np.isfinite(bounds)):
        return False
    low, high, low_free, high_free = bounds
    return bool(low > high_free or low_free > high)


def _holm_across_factors(bias_rows: list[dict]) -> None:
    """Holm-adjust one model's permutation p-values across its supported contrasts, per
    population; unsupported cells get no adjusted p-value and are never significant."""
    for population in BIAS_POPULATIONS:
        suffix = "" if population == "all" else f"_{population}"
        p_values = np.array(
            [r[f"p_permutation{suffix}"] if r[f"supported{suffix}"] else np.nan for r in bias_rows],
            dtype=np.float64,
        )
        for row, adjusted in zip(bias_rows, holm_adjusted(p_values), strict=True):
            row[f"p_holm{suffix}"] = float(adjusted)
            row[f"significant{suffix}"] = bool(adjusted <= SIGNIFICANCE_LEVEL)


def _comparisons(
    models: Sequence[ModelScores],
    estimates: dict[str, dict[str, float]],
    replicates: dict[str, dict[str, np.ndarray]],
) -> list[dict]:
    """Paired bootstrap differences D_r = AUC_g^A(r) − AUC_g^B(r); resolved when the 95 %
    interval excludes 0 (A §3.3, Eqs. 6–8)."""
    rows = []
    for first, second in itertools.combinations(models, 2):
        for granularity in GRANULARITIES:
            low, high = percentile_interval(
                replicates[first.name][granularity] - replicates[second.name][granularity]
            )
            rows.append(
                {
                    **_pair_of(first, second),
                    "granularity": granularity,
                    "difference": estimates[first.name][granularity]
                    - estimates[second.name][granularity],
                    "ci_low": low,
                    "ci_high": high,
                    "resolved": bool(low > 0 or high < 0),
                }
            )
    return rows


_SCOPE_LABELS = {"within_family": "within-family", "cross_family": "cross-family"}
"""The ``family`` cell of the resolved counts over every within- / cross-family pair."""


def _resolved_counts(models: Sequence[ModelScores], comparisons: list[dict]) -> list[dict]:
    """Resolved pairs per granularity, over all pairs, over the pairs within one family and
    those across families, and within each family (A Table 3, Table S4)."""
    if len(models) < 2:
        return []
    families = sorted({m.family for m in models if m.family})
    rows = []
    for granularity in GRANULARITIES:
        chosen = [c for c in comparisons if c["granularity"] == granularity]
        groups = [("all", "all", chosen)]
        if families:
            groups += [
                (scope, label, [c for c in chosen if c["scope"] == scope])
                for scope, label in _SCOPE_LABELS.items()
            ]
        groups += [
            ("family", f, [c for c in chosen if c["family_a"] == f and c["family_b"] == f])
            for f in families
        ]
        for scope, family, members in groups:
            rows.append(
                {
                    "granularity": granularity,
                    "scope": scope,
                    "family": family,
                    "resolved": sum(c["resolved"] for c in members),
                    "pairs": len(members),
                }
            )
    return rows


def _summary(bench: _Benchmark) -> dict[str, float | int]:
    a, n = bench.a, bench.n
    oracle = video_constant_counts(a / np.maximum(a + n, 1), a, n)
    return {
        "videos": bench.gt.n_videos,
        "frames": bench.gt.n_frames,
        "anomalous_frames": int(a.sum()),
        "normal_frames": int(n.sum()),
        "anomalous_videos": int((a > 0).sum()),
        "mixed_videos": int(((a > 0) & (n > 0)).sum()),
        "prevalence": float(a.sum() / max(a.sum() + n.sum(), 1)),
        "within_pair_fraction": metrics.within_pair_fraction(a, n),
        "max_within_gain": metrics.within_pair_fraction(a, n) / 2,
        "oracle_video_constant_auroc": float(metrics.micro_auroc(oracle, a, n, bench.ones)[0]),
        "one_bit_auroc": metrics.one_bit_auroc(a, n),
        "within_effective_videos": controls.within_effective_videos(a, n),
    }


def _composition(bench: _Benchmark) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "video": bench.gt.video_ids,
            "category": bench.gt.categories,
            "frames": bench.gt.frame_counts.astype(int),
            "anomalous": bench.a.astype(int),
            "normal": bench.n.astype(int),
            "mixed": (bench.a > 0) & (bench.n > 0),
        }
    )


_COLUMNS = {
    "metrics": ["model", "family", "granularity", "value", "ci_low", "ci_high", "clustered_se"],
    "controls": list(controls.CONTROL_COLUMNS),
    "per_category": [
        "model",
        "category",
        "videos",
        "anomalous_frames",
        "normal_frames",
        "same_category_auroc",
        "category_vs_normal_auroc",
    ],
    "comparisons": [
        "model_a",
        "model_b",
        "family_a",
        "family_b",
        "scope",
        "granularity",
        "difference",
        "ci_low",
        "ci_high",
        "resolved",
    ],
    "resolved": ["granularity", "scope", "family", "resolved", "pairs"],
    "bias": [
        "model",
        "family",
        "factor",
        "positive",
        "negative",
        "primary",
        "role",
        "n_positive",
        "n_negative",
        "bias_auroc",
        "ci_low",
        "ci_high",
        "p_bias",
        "p_permutation",
        "p_holm",
        "significant",
        "supported",
        "anomalous_share_positive",
        "anomalous_share_negative",
        "n_positive_leak_free",
        "n_negative_leak_free",
        "bias_auroc_leak_free",
        "ci_low_leak_free",
        "ci_high_leak_free",
        "p_bias_leak_free",
        "p_permutation_leak_free",
        "p_holm_leak_free",
        "significant_leak_free",
        "supported_leak_free",
        "leakage_warning",
    ],
    "scene_pairs": ["model", "factor", "positive", "negative", "pair_type", "auroc", "weight"],
    "scene_conditioned": [
        "model",
        "family",
        "factor",
        "positive",
        "negative",
        "auroc_ref",
        "auroc_cond",
        "delta_scene",
    ],
}


def _frame(name: str, rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=_COLUMNS[name])


# --- conventions --------------------------------------------------------------------------


def _conventions(
    ground_truth: GroundTruth,
    models: Sequence[ModelScores],
    scene: SceneLabels | None,
    n_bootstrap: int,
    seed: int,
    empty_contrasts: list[str],
    *,
    category_bootstrap: dict[str, object],
    definition_scores: Sequence[DefinitionScores],
    classes: FrameClasses | None,
    queries: Sequence[Query],
    features: Sequence[Features],
    interval_ap_events: intervals.EventRule | None = None,
    client: Any = None,
) -> dict:
    """How the tables were computed, as the report states it: the inputs, the tie and
    bootstrap conventions, and those of the definition probes, the readout and interval AP
    (``interval_ap_events``: its event rule, None when not computed) when run, and the Dask
    cluster of ``client`` that computed them."""
    conventions: dict[str, object] = {
        "ground_truth": ground_truth.source,
        **ground_truth.conventions,
        "normal_category": ground_truth.normal_category,
        "tie_convention": "τ(x, y) = 1[x > y] + ½·1[x = y] (as sklearn roc_auc_score)",
        "clustered_se": uncertainty.CLUSTERED_SE_STATEMENT,
        "bootstrap": {
            "replicates": n_bootstrap,
            "seed": seed,
            "resampling": "videos with replacement, the same draws for every model (paired); "
            "replicate r drawn from its own child seed, so the draws do not depend on the "
            "block size or on where they are computed",
            "interval": "95 % percentile (numpy linear quantiles)"
            if n_bootstrap
            else "none: no bootstrap intervals were computed (B = 0)",
            "bias_resampling": "videos with replacement within each pole",
            "bias_margin": BIAS_MARGIN,
            "permutation": "pole labels shuffled among each contrast's videos (pole sizes "
            "kept), the same B and shuffles for every model; Holm across contrasts per model "
            "and population",
            "min_pole_support": MIN_POLE_SUPPORT,
            "significance_level": SIGNIFICANCE_LEVEL,
            **category_bootstrap,
        },
        "models": [
            {"name": m.name, "family": m.family, "source": m.source, "notes": list(m.notes)}
            for m in models
        ],
        "scene_labels": scene.source if scene is not None else None,
        "scene_coverage": _coverage(ground_truth, scene) if scene is not None else None,
        "empty_contrasts": empty_contrasts,
        "scene_labels_not_in_ground_truth": (
            _not_in_ground_truth(scene.not_in_ground_truth) if scene is not None else None
        ),
    }
    if definition_scores:
        conventions["definition_scores"] = {
            "models": [
                {"name": m.name, "family": m.family, "source": m.source, "notes": list(m.notes)}
                for m in definition_scores
            ],
            "classes": classes.source if classes is not None else "video categories",
            "queries": sorted({q.source for q in queries}) or ["one singleton query per class"],
            "target_rule": "a frame is a target of Γ when its class set lies inside Γ; frames "
            "holding an excluded class are excluded anomalies",
            "ap_intervals": "none (AP values are point estimates)",
            "selection_bootstrap": "clusters of multi-event videos sharing one class set, "
            "resampled with replacement",
        }
    if interval_ap_events is not None:
        conventions["interval_ap"] = intervals.conventions(ground_truth, interval_ap_events)
    if models:
        conventions["controls"] = dict(controls.CONVENTIONS)
    if features:
        conventions["features"] = {
            "models": [{"name": f.name, "family": f.family, "source": f.source} for f in features],
            "snippet_frames": sorted({f.snippet_repeat for f in features}),
            "snippet_label_rule": SNIPPET_LABEL_RULE,
        }
    if client is not None:
        from vadscene.audit.compute.cluster import cluster_summary

        conventions["cluster"] = cluster_summary(client)
    return conventions


def _not_in_ground_truth(videos: tuple[str, ...], shown: int = 10) -> str:
    if not videos:
        return "none"
    more = f", … ({len(videos) - shown} more)" if len(videos) > shown else ""
    return f"{len(videos)} left out ({', '.join(videos[:shown])}{more})"


def _coverage(ground_truth: GroundTruth, scene: SceneLabels) -> dict[str, str]:
    """Per factor: how many ground-truth videos carry a value (ambiguous included)."""
    return {
        factor: f"{sum(v in values for v in ground_truth.video_ids)} of "
        f"{ground_truth.n_videos} videos"
        for factor, values in scene.values.items()
    }
