"""The further tables against sklearn, scipy, brute-force loops and a literal transcription of
the released VadCLIP interval evaluation."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr
from sklearn.metrics import roc_auc_score

from vadscene.audit.compute.intervals import (
    AVERAGE_TIOUS,
    further_interval_columns,
    interval_ap_rows,
    proposals,
)
from vadscene.audit.compute.pairs import pair_counts
from vadscene.audit.compute.tables import auca, metric_agreement, prob_auc

TOL = 1e-12


def benchmark(seed: int, videos: int = 10) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    counts = rng.integers(40, 120, videos)
    labels = []
    for i, n in enumerate(counts):
        y = np.zeros(n, bool)
        if i % 3:
            for _ in range(int(rng.integers(1, 3))):
                start = int(rng.integers(0, n - 10))
                y[start : start + int(rng.integers(5, 30))] = True
        labels.append(y)
    offsets = np.r_[0, np.cumsum(counts)]
    y = np.concatenate(labels)
    scores = np.round(rng.random(y.size) * 8 + 3 * y, 0) / 11
    return scores, y, offsets


def test_auca_against_sklearn_and_pair_loops() -> None:
    scores, y, offsets = benchmark(0)
    video = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
    u = pair_counts(scores, y, video, offsets.size - 1)
    a = np.bincount(video, weights=y)
    n = np.bincount(video, weights=~y)
    result = auca(u, a, n)
    anomalous_video = a[video] > 0
    assert result["auca"] == pytest.approx(
        roc_auc_score(y[anomalous_video], scores[anomalous_video]), abs=TOL
    )
    oracle = (a / (a + n))[video]
    assert result["max_auca"] == pytest.approx(
        roc_auc_score(y[anomalous_video], oracle[anomalous_video]), abs=TOL
    )
    cross_kept = cross_all = 0
    for i, j in itertools.product(np.flatnonzero(y), np.flatnonzero(~y)):
        if video[i] != video[j]:
            cross_all += 1
            cross_kept += int(anomalous_video[i] and anomalous_video[j])
    assert result["cross_mass_kept"] == pytest.approx(cross_kept / cross_all, abs=TOL)


def test_prob_auc_is_the_duplicated_weighted_auroc() -> None:
    rng = np.random.default_rng(1)
    scores = np.round(rng.random(60) * 5) / 5
    soft = np.round(rng.random(60) * 4) / 4  # 0, ¼, ½, ¾, 1: several annotators
    doubled = roc_auc_score(
        np.r_[np.ones(60), np.zeros(60)], np.r_[scores, scores], sample_weight=np.r_[soft, 1 - soft]
    )
    assert prob_auc(scores, soft) == pytest.approx(doubled, abs=TOL)
    pairs = sum(
        soft[i] * (1 - soft[j]) * (1.0 if scores[i] > scores[j] else 0.5 * (scores[i] == scores[j]))
        for i in range(60)
        for j in range(60)
    )
    assert prob_auc(scores, soft) == pytest.approx(pairs / (soft.sum() * (1 - soft).sum()), abs=TOL)
    hard = (soft > 0.5).astype(float)
    assert prob_auc(scores, hard) == pytest.approx(roc_auc_score(hard, scores), abs=TOL)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        prob_auc(scores, soft * 2)


def test_metric_agreement_against_loops_and_scipy() -> None:
    rng = np.random.default_rng(2)
    models = [f"m{i}" for i in range(7)]
    rows = []
    for m in models:
        for g in ("micro", "within", "macro"):
            rows.append({"model": m, "granularity": g, "value": float(np.round(rng.random(), 1))})
    table = pd.DataFrame(rows)
    result = metric_agreement(table).set_index("granularity")
    wide = table.pivot(index="model", columns="granularity", values="value")
    for g in ("within", "macro"):
        reversals = compared = 0
        for first, second in itertools.combinations(models, 2):
            d_micro = wide.at[first, "micro"] - wide.at[second, "micro"]
            d_g = wide.at[first, g] - wide.at[second, g]
            if d_micro and d_g:
                compared += 1
                reversals += np.sign(d_micro) != np.sign(d_g)
        assert result.at[g, "pairs"] == compared and result.at[g, "reversals"] == reversals
        expected = spearmanr(wide["micro"], wide[g]).statistic
        assert result.at[g, "spearman_rho"] == pytest.approx(expected, abs=TOL)
        assert result.at[g, "spread"] == pytest.approx(wide[g].max() - wide[g].min(), abs=TOL)


# --- interval AP --------------------------------------------------------------------------------


def released_binary_ap(predictions: list[np.ndarray], gt_segments: list, th: float) -> float:
    """The released VadCLIP getLocMAP for one class (frames as the unit), transcribed loop by
    loop: class score, threshold at 0.6, runs ≥ 2, confidence, NMS 0.6, greedy matching."""
    segment_predict = []
    for i, tmp in enumerate(predictions):
        pp = np.sort(tmp)[::-1]
        top = int(len(pp) / 16)
        c_s = np.mean(pp[:top]) if top else np.nan
        if not c_s > 0:
            continue
        threshold = np.max(tmp) - (np.max(tmp) - np.min(tmp)) * 0.6
        vid_pred = np.concatenate([np.zeros(1), (tmp > threshold).astype("float32"), np.zeros(1)])
        diff = [vid_pred[k] - vid_pred[k - 1] for k in range(1, len(vid_pred))]
        s = [k for k, item in enumerate(diff) if item == 1]
        e = [k for k, item in enumerate(diff) if item == -1]
        found = [
            [i, s[j], e[j], np.max(tmp[s[j] : e[j]]) + 0.7 * c_s]
            for j in range(len(s))
            if e[j] - s[j] >= 2
        ]
        found.sort(key=lambda p: -p[3])
        keep = []
        for cand in found:
            ok = True
            for kept in keep:
                inter = max(0.0, min(cand[2], kept[2]) - max(cand[1], kept[1]))
                if inter / ((cand[2] - cand[1]) + (kept[2] - kept[1]) - inter) > 0.6:
                    ok = False
            if ok:
                keep.append(cand)
        segment_predict.extend(keep)
    if not segment_predict:
        return 0.0
    segment_predict.sort(key=lambda p: -p[3])
    segment_gt = [[i, s, e] for i, segs in enumerate(gt_segments) for s, e in segs]
    gtpos = len(segment_gt)
    tp = []
    for pred in segment_predict:
        flag, best_iou, best_j = 0.0, 0.0, None
        for j, gt in enumerate(segment_gt):
            if pred[0] == gt[0]:
                g, p = set(range(gt[1], gt[2])), set(range(int(pred[1]), int(pred[2])))
                iou = len(g & p) / len(g | p)
                if iou >= th:
                    flag = 1.0
                    if iou > best_iou:
                        best_iou, best_j = iou, j
        if flag:
            del segment_gt[best_j]
        tp.append(flag)
    tp_c = np.cumsum(tp)
    fp_c = np.cumsum([1 - f for f in tp])
    return float(np.sum(tp_c / (fp_c + tp_c) * np.array(tp)) / gtpos) if sum(tp) else 0.0


def label_segments(y: np.ndarray, offsets: np.ndarray) -> list[list[tuple[int, int]]]:
    """Each video's runs of anomalous labels as [start, end), by edge detection."""
    segments = []
    for i in range(offsets.size - 1):
        edges = np.diff(np.r_[0, y[offsets[i] : offsets[i + 1]].astype(int), 0])
        segments.append(
            list(zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1), strict=True))
        )
    return segments


def test_interval_ap_matches_the_released_rule() -> None:
    scores, y, offsets = benchmark(3, videos=12)
    rng = np.random.default_rng(4)
    scores = np.convolve(scores + rng.random(scores.size) * 0.01, np.ones(5) / 5, "same")
    pieces = [scores[offsets[i] : offsets[i + 1]] for i in range(offsets.size - 1)]
    segments = label_segments(y, offsets)
    a = np.add.reduceat(y.astype(int), offsets[:-1])
    result = further_interval_columns(interval_ap_rows(scores, offsets, segments, a))
    expected = [released_binary_ap(pieces, segments, th) for th in AVERAGE_TIOUS]
    assert result["interval_ap"] == pytest.approx(np.mean(expected), abs=TOL)
    assert result["interval_ap_at_05"] == pytest.approx(expected[-1], abs=TOL)
    assert result["interval_ap"] > 0
    # Video-mean replacement leaves no proposal: AP is exactly 0 (L Table 18).
    assert result["interval_ap_video_mean"] == 0.0
    # Whole-video intervals: one [0, T) per video, confidence = its mean score.
    whole = [[(0, p.size, float(p.mean()))] for p in pieces]
    assert all(len(w) == 1 for w in whole)
    assert 0 <= result["interval_ap_whole_video"] <= 1


def test_proposals_hand_worked() -> None:
    scores = np.r_[np.zeros(10), np.full(4, 1.0), np.zeros(10), np.full(8, 0.9)]
    # threshold = 1 − 0.6 = 0.4; runs [10, 14) and [24, 32); c = mean of the top 2 = 1.0
    assert proposals(scores) == [(10, 14, 1.7), (24, 32, 0.9 + 0.7)]
    assert proposals(np.full(40, 0.3)) == []
    assert proposals(np.zeros(40)) == []


def test_overlap_band_is_where_most_intervals_overlap() -> None:
    from vadscene.audit.compute.tables import overlap_band

    rng = np.random.default_rng(5)
    lows = np.round(rng.random(9) * 0.5, 2)
    highs = lows + np.round(rng.random(9) * 0.4 + 0.05, 2)
    low, high = overlap_band(lows, highs)
    grid = np.round(np.arange(0, 1.0001, 0.005), 3)
    depth = np.array([np.sum((lows <= x) & (x <= highs)) for x in grid])
    assert depth.max() == np.sum((lows <= (low + high) / 2) & ((low + high) / 2 <= highs))
    inside = grid[(grid > low) & (grid < high)]
    assert all(np.sum((lows <= x) & (x <= highs)) == depth.max() for x in inside)
    assert overlap_band(np.array([np.nan]), np.array([np.nan])) is None


def test_spread_and_pair_type_means() -> None:
    from vadscene.audit.compute.tables import pair_type_means, spread_table

    metrics_table = pd.DataFrame(
        {
            "model": ["a", "b", "c", "a", "b", "c"],
            "family": ["x", "x", "y", "x", "x", "y"],
            "granularity": ["micro"] * 3 + ["within"] * 3,
            "value": [0.8, 0.85, 0.7, 0.6, 0.75, 0.65],
        }
    )
    spread = spread_table(metrics_table).set_index(["granularity", "family"])["spread"]
    assert spread[("micro", "all")] == pytest.approx(0.15, abs=TOL)
    assert spread[("within", "x")] == pytest.approx(0.15, abs=TOL)
    assert spread[("within", "y")] == 0.0
    conditioned = pd.DataFrame(
        {
            "model": ["a", "b", "a", "b"],
            "factor": ["f", "f", "g", "g"],
            "positive": ["p", "p", "p", "p"],
            "negative": ["n", "n", "n", "n"],
            "delta_scene": [0.02, 0.01, 0.005, -0.001],  # f: mean 0.015 (kept), g: 0.002
        }
    )
    pairs = pd.DataFrame(
        [
            {"model": m, "factor": f, "positive": "p", "negative": "n", "pair_type": k, "auroc": v}
            for m, f, k, v in [
                ("a", "f", "++", 0.7),
                ("a", "g", "++", 0.1),
                ("b", "f", "++", 0.9),
                ("b", "g", "++", 0.2),
            ]
        ]
    )
    means = pair_type_means(pairs, conditioned).set_index(["model", "pair_type"])
    assert means.loc[("a", "++"), "auroc"] == pytest.approx(0.7, abs=TOL)
    assert means.loc[("b", "++"), "auroc"] == pytest.approx(0.9, abs=TOL)
    assert (means["contrasts"] == 1).all()


def test_soft_labels_through_the_cli(tmp_path) -> None:
    """--soft-labels: each model's Prob-AUC equals the duplicated weighted roc_auc_score; a
    label outside [0, 1] is one message naming the file and the video."""
    import json

    from vadscene.cli import run

    scores, y, offsets = benchmark(6, videos=5)
    videos = [f"v{i}" for i in range(offsets.size - 1)]
    frame = np.concatenate([np.arange(n) for n in np.diff(offsets)])
    video = np.repeat(videos, np.diff(offsets))
    truth = tmp_path / "gt.csv"
    pd.DataFrame({"video": video, "frame": frame, "label": y.astype(int)}).to_csv(
        truth, index=False
    )
    model = tmp_path / "m.csv"
    pd.DataFrame({"video": video, "frame": frame, "score": scores}).to_csv(model, index=False)
    soft = np.clip(y * 0.75 + np.random.default_rng(7).random(y.size) * 0.25, 0, 1)
    labels = tmp_path / "soft.csv"
    pd.DataFrame({"video": video, "frame": frame, "label": soft}).to_csv(labels, index=False)
    out = tmp_path / "out"
    args = ["audit", "--gt", str(truth), "--scores", f"m={model}", "--bootstrap", "0"]
    assert run([*args, "--soft-labels", str(labels), "--interval-ap", "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    pieces = [scores[offsets[i] : offsets[i + 1]] for i in range(offsets.size - 1)]
    segments = label_segments(y, offsets)
    expected_intervals = [released_binary_ap(pieces, segments, th) for th in AVERAGE_TIOUS]
    assert report["further"][0]["interval_ap"] == pytest.approx(
        np.mean(expected_intervals), abs=TOL
    )
    soft_read = pd.read_csv(labels)["label"].to_numpy()
    expected = roc_auc_score(
        np.r_[np.ones(y.size), np.zeros(y.size)],
        np.r_[scores, scores],
        sample_weight=np.r_[soft_read, 1 - soft_read],
    )
    micro = [row for row in report["prob_auc"] if row["granularity"] == "micro"]
    assert micro[0]["value"] == pytest.approx(expected, abs=TOL)
    broken = pd.read_csv(labels)
    broken.loc[broken.index[offsets[2] + 3], "label"] = 1.5
    broken.to_csv(labels, index=False)
    from vadscene.audit.io.soft_labels import load_soft_labels
    from vadscene.benchmark.frames import AuditInputError
    from vadscene.benchmark.ground_truth import load_ground_truth

    with pytest.raises(AuditInputError) as info:
        load_soft_labels(labels, load_ground_truth(truth))
    assert f"{labels}: video v2: soft label 1.5 at frame 3" in str(info.value)
