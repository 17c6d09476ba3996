"""The rectangular and swept pair counts against the V × V engine they replaced.

The V × V engine is kept in ``support/dense_pairs.py``: U filled by a double loop over frame
pairs, its weighted blocks by one einsum. Every table of an audit, with either way of counting
and any block size of the bootstrap, must equal it — on random benchmarks full of ties and on
the edge shapes: a category without an anomalous video, one anomalous video, every video
anomalous (some wholly).
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score
from support.dense_pairs import DenseCounts, brute_u

from vadscene.audit.compute import metrics
from vadscene.audit.compute.bootstrap import percentile_interval
from vadscene.audit.compute.engine import bootstrap_draws, run_audit
from vadscene.audit.compute.pairs import (
    SPLIT_SORT_MIN,
    ascending_order,
    frame_runs,
    pair_counts,
    runs_of_videos,
    video_constant_counts,
)
from vadscene.audit.compute.result import GRANULARITIES, AuditResult
from vadscene.audit.compute.scene import scene_conditioned
from vadscene.audit.io.scene_labels import SceneContrast, SceneLabels
from vadscene.audit.io.scores import ModelScores
from vadscene.benchmark.frames import GroundTruth

TOL = 1e-12
METHODS = ("rectangular", "swept")


def shaped_benchmark(shape: str, seed: int) -> GroundTruth:
    """A small benchmark of one of the edge shapes (or ``random``)."""
    rng = np.random.default_rng(seed)
    videos = 14
    categories = ["Abuse"] * 4 + ["Arson"] * 4 + ["Fighting"] * 2 + ["Normal"] * 4
    counts = rng.integers(3, 14, videos)
    anomalous = {
        "random": [i for i in range(10) if rng.random() < 0.7] or [0],
        # Fighting's videos hold no anomalous frame: its AUROC is undefined in every replicate
        "category_without_anomaly": [0, 1, 4, 5],
        "one_anomalous_video": [2],
        "all_anomalous": list(range(videos)),
    }[shape]
    labels = []
    for video, count in enumerate(counts):
        frames = np.zeros(count, dtype=bool)
        if video in anomalous:
            start = int(rng.integers(0, count))
            frames[start : int(rng.integers(start + 1, count + 1))] = True
            if shape == "all_anomalous" and video % 3 == 0:
                frames[:] = True  # wholly anomalous videos beside mixed ones
        labels.append(frames)
    return GroundTruth(
        video_ids=tuple(f"v{i:02d}" for i in range(videos)),
        categories=tuple(categories),
        offsets=np.r_[0, np.cumsum(counts)],
        labels=np.concatenate(labels),
        source=shape,
    )


SHAPES = ("random", "category_without_anomaly", "one_anomalous_video", "all_anomalous")


def tied(gt: GroundTruth, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.round(rng.random(gt.n_frames) * 4 + gt.labels) / 4


def scene_of(gt: GroundTruth, seed: int) -> SceneLabels:
    rng = np.random.default_rng(seed)
    contrast = SceneContrast("lighting", "dark", "bright", primary=True, role="scene")
    poles = rng.choice(["dark", "bright", "ambiguous"], gt.n_videos)
    return SceneLabels(
        contrasts=(contrast,),
        values={"lighting": dict(zip(gt.video_ids, poles, strict=True))},
        source="synthetic",
    )


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("seed", range(3))
def test_block_sums_and_video_sums_equal_the_dense_matrix(shape: str, seed: int) -> None:
    gt = shaped_benchmark(shape, seed)
    scores = tied(gt, seed)
    video = gt.video_index()
    dense = DenseCounts(brute_u(scores, gt.labels, video, gt.n_videos))
    rng = np.random.default_rng(seed)
    k = rng.integers(0, 4, (7, gt.n_videos)).astype(float)
    rows, columns = rng.integers(-1, 3, gt.n_videos), rng.integers(-1, 4, gt.n_videos)
    for method in METHODS:
        counts = pair_counts(scores, gt.labels, video, gt.n_videos, method=method)
        np.testing.assert_array_equal(
            counts.block_sums(k, rows, columns, (3, 4)), dense.block_sums(k, rows, columns, (3, 4))
        )
        for mine, theirs in zip(counts.video_sums(), dense.video_sums(), strict=True):
            np.testing.assert_array_equal(mine, theirs)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("normal", [3, -1])  # the Normal code, or no Normal category
def test_the_category_blocks_and_the_granularity_sums_are_the_dense_matrix_blocks(
    shape: str, normal: int
) -> None:
    gt = shaped_benchmark(shape, 6)
    scores = tied(gt, 6)
    video = gt.video_index()
    dense = brute_u(scores, gt.labels, video, gt.n_videos)
    codes = np.unique(np.asarray(gt.categories), return_inverse=True)[1]  # Normal is code 3
    rng = np.random.default_rng(6)
    shared, by_category = (rng.integers(0, 4, (5, gt.n_videos)).astype(float) for _ in "ab")
    # S[r, c, d] by loops over the videos of the dense U
    blocks = np.zeros((5, 4, 4))
    for r, u, v in itertools.product(range(5), range(gt.n_videos), range(gt.n_videos)):
        blocks[r, codes[u], codes[v]] += by_category[r, u] * by_category[r, v] * dense[u, v]
    same = blocks[:, range(4), range(4)]
    beside = blocks[:, :, normal] if normal >= 0 else np.zeros((5, 4))
    pooled = [shared[r] @ dense @ shared[r] for r in range(5)]
    for method in METHODS:
        counts = pair_counts(scores, gt.labels, video, gt.n_videos, method=method)
        for got, expected in zip(
            counts.category_blocks(by_category, codes, 4, normal), (same, beside), strict=True
        ):
            np.testing.assert_array_equal(got, expected)
        for got, expected in zip(
            counts.granularity_sums(shared, by_category, codes, 4, normal),
            (pooled, same, beside),
            strict=True,
        ):
            np.testing.assert_array_equal(got, expected)
        unstratified = counts.granularity_sums(shared, shared, codes, 4, normal)
        np.testing.assert_array_equal(unstratified[0], pooled)
        np.testing.assert_array_equal(
            unstratified[1:], counts.category_blocks(shared, codes, 4, normal)
        )


@pytest.mark.parametrize("shape", SHAPES)
def test_video_constant_counts_equal_the_dense_matrix(shape: str) -> None:
    gt = shaped_benchmark(shape, 4)
    values = np.round(np.random.default_rng(4).random(gt.n_videos) * 3) / 3
    video = gt.video_index()
    dense = DenseCounts(brute_u(values[video], gt.labels, video, gt.n_videos))
    a = gt.anomalous_counts().astype(float)
    counts = video_constant_counts(values, a, gt.frame_counts - a)
    k = np.random.default_rng(5).integers(0, 3, (5, gt.n_videos)).astype(float)
    groups = np.arange(gt.n_videos) % 3
    np.testing.assert_array_equal(
        counts.block_sums(k, groups, groups, (3, 3)), dense.block_sums(k, groups, groups, (3, 3))
    )
    np.testing.assert_array_equal(counts.diagonal(), dense.diagonal())


@pytest.mark.parametrize("shape", SHAPES)
def test_every_table_is_the_same_whichever_way_the_pairs_are_counted(shape: str) -> None:
    gt = shaped_benchmark(shape, 6)
    models = [ModelScores(f"m{i}", tied(gt, 10 + i), "mem") for i in range(2)]
    scene = scene_of(gt, 6)
    runs = {
        method: run_audit(gt, models, scene, n_bootstrap=40, seed=2, pair_count_method=method)
        for method in ("auto", *METHODS)
    }
    # one replicate per block: the draws and sums do not depend on the block size
    runs["blocks_of_one"] = run_audit(gt, models, scene, n_bootstrap=40, seed=2, replicate_memory=1)
    reference = runs.pop("auto")
    for name, result in runs.items():
        for table in (*AuditResult.TABLES, *AuditResult.OPTIONAL_TABLES):
            pd.testing.assert_frame_equal(
                getattr(result, table), getattr(reference, table), check_exact=True, obj=table
            )
        assert result.summary == reference.summary, name


@pytest.mark.parametrize("shape", SHAPES)
def test_metrics_and_intervals_equal_the_dense_engine_on_the_same_draws(shape: str) -> None:
    """The V × V engine's computation — the dense U through the same formulas, on the draws
    the audit states — gives every metric, interval and scene pair type of the audit."""
    gt = shaped_benchmark(shape, 8)
    scores = tied(gt, 8)
    scene = scene_of(gt, 8)
    result = run_audit(gt, [ModelScores("m", scores, "mem")], scene, n_bootstrap=60, seed=4)
    video = gt.video_index()
    dense = DenseCounts(brute_u(scores, gt.labels, video, gt.n_videos))
    a = gt.anomalous_counts().astype(float)
    n = gt.frame_counts - a
    categories = np.array(gt.categories, dtype=object)
    shared, by_category = (d.matrix() for d in bootstrap_draws(4, gt.categories, 60))
    estimates = metrics.all_granularities(
        dense, a, n, metrics.ones(gt.n_videos), categories, "Normal"
    )
    replicates = metrics.all_granularities(
        dense, a, n, shared, categories, "Normal", by_category=by_category
    )
    table = result.metrics.set_index("granularity")
    for granularity in GRANULARITIES:
        expected = (estimates[granularity][0], *percentile_interval(replicates[granularity]))
        actual = table.loc[granularity, ["value", "ci_low", "ci_high"]].to_numpy(float)
        np.testing.assert_allclose(actual, expected, atol=TOL, equal_nan=True)
    plus, minus = scene.poles(scene.contrasts[0], gt.video_ids)
    pairs, reference, conditioned = scene_conditioned(dense, a, n, plus, minus)
    rows = result.scene_pairs.set_index("pair_type")
    for pair_type, (auroc, weight) in pairs.items():
        np.testing.assert_allclose(
            rows.loc[pair_type, ["auroc", "weight"]].to_numpy(float),
            [auroc, weight],
            atol=TOL,
            equal_nan=True,
        )
    conditioned_row = result.scene_conditioned.iloc[0]
    np.testing.assert_allclose(
        [conditioned_row["auroc_ref"], conditioned_row["auroc_cond"]],
        [reference, conditioned],
        atol=TOL,
        equal_nan=True,
    )


def test_each_replicate_is_drawn_from_its_own_seed() -> None:
    """The documented draw: replicate r of seed s is V uniform draws of the videos from the
    seed sequence (s's first child, key 0, r) — rebuilt here with numpy alone — and its
    micro AUROC is sklearn's with those copy counts as frame weights."""
    gt = shaped_benchmark("random", 3)
    scores = tied(gt, 3)
    result = run_audit(gt, [ModelScores("m", scores, "mem")], n_bootstrap=30, seed=9)
    stream = np.random.SeedSequence(9).spawn(3)[0]
    rebuilt = np.zeros((30, gt.n_videos))
    for r in range(30):
        rng = np.random.default_rng(
            np.random.SeedSequence(stream.entropy, spawn_key=(*stream.spawn_key, 0, r))
        )
        for v in rng.integers(0, gt.n_videos, size=gt.n_videos):
            rebuilt[r, v] += 1
    np.testing.assert_array_equal(bootstrap_draws(9, gt.categories, 30)[0].matrix(), rebuilt)
    micro = []
    for k in rebuilt:
        weight = k[gt.video_index()]
        if len(np.unique(gt.labels[weight > 0])) == 2:
            micro.append(roc_auc_score(gt.labels, scores, sample_weight=weight))
    low, high = np.quantile(micro, [0.025, 0.975])
    row = result.metrics.set_index("granularity").loc["micro"]
    assert abs(row["ci_low"] - low) < TOL and abs(row["ci_high"] - high) < TOL


def test_stratified_draws_keep_every_category_and_stay_within_it() -> None:
    gt = shaped_benchmark("random", 5)
    _, by_category = bootstrap_draws(5, gt.categories, 50)
    draws = by_category.matrix()
    categories = np.array(gt.categories)
    for name in np.unique(categories):
        members = categories == name
        assert (draws[:, members].sum(1) == members.sum()).all()
    # a block drawn alone equals the same rows of all the draws
    np.testing.assert_array_equal(by_category.block(17, 23), draws[17:23])


@pytest.mark.parametrize("size", [SPLIT_SORT_MIN - 1, SPLIT_SORT_MIN + 1])
def test_the_sort_in_two_halves_orders_like_argsort(size: int) -> None:
    # few distinct values: long ties, each spanning both halves
    values = np.random.default_rng(size).integers(0, 1000, size) / 8
    order = ascending_order(values)
    assert np.array_equal(np.sort(order), np.arange(size))  # a permutation
    np.testing.assert_array_equal(values[order], values[np.argsort(values, kind="stable")])


def test_runs_read_off_the_offsets_equal_the_runs_of_the_video_index() -> None:
    # videos without frames (first, middle, last) and equal scores across a video boundary
    frame_counts = np.array([0, 3, 5, 0, 0, 4, 1, 0])
    offsets = np.r_[0, np.cumsum(frame_counts)]
    video_index = np.repeat(np.arange(frame_counts.size), frame_counts)
    scores = np.array([0.5, 0.5, 0.2, 0.2, 0.2, 0.2, 0.9, 0.9, 0.9, 0.9, 0.1, 0.1, 0.1])
    labels = np.array([0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1, 1], dtype=bool)
    expected = frame_runs(scores, labels, video_index.astype(np.int32))
    actual = runs_of_videos(scores, labels, offsets)
    for mine, theirs in zip(actual, expected, strict=True):
        np.testing.assert_array_equal(mine, theirs)
        assert mine.dtype == theirs.dtype


@pytest.mark.parametrize("shape", SHAPES)
def test_the_memory_budget_counts_the_runs_the_engine_makes(shape: str) -> None:
    from vadscene.audit.compute.budget import audit_shape

    gt = shaped_benchmark(shape, 8)
    models = [tied(gt, 20), tied(gt, 21).astype(np.float32)]
    counted = audit_shape(gt.offsets, gt.labels, models, 10)
    runs = [frame_runs(s, gt.labels, gt.video_index()) for s in models]
    assert counted.runs == max(r.scores.size for r in runs)
    assert counted.anomalous_runs == max(int(r.labels.sum()) for r in runs)
