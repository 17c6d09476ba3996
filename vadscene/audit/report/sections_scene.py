"""The report's scene sections: scene bias on normal footage (with its warnings) and
scene-conditioned AUROC.

Each builder takes an :class:`~vadscene.audit.compute.result.AuditResult` and returns its
:class:`~vadscene.audit.report.document.Section`, or ``None`` when the tables it reads are empty.
"""

from __future__ import annotations

import re

import pandas as pd

from vadscene.audit.compute.result import AuditResult
from vadscene.audit.report import figures
from vadscene.audit.report.document import Block, BulletList, Figure, Note, Section, Table, Text
from vadscene.audit.report.formatting import ci, count, num, pct, plain


def bias_section(result: AuditResult) -> Section | None:
    """Section "Scene bias on normal footage": the warnings, both bias populations per contrast and
    model. Contrasts without a labelled video are listed once, among the inputs
    (conventions["empty_contrasts"]), not as rows of n/a."""
    if result.bias.empty:
        return None
    blocks: list[Block] = []
    if warnings := bias_warnings(result):
        blocks += [Text("Warnings:"), BulletList(tuple(warnings))]
    return Section("Scene bias on normal footage", tuple(blocks + _bias_blocks(result)))


def _bias_blocks(result: AuditResult) -> list[Block]:
    ordered = _by_contrast_then_model(result, result.bias)
    table = pd.DataFrame(
        {
            "contrast": figures.contrast_labels(ordered),
            "role": ordered["role"],
            "primary": ordered["primary"].map(lambda p: "yes" if p else "no"),
            "model": ordered["model"],
            "n ⊕": ordered["n_positive"].map(count),
            "n ⊖": ordered["n_negative"].map(count),
        }
    )
    if "anomalous_share_positive" in ordered:
        table["anomalous ⊕ / ⊖"] = [
            f"{pct(p)} / {pct(n)}"
            for p, n in ordered[["anomalous_share_positive", "anomalous_share_negative"]].values
        ]
    two_populations = "bias_auroc_leak_free" in ordered
    interval = " [95 % CI]" if figures.has_intervals(result) else ""
    for suffix, heading in (("", "all videos"), ("_leak_free", "Normal videos")):
        if suffix and not two_populations:
            continue
        name = f" ({heading})" if two_populations else ""
        if suffix:
            table[f"n ⊕ / ⊖{name}"] = [
                f"{count(p)} / {count(n)}"
                for p, n in ordered[[f"n_positive{suffix}", f"n_negative{suffix}"]].values
            ]
        table[f"bias-AUC{interval}{name}"] = [
            ci(*r)
            for r in ordered[[f"bias_auroc{suffix}", f"ci_low{suffix}", f"ci_high{suffix}"]].values
        ]
        table[f"p_bias{name}"] = [_p_bias(row, suffix) for _, row in ordered.iterrows()]
        if f"p_permutation{suffix}" in ordered:
            table[f"p_perm (Holm){name}"] = [_p_test(row, suffix) for _, row in ordered.iterrows()]
    blocks: list[Block] = []
    for population, alt_text in (
        ("all", "bias-AUC per scene factor and model"),
        ("leak_free", "bias-AUC per scene factor and model, Normal videos only"),
    ):
        if (chart := figures.bias_dot_plot(result, population)) is not None:
            suffix = "" if population == "all" else f"_{population}"
            blocks.append(Figure(f"bias_dot_plot{suffix}", chart, alt_text))
    bootstrap = result.conventions.get("bootstrap") or {}
    support = bootstrap.get("min_pole_support")
    level = bootstrap.get("significance_level")
    note = (
        "bias-AUC uses normal footage only: the probability that a ⊕ video's mean "
        "normal-frame score exceeds a ⊖ video's (n ⊕, n ⊖: videos at each pole). 0.5 means "
        "the scores do not respond to the factor; the band 0.45–0.55 counts as practically "
        "unbiased, and p_bias is the share of bootstrap replicates (videos resampled within "
        "each pole) falling outside it. bias-AUC does not depend on how many videos each "
        "pole has; a small pole only widens the interval. Control factors correlate with "
        "the anomaly class by construction: read them as a check, not as scene reliance. "
        + figures.interval_words(result, "", ", so p_bias and the permutation p-values are n/a")
    ).rstrip()
    if two_populations:
        note += (
            " Two populations, side by side. All videos (the paper's s̄⁰, the default) also "
            "averages the normal stretches of anomalous videos, where a scorer's anomaly "
            "evidence leaks in: a factor whose poles hold different shares of anomalous "
            "videos (anomalous ⊕ / ⊖) moves it without any scene response. Normal videos "
            "only cannot be moved that way. p_perm is a calibrated test of b = 0.5: the "
            "share of pole-label shuffles among the contrast's videos whose bias-AUC is at "
            "least as far from 0.5; ✓ marks cells significant after Holm correction across "
            f"contrasts (per model and population, family-wise level {plain(level)}). "
            f"Below {plain(support)} videos at either pole the cell reads "
            '"insufficient support" instead of p_bias and is left out of the correction.'
        )
    blocks += [Table(table, labels=4), Note(note)]
    return blocks


def _p_bias(row: pd.Series, suffix: str) -> str:
    if f"supported{suffix}" in row and not row[f"supported{suffix}"]:
        return "insufficient support"
    return num(row[f"p_bias{suffix}"], 3)


def _p_test(row: pd.Series, suffix: str) -> str:
    text = num(row[f"p_permutation{suffix}"], 3)
    # `in (True,)` accepts numpy booleans and rejects a missing (NaN) flag
    return text + (" ✓" if row.get(f"significant{suffix}") in (True,) else "")


def bias_warnings(result: AuditResult) -> list[str]:
    """One line per bias cell whose populations disagree beyond their 95 % intervals while
    the poles hold different shares of anomalous videos (the report's and the CLI's warning)."""
    bias = result.bias
    if bias.empty or "leakage_warning" not in bias:
        return []
    lines = []
    for row in _by_contrast_then_model(result, bias).itertuples():
        if not row.leakage_warning:
            continue
        lines.append(
            f"{row.model} on {row.factor} ({row.positive} vs {row.negative}): bias-AUC "
            f"{ci(row.bias_auroc, row.ci_low, row.ci_high)} on all videos but "
            f"{ci(row.bias_auroc_leak_free, row.ci_low_leak_free, row.ci_high_leak_free)} on "
            f"Normal videos only; anomalous videos make up {pct(row.anomalous_share_positive)} "
            f"of ⊕ and {pct(row.anomalous_share_negative)} of ⊖, so the all-videos value "
            "measures anomaly evidence leaking into normal frames, not the scene"
        )
    return lines


def scene_conditioned_section(result: AuditResult) -> Section | None:
    """Section "Scene-conditioned AUROC": Δscene per contrast and model, one pair-type heatmap
    per model."""
    conditioned = result.scene_conditioned
    if conditioned.empty and result.scene_pairs.empty:
        return None
    blocks: list[Block] = []
    if not conditioned.empty:
        ordered = _by_contrast_then_model(result, conditioned)
        table = pd.DataFrame(
            {
                "contrast": figures.contrast_labels(ordered),
                "model": ordered["model"],
                "AUC_ref": ordered["auroc_ref"].map(num),
                "AUC_cond": ordered["auroc_cond"].map(num),
                "Δscene": ordered["delta_scene"].map(lambda d: num(d, signed=True)),
            }
        )
        blocks.append(Table(table, labels=2))
    blocks.append(
        Note(
            "On the videos labelled in a factor, AUC_ref is the pooled AUROC and AUC_cond the "
            "mean of the two same-pole AUROCs (⊕⊕, ⊖⊖). Δscene = AUC_ref − AUC_cond > 0 means "
            "pairs across poles inflate the pooled AUROC: part of it is earned by telling the "
            "poles apart rather than events. The heatmaps show the four pair-type AUROCs and the "
            "share of pairs (w) each carries."
        )
    )
    for i, (model, spec) in enumerate(figures.scene_pair_heatmap_specs(result).items()):
        slug = re.sub(r"[^a-z0-9]+", "-", model.lower()).strip("-")
        blocks.append(Figure(f"scene_pairs_{i + 1}_{slug}", spec, f"{model}: AUROC by pair type"))
    return Section("Scene-conditioned AUROC", tuple(blocks))


def _by_contrast_then_model(result: AuditResult, table: pd.DataFrame) -> pd.DataFrame:
    """Rows sorted like the figures: primary contrasts first, then the run's model order."""
    contrast = pd.Categorical(
        figures.contrast_labels(table), categories=figures.contrast_order(table), ordered=True
    )
    models = figures.model_order(result)
    model = pd.Categorical(table["model"], categories=models, ordered=True)
    order = pd.DataFrame({"c": contrast, "m": model}).sort_values(["c", "m"], kind="stable")
    return table.loc[order.index]
