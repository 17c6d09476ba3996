"""Ground truth refused with a message naming the problem: an absurd frame count (before
allocating), a video given twice in a JSON ground truth, two names that are one video id."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import DUPLICATED_KEY, PHYSICAL_MEMORY
from support.examples import GOOD

from vadscene.benchmark.frames import AuditInputError
from vadscene.benchmark.ground_truth import load_ground_truth


def test_a_frame_count_of_ten_to_the_fourteen_is_refused_before_allocating(tmp_path: Path) -> None:
    gt = tmp_path / "gt.txt"
    gt.write_text(f"{GOOD} 100000000000000 Abuse 5 12\nNormal003 25 Normal -1 -1\n")
    with pytest.raises(AuditInputError) as error:
        load_ground_truth(gt)
    message = str(error.value)
    assert message.startswith(f"{gt}: the ground truth's 2 videos hold 100,000,000,000,025 frames")
    assert f"video {GOOD} alone 100,000,000,000,000" in message
    assert f"this machine has {PHYSICAL_MEMORY / 2**30:,.1f} GiB" in message


def test_a_json_ground_truth_with_a_duplicated_video_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "gt.json"
    entry = '{"num_frames": 2, "labels": [0, 1]}'
    path.write_text(f'{{"01_0014": {entry}, "01_0015": {entry}, "01_0014": {entry}}}')
    with pytest.raises(AuditInputError) as error:
        load_ground_truth(path)
    assert str(error.value).startswith(f"{path}: not a valid JSON file (")
    assert DUPLICATED_KEY.format(line=1, column=1) in str(error.value)
    assert "01_0014" not in str(error.value)


def test_a_ground_truth_naming_one_video_twice_names_both_spellings(tmp_path: Path) -> None:
    gt = tmp_path / "gt.txt"
    gt.write_text("Clip__1 4 Abuse 0 2\nClip__2 3 Normal -1 -1\n")
    with pytest.raises(AuditInputError) as error:
        load_ground_truth(gt)
    assert str(error.value) == (
        f"{gt}:2: the video of this line is listed twice (first on line 1): the two names are "
        "one id (ids drop folders, extensions and a trailing __N crop index); expected each "
        "video once, under distinct names"
    )
