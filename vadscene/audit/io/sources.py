"""Gathering an audit's inputs from files and workspaces — shared by the CLI and the app.

A workspace supplies what it knows: its configured ground truth (format and interval
convention), the frame counts it registered by probing its videos (the fallback when a
ground-truth file has no count column), and its scene labels (the consensus release).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from vadscene.audit.io.definitions import (
    DefinitionScores,
    FrameClasses,
    Query,
    load_definition_scores,
    load_events,
    load_queries,
)
from vadscene.audit.io.features import Features, load_features
from vadscene.audit.io.scene_labels import SceneLabels, load_scene_labels, match_to_ground_truth
from vadscene.audit.io.scores import ModelScores, ModelSpec, load_scores
from vadscene.benchmark.frames import AuditInputError, GroundTruth
from vadscene.benchmark.ground_truth import NormalWithAnomaly, load_ground_truth
from vadscene.core import jsonio
from vadscene.core.catalogue import load_catalogue
from vadscene.core.errors import parse_failure
from vadscene.store.workspace import Workspace

IntervalEnd = Literal["exclusive", "inclusive"]
"""Where a ground-truth interval ends: ``exclusive`` (frames s ≤ f < e) or ``inclusive``."""
INTERVAL_ENDS: tuple[IntervalEnd, ...] = get_args(IntervalEnd)


def read_model_list(path: Path | str) -> list[ModelSpec]:
    """Models from a JSON list of ``{"name", "path", "family", "snippet_repeat"}`` (paths
    relative to the file; family and snippet_repeat optional), e.g. the demo's
    ``benchmark/models.json``."""
    path = Path(path)
    try:
        entries = jsonio.loads(path.read_text(encoding="utf-8"))
        specs = [
            ModelSpec(e["name"], path.parent / e["path"], e.get("family"), e.get("snippet_repeat"))
            for e in entries
        ]
    except FileNotFoundError:
        raise AuditInputError(f"{path}: models file not found") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise AuditInputError(f"{path}: not valid JSON ({parse_failure(exc)})") from None
    except (TypeError, KeyError) as exc:
        raise AuditInputError(
            f"{path}: expected a JSON list of {{name, path, family, snippet_repeat}} objects "
            f"({_shape_problem(exc)})"
        ) from None
    for spec in specs:
        repeat = spec.snippet_repeat
        if repeat is not None and (isinstance(repeat, bool) or not isinstance(repeat, int)):
            raise AuditInputError(
                f"{path}: model {specs.index(spec) + 1}: snippet_repeat must be an integer, "
                f"got a {type(repeat).__name__}"
            )
    return specs


def gather_inputs(
    *,
    ground_truth: Path | str | None = None,
    ground_truth_format: str | None = None,
    interval_end: IntervalEnd = "exclusive",
    keep_interval_end: bool = False,
    normal_with_anomaly: NormalWithAnomaly = "error",
    frame_counts: Path | str | None = None,
    models: Sequence[ModelSpec] = (),
    snippet_repeat: int = 1,
    video_order: Path | str | None = None,
    release: Path | str | None = None,
    workspace: Path | str | None = None,
    labels: Path | str | None = None,
    catalogue: Path | str | None = None,
) -> tuple[GroundTruth, list[ModelScores], SceneLabels | None]:
    """Load ground truth, scores and scene labels; a workspace fills in what is not given.

    ``snippet_repeat`` applies to the models whose spec gives none. Scene labels come from
    ``release`` or ``labels`` (a label table, validated against ``catalogue``: a file,
    default UCF-Crime's), which replace the workspace's own labels, else from ``workspace``.
    ``normal_with_anomaly``: see :func:`~vadscene.benchmark.ground_truth.load_ground_truth`.
    The workspace's ground truth is read with its configured interval ends unless
    ``keep_interval_end`` (an option or protocol asked for ``interval_end``).
    """
    if release is not None and labels is not None:
        raise AuditInputError("give a release or a label table for the scene labels, not both")
    registry: dict[str, int] | None = None
    if workspace is not None:
        with Workspace.open(workspace) as ws:
            configured = ws.config.ground_truth
            if ground_truth is None and configured is not None:
                ground_truth = ws.ground_truth_path
                ground_truth_format = ground_truth_format or configured.format
                interval_end = interval_end if keep_interval_end else configured.interval_end
            registry = {v.video_id: v.num_frames for v in ws.store.videos()}
    if ground_truth is None:
        raise AuditInputError("no ground truth: give a file (or a workspace that has one)")
    truth = load_ground_truth(
        ground_truth,
        format=ground_truth_format,
        interval_end=interval_end,
        frame_counts=frame_counts,
        registry_counts=registry,
        normal_with_anomaly=normal_with_anomaly,
    )
    labels_from = labels or release or workspace
    scene = (
        # matched before the scores load, so mismatched ids cost no waiting
        match_to_ground_truth(
            load_scene_labels(labels_from, catalogue=load_catalogue(catalogue)), truth
        )
        if labels_from is not None
        else None
    )
    scores = [
        load_scores(
            path,
            truth,
            name=name,
            family=family,
            snippet_repeat=own_repeat if own_repeat is not None else snippet_repeat,
            video_order=video_order,
        )
        for name, path, family, own_repeat in models
    ]
    return truth, scores, scene


@dataclass(frozen=True)
class ProbeList:
    """The optional audit inputs a probes file lists (:func:`read_probe_list`), paths resolved
    against the file's folder; ``None``: the file does not give it."""

    source: Path
    definition_scores: tuple[ModelSpec, ...] = ()
    features: tuple[ModelSpec, ...] = ()
    queries: Path | None = None
    events: Path | None = None
    feature_snippet_frames: int | None = None


def read_probe_list(path: Path | str) -> ProbeList:
    """The optional audit inputs listed in a JSON object (paths relative to the file), e.g.
    the demo's ``benchmark/probes.json``: ``definition_scores`` and ``features`` (lists of
    ``{name, path, family}``), ``queries`` and ``events`` (paths), ``feature_snippet_frames``.
    """
    path = Path(path)
    try:
        entries = jsonio.loads(path.read_text(encoding="utf-8"))

        def specs(key: str) -> tuple[ModelSpec, ...]:
            return tuple(
                ModelSpec(
                    e["name"], path.parent / e["path"], e.get("family"), e.get("snippet_repeat")
                )
                for e in entries.get(key, [])
            )

        def listed_path(key: str) -> Path | None:
            return path.parent / entries[key] if entries.get(key) else None

        return ProbeList(
            source=path,
            definition_scores=specs("definition_scores"),
            features=specs("features"),
            queries=listed_path("queries"),
            events=listed_path("events"),
            feature_snippet_frames=(
                int(entries["feature_snippet_frames"])
                if "feature_snippet_frames" in entries
                else None
            ),
        )
    except FileNotFoundError:
        raise AuditInputError(f"{path}: probes file not found") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise AuditInputError(f"{path}: not valid JSON ({parse_failure(exc)})") from None
    except (TypeError, KeyError, AttributeError, ValueError) as exc:
        raise AuditInputError(
            f"{path}: expected a JSON object with definition_scores / features lists of "
            "{name, path, family} and optional queries, events, feature_snippet_frames "
            f"({_shape_problem(exc)})"
        ) from None


def _shape_problem(exc: Exception) -> str:
    """What did not fit the expected JSON shape, without quoting the file's values: a missing
    key is one the format defines, anything else is named by its kind."""
    if isinstance(exc, KeyError):
        return f"an entry has no {exc.args[0]!r}"
    return "an entry or value has the wrong type"


def gather_probe_inputs(
    ground_truth: GroundTruth,
    *,
    definition_scores: Sequence[ModelSpec] = (),
    events: Path | str | None = None,
    queries: Path | str | None = None,
    features: Sequence[ModelSpec] = (),
    snippet_repeat: int = 1,
    feature_snippet_frames: int = 16,
) -> tuple[list[DefinitionScores], FrameClasses | None, list[Query], list[Features]]:
    """Load the optional inputs of the definition probes and the prototype readout."""
    if (events is not None or queries is not None) and not definition_scores:
        raise AuditInputError("events and queries are read with definition scores; none given")
    return (
        [
            load_definition_scores(
                spec.path,
                ground_truth,
                name=spec.name,
                family=spec.family,
                snippet_repeat=spec.snippet_repeat or snippet_repeat,
            )
            for spec in definition_scores
        ],
        load_events(events, ground_truth) if events is not None else None,
        load_queries(queries) if queries is not None else [],
        [
            load_features(
                spec.path,
                ground_truth,
                name=spec.name,
                family=spec.family,
                snippet_repeat=spec.snippet_repeat or feature_snippet_frames,
            )
            for spec in features
        ],
    )
