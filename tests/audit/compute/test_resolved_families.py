"""Resolved model pairs within one backbone family and across families ([audit] Table 3, S4),
counted against a direct count over the pairs."""

from __future__ import annotations

import itertools

import numpy as np

from vadscene.audit.compute.engine import run_audit
from vadscene.audit.compute.result import GRANULARITIES
from vadscene.audit.io.scores import ModelScores
from vadscene.benchmark.frames import GroundTruth


def benchmark(seed: int, videos: int = 30) -> GroundTruth:
    rng = np.random.default_rng(seed)
    counts = rng.integers(8, 30, videos)
    labels, categories = [], []
    for i, count in enumerate(counts):
        frames = np.zeros(count, bool)
        if i % 3:
            start = rng.integers(0, count - 2)
            frames[start : rng.integers(start + 1, count)] = True
        labels.append(frames)
        categories.append(("Normal", "Abuse", "Arson")[i % 3])
    return GroundTruth(
        video_ids=tuple(f"v{i:02d}" for i in range(videos)),
        categories=tuple(categories),
        offsets=np.r_[0, np.cumsum(counts)],
        labels=np.concatenate(labels),
        source="synthetic",
    )


def test_pairs_are_split_within_and_across_families() -> None:
    gt = benchmark(1)
    rng = np.random.default_rng(2)
    # a strong and a weak model in each of two families, one model without family (a missing
    # family is NaN in the table): strong against weak pairs resolve, within and across
    strengths = {"i3d_a": 3, "i3d_b": 0.2, "clip_a": 3, "clip_b": 0.2, "plain": 1}
    families = {"i3d_a": "i3d", "i3d_b": "i3d", "clip_a": "clip", "clip_b": "clip", "plain": None}
    models = [
        ModelScores(name, rng.random(gt.n_frames) + strength * gt.labels, "mem", families[name])
        for name, strength in strengths.items()
    ]
    result = run_audit(gt, models, n_bootstrap=200)
    comparisons = result.comparisons
    for first, second in itertools.combinations(strengths, 2):
        rows = comparisons[(comparisons["model_a"] == first) & (comparisons["model_b"] == second)]
        fa, fb = families[first], families[second]
        expected = None if not fa or not fb else "within_family" if fa == fb else "cross_family"
        assert set(rows["scope"].map(lambda s: s if isinstance(s, str) else None)) == {expected}
    counts = result.resolved.set_index(["granularity", "family"])
    for granularity in GRANULARITIES:
        chosen = comparisons[comparisons["granularity"] == granularity]
        within = [
            row
            for row in chosen.itertuples()
            if isinstance(row.family_a, str)
            and isinstance(row.family_b, str)
            and row.family_a == row.family_b
        ]
        across = [
            row
            for row in chosen.itertuples()
            if isinstance(row.family_a, str)
            and isinstance(row.family_b, str)
            and row.family_a != row.family_b
        ]
        assert counts.loc[(granularity, "within-family"), "pairs"] == len(within) == 2
        assert counts.loc[(granularity, "cross-family"), "pairs"] == len(across) == 4
        assert counts.loc[(granularity, "within-family"), "resolved"] == sum(
            r.resolved for r in within
        )
        assert counts.loc[(granularity, "cross-family"), "resolved"] == sum(
            r.resolved for r in across
        )
        assert counts.loc[(granularity, "all"), "pairs"] == 10
        assert counts.loc[(granularity, "within-family"), "scope"] == "within_family"
        assert counts.loc[(granularity, "i3d"), "scope"] == "family"
    micro = counts.xs("micro")
    # strong vs weak: both within-family pairs and 2 of the 4 cross-family pairs resolve
    assert micro.loc["within-family", "resolved"] == 2
    assert micro.loc["cross-family", "resolved"] == 2


def test_models_without_families_get_no_family_rows() -> None:
    gt = benchmark(3)
    rng = np.random.default_rng(4)
    models = [ModelScores(f"m{i}", rng.random(gt.n_frames), "mem") for i in range(3)]
    result = run_audit(gt, models, n_bootstrap=20)
    assert set(result.resolved["family"]) == {"all"}
    assert result.comparisons["scope"].isna().all()
    assert '"scope": null' in result.to_json()
