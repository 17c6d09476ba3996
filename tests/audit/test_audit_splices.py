"""The splice builder: real spliced videos (PyAV), their ground truth, determinism, the
feature-level variant, and DC-SelΔ read back from the splices' events table."""

from __future__ import annotations

from pathlib import Path

import av
import numpy as np
import pandas as pd
import pytest

from vadscene.audit.compute.definitions import audit_definitions
from vadscene.audit.io.definitions import DefinitionScores, classes_from_categories, load_events
from vadscene.audit.splices import plan_splices
from vadscene.benchmark.frames import AuditInputError, GroundTruth
from vadscene.benchmark.ground_truth import load_ground_truth
from vadscene.cli import run

STEP = 2
CLASSES = ("Arson", "Fighting", "Robbery")


def write_source(path: Path, frames: int, tag: int) -> None:
    """A clip whose frame t is a flat grey of level 4·(t mod 50) + tag: decodable identity."""
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=25, options={"crf": "0", "threads": "1"})
        stream.width, stream.height, stream.pix_fmt = 32, 24, "yuv420p"
        for t in range(frames):
            image = np.full((24, 32, 3), (4 * (t % 50) + tag) % 256, np.uint8)
            frame = av.VideoFrame.from_ndarray(image, format="rgb24").reformat(format="yuv420p")
            container.mux(stream.encode(frame))
        container.mux(stream.encode())


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """Two videos per class (one anomalous span each) and two normal videos."""
    root = tmp_path_factory.mktemp("splice-sources")
    videos = root / "videos"
    videos.mkdir()
    lines, counts = [], []
    rng = np.random.default_rng(0)
    features = root / "features"
    features.mkdir()
    for i, category in enumerate([c for c in CLASSES for _ in range(2)] + ["Normal"] * 2):
        video = f"{category}{i:03d}_x264"
        frames = 40
        write_source(videos / f"{video}.mp4", frames, tag=i)
        np.save(features / f"{video}.npy", rng.normal(size=(frames // STEP, 3)))
        if category == "Normal":
            lines.append(f"{video}.mp4  Normal  -1  -1  -1  -1\n")
        else:
            start = 5 + i
            lines.append(f"{video}.mp4  {category}  {start}  {start + 20 + i}  -1  -1\n")
        counts.append(f"{video} {frames}\n")
    truth = root / "gt.txt"
    truth.write_text("".join(lines))
    (root / "counts.txt").write_text("".join(counts))
    return truth, videos, features


def cli_splices(sources, out: Path, *extra: str) -> int:
    truth, videos, features = sources
    return run(
        [
            "splices",
            "--gt",
            str(truth),
            "--frame-counts",
            str(truth.parent / "counts.txt"),
            "--videos",
            str(videos),
            "--features",
            str(features),
            "--pairs",
            "2",
            "--step-frames",
            str(STEP),
            "--min-steps",
            "5",
            "--max-steps",
            "8",
            "--context-steps",
            "3",
            "--out",
            str(out),
            *extra,
        ]
    )


def test_splices_are_real_videos_with_exact_ground_truth(sources, tmp_path: Path) -> None:
    out = tmp_path / "splices"
    assert cli_splices(sources, out) == 0
    plan = pd.read_csv(out / "splices.csv")
    events = pd.read_csv(out / "events.csv")
    ids = list(dict.fromkeys(plan["video"]))
    assert len(ids) == 3 * 2 * 2 * 2  # ordered class pairs × span pairs × both orders
    truth = load_ground_truth(out / "ground_truth.txt", frame_counts=out / "frame_counts.txt")
    features_dir = sources[2]
    for splice in ids[:6]:
        segments = plan[plan["video"] == splice]
        order = segments["order"].iloc[0]
        spans = ["A", "B"] if order == "AB" else ["B", "A"]  # A: the target class's span
        assert list(segments["role"]) == ["N0", spans[0], "N1", spans[1], "N2"]
        # The ground truth marks exactly the two spans, where the plan put them.
        lengths = (segments["end"] - segments["start"]).to_numpy()
        labels = truth.labels_of(splice)
        expected = np.repeat([0, 1, 0, 1, 0], lengths).astype(bool)
        np.testing.assert_array_equal(labels, expected)
        mine = events[events["video"] == splice]
        starts = np.r_[0, np.cumsum(lengths)]
        assert mine[["start", "end"]].to_numpy().tolist() == [
            [starts[1], starts[2]],
            [starts[3], starts[4]],
        ]
        target, competitor = segments["target"].iloc[0], segments["competitor"].iloc[0]
        assert list(mine["class"]) == (
            [target, competitor] if order == "AB" else [competitor, target]
        )
        # The video decodes to the plan's frames, each from its source frame (lossless encode
        # of the sources; the splice itself is lossy, so compare grey levels loosely).
        with av.open(str(out / "videos" / f"{splice}.mp4")) as container:
            levels = [f.to_ndarray(format="rgb24").mean() for f in container.decode(video=0)]
        assert len(levels) == lengths.sum()
        source_levels = []
        for row in segments.itertuples():
            tag = int(row.source[-8:-5])
            source_levels += [(4 * (t % 50) + tag) % 256 for t in range(row.start, row.end)]
        assert np.max(np.abs(np.array(levels) - source_levels)) < 3
        spliced = np.load(out / "features" / f"{splice}.npy")
        expected_rows = np.concatenate(
            [
                np.load(features_dir / f"{row.source}.npy")[row.start // STEP : row.end // STEP]
                for row in segments.itertuples()
            ]
        )
        np.testing.assert_array_equal(spliced, expected_rows)


def test_same_seed_same_files_other_seed_other_plan(sources, tmp_path: Path) -> None:
    first, second, third = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    # one pair per class pair keeps the three builds small; every file is still compared
    assert cli_splices(sources, first, "--pairs", "1") == 0
    assert cli_splices(sources, second, "--pairs", "1") == 0
    names = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert names == sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
    for name in names:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
    assert cli_splices(sources, third, "--pairs", "1", "--seed", "8") == 0
    assert (third / "splices.csv").read_bytes() != (first / "splices.csv").read_bytes()


def test_selection_probe_reads_the_splices(sources, tmp_path: Path) -> None:
    """On the splices, a scorer that raises only its definition's span gets DC-SelΔ > 0 and a
    definition-blind one exactly 0."""
    out = tmp_path / "splices"
    assert cli_splices(sources, out) == 0
    truth = load_ground_truth(out / "ground_truth.txt", frame_counts=out / "frame_counts.txt")
    classes = load_events(out / "events.csv", truth)
    assert all(len(s) == 1 for s in classes.class_sets)
    codes = classes.codes
    following = np.column_stack(
        [np.isin(codes, [classes.class_sets.index(frozenset([c]))]) * 1.0 for c in CLASSES]
    )
    blind = np.repeat(truth.labels[:, None] * 1.0, 3, axis=1)
    models = [
        DefinitionScores("following", CLASSES, following, "synthetic"),
        DefinitionScores("blind", CLASSES, blind, "synthetic"),
    ]
    result = audit_definitions(truth, models, classes).probes.set_index(
        ["model", "probe", "metric"]
    )
    assert result.loc[("following", "DC-SelΔ", "auroc"), "value"] == 1.0
    assert result.loc[("blind", "DC-SelΔ", "auroc"), "value"] == 0.0
    assert result.loc[("following", "DC-SelΔ", "auroc"), "terms"] == 2 * 24


def test_too_few_classes_is_one_clear_error() -> None:
    labels = np.zeros(60, bool)
    labels[5:30] = True
    gt = GroundTruth(
        ("Arson001", "Normal001"), ("Arson", "Normal"), np.array([0, 30, 60]), labels, "gt.txt"
    )
    with pytest.raises(AuditInputError, match=r"at least two classes"):
        plan_splices(gt, classes_from_categories(gt), step_frames=2)


def test_real_ucf_crime_gives_the_papers_6240_splices() -> None:
    """[definitions] App. A.2: 6,240 UCF-Crime splices (13 classes → 156 ordered pairs × 20 ×
    2 orders); every span between 5 and 32 steps of 16 frames, inside an anomalous interval."""
    from helpers import realdata_dir

    gt = load_ground_truth(
        realdata_dir() / "urdmu" / "UCF_Annotation.txt", interval_end="inclusive"
    )
    plan = plan_splices(gt, classes_from_categories(gt))
    assert len(plan) == 6240
    for splice in plan[::97]:
        for segment in splice.segments:
            labels = gt.labels_of(segment.video)[segment.start : segment.end]
            steps = (segment.end - segment.start) / 16
            if segment.klass is None:
                assert steps == 8 and not labels.any()
            else:
                assert 5 <= steps <= 32 and labels.all() and segment.start % 16 == 0


def test_a_missing_source_video_is_one_error_and_writes_nothing(
    sources, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    truth, videos, _ = sources
    partial = tmp_path / "videos"
    partial.mkdir()
    for video in sorted(videos.glob("*.mp4"))[1:]:  # the first source is missing
        (partial / video.name).symlink_to(video)
    out = tmp_path / "splices"
    code = run(
        [
            "splices",
            "--gt",
            str(truth),
            "--frame-counts",
            str(truth.parent / "counts.txt"),
            "--videos",
            str(partial),
            "--step-frames",
            str(STEP),
            "--max-steps",
            "8",
            "--context-steps",
            "3",
            "--out",
            str(out),
        ]
    )
    assert code == 1
    assert not out.exists()
    missing = sorted(videos.glob("*.mp4"))[0].stem
    err = capsys.readouterr().err
    assert f"source videos have no file: {missing}" in " ".join(err.split())


def test_seeking_reads_the_same_frames_as_decoding_from_the_start(tmp_path: Path) -> None:
    """Frames after a keyframe seek equal the frames counted from the first one: on a clip
    with a keyframe every 5 frames and on a real UCF-Crime clip."""
    from helpers import REALDATA

    from vadscene.audit.splices import Segment, _frames_after_seek, _frames_counted

    clip = tmp_path / "gop.mp4"
    with av.open(str(clip), "w") as container:
        stream = container.add_stream("libx264", rate=25, options={"g": "5", "threads": "1"})
        stream.width, stream.height, stream.pix_fmt = 32, 24, "yuv420p"
        for t in range(60):
            image = np.full((24, 32, 3), 4 * t, np.uint8)
            frame = av.VideoFrame.from_ndarray(image, format="rgb24").reformat(format="yuv420p")
            container.mux(stream.encode(frame))
        container.mux(stream.encode())
    videos = [(clip, (32, 24), Segment("gop", 23, 41, "A", "x"))]
    real = REALDATA / "videos" / "holmesvad_Fighting033_x264_570_841.mp4"
    if real.is_file():
        videos.append((real, (320, 240), Segment("real", 150, 170, "A", "x")))
    for path, size, segment in videos:
        seeked = _frames_after_seek(path, segment, size)
        counted = _frames_counted(path, segment, size)
        assert seeked is not None and len(seeked) == len(counted) == segment.end - segment.start
        for mine, expected in zip(seeked, counted, strict=True):
            np.testing.assert_array_equal(mine, expected)
