"""Prototype readout against explicit loops (prototypes rebuilt snippet by snippet) and sklearn."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from vadscene.audit.compute.prototypes import audit_features, prototype_scores, snippet_labels
from vadscene.audit.io.features import Features, load_features
from vadscene.benchmark.frames import AuditInputError, GroundTruth

TOL = 1e-12
K = 4


def make_benchmark(seed: int, videos: int = 12) -> tuple[GroundTruth, Features]:
    rng = np.random.default_rng(seed)
    categories, labels, features = [], [], []
    for i in range(videos):
        snippets = int(rng.integers(3, 12))
        frames = snippets * K - int(rng.integers(0, K))  # the last snippet may be short
        frame_labels = np.zeros(frames, bool)
        if i % 3 == 2:
            categories.append("Normal")
        else:
            categories.append(("Abuse", "Arson")[(i // 3) % 2])
            start = int(rng.integers(0, frames - K))
            frame_labels[start : int(rng.integers(start + 1, frames + 1))] = True
        if i == 0:
            frame_labels[:] = False
            frame_labels[: K + 1] = True  # one anomalous snippet (+1 frame): left out
        labels.append(frame_labels)
        features.append(rng.normal(size=(snippets, 5)) + 0.7 * rng.normal(size=5))
    gt = GroundTruth(
        video_ids=tuple(f"v{i:02d}" for i in range(videos)),
        categories=tuple(categories),
        offsets=np.r_[0, np.cumsum([len(x) for x in labels])],
        labels=np.concatenate(labels),
        source="synthetic",
    )
    return gt, Features("m", tuple(features), K, "synthetic")


def cos(x: np.ndarray, y: np.ndarray) -> float:
    return float(x @ y / (np.linalg.norm(x) * np.linalg.norm(y)))


def loop_labels(gt: GroundTruth, features: Features) -> list[np.ndarray]:
    out = []
    for i, z in enumerate(features.per_video):
        frames = gt.labels[gt.offsets[i] : gt.offsets[i + 1]]
        labels = []
        for j in range(z.shape[0]):
            covered = [f for f in range(frames.size) if min(f // K, z.shape[0] - 1) == j]
            labels.append(sum(frames[f] for f in covered) * 2 >= len(covered))
        out.append(np.array(labels))
    return out


def test_snippet_labels_and_scores_match_explicit_loops() -> None:
    gt, features = make_benchmark(0)
    labels = loop_labels(gt, features)
    for mine, expected in zip(snippet_labels(gt, features), labels, strict=True):
        np.testing.assert_array_equal(mine, expected)
    scores, left_out = prototype_scores(gt, features)
    anomalous_video = gt.anomalous_counts() > 0
    everything = list(zip(features.per_video, labels, anomalous_video, gt.categories, strict=True))
    plus = np.mean([z for zs, _, a, _ in everything if a for z in zs], axis=0)
    minus = np.mean([z for zs, _, a, _ in everything if not a for z in zs], axis=0)
    for i, (zs, ys, _, category) in enumerate(everything):
        expected = [cos(z, plus) - cos(z, minus) for z in zs]
        np.testing.assert_allclose(scores["global"][i], expected, rtol=0, atol=TOL)
        if category == "Normal":
            assert scores["per_category"][i] is None
        else:
            same = [
                (z, y)
                for zs2, ys2, _, c2 in everything
                if c2 == category
                for z, y in zip(zs2, ys2, strict=True)
            ]
            cat_plus = np.mean([z for z, y in same if y], axis=0)
            cat_minus = np.mean([z for z, y in same if not y], axis=0)
            expected = [cos(z, cat_plus) - cos(z, cat_minus) for z in zs]
            np.testing.assert_allclose(scores["per_category"][i], expected, rtol=0, atol=TOL)
        if min(ys.sum(), (~ys).sum()) < 2:
            assert scores["within_video"][i] is None
            continue
        expected = []
        for j, z in enumerate(zs):  # leave-one-out, rebuilt from the remaining snippets
            rest = np.delete(np.arange(len(zs)), j)
            p_plus = zs[rest][ys[rest]].mean(0)
            p_minus = zs[rest][~ys[rest]].mean(0)
            expected.append(cos(z, p_plus) - cos(z, p_minus))
        np.testing.assert_allclose(scores["within_video"][i], expected, rtol=0, atol=TOL)
    small = [min(ys.sum(), (~ys).sum()) == 1 for ys in labels]
    assert small[0]  # v00: one anomalous snippet
    frames = [gt.labels[gt.offsets[i] : gt.offsets[i + 1]] for i in range(gt.n_videos)]
    assert left_out["within_video"] == [
        "mixed, with fewer than two snippets of a label"
        if f.any() and not f.all()
        else "without both anomalous and normal frames"
        for f, ys in zip(frames, labels, strict=True)
        if min(ys.sum(), (~ys).sum()) < 2
    ]
    assert left_out["per_category"] == ["of the Normal category"] * gt.categories.count("Normal")
    assert left_out["global"] == []


def test_readout_aurocs_match_sklearn() -> None:
    gt, features = make_benchmark(1, videos=15)
    table = audit_features(gt, [features]).set_index("readout")
    scores, _ = prototype_scores(gt, features)
    video = gt.video_index()

    def frame_scores(per_video):
        return np.concatenate(
            [
                q[np.minimum(np.arange(gt.frame_counts[i]) // K, q.size - 1)]
                if q is not None
                else np.full(gt.frame_counts[i], np.nan)
                for i, q in enumerate(per_video)
            ]
        )

    s = frame_scores(scores["global"])
    assert table.loc["global", "auroc"] == pytest.approx(roc_auc_score(gt.labels, s), abs=TOL)
    s = frame_scores(scores["per_category"])
    per_category = []
    for category in ("Abuse", "Arson"):
        mine = np.isin(video, [i for i, c in enumerate(gt.categories) if c == category])
        per_category.append(roc_auc_score(gt.labels[mine], s[mine]))
    assert table.loc["per_category", "auroc"] == pytest.approx(np.mean(per_category), abs=TOL)
    s = frame_scores(scores["within_video"])
    per_video = []
    for i in range(gt.n_videos):
        mine = video == i
        if np.isnan(s[mine]).any() or gt.labels[mine].all() or not gt.labels[mine].any():
            continue
        per_video.append(roc_auc_score(gt.labels[mine], s[mine]))
    assert table.loc["within_video", "auroc"] == pytest.approx(np.mean(per_video), abs=TOL)
    assert table.loc["within_video", "videos"] == len(per_video)


def test_features_of_the_wrong_length_name_file_and_video(tmp_path: Path) -> None:
    gt, features = make_benchmark(2, videos=4)
    for video, z in zip(gt.video_ids, features.per_video, strict=True):
        np.save(tmp_path / f"{video}.npy", z)
    loaded = load_features(tmp_path, gt, name="m", snippet_repeat=K)
    np.testing.assert_array_equal(loaded.per_video[3], features.per_video[3])
    np.save(tmp_path / "v02.npy", np.zeros((features.per_video[2].shape[0] + 3, 5)))
    with pytest.raises(AuditInputError, match=r"v02\.npy: video v02: \d+ snippets × 4"):
        load_features(tmp_path, gt, name="m", snippet_repeat=K)
    np.save(tmp_path / "v02.npy", np.zeros((features.per_video[2].shape[0], 6)))
    with pytest.raises(AuditInputError, match=r"v02\.npy: video v02: features of dimension 6"):
        load_features(tmp_path, gt, name="m", snippet_repeat=K)


def test_left_out_counts_every_video_a_readout_does_not_read_with_its_reason() -> None:
    """Every video is either read by a readout or left out with a reason: Normal videos and
    frame-mixed videos whose snippets hold fewer than two of a label are counted too."""
    gt, features = make_benchmark(3, videos=15)
    labels = loop_labels(gt, features)
    frames = [gt.labels[gt.offsets[i] : gt.offsets[i + 1]] for i in range(gt.n_videos)]
    mixed = [bool(f.any() and not f.all()) for f in frames]
    few = [m and min(y.sum(), (~y).sum()) < 2 for m, y in zip(mixed, labels, strict=True)]
    # v00: mixed frames, a single anomalous snippet; some mixed video has one on a side only
    assert few[0] and sum(few) >= 1
    normal = [c == "Normal" for c in gt.categories]
    table = audit_features(gt, [features]).set_index("readout")
    assert (table["videos"] + table["left_out"] == gt.n_videos).all()
    within = table.loc["within_video"]
    assert within["left_out"] == sum(not m for m in mixed) + sum(few)
    assert within["left_out_reasons"] == (
        f"{sum(not m for m in mixed)} without both anomalous and normal frames; "
        f"{sum(few)} mixed, with fewer than two snippets of a label"
    )
    per_category = table.loc["per_category"]
    assert per_category["left_out"] == sum(normal)
    assert per_category["left_out_reasons"] == f"{sum(normal)} of the Normal category"
    assert table.loc["global", "left_out"] == 0
    assert table.loc["global", "left_out_reasons"] == "none"


def test_a_category_without_both_snippet_labels_is_left_out_with_its_videos() -> None:
    gt, features = make_benchmark(4, videos=12)
    # Arson's videos lose their anomalies: no anomalous Arson snippet, so no Arson prototype
    arson = np.isin(gt.video_index(), [i for i, c in enumerate(gt.categories) if c == "Arson"])
    gt = GroundTruth(gt.video_ids, gt.categories, gt.offsets, gt.labels & ~arson, gt.source)
    table = audit_features(gt, [features]).set_index("readout")
    videos_of = {c: gt.categories.count(c) for c in set(gt.categories)}
    assert table.loc["per_category", "left_out_reasons"] == (
        f"{videos_of['Normal']} of the Normal category; {videos_of['Arson']} of categories "
        "without both an anomalous and a normal snippet (Arson)"
    )
    assert table.loc["per_category", "videos"] == videos_of["Abuse"]
