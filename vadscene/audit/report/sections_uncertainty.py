"""The report's uncertainty sections: Prob-AUC at three granularities with paired intervals,
and the clustered standard errors and covariances of model pairs (docs/metrics.md,
"Uncertainty of the granularities").

Each builder takes an :class:`~vadscene.audit.compute.result.AuditResult` and returns its
:class:`~vadscene.audit.report.document.Section`, or ``None`` when the tables it reads are empty.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from vadscene.audit.compute.result import AuditResult
from vadscene.audit.report import figures
from vadscene.audit.report.document import Block, Note, Section, Table, Text
from vadscene.audit.report.formatting import ci, num, plain

_PROB_AUC_LABELS = {"micro": "micro", "per_category": "per-category", "macro": "macro"}
"""[audit] Table 2's Global, Per-category and Within-video columns."""

_CLUSTERED_LABELS = {"micro": "micro", "within": "within", "macro": "macro"}

_SCOPE_WORDS = {"within_family": "within family", "cross_family": "across families"}


def prob_auc_section(result: AuditResult) -> Section | None:
    """Section "Prob-AUC under soft labels": each model's Prob-AUC at micro, per-category and
    macro with its 95 % interval, beside the same granularities of the hard labels."""
    soft = result.prob_auc
    if soft.empty:
        return None
    cells = soft.assign(cell=[ci(*r) for r in soft[["value", "ci_low", "ci_high"]].values])
    wide = cells.pivot(index="model", columns="granularity", values="cell")
    hard = result.metrics.pivot(index="model", columns="granularity", values="value")
    models = [m for m in figures.model_order(result) if m in wide.index]
    columns = [g for g in _PROB_AUC_LABELS if g in wide.columns]
    table = pd.DataFrame(
        {
            "model": models,
            **{
                f"{_PROB_AUC_LABELS[g]} Prob-AUC": [plain(wide.at[m, g]) for m in models]
                for g in columns
            },
            **{
                f"{_PROB_AUC_LABELS[g]} AUROC": [
                    num(hard.at[m, g]) if m in hard.index and g in hard.columns else "n/a"
                    for m in models
                ]
                for g in columns
            },
        }
    )
    return Section(
        "Prob-AUC under soft labels",
        (
            Table(table, labels=1),
            Note(
                "Prob-AUC reads the same scores against soft frame labels y ∈ [0, 1] (the share "
                "of annotators marking a frame anomalous): every frame counts as anomalous with "
                "weight y and as normal with weight 1 − y. micro pools all frames, per-category "
                "averages the categories' own Prob-AUC, macro averages each video's own "
                "Prob-AUC over the videos holding both kinds of weight. "
                + figures.interval_words(
                    result,
                    "Brackets: 95 % percentile interval over the run's video-bootstrap "
                    "replicates (the category draws for per-category), the same draws as the "
                    "AUROC columns beside them.",
                )
                + " With 0/1 labels Prob-AUC equals AUROC, so a gap between the two columns is "
                "what annotator disagreement changes."
            ),
        ),
    )


def clustered_section(result: AuditResult) -> Section | None:
    """Section "Clustered standard errors and model covariance": each model's clustered SE at
    micro, within and macro, and every model pair's difference with its clustered SE,
    correlation and normal-approximation p-value."""
    metrics, covariance = result.metrics, result.covariance
    if metrics.empty or "clustered_se" not in metrics:
        return None
    se = metrics.pivot(index="model", columns="granularity", values="clustered_se")
    models = [m for m in figures.model_order(result) if m in se.index]
    columns = [g for g in _CLUSTERED_LABELS if g in se.columns]
    blocks: list[Block] = [
        Table(
            pd.DataFrame(
                {
                    "model": models,
                    **{
                        f"SE {_CLUSTERED_LABELS[g]}": [num(se.at[m, g]) for m in models]
                        for g in columns
                    },
                }
            ),
            labels=1,
        )
    ]
    if not covariance.empty:
        cells = covariance.assign(cell=[_pair_cell(r) for r in covariance.to_dict("records")])
        wide = cells.pivot(index=["model_a", "model_b"], columns="granularity", values="cell")
        pairs = list(dict.fromkeys(zip(covariance["model_a"], covariance["model_b"], strict=True)))
        scopes = covariance.groupby(["model_a", "model_b"], sort=False)["scope"].first()
        blocks += [
            Text(
                "Every model pair: difference A − B, its clustered SE, the correlation of the "
                "two estimates and the two-sided p-value of z = difference / SE:"
            ),
            Table(
                pd.DataFrame(
                    {
                        "model A": [a for a, _ in pairs],
                        "model B": [b for _, b in pairs],
                        "families": [_SCOPE_WORDS.get(scopes[p], "n/a") for p in pairs],
                        **{
                            _CLUSTERED_LABELS[g]: [plain(wide.at[p, g]) for p in pairs]
                            for g in _CLUSTERED_LABELS
                            if g in wide.columns
                        },
                    }
                ),
                labels=3,
            ),
        ]
    blocks.append(
        Note(
            "An analytic companion to the bootstrap intervals, with videos (not frames) as the "
            "independent units: frames of one video are not independent draws, so a SE that "
            "counted them as such (DeLong) would understate it. micro: Obuchowski's "
            "clustered variance; within: the variance of a ratio of per-video sums; macro: the "
            "standard error of a mean over the mixed videos. The two models of a pair share "
            "the videos, so their estimates are correlated (ρ): the SE of the difference, "
            "√(SE_A² + SE_B² − 2·cov), is smaller than the two SEs suggest when ρ > 0 and "
            "larger when ρ < 0. p < 0.05 and a paired "
            "bootstrap interval excluding 0 usually agree; where they do not, the difference "
            "is borderline. n/a: fewer than two videos contribute, or the two models' terms "
            "are identical (the reason is in covariance.csv)."
        )
    )
    return Section("Clustered standard errors and model covariance", tuple(blocks))


def _pair_cell(row: dict[str, Any]) -> str:
    """``+0.0123 ± 0.0081 (ρ 0.61, p 0.128)``; n/a parts where undefined."""
    text = f"{num(row['difference'], signed=True)} ± {num(row['se_difference'])}"
    return text + f" (ρ {num(row['correlation'], 2)}, p {num(row['p_value'], 3)})"
