"""The per-category estimand: replicates stratified by category hold every category, and the
per-category granularities read them, against a slow loop over replicates with sklearn."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import realdata_dir
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score
from support.dense_pairs import video_multiplicities

from vadscene.audit.compute import metrics
from vadscene.audit.compute.bootstrap import VideoDraws, percentile_interval
from vadscene.audit.compute.engine import bootstrap_draws, run_audit
from vadscene.audit.compute.pairs import pair_counts
from vadscene.audit.compute.uncertainty import replicates_missing_a_category
from vadscene.audit.io.scores import ModelScores
from vadscene.audit.request import AuditRequest, AuditRequestError
from vadscene.benchmark.frames import AuditInputError, GroundTruth
from vadscene.benchmark.ground_truth import load_ground_truth

TOL = 1e-12


def small_category_benchmark(seed: int) -> GroundTruth:
    """Like UCF-Crime's Abuse (2 of 290 videos): one category of a single mixed video among
    larger ones, so unstratified replicates often draw none of it."""
    rng = np.random.default_rng(seed)
    categories = ["Abuse"] + ["Arson"] * 6 + ["Fighting"] * 5 + ["Normal"] * 8
    labels, counts = [], rng.integers(6, 20, len(categories))
    for category, count in zip(categories, counts, strict=True):
        frames = np.zeros(count, bool)
        if category != "Normal":
            start = rng.integers(0, count - 2)
            frames[start : rng.integers(start + 1, count)] = True
        labels.append(frames)
    return GroundTruth(
        video_ids=tuple(f"v{i:02d}" for i in range(len(categories))),
        categories=tuple(categories),
        offsets=np.r_[0, np.cumsum(counts)],
        labels=np.concatenate(labels),
        source="synthetic",
    )


def slow_category_means(gt, scores, draws, *, against_normal: bool) -> np.ndarray:
    """Per replicate: each category's AUROC by roc_auc_score with sample_weight = copies of
    the frame's video, averaged over the categories where both classes are drawn."""
    video = gt.video_index()
    categories = np.array(gt.categories)[video]
    means = []
    for k in draws:
        weight = k[video]
        values = []
        for category in sorted(set(gt.categories) - {"Normal"}):
            keep = categories == category
            if against_normal:
                keep = keep | (categories == "Normal")
                labels = gt.labels & (categories == category)
            else:
                labels = gt.labels
            chosen = keep & (weight > 0)
            if len(set(labels[chosen])) < 2:
                continue  # this category is absent from the replicate
            values.append(
                roc_auc_score(labels[chosen], scores[chosen], sample_weight=weight[chosen])
            )
        means.append(np.mean(values) if values else np.nan)
    return np.array(means)


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 6), min_size=1, max_size=6),
    replicates=st.integers(0, 30),
    seed=st.integers(0, 2**32 - 1),
)
def test_every_stratified_replicate_holds_every_category(sizes, replicates, seed) -> None:
    strata = np.repeat([f"c{i}" for i in range(len(sizes))], sizes)
    np.random.default_rng(seed).shuffle(strata)
    _, codes = np.unique(strata, return_inverse=True)
    draws = VideoDraws(strata.size, replicates, np.random.SeedSequence(seed), 1, codes).matrix()
    assert draws.shape == (replicates, strata.size)
    assert (draws >= 0).all() and (draws == np.round(draws)).all()
    for name, size in zip(*np.unique(strata, return_counts=True), strict=True):
        # exactly n_c copies of category c's videos: every category is in every replicate
        assert (draws[:, strata == name].sum(1) == size).all()


def test_per_category_replicates_against_a_slow_loop() -> None:
    gt = small_category_benchmark(1)
    rng = np.random.default_rng(2)
    scores = np.round(rng.random(gt.n_frames) * 5 + gt.labels * 2) / 5
    video = gt.video_index()
    u = pair_counts(scores, gt.labels, video, gt.n_videos)
    a = gt.anomalous_counts().astype(float)
    n = gt.frame_counts - a
    draws = bootstrap_draws(3, gt.categories, 40)[1].matrix()
    shared = video_multiplicities(gt.n_videos, 40, np.random.default_rng(4))
    values = metrics.all_granularities(
        u, a, n, shared, np.array(gt.categories, dtype=object), "Normal", by_category=draws
    )
    assert values["per_category"] == pytest.approx(
        slow_category_means(gt, scores, draws, against_normal=False), abs=TOL
    )
    assert values["category_vs_normal"] == pytest.approx(
        slow_category_means(gt, scores, draws, against_normal=True), abs=TOL
    )
    # the other granularities still read the shared draws
    weight = shared[:, video]
    micro = [roc_auc_score(gt.labels, scores, sample_weight=w) for w in weight]
    assert values["micro"] == pytest.approx(micro, abs=TOL)


def test_the_audit_reads_stratified_category_draws_by_default() -> None:
    gt = small_category_benchmark(5)
    scores = np.round(np.random.default_rng(6).random(gt.n_frames) * 4 + gt.labels) / 4
    models = [ModelScores("m", scores, "mem")]
    stratified = run_audit(gt, models, n_bootstrap=200, seed=11)
    unstratified = run_audit(
        gt, models, n_bootstrap=200, seed=11, category_bootstrap="unstratified"
    )
    shared_draws, stratified_draws = bootstrap_draws(11, gt.categories, 200)
    category_draws, shared = stratified_draws.matrix(), shared_draws.matrix()
    for result, draws in ((stratified, category_draws), (unstratified, shared)):
        row = result.metrics.set_index("granularity").loc["per_category"]
        low, high = percentile_interval(
            slow_category_means(gt, scores, draws, against_normal=False)
        )
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high), abs=TOL)
    # the shared resamples are unchanged: micro's interval does not depend on the choice
    micro = [
        m.set_index("granularity").loc["micro", ["ci_low", "ci_high"]].tolist()
        for m in (stratified.metrics, unstratified.metrics)
    ]
    assert micro[0] == micro[1]
    stated = stratified.conventions["bootstrap"]
    assert stated["category_resampling"].startswith("stratified")
    assert unstratified.conventions["bootstrap"]["category_resampling"].startswith("unstratified")
    # Abuse is one video of 20: (19/20)^20 ≈ 36 % of unstratified replicates miss it
    missed = sum(not (k[np.array(gt.categories) == "Abuse"] > 0).any() for k in shared)
    assert stated["replicates_missing_a_category_unstratified"] >= missed > 0
    assert stated["replicates_missing_a_category"] == 0


def test_missing_categories_are_counted_as_a_loop_finds_them() -> None:
    gt = small_category_benchmark(7)
    a = gt.anomalous_counts().astype(float)
    n = gt.frame_counts - a
    draws = video_multiplicities(gt.n_videos, 300, np.random.default_rng(8))
    categories = np.array(gt.categories)
    expected = 0
    for k in draws:
        lost = False
        for category in set(gt.categories) - {"Normal"}:
            drawn = np.repeat(
                np.flatnonzero(categories == category), k[categories == category].astype(int)
            )
            lost |= a[drawn].sum() == 0 or n[drawn].sum() == 0
        expected += lost
    assert replicates_missing_a_category(draws, a, n, categories, "Normal") == expected
    assert expected > 0


def test_an_unknown_category_bootstrap_is_refused() -> None:
    gt = small_category_benchmark(9)
    with pytest.raises(AuditInputError, match=r"category_bootstrap 'per-video'.*stratified"):
        run_audit(gt, [], category_bootstrap="per-video")  # type: ignore[arg-type]
    with pytest.raises(AuditRequestError, match="category_bootstrap 'x'"):
        AuditRequest(category_bootstrap="x")  # type: ignore[arg-type]


def test_on_real_ucf_crime_every_category_stays_in_every_replicate() -> None:
    gt = load_ground_truth(
        realdata_dir() / "urdmu" / "UCF_Annotation.txt", interval_end="inclusive"
    )
    result = run_audit(gt, [], n_bootstrap=300, seed=0)
    stated = result.conventions["bootstrap"]
    # the shared draws rebuilt from the seed; a loop over replicates and categories
    shared = bootstrap_draws(0, gt.categories, 300)[0].matrix()
    categories = np.array(gt.categories)
    a = gt.anomalous_counts().astype(float)
    n = gt.frame_counts - a
    lost = 0
    for k in shared:
        drawn = np.repeat(np.arange(gt.n_videos), k.astype(int))
        lost += any(
            a[drawn][categories[drawn] == c].sum() == 0
            or n[drawn][categories[drawn] == c].sum() == 0
            for c in set(gt.categories) - {"Normal"}
        )
    assert stated["replicates_missing_a_category_unstratified"] == lost > 0
    assert stated["replicates_missing_a_category"] == 0


def test_the_cli_chooses_the_category_bootstrap(tmp_path, capsys) -> None:
    import json

    import pandas as pd

    from vadscene.cli import run

    gt = small_category_benchmark(13)
    frame = np.concatenate([np.arange(c) for c in gt.frame_counts])
    video = np.repeat(gt.video_ids, gt.frame_counts)
    category = np.repeat(gt.categories, gt.frame_counts)
    truth = tmp_path / "gt.csv"
    pd.DataFrame(
        {"video": video, "frame": frame, "label": gt.labels.astype(int), "category": category}
    ).to_csv(truth, index=False)
    scores = np.round(np.random.default_rng(14).random(gt.n_frames) * 4 + gt.labels) / 4
    model = tmp_path / "m.csv"
    pd.DataFrame({"video": video, "frame": frame, "score": scores}).to_csv(model, index=False)
    args = ["audit", "--gt", str(truth), "--scores", f"m={model}", "--bootstrap", "50"]
    assert run([*args, "--category-bootstrap", "per-video", "--out", str(tmp_path / "x")]) == 1
    assert "--category-bootstrap 'per-video'" in capsys.readouterr().err
    said = {
        "stratified": "intervals resample videos within each category",
        "unstratified": "(--category-bootstrap unstratified)",
    }
    for mode, words in said.items():
        out = tmp_path / mode
        assert run([*args, "--category-bootstrap", mode, "--out", str(out)]) == 0
        report = json.loads((out / "report.json").read_text())
        assert report["conventions"]["bootstrap"]["category_resampling"].startswith(mode)
        assert words in (out / "report.md").read_text()
