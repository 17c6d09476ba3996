"""Tests for vadscene.measure.statistics: statistics on generated videos of known order, the normal
mask,
the sampling mode, real clips, faults, and pickling across processes.

The generated clips are 160×120 H.264 at CRF 2 (nearly lossless, so a planted blur or speed
survives encoding). Expected orders come from how the clips are built, never from the code
under test; exact values are checked against a reference computed independently from PyAV's
``frame.to_ndarray()`` with ``cv2.Laplacian(CV_64F)`` + ``cv2.meanStdDev`` and numpy.
"""

from __future__ import annotations

import itertools
import multiprocessing as mp
import pickle
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import av
import cv2
import numpy as np
import pytest
from helpers import (
    assert_file_error,
    damage,
    realdata_dir,
    result_or_clean_error,
    write_video,
)
from support.clips import (
    audio_only_file,
    corrupt_video,
    cut_short,
    empty_file,
    non_video_file,
    truncated_video,
    write_clip,
    zero_frame_video,
)

from vadscene.core.errors import VadsceneError
from vadscene.measure import statistics as measure
from vadscene.measure.statistics import (
    MEASURE_VERSION,
    MeasurementError,
    MeasureParams,
    VideoMeasurement,
    measure_video,
)

W, H = 160, 120
REAL_CLIPS = {  # file -> frames (realdata/PROVENANCE.md)
    "holmesvad_Fighting033_x264_570_841.mp4": 271,
    "holmesvad_RoadAccidents133_x264_270_451.mp4": 181,
    "lavad_Robbery102_x264.mp4": 1827,
    "vtest_lamminhthien.avi": 341,
}


# --- building clips -----------------------------------------------------------------------


def encode(path: Path, images: Iterable[np.ndarray], *, pix_fmt: str = "yuv420p") -> Path:
    """Encode RGB images with libx264 at CRF 2 (nearly lossless), 30 fps."""
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=30)
        stream.width, stream.height, stream.pix_fmt = W, H, pix_fmt
        stream.options = {"crf": "2"}
        for image in images:
            container.mux(stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")))
        container.mux(stream.encode())
    return path


def texture(seed: int, shape: tuple[int, int] = (H, W), sigma: float = 1.0) -> np.ndarray:
    """Colourful noise smoothed over ~sigma px and stretched to the full 0-255 range."""
    noise = np.random.default_rng(seed).integers(0, 256, (*shape, 3), dtype=np.uint8)
    smooth = cv2.GaussianBlur(noise, (0, 0), sigma)
    return cv2.normalize(smooth, None, 0, 255, cv2.NORM_MINMAX)


def gray(image: np.ndarray) -> np.ndarray:
    """The same picture with R = G = B."""
    return cv2.cvtColor(cv2.cvtColor(image, cv2.COLOR_RGB2GRAY), cv2.COLOR_GRAY2RGB)


def drifting(frames: int, blur: float = 0.0, seed: int = 0) -> Iterator[np.ndarray]:
    """A texture drifting 1 px/frame to the right, blurred by ``blur`` (0 = sharp)."""
    base = texture(seed, (H, W + frames))
    for t in range(frames):
        image = np.ascontiguousarray(base[:, frames - t : frames - t + W])
        yield cv2.GaussianBlur(image, (0, 0), blur) if blur else image


def moving_square(speed: int, frames: int = 20) -> Iterator[np.ndarray]:
    """A 24-px textured square crossing a still, smooth background at ``speed`` px/frame."""
    background = texture(1, sigma=6.0)
    square = texture(2, (24, 24), sigma=1.5)
    for t in range(frames):
        image = background.copy()
        x = 8 + speed * t
        image[48:72, x : x + 24] = square
        yield image


def still_with_event(frames: int = 60, event: tuple[int, int] = (20, 40)) -> Iterator[np.ndarray]:
    """A still picture, except a new random texture every frame during ``event``."""
    still = texture(3)
    for t in range(frames):
        yield texture(100 + t) if event[0] <= t < event[1] else still


def reference(path: Path, normal: np.ndarray | None = None) -> tuple[float, float | None, float]:
    """The three statistics by their definitions, from PyAV's own planar ndarray, mapped from
    the clip's limited range (luma 16-235, chroma 16-240) onto the 8-bit full-range scale."""
    sharpness, chroma, lumas = [], [], []
    with av.open(str(path)) as container:
        for frame in container.decode(video=0):
            assert frame.format.name == "yuv420p"
            assert frame.color_range != 2  # not flagged full range ("JPEG")
            h, w = frame.height, frame.width
            planar = frame.to_ndarray()  # (h * 3/2, w): Y, then U, then V
            luma = np.ascontiguousarray(planar[:h]).astype(float) * 255 / 219
            chroma_planes = (planar[h:].reshape(2, h // 2, w // 2).astype(float) - 128) * 255 / 224
            sharpness.append(cv2.meanStdDev(cv2.Laplacian(luma, cv2.CV_64F))[1][0, 0] ** 2)
            chroma.append(np.abs(chroma_planes).mean(axis=(1, 2)).sum())
            lumas.append(luma)
    normal = np.ones(len(lumas), bool) if normal is None else normal
    diffs = [
        np.abs(lumas[t] - lumas[t - 1]).mean()
        for t in range(1, len(lumas))
        if normal[t] and normal[t - 1]
    ]
    return (
        float(np.mean(sharpness)),
        float(np.mean(diffs)) if diffs else None,
        float(np.mean(chroma)),
    )


def measure_error(path: Path, *fragments: str, **kwargs: Any) -> MeasurementError:
    return assert_file_error(MeasurementError, measure_video, path, *fragments, **kwargs)


@pytest.fixture(scope="module")
def clips(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The generated clips shared by several tests (encoded once per module)."""
    root = tmp_path_factory.mktemp("clips")
    made = {
        f"blur{sigma}": encode(root / f"blur{sigma}.mp4", drifting(30, sigma))
        for sigma in (0, 1, 2, 4)
    }
    made |= {f"speed{v}": encode(root / f"speed{v}.mp4", moving_square(v)) for v in (0, 1, 3, 6)}
    made["event"] = encode(root / "event.mp4", still_with_event())
    made["colour"] = encode(root / "colour.mp4", drifting(30))
    made["gray"] = encode(root / "gray.mp4", map(gray, drifting(30)))
    return made


# --- the statistics order videos as built ------------------------------------------------


def test_more_blur_means_less_sharpness(clips: dict[str, Path]) -> None:
    sharpness = [measure_video(clips[f"blur{sigma}"]).sharpness for sigma in (0, 1, 2, 4)]
    assert all(a > b for a, b in itertools.pairwise(sharpness)), sharpness
    assert sharpness[0] > 10 * sharpness[-1]


def test_faster_object_means_more_motion(clips: dict[str, Path]) -> None:
    motion = [measure_video(clips[f"speed{v}"]).motion for v in (0, 1, 3, 6)]
    assert all(a is not None for a in motion)
    assert all(a < b for a, b in itertools.pairwise(motion)), motion
    assert motion[0] < 0.1  # nothing moves: only coding noise


def test_grayscale_has_no_chroma_colour_has_plenty(clips: dict[str, Path]) -> None:
    threshold = 2.0  # grey levels of mean |U-128| + |V-128|
    colour, grey = measure_video(clips["colour"]), measure_video(clips["gray"])
    assert grey.chroma < 0.5 < threshold < 5.0 < colour.chroma
    # Same luma content: colour is the only difference between the two clips.
    assert grey.sharpness == pytest.approx(colour.sharpness, rel=0.05)


def test_statistics_match_their_definitions(clips: dict[str, Path]) -> None:
    for name in ("blur0", "speed3", "colour"):
        result = measure_video(clips[name])
        sharpness, motion, chroma = reference(clips[name])
        assert result.sharpness == pytest.approx(sharpness, rel=1e-12)
        assert result.motion == pytest.approx(motion, rel=1e-12)
        assert result.chroma == pytest.approx(chroma, rel=1e-12)


def test_result_fields(clips: dict[str, Path]) -> None:
    result = measure_video(str(clips["blur0"]))  # str paths work too
    assert (result.frames_read, result.motion_pairs, result.decoder) == (30, 29, "pyav")
    assert result.params == MeasureParams().as_dict()
    assert 0 < result.seconds < 10
    assert result.as_dict()["frames_read"] == 30


# --- the normal mask ------------------------------------------------------------------------


def event_mask(frames: int = 60, event: tuple[int, int] = (20, 40)) -> np.ndarray:
    normal = np.ones(frames, bool)
    normal[event[0] : event[1]] = False
    return normal


def test_anomalous_segment_is_excluded_from_motion(clips: dict[str, Path], tmp_path: Path) -> None:
    normal = event_mask()
    everything = measure_video(clips["event"])
    masked = measure_video(clips["event"], normal_mask=normal)
    still = measure_video(encode(tmp_path / "still.mp4", still_with_event(event=(0, 0))))
    assert masked.motion_pairs == 19 + 19  # pairs inside frames 0-19 and inside 40-59
    assert everything.motion_pairs == 59
    assert masked.motion is not None and everything.motion is not None
    assert masked.motion < 0.02 * everything.motion
    assert masked.motion == pytest.approx(still.motion, abs=0.05)
    assert masked.motion == pytest.approx(reference(clips["event"], normal)[1], rel=1e-12)
    # Sharpness and chroma describe the whole video: the mask does not touch them.
    assert (masked.sharpness, masked.chroma) == (everything.sharpness, everything.chroma)


def test_motion_is_none_without_a_normal_pair(clips: dict[str, Path], tmp_path: Path) -> None:
    alternating = np.arange(60) % 2 == 0
    for mask in (alternating, np.zeros(60, bool)):
        result = measure_video(clips["event"], normal_mask=mask)
        assert (result.motion, result.motion_pairs, result.frames_read) == (None, 0, 60)
    single = measure_video(encode(tmp_path / "one.mp4", drifting(1)))
    assert (single.motion, single.motion_pairs, single.frames_read) == (None, 0, 1)


def test_mask_a_few_frames_short_or_long_is_aligned_at_the_start(clips: dict[str, Path]) -> None:
    # 60 frames: up to 3 frames (5 %) of difference are accepted.
    short = event_mask()[:57]  # frames 57-59 are missing from the mask: they count as normal
    assert measure_video(clips["event"], normal_mask=short).motion_pairs == 38
    short[-1] = False  # frame 56 anomalous: pairs (55, 56) and (56, 57) drop out
    assert measure_video(clips["event"], normal_mask=short).motion_pairs == 36
    long = np.concatenate([event_mask(), np.zeros(3, bool)])  # entries past the end: ignored
    assert measure_video(clips["event"], normal_mask=long).motion_pairs == 38


@pytest.mark.parametrize("length", [56, 64])
def test_mask_grossly_off_is_an_error(clips: dict[str, Path], length: int) -> None:
    measure_error(
        clips["event"],
        f"normal_mask has {length} entries but 60 frames were decoded",
        normal_mask=np.ones(length, bool),
    )


@pytest.mark.parametrize("mask", [np.ones(60, np.int64), np.ones((60, 1), bool)], ids=str)
def test_mask_must_be_a_1d_bool_array(clips: dict[str, Path], mask: np.ndarray) -> None:
    """0/1 integers are refused: anomaly labels use 1 for anomalous, the mask 1 for normal."""
    with pytest.raises(ValueError, match="1-D bool array"):
        measure_video(clips["event"], normal_mask=mask)


def test_mask_may_be_a_list_of_bools(clips: dict[str, Path]) -> None:
    mask = event_mask().tolist()
    assert measure_video(clips["event"], normal_mask=mask).motion_pairs == 38  # type: ignore[arg-type]


# --- parameters and the sampling mode ------------------------------------------------------


def test_params_are_the_cache_key() -> None:
    libavcodec = ".".join(map(str, av.library_versions["libavcodec"]))
    assert MeasureParams().as_dict() == {
        "measure_version": MEASURE_VERSION,
        "decoder": "pyav",
        "decoder_versions": f"PyAV {av.__version__}, libavcodec {libavcodec}",
        "stride": 1,
    }
    assert MeasureParams(stride=4).as_dict()["stride"] == 4


@pytest.mark.parametrize("stride", [0, -2, 1.5, True, "2"])
def test_bad_stride(stride: object) -> None:
    with pytest.raises(ValueError, match="stride"):
        MeasureParams(stride=stride)  # type: ignore[arg-type]


@pytest.mark.parametrize("stride", [2, 3, 4, 8])
def test_sampling_picks_one_frame_per_block_at_varying_offsets(stride: int) -> None:
    picked = [t for t in range(stride * 200) if measure._is_analysed(t, stride)]
    assert [t // stride for t in picked] == list(range(200))  # exactly one per block
    offsets = [t % stride for t in picked]
    assert set(offsets) == set(range(stride))  # not locked to one phase
    assert np.bincount(offsets).min() >= 200 / stride * 0.8  # evenly spread


def test_sampling_mode_keeps_motion_exact(clips: dict[str, Path]) -> None:
    for name in ("blur0", "speed6", "colour"):
        full = measure_video(clips[name])
        sampled = measure_video(clips[name], params=MeasureParams(stride=4))
        assert (sampled.frames_read, sampled.motion_pairs) == (full.frames_read, full.motion_pairs)
        assert sampled.motion == full.motion
        assert sampled.sharpness == pytest.approx(full.sharpness, rel=0.05)
        assert sampled.chroma == pytest.approx(full.chroma, rel=0.05)
        assert sampled.params["stride"] == 4


# --- pixel formats ------------------------------------------------------------------------


def test_gray_pixel_format_has_zero_chroma(tmp_path: Path) -> None:
    result = measure_video(encode(tmp_path / "y.mp4", drifting(10), pix_fmt="gray"))
    assert (result.chroma, result.frames_read) == (0.0, 10)
    assert result.sharpness > 100


def test_ten_bit_video_is_measured_on_the_eight_bit_scale(
    clips: dict[str, Path], tmp_path: Path
) -> None:
    ten_bit = measure_video(encode(tmp_path / "10.mp4", drifting(30), pix_fmt="yuv420p10le"))
    eight_bit = measure_video(clips["colour"])
    assert ten_bit.frames_read == 30
    assert ten_bit.sharpness == pytest.approx(eight_bit.sharpness, rel=0.1)
    assert ten_bit.chroma == pytest.approx(eight_bit.chroma, rel=0.1)


# --- real clips (read in place) -----------------------------------------------------------


@pytest.mark.realdata
@pytest.mark.parametrize("name", sorted(REAL_CLIPS))
def test_real_clips(name: str) -> None:
    result = measure_video(realdata_dir() / "videos" / name)
    assert result.frames_read == REAL_CLIPS[name]
    assert result.motion_pairs == REAL_CLIPS[name] - 1
    assert result.sharpness > 0 and result.motion is not None and result.motion > 0
    if name.startswith("vtest"):  # overhead black-and-white footage
        assert result.chroma < 1.0
    else:  # colour footage (a UCF-Crime clip, or LAVAD's colour rendering)
        assert result.chroma > 5.0


@pytest.mark.realdata
def test_real_clip_matches_definitions() -> None:
    path = realdata_dir() / "videos" / "holmesvad_Fighting033_x264_570_841.mp4"
    normal = np.ones(271, bool)
    normal[100:180] = False
    result = measure_video(path, normal_mask=normal)
    sharpness, motion, chroma = reference(path, normal)
    # The reference scales every pixel before summing: float rounding, not a different value.
    assert result.sharpness == pytest.approx(sharpness, rel=1e-9)
    assert result.motion == pytest.approx(motion, rel=1e-9)
    assert result.chroma == pytest.approx(chroma, rel=1e-9)


@pytest.mark.realdata
def test_truncated_real_mp4(tmp_path: Path) -> None:
    source = realdata_dir() / "videos" / "holmesvad_Fighting033_x264_570_841.mp4"
    measure_error(cut_short(tmp_path / "cut.mp4", 0.3, source=source), "cannot open")


# --- faults ---------------------------------------------------------------------------------


def test_missing_file(tmp_path: Path) -> None:
    measure_error(tmp_path / "nope.mp4", "file not found")


def test_directory(tmp_path: Path) -> None:
    (tmp_path / "dir.mp4").mkdir()
    measure_error(tmp_path / "dir.mp4", "not a regular file")


def test_empty_file(tmp_path: Path) -> None:
    measure_error(empty_file(tmp_path / "empty.mp4"), "empty file")


def test_text_file_renamed_mp4(tmp_path: Path) -> None:
    measure_error(non_video_file(tmp_path / "notes.mp4"), "cannot open", "Invalid data")


def test_truncated_mp4(tmp_path: Path) -> None:
    """The first 30 % of an encoded mp4: the index (moov, written last) is missing."""
    path = truncated_video(
        tmp_path / "cut.mp4", frames=100, width=W, height=H, faststart=False, fraction=0.3
    )
    measure_error(path, "cannot open")


def test_truncated_faststart_mp4(tmp_path: Path) -> None:
    """Index first: the file opens, and its last packet is flagged incomplete."""
    path = truncated_video(
        tmp_path / "cut.mp4", frames=100, width=W, height=H, faststart=True, fraction=0.6
    )
    measure_error(path, "truncated or damaged", "is incomplete")


def cut_after_packet(path: Path, packets: int) -> Path:
    """Cut ``path`` right after its ``packets``-th video packet (no half-written packet)."""
    with av.open(str(path)) as container:
        ends = [p.pos + p.size for p in container.demux(video=0) if p.size]
    return cut_short(path, ends[packets - 1] / path.stat().st_size)


@pytest.mark.parametrize(("name", "faststart"), [("cut.avi", False), ("cut.mp4", True)])
def test_file_cut_on_a_packet_boundary_is_a_failure_not_a_partial_measurement(
    tmp_path: Path, name: str, faststart: bool
) -> None:
    codec = "mpeg4" if name.endswith(".avi") else "libx264"
    path = write_clip(
        tmp_path / name, codec=codec, frames=100, width=W, height=H, faststart=faststart
    )
    cut_after_packet(path, 40)
    measure_error(path, "truncated", "declares 100 frames")
    partial = measure_video(path, allow_partial=True)
    assert partial.frames_read == 40 and partial.motion_pairs == 39


def test_allow_partial_skips_an_incomplete_last_packet(tmp_path: Path) -> None:
    path = truncated_video(
        tmp_path / "cut.mp4", frames=100, width=W, height=H, faststart=True, fraction=0.6
    )
    partial = measure_video(path, allow_partial=True, normal_mask=np.ones(100, bool))
    assert 0 < partial.frames_read < 100 and partial.motion_pairs == partial.frames_read - 1


def test_fewer_frames_than_registered_is_a_failure(clips: dict[str, Path]) -> None:
    measure_error(
        clips["blur0"], "partial read", "decoded 30 frames", "registered 31", expected_frames=31
    )
    assert measure_video(clips["blur0"], expected_frames=30).frames_read == 30


@pytest.mark.realdata
@pytest.mark.parametrize("fraction", [0.45, 0.5, 0.9])
def test_truncated_real_avi(tmp_path: Path, fraction: float) -> None:
    source = realdata_dir() / "videos" / "vtest_lamminhthien.avi"
    measure_error(cut_short(tmp_path / "cut.avi", fraction, source=source), "truncated")


def test_audio_only_file(tmp_path: Path) -> None:
    measure_error(audio_only_file(tmp_path / "sound.mp4"), "no video stream")


def test_zero_frames(tmp_path: Path) -> None:
    measure_error(zero_frame_video(tmp_path / "nothing.avi"), "zero frames")


def test_garbage_payload_has_no_decodable_frame(tmp_path: Path) -> None:
    path = corrupt_video(tmp_path / "garbage.mp4", frames=50)  # index intact, frames random
    measure_error(path, "no decodable frame")


class FailingContainer:
    """A real container whose demuxer raises FFmpeg's "invalid data" at packet ``fail_at``."""

    def __init__(self, container: av.container.InputContainer, fail_at: int) -> None:
        self._container, self._fail_at = container, fail_at

    def __enter__(self) -> FailingContainer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._container.close()

    def demux(self, stream: av.video.stream.VideoStream) -> Iterator[av.Packet]:
        for index, packet in enumerate(self._container.demux(stream)):
            if index == self._fail_at:
                raise av.InvalidDataError(22, "Invalid data found when processing input")
            yield packet


@pytest.mark.parametrize(
    ("fail_at", "reason"), [(0, "no decodable frame"), (20, "decoding failed after")]
)
def test_failure_midway_is_an_error_not_a_partial_measurement(
    clips: dict[str, Path], monkeypatch: pytest.MonkeyPatch, fail_at: int, reason: str
) -> None:
    real_open = measure._open

    def failing_open(path: Path) -> tuple[FailingContainer, av.video.stream.VideoStream]:
        container, stream = real_open(path)
        return FailingContainer(container, fail_at), stream

    monkeypatch.setattr(measure, "_open", failing_open)
    error = measure_error(clips["event"], reason, "Invalid data")
    if fail_at:  # the frames decoded before the failure are named (x264 delays a few)
        decoded = int(error.reason.split("after ")[1].split(" frames")[0])
        assert 0 < decoded <= fail_at


@pytest.mark.parametrize(("name", "codec"), [("c.mp4", "libx264"), ("c.avi", "mpeg4")])
@pytest.mark.parametrize("seed", range(6))
def test_damaged_files_never_raise_raw_exceptions(
    tmp_path: Path, name: str, codec: str, seed: int
) -> None:
    """Random truncations and byte smashes either measure or raise MeasurementError."""
    path = damage(write_video(tmp_path / name, codec, frames=30), seed)
    result = result_or_clean_error(measure_video, MeasurementError, path)
    assert result is None or result.frames_read > 0


# --- pickling: results and errors travel back from worker processes ------------------------


def test_error_and_result_pickle(clips: dict[str, Path], tmp_path: Path) -> None:
    error = measure_error(tmp_path / "nope.mp4", "file not found")
    clone = pickle.loads(pickle.dumps(error))
    assert isinstance(clone, VadsceneError)
    assert (type(clone), clone.path, clone.reason, str(clone)) == (
        MeasurementError,
        error.path,
        error.reason,
        str(error),
    )
    result = measure_video(clips["speed3"], params=MeasureParams(stride=2))
    assert pickle.loads(pickle.dumps(result)) == result
    assert pickle.loads(pickle.dumps(MeasureParams(stride=2))) == MeasureParams(stride=2)


def test_measure_video_runs_in_a_spawned_process_pool(
    clips: dict[str, Path], tmp_path: Path
) -> None:
    missing = tmp_path / "nope.mp4"
    local = measure_video(clips["event"], normal_mask=event_mask())
    with ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("spawn")) as pool:
        remote = pool.submit(measure_video, clips["event"], normal_mask=event_mask()).result()
        failure = pool.submit(measure_video, missing).exception()
    assert isinstance(remote, VideoMeasurement)
    assert remote.sharpness == local.sharpness and remote.motion == local.motion
    assert isinstance(failure, MeasurementError)
    assert (failure.path, failure.reason) == (missing, "file not found")
