"""The audit's result: pandas tables with fixed columns, plus the run's conventions.

Every table is long-form so the report, the CSV files and the app plot from the same frames.
Columns (all tables):

``composition`` — one row per video:
    video, category, frames, anomalous, normal, mixed (bool)
``summary`` — dict: videos, frames, anomalous_frames, normal_frames, anomalous_videos,
    mixed_videos, prevalence, within_pair_fraction (w), max_within_gain (w/2),
    oracle_video_constant_auroc, one_bit_auroc, within_effective_videos (N_eff)
``conventions`` — dict: ground_truth (source), the loader's conventions (format, interval_end,
    frame_counts, categories, video_order, clipped_intervals, …), normal_category,
    tie_convention, clustered_se (how the clustered SEs are computed), bootstrap {replicates,
    seed, resampling, interval, bias_resampling, bias_margin, category_resampling,
    replicates_missing_a_category_unstratified, replicates_missing_a_category}, models
    [{name, family, source, notes}], scene_labels (source or None), controls {retention,
    permutation_control, video_level_auroc, retention_summary} (with models)
``metrics`` — one row per model × granularity:
    model, family, granularity ∈ GRANULARITIES, value, ci_low, ci_high, clustered_se (micro,
    within and macro; NaN for the others, docs/metrics.md "Clustered covariance of two models")
``controls`` — one row per model:
    model, family, micro, micro_video_mean, retention_mean (R_mean), retention_mean_note,
    within_video_mean, ap, ap_video_mean, ap_retention, ap_retention_note, prevalence,
    obuchowski_se, micro_permuted (expected micro under within-video permutation),
    retention_permuted, retention_permuted_note (a retention is NaN, JSON null, unless its
    original is above chance, AUROC 0.5 or AP the prevalence; its note then says why, else
    the note is missing; docs/metrics.md "Video-level controls")
``per_category`` — one row per model × category (c ≠ Normal):
    model, category, videos, anomalous_frames, normal_frames, same_category_auroc,
    category_vs_normal_auroc
``comparisons`` — one row per model pair × granularity (paired video bootstrap):
    model_a, model_b, family_a, family_b, scope ("within_family", "cross_family", or None when
    a model has no family), granularity, difference, ci_low, ci_high, resolved
``resolved`` — resolved-pair counts (empty with fewer than two models):
    granularity, scope ∈ {all, within_family, cross_family, family}, family ("all",
    "within-family", "cross-family", or a family name: pairs within that family), resolved,
    pairs
``bias`` — one row per model × contrast:
    model, family, factor, positive, negative, primary, role, n_positive, n_negative,
    bias_auroc, ci_low, ci_high, p_bias, p_permutation, p_holm, significant, supported,
    anomalous_share_positive, anomalous_share_negative, n_positive_leak_free,
    n_negative_leak_free, bias_auroc_leak_free, ci_low_leak_free, ci_high_leak_free,
    p_bias_leak_free, p_permutation_leak_free, p_holm_leak_free, significant_leak_free,
    supported_leak_free, leakage_warning
    (unsuffixed cells: population a, normal frames of all videos; ``_leak_free``: population
    b, Normal videos only; see docs/metrics.md)
``scene_pairs`` — one row per model × contrast × pair type:
    model, factor, positive, negative, pair_type ∈ {"++", "--", "+-", "-+"}, auroc, weight
``scene_conditioned`` — one row per model × contrast:
    model, family, factor, positive, negative, auroc_ref, auroc_cond, delta_scene

Tables of the optional inputs (:data:`AuditResult.OPTIONAL_TABLES`, empty without them):

``definition_probes`` — one row per definition-scored model × probe × metric:
    model, family, probe ∈ {D@5, D@5N, D@5X, DC-Disc, DC-DetΔ, DC-SelΔ}, metric ∈ {auroc, ap},
    value, ci_low, ci_high (AUROC only), terms (queries, classes or (video, class) terms)
``definition_queries`` — one row per model × query Γ:
    model, definition, classes, omega (ω_Γ), d5_auroc, d5_normal_auroc, d5_excluded_auroc,
    identity_gap (D@5 − ω·D@5ᴺ − (1 − ω)·D@5ˣ), d5_ap, d5_normal_ap, d5_excluded_ap
``definition_classes`` — one row per model × class:
    model, class, disc_auroc, det_matching_auroc, det_other_auroc, det_delta_auroc, disc_ap,
    det_delta_ap
``readout`` — one row per feature model × prototype readout:
    model, family, readout ∈ {global, per_category, within_video}, granularity (the AUROC
    that reads it), auroc, ci_low, ci_high, videos (scored), left_out (videos not read),
    left_out_reasons (the count per reason, e.g. "150 of the Normal category")
``further`` — one row per model (empty without models):
    model, family, auca, cross_mass_kept, max_auca, interval_ap (mean over tIoU 0.1–0.5),
    interval_ap_at_05, interval_ap_video_mean[_at_05], interval_ap_whole_video[_at_05]
    (interval AP on all videos, under the run's event rule; NaN without --interval-ap)
``interval_ap`` — one row per model × population × prediction × tIoU (with --interval-ap):
    model, family, population ∈ {all, anomalous (anomaly-containing videos)}, prediction ∈
    {original, video_mean, whole_video}, tiou ∈ {0.1, …, 0.9}, ap
``class_wise_map`` — one row per definition-scored model × population × class × tIoU (with
    --interval-ap and definition scores): model, family, population, class (a class, or
    "mean": the mAP over the classes), tiou, ap
``agreement`` — one row per granularity (two or more models):
    granularity, models, spread (max − min of the estimates), pairs (model pairs ordered
    strictly by both micro and the granularity), reversals, spearman_rho (vs micro)
``spread`` — one row per granularity × subset (two or more models):
    granularity, family ("all" or a family), models, spread (max − min of the estimates)
``pair_type_means`` — one row per model × pair type (contrasts with |mean Δscene| ≥ 0.01):
    model, pair_type, auroc (mean over those contrasts), contrasts (how many)
``prob_auc`` — one row per model × granularity ∈ {micro, per_category, macro} (with soft
    labels): model, family, granularity, value, ci_low, ci_high
``covariance`` — one row per model pair × granularity ∈ {micro, within, macro} (two or more
    models): model_a, model_b, family_a, family_b, scope, granularity, difference, se_a, se_b,
    covariance, correlation, se_difference, z, p_value (clustered, videos as units), reason
    (why a value is undefined; None when all are defined)
``video_level`` — one row per model × video score ∈ {max, mean} (empty without models):
    model, family, video_score, auroc (video label: holds an anomalous frame), ci_low, ci_high
``retention_summary`` — one row per retention ∈ {retention_mean, ap_retention,
    retention_permuted} × family ("all" or a family; empty without models): retention, family,
    results, defined, median, minimum, increases, at_least_85, at_least_90 (counts over the
    defined results only)
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pandas as pd

GRANULARITIES: tuple[str, ...] = (
    "micro",
    "within",
    "cross",
    "macro",
    "per_category",
    "category_vs_normal",
)
"""micro: pooled frame AUROC (A Eq. 1); within / cross: same-video / different-video pairs
(L); macro: mean per-video AUROC over mixed videos (A Eq. 3, "within-video"); per_category:
mean same-category AUROC (A Eq. 2); category_vs_normal: mean AUROC of a category's anomalous
frames against its normal frames plus all Normal videos (common variant)."""


@dataclass(frozen=True, eq=False)
class AuditResult:
    """Everything one audit run computed. Tables may be empty (e.g. a GT-only run)."""

    conventions: dict[str, Any]
    summary: dict[str, float | int]
    composition: pd.DataFrame
    metrics: pd.DataFrame
    controls: pd.DataFrame
    per_category: pd.DataFrame
    comparisons: pd.DataFrame
    resolved: pd.DataFrame
    bias: pd.DataFrame
    scene_pairs: pd.DataFrame
    scene_conditioned: pd.DataFrame
    models: tuple[str, ...] = field(default=())
    definition_probes: pd.DataFrame = field(default_factory=pd.DataFrame)
    definition_queries: pd.DataFrame = field(default_factory=pd.DataFrame)
    definition_classes: pd.DataFrame = field(default_factory=pd.DataFrame)
    readout: pd.DataFrame = field(default_factory=pd.DataFrame)
    further: pd.DataFrame = field(default_factory=pd.DataFrame)
    interval_ap: pd.DataFrame = field(default_factory=pd.DataFrame)
    class_wise_map: pd.DataFrame = field(default_factory=pd.DataFrame)
    agreement: pd.DataFrame = field(default_factory=pd.DataFrame)
    spread: pd.DataFrame = field(default_factory=pd.DataFrame)
    pair_type_means: pd.DataFrame = field(default_factory=pd.DataFrame)
    prob_auc: pd.DataFrame = field(default_factory=pd.DataFrame)
    covariance: pd.DataFrame = field(default_factory=pd.DataFrame)
    video_level: pd.DataFrame = field(default_factory=pd.DataFrame)
    retention_summary: pd.DataFrame = field(default_factory=pd.DataFrame)

    TABLES: ClassVar[tuple[str, ...]] = (
        "composition",
        "metrics",
        "controls",
        "per_category",
        "comparisons",
        "resolved",
        "bias",
        "scene_pairs",
        "scene_conditioned",
    )
    OPTIONAL_TABLES: ClassVar[tuple[str, ...]] = (
        "definition_probes",
        "definition_queries",
        "definition_classes",
        "readout",
        "further",
        "interval_ap",
        "class_wise_map",
        "agreement",
        "spread",
        "pair_type_means",
        "prob_auc",
        "covariance",
        "video_level",
        "retention_summary",
    )
    """Tables of the definition-scores and features inputs; empty (and left out of the
    JSON) without them."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: NaN becomes null, tables become lists of records."""
        cleaned: dict[str, Any] = _clean(
            {
                "conventions": self.conventions,
                "summary": self.summary,
                "models": list(self.models),
                **{name: getattr(self, name).to_dict(orient="records") for name in self.TABLES},
                **{
                    name: getattr(self, name).to_dict(orient="records")
                    for name in self.OPTIONAL_TABLES
                    if not getattr(self, name).empty
                },
            }
        )
        return cleaned

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, allow_nan=False) + "\n"


def _clean(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str):  # numpy scalars
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
