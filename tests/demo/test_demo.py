"""Tests for vadscene.demo.

The planted properties are re-measured here from the decoded mp4 files with our own
statistics; the generator's metadata is only used to know which pole each video claims.
"""

import itertools
import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import av
import cv2
import numpy as np
import pytest

from vadscene.demo import (
    DEMO_MODELS,
    DemoBenchmark,
    DemoVideo,
    generate_demo_benchmark,
    load_demo_manifest,
)

FACTOR_POLES = {
    "color": {"color", "grayscale"},
    "resolution": {"high", "low"},
    "motion": {"high", "low"},
    "continuity": {"single-view", "multi-view"},
    "setting": {"outdoor", "indoor"},
    "crowd": {"few", "many"},
}
UCF_NAME = re.compile(r"^(?:(?P<category>[A-Z][A-Za-z]+)\d{3}|Normal_Videos_\d{3})_x264$")
SAMPLE_EVERY = 5  # frames between samples for the per-frame-expensive statistics
CUT_JUMP = 0.3  # grayscale-histogram L1 jump that only a change of camera produces


@dataclass(frozen=True)
class Decoded:
    """Statistics of one decoded video, computed independently of the generator."""

    num_frames: int
    chroma: float  # mean |R-G| + |G-B| over sampled frames
    sharpness: float  # mean variance of the Laplacian of the gray frame over sampled frames
    diff: np.ndarray  # diff[t] = mean |gray_t - gray_{t-1}|; diff[0] = nan
    residual: np.ndarray  # like diff, after undoing the global shift (camera shake)
    hist_jump: np.ndarray  # L1 distance of consecutive 32-bin gray histograms; [0] = nan


def _decode(path: Path) -> Decoded:
    capture = cv2.VideoCapture(str(path))
    chroma, sharpness, diff, residual, hist_jump = [], [], [np.nan], [np.nan], [np.nan]
    previous, previous_hist, n = None, None, 0
    while True:
        ok, bgr = capture.read()
        if not ok:
            break
        gray = cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)
        hist = np.bincount(gray.ravel() // 8, minlength=32) / gray.size
        current = gray.astype(np.float32)
        if n % SAMPLE_EVERY == 0:
            channels = bgr.astype(np.int16)
            chroma.append(
                (
                    np.abs(channels[..., 2] - channels[..., 1])
                    + np.abs(channels[..., 1] - channels[..., 0])
                ).mean()
            )
            sharpness.append(cv2.Laplacian(gray, cv2.CV_64F).var())
        if previous is not None:
            diff.append(np.abs(current - previous).mean())
            hist_jump.append(np.abs(hist - previous_hist).sum())
            (sx, sy), _ = cv2.phaseCorrelate(previous, current)
            dx, dy = (int(np.clip(round(s), -10, 10)) for s in (sx, sy))
            h, w = gray.shape
            inner = current[12 : h - 12, 12 : w - 12]
            shifted = previous[12 - dy : h - 12 - dy, 12 - dx : w - 12 - dx]
            residual.append(np.abs(inner - shifted).mean())
        previous, previous_hist, n = current, hist, n + 1
    capture.release()
    return Decoded(
        n,
        float(np.mean(chroma)),
        float(np.mean(sharpness)),
        np.array(diff),
        np.array(residual),
        np.array(hist_jump),
    )


def _normal_pairs(video: DemoVideo) -> np.ndarray:
    """Mask over frames t whose pair (t-1, t) lies entirely outside the anomalous intervals."""
    mask = np.ones(video.num_frames, bool)
    mask[0] = False
    for start, end in video.anomalous_intervals:
        mask[start : end + 1] = False
    return mask


def _anomalous_pairs(video: DemoVideo) -> np.ndarray:
    mask = np.zeros(video.num_frames, bool)
    for start, end in video.anomalous_intervals:
        mask[start + 1 : end] = True
    return mask


def _by(bench: DemoBenchmark, factor: str, pole: str) -> list[DemoVideo]:
    return [v for v in bench.videos if v.planted[factor] == pole]


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[DemoBenchmark, list]:
    calls: list[tuple[int, int]] = []

    def progress(done: int, total: int) -> None:
        calls.append((done, total))

    return generate_demo_benchmark(tmp_path_factory.mktemp("demo"), progress=progress), calls


@pytest.fixture(scope="module")
def bench(demo_template: Path) -> DemoBenchmark:
    """The benchmark inside the session's demo workspace (`vadscene demo`, seed 0): the same
    generator run as :func:`generated`, without rendering the videos a second time."""
    return load_demo_manifest(demo_template / "benchmark")


@pytest.fixture(scope="module")
def decoded(bench: DemoBenchmark) -> dict[str, Decoded]:
    return {v.video_id: _decode(bench.video_dir / f"{v.video_id}.mp4") for v in bench.videos}


def _load_scores(bench: DemoBenchmark, model: str, video: DemoVideo) -> np.ndarray:
    return np.load(bench.scores_dir / model / f"{video.video_id}.npy")


# --- layout, manifest, naming ---------------------------------------------------------------


@pytest.mark.slow  # renders the demo's videos again, to see the progress calls
def test_manifest_round_trips_and_progress_is_reported(generated) -> None:
    bench, calls = generated
    assert load_demo_manifest(bench.root) == bench
    assert calls == [(i, 12) for i in range(1, 13)]
    assert bench.models == DEMO_MODELS
    assert [m.name for m in DEMO_MODELS] == [
        "grayscale_keyed",
        "localizer",
        "video_constant",
        "random_baseline",
    ]


def test_load_demo_manifest_requires_a_generated_root(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_demo_manifest(tmp_path)


def test_video_ids_follow_ucf_crime_naming(bench: DemoBenchmark) -> None:
    assert len(bench.videos) == 12
    assert len({v.video_id for v in bench.videos}) == 12
    for video in bench.videos:
        match = UCF_NAME.match(video.video_id)
        assert match, video.video_id
        assert video.category == (match["category"] or "Normal")
        assert (video.category == "Normal") == (not video.anomalous_intervals)


def test_categories_and_factors_are_balanced_and_unconfounded(bench: DemoBenchmark) -> None:
    anomalous_categories = Counter(v.category for v in bench.videos if v.category != "Normal")
    assert len(anomalous_categories) >= 4
    assert max(anomalous_categories.values()) >= 2
    columns = {"anomalous": [str(bool(v.anomalous_intervals)) for v in bench.videos]}
    for video in bench.videos:
        assert video.planted.keys() == FACTOR_POLES.keys()
        for factor, pole in video.planted.items():
            assert pole in FACTOR_POLES[factor]
    for factor in FACTOR_POLES:
        columns[factor] = [v.planted[factor] for v in bench.videos]
    for a, b in itertools.combinations(columns, 2):
        pairs = Counter(zip(columns[a], columns[b], strict=True))
        assert len(pairs) == 4, f"{a} and {b} are confounded: {pairs}"
        assert min(pairs.values()) >= 2, f"{a} x {b} is unbalanced: {pairs}"


def test_models_json_lists_the_models(bench: DemoBenchmark) -> None:
    records = json.loads((bench.root / "models.json").read_text())
    assert [(r["name"], r["family"], r["behaviour"]) for r in records] == [
        (m.name, m.family, m.behaviour) for m in DEMO_MODELS
    ]
    assert {m.family for m in DEMO_MODELS} == {"demo-cnn", "demo-vlm"}
    for record in records:
        assert (bench.root / record["path"]).is_dir()


# --- videos ---------------------------------------------------------------------------------


def _top_level_boxes(path: Path) -> list[bytes]:
    data, boxes, offset = path.read_bytes(), [], 0
    while offset < len(data):
        size = int.from_bytes(data[offset : offset + 4], "big")
        boxes.append(data[offset + 4 : offset + 8])
        offset += size
    return boxes


def test_videos_are_browser_playable_h264_of_the_right_length(
    bench: DemoBenchmark, decoded: dict[str, Decoded]
) -> None:
    counts = dict(
        line.split() for line in (bench.root / "frame_counts.txt").read_text().splitlines()
    )
    assert sorted(counts) == sorted(v.video_id for v in bench.videos)
    for video in bench.videos:
        path = bench.video_dir / f"{video.video_id}.mp4"
        with av.open(str(path)) as container:
            stream = container.streams.video[0]
            assert stream.codec_context.name == "h264"
            assert stream.codec_context.pix_fmt == "yuv420p"
            assert (stream.codec_context.width, stream.codec_context.height) == (320, 240)
            assert float(stream.average_rate) == pytest.approx(video.fps)
        boxes = _top_level_boxes(path)
        assert boxes.index(b"moov") < boxes.index(b"mdat"), "not faststart"
        assert decoded[video.video_id].num_frames == video.num_frames
        assert int(counts[video.video_id]) == video.num_frames
        assert 5.0 <= video.num_frames / video.fps <= 20.0


def test_grayscale_videos_have_no_chroma(bench, decoded) -> None:
    gray = [decoded[v.video_id].chroma for v in _by(bench, "color", "grayscale")]
    colour = [decoded[v.video_id].chroma for v in _by(bench, "color", "color")]
    assert max(gray) < 1.0 < 10.0 < min(colour)


def test_low_resolution_videos_are_blurrier_than_every_sharp_one(bench, decoded) -> None:
    low = [decoded[v.video_id].sharpness for v in _by(bench, "resolution", "low")]
    high = [decoded[v.video_id].sharpness for v in _by(bench, "resolution", "high")]
    assert 5 * max(low) < min(high)


def test_high_motion_videos_move_more_on_normal_frames(bench, decoded) -> None:
    def motion(video: DemoVideo) -> float:
        return float(decoded[video.video_id].diff[_normal_pairs(video)].mean())

    low = [motion(v) for v in _by(bench, "motion", "low")]
    high = [motion(v) for v in _by(bench, "motion", "high")]
    assert 3 * max(low) < min(high)


def test_multi_view_videos_have_hard_cuts_and_single_view_ones_do_not(bench, decoded) -> None:
    # Camera shake makes every frame difference large in high-motion videos, so cuts are found
    # by a jump of the gray histogram (shift-invariant) and must also spike the difference.
    for video in bench.videos:
        stats, normal = decoded[video.video_id], _normal_pairs(video)
        jumps = stats.hist_jump[normal]
        if video.planted["continuity"] == "multi-view":
            cuts = normal & (stats.hist_jump > CUT_JUMP)
            assert cuts.any(), video.video_id
            assert (stats.diff[cuts] > 2 * np.median(stats.diff[normal])).all(), video.video_id
        else:
            assert jumps.max() < CUT_JUMP / 2, video.video_id


def test_anomalous_events_are_visible_in_the_pixels(bench, decoded) -> None:
    for video in bench.videos:
        if not video.anomalous_intervals:
            continue
        stats = decoded[video.video_id]
        steady = _normal_pairs(video) & (stats.hist_jump < CUT_JUMP)
        normal = stats.residual[steady].mean()
        anomalous = stats.residual[_anomalous_pairs(video)].mean()
        assert anomalous > 1.1 * normal, video.video_id


# --- ground truth ---------------------------------------------------------------------------


def test_ground_truth_uses_the_ucf_crime_format(bench: DemoBenchmark) -> None:
    lines = bench.ground_truth_path.read_text().splitlines()
    videos = {v.video_id: v for v in bench.videos}
    assert len(lines) == len(videos)
    parsed = {}
    for line in lines:
        name, category, *bounds = line.split()
        assert name.endswith(".mp4") and len(bounds) == 4
        video = videos[name.removesuffix(".mp4")]
        assert category == video.category
        numbers = [int(b) for b in bounds]
        pairs = zip(numbers[::2], numbers[1::2], strict=True)
        intervals = [(s, e) for s, e in pairs if (s, e) != (-1, -1)]
        for start, end in intervals:
            assert 0 <= start < end <= video.num_frames  # end exclusive
        assert (category == "Normal") == (not intervals)
        parsed[video.video_id] = tuple(intervals)
    assert parsed == {v.video_id: v.anomalous_intervals for v in bench.videos}
    anomalous = [i for i in parsed.values() if i]
    assert 0.35 <= len(anomalous) / len(parsed) <= 0.65
    assert any(len(i) == 2 for i in anomalous)


# --- scores ---------------------------------------------------------------------------------


def test_scores_are_per_frame_probabilities(bench: DemoBenchmark) -> None:
    for model, video in itertools.product(DEMO_MODELS, bench.videos):
        scores = _load_scores(bench, model.name, video)
        assert scores.dtype == np.float32 and scores.shape == (video.num_frames,)
        assert np.isfinite(scores).all()
        assert scores.min() >= 0.0 and scores.max() <= 1.0


def test_video_constant_is_constant_within_each_video(bench: DemoBenchmark) -> None:
    levels = []
    for video in bench.videos:
        scores = _load_scores(bench, "video_constant", video)
        assert (scores == scores[0]).all()
        levels.append(float(scores[0]))
    assert len(set(levels)) > 1


def test_localizer_ranks_anomalous_frames_higher_within_each_video(bench) -> None:
    for video in bench.videos:
        if not video.anomalous_intervals:
            continue
        scores = _load_scores(bench, "localizer", video)
        inside = np.zeros(video.num_frames, bool)
        for start, end in video.anomalous_intervals:
            inside[start:end] = True
        assert scores[inside].mean() > scores[~inside].mean(), video.video_id


def test_grayscale_keyed_scores_normal_grayscale_footage_higher(bench) -> None:
    def normal_mean(video: DemoVideo) -> float:
        scores = _load_scores(bench, "grayscale_keyed", video)
        inside = np.zeros(video.num_frames, bool)
        for start, end in video.anomalous_intervals:
            inside[start:end] = True
        return float(scores[~inside].mean())

    gray = [normal_mean(v) for v in _by(bench, "color", "grayscale")]
    colour = [normal_mean(v) for v in _by(bench, "color", "color")]
    assert min(gray) > max(colour)


# --- determinism ----------------------------------------------------------------------------


def _deterministic_files(root: Path) -> dict[str, bytes]:
    names = ["ground_truth.txt", "frame_counts.txt", "models.json", "demo.json"]
    files = {name: (root / name).read_bytes() for name in names}
    for path in sorted((root / "scores").rglob("*.npy")):
        files[str(path.relative_to(root))] = path.read_bytes()
    return files


@pytest.fixture(scope="module")
def regenerate(tmp_path_factory: pytest.TempPathFactory) -> Callable[[int], DemoBenchmark]:
    def run(seed: int) -> DemoBenchmark:
        return generate_demo_benchmark(tmp_path_factory.mktemp(f"seed{seed}"), seed=seed)

    return run


@pytest.mark.slow  # renders the demo again
def test_same_seed_gives_identical_files(bench, regenerate) -> None:
    again = regenerate(0)
    first, second = _deterministic_files(bench.root), _deterministic_files(again.root)
    assert len(first) == 4 + 4 * 12
    assert first == second
    assert again.videos == bench.videos
    # Single-threaded x264 without mbtree: the videos themselves repeat on this machine too.
    for video in bench.videos:
        name = f"{video.video_id}.mp4"
        assert (bench.video_dir / name).read_bytes() == (again.video_dir / name).read_bytes()


@pytest.mark.slow  # renders the demo again
def test_different_seed_changes_scores_but_not_the_design(bench, regenerate) -> None:
    other = regenerate(1)
    assert other.videos == bench.videos
    for model in DEMO_MODELS:
        for video in bench.videos:
            before = _load_scores(bench, model.name, video)
            after = _load_scores(other, model.name, video)
            assert not np.array_equal(before, after), (model.name, video.video_id)
