"""Scores and ground truth as one Parquet or Arrow IPC table, read column-wise (issue 25).

Every expectation is built independently of the table reader: per-video arrays laid out by a
plain loop (or the demo's ``.npy`` files and text annotation, read by the other loaders), and
the table written from them with pyarrow, its rows shuffled and split into chunks.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vadscene.audit.io.scores import load_scores
from vadscene.benchmark.frames import AuditInputError, GroundTruth
from vadscene.benchmark.ground_truth import load_ground_truth
from vadscene.cli import run

FORMATS = ("parquet", "arrow", "arrow-stream", "feather")


def raises(*parts: str):
    """pytest.raises(AuditInputError) whose message contains every one of ``parts``."""
    return pytest.raises(
        AuditInputError, match="(?s)" + "".join(f"(?=.*{re.escape(part)})" for part in parts)
    )


def write_table(table: pa.Table, folder: Path, kind: str, name: str = "table") -> Path:
    """``table`` as a file of ``kind`` (see FORMATS), in chunks of a few rows."""
    if kind == "parquet":
        path = folder / f"{name}.parquet"
        pq.write_table(table, path, row_group_size=7)
        return path
    path = folder / f"{name}.{'feather' if kind == 'feather' else 'arrow'}"
    batches = table.to_batches(max_chunksize=5)
    with pa.OSFile(str(path), "wb") as sink:
        opener = pa.ipc.new_stream if kind == "arrow-stream" else pa.ipc.new_file
        with opener(sink, table.schema) as writer:
            for batch in batches:
                writer.write_batch(batch)
    return path


def random_truth(rng: np.random.Generator, n_videos: int) -> GroundTruth:
    frames = rng.integers(1, 40, size=n_videos)
    labels = np.concatenate([rng.random(n) < 0.3 for n in frames])
    categories = ["Normal" if i % 3 == 0 else "Fight" for i in range(n_videos)]
    ids = [f"{c}{i:03d}_x264" for i, c in enumerate(categories)]
    # a Normal video has no anomalous frame (the loaders refuse one by default)
    offsets = np.concatenate([[0], np.cumsum(frames)])
    for i, category in enumerate(categories):
        if category == "Normal":
            labels[offsets[i] : offsets[i + 1]] = False
    return GroundTruth(tuple(ids), tuple(categories), offsets, labels, "random")


def long_rows(
    gt: GroundTruth, column: str, per_video: dict[str, np.ndarray], rng: np.random.Generator
) -> dict[str, list]:
    """One row per video and frame, in a random order, video names spelled as file paths."""
    rows = [
        (f"test/{video}.mp4", frame, value)
        for video in gt.video_ids
        for frame, value in enumerate(per_video[video].tolist())
    ]
    order = rng.permutation(len(rows))
    return {
        "video": [rows[i][0] for i in order],
        "frame": [rows[i][1] for i in order],
        column: [rows[i][2] for i in order],
    }


def frame_layout(gt: GroundTruth, per_video: dict[str, np.ndarray], k: int) -> np.ndarray:
    """The expected aligned scores, by a loop over frames: frame f takes snippet f // k, frames
    past the last snippet take the last one."""
    out = []
    for video, n in zip(gt.video_ids, gt.frame_counts.tolist(), strict=True):
        values = per_video[video]
        out.extend(values[min(f // k, values.size - 1)] for f in range(n))
    return np.array(out)


# --- the same scores and ground truth as the other formats -----------------------------------


@pytest.fixture(scope="module")
def demo_files(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The demo benchmark's text annotation and score folders, without its videos (the scores
    are drawn from the design, never from pixels)."""
    from vadscene.demo import benchmark

    root = tmp_path_factory.mktemp("demo")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(benchmark, "write_demo_video", lambda *args, **kwargs: None)
        benchmark.generate_demo_benchmark(root)
    yield root


@pytest.mark.parametrize("kind", FORMATS)
def test_the_demo_as_tables_gives_the_demo(demo_files: Path, tmp_path: Path, kind: str) -> None:
    text_gt = load_ground_truth(
        demo_files / "ground_truth.txt", frame_counts=demo_files / "frame_counts.txt"
    )
    rng = np.random.default_rng(3)
    labels = {v: text_gt.labels_of(v).astype(np.int8) for v in text_gt.video_ids}
    rows = long_rows(text_gt, "label", labels, rng)
    by_name = dict(zip(text_gt.video_ids, text_gt.categories, strict=True))
    rows["category"] = [by_name[Path(name).stem] for name in rows["video"]]
    gt_table = write_table(pa.table(rows), tmp_path, kind, "gt")
    table_gt = load_ground_truth(gt_table)
    # rows were shuffled: the table's video order is that of first appearance
    order = [text_gt.video_ids.index(v) for v in table_gt.video_ids]
    assert sorted(table_gt.video_ids) == sorted(text_gt.video_ids)
    assert list(table_gt.categories) == [text_gt.categories[i] for i in order]
    for video in text_gt.video_ids:
        np.testing.assert_array_equal(table_gt.labels_of(video), text_gt.labels_of(video))
    assert table_gt.conventions["categories"] == "category column"

    for model in sorted(p.name for p in (demo_files / "scores").iterdir()):
        folder = demo_files / "scores" / model
        per_video = {v: np.load(folder / f"{v}.npy") for v in text_gt.video_ids}
        scores = write_table(
            pa.table(long_rows(text_gt, "score", per_video, rng)).cast(
                pa.schema([("video", pa.string()), ("frame", pa.int64()), ("score", pa.float32())])
            ),
            tmp_path,
            kind,
            model,
        )
        from_folder = load_scores(folder, text_gt, name=model)
        from_table = load_scores(scores, table_gt, name=model)
        np.testing.assert_array_equal(from_folder.scores, frame_layout(text_gt, per_video, 1))
        # the same frames, laid out in each ground truth's own video order
        for video in text_gt.video_ids:
            i, j = text_gt.video_ids.index(video), table_gt.video_ids.index(video)
            np.testing.assert_array_equal(
                from_table.scores[table_gt.offsets[j] : table_gt.offsets[j + 1]],
                from_folder.scores[text_gt.offsets[i] : text_gt.offsets[i + 1]],
            )
        assert from_table.scores.dtype == from_folder.scores.dtype == np.float32


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    n_videos=st.integers(1, 12),
    k=st.sampled_from([1, 1, 4, 16]),
    kind=st.sampled_from(FORMATS),
    dtype=st.sampled_from(["float32", "float64", "int32", "bool"]),
    with_frame=st.booleans(),
)
def test_random_score_tables_align_like_a_loop(
    tmp_path_factory: pytest.TempPathFactory,
    seed: int,
    n_videos: int,
    k: int,
    kind: str,
    dtype: str,
    with_frame: bool,
) -> None:
    rng = np.random.default_rng(seed)
    gt = random_truth(rng, n_videos)
    # snippets: ceil(n / k), one fewer where that still covers within a snippet
    counts = np.maximum(1, -(-gt.frame_counts // k) - (rng.random(n_videos) < 0.3) * (k > 1))
    per_video = {
        video: (rng.random(int(m)) * 10).astype(dtype)
        for video, m in zip(gt.video_ids, counts, strict=True)
    }
    rows = long_rows(gt, "score", per_video, rng)
    if not with_frame:  # videos interleaved, each video's rows in its own order
        names = [v for v in gt.video_ids for _ in per_video[v]]
        names = [names[i] for i in rng.permutation(len(names))]
        taken = dict.fromkeys(gt.video_ids, 0)
        values = []
        for video in names:
            values.append(per_video[video][taken[video]].item())
            taken[video] += 1
        rows = {"video": [f"{v}.npy" for v in names], "score": values}
    table = pa.table(rows)
    table = table.set_column(
        table.column_names.index("score"), "score", table.column("score").cast(dtype)
    )
    path = write_table(table, tmp_path_factory.mktemp("tables"), kind)
    loaded = load_scores(path, gt, name="m", snippet_repeat=k)
    expected = frame_layout(gt, {v: s.astype(np.float64) for v, s in per_video.items()}, k)
    np.testing.assert_array_equal(loaded.scores, expected)
    assert loaded.scores.dtype == (np.float32 if dtype == "float32" else np.float64)


def test_rows_without_frames_keep_their_file_order_within_each_video(tmp_path: Path) -> None:
    gt = GroundTruth(("a", "b"), ("Normal", "Normal"), np.array([0, 3, 5]), np.zeros(5), "t")
    table = pa.table({"video": ["b", "a", "a", "b", "a"], "score": [10.0, 1.0, 2.0, 20.0, 3.0]})
    loaded = load_scores(write_table(table, tmp_path, "parquet"), gt, name="m")
    np.testing.assert_array_equal(loaded.scores, [1.0, 2.0, 3.0, 10.0, 20.0])


def test_integer_video_names_are_names(tmp_path: Path) -> None:
    gt = GroundTruth(("1", "20"), ("Normal", "Normal"), np.array([0, 1, 2]), np.zeros(2), "t")
    table = pa.table({"video": [20, 1], "frame": [0, 0], "score": [2.0, 1.0]})
    assert load_scores(write_table(table, tmp_path, "parquet"), gt, name="m").scores.tolist() == [
        1.0,
        2.0,
    ]


def test_float64_scores_are_not_rounded_to_float32(tmp_path: Path) -> None:
    gt = GroundTruth(("a",), ("Normal",), np.array([0, 2]), np.zeros(2), "t")
    near = [0.1, float(np.nextafter(0.1, 1.0))]  # one float32, two float64 values
    assert np.float32(near[0]) == np.float32(near[1])
    table = pa.table({"video": ["a", "a"], "frame": [1, 0], "score": near[::-1]})
    loaded = load_scores(write_table(table, tmp_path, "arrow"), gt, name="m")
    assert loaded.scores.dtype == np.float64
    assert loaded.scores.tolist() == near


def test_one_table_holds_several_models(tmp_path: Path) -> None:
    gt = GroundTruth(("a", "b"), ("Normal", "Normal"), np.array([0, 2, 3]), np.zeros(3), "t")
    table = pa.table(
        {
            "video": ["a", "a", "b"],
            "frame": [0, 1, 0],
            "rtfm": pa.array([0.5, 0.25, 1.0], pa.float32()),
            "score": [9.0, 8.0, 7.0],
        }
    )
    path = write_table(table, tmp_path, "parquet")
    assert load_scores(path, gt, name="rtfm").scores.tolist() == [0.5, 0.25, 1.0]
    # a model without a column of its name reads the score column
    other = load_scores(path, gt, name="other")
    assert other.scores.tolist() == [9.0, 8.0, 7.0]
    assert "column score" in other.notes[0]


def test_one_table_is_the_ground_truth_and_every_models_scores(tmp_path: Path) -> None:
    table = pa.table(
        {
            "video": ["Fight001", "Fight001", "Normal002", "Fight001"],
            "frame": [2, 0, 0, 1],
            "label": [True, False, False, True],
            "category": ["Fight", "Fight", "Normal", "Fight"],
            "rtfm": pa.array([0.9, 0.1, 0.3, 0.8], pa.float32()),
            "vadclip": [0.7, 0.2, 0.6, 0.5],
        }
    )
    path = write_table(table, tmp_path, "parquet")
    gt = load_ground_truth(path)
    assert gt.video_ids == ("Fight001", "Normal002")
    assert gt.labels.tolist() == [False, True, True, False]
    rtfm, vadclip = (load_scores(path, gt, name=name) for name in ("rtfm", "vadclip"))
    assert rtfm.scores.dtype == np.float32 and vadclip.scores.dtype == np.float64
    np.testing.assert_array_equal(rtfm.scores, np.float32([0.1, 0.8, 0.9, 0.3]))
    assert vadclip.scores.tolist() == [0.2, 0.5, 0.7, 0.6]


def test_the_cli_audits_table_inputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(0)
    gt = random_truth(rng, 6)
    labels = {v: gt.labels_of(v) for v in gt.video_ids}
    gt_path = write_table(pa.table(long_rows(gt, "label", labels, rng)), tmp_path, "parquet", "gt")
    scores = {
        v: rng.random(int(n)).astype(np.float32)
        for v, n in zip(gt.video_ids, gt.frame_counts, strict=True)
    }
    scores_path = write_table(pa.table(long_rows(gt, "score", scores, rng)), tmp_path, "arrow")
    out = tmp_path / "report"
    code = run(
        [
            "audit",
            "--gt",
            str(gt_path),
            "--scores",
            f"m={scores_path}",
            "--bootstrap",
            "0",
            "--out",
            str(out),
        ]
    )
    assert code == 0, capsys.readouterr()
    assert (out / "metrics.csv").exists()
    broken = pa.table({"video": ["x"], "frame": [0], "score": [float("nan")]})
    bad = write_table(broken, tmp_path, "parquet", "bad")
    code = run(["audit", "--gt", str(gt_path), "--scores", f"m={bad}", "--out", str(out)])
    assert code != 0
    assert (
        f"{bad}: column score: score nan at video x, frame 0 is not finite"
        in capsys.readouterr().err
    )


# --- refusals: file, column, video and frame named ------------------------------------------


@pytest.fixture
def two_videos() -> GroundTruth:
    return GroundTruth(("a", "b"), ("Normal", "Fight"), np.array([0, 3, 5]), [0, 0, 0, 1, 0], "t")


def score_rows(**changes: list) -> pa.Table:
    rows: dict[str, list] = {
        "video": ["a", "b", "a", "a", "b"],
        "frame": [0, 1, 2, 1, 0],
        "score": [0.1, 0.2, 0.3, 0.4, 0.5],
    }
    return pa.table(rows | changes)


@pytest.mark.parametrize(
    ("table", "parts"),
    [
        (
            score_rows(frame=[0, 1, 2, 2, 0]),
            ["video a: 3 rows but column frame is not 0..2", "missing: [1]", "duplicated: [2]"],
        ),
        (score_rows(frame=[0, 1, 5, 1, 0]), ["video a", "out of range: [5]"]),
        (score_rows(frame=[0, 1, -1, 1, 0]), ["video a", "out of range: [-1]"]),
        (
            score_rows(frame=[0.0, 1.0, 2.0, 1.0, 0.0]),
            ["column frame must hold integers", "got double"],
        ),
        (score_rows(score=["x"] * 5), ["column score must hold numbers", "got string"]),
        (
            score_rows(video=[1.0, 2.0, 1.0, 1.0, 2.0]),
            ["column video must hold video names", "got double"],
        ),
        (
            score_rows(score=[0.1, 0.2, float("inf"), 0.4, 0.5]),
            ["column score: score inf at video a, frame 2 is not finite (1 non-finite"],
        ),
        (
            score_rows(score=[0.1, None, 0.3, 0.4, 0.5]),
            ["column score: 1 rows have no value", "video b, frame 1"],
        ),
        (
            score_rows(video=["a", "b", None, "a", "b"]),
            ["column video: 1 rows have no video name", "data row 3"],
        ),
        (
            score_rows(frame=[0, None, 2, 1, 0]),
            ["column frame: 1 rows have no frame number", "video b, data row 2"],
        ),
        (
            score_rows(video=["a", "b", "a", "x/a__0.npy", "b"]),
            ["one video appears under 2 names", "data rows 1, 4"],
        ),
        (
            score_rows(score=[1, 2, 2**53 + 1, 3, 4]),
            ["integer score 9007199254740993 at video a, frame 2 is beyond ±2⁵³"],
        ),
        (
            score_rows(video=["a", "b", "a", "a", "c"]),
            ["video b: 1 rows but column frame is not 0..0"],
        ),
        (
            pa.table({"video": ["a"], "frame": [0]}),
            ["missing column(s) score", "the table has 2 column(s)"],
        ),
        (
            pa.table(
                {
                    "video": pa.array([], pa.string()),
                    "frame": pa.array([], pa.int64()),
                    "score": pa.array([], pa.float64()),
                }
            ),
            ["the table has no rows"],
        ),
    ],
)
def test_bad_score_tables_are_refused_by_name(
    two_videos: GroundTruth, tmp_path: Path, table: pa.Table, parts: list[str]
) -> None:
    for kind in ("parquet", "arrow"):
        path = write_table(table, tmp_path, kind)
        with raises(str(path), *parts):
            load_scores(path, two_videos, name="m")


@pytest.mark.parametrize(
    ("videos", "frames", "parts"),
    [
        # rows that look sorted, one step wrong: each refused for the video it concerns
        (
            ["a", "a", "a", "b", "b"],
            [0, 1, 1, 0, 1],
            ["video a: 3 rows", "missing: [2]", "duplicated: [1]"],
        ),
        (
            ["a", "a", "a", "b", "b"],
            [0, 1, 2, 1, 2],
            ["video b: 2 rows", "missing: [0]", "out of range: [2]"],
        ),
        (
            ["a", "a", "b", "b", "a"],
            [0, 1, 0, 1, 3],
            ["video a: 3 rows", "missing: [2]", "out of range: [3]"],
        ),
        (["a", "a", "a", "b", "b"], [0, 1, 2, 0, 0], ["video b: 2 rows", "duplicated: [0]"]),
    ],
)
def test_nearly_sorted_frames_are_checked_like_shuffled_ones(
    two_videos: GroundTruth, tmp_path: Path, videos: list, frames: list, parts: list[str]
) -> None:
    path = write_table(score_rows(video=videos, frame=frames), tmp_path, "parquet")
    with raises(str(path), "column frame is not", *parts):
        load_scores(path, two_videos, name="m")


def test_sorted_and_unsorted_rows_give_the_same_scores(
    two_videos: GroundTruth, tmp_path: Path
) -> None:
    sorted_rows = score_rows(
        video=["a", "a", "a", "b", "b"], frame=[0, 1, 2, 0, 1], score=[1.0, 2.0, 3.0, 4.0, 5.0]
    )
    # a video split into two runs is not "in order", but its frames are all there
    split = score_rows(
        video=["a", "b", "a", "b", "a"], frame=[0, 0, 1, 1, 2], score=[1.0, 4.0, 2.0, 5.0, 3.0]
    )
    for table in (sorted_rows, split):
        path = write_table(table, tmp_path, "arrow")
        assert load_scores(path, two_videos, name="m").scores.tolist() == [1, 2, 3, 4, 5]


def test_videos_unknown_to_the_ground_truth_or_missing_are_named(
    two_videos: GroundTruth, tmp_path: Path
) -> None:
    path = write_table(score_rows(video=["a", "z", "a", "a", "z"]), tmp_path, "parquet")
    with raises(
        str(path), "1 videos not in the ground truth: z", "1 ground-truth videos without scores: b"
    ):
        load_scores(path, two_videos, name="m")


def test_a_file_that_is_no_table_is_refused(two_videos: GroundTruth, tmp_path: Path) -> None:
    for name, what in (("s.parquet", "Parquet"), ("s.arrow", "Arrow IPC")):
        path = tmp_path / name
        path.write_bytes(b"video,frame,score\na,0,1\n")
        with raises(str(path), f"cannot read the table as {what}"):
            load_scores(path, two_videos, name="m")


def label_rows(**changes: list) -> pa.Table:
    rows: dict[str, list] = {
        "video": ["a", "b", "a", "a", "b"],
        "frame": [0, 1, 2, 1, 0],
        "label": [0, 1, 0, 0, 0],
        "category": ["Normal", "Fight", "Normal", "Normal", "Fight"],
    }
    return pa.table(rows | changes)


def test_a_label_table_gives_the_ground_truth(tmp_path: Path) -> None:
    gt = load_ground_truth(write_table(label_rows(), tmp_path, "feather"))
    assert gt.video_ids == ("a", "b")  # first appearance
    assert gt.categories == ("Normal", "Fight")
    assert gt.labels.tolist() == [False, False, False, False, True]
    assert gt.conventions["format"] == "table"
    without = load_ground_truth(
        write_table(label_rows().drop_columns(["category"]), tmp_path, "parquet")
    )
    assert without.categories == ("Normal", "Anomaly")
    assert without.conventions["categories"].startswith("video names")


@pytest.mark.parametrize(
    ("table", "parts"),
    [
        (
            label_rows(label=[0, 1, 2, 1, 0]),
            ["column label: labels must be 0/1, got 2 at video a, frame 2"],
        ),
        (label_rows(label=["0"] * 5), ["column label must hold 0/1 labels", "got string"]),
        (
            label_rows(category=["Normal", "Fight", "Riot", "Normal", "Fight"]),
            ["column category: video a: 2 different values", "constant per video"],
        ),
        (label_rows(frame=[0, 1, 2, 2, 0]), ["video a: 3 rows but column frame is not 0..2"]),
        (label_rows().drop_columns(["frame"]), ["missing column(s) frame"]),
    ],
)
def test_bad_label_tables_are_refused_by_name(
    tmp_path: Path, table: pa.Table, parts: list[str]
) -> None:
    path = write_table(table, tmp_path, "parquet")
    with raises(str(path), *parts):
        load_ground_truth(path)
