"""Interval AP (binary and class-wise) against a transcription of the released VadCLIP
evaluation (nwpu-zxr/VadCLIP src/utils/ucf_detectionMAP.py, getLocMAP), on random data, on
hand-worked cases and on the real UCF-Crime ground truth with VadCLIP's own segment files."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from helpers import realdata_dir
from hypothesis import given, settings
from hypothesis import strategies as st

from vadscene.audit import run_audit
from vadscene.audit.compute.intervals import (
    AVERAGE_TIOUS,
    MEAN_CLASS,
    TIOU_GRID,
    class_wise_map,
    interval_ap_rows,
    video_events,
)
from vadscene.audit.io.definitions import DefinitionScores, classes_from_categories
from vadscene.audit.io.scores import ModelScores
from vadscene.benchmark.frames import GroundTruth
from vadscene.benchmark.ground_truth import load_ground_truth

TOL = 1e-12


def released_loc_map(
    predictions: list[np.ndarray],
    th: float,
    gtsegments: list[list[tuple[int, int]]],
    gtlabels: list[list[str]],
    classlist: list[str],
) -> list[float] | None:
    """getLocMAP transcribed loop by loop, per class AP as fractions (the released code
    returns 100 × their mean). ``predictions``: one (T, C) array per video, columns in
    ``classlist`` order. None where the released code returns 0 for the whole mAP because a
    class has no proposal at all (the tests avoid that case)."""
    predictions_mod, c_score = [], []
    for p in predictions:
        pp = -p
        pp = -np.sort(pp, axis=0)
        c_s = np.mean(pp[: int(np.shape(pp)[0] / 16), :], axis=0)
        c_score.append(c_s)
        predictions_mod.append(p * (c_s > 0.0))
    ap = []
    for c in range(len(classlist)):
        segment_predict = []
        for i, prediction in enumerate(predictions_mod):
            tmp = prediction[:, c]
            found = []
            threshold = np.max(tmp) - (np.max(tmp) - np.min(tmp)) * 0.6
            vid_pred = np.concatenate([np.zeros(1), (tmp > threshold).astype("float32"), [0]])
            diff = [vid_pred[k] - vid_pred[k - 1] for k in range(1, len(vid_pred))]
            s = [k for k, item in enumerate(diff) if item == 1]
            e = [k for k, item in enumerate(diff) if item == -1]
            for j in range(len(s)):
                if e[j] - s[j] >= 2:
                    found.append([i, s[j], e[j], np.max(tmp[s[j] : e[j]]) + 0.7 * c_score[i][c]])
            found.sort(key=lambda q: -q[3])
            kept: list[list] = []
            for candidate in found:  # nms at 0.6, best first
                if all(
                    max(0, min(candidate[2], k[2]) - max(candidate[1], k[1]))
                    / (
                        (candidate[2] - candidate[1])
                        + (k[2] - k[1])
                        - max(0, min(candidate[2], k[2]) - max(candidate[1], k[1]))
                    )
                    <= 0.6
                    for k in kept
                ):
                    kept.append(candidate)
            segment_predict.extend(kept)
        if not segment_predict:
            return None
        segment_predict.sort(key=lambda q: -q[3])
        segment_gt = [
            [i, gtsegments[i][j][0], gtsegments[i][j][1]]
            for i in range(len(gtsegments))
            for j in range(len(gtsegments[i]))
            if gtlabels[i][j] == classlist[c]
        ]
        gtpos = len(segment_gt)
        tp = []
        for pred in segment_predict:
            flag, best_iou, best_j = 0.0, 0.0, -1
            for j, gt in enumerate(segment_gt):
                if pred[0] == gt[0]:
                    # |range ∩ range| and |range ∪ range| of the released set() computation
                    inter = max(0, min(int(gt[2]), int(pred[2])) - max(int(gt[1]), int(pred[1])))
                    union = (int(gt[2]) - int(gt[1])) + (int(pred[2]) - int(pred[1])) - inter
                    iou = inter / union
                    if iou >= th:
                        flag = 1.0
                        if iou > best_iou:
                            best_iou, best_j = iou, j
            if flag > 0:
                del segment_gt[best_j]
            tp.append(flag)
        tp_c, fp_c = np.cumsum(tp), np.cumsum([1.0 - f for f in tp])
        ap.append(0.0 if sum(tp) == 0 else float(np.sum(tp_c / (fp_c + tp_c) * tp) / gtpos))
    return ap


def label_runs_of(labels: np.ndarray) -> list[tuple[int, int]]:
    """Maximal runs of True by a plain loop, [start, end)."""
    runs, start = [], None
    for k, flag in enumerate([*labels.tolist(), False]):
        if flag and start is None:
            start = k
        if not flag and start is not None:
            runs.append((start, k))
            start = None
    return runs


def random_benchmark(seed: int, videos: int = 8, classes: tuple[str, ...] = ("Abuse", "Fight")):
    """Anomalous videos first (as the released lists order them), then normal ones; segments
    drawn at random, some touching or overlapping; smooth continuous scores per class."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(48, 140, videos)
    n_anomalous = videos // 2
    categories, segments, labels = [], [], []
    for i, n in enumerate(counts):
        y = np.zeros(n, bool)
        video_segments: list[tuple[int, int]] = []
        if i < n_anomalous:
            categories.append(classes[i % len(classes)])
            start = int(rng.integers(0, n // 2))
            for _ in range(int(rng.integers(1, 4))):
                end = min(int(n), start + int(rng.integers(4, 25)))
                video_segments.append((start, end))
                y[start:end] = True
                # the next one touches (0), overlaps (< 0) or leaves a gap (> 0)
                start = max(0, min(int(n) - 2, end + int(rng.integers(-3, 6))))
        else:
            categories.append("Normal")
        segments.append(video_segments)
        labels.append(y)
    y = np.concatenate(labels)
    offsets = np.r_[0, np.cumsum(counts)].astype(np.int64)
    width = 1 + len(classes)
    noise = rng.random((y.size, width))
    kernel = np.ones(7) / 7
    scores = np.column_stack(
        [np.convolve(noise[:, k] + 1.5 * y, kernel, "same") for k in range(width)]
    )
    gt = GroundTruth(
        video_ids=tuple(f"v{i}" for i in range(videos)),
        categories=tuple(categories),
        offsets=offsets,
        labels=y,
        source="random",
        segments=tuple(tuple(s) for s in segments),
    )
    return gt, scores, segments


def pieces_of(column: np.ndarray, offsets: np.ndarray) -> list[np.ndarray]:
    return [column[offsets[i] : offsets[i + 1]] for i in range(offsets.size - 1)]


def released_binary(
    scores: np.ndarray,
    gt: GroundTruth,
    segments: list[list[tuple[int, int]]],
    videos: list[int],
) -> list[float]:
    """The scalar adaptation of getLocMAP ([inside] App. G.1): one class, every anomaly
    segment an event of it, normal videos' [0, T) labelled 'A' and so never matched."""
    pieces = pieces_of(scores, gt.offsets)
    labels = [["anomaly"] * len(s) for s in segments]
    out = []
    for th in TIOU_GRID:
        ap = released_loc_map(
            [pieces[v][:, None] for v in videos], th, segments, labels, ["anomaly"]
        )
        assert ap is not None
        out.append(ap[0])
    return out


def released_whole_video(
    predictions: list[list[tuple[int, int, float]]],
    segments: list[list[tuple[int, int]]],
    th: float,
) -> float:
    """The released matching and AP for intervals submitted directly (no proposal step):
    by confidence, each takes the best unmatched event of its video with tIoU ≥ th."""
    flat = sorted(
        ((c, v, s, e) for v, video in enumerate(predictions) for s, e, c in video),
        key=lambda p: -p[0],
    )
    free = [list(video) for video in segments]
    tp = []
    for _, v, s, e in flat:
        ious = [
            max(0, min(e, ge) - max(s, gs))
            / ((e - s) + (ge - gs) - max(0, min(e, ge) - max(s, gs)))
            for gs, ge in free[v]
        ]
        best = max(range(len(ious)), key=lambda j: ious[j], default=None)
        if best is not None and ious[best] >= th:
            del free[v][best]
            tp.append(1.0)
        else:
            tp.append(0.0)
    total = sum(len(video) for video in segments)
    hits = np.array(tp)
    precision = np.cumsum(hits) / np.arange(1, hits.size + 1)
    return float(np.sum(precision * hits) / total)


def table_values(rows: list[dict], population: str, prediction: str) -> list[float]:
    table = pd.DataFrame(rows)
    chosen = table[(table["population"] == population) & (table["prediction"] == prediction)]
    assert chosen["tiou"].tolist() == list(TIOU_GRID)
    return chosen["ap"].tolist()


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_binary_interval_ap_matches_the_released_procedure(seed: int) -> None:
    """Both event rules, both populations, every tIoU: equal to the transcription fed the
    annotated segments (vadclip) or the label runs (merged)."""
    gt, scores, segments = random_benchmark(seed)
    column = scores[:, 1]
    a = gt.anomalous_counts()
    runs = [label_runs_of(p) for p in pieces_of(gt.labels, gt.offsets)]
    for rule, gt_segments in (("vadclip", segments), ("merged", runs)):
        rows = interval_ap_rows(column, gt.offsets, video_events(gt, rule), a)
        every = list(range(gt.n_videos))
        assert table_values(rows, "all", "original") == pytest.approx(
            released_binary(column, gt, gt_segments, every), abs=TOL
        )
        # excludeNormal: the released code keeps the predictions of the anomalous videos
        # (listed first) and matches them against the same events
        anomalous = [v for v in every if a[v] > 0]
        assert anomalous == list(range(len(anomalous)))
        assert table_values(rows, "anomalous", "original") == pytest.approx(
            released_binary(column, gt, gt_segments, anomalous), abs=TOL
        )
        assert table_values(rows, "all", "video_mean") == [0.0] * len(TIOU_GRID)


def test_touching_segments_hand_worked() -> None:
    """Segments [10, 20) and [20, 30) of one 60-frame video, one proposal [10, 30): under
    vadclip two events, the proposal matches one of them with tIoU 10/20 = 0.5, so AP =
    1/2 for tIoU ≤ 0.5 and 0 above; merged, one event [10, 30) matched exactly: AP = 1."""
    labels = np.zeros(60, bool)
    labels[10:30] = True
    gt = GroundTruth(
        ("v",), ("Abuse",), np.array([0, 60]), labels, "hand", segments=(((10, 20), (20, 30)),)
    )
    scores = np.where(labels, 1.0, 0.0)  # threshold 0.4: the one run [10, 30)
    a = gt.anomalous_counts()
    vadclip = table_values(
        interval_ap_rows(scores, gt.offsets, video_events(gt, "vadclip"), a), "all", "original"
    )
    merged = table_values(
        interval_ap_rows(scores, gt.offsets, video_events(gt, "merged"), a), "all", "original"
    )
    assert vadclip == [0.5] * 5 + [0.0] * 4
    assert merged == [1.0] * 9


def test_whole_video_hand_worked() -> None:
    """Two videos of 40 frames: v0 holds event [0, 20), v1 none. Whole-video intervals [0, 40)
    with confidences mean(v0) and mean(v1): tIoU 20/40 = 0.5 with the event. When v1's mean
    is higher, v1's false positive ranks first: AP = (1/2)/1 at tIoU ≤ 0.5; on the
    anomaly-containing videos only v0's interval is left: AP = 1 there."""
    labels = np.r_[np.ones(20, bool), np.zeros(60, bool)]
    gt = GroundTruth(("v0", "v1"), ("Abuse", "Normal"), np.array([0, 40, 80]), labels, "hand")
    scores = np.r_[np.full(40, 0.2), np.full(40, 0.3)]
    rows = interval_ap_rows(scores, gt.offsets, video_events(gt, "vadclip"), gt.anomalous_counts())
    assert table_values(rows, "all", "whole_video") == [0.5] * 5 + [0.0] * 4
    assert table_values(rows, "anomalous", "whole_video") == [1.0] * 5 + [0.0] * 4


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_class_wise_map_matches_the_released_procedure(seed: int) -> None:
    """Classes from the video categories, a definition per class plus 'Normal' (whose events
    are the whole normal videos, as the released XD-Violence evaluation's class 'A'): per
    class AP and mAP, both rules, both populations, against getLocMAP."""
    classes = ("Abuse", "Fight")
    gt, scores, segments = random_benchmark(seed, videos=8, classes=classes)
    definitions = ("Normal", *classes)
    model = DefinitionScores("m", definitions, scores, "random")
    frame_classes = classes_from_categories(gt)
    pieces = pieces_of(scores, gt.offsets)
    runs = [label_runs_of(p) for p in pieces_of(gt.labels, gt.offsets)]
    for rule, gt_segments in (("vadclip", segments), ("merged", runs)):
        table = class_wise_map(gt, [model], frame_classes, rule)
        labels = [[gt.categories[i]] * len(s) for i, s in enumerate(gt_segments)]
        released_segments = [
            s if gt.categories[i] != "Normal" else [(0, int(gt.frame_counts[i]))]
            for i, s in enumerate(gt_segments)
        ]
        labels = [
            lab if gt.categories[i] != "Normal" else ["Normal"] for i, lab in enumerate(labels)
        ]
        every = list(range(gt.n_videos))
        anomalous = [v for v in every if gt.anomalous_counts()[v] > 0]
        for population, videos in (("all", every), ("anomalous", anomalous)):
            for th in TIOU_GRID:
                expected = released_loc_map(
                    [pieces[v] for v in videos], th, released_segments, labels, list(definitions)
                )
                assert expected is not None
                got = table[(table["population"] == population) & (table["tiou"] == th)]
                by_class = dict(zip(got["class"], got["ap"], strict=True))
                for name, value in zip(definitions, expected, strict=True):
                    assert by_class[name] == pytest.approx(value, abs=TOL)
                assert by_class[MEAN_CLASS] == pytest.approx(np.mean(expected), abs=TOL)


def test_interval_ap_through_the_cli(tmp_path) -> None:
    """--interval-ap --interval-ap-events: the JSON's interval_ap rows and further columns
    follow the chosen rule (the transcription on the annotated segments or on the label
    runs); the conventions state the rule and that interval AP depends on it."""
    from vadscene.cli import run

    gt, scores, segments = random_benchmark(11, videos=6)
    column = scores[:, 1]
    lines = []
    for i, video in enumerate(gt.video_ids):
        numbers = " ".join(f"{s} {e}" for s, e in segments[i]) or "-1 -1"
        lines.append(f"{video} {int(gt.frame_counts[i])} {gt.categories[i]} {numbers}")
    truth = tmp_path / "gt.txt"
    truth.write_text("\n".join(lines) + "\n")
    frame = np.concatenate([np.arange(n) for n in gt.frame_counts])
    model = tmp_path / "m.csv"
    pd.DataFrame(
        {"video": np.repeat(gt.video_ids, gt.frame_counts), "frame": frame, "score": column}
    ).to_csv(model, index=False)
    runs = [label_runs_of(p) for p in pieces_of(gt.labels, gt.offsets)]
    every = list(range(gt.n_videos))
    for rule, gt_segments in (("vadclip", segments), ("merged", runs)):
        out = tmp_path / rule
        args = ["audit", "--gt", str(truth), "--scores", f"m={model}", "--bootstrap", "0"]
        assert run([*args, "--interval-ap", "--interval-ap-events", rule, "--out", str(out)]) == 0
        report = json.loads((out / "report.json").read_text())
        expected = released_binary(column, gt, gt_segments, every)
        rows = [r for r in report["interval_ap"] if r["population"] == "all"]
        original = [r["ap"] for r in rows if r["prediction"] == "original"]
        assert original == pytest.approx(expected, abs=TOL)
        average = np.mean(
            [e for t, e in zip(TIOU_GRID, expected, strict=True) if t in AVERAGE_TIOUS]
        )
        assert report["further"][0]["interval_ap"] == pytest.approx(average, abs=TOL)
        assert report["conventions"]["interval_ap"]["event_rule"].startswith(rule)
        # the Markdown shows AP@0.5 of all three predictions, and the grid in its own section
        markdown = (out / "report.md").read_text()
        pieces = pieces_of(column, gt.offsets)
        whole = [[(0, p.size, float(p.mean()))] for p in pieces]
        whole_at_05 = released_whole_video(whole, gt_segments, 0.5)
        whole_rows = [r["ap"] for r in rows if r["prediction"] == "whole_video"]
        expected_whole = [released_whole_video(whole, gt_segments, t) for t in TIOU_GRID]
        assert whole_rows == pytest.approx(expected_whole, abs=TOL)
        assert expected_whole[0] > 0
        lines = markdown.splitlines()
        header = next(i for i, line in enumerate(lines) if line.startswith("| model | AUCA |"))
        row = lines[header + 2]  # the further table's one model, after the rule line
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert cells[-1] == f"{whole_at_05:.4f}"  # AP@0.5 (whole video)
        assert cells[-3] == "0.0000"  # AP@0.5 (video mean): no proposal
        assert "| AP@0.5 (video mean) |" in markdown and "| AP@0.5 (whole video) |" in markdown
        assert f"| m | all videos | proposals from the scores | {100 * average:.2f} |" in markdown
        assert "depends on the event rule" in report["conventions"]["interval_ap"]["depends_on"]
    assert run([*args, "--interval-ap-events", "nope", "--out", str(tmp_path / "x")]) != 0


@pytest.mark.realdata
def test_vadclip_rule_on_real_ucf_crime_ground_truth() -> None:
    """Real UCF-Crime: the loader's segments are VadCLIP's own gt_segment_ucf.npy (anomaly
    segments, as annotated), and interval AP under vadclip equals the transcription fed
    those files, while inclusive label runs (merged) give another value."""
    root = realdata_dir()
    counts = load_ground_truth(root / "urdmu" / "UCF_Annotation.txt")
    frame_counts = dict(zip(counts.video_ids, counts.frame_counts.tolist(), strict=True))
    gt = load_ground_truth(
        root / "vadclip" / "Temporal_Anomaly_Annotation.txt",
        interval_end="inclusive",
        frame_counts=frame_counts,
    )
    released_segments = np.load(root / "vadclip" / "gt_segment_ucf.npy", allow_pickle=True)
    released_labels = np.load(root / "vadclip" / "gt_label_ucf.npy", allow_pickle=True)
    listing = pd.read_csv(root / "vadclip" / "ucf_CLIP_rgbtest.csv")
    # the released list names one crop per video (…_x264__5.npy); its order is the npy files'
    names = [path.split("/")[-1][:-7] for path in listing["path"]]
    assert len(names) == len(released_segments) == gt.n_videos
    position = {video: i for i, video in enumerate(gt.video_ids)}
    order = [position[name] for name in names]
    anomaly_segments = [
        [(int(s), int(e)) for (s, e), label in zip(segs, labels, strict=True) if label != "A"]
        for segs, labels in zip(released_segments, released_labels, strict=True)
    ]
    assert [list(gt.segments[v]) for v in order] == anomaly_segments

    rng = np.random.default_rng(26)
    scores = np.concatenate(
        [
            np.convolve(rng.random(n), np.ones(min(n, 101)) / min(n, 101), "same")
            + 0.05 * gt.labels_of(video)
            for video, n in zip(gt.video_ids, gt.frame_counts.tolist(), strict=True)
        ]
    )
    pieces = pieces_of(scores, gt.offsets)
    labels = [["anomaly"] * len(s) for s in anomaly_segments]
    expected = []
    for th in TIOU_GRID:
        ap = released_loc_map(
            [pieces[v][:, None] for v in order], th, anomaly_segments, labels, ["anomaly"]
        )
        assert ap is not None
        expected.append(ap[0])
    a = gt.anomalous_counts()
    vadclip = table_values(
        interval_ap_rows(scores, gt.offsets, video_events(gt, "vadclip"), a), "all", "original"
    )
    merged = table_values(
        interval_ap_rows(scores, gt.offsets, video_events(gt, "merged"), a), "all", "original"
    )
    assert vadclip == pytest.approx(expected, abs=TOL)
    assert expected[0] > 0
    # inclusive label runs are one frame longer than VadCLIP's segments: another AP at 0.2
    assert merged[1] != pytest.approx(vadclip[1], abs=1e-6)


def test_run_audit_refuses_an_unknown_event_rule() -> None:
    gt, scores, _ = random_benchmark(1, videos=4)
    from vadscene.benchmark.frames import AuditInputError

    with pytest.raises(AuditInputError, match="interval_ap_events 'runs'"):
        run_audit(
            gt,
            [ModelScores("m", scores[:, 0], "x")],
            n_bootstrap=0,
            interval_ap=True,
            interval_ap_events="runs",  # type: ignore[arg-type]
        )


def test_class_wise_map_through_run_audit() -> None:
    """run_audit with definition scores and interval AP adds class_wise_map (classes from
    the video categories), its mAP rows equal to getLocMAP's mean; without interval AP the
    table stays empty."""
    classes = ("Abuse", "Fight")
    gt, scores, segments = random_benchmark(5, videos=8, classes=classes)
    model = DefinitionScores("d", classes, scores[:, 1:], "random")
    scored = [ModelScores("m", scores[:, 1], "random")]
    result = run_audit(gt, scored, n_bootstrap=0, definition_scores=[model], interval_ap=True)
    labels = [[gt.categories[i]] * len(s) for i, s in enumerate(segments)]
    pieces = [p[:, 1:] for p in pieces_of(scores, gt.offsets)]
    table = result.class_wise_map
    means = table[(table["class"] == MEAN_CLASS) & (table["population"] == "all")]
    assert means["tiou"].tolist() == list(TIOU_GRID)
    for th, value in zip(TIOU_GRID, means["ap"], strict=True):
        expected = released_loc_map(pieces, th, segments, labels, list(classes))
        assert expected is not None
        assert value == pytest.approx(np.mean(expected), abs=TOL)
    assert means["ap"].iloc[0] > 0
    plain = run_audit(gt, scored, n_bootstrap=0, definition_scores=[model])
    assert plain.class_wise_map.empty and plain.interval_ap.empty
    assert "interval_ap" not in plain.conventions


def test_class_events_from_an_events_table_hand_worked(tmp_path) -> None:
    """XD-Violence style: annotated segments [10, 30) and [50, 70); the events table gives
    B1 on [10, 30) and G on [20, 30) and [50, 70). vadclip: a class's events are the annotated
    segments holding one of its frames — G: both, B1: the first; merged: the runs of the
    class's frames — G: [20, 30) and [50, 70)."""
    from vadscene.audit.compute.intervals import class_events
    from vadscene.audit.io.definitions import load_events

    labels = np.zeros(100, bool)
    labels[10:30] = labels[50:70] = True
    gt = GroundTruth(
        ("v",), ("Anomaly",), np.array([0, 100]), labels, "hand", segments=(((10, 30), (50, 70)),)
    )
    table = tmp_path / "events.csv"
    table.write_text("video,start,end,class\nv,10,30,B1\nv,20,30,G\nv,50,70,G\n")
    classes = load_events(table, gt)
    assert class_events(gt, classes, "G", "vadclip") == [[(10, 30), (50, 70)]]
    assert class_events(gt, classes, "B1", "vadclip") == [[(10, 30)]]
    assert class_events(gt, classes, "G", "merged") == [[(20, 30), (50, 70)]]
    assert class_events(gt, classes, "B1", "merged") == [[(10, 30)]]
