"""Gathering an audit's inputs from files and workspaces — shared by the CLI and the app.

A workspace supplies what it knows: its configured ground truth (format and interval
convention), the frame counts it registered by probing its videos (the fallback when a
ground-truth file has no count column), and its scene labels (the consensus release).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from vadscene import jsonio
from vadscene.audit.definitions import (
    DefinitionScores,
    FrameClasses,
    Query,
    load_definition_scores,
    load_events,
    load_queries,
)
from vadscene.audit.inputs import AuditInputError, GroundTruth, ModelScores
from vadscene.audit.loaders import load_ground_truth, load_scores
from vadscene.audit.prototypes import Features, load_features
from vadscene.audit.scene import SceneLabels, load_scene_labels
from vadscene.workspace import Workspace

ModelSpec = tuple[str, Path, str | None]
"""(name, score path, family)"""


def read_model_list(path: Path | str) -> list[ModelSpec]:
    """Models from a JSON list of ``{"name", "path", "family"}`` (paths relative to the file),
    e.g. the demo's ``benchmark/models.json``."""
    path = Path(path)
    try:
        entries = jsonio.loads(path.read_text(encoding="utf-8"))
        return [(e["name"], path.parent / e["path"], e.get("family")) for e in entries]
    except FileNotFoundError:
        raise AuditInputError(f"{path}: models file not found") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise AuditInputError(f"{path}: not valid JSON ({exc})") from None
    except (TypeError, KeyError) as exc:
        raise AuditInputError(
            f"{path}: expected a JSON list of {{name, path, family}} objects ({exc!r})"
        ) from None


def gather_inputs(
    *,
    ground_truth: Path | str | None = None,
    ground_truth_format: str | None = None,
    interval_end: str = "exclusive",
    frame_counts: Path | str | None = None,
    models: Sequence[ModelSpec] = (),
    snippet_repeat: int = 1,
    video_order: Path | str | None = None,
    release: Path | str | None = None,
    workspace: Path | str | None = None,
) -> tuple[GroundTruth, list[ModelScores], SceneLabels | None]:
    """Load ground truth, scores and scene labels; a workspace fills in what is not given."""
    if release is not None and workspace is not None:
        raise AuditInputError("give a release or a workspace for the scene labels, not both")
    registry: dict[str, int] | None = None
    if workspace is not None:
        with Workspace.open(workspace) as ws:
            configured = ws.config.ground_truth
            if ground_truth is None and configured is not None:
                ground_truth = ws.ground_truth_path
                ground_truth_format = ground_truth_format or configured.format
                interval_end = configured.interval_end
            registry = {v.video_id: v.num_frames for v in ws.store.videos()}
    if ground_truth is None:
        raise AuditInputError("no ground truth: give a file (or a workspace that has one)")
    truth = load_ground_truth(
        ground_truth,
        format=ground_truth_format,
        interval_end=interval_end,
        frame_counts=frame_counts,
        registry_counts=registry,
    )
    scores = [
        load_scores(
            path,
            truth,
            name=name,
            family=family,
            snippet_repeat=snippet_repeat,
            video_order=video_order,
        )
        for name, path, family in models
    ]
    labels_from = release or workspace
    scene = load_scene_labels(labels_from) if labels_from is not None else None
    return truth, scores, scene


def read_probe_list(path: Path | str) -> dict:
    """The optional audit inputs listed in a JSON object (paths relative to the file), e.g.
    the demo's ``benchmark/probes.json``: ``definition_scores`` and ``features`` (lists of
    ``{name, path, family}``), ``queries`` and ``events`` (paths), ``feature_snippet_frames``.
    Returns the keyword arguments of :func:`gather_probe_inputs`."""
    path = Path(path)
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))

        def specs(key: str) -> list[ModelSpec]:
            return [
                (e["name"], path.parent / e["path"], e.get("family")) for e in entries.get(key, [])
            ]

        return {
            "definition_scores": specs("definition_scores"),
            "features": specs("features"),
            **{k: path.parent / entries[k] for k in ("queries", "events") if entries.get(k)},
            **(
                {"feature_snippet_frames": int(entries["feature_snippet_frames"])}
                if "feature_snippet_frames" in entries
                else {}
            ),
        }
    except FileNotFoundError:
        raise AuditInputError(f"{path}: probes file not found") from None
    except (json.JSONDecodeError, TypeError, KeyError, AttributeError, ValueError) as exc:
        raise AuditInputError(
            f"{path}: expected a JSON object with definition_scores / features lists of "
            f"{{name, path, family}} and optional queries, events, feature_snippet_frames ({exc!r})"
        ) from None


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
                path, ground_truth, name=name, family=family, snippet_repeat=snippet_repeat
            )
            for name, path, family in definition_scores
        ],
        load_events(events, ground_truth) if events is not None else None,
        load_queries(queries) if queries is not None else [],
        [
            load_features(
                path,
                ground_truth,
                name=name,
                family=family,
                snippet_repeat=feature_snippet_frames,
            )
            for name, path, family in features
        ],
    )
