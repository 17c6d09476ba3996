"""Interval AP as the released VadCLIP evaluation computes it: proposals from frame scores,
greedy tIoU matching against events, binary and class-wise (docs/metrics.md, "Interval AP";
[inside] App. G.1, Tables 18–21).

Which events a video has is a setting of its own, the event rule (:data:`EVENT_RULES`):
``vadclip`` matches each annotated segment apart, end-exclusive on the annotated numbers
(:attr:`~vadscene.benchmark.frames.GroundTruth.segments`), as the released code does;
``merged`` matches the maximal runs of anomalous frame labels, which follow ``interval_end``
and join touching or overlapping segments.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd

from vadscene.audit.io.definitions import DefinitionScores, FrameClasses
from vadscene.benchmark.frames import GroundTruth, label_runs

EventRule = Literal["vadclip", "merged"]
EVENT_RULES: tuple[EventRule, ...] = ("vadclip", "merged")
"""``vadclip``: each annotated segment, [start, end) on its numbers; ``merged``: label runs."""

TIOU_GRID: tuple[float, ...] = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
"""tIoU thresholds of the ``interval_ap`` and ``class_wise_map`` tables."""

AVERAGE_TIOUS: tuple[float, ...] = (0.1, 0.2, 0.3, 0.4, 0.5)
"""The thresholds whose mean is the papers' "average" AP (the released VadCLIP list)."""

POPULATIONS: tuple[str, ...] = ("all", "anomalous")
"""``all`` test videos, or the ``anomalous`` (anomaly-containing) ones only."""

PREDICTIONS: tuple[str, ...] = ("original", "video_mean", "whole_video")
"""Proposals from the scores, proposals after video-mean replacement, one [0, T) per video."""

PROPOSAL_RANGE_SHARE = 0.6
"""Proposal threshold max − 0.6·(max − min) of the video's scores (VadCLIP's ``thr``)."""

CLASS_SCORE_WEIGHT = 0.7
"""Weight of the video's class score in a proposal's confidence (VadCLIP's 0.7)."""

MEAN_CLASS = "mean"
"""``class`` of the ``class_wise_map`` rows holding the mean over the classes (the mAP)."""

INTERVAL_AP_COLUMNS = ["model", "family", "population", "prediction", "tiou", "ap"]
CLASS_WISE_MAP_COLUMNS = ["model", "family", "population", "class", "tiou", "ap"]

Proposal = tuple[int, int, float]
Event = tuple[int, int]


def proposals(scores: np.ndarray) -> list[Proposal]:
    """One video's proposals ``(start, end, confidence)`` by the released VadCLIP rule.

    The video's class score c = mean of its ⌊T/16⌋ highest scores (no proposal when c ≤ 0 or
    undefined); threshold = max − 0.6·(max − min); proposals are the maximal runs of frames
    with score strictly above it lasting ≥ 2 frames, confidence = run maximum + 0.7·c. The
    released code then applies non-maximum suppression at IoU 0.6; maximal runs of one
    threshold never overlap (IoU 0), so it removes nothing and is not repeated here. A
    constant score sequence gives no proposal (its threshold equals the constant).
    """
    scores = np.asarray(scores, dtype=np.float64)
    top = scores.size // 16
    class_score = float(np.mean(np.sort(scores)[::-1][:top])) if top else float("nan")
    if not class_score > 0:
        return []
    high, low = scores.max(), scores.min()
    above = scores > high - (high - low) * PROPOSAL_RANGE_SHARE
    edges = np.diff(np.r_[0, above.astype(np.int8), 0])
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    keep = ends - starts >= 2
    starts, ends = starts[keep], ends[keep]
    if not starts.size:
        return []
    peaks = _run_maxima(scores, starts, ends)
    confidence = peaks + CLASS_SCORE_WEIGHT * class_score
    order = np.argsort(-confidence, kind="stable")
    return [(int(starts[i]), int(ends[i]), float(confidence[i])) for i in order]


def _run_maxima(scores: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """max of scores[s:e] for disjoint, increasing runs (one reduceat over their bounds)."""
    bounds = np.ravel(np.column_stack([starts, ends]))
    if bounds[-1] == scores.size:
        bounds = bounds[:-1]
    return np.maximum.reduceat(scores, bounds)[::2][: starts.size]


def interval_ap(
    predictions: Sequence[Sequence[Proposal]],
    events: Sequence[Sequence[Event]],
    thresholds: Sequence[float],
) -> np.ndarray:
    """Detection AP of interval predictions at each tIoU threshold, matched as the released
    VadCLIP evaluation does: predictions of all videos by confidence (highest first; ties in
    video order); each is a true positive when an unmatched event of its video overlaps it
    with tIoU ≥ the threshold (the best one is consumed; the first of equal ones);
    AP = Σ_k precision_k·tp_k / #events (docs/metrics.md, "Interval AP"). No prediction or
    no event gives 0. tIoU counts frames: |p ∩ g| / |p ∪ g| for [start, end) intervals.

    Matching only consumes events of the prediction's own video, so it runs video by video
    (in confidence order), with one tIoU matrix per video for every threshold.
    """
    grid = np.asarray(thresholds, dtype=np.float64)
    total = sum(len(video) for video in events)
    flat = [(v, s, e, c) for v, video in enumerate(predictions) for s, e, c in video]
    if not flat or total == 0:
        return np.zeros(grid.size)
    confidence = np.array([p[3] for p in flat])
    video_of = np.array([p[0] for p in flat])
    order = np.argsort(-confidence, kind="stable")
    hits = np.zeros((grid.size, len(flat)))
    for video in np.unique(video_of):
        if not events[video]:
            continue
        mine = order[video_of[order] == video]  # this video's predictions, in global order
        bounds = np.array([(flat[k][1], flat[k][2]) for k in mine], dtype=np.float64)
        truth = np.array(events[video], dtype=np.float64)
        overlap = np.clip(
            np.minimum(bounds[:, None, 1], truth[None, :, 1])
            - np.maximum(bounds[:, None, 0], truth[None, :, 0]),
            0,
            None,
        )
        union = (bounds[:, 1] - bounds[:, 0])[:, None] + (truth[:, 1] - truth[:, 0])[None] - overlap
        ious = overlap / union
        for t, threshold in enumerate(grid):
            free = np.ones(truth.shape[0], dtype=bool)
            for row in np.flatnonzero((ious >= threshold).any(1)):
                candidates = np.where(free & (ious[row] >= threshold), ious[row], -1.0)
                best = int(np.argmax(candidates))
                if candidates[best] >= 0:
                    hits[t, mine[row]] = 1.0
                    free[best] = False
    hits = hits[:, order]
    precision = np.cumsum(hits, axis=1) / np.arange(1, len(flat) + 1)
    aps: np.ndarray = np.sum(precision * hits, axis=1) / total
    return aps


def video_events(ground_truth: GroundTruth, rule: EventRule) -> list[list[Event]]:
    """Each video's events under the event rule ``rule`` (module doc)."""
    if rule not in EVENT_RULES:
        raise ValueError(f"event rule {rule!r}: expected one of {', '.join(EVENT_RULES)}")
    chosen = (
        ground_truth.segments
        if rule == "vadclip" and ground_truth.segments is not None
        else label_runs(ground_truth.labels, ground_truth.offsets)
    )
    return [list(video) for video in chosen]


def interval_ap_rows(
    scores: np.ndarray, offsets: np.ndarray, events: Sequence[Sequence[Event]], a: np.ndarray
) -> list[dict]:
    """Binary interval AP at every threshold of :data:`TIOU_GRID` for each population
    (all videos; anomaly-containing ones, a_v > 0) and each prediction of
    :data:`PREDICTIONS` ([inside] Tables 18–20): rows population, prediction, tiou, ap.

    ``original``: proposals from the scores; ``video_mean``: proposals after replacing each
    video's scores by their mean (none: a constant has no run above its threshold);
    ``whole_video``: one interval [0, T) per video with confidence its mean score. Frames are
    the time unit.
    """
    pieces = [scores[offsets[i] : offsets[i + 1]] for i in range(offsets.size - 1)]
    predicted = {
        "original": [proposals(p) for p in pieces],
        "video_mean": [proposals(np.full(p.size, p.mean())) for p in pieces],
        "whole_video": [[(0, p.size, float(p.mean()))] for p in pieces],
    }
    kept = {"all": list(range(len(pieces))), "anomalous": np.flatnonzero(a > 0).tolist()}
    rows = []
    for population in POPULATIONS:
        videos = kept[population]
        for prediction in PREDICTIONS:
            aps = interval_ap(
                [predicted[prediction][v] for v in videos], [events[v] for v in videos], TIOU_GRID
            )
            rows += [
                {"population": population, "prediction": prediction, "tiou": t, "ap": float(ap)}
                for t, ap in zip(TIOU_GRID, aps, strict=True)
            ]
    return rows


def average_ap(table: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """Per group of ``keys``: the papers' average AP (mean over :data:`AVERAGE_TIOUS`) and the
    AP at tIoU 0.5, from a long ``interval_ap`` or ``class_wise_map`` table."""
    keys = list(keys)
    rows = table[table["tiou"].round(6).isin(AVERAGE_TIOUS)]
    average = rows.groupby(keys, sort=False)["ap"].mean().rename("average")
    at_05 = rows[rows["tiou"].round(6) == 0.5].set_index(keys)["ap"].rename("at_05")
    return pd.concat([average, at_05], axis=1).reset_index()


FURTHER_INTERVAL_COLUMNS = {
    "original": ("interval_ap", "interval_ap_at_05"),
    "video_mean": ("interval_ap_video_mean", "interval_ap_video_mean_at_05"),
    "whole_video": ("interval_ap_whole_video", "interval_ap_whole_video_at_05"),
}
"""The ``further`` table's interval AP columns: all videos, average and at tIoU 0.5."""


def further_interval_columns(rows: list[dict]) -> dict[str, float]:
    """The ``further`` table's interval AP cells from :func:`interval_ap_rows`' rows (none
    without rows: interval AP not asked for)."""
    if not rows:
        return {}
    averaged = average_ap(pd.DataFrame(rows), ["population", "prediction"])
    cells: dict[str, float] = {}
    for row in averaged[averaged["population"] == "all"].itertuples():
        average, at_05 = FURTHER_INTERVAL_COLUMNS[str(row.prediction)]
        cells[average], cells[at_05] = float(row.average), float(row.at_05)
    return cells


def class_wise_map(
    ground_truth: GroundTruth,
    models: Sequence[DefinitionScores],
    classes: FrameClasses,
    rule: EventRule,
) -> pd.DataFrame:
    """Class-wise interval mAP of definition-scored models ([inside] Table 21; docs/metrics.md,
    "Interval AP"): for each class c, proposals from the model's scores of definition c
    (:func:`proposals`, per video), matched against the events of class c; mAP = the mean
    over the classes. At every threshold of :data:`TIOU_GRID`, on all videos and on the
    anomaly-containing ones.

    Events of class c: under ``vadclip`` the annotated segments holding a frame of class c
    (:func:`class_events`), under ``merged`` the maximal runs of frames of class c. The
    classes are those of ``classes``, plus the normal category when the models score a
    definition of that name: its events are the whole videos of that category, [0, T) — the
    released XD-Violence evaluation's class "A".
    """
    offsets = ground_truth.offsets
    normal = ground_truth.normal_category
    names = list(classes.classes)
    if all(normal in m.definitions for m in models) and models and normal not in names:
        names.append(normal)
    events = {c: class_events(ground_truth, classes, c, rule) for c in names}
    containing = np.flatnonzero(ground_truth.anomalous_counts() > 0)
    kept = {"all": list(range(ground_truth.n_videos)), "anomalous": containing.tolist()}
    rows = []
    for model in models:
        for name in names:
            column = model.of(name)
            predicted = [
                proposals(column[offsets[i] : offsets[i + 1]]) for i in range(ground_truth.n_videos)
            ]
            for population in POPULATIONS:
                videos = kept[population]
                aps = interval_ap(
                    [predicted[v] for v in videos], [events[name][v] for v in videos], TIOU_GRID
                )
                rows += [
                    {
                        "model": model.name,
                        "family": model.family,
                        "population": population,
                        "class": name,
                        "tiou": t,
                        "ap": float(ap),
                    }
                    for t, ap in zip(TIOU_GRID, aps, strict=True)
                ]
    table = pd.DataFrame(rows, columns=CLASS_WISE_MAP_COLUMNS)
    if table.empty:
        return table
    means = (
        table.groupby(["model", "family", "population", "tiou"], sort=False, dropna=False)["ap"]
        .mean()
        .reset_index()
        .assign(**{"class": MEAN_CLASS})
    )
    return pd.concat([table, means[CLASS_WISE_MAP_COLUMNS]], ignore_index=True)


def class_events(
    ground_truth: GroundTruth, classes: FrameClasses, name: str, rule: EventRule
) -> list[list[Event]]:
    """Each video's events of class ``name`` under ``rule`` (see :func:`class_wise_map`).

    The normal category's events are its whole videos. Otherwise, ``vadclip``: the video's
    annotated segments in which some frame's class set holds ``name``; ``merged``: the
    maximal runs of frames whose class set holds ``name``.
    """
    offsets = ground_truth.offsets
    if name == ground_truth.normal_category and name not in classes.classes:
        return [
            [(0, int(ground_truth.frame_counts[i]))] if ground_truth.categories[i] == name else []
            for i in range(ground_truth.n_videos)
        ]
    holding = np.array([name in s for s in classes.class_sets] + [False])
    member = holding[classes.codes]  # code −1 (normal frame) reads the final False
    if rule == "merged":
        return [list(video) for video in label_runs(member, offsets)]
    segments = video_events(ground_truth, "vadclip")
    out: list[list[Event]] = []
    for i, video in enumerate(segments):
        frames = member[offsets[i] : offsets[i + 1]]
        out.append([(s, e) for s, e in video if frames[s : min(e, frames.size)].any()])
    return out


EVENT_RULE_TEXT = {
    "vadclip": "vadclip: each annotated segment is its own event, read [start, end) on the "
    "annotated numbers, touching or overlapping segments kept apart (the released VadCLIP "
    "evaluation)",
    "merged": "merged: the events are the maximal runs of anomalous frame labels (they follow "
    "interval_end and join touching or overlapping segments)",
}


def conventions(ground_truth: GroundTruth, rule: EventRule) -> dict[str, str]:
    """How interval AP was computed, for the report's conventions."""
    return {
        "event_rule": EVENT_RULE_TEXT[rule],
        "depends_on": "interval AP depends on the event rule; interval_end "
        f"({ground_truth.conventions.get('interval_end', 'not given')}) sets the frame labels "
        "of every AUROC"
        + (" and the merged events" if rule == "merged" else ", not the vadclip events"),
        "segments": ground_truth.conventions.get(
            "segments", "runs of anomalous frame labels (ground truth built in Python)"
        ),
        "proposals": "runs of frames scoring strictly above max − 0.6·(max − min) of the "
        "video's scores, at least 2 frames, confidence = run maximum + 0.7·(mean of the "
        "⌊T/16⌋ highest scores); none when that mean is ≤ 0",
        "tiou": "AP at tIoU 0.1, 0.2, …, 0.9; average = mean over 0.1–0.5 (the released list)",
        "populations": "all: every test video; anomalous: anomaly-containing videos only "
        "(a_v > 0), their predictions and events",
        "class_wise": "per class, proposals from the scores of the definition of that name "
        "against that class's events; mAP = mean over the classes; the normal category is "
        "a class (events: its whole videos) when every model scores a definition of its name",
    }
