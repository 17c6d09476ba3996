"""The scene-bias and granularity audit (formulas: docs/metrics.md).

Flow: loaders (:mod:`.loaders`) → inputs (:mod:`.inputs`) → one pair-count matrix per model
(:mod:`.pairs`) → metrics and bootstrap (:mod:`.metrics`, :mod:`.bootstrap`) → scene audit
(:mod:`.scene`) → :class:`AuditResult` of pandas tables (:mod:`.result`) → report
(:mod:`.report`, :mod:`.figures`). :func:`run_audit` is the entry point.
"""

from vadscene.audit.engine import run_audit
from vadscene.audit.inputs import AuditInputError, GroundTruth, ModelScores
from vadscene.audit.loaders import load_ground_truth, load_scores
from vadscene.audit.result import GRANULARITIES, AuditResult
from vadscene.audit.scene import SceneLabels, load_scene_labels

__all__ = [
    "GRANULARITIES",
    "AuditInputError",
    "AuditResult",
    "GroundTruth",
    "ModelScores",
    "SceneLabels",
    "load_ground_truth",
    "load_scene_labels",
    "load_scores",
    "run_audit",
]
