"""The audit engine: ground truth + model scores (+ scene labels) → :class:`AuditResult`.

One pair-count matrix per model (:func:`vadscene.audit.compute.pairs.pair_count_matrix`) feeds every
AUROC granularity, each bootstrap replicate, the scene-conditioned AUCs and the clustered
variance. Seeded: the same inputs and seed give identical numbers.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from vadscene.audit.compute import metrics, tables
from vadscene.audit.compute.bootstrap import (
    obuchowski_covariance,
    percentile_interval,
    video_multiplicities,
)
from vadscene.audit.compute.definitions import audit_definitions
from vadscene.audit.compute.pairs import (
    FrameRuns,
    frame_runs,
    pair_counts_of_runs,
    video_constant_pair_counts,
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


class _Benchmark:
    """Per-video quantities of the ground truth that every model shares."""

    def __init__(self, ground_truth: GroundTruth) -> None:
        self.gt = ground_truth
        self.video_index = ground_truth.video_index()
        self.a = ground_truth.anomalous_counts().astype(np.float64)
        self.n = ground_truth.frame_counts.astype(np.float64) - self.a
        self.categories = np.array(ground_truth.categories, dtype=object)
        self.ones = metrics.ones(ground_truth.n_videos)

    def runs_of(self, frame_scores: np.ndarray) -> FrameRuns:
        return frame_runs(frame_scores, self.gt.labels, self.video_index)

    def granularities(self, u: np.ndarray, multiplicities: np.ndarray) -> dict[str, np.ndarray]:
        return metrics.all_granularities(
            u, self.a, self.n, multiplicities, self.categories, self.gt.normal_category
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
) -> AuditResult:
    """Audit models' frame scores against ground truth (and scene labels).

    Without models it reports the benchmark's composition: per-video counts, the within-pair
    fraction w, the oracle video-constant AUROC and the one-bit control.

    ``definition_scores`` (scores per frame and definition) add the definition-conditioned
    probes (:mod:`.definitions`), with frame classes from ``classes`` (an events table,
    :func:`.definitions.load_events`) or else the video categories, and D@5 over
    ``queries`` (default: one singleton query per class). ``features`` (per-snippet
    features) add the prototype readout (:mod:`.prototypes`). Both share the models' paired
    video bootstrap draws. ``soft_labels`` (F,) in [0, 1] add each model's Prob-AUC
    (:func:`.tables.prob_auc`). ``interval_ap`` adds the interval AP columns of the
    ``further`` table (the released VadCLIP rule; a Python pass over every video's proposals,
    so it is asked for rather than always run).

    Three steps: every input is checked first (:func:`_validate`), so a bad one is refused
    before any model is scored; then the tables are computed; then the conventions that
    state how they were computed are assembled.
    """
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
    )
    report = progress or _no_progress
    bench = _Benchmark(ground_truth)
    # A third stream for the leak-free bootstrap and the permutations: spawn(3) keeps the
    # first two children, so adding it left the existing draws unchanged.
    video_stream, scene_stream, test_stream = np.random.SeedSequence(seed).spawn(3)
    resamples = video_multiplicities(
        ground_truth.n_videos, n_bootstrap, np.random.default_rng(video_stream)
    )
    audited = _audit_models(
        bench,
        models,
        checked.scene,
        resamples,
        n_bootstrap,
        (scene_stream, test_stream),
        interval_ap=interval_ap,
        report=report,
    )
    rows = audited.rows
    rows["comparisons"] = _comparisons(models, audited.estimates, audited.replicates)
    rows["resolved"] = _resolved_counts(models, rows["comparisons"])
    optional = _model_tables(models, rows, soft_labels)
    if checked.classes is not None:
        optional |= _definition_tables(
            ground_truth, definition_scores, checked.classes, queries, resamples, seed, report
        )
    if features:
        optional["readout"] = _readout(ground_truth, features, resamples, report)
    return AuditResult(
        conventions=_conventions(
            ground_truth,
            models,
            checked.scene,
            n_bootstrap,
            seed,
            audited.empty_contrasts,
            definition_scores=definition_scores,
            classes=classes,
            queries=queries,
            features=features,
        ),
        summary=_summary(bench),
        composition=_composition(bench),
        **{name: _frame(name, rows[name]) for name in AuditResult.TABLES if name != "composition"},
        models=tuple(m.name for m in models),
        **optional,
    )


def _no_progress(step: str, done: int, total: int) -> None:
    """The progress callback of a run that asked for none."""


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
) -> _Checked:
    """Refuse any input :func:`run_audit` cannot audit, cheapest checks first, before any
    model is scored."""
    if n_bootstrap < 0:
        raise AuditInputError(f"the number of bootstrap replicates must be ≥ 0, got {n_bootstrap}")
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
        memory_estimate(ground_truth.n_videos, ground_truth.n_frames, len(models), n_bootstrap),
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


def memory_estimate(n_videos: int, n_frames: int, n_models: int, n_bootstrap: int) -> int:
    """Rough peak bytes of :func:`run_audit`, to refuse absurd sizes before allocating.

    The terms that grow: V × V float64 matrices (the oracle's comparison, outer product and
    pair counts at once; each model's U and its reduction, two models at a time), the
    bootstrap's (B, V) multiplicities and per-replicate sums, and per-frame arrays (labels,
    video index, each model's scores and its sorted runs).
    """
    pair_matrices = 8 * n_videos**2 * (4 + 2 * min(n_models, 2))
    bootstrap = 8 * n_bootstrap * n_videos * (1 + 3 * min(n_models, 2))
    frames = n_frames * (24 + 48 * n_models)
    return pair_matrices + bootstrap + frames


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
    """Soft labels are one value per ground-truth frame (see load_soft_labels)."""
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
    replicates per granularity, and the scene contrasts left out for want of support."""

    rows: dict[str, list[dict]]
    estimates: dict[str, dict[str, float]]
    replicates: dict[str, dict[str, np.ndarray]]
    empty_contrasts: list[str]


def _audit_models(
    bench: _Benchmark,
    models: Sequence[ModelScores],
    scene: SceneLabels | None,
    resamples: np.ndarray,
    n_bootstrap: int,
    streams: tuple[np.random.SeedSequence, np.random.SeedSequence],
    *,
    interval_ap: bool,
    report: AuditProgress,
) -> _ModelsAudited:
    """Audit every model (two at a time) while the scene contrasts' resamples are drawn
    from ``streams`` (the bias bootstrap's and the permutation tests')."""
    rows: dict[str, list[dict]] = {name: [] for name in AuditResult.TABLES}
    rows["further"] = []
    replicates: dict[str, dict[str, np.ndarray]] = {}
    estimates: dict[str, dict[str, float]] = {}
    report("models", 0, len(models))
    # Models are independent: two threads overlap one model's sort and pair-count sweep (numpy
    # and the compiled sweep release the GIL) with another's; the output keeps the models'
    # order. Meanwhile this thread draws the contrasts' resamples (the multinomial draws
    # release the GIL too), which the models need only for their scene rows, at the end.
    # The bootstrap's matrix products are small: BLAS threads beside the model threads only
    # oversubscribe the cores.
    drawn: Future[list[_ContrastDraws]] = Future()
    with (
        threadpool_limits(limits=1, user_api="blas"),
        ThreadPoolExecutor(max_workers=min(2, os.cpu_count() or 1)) as pool,
    ):
        futures = [
            pool.submit(_audit_model, bench, model, resamples, drawn, interval_ap)
            for model in models
        ]
        try:
            contrasts, empty = (
                _contrast_draws(bench, scene, n_bootstrap, *streams)
                if scene is not None
                else ([], [])
            )
        except BaseException as exc:
            drawn.set_exception(exc)
            raise
        drawn.set_result(contrasts)
        for done, _ in enumerate(as_completed(futures), start=1):
            report("models", done, len(models))
    for model, future in zip(models, futures, strict=True):
        model_estimates, model_replicates, model_rows = future.result()
        estimates[model.name], replicates[model.name] = model_estimates, model_replicates
        for name, new_rows in model_rows.items():
            rows[name].extend(new_rows)
    return _ModelsAudited(rows, estimates, replicates, empty)


def _model_tables(
    models: Sequence[ModelScores], rows: dict[str, list[dict]], soft_labels: np.ndarray | None
) -> dict[str, pd.DataFrame]:
    """The optional tables drawn from the models' rows: further metrics, Prob-AUC (with soft
    labels), the metrics' agreement and spread (two models or more), pair-type means."""
    tables_: dict[str, pd.DataFrame] = {
        "further": pd.DataFrame(rows["further"], columns=tables.FURTHER_COLUMNS)
    }
    if soft_labels is not None:
        tables_["prob_auc"] = pd.DataFrame(
            [
                {
                    "model": m.name,
                    "family": m.family,
                    "prob_auc": tables.prob_auc(m.scores, soft_labels),
                }
                for m in models
            ],
            columns=["model", "family", "prob_auc"],
        )
    if len(models) >= 2:
        metric_rows = pd.DataFrame(rows["metrics"], columns=_COLUMNS["metrics"])
        tables_["agreement"] = tables.metric_agreement(metric_rows)
        tables_["spread"] = tables.spread_table(metric_rows)
    tables_["pair_type_means"] = tables.pair_type_means(
        _frame("scene_pairs", rows["scene_pairs"]),
        _frame("scene_conditioned", rows["scene_conditioned"]),
    )
    return tables_


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
    resamples: np.ndarray,
    report: AuditProgress,
) -> pd.DataFrame:
    """The prototype readout of the features, on the models' paired video draws."""
    report("features", 0, 1)
    readout = audit_features(ground_truth, features, resamples=resamples)
    report("features", 1, 1)
    return readout


def _audit_model(
    bench: _Benchmark,
    model: ModelScores,
    resamples: np.ndarray,
    contrasts: Future[list[_ContrastDraws]],
    interval_ap: bool = False,
) -> tuple[dict[str, float], dict[str, np.ndarray], dict[str, list[dict]]]:
    """Everything about one model: estimates, bootstrap replicates and its table rows
    (``contrasts``: the scene contrasts' draws, awaited only for the scene rows)."""
    runs = bench.runs_of(model.scores)
    u = pair_counts_of_runs(runs, bench.gt.n_videos)
    estimates = {g: float(v[0]) for g, v in bench.granularities(u, bench.ones).items()}
    replicates = bench.granularities(u, resamples)
    rows: dict[str, list[dict]] = {name: [] for name in AuditResult.TABLES}
    for granularity in GRANULARITIES:
        low, high = percentile_interval(replicates[granularity])
        rows["metrics"].append(
            {
                "model": model.name,
                "family": model.family,
                "granularity": granularity,
                "value": estimates[granularity],
                "ci_low": low,
                "ci_high": high,
            }
        )
    rows["controls"].append(_controls(bench, model, runs, u, estimates["micro"]))
    rows["further"] = [
        {
            "model": model.name,
            "family": model.family,
            **tables.auca(u, bench.a, bench.n),
            **(
                tables.interval_aps(model.scores, bench.gt.labels, bench.gt.offsets)
                if interval_ap
                else {}
            ),
        }
    ]
    rows["per_category"].extend(_per_category(bench, model, u))
    _scene_rows(bench, model, runs, u, contrasts.result(), rows)
    return estimates, replicates, rows


def _controls(
    bench: _Benchmark, model: ModelScores, runs: FrameRuns, u: np.ndarray, micro: float
) -> dict:
    """Video-mean replacement, AP retention and the clustered SE (L §4–5; spec)."""
    means = metrics.video_means(runs.scores, runs.video, bench.gt.n_videos, weights=runs.weight)
    u_mean = video_constant_pair_counts(means, bench.a, bench.n)
    micro_mean = float(metrics.micro_auroc(u_mean, bench.a, bench.n, bench.ones)[0])
    prevalence = float(bench.a.sum() / (bench.a.sum() + bench.n.sum()))
    ap = metrics.average_precision(runs.scores, runs.labels, runs.weight)
    ap_mean = metrics.average_precision(means[runs.video], runs.labels, runs.weight)
    variance = obuchowski_covariance(u, u, bench.a, bench.n)
    return {
        "model": model.name,
        "family": model.family,
        "micro": micro,
        "micro_video_mean": micro_mean,
        "retention_mean": _retention(micro_mean, micro, 0.5),
        "within_video_mean": float(metrics.within_auroc(u_mean, bench.a, bench.n, bench.ones)[0]),
        "ap": ap,
        "ap_video_mean": ap_mean,
        "ap_retention": _retention(ap_mean, ap, prevalence),
        "prevalence": prevalence,
        "obuchowski_se": float(np.sqrt(variance)) if variance >= 0 else float("nan"),
    }


def _retention(replaced: float, original: float, chance: float) -> float:
    """(metric(s̃) − chance) / (metric(s) − chance): the share of the margin above chance
    that survives replacing frame scores by video means (L §5)."""
    margin = original - chance
    return (replaced - chance) / margin if margin != 0 else float("nan")


def _per_category(bench: _Benchmark, model: ModelScores, u: np.ndarray) -> list[dict]:
    same = metrics.category_aurocs(
        u,
        bench.a,
        bench.n,
        bench.ones,
        bench.categories,
        bench.gt.normal_category,
        against_normal_videos=False,
    )
    versus_normal = metrics.category_aurocs(
        u,
        bench.a,
        bench.n,
        bench.ones,
        bench.categories,
        bench.gt.normal_category,
        against_normal_videos=True,
    )
    rows = []
    for category in same:
        members = bench.categories == category
        rows.append(
            {
                "model": model.name,
                "category": category,
                "videos": int(members.sum()),
                "anomalous_frames": int(bench.a[members].sum()),
                "normal_frames": int(bench.n[members].sum()),
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
    plus_counts, minus_counts = (
        bootstrap_rng.multinomial(size, np.full(size, 1 / size), size=n_bootstrap).astype(float)
        if size and all(sizes) and n_bootstrap
        else np.zeros((0, size))
        for size in sizes
    )
    support_is_plus = plus[plus | minus]
    permuted = permutation_rng.permuted(np.tile(support_is_plus, (n_bootstrap, 1)), axis=1)
    return _PopulationDraws(plus, minus, plus_counts, minus_counts, permuted)


def _scene_rows(
    bench: _Benchmark,
    model: ModelScores,
    runs: FrameRuns,
    u: np.ndarray,
    contrasts: list[_ContrastDraws],
    rows: dict[str, list[dict]],
) -> None:
    """Bias-AUC in both populations (A §4; docs/metrics.md) and scene-conditioned AUC
    (A S1.2) of one model on every contrast."""
    means = metrics.video_means(
        runs.scores, runs.video, bench.gt.n_videos, weights=runs.weight, mask=~runs.labels
    )
    bias_rows = []
    for draw in contrasts:
        contrast = draw.contrast
        label = {
            "model": model.name,
            "factor": contrast.factor,
            "positive": contrast.positive,
            "negative": contrast.negative,
        }
        everyone = draw.populations["all"]
        row = {
            **label,
            "family": model.family,
            "primary": contrast.primary,
            "role": contrast.role,
            "anomalous_share_positive": _anomalous_share(bench, everyone.plus),
            "anomalous_share_negative": _anomalous_share(bench, everyone.minus),
        }
        for population, draws in draw.populations.items():
            suffix = "" if population == "all" else f"_{population}"
            cells = _bias_cells(means, draws)
            row |= {f"{name}{suffix}": value for name, value in cells.items()}
        row["leakage_warning"] = _leakage_warning(row)
        bias_rows.append(row)
        pairs, reference, conditioned = scene_conditioned(
            u, bench.a, bench.n, draw.plus, draw.minus
        )
        for pair_type in PAIR_TYPES:
            auroc, weight = pairs[pair_type]
            rows["scene_pairs"].append(
                {**label, "pair_type": pair_type, "auroc": auroc, "weight": weight}
            )
        rows["scene_conditioned"].append(
            {
                **label,
                "family": model.family,
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


def _anomalous_share(bench: _Benchmark, pole: np.ndarray) -> float:
    """Share of a pole's population-(a) videos that hold anomalous frames."""
    return float((bench.a[pole] > 0).mean()) if pole.any() else float("nan")


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
                    "model_a": first.name,
                    "model_b": second.name,
                    "family_a": first.family,
                    "family_b": second.family,
                    "granularity": granularity,
                    "difference": estimates[first.name][granularity]
                    - estimates[second.name][granularity],
                    "ci_low": low,
                    "ci_high": high,
                    "resolved": bool(low > 0 or high < 0),
                }
            )
    return rows


def _resolved_counts(models: Sequence[ModelScores], comparisons: list[dict]) -> list[dict]:
    """Resolved pairs per granularity, over all pairs and within each family (A Table 3)."""
    if len(models) < 2:
        return []
    families = sorted({m.family for m in models if m.family})
    rows = []
    for granularity in GRANULARITIES:
        chosen = [c for c in comparisons if c["granularity"] == granularity]
        groups = [("all", chosen)] + [
            (f, [c for c in chosen if c["family_a"] == f and c["family_b"] == f]) for f in families
        ]
        for family, members in groups:
            rows.append(
                {
                    "granularity": granularity,
                    "family": family,
                    "resolved": sum(c["resolved"] for c in members),
                    "pairs": len(members),
                }
            )
    return rows


def _summary(bench: _Benchmark) -> dict[str, float | int]:
    a, n = bench.a, bench.n
    oracle = video_constant_pair_counts(a / np.maximum(a + n, 1), a, n)
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
    "metrics": ["model", "family", "granularity", "value", "ci_low", "ci_high"],
    "controls": [
        "model",
        "family",
        "micro",
        "micro_video_mean",
        "retention_mean",
        "within_video_mean",
        "ap",
        "ap_video_mean",
        "ap_retention",
        "prevalence",
        "obuchowski_se",
    ],
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
        "granularity",
        "difference",
        "ci_low",
        "ci_high",
        "resolved",
    ],
    "resolved": ["granularity", "family", "resolved", "pairs"],
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
    definition_scores: Sequence[DefinitionScores],
    classes: FrameClasses | None,
    queries: Sequence[Query],
    features: Sequence[Features],
) -> dict:
    """How the tables were computed, as the report states it: the inputs, the tie and
    bootstrap conventions, and those of the definition probes and the readout when run."""
    conventions: dict[str, object] = {
        "ground_truth": ground_truth.source,
        **ground_truth.conventions,
        "normal_category": ground_truth.normal_category,
        "tie_convention": "τ(x, y) = 1[x > y] + ½·1[x = y] (as sklearn roc_auc_score)",
        "bootstrap": {
            "replicates": n_bootstrap,
            "seed": seed,
            "resampling": "videos with replacement, the same draws for every model (paired)",
            "interval": "95 % percentile (numpy linear quantiles)",
            "bias_resampling": "videos with replacement within each pole",
            "bias_margin": BIAS_MARGIN,
            "permutation": "pole labels shuffled among each contrast's videos (pole sizes "
            "kept), the same B and shuffles for every model; Holm across contrasts per model "
            "and population",
            "min_pole_support": MIN_POLE_SUPPORT,
            "significance_level": SIGNIFICANCE_LEVEL,
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
    if features:
        conventions["features"] = {
            "models": [{"name": f.name, "family": f.family, "source": f.source} for f in features],
            "snippet_frames": sorted({f.snippet_repeat for f in features}),
            "snippet_label_rule": SNIPPET_LABEL_RULE,
        }
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
