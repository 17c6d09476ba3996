"""The report's AUROC sections: granularities, video-level controls, per-category AUROC,
paired model comparisons and the further tables (AUCA, interval AP, agreement, spread,
pair-type means).

Each builder takes an :class:`~vadscene.audit.compute.result.AuditResult` and returns its
:class:`~vadscene.audit.report.document.Section`, or ``None`` when the tables it reads are empty.
"""

from __future__ import annotations

import pandas as pd

from vadscene.audit.compute.result import AuditResult
from vadscene.audit.report import figures
from vadscene.audit.report.document import (
    Block,
    BulletList,
    Figure,
    Note,
    Section,
    Table,
    Text,
)
from vadscene.audit.report.formatting import ci, count, num, pct, plain

_SHORT_GRANULARITY = {g: label.split(" — ")[0] for g, label in figures.GRANULARITY_LABELS.items()}
"""Table headers ("micro", "per-category", ...), in the figures' order."""


def granularity_section(result: AuditResult) -> Section | None:
    """Section "AUROC at each granularity": the forest plot and decomposition, one row per model
    with its 95 % interval at every granularity."""
    metrics = result.metrics
    if metrics.empty:
        return None
    columns = [g for g in _SHORT_GRANULARITY if g in set(metrics["granularity"])]
    cells = metrics.assign(cell=[ci(*r) for r in metrics[["value", "ci_low", "ci_high"]].values])
    wide = cells.pivot(index="model", columns="granularity", values="cell")
    families = metrics.groupby("model", sort=False)["family"].first()
    models = [m for m in figures.model_order(result) if m in wide.index]
    table = pd.DataFrame(
        {
            "model": models,
            "family": [plain(families[m]) for m in models],
            **{_SHORT_GRANULARITY[g]: [plain(wide.at[m, g]) for m in models] for g in columns},
        }
    )
    blocks: list[Block] = [
        Figure(name, chart, alt_text)
        for name, build, alt_text in (
            ("granularity_forest", figures.granularity_forest_plot, "AUROC per granularity"),
            ("decomposition", figures.decomposition_bars, "micro, within and cross AUROC"),
        )
        if (chart := build(result)) is not None
    ]
    blocks += [
        Table(table, labels=2),
        Note(
            "Every column reads the same frame scores; only the set of anomalous–normal frame "
            "pairs changes. micro pools all pairs, so it is dominated by pairs from different "
            "videos (cross). within-video AUROC compares frames of the same video only; it is "
            "the only granularity that tests temporal localisation (macro averages it per mixed "
            "video, each video counting equally). per-category compares frames of one anomaly "
            "category. "
            + figures.interval_words(
                result,
                f"Brackets: 95 % percentile interval over {_replicates(result)} video-bootstrap "
                "replicates (videos resampled with all their frames); overlapping intervals do "
                "not rank models — see the paired comparisons. " + category_draws_words(result),
            )
        ),
    ]
    return Section("AUROC at each granularity", tuple(blocks))


def category_draws_words(result: AuditResult) -> str:
    """The per-category estimand as the run drew it: which replicates the per-category
    intervals read, and how many unstratified replicates miss a category (docs/metrics.md,
    "The per-category estimand")."""
    bootstrap = result.conventions.get("bootstrap") or {}
    resampling = bootstrap.get("category_resampling")
    if not isinstance(resampling, str) or not bootstrap.get("replicates"):
        return ""
    missed = bootstrap.get("replicates_missing_a_category_unstratified")
    share = (
        f"{count(missed)} of the {count(bootstrap.get('replicates'))} unstratified replicates "
        "leave at least one category out, and such a replicate averages only the others"
    )
    if resampling.startswith("stratified"):
        still = bootstrap.get("replicates_missing_a_category")
        undefined = (
            f" ({count(still)} stratified replicates still lack a category's AUROC: its "
            "anomalous and normal frames lie in different videos, and the draw took one kind)"
            if still
            else ""
        )
        return (
            "The per-category and category-vs-Normal intervals resample videos within each "
            "category, so every replicate holds every category, as the point estimate does"
            f"{undefined}; drawn without strata, {share}."
        )
    return (
        "The per-category and category-vs-Normal intervals read the shared video resamples "
        f"(--category-bootstrap unstratified): {share}, so the interval mixes two estimands."
    )


def controls_section(result: AuditResult) -> Section | None:
    """Section "Video-level controls": each model's scores against their video-mean
    replacement and their within-video permutation; an undefined retention reads n/a, with
    its reason listed under the table."""
    controls = result.controls
    if controls.empty:
        return None
    table = pd.DataFrame(
        {
            "model": controls["model"],
            "family": controls["family"].map(plain),
            "micro": controls["micro"].map(num),
            "micro (video mean)": controls["micro_video_mean"].map(num),
            "R_mean": controls["retention_mean"].map(pct),
            "within (video mean)": controls["within_video_mean"].map(num),
            "AP": controls["ap"].map(num),
            "AP (video mean)": controls["ap_video_mean"].map(num),
            "AP retention": controls["ap_retention"].map(pct),
            "micro (permuted, expected)": controls["micro_permuted"].map(num),
            "R_perm": controls["retention_permuted"].map(pct),
            "clustered SE (micro)": controls["obuchowski_se"].map(num),
        }
    )
    blocks: list[Block] = [Table(table, labels=2)]
    if reasons := _undefined_retentions(controls):
        blocks += [Text("Retentions left undefined (n/a):"), BulletList(tuple(reasons))]
    blocks.append(
        Note(
            "Each frame score is replaced by its video's mean score: frames of one video "
            "can no longer be told apart, so within-video AUROC becomes exactly 0.5 and only "
            "the ranking of whole videos remains. R_mean is the share of micro's margin above "
            "chance that survives, (micro(video mean) − 0.5) / (micro − 0.5); near 100 % "
            "means the pooled score needs no within-video variation. AP retention is the "
            "same for frame AP above the prevalence. micro (permuted, expected) is the exact "
            "expectation of micro when each video's scores are shuffled among its own frames "
            "(every video keeps its scores, their alignment with the labels is random), and "
            "R_perm its share of the margin. A retention is defined only when the original is "
            "above chance (AUROC 0.5, AP the prevalence), as in the papers; otherwise it reads "
            "n/a and the reason is listed. The clustered SE (Obuchowski) treats videos, not "
            "frames, as the independent units."
        )
    )
    return Section("Video-level controls", tuple(blocks))


_RETENTION_LABELS = {
    "retention_mean": "R_mean",
    "ap_retention": "AP retention",
    "retention_permuted": "R_perm",
}
"""Each retention column of ``controls`` (with its ``*_note``) and its header above."""


def _undefined_retentions(controls: pd.DataFrame) -> list[str]:
    """ "model: R_mean undefined: …" for every retention the table shows as n/a."""
    return [
        f"{row['model']}: {label} {row[f'{column}_note']}"
        for _, row in controls.iterrows()
        for column, label in _RETENTION_LABELS.items()
        if isinstance(row.get(f"{column}_note"), str)
    ]


def per_category_section(result: AuditResult) -> Section | None:
    """Section "Per-category AUROC": same-category AUROC per model, with each category's support."""
    per_category = result.per_category
    if per_category.empty:
        return None
    support = per_category.groupby("category", sort=False)[
        ["videos", "anomalous_frames", "normal_frames"]
    ].first()
    wide = per_category.pivot(index="category", columns="model", values="same_category_auroc")
    models = [m for m in figures.model_order(result) if m in wide.columns]
    table = pd.DataFrame(
        {
            "category": support.index,
            "videos": support["videos"].map(count).to_numpy(),
            "anomalous frames": support["anomalous_frames"].map(count).to_numpy(),
            "normal frames": support["normal_frames"].map(count).to_numpy(),
            **{m: [num(wide.at[c, m]) for c in support.index] for m in models},
        }
    )
    return Section(
        "Per-category AUROC",
        (
            Table(table),
            Note(
                "Same-category AUROC per model: anomalous against normal frames, both from the "
                "videos of one category, so the comparison cannot be won by telling categories "
                "or Normal videos apart. The category-vs-Normal variant (normal frames of the "
                "category plus all Normal videos) is in per_category.csv. The per-category "
                "AUROC of the granularity table is the mean of this table's column. "
                + category_draws_words(result)
            ),
        ),
    )


_RESOLVED_ROW_LABELS = {
    "all": "all pairs",
    "within-family": "pairs within one family",
    "cross-family": "pairs across families",
}
"""Row labels of the resolved counts' subsets; a family's own row reads "within family F"."""


def comparisons_section(result: AuditResult) -> Section | None:
    """Section "Paired model comparisons": resolved pairs per family and every pair's difference."""
    resolved, comparisons = result.resolved, result.comparisons
    resolved = resolved[resolved["pairs"] > 0]  # with fewer than two models: nothing compared
    if resolved.empty and comparisons.empty:
        return None
    blocks: list[Block] = []
    if not resolved.empty:
        cells = resolved.assign(
            cell=[f"{r} / {p}" for r, p in resolved[["resolved", "pairs"]].values]
        )
        wide = cells.pivot(index="family", columns="granularity", values="cell")
        scopes = resolved.groupby("family", sort=False)["scope"].first()
        families = [  # all, within / across families (as the table lists them), each family
            *(f for f in dict.fromkeys(resolved["family"]) if scopes[f] != "family"),
            *sorted(f for f in wide.index if scopes[f] == "family"),
        ]
        columns = [g for g in _SHORT_GRANULARITY if g in wide.columns]
        table = pd.DataFrame(
            {
                "pairs compared": [
                    _RESOLVED_ROW_LABELS.get(f, f"within family {f}") for f in families
                ],
                **{
                    _SHORT_GRANULARITY[g]: [plain(wide.at[f, g]) for f in families] for g in columns
                },
            }
        )
        blocks.append(Table(table))
    if not comparisons.empty:
        marked = comparisons.assign(
            cell=[
                ci(d, lo, hi, signed=True) + (" ✓" if ok else "")
                for d, lo, hi, ok in comparisons[
                    ["difference", "ci_low", "ci_high", "resolved"]
                ].values
            ]
        )
        wide = marked.pivot(index=["model_a", "model_b"], columns="granularity", values="cell")
        columns = [g for g in _SHORT_GRANULARITY if g in wide.columns]
        pairs = list(
            dict.fromkeys(zip(comparisons["model_a"], comparisons["model_b"], strict=True))
        )
        table = pd.DataFrame(
            {
                "model A": [a for a, _ in pairs],
                "model B": [b for _, b in pairs],
                **{_SHORT_GRANULARITY[g]: [plain(wide.at[p, g]) for p in pairs] for g in columns},
            }
        )
        blocks.append(Table(table, labels=2))
    blocks.append(
        Note(
            figures.interval_words(
                result,
                "Each pair of models is scored on the same bootstrap replicates (same resampled "
                "videos), and the 95 % interval of the difference A − B decides: a pair is "
                "resolved (✓) when it excludes 0.",
                ", so no pair can be resolved and every count is 0",
            )
            + ' Counts "within family" keep only pairs of models sharing a backbone — the '
            "comparisons state-of-the-art claims rest on; pairs across families (e.g. an I3D "
            "model against a CLIP one) are the easy ones, so many resolved pairs overall but "
            "few within families mean the metric separates backbones, not methods "
            "(comparisons.csv marks each pair's scope, within_family or cross_family)."
        )
    )
    return Section("Paired model comparisons", tuple(blocks))


def further_section(result: AuditResult) -> Section | None:
    """Section "Further tables": AUCA and interval AP, agreement with micro, spread and
    pair-type means, as far as the run computed them."""
    further = result.further
    if further.empty:
        return None
    with_intervals = further["interval_ap"].notna().any()
    table = pd.DataFrame(
        {
            "model": further["model"],
            "AUCA": further["auca"].map(num),
            "cross mass kept": further["cross_mass_kept"].map(pct),
            "max AUCA": further["max_auca"].map(num),
            **(
                {
                    "interval AP": further["interval_ap"].map(num),
                    "AP@0.5": further["interval_ap_at_05"].map(num),
                    "interval AP (video mean)": further["interval_ap_video_mean"].map(num),
                    "AP@0.5 (video mean)": further["interval_ap_video_mean_at_05"].map(num),
                    "interval AP (whole video)": further["interval_ap_whole_video"].map(num),
                    "AP@0.5 (whole video)": further["interval_ap_whole_video_at_05"].map(num),
                }
                if with_intervals
                else {}
            ),
        }
    )
    blocks: list[Block] = []
    if (chart := figures.interval_ap_chart(result)) is not None:
        blocks.append(Figure("interval_ap", chart, "interval AP per construction"))
    blocks += [
        Table(table, labels=1),
        Note(
            "AUCA pools only the videos that contain an anomaly; it still compares frames "
            "across videos (cross mass kept: the share of all cross-video pairs it keeps), and "
            "max AUCA is what one score per video reaches there. Interval AP (with "
            "--interval-ap) follows the released VadCLIP evaluation (proposals: runs above "
            "max − 0.6·(max − min) of the video's scores, at least 2 frames; greedy "
            "matching; mean over "
            "tIoU 0.1–0.5) on all videos, under the event rule the conventions state (interval "
            "AP depends on it); section Interval AP has every tIoU 0.1–0.9 and the "
            "anomaly-containing videos. Video-mean replacement yields no proposal, so its AP "
            "is 0; whole-video intervals ([0, T) per video, confidence = mean score) show how "
            "much AP needs no temporal localisation."
        ),
    ]
    agreement = result.agreement
    if not agreement.empty:
        blocks += [
            Text("Agreement of every granularity with micro AUROC over the models:"),
            Table(
                pd.DataFrame(
                    {
                        "granularity": agreement["granularity"],
                        "models": agreement["models"].map(count),
                        "spread (max − min)": agreement["spread"].map(num),
                        "pairs compared": agreement["pairs"].map(count),
                        "reversals": agreement["reversals"].map(count),
                        "Spearman ρ": agreement["spearman_rho"].map(num),
                    }
                ),
                labels=1,
            ),
            Note(
                "A reversal is a model pair that micro and the granularity order oppositely "
                "(pairs tied in either are left out). Many reversals or a low ρ mean a "
                "leaderboard ranked by micro would change under that reading."
            ),
        ]
    spread = result.spread
    if not spread.empty:
        wide = spread.pivot(index="granularity", columns="family", values="spread")
        families = list(dict.fromkeys(spread["family"]))
        order = [g for g in _SHORT_GRANULARITY if g in wide.index]
        blocks += [
            Text("Spread (max − min of the point estimates) over all models and per family:"),
            Table(
                pd.DataFrame(
                    {
                        "granularity": [_SHORT_GRANULARITY[g] for g in order],
                        **{f: [num(wide.at[g, f]) for g in order] for f in families},
                    }
                ),
                labels=1,
            ),
        ]
    means = result.pair_type_means
    if not means.empty:
        wide = means.pivot(index="model", columns="pair_type", values="auroc")
        types = [t for t in figures.PAIR_TYPES if t in wide.columns]
        blocks += [
            Text(
                f"Pair-type AUROC averaged over the {int(means['contrasts'].iloc[0])} contrasts "
                "with |mean Δscene| ≥ 0.01 (⊕⊖: anomalous frames of ⊕ videos against normal "
                "frames of ⊖ videos):"
            ),
            Table(
                pd.DataFrame(
                    {
                        "model": list(wide.index),
                        **{
                            f"AUC {figures.PAIR_TYPES[k]}": [num(v) for v in wide[k]] for k in types
                        },
                    }
                ),
                labels=1,
            ),
        ]
    if (chart := figures.support_chart(result)) is not None:
        blocks.append(Figure("support", chart, "videos at each pole of every contrast"))
    return Section("Further tables", tuple(blocks))


def _replicates(result: AuditResult) -> str:
    b = (result.conventions.get("bootstrap") or {}).get("replicates")
    return f"B = {b}" if b is not None else "the"
