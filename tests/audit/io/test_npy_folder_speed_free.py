"""The fast reader of per-video ``.npy`` score folders (issue 25): the same scores, dtypes and
errors as reading each file with ``np.load``, whatever the files' headers and layouts.

No test here measures time (``bench/inputs_bench.py`` does); each checks what the fast path
must not change. Expectations come from ``np.load`` and a loop over frames.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.lib import format as npy_format

from vadscene.audit.io.scores import ModelScores, load_scores
from vadscene.benchmark.frames import AuditInputError, GroundTruth


def raises(*parts: str):
    return pytest.raises(
        AuditInputError, match="(?s)" + "".join(f"(?=.*{re.escape(part)})" for part in parts)
    )


def truth(frames: list[int]) -> GroundTruth:
    ids = tuple(f"Normal{i:03d}_x264" for i in range(len(frames)))
    offsets = np.concatenate([[0], np.cumsum(frames)])
    return GroundTruth(ids, ("Normal",) * len(ids), offsets, np.zeros(offsets[-1]), "t")


def by_loop(gt: GroundTruth, folder: Path, k: int) -> np.ndarray:
    """Each frame's score from ``np.load`` of its video's file: frame f takes snippet f // k,
    frames past the last snippet take the last."""
    out = []
    for video, n in zip(gt.video_ids, gt.frame_counts.tolist(), strict=True):
        values = np.load(folder / f"{video}.npy").reshape(-1)
        out.extend(values[min(f // k, values.size - 1)] for f in range(n))
    return np.array(out, dtype=np.float64)


def save(path: Path, array: np.ndarray, layout: str) -> None:
    """``array`` as a .npy written in one of several ways numpy and others write them."""
    if layout == "column":
        np.save(path, array[:, None])
    elif layout == "version-2":
        with open(path, "wb") as file:
            npy_format.write_array(file, array, version=(2, 0))
    elif layout == "big-endian":
        np.save(path, array.astype(array.dtype.newbyteorder(">")))
    elif layout == "fortran-column":
        np.save(path, np.asfortranarray(array[:, None]))
    else:
        np.save(path, array)


LAYOUTS = ("plain", "column", "version-2", "big-endian", "fortran-column")


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    k=st.sampled_from([1, 16]),
    dtypes=st.lists(st.sampled_from(["float32", "float64", "float16", "int16"]), min_size=1),
    layouts=st.lists(st.sampled_from(LAYOUTS), min_size=1),
)
def test_any_folder_reads_as_np_load_does(
    tmp_path_factory: pytest.TempPathFactory,
    seed: int,
    k: int,
    dtypes: list[str],
    layouts: list[str],
) -> None:
    rng = np.random.default_rng(seed)
    n_videos = int(rng.integers(1, 9))
    frames = rng.integers(1, 70, size=n_videos).tolist()
    gt = truth(frames)
    folder = tmp_path_factory.mktemp("scores")
    kinds = set()
    for i, (video, n) in enumerate(zip(gt.video_ids, frames, strict=True)):
        m = -(-n // k) if rng.random() < 0.5 else max(1, -(-n // k) - (k > 1))
        dtype = dtypes[i % len(dtypes)]
        kinds.add(dtype)
        save(
            folder / f"{video}.npy", (rng.random(m) * 100).astype(dtype), layouts[i % len(layouts)]
        )
    loaded = load_scores(folder, gt, name="m", snippet_repeat=k)
    np.testing.assert_array_equal(loaded.scores, by_loop(gt, folder, k))
    # float32 (and float16, exact in it) stays float32; anything else becomes float64
    float32 = kinds <= {"float32", "float16"}
    assert loaded.scores.dtype == (np.float32 if float32 else np.float64)
    assert not loaded.scores.flags.writeable


def test_float32_scores_stay_float32_and_ties_stay_ties(tmp_path: Path) -> None:
    gt = truth([4, 3])
    tied = np.float32(1 / 3)
    np.save(tmp_path / "Normal000_x264.npy", np.array([tied, 0.5, tied, 0.25], np.float32))
    np.save(tmp_path / "Normal001_x264.npy", np.array([tied, tied, 0.75], np.float32))
    scores = load_scores(tmp_path, gt, name="m").scores
    assert scores.dtype == np.float32
    assert np.count_nonzero(scores == tied) == 4  # the four tied frames, equal as saved
    # a float64 file next to them: float64, the float32 values exactly as they were
    np.save(tmp_path / "Normal001_x264.npy", np.array([1 / 3, tied, 0.75]))
    mixed = load_scores(tmp_path, gt, name="m").scores
    assert mixed.dtype == np.float64
    assert mixed[4] == 1 / 3 != mixed[5] == float(tied)


def test_model_scores_copies_what_someone_else_may_write(tmp_path: Path) -> None:
    given_array = np.array([0.5, 0.25], np.float32)
    model = ModelScores("m", given_array, "test")
    given_array[0] = 9.0
    assert model.scores.tolist() == [0.5, 0.25] and model.scores.dtype == np.float32
    sealed = np.array([0.5, 0.25])
    sealed.flags.writeable = False
    assert ModelScores("m", sealed, "test").scores is sealed  # nobody can write to it
    view = np.array([0.5, 0.25, 1.0])[:2]
    view.flags.writeable = False
    assert ModelScores("m", view, "test").scores is not view  # its base still can be written
    with raises("test: model 'm'", "score nan at frame 1 is not finite"):
        nan = np.array([0.5, np.nan])
        nan.flags.writeable = False
        ModelScores("m", nan, "test")


def test_the_first_failing_video_of_the_ground_truth_is_named(tmp_path: Path) -> None:
    gt = truth([5, 5, 5])
    np.save(tmp_path / "Normal000_x264.npy", np.zeros(5, np.float32))
    np.save(tmp_path / "Normal001_x264.npy", np.array([0, 1, np.inf, np.nan, 2], np.float32))
    np.save(tmp_path / "Normal002_x264.npy", np.zeros(4, np.float32))
    with raises(
        f"{tmp_path}: video Normal001_x264: score inf at frame 2 is not finite (2 non-finite "
        "scores in this video)"
    ):
        load_scores(tmp_path, gt, name="m")
    np.save(tmp_path / "Normal001_x264.npy", np.zeros(5, np.float32))
    with raises("video Normal002_x264: 4 scores but the ground truth has 5 frames"):
        load_scores(tmp_path, gt, name="m")
    for video in ("Normal000_x264", "Normal001_x264"):
        np.save(tmp_path / f"{video}.npy", np.zeros(3, np.float32))  # 3 × 2 = 6: truncated
    with raises("video Normal002_x264: 4 snippets × 2 = 8 frames", "has 5 frames (allowed 3..6"):
        load_scores(tmp_path, gt, name="m", snippet_repeat=2)
    np.save(tmp_path / "Normal002_x264.npy", np.zeros(0, np.float32))
    with raises("video Normal002_x264: no scores (the video has 5 frames)"):
        load_scores(tmp_path, gt, name="m", snippet_repeat=2)


def test_files_the_fast_path_leaves_are_refused_in_the_full_readers_words(
    tmp_path: Path,
) -> None:
    gt = truth([3])
    file = tmp_path / "Normal000_x264.npy"
    np.save(file, np.zeros(3, np.float32))
    file.write_bytes(file.read_bytes()[:-4])  # the header promises 12 bytes, 8 follow
    with raises(str(file), "its header declares 3 float32 values", "holds only 8 bytes"):
        load_scores(tmp_path, gt, name="m")
    np.save(file, np.zeros((3, 2), np.float32))
    with raises(
        str(file), "expected scores of shape (T,) or (T, 1), got (3, 2)", "average the crops"
    ):
        load_scores(tmp_path, gt, name="m")
    np.save(file, np.array(["a", "b", "c"]))
    with raises(str(file), "scores must be numbers"):
        load_scores(tmp_path, gt, name="m")
    np.save(file, np.array([1, 2, 2**60]))
    with raises(str(file), "integer score 1152921504606846976 at frame 2 is beyond ±2⁵³"):
        load_scores(tmp_path, gt, name="m")
    file.unlink()
    file.mkdir()
    with raises(str(file), "cannot read"):
        load_scores(tmp_path, gt, name="m")


def test_two_files_of_one_video_and_odd_names(tmp_path: Path) -> None:
    gt = truth([2])
    np.save(tmp_path / "Normal000_x264__0.npy", np.zeros(2, np.float32))
    np.save(tmp_path / "Normal000_x264__1.npy", np.zeros(2, np.float32))
    with raises(
        "Normal000_x264__0.npy and Normal000_x264__1.npy are both video Normal000_x264",
        "average the crops first",
    ):
        load_scores(tmp_path, gt, name="m")
    (tmp_path / "Normal000_x264__1.npy").unlink()
    # a crop index, an NFD name, a feature suffix: the ids the other readers give
    assert load_scores(tmp_path, gt, name="m").scores.tolist() == [0.0, 0.0]
    other = tmp_path / "other"
    other.mkdir()
    np.save(other / "Cafe\u0301_i3d.npy", np.ones(2, np.float32))
    cafe = GroundTruth(("Caf\u00e9",), ("Normal",), np.array([0, 2]), np.zeros(2), "t")
    assert load_scores(other, cafe, name="m").scores.tolist() == [1.0, 1.0]
    empty = tmp_path / "empty"
    empty.mkdir()
    with raises(f"{empty}: no .npy score files in the folder"):
        load_scores(empty, gt, name="m")
