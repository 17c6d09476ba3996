"""The report's document: its title, introduction and sections, in reading order.

:func:`build_document` is the one entry: it writes the inputs and composition sections here
and takes the others from :mod:`~vadscene.audit.report.sections_auroc` (granularities,
controls, per category, comparisons, further tables),
:mod:`~vadscene.audit.report.sections_controls` (run-level retention, video-level AUROC),
:mod:`~vadscene.audit.report.sections_uncertainty` (clustered SEs, Prob-AUC),
:mod:`~vadscene.audit.report.sections_intervals` (interval AP, class-wise mAP),
:mod:`~vadscene.audit.report.sections_scene` and :mod:`~vadscene.audit.report.sections_probes`.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from vadscene.audit.compute.result import AuditResult
from vadscene.audit.report import figures
from vadscene.audit.report.document import (
    Block,
    BulletList,
    Document,
    Figure,
    Note,
    Section,
    Table,
    Text,
)
from vadscene.audit.report.formatting import count, num, pct, plain
from vadscene.audit.report.sections_auroc import (
    comparisons_section,
    controls_section,
    further_section,
    granularity_section,
    per_category_section,
)
from vadscene.audit.report.sections_controls import (
    retention_summary_section,
    video_level_section,
)
from vadscene.audit.report.sections_intervals import interval_ap_section
from vadscene.audit.report.sections_probes import definition_section, readout_section
from vadscene.audit.report.sections_scene import bias_section, scene_conditioned_section
from vadscene.audit.report.sections_uncertainty import clustered_section, prob_auc_section

_CONVENTION_LABELS = {
    "ground_truth": "Ground truth file",
    "format": "Ground truth format",
    "interval_end": "Interval end convention",
    "frame_counts": "Frame counts from",
    "tie_convention": "Ties",
    "replicates": "replicates (B)",
    "scene_coverage": "scene labels cover",
    "empty_contrasts": "contrasts left out (no labelled video at either pole)",
}
"""Display names of the convention keys vadscene.audit.compute.engine writes; any other key is
shown as "Its key"."""


def build_document(result: AuditResult) -> Document:
    """The report of ``result``: its title, introduction and sections in reading order;
    sections whose tables are empty are left out."""
    builders = (
        _inputs_section,
        _composition_section,
        granularity_section,
        controls_section,
        retention_summary_section,
        video_level_section,
        per_category_section,
        comparisons_section,
        clustered_section,
        prob_auc_section,
        bias_section,
        scene_conditioned_section,
        definition_section,
        readout_section,
        further_section,
        interval_ap_section,
    )
    sections = tuple(section for build in builders if (section := build(result)) is not None)
    title, intro = _title(result)
    return Document(title, intro, sections)


def _title(result: AuditResult) -> tuple[str, str]:
    summary = result.summary
    scope = f"{count(summary.get('videos'))} videos, {count(summary.get('frames'))} frames"
    models = figures.model_order(result)
    if not models:
        return "Benchmark audit (ground truth only)", (
            f"Ground truth of {scope}. No model scores were given, so this report describes "
            "the benchmark's composition only."
        )
    return "Audit report", (
        f"{len(models)} model{'s' if len(models) != 1 else ''} ({', '.join(models)}) on "
        f"{scope}: which frame-score comparisons each AUROC rewards, how much survives "
        "without within-video variation, and how the scores respond to scene factors."
    )


def _inputs_section(result: AuditResult) -> Section:
    conventions = dict(result.conventions)
    model_entries = conventions.pop("models", None)
    items = []
    for key, value in conventions.items():
        label = _convention_label(key).capitalize()
        if isinstance(value, dict):  # e.g. bootstrap: one line per setting
            items += [f"{label} {_convention_label(k)}: {plain(v)}" for k, v in value.items()]
        else:
            items.append(f"{label}: {plain(value)}")
    blocks: list[Block] = [BulletList(tuple(items))] if items else []
    models = _model_lines(result, model_entries)
    blocks.append(Text("Models:" if models else "No model scores were given."))
    if models:
        blocks.append(BulletList(tuple(models)))
    return Section("Inputs and conventions", tuple(blocks))


def _convention_label(key: str) -> str:
    return _CONVENTION_LABELS.get(key, key.replace("_", " "))


def _model_lines(result: AuditResult, entries: Any) -> list[str]:
    """One line per model: name, family, score file and notes as the run recorded them.

    ``conventions["models"]`` (a list of dicts with name, family, source, notes) is preferred;
    without it the families come from the metrics table.
    """
    if entries:
        lines = []
        for entry in entries:
            line = f"{entry['name']} — family {entry.get('family') or 'n/a'}"
            if entry.get("source"):
                line += f", scores {entry['source']}"
            if entry.get("notes"):
                line += f"; notes: {'; '.join(map(str, entry['notes']))}"
            lines.append(line)
        return lines
    families = dict(zip(result.metrics["model"], result.metrics["family"], strict=True))
    return [f"{m} — family {families.get(m) or 'n/a'}" for m in figures.model_order(result)]


def _composition_section(result: AuditResult) -> Section | None:
    s = result.summary
    if not s and result.composition.empty:
        return None
    w = s.get("within_pair_fraction")
    rows = [
        ("Videos", count(s.get("videos"))),
        ("Frames", count(s.get("frames"))),
        ("Anomalous frames", count(s.get("anomalous_frames"))),
        ("Normal frames", count(s.get("normal_frames"))),
        ("Anomalous videos", count(s.get("anomalous_videos"))),
        ("Prevalence π (anomalous share of frames)", pct(s.get("prevalence"))),
        ("Mixed videos (anomalous and normal frames)", count(s.get("mixed_videos"))),
        ("Within-video pair fraction w", pct(w)),
        ("Max gain of within on micro (w/2)", num(s.get("max_within_gain"))),
        ("Oracle video-constant micro AUROC", num(s.get("oracle_video_constant_auroc"))),
        ("One-bit control micro AUROC", num(s.get("one_bit_auroc"))),
        ("Effective videos behind within AUROC (N_eff)", num(s.get("within_effective_videos"), 1)),
    ]
    blocks: list[Block] = [Table(pd.DataFrame(rows, columns=["quantity", "value"]))]
    if (chart := figures.composition_chart(result)) is not None:
        blocks.append(Figure("composition", chart, "Anomalous and normal frames per video"))
    blocks.append(
        Note(
            f"w is the share of anomalous–normal frame pairs whose two frames come from the same "
            f"video (here {pct(w)}); only mixed videos contribute such pairs. Pooled (micro) "
            "AUROC = w·within + (1 − w)·cross, so perfect localisation can raise it by at most "
            "w/2. The oracle gives every frame of a video its video's anomalous fraction, the "
            "one-bit control scores 1 on anomalous videos and 0 on normal ones: neither "
            "localises anything, so a micro AUROC near theirs is reachable by ranking whole "
            "videos. N_eff = (Σ a_v n_v)² / Σ (a_v n_v)² is how many equally weighted videos "
            "would spread within AUROC's pair weight as evenly as the mixed videos do; a small "
            "N_eff means a few long or anomaly-dense videos decide it. It is not a sample size."
        )
    )
    return Section("Benchmark composition", tuple(blocks))
