"""The report's interval AP sections: binary interval AP over the tIoU grid for both
populations and the three predictions, and the class-wise mAP (docs/metrics.md, "Interval
AP"; [inside] Tables 18–21).

Each builder takes an :class:`~vadscene.audit.compute.result.AuditResult` and returns its
:class:`~vadscene.audit.report.document.Section`, or ``None`` when the table it reads is empty.
"""

from __future__ import annotations

import pandas as pd

from vadscene.audit.compute.intervals import MEAN_CLASS, TIOU_GRID, average_ap
from vadscene.audit.compute.result import AuditResult
from vadscene.audit.report.document import Block, Note, Section, Table
from vadscene.audit.report.formatting import num, plain

_POPULATION = {"all": "all videos", "anomalous": "anomaly-containing videos"}
_PREDICTION = {
    "original": "proposals from the scores",
    "video_mean": "proposals after video-mean replacement",
    "whole_video": "one whole-video interval per video",
}


def interval_ap_section(result: AuditResult) -> Section | None:
    """Section "Interval AP": one row per model × population × prediction, the papers'
    average (tIoU 0.1–0.5) and the AP at every tIoU 0.1–0.9, then the class-wise mAP."""
    table = result.interval_ap
    if table.empty:
        return None
    keys = ["model", "population", "prediction"]
    blocks: list[Block] = [
        Table(_grid(table, keys, {"population": _POPULATION, "prediction": _PREDICTION}), 3),
        Note(
            "Values are AP in % (two decimals, as the papers print them). Interval AP scores "
            "intervals, not frames. Each video's "
            "proposals are the runs of frames scoring above max − 0.6·(max − min) of its "
            "scores (at least 2 frames), ranked over all videos by run maximum + 0.7·the "
            "video's top-1/16 mean; a proposal counts when it overlaps an unmatched event of "
            "its video by at least the tIoU. Average = mean AP over tIoU 0.1–0.5 (the released "
            "VadCLIP list). Interval AP depends on the event rule: "
            f"{_rule(result)}. Video-mean replacement leaves no proposal, so its AP is 0; "
            "whole-video intervals show how much AP needs no localisation within a video. "
            "On anomaly-containing videos the normal videos' false positives are gone."
        ),
    ]
    class_wise = result.class_wise_map
    if not class_wise.empty:
        named = class_wise.assign(
            **{"class": class_wise["class"].replace({MEAN_CLASS: "mAP (mean over classes)"})}
        )
        blocks += [
            Table(_grid(named, ["model", "population", "class"], {"population": _POPULATION}), 3),
            Note(
                "Class-wise AP (in %) ranks each class's proposals, taken from the "
                "scores of the definition of that name, against that class's events only; the "
                "mAP row is the mean over the classes listed. The normal category is a class "
                "when the definition scores name it; its events are its whole videos (the "
                "released XD-Violence evaluation; the released UCF-Crime one never matches "
                "its Normal class, which adds an AP of 0 to its 14-class mean)."
            ),
        ]
    return Section("Interval AP", tuple(blocks))


def _grid(table: pd.DataFrame, keys: list[str], names: dict[str, dict[str, str]]) -> pd.DataFrame:
    """Rows ``keys``; columns the average AP and the AP at each tIoU, in % (two decimals)."""
    wide = table.pivot_table(index=keys, columns="tiou", values="ap", sort=False)
    averaged = average_ap(table, keys).set_index(keys)["average"]
    cells = pd.DataFrame(
        {
            "average 0.1–0.5": averaged.reindex(wide.index).map(_percent),
            **{f"tIoU {t:.1f}": wide[t].map(_percent) for t in TIOU_GRID if t in wide.columns},
        },
        index=wide.index,
    ).reset_index()
    for column, labels in names.items():
        cells[column] = cells[column].map(lambda value, labels=labels: labels.get(value, value))
    return cells


def _percent(fraction: float) -> str:
    return num(100 * fraction, 2)


def _rule(result: AuditResult) -> str:
    stated = result.conventions.get("interval_ap", {})
    return plain(stated.get("event_rule")) if isinstance(stated, dict) else plain(stated)
