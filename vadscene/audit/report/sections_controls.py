"""The report's sections on looking inside each video beyond the per-model controls: the
run-level retention summaries ([inside] Tables 3, 10, 11) and the video-level AUROC
([inside] §6).

Each builder takes an :class:`~vadscene.audit.compute.result.AuditResult` and returns its
:class:`~vadscene.audit.report.document.Section`, or ``None`` when the table it reads is empty.
"""

from __future__ import annotations

import pandas as pd

from vadscene.audit.compute.result import AuditResult
from vadscene.audit.report import figures
from vadscene.audit.report.document import Note, Section, Table
from vadscene.audit.report.formatting import ci, count, pct, plain

_RETENTION_NAMES = {
    "retention_mean": "R_mean (video mean)",
    "ap_retention": "AP retention (video mean)",
    "retention_permuted": "R_perm (within-video permutation)",
}
"""The summarised retentions of ``controls``, in the report's order."""

_VIDEO_SCORE_NAMES = {"max": "max of its frame scores", "mean": "mean of its frame scores"}


def retention_summary_section(result: AuditResult) -> Section | None:
    """Section "Run-level retention summary": per retention and group of models, the median,
    minimum and threshold counts over the defined results."""
    summary = result.retention_summary
    if summary.empty:
        return None
    known = summary[summary["retention"].isin(list(_RETENTION_NAMES))]
    rows = known.sort_values(
        "retention", key=lambda c: c.map(list(_RETENTION_NAMES).index), kind="stable"
    )
    table = pd.DataFrame(
        {
            "retention": rows["retention"].map(_RETENTION_NAMES),
            "models": [
                "all models" if f == "all" else f"family {plain(f)}" for f in rows["family"]
            ],
            "n": rows["results"].map(count),
            "defined n": rows["defined"].map(count),
            "median": rows["median"].map(pct),
            "minimum": rows["minimum"].map(pct),
            "increases": [f"{k}/{d}" for k, d in rows[["increases", "defined"]].values],
            "≥ 85 %": [f"{k}/{d}" for k, d in rows[["at_least_85", "defined"]].values],
            "≥ 90 %": [f"{k}/{d}" for k, d in rows[["at_least_90", "defined"]].values],
        }
    )
    return Section(
        "Run-level retention summary",
        (
            Table(table, labels=2),
            Note(
                "Each audited model is one result, as each run or released output is in the "
                "papers' Tables 3, 10 and 11. n counts the results; defined n those whose "
                "original is above chance (micro AUROC above 0.5, AP above the prevalence), "
                "the only ones a retention exists for. Median, minimum, the increases (the "
                "replaced value above the original, a retention over 100 %) and the counts "
                "retaining at least 85 % and 90 % of the margin are over the defined results "
                "only, written k/defined n. Models are grouped by family; a model without one "
                "counts under all models only."
            ),
        ),
    )


def video_level_section(result: AuditResult) -> Section | None:
    """Section "Video-level AUROC": one score per video against the video's label."""
    video_level = result.video_level
    if video_level.empty:
        return None
    wide = video_level.assign(
        cell=[ci(*r) for r in video_level[["auroc", "ci_low", "ci_high"]].values]
    ).pivot(index="model", columns="video_score", values="cell")
    families = video_level.groupby("model", sort=False)["family"].first()
    models = list(dict.fromkeys(video_level["model"]))
    scores = [s for s in _VIDEO_SCORE_NAMES if s in wide.columns]
    table = pd.DataFrame(
        {
            "model": models,
            "family": [plain(families[m]) for m in models],
            **{f"video score = {s}": [plain(wide.at[m, s]) for m in models] for s in scores},
        }
    )
    return Section(
        "Video-level AUROC",
        (
            Table(table, labels=2),
            Note(
                "Each video is one example: its label is anomalous when it holds at least one "
                "anomalous frame, its score the max (or the mean) of its frame scores. This is "
                "the video-level triage that pooled frame AUROC mostly rewards; [inside] §6 "
                "recommends reporting it beside the frame metrics, so that a high micro AUROC "
                "is not read as localisation. "
                + figures.interval_words(
                    result,
                    "Brackets: 95 % percentile interval over the same paired video-bootstrap "
                    "replicates as the frame AUROCs.",
                )
            ),
        ),
    )
