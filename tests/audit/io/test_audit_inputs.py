"""The audit's public Python API validates its inputs as the file loaders do (same words)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from vadscene.audit import run_audit
from vadscene.audit.io.scene_labels import SceneContrast, SceneLabels
from vadscene.audit.io.scores import ModelScores, load_scores
from vadscene.benchmark.frames import AuditInputError, GroundTruth

VIDEOS = {"Abuse001_x264": 6, "Normal_Videos_003_x264": 4}


@pytest.fixture
def gt() -> GroundTruth:
    return GroundTruth(
        video_ids=tuple(VIDEOS),
        categories=("Abuse", "Normal"),
        offsets=np.array([0, 6, 10]),
        labels=np.array([0, 1, 1, 1, 0, 0, 0, 0, 0, 0], dtype=bool),
        source="hand-made",
    )


SCORES = [0.1, 0.9, 0.8, 0.7, 0.2, 0.3, 0.4, 0.1, 0.2, 0.6]


def _csv(path: Path, scores: list[float]) -> Path:
    videos = [video for video, frames in VIDEOS.items() for _ in range(frames)]
    rows = {"video": videos[: len(scores)], "score": scores}  # fewer scores: the last rows go
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _message(call) -> str:
    with pytest.raises(AuditInputError) as caught:
        call()
    return str(caught.value)


@pytest.mark.parametrize(("value", "shown"), [(float("nan"), "nan"), (float("inf"), "inf")])
def test_non_finite_scores_are_refused_in_the_loaders_words(
    gt: GroundTruth, tmp_path: Path, value: float, shown: str
) -> None:
    scores = [*SCORES]
    scores[3] = value
    from_file = _message(lambda: load_scores(_csv(tmp_path / "s.csv", scores), gt, name="m"))
    from_python = _message(lambda: run_audit(gt, [ModelScores("m", scores, "mem")]))
    words = f"score {shown} at frame 3 is not finite"
    assert words in from_file and words in from_python
    assert from_python.startswith("mem: model 'm': ")


def test_a_list_is_audited_like_an_array(gt: GroundTruth) -> None:
    result = run_audit(gt, [ModelScores("m", SCORES, "mem")], n_bootstrap=0)
    micro = result.metrics.query("granularity == 'micro'")["value"].item()
    assert micro == pytest.approx(roc_auc_score(gt.labels, SCORES))


def test_mismatched_lengths_are_refused_in_the_loaders_words(
    gt: GroundTruth, tmp_path: Path
) -> None:
    from_python = _message(lambda: run_audit(gt, [ModelScores("m", SCORES[:-2], "mem")]))
    assert "mem: model 'm': 8 scores but the ground truth has 10 frames" in from_python
    from_file = _message(lambda: load_scores(_csv(tmp_path / "s.csv", SCORES[:-2]), gt, name="m"))
    assert "2 scores but the ground truth has 4 frames" in from_file


@pytest.mark.parametrize(
    ("scores", "words"),
    [
        (["0.1", "x"], "scores must be numbers, got values of type <U3"),
        ([[0.1, 0.2], [0.3, 0.4]], "expected scores of shape (F,) (one per frame), got (2, 2)"),
        (np.array([1, 2**53 + 1], dtype=np.int64), "integer score 9007199254740993 at frame 1"),
        ([1, -(2**70)], "integer score -1180591620717411303424 at frame 1 is beyond ±2⁵³"),
        (np.array([1, 2**64 - 1], dtype=np.uint64), "cannot be held exactly as float64"),
    ],
)
def test_model_scores_refuse_what_the_loaders_refuse(scores: object, words: str) -> None:
    assert words in _message(lambda: ModelScores("m", scores, "mem"))


def test_huge_integer_scores_are_refused_from_a_file_too(gt: GroundTruth, tmp_path: Path) -> None:
    path = tmp_path / "s.npy"
    np.save(path, np.arange(10, dtype=np.int64) + 2**60)
    message = _message(lambda: load_scores(path, gt, name="m"))
    assert f"{path}: integer score {2**60} at frame 0 is beyond ±2⁵³" in message


def test_integers_up_to_two_to_the_53_are_kept_exactly() -> None:
    scores = ModelScores("m", np.array([2**53, -(2**53), 3], dtype=np.int64), "mem").scores
    assert scores.dtype == np.float64 and [int(x) for x in scores] == [2**53, -(2**53), 3]


def test_validated_scores_cannot_be_changed_afterwards() -> None:
    original = np.array(SCORES)
    model = ModelScores("m", original, "mem")
    original[0] = np.nan  # the caller's array is theirs; the model holds a copy
    assert np.isfinite(model.scores).all()
    with pytest.raises(ValueError, match="read-only"):
        model.scores[0] = np.nan


@pytest.mark.parametrize(
    "make", [np.array, list, lambda s: dict(zip(VIDEOS, [s[:6], s[6:]], strict=True))]
)
def test_load_scores_accepts_arrays_and_mappings(gt: GroundTruth, tmp_path: Path, make) -> None:
    from_file = load_scores(_csv(tmp_path / "s.csv", SCORES), gt, name="m")
    in_memory = load_scores(make(SCORES), gt, name="m")
    assert np.array_equal(in_memory.scores, np.array(SCORES))
    assert np.array_equal(in_memory.scores, from_file.scores)


def test_in_memory_scores_are_checked_per_video(gt: GroundTruth) -> None:
    scores = {"Abuse001_x264": SCORES[:6], "Normal_Videos_003_x264": [0.1, np.nan, 0.2, 0.3]}
    message = _message(lambda: load_scores(scores, gt, name="m"))
    assert (
        "scores of model 'm': video Normal_Videos_003_x264: score nan at frame 1 is not finite"
        in message
    )
    short = _message(lambda: load_scores(SCORES[:9], gt, name="m"))
    assert "the concatenated array has 9 values but the 2 videos of the order need 10" in short


def test_run_audit_refuses_arguments_of_the_wrong_kind(gt: GroundTruth) -> None:
    assert "models[0] must be a ModelScores" in _message(lambda: run_audit(gt, [SCORES]))
    assert "ground_truth must be a GroundTruth" in _message(lambda: run_audit(SCORES, []))


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (
            {"labels": np.array([0, 2, 1, 1, 0, 0, 0, 0, 0, 0])},
            "labels must be 0/1, got 2 at frame 1",
        ),
        ({"labels": np.array([0.0, np.nan] + [0.0] * 8)}, "labels must be 0/1, got nan at frame 1"),
        ({"offsets": np.array([0, 6, 9])}, "offsets run from 0 to 9 but must cover the 10 labels"),
        ({"offsets": np.array([0, 10, 10])}, "video Normal_Videos_003_x264 has 0 frames"),
        ({"offsets": np.array([0.0, 6.0, 10.0])}, "offsets must be 3 integers"),
        ({"categories": ("Abuse",)}, "1 categories for 2 videos"),
        ({"video_ids": ("Abuse001_x264", "")}, "video ids must be non-empty strings, got ''"),
    ],
)
def test_ground_truth_validates_itself(change: dict, words: str) -> None:
    fields = {
        "video_ids": tuple(VIDEOS),
        "categories": ("Abuse", "Normal"),
        "offsets": np.array([0, 6, 10]),
        "labels": np.zeros(10, dtype=bool),
        "source": "hand-made",
    }
    message = _message(lambda: GroundTruth(**(fields | change)))
    assert message.startswith("hand-made: ground truth: ") and words in message


def test_scene_labels_validate_themselves() -> None:
    contrast = SceneContrast("color", "color", "grayscale", True, "scene")
    words = "contrast 'color vs grayscale' names factor 'color', which has no values"
    assert words in _message(lambda: SceneLabels((contrast,), {"crowd": {}}, "mine"))
    bad_value = _message(lambda: SceneLabels([contrast], {"color": {"v1": 1}}, "mine"))
    assert re.search(
        r"factor 'color': video ids and values must be strings, got 'v1' → 1", bad_value
    )
    assert SceneLabels([contrast], {"color": {"v1": "color"}}, "mine").contrasts == (contrast,)
