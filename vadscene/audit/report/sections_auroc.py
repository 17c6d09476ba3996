"""The report's AUROC sections: granularities, video-level controls, per-category AUROC,
paired model comparisons and the further tables (AUCA, interval AP, agreement, spread,
pair-type means, Prob-AUC).

Each builder takes an :class:`~vadscene.audit.compute.result.AuditResult` and returns its
:class:`~vadscene.audit.report.document.Section`, or ``None`` when the tables it reads are empty.
"""

from __future__ import annotations

import pandas as pd

from vadscene.audit.compute.result import AuditResult
from vadscene.audit.report import figures
from vadscene.audit.report.document import Block, Figure, Note, Section, Table, Text
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
            "category. Brackets: 95 % percentile interval over "
            f"{_replicates(result)} video-bootstrap replicates (videos resampled with all their "
            "frames); overlapping intervals do not rank models — see the paired comparisons."
        ),
    ]
    return Section("AUROC at each granularity", tuple(blocks))


def controls_section(result: AuditResult) -> Section | None:
    """Section "Video-level controls": each model's scores against their video-mean replacement."""
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
            "clustered SE (micro)": controls["obuchowski_se"].map(num),
        }
    )
    return Section(
        "Video-level controls",
        (
            Table(table, labels=2),
            Note(
                "Each frame score is replaced by its video's mean score: frames of one video "
                "can no longer be told apart, so within-video AUROC becomes exactly 0.5 and only "
                "the ranking of whole videos remains. R_mean is the share of micro's margin above "
                "chance that survives, (micro(video mean) − 0.5) / (micro − 0.5); near 100 % "
                "means the pooled score needs no within-video variation. AP retention is the "
                "same for frame AP above the prevalence. The clustered SE (Obuchowski) treats "
                "videos, not frames, as the independent units."
            ),
        ),
    )


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
                "category plus all Normal videos) is in per_category.csv."
            ),
        ),
    )


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
        families = ["all", *sorted(f for f in wide.index if f != "all")]
        columns = [g for g in _SHORT_GRANULARITY if g in wide.columns]
        table = pd.DataFrame(
            {
                "pairs compared": [
                    "all pairs" if f == "all" else f"within family {f}" for f in families
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
            "Each pair of models is scored on the same bootstrap replicates (same resampled "
            "videos), and the 95 % interval of the difference A − B decides: a pair is resolved "
            '(✓) when it excludes 0. Counts "within family" keep only pairs of models sharing '
            "a backbone — the comparisons state-of-the-art claims rest on."
        )
    )
    return Section("Paired model comparisons", tuple(blocks))


def further_section(result: AuditResult) -> Section | None:
    """Section "Further tables": AUCA and interval AP, agreement with micro, spread, pair-type
    means and Prob-AUC, as far as the run computed them."""
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
                    "interval AP (whole video)": further["interval_ap_whole_video"].map(num),
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
            "tIoU 0.1–0.5). Video-mean replacement yields no proposal, so its AP is 0; "
            "whole-video intervals ([0, T) per video, confidence = mean score) show how much AP "
            "needs no temporal localisation."
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
    soft = result.prob_auc
    if not soft.empty:
        micro = result.metrics[result.metrics["granularity"] == "micro"].set_index("model")
        blocks += [
            Text("Prob-AUC under the soft (multi-annotator) frame labels, beside micro AUROC:"),
            Table(
                pd.DataFrame(
                    {
                        "model": soft["model"],
                        "Prob-AUC": soft["prob_auc"].map(num),
                        "micro AUROC": [num(micro["value"].get(m)) for m in soft["model"]],
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
