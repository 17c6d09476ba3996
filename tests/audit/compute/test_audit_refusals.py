"""Audits refused before any work: a benchmark whose frames are all anomalous or all normal, a
size or a bootstrap too large for this machine's memory, a seed that is not a natural number."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import PHYSICAL_MEMORY, synthetic_benchmark, uniform_benchmark

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


def test_an_audit_of_a_million_videos_is_refused_before_allocating() -> None:
    videos = 1_000_000
    ground_truth = GroundTruth(
        video_ids=tuple(f"v{i}" for i in range(videos)),
        categories=("Abuse",) * videos,
        offsets=np.arange(videos + 1, dtype=np.int64) * 2,
        labels=np.tile([True, False], videos),
        source="gt.txt",
    )
    with pytest.raises(AuditInputError) as error:
        run_audit(ground_truth, n_bootstrap=0)
    message = str(error.value)
    assert message.startswith("gt.txt: an audit of 1,000,000 videos and 2,000,000 frames")
    assert f"this machine has {PHYSICAL_MEMORY / 2**30:,.1f} GiB" in message


def test_an_absurd_bootstrap_is_refused_before_allocating() -> None:
    with pytest.raises(AuditInputError, match=r"1,000,000,000,000 bootstrap replicates"):
        run_audit(synthetic_benchmark(12), n_bootstrap=10**12)


@pytest.mark.parametrize("seed", [-1, 1.5, True])
def test_a_bootstrap_seed_that_is_not_a_natural_number_is_refused(seed: object) -> None:
    with pytest.raises(AuditInputError, match=r"bootstrap seed must be an integer ≥ 0, got"):
        run_audit(synthetic_benchmark(12), n_bootstrap=10, seed=seed)
