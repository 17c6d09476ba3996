"""Loaders of ground truth and model scores: every format, every error, and real benchmark files."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import realdata_dir

from vadscene.audit.io.scores import load_scores, parse_scores_argument
from vadscene.benchmark.frames import AuditInputError, GroundTruth
from vadscene.benchmark.ground_truth import (
    END_OVERRUN_TOLERANCE,
    GROUND_TRUTH_FORMATS,
    category_from_video_id,
    load_frame_counts,
    load_ground_truth,
)
from vadscene.benchmark.video_lists import read_video_list

# id → (frames, category, anomalous frames [start, stop) exclusive)
SMALL = {
    "Abuse001_x264": (10, "Abuse", [(2, 5)]),
    "Normal_Videos_003_x264": (7, "Normal", []),
    "Arson002_x264": (33, "Arson", [(0, 3), (30, 33)]),
}


def small_labels(video: str) -> np.ndarray:
    frames, _, intervals = SMALL[video]
    labels = np.zeros(frames, dtype=bool)
    for start, stop in intervals:
        labels[start:stop] = True
    return labels


def interval_tokens(video: str, inclusive: bool = False) -> str:
    intervals = SMALL[video][2]
    numbers = [f"{s} {e - 1 if inclusive else e}" for s, e in intervals] or ["-1 -1"]
    return " ".join(numbers + ["-1 -1"] * (2 - len(numbers)))


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def raises(match_all: list[str]):
    """pytest.raises(AuditInputError) whose message contains every string of ``match_all``."""
    return pytest.raises(
        AuditInputError, match="(?s)" + "".join(f"(?=.*{re.escape(part)})" for part in match_all)
    )


@pytest.fixture
def small_gt(tmp_path: Path) -> GroundTruth:
    lines = [
        f"{cat}/{video}.mp4 {frames} {cat} {interval_tokens(video)}"
        for video, (frames, cat, _) in SMALL.items()
    ]
    return load_ground_truth(write(tmp_path / "gt.txt", "\n".join(lines) + "\n"))


def assert_small(gt: GroundTruth) -> None:
    assert set(gt.video_ids) == set(SMALL)
    for video in SMALL:
        np.testing.assert_array_equal(gt.labels_of(video), small_labels(video))
        assert gt.categories[gt.video_ids.index(video)] == SMALL[video][1]
    assert gt.labels.dtype == bool and gt.offsets.dtype == np.int64


# --- categories, counts files, argument parsing --------------------------------------------


@pytest.mark.parametrize(
    ("video", "category"),
    [
        ("Abuse028_x264", "Abuse"),
        ("RoadAccidents021_x264", "RoadAccidents"),
        ("Normal_Videos_872_x264", "Normal"),
        ("normal003", "Normal"),
        ("v=S-7rRLrxnVQ__#1_label_B4-0-0", "B4"),
        ("Bad.Boys.1995__#01-11-55_01-12-40_label_G-B2-B6", "G"),
        ("A.Beautiful.Mind.2001__#00-25-20_00-29-20_label_A", "Normal"),
        ("01_0014", None),
    ],
)
def test_category_from_video_id(video: str, category: str | None) -> None:
    assert category_from_video_id(video) == category


def test_category_from_video_id_uses_normal_category() -> None:
    assert category_from_video_id("Normal_Videos_1_x264", "normal") == "normal"
    assert category_from_video_id("x__#1_label_A", "N") == "N"


@pytest.mark.parametrize(
    "text",
    [
        "Abuse001_x264 10\nArson002_x264.mp4 33\n",
        "Abuse001_x264@10\nArson002_x264@33\n",
        "video,frames\nAbuse/Abuse001_x264.mp4,10\nArson002_x264,33\n",
        "# counts\n\nAbuse001_x264\t10\nArson002_x264__3\t33\n",
    ],
)
def test_load_frame_counts_formats(tmp_path: Path, text: str) -> None:
    counts = load_frame_counts(write(tmp_path / "counts.txt", text))
    assert counts == {"Abuse001_x264": 10, "Arson002_x264": 33}
    assert list(counts) == ["Abuse001_x264", "Arson002_x264"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a@1\nb@0\n", ["counts.txt:2", "frame count 0", "expected >= 1"]),
        ("a@1\na@2\n", ["counts.txt:2", "listed twice", "line 1", "expected each video once"]),
        ("a@1\nb@x\n", ["counts.txt:2", "expected '<video> <frames>'", "not an integer"]),
        ("# only a comment\n", ["counts.txt", "no video"]),
    ],
)
def test_load_frame_counts_errors(tmp_path: Path, text: str, expected: list[str]) -> None:
    with raises(expected):
        load_frame_counts(write(tmp_path / "counts.txt", text))


def test_parse_scores_argument() -> None:
    assert parse_scores_argument("rtfm=out/rtfm.npy@i3d") == (
        "rtfm",
        Path("out/rtfm.npy"),
        "i3d",
        None,
    )
    assert parse_scores_argument("m=scores.csv") == ("m", Path("scores.csv"), None, None)
    assert parse_scores_argument("m=run@2/s.npy") == ("m", Path("run@2/s.npy"), None, None)
    assert parse_scores_argument("m=run@2/s.npy@clip") == ("m", Path("run@2/s.npy"), "clip", None)
    assert parse_scores_argument("m=s.npy@i3d:16") == ("m", Path("s.npy"), "i3d", 16)
    assert parse_scores_argument("m=out/s.npy:16") == ("m", Path("out/s.npy"), None, 16)


@pytest.mark.parametrize("text", ["scores.npy", "=a.npy", "m=", "m=a.npy@", "m=@fam"])
def test_parse_scores_argument_errors(text: str) -> None:
    with raises(["NAME=PATH[@FAMILY][:K]", repr(text)]):
        parse_scores_argument(text)


# --- ucf-crime text ground truth ----------------------------------------------------------


def test_ucf_crime_with_frames_column(small_gt: GroundTruth, tmp_path: Path) -> None:
    assert_small(small_gt)
    assert small_gt.video_ids == tuple(SMALL)  # file order
    assert small_gt.conventions["format"] == "ucf-crime"
    assert small_gt.conventions["frame_counts"] == "column"
    assert small_gt.conventions["interval_end"] == "exclusive"
    assert small_gt.conventions["video_order"] == "file"
    assert small_gt.source == str(tmp_path / "gt.txt")
    assert "clipped_intervals" not in small_gt.conventions


def test_ucf_crime_inclusive_end(tmp_path: Path) -> None:
    lines = [
        f"{video}.mp4 {frames} {cat} {interval_tokens(video, inclusive=True)}"
        for video, (frames, cat, _) in SMALL.items()
    ]
    gt = load_ground_truth(write(tmp_path / "gt.txt", "\n".join(lines)), interval_end="inclusive")
    assert_small(gt)
    assert gt.conventions["interval_end"] == "inclusive"


@pytest.mark.parametrize("counts_text", ["{v} {n}", "{v}@{n}", "{v},{n}"])
def test_ucf_crime_with_counts_file(tmp_path: Path, counts_text: str) -> None:
    lines = [
        f"{video}.mp4  {cat}  {interval_tokens(video)}" for video, (_, cat, _) in SMALL.items()
    ]
    counts = [counts_text.format(v=v, n=n) for v, (n, _, _) in reversed(SMALL.items())]
    counts_file = write(tmp_path / "counts.txt", "\n".join([*counts, "Extra001_x264 5"]))
    gt = load_ground_truth(write(tmp_path / "ann.txt", "\n".join(lines)), frame_counts=counts_file)
    assert_small(gt)
    assert gt.video_ids == tuple(SMALL)  # annotation order; extra counts ignored
    assert gt.conventions["frame_counts"] == f"counts file {counts_file}"


def test_ucf_crime_counts_by_ucf_short_name(tmp_path: Path) -> None:
    ann = write(
        tmp_path / "ann.txt", "Abuse001_x264.mp4 Abuse 2 5\nNormal_Videos_003_x264 Normal\n"
    )
    gt = load_ground_truth(ann, frame_counts={"Abuse001": 10, "Normal003": 7})
    assert gt.video_ids == ("Abuse001_x264", "Normal_Videos_003_x264")
    assert gt.frame_counts.tolist() == [10, 7]
    assert "2 videos matched by UCF-Crime short name" in gt.conventions["frame_counts"]
    assert gt.conventions["frame_counts"].startswith("mapping")


def test_ucf_crime_xd_style_counts_define_video_set(tmp_path: Path) -> None:
    ann = write(tmp_path / "xd.txt", "v=b__#1_label_B4-0-0 0 3 5 8\nc__#1_label_G-B2 1 2\n")
    counts = write(
        tmp_path / "counts.txt", "a__#1_label_A@4\nv=b__#1_label_B4-0-0@9\nc__#1_label_G-B2@3\n"
    )
    gt = load_ground_truth(ann, frame_counts=counts)
    assert gt.video_ids == ("a__#1_label_A", "v=b__#1_label_B4-0-0", "c__#1_label_G-B2")
    assert gt.categories == ("Normal", "B4", "G")
    assert gt.labels.astype(int).tolist() == [0] * 4 + [1, 1, 1, 0, 0, 1, 1, 1, 0] + [0, 1, 0]
    assert gt.conventions["video_order"] == "frame counts"
    assert "1 of them not in the annotation and all-normal" in gt.conventions["video_set"]


def test_ucf_crime_clips_small_overrun(tmp_path: Path) -> None:
    gt = load_ground_truth(write(tmp_path / "gt.txt", "Abuse001_x264 10 Abuse 8 12\n"))
    assert gt.labels.astype(int).tolist() == [0] * 8 + [1, 1]
    assert "1 interval(s)" in gt.conventions["clipped_intervals"]
    assert "Abuse001_x264 [8, 12] n=10" in gt.conventions["clipped_intervals"]


def test_ucf_crime_format_argument_and_detection(tmp_path: Path) -> None:
    path = write(tmp_path / "annotation.list", "Abuse001_x264 10 Abuse 2 5\n")
    assert load_ground_truth(path).conventions["format"] == "ucf-crime"
    assert load_ground_truth(path, format="ucf-crime").n_frames == 10
    assert GROUND_TRUTH_FORMATS == ("ucf-crime", "npy-folder", "json", "table")


@pytest.mark.parametrize(
    ("text", "kwargs", "expected"),
    [
        (
            f"Abuse001_x264 10 Abuse 2 {11 + END_OVERRUN_TOLERANCE}\n",
            {},
            ["gt.txt:1", "video Abuse001_x264", f"[2, {11 + END_OVERRUN_TOLERANCE}]", "10 frames"],
        ),
        (
            f"Abuse001_x264 10 Abuse 2 {10 + END_OVERRUN_TOLERANCE}\n",
            {"interval_end": "inclusive"},
            ["gt.txt:1", "Abuse001_x264", "inclusive", "10 frames", "at most 9"],
        ),
        (
            "a 1 A 0 1\nAbuse001_x264 10 Abuse 10 11\n",
            {},
            ["gt.txt:2", "Abuse001_x264", "[10, 11]", "10 frames"],
        ),
        ("Abuse001_x264 10 Abuse 5 2\n", {}, ["gt.txt:1", "invalid interval [5, 2]"]),
        ("Abuse001_x264 10 Abuse -3 2\n", {}, ["gt.txt:1", "invalid interval [-3, 2]"]),
        (
            "Abuse001_x264 10 Abuse 2 5 7\n",
            {},
            ["gt.txt:1", "3 interval numbers", "expected start/end pairs"],
        ),
        (
            "Abuse001_x264 10 Abuse 2 x5\n",
            {},
            ["gt.txt:1", "expected integer interval bounds", "1 of the 2 fields"],
        ),
        ("Abuse001_x264 0 Abuse -1 -1\n", {}, ["gt.txt:1", "frame count 0", "expected >= 1"]),
        (
            "A/Abuse001_x264.mp4 10 Abuse 2 5\nB/Abuse001_x264.mp4 10 Abuse 2 5\n",
            {},
            ["gt.txt:2", "listed twice", "line 1", "the two names are one id"],
        ),
        (
            "Abuse001_x264 10 Abuse 2 5\nArson002_x264 Arson 0 3\n",
            {},
            ["gt.txt:2", "name category intervals", "line 1", "one layout"],
        ),
        ("Abuse001_x264 Abuse 2 5\n", {}, ["gt.txt", "no frame-count column", "frame_counts"]),
        (
            "Abuse001_x264 10 Abuse 2 5\n",
            {"frame_counts": {"Abuse001_x264": 10}},
            ["gt.txt", "frame-count column", "frame_counts"],
        ),
        ("# nothing\n", {}, ["gt.txt", "no video"]),
        ("Abuse001_x264 10 Abuse 2 5\n", {"interval_end": "half"}, ["gt.txt", "'half'"]),
        ("Abuse001_x264 10 Abuse 2 5\n", {"format": "xml"}, ["gt.txt", "'xml'", "npy-folder"]),
    ],
)
def test_ucf_crime_errors(tmp_path: Path, text: str, kwargs: dict, expected: list[str]) -> None:
    with raises(expected):
        load_ground_truth(write(tmp_path / "gt.txt", text), **kwargs)


def test_ucf_crime_missing_counts_lists_videos(tmp_path: Path) -> None:
    names = [f"Abuse{i:03d}_x264" for i in range(25)]
    ann = write(tmp_path / "ann.txt", "".join(f"{n} Abuse -1 -1\n" for n in names))
    with raises(["ann.txt", "24 annotated videos have no frame count", "Abuse001_x264", "4 more"]):
        load_ground_truth(ann, frame_counts={"Abuse000": 5})


def test_ucf_crime_bad_mapping(tmp_path: Path) -> None:
    ann = write(tmp_path / "ann.txt", "Abuse001_x264 Abuse -1 -1\n")
    with raises(["frame_counts mapping", "Abuse001_x264", "2.5"]):
        load_ground_truth(ann, frame_counts={"Abuse001_x264": 2.5})


# --- npy-folder, json, table ground truth --------------------------------------------------


def test_npy_folder(tmp_path: Path) -> None:
    folder = tmp_path / "gt"
    folder.mkdir()
    np.save(folder / "Arson002_x264__9_gt.npy", small_labels("Arson002_x264").astype(np.float32))
    np.save(folder / "Abuse001_x264_gt.npy", small_labels("Abuse001_x264"))
    np.save(
        folder / "Normal_Videos_003_x264__0.npy", small_labels("Normal_Videos_003_x264").astype(int)
    )
    gt = load_ground_truth(folder)
    assert_small(gt)
    assert gt.video_ids == tuple(sorted(SMALL))
    assert gt.conventions["format"] == "npy-folder"
    assert gt.conventions["frame_counts"] == "array lengths"
    assert gt.conventions["video_order"] == "sorted ids"


def test_npy_folder_errors(tmp_path: Path) -> None:
    folder = tmp_path / "gt"
    folder.mkdir()
    with raises([str(folder), "no .npy"]):
        load_ground_truth(folder)
    np.save(folder / "Abuse001_x264.npy", np.array([0, 1, 2, 1]))
    with raises(["Abuse001_x264.npy", "video Abuse001_x264", "got 2 at frame 2"]):
        load_ground_truth(folder)
    np.save(folder / "Abuse001_x264.npy", np.zeros((4, 2)))
    with raises(["Abuse001_x264.npy", "Abuse001_x264", "(4, 2)"]):
        load_ground_truth(folder)
    np.save(folder / "Abuse001_x264.npy", np.zeros(4))
    np.save(folder / "Abuse001_x264__1_gt.npy", np.zeros(4))
    with raises(["Abuse001_x264.npy", "Abuse001_x264__1_gt.npy", "video Abuse001_x264"]):
        load_ground_truth(folder)
    with raises(["frame_counts", "ucf-crime"]):
        load_ground_truth(folder, frame_counts={"Abuse001_x264": 4})


def test_json(tmp_path: Path) -> None:
    data = {
        video: {"num_frames": frames, "labels": small_labels(video).astype(float).tolist()}
        for video, (frames, _, _) in SMALL.items()
    }
    gt = load_ground_truth(write(tmp_path / "gt.json", json.dumps(data)))
    assert_small(gt)
    assert gt.video_ids == tuple(SMALL)
    assert gt.conventions["format"] == "json"


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ({"num_frames": 4, "labels": [0, 1, 0]}, ["gt.json", "video 01_0014", "4", "3 values"]),
        ({"num_frames": 2, "labels": [0, 3]}, ["gt.json", "video 01_0014", "got 3.0 at frame 1"]),
        ({"labels": [0, 1]}, ["gt.json", "entry 1", 'expected {"num_frames": n']),
    ],
)
def test_json_errors(tmp_path: Path, entry: dict, expected: list[str]) -> None:
    with raises(expected):
        load_ground_truth(write(tmp_path / "gt.json", json.dumps({"01_0014": entry})))


def small_label_table(category: bool = True) -> pd.DataFrame:
    rows = [
        {"video": f"{cat}/{video}.mp4", "frame": f, "label": int(label), "category": cat}
        for video, (_, cat, _) in SMALL.items()
        for f, label in enumerate(small_labels(video))
    ]
    table = pd.DataFrame(rows).sample(frac=1.0, random_state=0)  # any row order
    return table if category else table.drop(columns="category")


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".parquet"])
def test_table(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"gt{suffix}"
    table = small_label_table()
    table["category"] = table["category"].replace({"Abuse": "Bullying"})
    if suffix == ".parquet":
        table.to_parquet(path)
    else:
        table.to_csv(path, sep="\t" if suffix == ".tsv" else ",", index=False)
    gt = load_ground_truth(path)
    assert gt.conventions["format"] == "table"
    assert gt.conventions["categories"] == "category column"
    assert gt.categories[gt.video_ids.index("Abuse001_x264")] == "Bullying"
    for video in SMALL:
        np.testing.assert_array_equal(gt.labels_of(video), small_labels(video))


def test_table_without_category(tmp_path: Path) -> None:
    path = tmp_path / "gt.csv"
    small_label_table(category=False).to_csv(path, index=False)
    assert_small(load_ground_truth(path))


def test_table_errors(tmp_path: Path) -> None:
    path = tmp_path / "gt.csv"
    table = small_label_table()
    arson = table[table["video"].str.contains("Arson")]
    table.drop(index=arson.index[arson["frame"] == 7]).to_csv(path, index=False)
    with raises(["gt.csv", "video Arson002_x264", "32 rows", "missing: [7]"]):
        load_ground_truth(path)
    pd.concat([table, arson[arson["frame"] == 4]]).to_csv(path, index=False)
    with raises(["gt.csv", "video Arson002_x264", "34 rows", "duplicated: [4]"]):
        load_ground_truth(path)
    changed = table.copy()
    changed.loc[changed.index[changed["video"].str.contains("Abuse")][0], "category"] = "X"
    changed.to_csv(path, index=False)
    with raises(["gt.csv", "video Abuse001_x264", "2 different categories", "constant"]):
        load_ground_truth(path)
    table.drop(columns="label").to_csv(path, index=False)
    with raises(["gt.csv", "missing column(s) label"]):
        load_ground_truth(path)
    changed = table.copy()
    changed.loc[changed.index[changed["video"].str.contains("Abuse")], "label"] = 5
    changed.to_csv(path, index=False)
    with raises(["gt.csv", "video Abuse001_x264", "0/1"]):
        load_ground_truth(path)


def test_single_npy_is_not_a_ground_truth(tmp_path: Path) -> None:
    np.save(tmp_path / "gt.npy", np.zeros(5))
    with raises(["gt.npy", "not a supported ground truth"]):
        load_ground_truth(tmp_path / "gt.npy")
    with raises(["absent.txt", "not found"]):
        load_ground_truth(tmp_path / "absent.txt")


# --- scores -------------------------------------------------------------------------------


def random_scores(gt: GroundTruth, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {v: rng.random(int(n)) for v, n in zip(gt.video_ids, gt.frame_counts, strict=True)}


def expected(gt: GroundTruth, per_video: dict[str, np.ndarray]) -> np.ndarray:
    return np.concatenate([per_video[v] for v in gt.video_ids])


def score_table(per_video: dict[str, np.ndarray], frame: bool) -> pd.DataFrame:
    table = pd.DataFrame(
        [
            {"video": f"test/{v}.mp4", "frame": i, "score": s}
            for v, values in per_video.items()
            for i, s in enumerate(values)
        ]
    )
    return table.sample(frac=1.0, random_state=1) if frame else table.drop(columns="frame")


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".parquet"])
@pytest.mark.parametrize("frame", [True, False])
def test_scores_table(small_gt: GroundTruth, tmp_path: Path, suffix: str, frame: bool) -> None:
    per_video = random_scores(small_gt)
    path = tmp_path / f"scores{suffix}"
    table = score_table(dict(reversed(per_video.items())), frame)
    if suffix == ".parquet":
        table.to_parquet(path)
    else:
        table.to_csv(path, sep="\t" if suffix == ".tsv" else ",", index=False, float_format="%.17g")
    scores = load_scores(path, small_gt, name="m", family="i3d")
    assert scores.scores.dtype == np.float64
    np.testing.assert_array_equal(scores.scores, expected(small_gt, per_video))
    assert (scores.name, scores.family, scores.source) == ("m", "i3d", str(path))
    assert "one score per frame (no snippet repetition)" in scores.notes


def test_scores_npy_folder(small_gt: GroundTruth, tmp_path: Path) -> None:
    per_video = random_scores(small_gt)
    folder = tmp_path / "scores"
    folder.mkdir()
    for i, (video, values) in enumerate(per_video.items()):
        np.save(folder / f"{video}.npy", values[:, None] if i == 0 else values.astype(np.float32))
    scores = load_scores(folder, small_gt, name="m")
    per_video32 = {
        v: (s if i == 0 else s.astype(np.float32).astype(np.float64))
        for i, (v, s) in enumerate(per_video.items())
    }
    np.testing.assert_array_equal(scores.scores, expected(small_gt, per_video32))
    assert scores.notes[0] == "format: folder of per-video .npy score arrays"


def test_scores_float32_ties_preserved(small_gt: GroundTruth, tmp_path: Path) -> None:
    values = np.full(small_gt.n_frames, np.float32(0.1), dtype=np.float32)
    np.save(tmp_path / "s.npy", values)
    scores = load_scores(tmp_path / "s.npy", small_gt, name="m")
    # kept float32 (issue 25): exactly the values saved, so the ties stay ties
    assert np.unique(scores.scores).size == 1 and scores.scores.dtype == np.float32
    np.testing.assert_array_equal(scores.scores, values)


def test_scores_concatenated_orders(small_gt: GroundTruth, tmp_path: Path) -> None:
    per_video = random_scores(small_gt)
    np.save(tmp_path / "gt_order.npy", expected(small_gt, per_video))
    scores = load_scores(tmp_path / "gt_order.npy", small_gt, name="m")
    np.testing.assert_array_equal(scores.scores, expected(small_gt, per_video))
    order = list(reversed(small_gt.video_ids))
    np.save(tmp_path / "other.npy", np.concatenate([per_video[v] for v in order]))
    listing = write(
        tmp_path / "order.list", "".join(f"test/{v}__{c}.npy\n" for v in order for c in range(3))
    )
    for video_order in (listing, str(listing), order, [f"x/{v}.mp4" for v in order]):
        scores = load_scores(tmp_path / "other.npy", small_gt, name="m", video_order=video_order)
        np.testing.assert_array_equal(scores.scores, expected(small_gt, per_video))


def snippets(gt: GroundTruth, k: int, rule, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        v: rng.random(rule(int(n), k)) for v, n in zip(gt.video_ids, gt.frame_counts, strict=True)
    }


def expand(gt: GroundTruth, per_video: dict[str, np.ndarray], k: int) -> np.ndarray:
    out = []
    for video, n in zip(gt.video_ids, gt.frame_counts, strict=True):
        frames = np.repeat(per_video[video], k)[:n]
        out.append(np.concatenate([frames, np.full(n - frames.size, frames[-1])]))
    return np.concatenate(out)


@pytest.mark.parametrize(
    ("rule_name", "rule", "truncated", "padded"),
    [
        ("ceil(n/k)", lambda n, k: -(-n // k), 3, 0),  # 10, 7, 33 frames, k=4: 12, 8, 36
        ("floor(n/k)", lambda n, k: n // k, 0, 3),  # 8, 4, 32
        ("(n-1)//k", lambda n, k: (n - 1) // k, 0, 3),  # 8, 4, 32
    ],
)
def test_scores_snippet_repeat_all_formats(
    small_gt: GroundTruth, tmp_path: Path, rule_name: str, rule, truncated: int, padded: int
) -> None:
    k = 4
    per_video = snippets(small_gt, k, rule)
    want = expand(small_gt, per_video, k)
    np.save(tmp_path / "concat.npy", np.concatenate([per_video[v] for v in small_gt.video_ids]))
    folder = tmp_path / "folder"
    folder.mkdir()
    for video, values in per_video.items():
        np.save(folder / f"{video}.npy", values)
    score_table(per_video, frame=True).to_csv(tmp_path / "t.csv", index=False, float_format="%.17g")
    for path in (tmp_path / "concat.npy", folder, tmp_path / "t.csv"):
        scores = load_scores(path, small_gt, name="m", snippet_repeat=k)
        np.testing.assert_array_equal(scores.scores, want)
        note = next(n for n in scores.notes if n.startswith("snippet_repeat=4"))
        assert f"{truncated} videos truncated" in note and f"{padded} padded" in note
    concat_notes = load_scores(tmp_path / "concat.npy", small_gt, name="m", snippet_repeat=k).notes
    expected_rule = "floor(n/k)" if rule_name == "(n-1)//k" else rule_name  # same totals here
    assert any(expected_rule in note for note in concat_notes)


def test_scores_snippet_repeat_pads_one_whole_snippet(tmp_path: Path) -> None:
    gt = load_ground_truth(write(tmp_path / "gt.txt", "Abuse001_x264 32 Abuse 0 16\n"))
    np.save(tmp_path / "s.npy", np.array([0.25]))  # (32-1)//16 = 1 snippet → 16 frames + 16 pad
    scores = load_scores(tmp_path / "s.npy", gt, name="m", snippet_repeat=16)
    assert scores.scores.tolist() == [0.25] * 32
    assert "1 padded with their last score (by up to 16 frames)" in scores.notes[-1]
    assert "split into (n-1)//k snippets" in scores.notes[0]


def test_scores_snippet_length_error(small_gt: GroundTruth, tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    for video, values in snippets(small_gt, 4, lambda n, k: -(-n // k)).items():
        np.save(folder / f"{video}.npy", values[:-2] if video == "Arson002_x264" else values)
    with raises(["folder", "video Arson002_x264", "7 snippets", "28 frames", "33 frames"]):
        load_scores(folder, small_gt, name="m", snippet_repeat=4)


def test_scores_length_mismatch(small_gt: GroundTruth, tmp_path: Path) -> None:
    per_video = random_scores(small_gt)
    per_video["Abuse001_x264"] = per_video["Abuse001_x264"][:-1]
    score_table(per_video, frame=False).to_csv(tmp_path / "s.csv", index=False)
    with raises(["s.csv", "video Abuse001_x264", "9 scores", "10 frames"]):
        load_scores(tmp_path / "s.csv", small_gt, name="m")
    np.save(tmp_path / "c.npy", np.concatenate(list(per_video.values())))
    with raises(["c.npy", "49 values", "50 (n)", "snippet_repeat"]):
        load_scores(tmp_path / "c.npy", small_gt, name="m")
    with raises(["c.npy", "49 values", "ceil(n/k)", "(n-1)//k"]):
        load_scores(tmp_path / "c.npy", small_gt, name="m", snippet_repeat=16)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_scores_non_finite(small_gt: GroundTruth, tmp_path: Path, bad: float) -> None:
    per_video = random_scores(small_gt)
    per_video["Arson002_x264"][17] = bad
    per_video["Arson002_x264"][20] = bad
    score_table(per_video, frame=True).to_csv(tmp_path / "s.csv", index=False)
    with raises(["s.csv", "video Arson002_x264", "frame 17", "2 non-finite"]):
        load_scores(tmp_path / "s.csv", small_gt, name="m")
    np.save(tmp_path / "c.npy", expected(small_gt, per_video))
    with raises(["c.npy", "video Arson002_x264", "frame 17"]):
        load_scores(tmp_path / "c.npy", small_gt, name="m")


@pytest.mark.parametrize("blank", [None, "", "  "])
def test_scores_rows_without_a_video_name(
    small_gt: GroundTruth, tmp_path: Path, blank: str | None
) -> None:
    table = score_table(random_scores(small_gt), frame=True)
    table.iloc[4, table.columns.get_loc("video")] = blank  # data row 5
    table.to_csv(tmp_path / "s.csv", index=False)
    with raises(["s.csv", "1 rows have no video name (the first is data row 5)"]):
        load_scores(tmp_path / "s.csv", small_gt, name="m")


def test_scores_unknown_and_missing_videos(small_gt: GroundTruth, tmp_path: Path) -> None:
    per_video = random_scores(small_gt)
    del per_video["Normal_Videos_003_x264"]
    per_video |= {f"Ghost{i:03d}_x264": np.zeros(3) for i in range(23)}
    score_table(per_video, frame=False).to_csv(tmp_path / "s.csv", index=False)
    with raises(
        [
            "s.csv",
            "23 videos not in the ground truth",
            "Ghost000_x264",
            "Ghost019_x264, … (3 more)",
            "1 ground-truth videos without scores: Normal_Videos_003_x264",
        ]
    ):
        load_scores(tmp_path / "s.csv", small_gt, name="m")
    np.save(tmp_path / "c.npy", np.zeros(small_gt.n_frames))
    with raises(["c.npy", "1 videos not in the ground truth: Other_x264", "without scores"]):
        load_scores(
            tmp_path / "c.npy", small_gt, name="m", video_order=["Abuse001_x264", "Other_x264"]
        )


def test_scores_format_errors(small_gt: GroundTruth, tmp_path: Path) -> None:
    folder = tmp_path / "crops"
    folder.mkdir()
    np.save(folder / "Abuse001_x264.npy", np.zeros((10, 10)))
    with raises(["Abuse001_x264.npy", "video Abuse001_x264", "(10, 10)", "average the crops"]):
        load_scores(folder, small_gt, name="m")
    (folder / "Abuse001_x264.npy").unlink()
    np.save(folder / "Abuse001_x264__0.npy", np.zeros(10))
    np.save(folder / "Abuse001_x264__1.npy", np.zeros(10))
    with raises(["Abuse001_x264__0.npy", "Abuse001_x264__1.npy", "video Abuse001_x264", "crops"]):
        load_scores(folder, small_gt, name="m")
    table = pd.DataFrame({"video": ["Abuse001_x264__0", "Abuse001_x264__1"], "score": [0.1, 0.2]})
    table.to_csv(tmp_path / "crops.csv", index=False)
    with raises(["crops.csv", "under 2 names", "data rows 1, 2", "average the crops"]):
        load_scores(tmp_path / "crops.csv", small_gt, name="m")
    pd.DataFrame({"video": ["Abuse001_x264"], "score": ["high"]}).to_csv(
        tmp_path / "t.csv", index=False
    )
    with raises(["t.csv", "video Abuse001_x264", "numbers"]):
        load_scores(tmp_path / "t.csv", small_gt, name="m")
    pd.DataFrame({"video": ["Abuse001_x264"], "value": [1.0]}).to_csv(
        tmp_path / "v.csv", index=False
    )
    with raises(
        [
            "v.csv",
            "missing column(s) score",
            "expected columns video, score",
            "the header has 2 column(s)",
        ]
    ):
        load_scores(tmp_path / "v.csv", small_gt, name="m")
    np.save(tmp_path / "two_d.npy", np.zeros((small_gt.n_frames, 2)))
    with raises(["two_d.npy", "1-D", str((small_gt.n_frames, 2))]):
        load_scores(tmp_path / "two_d.npy", small_gt, name="m")
    with raises(["crops", "video_order"]):
        load_scores(folder, small_gt, name="m", video_order=["Abuse001_x264"])
    with raises(["crops", "snippet_repeat", "0"]):
        load_scores(folder, small_gt, name="m", snippet_repeat=0)
    write(tmp_path / "s.txt", "0.5\n")
    with raises(["s.txt", "unsupported score file"]):
        load_scores(tmp_path / "s.txt", small_gt, name="m")
    with raises(["absent.npy", "not found"]):
        load_scores(tmp_path / "absent.npy", small_gt, name="m")


# --- real benchmark files (read in place) ---------------------------------------------------


def hand_labels(frames: int, *intervals: tuple[int, int]) -> np.ndarray:
    labels = np.zeros(frames, dtype=bool)
    for start, stop in intervals:
        labels[start:stop] = True
    return labels


@pytest.fixture(scope="module")
def ucf_urdmu() -> GroundTruth:
    return load_ground_truth(realdata_dir() / "urdmu" / "UCF_Annotation.txt")


@pytest.mark.realdata
def test_real_urdmu_ucf_annotation(ucf_urdmu: GroundTruth) -> None:
    gt = ucf_urdmu
    assert gt.n_videos == 290 and gt.n_frames == 1_111_808
    assert int((gt.anomalous_counts() > 0).sum()) == 140
    assert gt.categories.count("Normal") == 150 and len(set(gt.categories)) == 14
    assert gt.video_ids[:2] == ("Arson022_x264", "RoadAccidents021_x264")  # file order
    # "RoadAccidents/RoadAccidents021_x264.mp4 155 RoadAccidents 30 90 -1 -1"
    np.testing.assert_array_equal(gt.labels_of("RoadAccidents021_x264"), hand_labels(155, (30, 90)))
    # "Shoplifting/Shoplifting007_x264.mp4 5124 Shoplifting 550 760 4630 4920"
    np.testing.assert_array_equal(
        gt.labels_of("Shoplifting007_x264"), hand_labels(5124, (550, 760), (4630, 4920))
    )
    # "Arson/Arson011_x264.mp4 1266 Arson 150 420 680 1267": end overruns by one frame
    np.testing.assert_array_equal(
        gt.labels_of("Arson011_x264"), hand_labels(1266, (150, 420), (680, 1266))
    )
    assert not gt.labels_of("Normal_Videos_003_x264").any()
    assert gt.labels_of("Normal_Videos_003_x264").size == 2822
    assert gt.conventions["clipped_intervals"].startswith("5 interval(s)")


@pytest.mark.realdata
def test_real_sultani_with_uws4vad_counts_equals_urdmu(ucf_urdmu: GroundTruth) -> None:
    root = realdata_dir()
    gt = load_ground_truth(
        root / "sultani" / "Temporal_Anomaly_Annotation.txt",
        frame_counts=root / "uws4vad" / "ucf_tframes.txt",
    )
    assert gt.n_videos == 290 and gt.n_frames == 1_111_808
    assert set(gt.video_ids) == set(ucf_urdmu.video_ids)
    for video in gt.video_ids:
        np.testing.assert_array_equal(gt.labels_of(video), ucf_urdmu.labels_of(video))
        i, j = gt.video_ids.index(video), ucf_urdmu.video_ids.index(video)
        assert gt.categories[i] == ucf_urdmu.categories[j]
    assert "290 videos matched by UCF-Crime short name" in gt.conventions["frame_counts"]


@pytest.mark.realdata
def test_real_shanghaitech_json_equals_rtfm_gt() -> None:
    root = realdata_dir()
    gt = load_ground_truth(root / "s3r" / "shanghaitech_ground_truth.testing.json")
    assert gt.n_videos == 199 and gt.n_frames == 142_912 and int(gt.labels.sum()) == 8_028
    np.testing.assert_array_equal(gt.labels, np.load(root / "rtfm" / "gt-sh.npy").astype(bool))
    listed = pd.read_csv(root / "s3r" / "shanghaitech.testing.csv", dtype=str)["video-id"]
    assert list(gt.video_ids) == listed.tolist()
    anomalous = gt.anomalous_counts() > 0
    assert [c == "Anomaly" for c in gt.categories] == anomalous.tolist()


@pytest.fixture(scope="module")
def ucf_snippet_gt() -> GroundTruth:
    return load_ground_truth(realdata_dir() / "pel4vad" / "list" / "ucf" / "single_gt")


@pytest.mark.realdata
def test_real_pel4vad_single_gt_is_truncated_urdmu(
    ucf_urdmu: GroundTruth, ucf_snippet_gt: GroundTruth
) -> None:
    gt = ucf_snippet_gt
    assert gt.n_videos == 290 and gt.n_frames == 1_109_680
    assert set(gt.video_ids) == set(ucf_urdmu.video_ids)
    one_fewer = []
    for video in gt.video_ids:
        raw, short = ucf_urdmu.labels_of(video), gt.labels_of(video)
        np.testing.assert_array_equal(short, raw[: short.size])
        # whole 16-frame snippets: floor(n/16), but one fewer for 9 of the 20 videos whose
        # frame count is a multiple of 16 — no formula of n gives the snippet count
        assert short.size in (16 * (raw.size // 16), 16 * (raw.size // 16) - 16)
        if short.size < 16 * (raw.size // 16):
            assert raw.size % 16 == 0
            one_fewer.append(video)
    assert len(one_fewer) == 9 and "Assault006_x264" in one_fewer
    assert int((ucf_urdmu.frame_counts % 16 == 0).sum()) == 20


@pytest.mark.realdata
def test_real_xd_annotation_with_counts() -> None:
    root = realdata_dir()
    gt = load_ground_truth(
        root / "urdmu" / "XD_Annotation.txt", frame_counts=root / "uws4vad" / "xdv_tframes.txt"
    )
    assert gt.n_videos == 800 and gt.n_frames == 2_335_801
    anomalous = gt.anomalous_counts() > 0
    assert int(anomalous.sum()) == 500
    # the annotation lists exactly the non-"label_A" videos; label A is normal
    assert [c == "Normal" for c in gt.categories] == (~anomalous).tolist()
    # "v=u5SF4SlqNDQ__#00-02-39_00-03-41_label_G-0-0 77 1430" (1491 frames)
    np.testing.assert_array_equal(
        gt.labels_of("v=u5SF4SlqNDQ__#00-02-39_00-03-41_label_G-0-0"), hand_labels(1491, (77, 1430))
    )
    # PEL4VAD per-video snippet GT: the raw labels truncated to 16·((n-1)//16) frames
    snippet_gt = load_ground_truth(root / "pel4vad" / "list" / "xd" / "xd-gt")
    assert snippet_gt.n_videos == 800 and snippet_gt.n_frames == 2_330_384
    for video in snippet_gt.video_ids:
        short = snippet_gt.labels_of(video)
        assert short.size == 16 * ((gt.labels_of(video).size - 1) // 16)
        np.testing.assert_array_equal(short, gt.labels_of(video)[: short.size])
    # BN-WVAD's mask is a video-level label per frame in PEL4VAD order: compare which are anomalous
    order = read_video_list(root / "pel4vad" / "list" / "xd" / "test.list")
    lengths = [snippet_gt.labels_of(v).size for v in order]
    mask = np.load(root / "bnwvad" / "xd_anomaly_mask.npy")
    chunks = np.split(mask, np.cumsum(lengths)[:-1])
    assert all(chunk.all() or not chunk.any() for chunk in chunks)  # constant per video
    video_level = {v for v, chunk in zip(order, chunks, strict=True) if chunk.any()}
    assert video_level == {v for v, a in zip(gt.video_ids, anomalous, strict=True) if a}


@pytest.mark.realdata
def test_real_ucf_snippet_scores(
    ucf_urdmu: GroundTruth, ucf_snippet_gt: GroundTruth, tmp_path: Path
) -> None:
    """Per-snippet scores with the snippet counts of the standard UCF-Crime I3D features."""
    root = realdata_dir()
    order = read_video_list(root / "urdmu" / "UCF_Test.list")  # 10-crop list order
    rng = np.random.default_rng(3)
    per_video = {
        v: rng.random(ucf_snippet_gt.labels_of(v).size // 16).astype(np.float32) for v in order
    }
    # per-video files against the raw frame counts: padded by 1..16 frames unless 16 | n
    folder = tmp_path / "per_video"
    folder.mkdir()
    for video, values in per_video.items():
        np.save(folder / f"{video}__0.npy", values)
    raw = load_scores(folder, ucf_urdmu, name="m", snippet_repeat=16)
    assert raw.scores.shape == (1_111_808,)
    assert "0 videos truncated" in raw.notes[-1] and "279 padded" in raw.notes[-1]
    assert "11 exact" in raw.notes[-1]
    assert "(by up to 16 frames)" in raw.notes[-1]
    for video in ("Abuse028_x264", "Assault006_x264"):  # 1412 = 88·16 + 4; 8096 = 506·16
        i = ucf_urdmu.video_ids.index(video)
        got = raw.scores[ucf_urdmu.offsets[i] : ucf_urdmu.offsets[i + 1]]
        repeated = np.repeat(per_video[video].astype(np.float64), 16)
        np.testing.assert_array_equal(got[: repeated.size], repeated)
        assert (got[repeated.size :] == repeated[-1]).all()
        assert got.size == ucf_urdmu.frame_counts[i]
    # one concatenated array in list order: splits exactly against the snippet-level GT ...
    concatenated = tmp_path / "scores.npy"
    np.save(concatenated, np.concatenate([per_video[v] for v in order]))
    list_file = root / "urdmu" / "UCF_Test.list"
    snippet = load_scores(
        concatenated, ucf_snippet_gt, name="m", snippet_repeat=16, video_order=list_file
    )
    assert "0 padded" in snippet.notes[-1] and "290 exact" in snippet.notes[-1]
    for video in ("Abuse028_x264", "Assault006_x264"):
        i = ucf_snippet_gt.video_ids.index(video)
        got = snippet.scores[ucf_snippet_gt.offsets[i] : ucf_snippet_gt.offsets[i + 1]]
        np.testing.assert_array_equal(got, np.repeat(per_video[video].astype(np.float64), 16))
    # ... but not against raw frame counts: 9 videos have one snippet fewer than floor(n/16)
    with raises(["scores.npy", "69355 values", "69364 (floor(n/k))", "per-video files"]):
        load_scores(concatenated, ucf_urdmu, name="m", snippet_repeat=16, video_order=list_file)


@pytest.mark.realdata
def test_real_xd_concatenated_snippet_scores(tmp_path: Path) -> None:
    """XD-Violence I3D features have (n-1)//16 snippets for all 800 videos: splits exactly."""
    root = realdata_dir()
    gt = load_ground_truth(
        root / "vadclip" / "annotations.txt", frame_counts=root / "uws4vad" / "xdv_tframes.txt"
    )
    order = read_video_list(root / "pel4vad" / "list" / "xd" / "test.list")
    counts = dict(zip(gt.video_ids, gt.frame_counts.tolist(), strict=True))
    rng = np.random.default_rng(4)
    per_video = {v: rng.random((counts[v] - 1) // 16) for v in order}
    np.save(tmp_path / "xd.npy", np.concatenate([per_video[v] for v in order]))
    scores = load_scores(tmp_path / "xd.npy", gt, name="m", snippet_repeat=16, video_order=order)
    assert "split into (n-1)//k snippets" in scores.notes[0]
    assert "800 padded" in scores.notes[-1]
    i = gt.video_ids.index(order[0])
    got = scores.scores[gt.offsets[i] : gt.offsets[i + 1]]
    np.testing.assert_array_equal(
        got[: per_video[order[0]].size * 16], np.repeat(per_video[order[0]], 16)
    )


def test_registry_counts_are_only_a_fallback(tmp_path: Path) -> None:
    without_counts = tmp_path / "gt.txt"
    without_counts.write_text(
        "Abuse001_x264.mp4 Abuse 2 5 -1 -1\nNormal_Videos_001_x264.mp4 Normal -1 -1 -1 -1\n"
    )
    registry = {"Abuse001_x264": 8, "Normal_Videos_001_x264": 4}
    gt = load_ground_truth(without_counts, registry_counts=registry)
    assert gt.frame_counts.tolist() == [8, 4]
    assert gt.labels_of("Abuse001_x264").tolist() == [0, 0, 1, 1, 1, 0, 0, 0]
    assert gt.conventions["frame_counts"].startswith("workspace registry")
    counts_file = tmp_path / "counts.txt"
    counts_file.write_text("Abuse001_x264 10\nNormal_Videos_001_x264 3\n")
    explicit = load_ground_truth(without_counts, frame_counts=counts_file, registry_counts=registry)
    assert explicit.frame_counts.tolist() == [10, 3]  # explicit counts win
    with_column = tmp_path / "gt-counts.txt"
    with_column.write_text("Abuse001_x264.mp4 6 Abuse 2 5 -1 -1\n")
    assert load_ground_truth(with_column, registry_counts=registry).frame_counts.tolist() == [6]


# --- .npy files: the plain-header fast path reads exactly what numpy.load reads ----------------


@pytest.mark.parametrize(
    "array",
    [
        np.linspace(0, 1, 7, dtype=np.float32),
        np.linspace(0, 1, 7).reshape(7, 1),
        np.arange(12, dtype=np.int16).reshape(3, 4),
        np.array([True, False]),
        np.zeros(0),
        np.asfortranarray(np.arange(6.0).reshape(2, 3)),  # not the plain header: np.load
        np.arange(5, dtype=">f8"),  # big-endian: np.load
        np.float64(0.5),  # 0-d: np.load
    ],
    ids=["float32", "column", "int16-2d", "bool", "empty", "fortran", "big-endian", "scalar"],
)
def test_npy_files_read_as_numpy_reads_them(tmp_path: Path, array: np.ndarray) -> None:
    from vadscene.benchmark.readers import load_npy

    path = tmp_path / "v.npy"
    np.save(path, array)
    read, expected = load_npy(path), np.load(path)
    assert (read.dtype, read.shape) == (expected.dtype, expected.shape)
    assert np.array_equal(read, expected)


def test_a_truncated_score_file_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "scores"
    folder.mkdir()
    gt = GroundTruth(
        video_ids=("a", "b"),
        categories=("Abuse", "Normal"),
        offsets=np.array([0, 4, 8]),
        labels=np.array([0, 1, 1, 0, 0, 0, 0, 0], dtype=bool),
        source="gt",
    )
    np.save(folder / "a.npy", np.full(4, 0.5))
    np.save(folder / "b.npy", np.full(4, 0.5))
    whole = (folder / "b.npy").read_bytes()
    (folder / "b.npy").write_bytes(whole[:-8])  # the header promises one more value
    with pytest.raises(AuditInputError, match=r"b\.npy: cannot read as a numeric \.npy array"):
        load_scores(folder, gt, name="m")
