"""Audits refused before any work: a benchmark whose frames are all anomalous or all normal, a
size or a bootstrap too large for this machine's memory, a seed that is not a natural number."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import synthetic_benchmark, uniform_benchmark

from vadscene.audit import run_audit
from vadscene.audit.io.scores import ModelScores
from vadscene.benchmark.frames import AuditInputError, GroundTruth


@pytest.mark.parametrize("scored", [False, True], ids=["ground-truth-only", "with-scores"])
def test_a_benchmark_whose_every_frame_is_anomalous_is_refused(scored: bool) -> None:
    ground_truth = uniform_benchmark(anomalous=True)
    models = [ModelScores(name="m", scores=np.linspace(0, 1, 8), source="s")] if scored else []
    with pytest.raises(AuditInputError) as error:
        run_audit(ground_truth, models, n_bootstrap=0)
    assert str(error.value).startswith(
        "gt.txt: all 8 frames of the 2 videos are anomalous; AUROC compares anomalous with "
        "normal frames"
    )


@pytest.mark.parametrize("scored", [False, True], ids=["ground-truth-only", "with-scores"])
def test_a_benchmark_without_an_anomalous_frame_is_refused(scored: bool) -> None:
    ground_truth = uniform_benchmark(anomalous=False)
    models = [ModelScores(name="m", scores=np.linspace(0, 1, 8), source="s")] if scored else []
    with pytest.raises(AuditInputError) as error:
        run_audit(ground_truth, models, n_bootstrap=0)
    assert str(error.value).startswith(
        "gt.txt: none of the 8 frames of the 2 videos is anomalous; AUROC compares anomalous "
        "with normal frames"
    )


def test_a_ground_truth_only_audit_of_a_million_videos_runs() -> None:
    """It was refused ("would need about 306 GiB" at 100k videos): nothing is V × V now.
    Each video holds one anomalous then one normal frame; videos 0 … 9 hold two normal frames
    more, so the oracle score a/(a+n) is 1/3 there and ½ elsewhere."""
    videos = 1_000_000
    counts = np.full(videos, 2)
    counts[:10] = 4
    labels = np.zeros(counts.sum(), dtype=bool)
    offsets = np.r_[0, np.cumsum(counts)]
    labels[offsets[:-1]] = True
    ground_truth = GroundTruth(
        video_ids=tuple(f"v{i}" for i in range(videos)),
        categories=("Abuse",) * videos,
        offsets=offsets,
        labels=labels,
        source="gt.txt",
    )
    summary = run_audit(ground_truth, n_bootstrap=0).summary
    big_a, big_n = videos, videos + 20
    # Σ a_v n_v: one normal frame against the anomalous one, three in the first ten videos
    assert summary["within_pair_fraction"] == pytest.approx((videos + 20) / (big_a * big_n))
    # oracle: the ten videos scoring 1/3 lose to the others' normal frames, tie among
    # themselves; the other anomalous frames beat those ten videos' 30 normal frames and tie
    # the rest: pairs won = 10·(10·3·½ + …) counted below by pole
    low_a, low_n, high_a, high_n = 10, 30, videos - 10, videos - 10
    wins = low_a * low_n * 0.5 + high_a * low_n + high_a * high_n * 0.5
    assert summary["oracle_video_constant_auroc"] == pytest.approx(wins / (big_a * big_n))
    assert summary["anomalous_videos"] == videos and summary["frames"] == counts.sum()


def test_an_absurd_bootstrap_is_refused_before_allocating() -> None:
    with pytest.raises(AuditInputError, match=r"1,000,000,000,000 bootstrap replicates"):
        run_audit(synthetic_benchmark(12), n_bootstrap=10**12)


@pytest.mark.parametrize("seed", [-1, 1.5, True])
def test_a_bootstrap_seed_that_is_not_a_natural_number_is_refused(seed: object) -> None:
    with pytest.raises(AuditInputError, match=r"bootstrap seed must be an integer ≥ 0, got"):
        run_audit(synthetic_benchmark(12), n_bootstrap=10, seed=seed)
