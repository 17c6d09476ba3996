"""One audit request: every input and option of an audit, gathered once for the CLI and the app.

``vadscene audit`` and the app's Audit page both describe a run as an :class:`AuditRequest`;
:func:`prepare` reads what it names (ground truth, scores, scene labels, probe inputs, soft
labels) into a :class:`PreparedAudit`, whose :meth:`~PreparedAudit.run` is
:func:`~vadscene.audit.compute.engine.run_audit`, and :func:`write_outputs` writes the report
files the request asks for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

import numpy as np

from vadscene.audit.compute.budget import DEFAULT_REPLICATE_MEMORY
from vadscene.audit.compute.engine import AuditProgress, run_audit
from vadscene.audit.compute.intervals import EVENT_RULES, EventRule
from vadscene.audit.compute.result import AuditResult
from vadscene.audit.compute.uncertainty import CATEGORY_BOOTSTRAPS, CategoryBootstrap
from vadscene.audit.io.definitions import DefinitionScores, FrameClasses, Query
from vadscene.audit.io.features import Features
from vadscene.audit.io.scene_labels import SceneLabels
from vadscene.audit.io.scores import ModelScores, ModelSpec
from vadscene.audit.io.soft_labels import load_soft_labels
from vadscene.audit.io.sources import (
    INTERVAL_ENDS,
    IntervalEnd,
    ProbeList,
    gather_inputs,
    gather_probe_inputs,
    read_model_list,
    read_probe_list,
)
from vadscene.audit.protocols import (
    apply_protocol,
    is_given,
    protocol_conventions,
    protocol_named,
)
from vadscene.audit.report.vega import svg_renderer
from vadscene.audit.report.writer import check_report_folder, write_report
from vadscene.benchmark.frames import AuditInputError, GroundTruth
from vadscene.benchmark.ground_truth import NORMAL_WITH_ANOMALY, NormalWithAnomaly
from vadscene.core.cluster import DEFAULT_SCHEDULER_TIMEOUT, connect_scheduler
from vadscene.core.paths import output_folder
from vadscene.store.workspace import Workspace

_Value = TypeVar("_Value", Path, int)

DEFAULT_FEATURE_SNIPPET_FRAMES = 16
"""Frames per feature snippet when neither the request nor a probes file gives it."""


class AuditRequestError(AuditInputError):
    """An audit request that cannot be prepared; the message names the option or file."""


@dataclass(frozen=True)
class AuditRequest:
    """Every input and option of one audit, as ``vadscene audit`` takes them.

    Models are ``scores`` followed by those of the ``model_lists`` (``models.json`` files,
    :func:`~vadscene.audit.io.sources.read_model_list`); ``snippet_repeat`` applies to those
    that give no repeat of their own. The definition scores and features are the ones given
    here followed by those of the ``probe_lists`` (``probes.json`` files,
    :func:`~vadscene.audit.io.sources.read_probe_list`); ``events``, ``queries`` and
    ``feature_snippet_frames`` given here win over a probes file's. A ``workspace`` supplies
    the ground truth (when none is given), frame counts and scene labels
    (:func:`~vadscene.audit.io.sources.gather_inputs`). ``out`` is the report folder, checked
    before anything is read; ``None`` when the caller writes the report elsewhere.
    ``scheduler`` (``tcp://host:8786``) runs the engine's tasks on that Dask cluster, which
    must answer within ``scheduler_timeout`` seconds, checked before anything is read too.
    ``replicate_memory`` bounds the bytes of one block of bootstrap replicates' draws (the
    replicates run in as many blocks as it takes; the numbers do not depend on it).

    ``confine_to``, a workspace, holds the model and probe lists and every path they list to
    the places :meth:`~vadscene.store.workspace.Workspace.server_path` allows — the rule the
    app applies to the paths typed into it, as a list may name any path (absolute, ``../``,
    a symlink). ``None`` (the CLI): lists are read as written.

    ``protocol`` names a paper's preset (:mod:`vadscene.audit.protocols`), applied first by
    :func:`prepare`; ``explicit`` names the settings given explicitly, which the preset leaves
    as they are (a setting at other than its default counts as given too).
    """

    ground_truth: Path | None = None
    ground_truth_format: str | None = None  # None: detected from the file
    interval_end: IntervalEnd = "exclusive"
    frame_counts: Path | None = None
    workspace: Path | None = None
    scores: tuple[ModelSpec, ...] = ()
    model_lists: tuple[Path, ...] = ()
    snippet_repeat: int = 1
    video_order: Path | None = None
    release: Path | None = None
    labels: Path | None = None
    catalogue: Path | None = None
    probe_lists: tuple[Path, ...] = ()
    definition_scores: tuple[ModelSpec, ...] = ()
    events: Path | None = None
    queries: Path | None = None
    features: tuple[ModelSpec, ...] = ()
    feature_snippet_frames: int | None = None  # None (or 0): a probes file's, else 16
    soft_labels: Path | None = None
    bootstrap: int = 1000
    seed: int = 0
    interval_ap: bool = False
    interval_ap_events: EventRule = "vadclip"
    normal_with_anomaly: NormalWithAnomaly = "error"
    category_bootstrap: CategoryBootstrap = "stratified"
    latex: bool = False
    svg: bool = False
    out: Path | None = None
    scheduler: str | None = None  # None: threads of this process
    scheduler_timeout: float = DEFAULT_SCHEDULER_TIMEOUT
    replicate_memory: int = DEFAULT_REPLICATE_MEMORY  # bytes of one block of replicates' draws
    confine_to: Path | None = None
    protocol: str | None = None
    explicit: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        for name, choices in (
            ("interval_end", INTERVAL_ENDS),
            ("interval_ap_events", EVENT_RULES),
            ("normal_with_anomaly", NORMAL_WITH_ANOMALY),
            ("category_bootstrap", CATEGORY_BOOTSTRAPS),
        ):
            value = getattr(self, name)
            if value not in choices:
                raise AuditRequestError(f"{name} {value!r}: expected one of {', '.join(choices)}")
        if self.protocol is not None:
            protocol_named(self.protocol)
        if not self.scheduler_timeout > 0:  # NaN too
            raise AuditRequestError(
                f"scheduler_timeout {self.scheduler_timeout:g}: expected seconds above 0"
            )
        memory = self.replicate_memory
        if isinstance(memory, bool) or not isinstance(memory, int) or memory <= 0:
            raise AuditRequestError(f"replicate_memory {memory!r}: expected a number of bytes > 0")


@dataclass(frozen=True)
class PreparedAudit:
    """An audit's inputs, read and aligned to the ground truth: the arguments of
    :func:`~vadscene.audit.compute.engine.run_audit`."""

    request: AuditRequest
    ground_truth: GroundTruth
    models: tuple[ModelScores, ...]
    scene: SceneLabels | None
    definition_scores: tuple[DefinitionScores, ...]
    classes: FrameClasses | None
    queries: tuple[Query, ...]
    features: tuple[Features, ...]
    soft_labels: np.ndarray | None
    protocol: dict[str, str] | None = None
    """How the report states the request's protocol (:func:`.protocols.protocol_conventions`)."""

    def run(self, progress: AuditProgress | None = None) -> AuditResult:
        """The audit of these inputs with the request's bootstrap, seed and interval AP, its
        conventions stating the protocol when one was chosen; on the request's Dask
        scheduler when it names one, connected for this run and let go after it."""
        scheduler = self.request.scheduler
        connection = (
            nullcontext()
            if scheduler is None
            else connect_scheduler(scheduler, self.request.scheduler_timeout)
        )
        with connection as client:
            result = run_audit(
                self.ground_truth,
                self.models,
                self.scene,
                n_bootstrap=self.request.bootstrap,
                seed=self.request.seed,
                progress=progress,
                definition_scores=self.definition_scores,
                classes=self.classes,
                queries=self.queries,
                features=self.features,
                soft_labels=self.soft_labels,
                interval_ap=self.request.interval_ap,
                interval_ap_events=self.request.interval_ap_events,
                category_bootstrap=self.request.category_bootstrap,
                client=client,
                replicate_memory=self.request.replicate_memory,
            )
        if self.protocol is None:
            return result
        return replace(result, conventions={"protocol": self.protocol, **result.conventions})


def checked_request(request: AuditRequest) -> AuditRequest:
    """``request`` with its protocol's settings filled in (:func:`.protocols.apply_protocol`),
    refused before anything is read where its report cannot be written: an SVG report without
    its renderer installed, a report folder (``out``) that cannot be one."""
    request = apply_protocol(request)
    if request.svg:
        svg_renderer()
    if request.out is not None:
        output_folder(request.out, "the audit report", create=False)
        check_report_folder(request.out)
    return request


def read_benchmark(
    request: AuditRequest, models: Sequence[ModelSpec] = ()
) -> tuple[GroundTruth, list[ModelScores], SceneLabels | None]:
    """The request's ground truth and scene labels, and the scores of ``models`` (the specs
    of :func:`read_lists`; none: the ground truth and labels only), as
    :func:`~vadscene.audit.io.sources.gather_inputs` reads them."""
    return gather_inputs(
        ground_truth=request.ground_truth,
        ground_truth_format=request.ground_truth_format,
        interval_end=request.interval_end,
        keep_interval_end=is_given(request, "interval_end"),
        normal_with_anomaly=request.normal_with_anomaly,
        frame_counts=request.frame_counts,
        models=models,
        snippet_repeat=request.snippet_repeat,
        video_order=request.video_order,
        release=request.release,
        workspace=request.workspace,
        labels=request.labels,
        catalogue=request.catalogue,
    )


def prepare(request: AuditRequest) -> PreparedAudit:
    """Read every input ``request`` names, refusing a bad one before the next is read.

    First its protocol's settings are filled in (:func:`checked_request`). Then, in
    order: the report folder (``out``, not created yet), the model and probe lists (with
    ``confine_to``, each and every path they list checked), the ground truth, scene labels
    and scores, the definition scores, events, queries and features, the soft labels. An SVG
    report without its renderer installed, and a scheduler that does not answer (or Dask not
    installed), are refused first, before any of them is read.
    """
    protocol = protocol_conventions(request)
    if request.scheduler is not None:
        # connected and let go: the run connects again (PreparedAudit.run), but an address
        # that does not answer is refused before a million videos' scores are read
        connect_scheduler(request.scheduler, request.scheduler_timeout).close()
    request = checked_request(request)
    specs, listed = read_lists(request)
    ground_truth, models, scene = read_benchmark(request, specs)
    listed_frames = _given_once(
        listed, [p.feature_snippet_frames for p in listed], "snippet frames"
    )
    definition_models, classes, queries, features = gather_probe_inputs(
        ground_truth,
        definition_scores=[
            *request.definition_scores,
            *(spec for probes in listed for spec in probes.definition_scores),
        ],
        events=request.events or _given_once(listed, [p.events for p in listed], "events"),
        queries=request.queries or _given_once(listed, [p.queries for p in listed], "queries"),
        features=[*request.features, *(spec for probes in listed for spec in probes.features)],
        snippet_repeat=request.snippet_repeat,
        feature_snippet_frames=request.feature_snippet_frames
        or (DEFAULT_FEATURE_SNIPPET_FRAMES if listed_frames is None else listed_frames),
    )
    return PreparedAudit(
        request=request,
        ground_truth=ground_truth,
        models=tuple(models),
        scene=scene,
        definition_scores=tuple(definition_models),
        classes=classes,
        queries=tuple(queries),
        features=tuple(features),
        soft_labels=(
            load_soft_labels(request.soft_labels, ground_truth)
            if request.soft_labels is not None
            else None
        ),
        protocol=protocol,
    )


def read_lists(request: AuditRequest) -> tuple[list[ModelSpec], list[ProbeList]]:
    """The models ``request`` names (its scores, then its model lists') and the probes files
    it names, read and confined as :func:`prepare` reads them (also read by the dry run,
    :mod:`vadscene.audit.plan`)."""
    confine = _confinement(request.confine_to)
    specs = [*request.scores, *(s for path in request.model_lists for s in _models(path, confine))]
    return specs, [_probes(path, confine) for path in request.probe_lists]


_Confine = Callable[[Path, str], Path]
"""``confine(path, what)``: the path to read for ``path``, or an error naming ``what`` it is."""


def _confinement(workspace: Path | None) -> _Confine:
    """The check of :attr:`AuditRequest.confine_to` (no check without a workspace)."""
    if workspace is None:
        return lambda path, what: path
    # only its configuration is read (the places it names); its store stays closed
    opened = Workspace.open(workspace, read_only=True)
    # absolute, as a listed path is relative to its list's folder, not to the workspace
    return lambda path, what: opened.server_path(str(path.absolute()), what)


def _models(path: Path, confine: _Confine) -> list[ModelSpec]:
    """The models a models file lists, the file and each model's path confined."""
    path = confine(path, "models file")
    return [
        spec._replace(path=confine(spec.path, f"{path}: model {spec.name!r}:"))
        for spec in read_model_list(path)
    ]


def _probes(path: Path, confine: _Confine) -> ProbeList:
    """What a probes file lists, the file and each path it gives confined."""
    path = confine(path, "probes file")
    probes = read_probe_list(path)

    def specs(given: tuple[ModelSpec, ...], what: str) -> tuple[ModelSpec, ...]:
        return tuple(
            spec._replace(path=confine(spec.path, f"{path}: {what} {spec.name!r}:"))
            for spec in given
        )

    def single(given: Path | None, what: str) -> Path | None:
        return confine(given, f"{path}: {what}:") if given is not None else None

    return replace(
        probes,
        definition_scores=specs(probes.definition_scores, "definition scores"),
        features=specs(probes.features, "features"),
        queries=single(probes.queries, "queries"),
        events=single(probes.events, "events"),
    )


def _given_once(listed: list[ProbeList], values: list[_Value | None], what: str) -> _Value | None:
    """The one value the probes files ``listed`` give (``values``, one per file) of ``what``;
    files giving different values are refused, as the audit would read only one of them."""
    given = {probes.source: value for probes, value in zip(listed, values, strict=True)}
    distinct = {value for value in given.values() if value is not None}
    if len(distinct) > 1:
        sources = [str(source) for source, value in given.items() if value is not None]
        raise AuditRequestError(
            f"the probes files {' and '.join(sources)} give different {what}; give them "
            "in one probes file only, or as the request's own option"
        )
    return next(iter(distinct), None)


def write_outputs(
    result: AuditResult,
    folder: Path,
    request: AuditRequest,
    *,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Path]:
    """Write the report of ``result`` into ``folder``, with the figures' SVG files and the
    LaTeX tables (under ``latex/``) when ``request`` asks for them; name → path."""
    return write_report(result, folder, svg=request.svg, latex=request.latex, progress=progress)
