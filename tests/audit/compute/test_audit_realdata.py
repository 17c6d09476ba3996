"""The audit on real benchmark ground truth, against numbers the papers publish."""

from __future__ import annotations

import pytest
from helpers import realdata_dir

from vadscene.audit import load_ground_truth, run_audit

pytestmark = pytest.mark.realdata


def test_ucf_crime_composition_matches_the_papers() -> None:
    """UCF-Crime test set, original frame counts (UR-DMU annotation, inclusive interval ends):
    the oracle video-constant AUROC is 92.95 % (look-inside-each-video, §4 and the spec) and
    0.388 % of anomalous/normal pairs are within a video (its Table 1)."""
    gt = load_ground_truth(
        realdata_dir() / "urdmu" / "UCF_Annotation.txt", interval_end="inclusive"
    )
    summary = run_audit(gt, n_bootstrap=0).summary
    assert (summary["videos"], summary["frames"]) == (290, 1_111_808)
    assert round(100 * summary["oracle_video_constant_auroc"], 2) == 92.95
    assert round(100 * summary["within_pair_fraction"], 3) == 0.388


def test_shanghaitech_oracle_matches_the_paper() -> None:
    """ShanghaiTech test set: oracle video-constant AUROC 98.35 (look-inside-each-video §4)."""
    gt = load_ground_truth(realdata_dir() / "s3r" / "shanghaitech_ground_truth.testing.json")
    summary = run_audit(gt, n_bootstrap=0).summary
    assert round(100 * summary["oracle_video_constant_auroc"], 2) == 98.35
