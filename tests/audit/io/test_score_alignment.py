"""Scores aligned to the ground truth's videos: a huge snippet repeat fills each video without
building the repeats, NFC and NFD spellings of an id are one video, and a video order that
collapses two names into one id is an error."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import NFC, NFD, uniform_benchmark

from vadscene.audit.io.scores import load_scores
from vadscene.benchmark.frames import AuditInputError
from vadscene.benchmark.ground_truth import load_ground_truth


def test_a_huge_snippet_repeat_fills_each_video_without_building_the_repeats(
    tmp_path: Path,
) -> None:
    ground_truth = uniform_benchmark(anomalous=False)  # videos of 3 and 5 frames
    scores = tmp_path / "scores.csv"
    scores.write_text("video,score\nAbuse001,0.25\nArson002,0.75\n")
    # one snippet of 10¹³ frames per video: truncated to the video, as the rule says
    model = load_scores(scores, ground_truth, name="m", snippet_repeat=10**13)
    assert model.scores.tolist() == [0.25] * 3 + [0.75] * 5


def test_nfc_ground_truth_and_nfd_scores_name_the_same_video(tmp_path: Path) -> None:
    assert NFC != NFD
    gt = tmp_path / "gt.txt"
    gt.write_text(f"{NFC} 4 Abuse 0 2\nNormal003 3 Normal -1 -1\n", encoding="utf-8")
    scores = tmp_path / "scores.csv"
    scores.write_text(
        "video,score\n" + f"{NFD},0.9\n" * 4 + "Normal003,0.1\n" * 3, encoding="utf-8"
    )
    ground_truth = load_ground_truth(gt)
    model = load_scores(scores, ground_truth, name="m")
    assert ground_truth.video_ids == (NFC, "Normal003")
    assert model.scores.tolist() == [0.9] * 4 + [0.1] * 3


def test_a_video_order_sequence_that_collapses_two_names_is_an_error(tmp_path: Path) -> None:
    ground_truth = uniform_benchmark(anomalous=False)
    scores = tmp_path / "all.npy"
    np.save(scores, np.zeros(ground_truth.n_frames))
    order = ["Abuse001__1", "Abuse001__2", "Arson002"]
    with pytest.raises(AuditInputError) as error:
        load_scores(scores, ground_truth, name="m", video_order=order)
    assert str(error.value).startswith(
        f"{scores}: video order: entries 1 and 2 name one video (ids drop folders and extensions"
    )
