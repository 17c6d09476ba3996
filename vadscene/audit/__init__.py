"""The scene-bias and granularity audit (formulas: docs/metrics.md).

Flow: loaders (:mod:`.loaders`) → inputs (:mod:`.inputs`) → one pair-count matrix per model
(:mod:`.pairs`) → metrics and bootstrap (:mod:`.metrics`, :mod:`.bootstrap`) → scene audit
(:mod:`.scene`) → :class:`AuditResult` of pandas tables (:mod:`.result`) → report
(:mod:`.report`, :mod:`.figures`). :func:`run_audit` is the entry point. Optional inputs:
scores per definition (:mod:`.definitions`), per-snippet features (:mod:`.prototypes`), soft
labels (:mod:`.tables`); :mod:`.splices` builds the controlled two-event splice set.
"""

from vadscene.audit.compute.engine import run_audit
from vadscene.audit.compute.result import GRANULARITIES, AuditResult
from vadscene.audit.io.definitions import (
    DefinitionScores,
    Query,
    load_definition_scores,
    load_events,
    load_queries,
)
from vadscene.audit.io.features import Features, load_features
from vadscene.audit.io.scene_labels import SceneLabels, load_scene_labels
from vadscene.audit.io.scores import ModelScores, load_scores
from vadscene.benchmark.frames import AuditInputError, GroundTruth
from vadscene.benchmark.ground_truth import load_ground_truth

__all__ = [
    "GRANULARITIES",
    "AuditInputError",
    "AuditResult",
    "DefinitionScores",
    "Features",
    "GroundTruth",
    "ModelScores",
    "Query",
    "SceneLabels",
    "load_definition_scores",
    "load_events",
    "load_features",
    "load_ground_truth",
    "load_queries",
    "load_scene_labels",
    "load_scores",
    "run_audit",
]
