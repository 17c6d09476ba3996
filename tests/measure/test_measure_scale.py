"""One scale for every pixel format: the same picture gives the same statistics whether it is
coded 8-bit limited range (H.264), 8-bit full range (MJPEG), 10-bit (H.264, HEVC) or with
4:2:2 / 4:4:4 chroma.

The clips are encoded by the ``ffmpeg`` binary from one raw RGB source, each nearly lossless,
so the only differences between them are the pixel format and the codec's rounding. The
content has fine luma texture and smooth colour (chroma subsampling barely changes it), so a
scale error shows up as a ratio far outside 1 % (limited vs full range: 255/219 = +16 % on
motion, +36 % on sharpness; 10-bit read as 8-bit: a factor of 4 or 16).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest

from vadscene.measure.statistics import VideoMeasurement, measure_video

W, H, FRAMES = 160, 120, 12

pytestmark = pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="needs the ffmpeg binary")


def pictures(blur: float = 0.0) -> Iterator[np.ndarray]:
    """Grey texture drifting 1 px/frame plus a smooth colour tint; RGB, values inside 5-250."""
    noise = np.random.default_rng(5).integers(0, 256, (H, W + FRAMES), dtype=np.uint8)
    luma = cv2.normalize(cv2.GaussianBlur(noise, (0, 0), 1.0), None, 50, 205, cv2.NORM_MINMAX)
    x = np.arange(W + FRAMES, dtype=float)
    tint = 45 * np.sin(2 * np.pi * x / 90)  # varies over 90 px: survives 2x chroma subsampling
    for t in range(FRAMES):
        grey = luma[:, FRAMES - t : FRAMES - t + W].astype(float)
        shift = tint[FRAMES - t : FRAMES - t + W]
        rgb = np.stack([grey + shift, grey, grey - shift], axis=-1)
        image = np.clip(rgb, 0, 255).astype(np.uint8)
        yield cv2.GaussianBlur(image, (0, 0), blur) if blur else image


# name -> (file suffix, ffmpeg output options); all lossless except "mjpeg-8bit-full", so
# the clips differ only in pixel format and rounding.
X264_LOSSLESS = ["-c:v", "libx264", "-qp", "0"]
X265_LOSSLESS = ["-c:v", "libx265", "-x265-params", "lossless=1:log-level=0"]
FORMATS: dict[str, tuple[str, list[str]]] = {
    "h264-8bit-limited": (".mp4", [*X264_LOSSLESS, "-pix_fmt", "yuv420p"]),
    # Lossless JPEG: full-range yuvj420p, decoded by FFmpeg's MJPEG decoder.
    "ljpeg-8bit-full": (".avi", ["-c:v", "ljpeg", "-pix_fmt", "yuvj420p"]),
    "h264-8bit-full": (
        ".mp4",
        ["-vf", "scale=out_range=full", *X264_LOSSLESS, "-pix_fmt", "yuvj420p"],
    ),
    "h264-10bit": (".mp4", [*X264_LOSSLESS, "-pix_fmt", "yuv420p10le"]),
    "hevc-10bit": (".mp4", [*X265_LOSSLESS, "-pix_fmt", "yuv420p10le"]),
    "h264-10bit-422": (".mp4", [*X264_LOSSLESS, "-pix_fmt", "yuv422p10le"]),
    "h264-8bit-444": (".mp4", [*X264_LOSSLESS, "-pix_fmt", "yuv444p"]),
    "hevc-10bit-444": (".mp4", [*X265_LOSSLESS, "-pix_fmt", "yuv444p10le"]),
    "hevc-12bit": (".mp4", [*X265_LOSSLESS, "-pix_fmt", "yuv420p12le"]),
    "mjpeg-8bit-full": (
        ".avi",
        ["-c:v", "mjpeg", "-q:v", "1", "-qmin", "1", "-pix_fmt", "yuvj420p"],
    ),
}
LOSSY = {"mjpeg-8bit-full": 0.03}  # JPEG quantisation removes a little fine detail even at q=1
REFERENCE = "h264-8bit-limited"


def has_encoder(name: str) -> bool:
    listing = subprocess.run(
        ["ffmpeg", "-hide_banner", "-encoders"], capture_output=True, text=True, check=True
    ).stdout
    return any(line.split()[1:2] == [name] for line in listing.splitlines() if line.strip())


def codec(options: list[str]) -> str:
    return options[options.index("-c:v") + 1]


def encode(path: Path, options: list[str], blur: float = 0.0) -> Path:
    """Encode :func:`pictures` with the ffmpeg binary (raw RGB on stdin), 25 fps."""
    raw = b"".join(image.tobytes() for image in pictures(blur))
    command = ["ffmpeg", "-y", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", "rgb24"]
    command += ["-s", f"{W}x{H}", "-r", "25", "-i", "-", *options, str(path)]
    subprocess.run(command, input=raw, check=True, capture_output=True)
    return path


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> dict[str, VideoMeasurement]:
    root = tmp_path_factory.mktemp("formats")
    results = {}
    for name, (suffix, options) in FORMATS.items():
        if has_encoder(codec(options)):
            results[name] = measure_video(encode(root / f"{name}{suffix}", options))
    return results


@pytest.mark.parametrize("name", [n for n in FORMATS if n != REFERENCE])
@pytest.mark.parametrize("statistic", ["sharpness", "motion", "chroma"])
def test_same_picture_same_statistic_in_every_format(
    measured: dict[str, VideoMeasurement], name: str, statistic: str
) -> None:
    if name not in measured or REFERENCE not in measured:
        pytest.skip(f"ffmpeg has no encoder for {name}")
    reference = getattr(measured[REFERENCE], statistic)
    value = getattr(measured[name], statistic)
    assert measured[name].frames_read == FRAMES
    tolerance = LOSSY.get(name, 0.01)
    assert value == pytest.approx(reference, rel=tolerance), (name, statistic, value / reference)


def test_blurred_ten_bit_clip_is_less_sharp_than_a_sharp_eight_bit_one(tmp_path: Path) -> None:
    """Dithering a 10-bit plane down to 8 bits adds fine noise the Laplacian responds to; on
    the native plane a blurred clip stays far below a sharp one."""
    sharp = measure_video(encode(tmp_path / "sharp.mp4", FORMATS[REFERENCE][1]))
    blurred = [
        measure_video(encode(tmp_path / f"blur{label}.mp4", options, blur=3.0))
        for label, options in (
            ("h264", FORMATS["h264-10bit"][1]),
            ("hevc", FORMATS["hevc-10bit"][1]),
        )
        if has_encoder(codec(options))
    ]
    assert blurred
    # 8-bit rounding adds its own fine noise (~20/12 code values² of Laplacian variance), so
    # the blurred 8-bit clip is an upper bound for the blurred 10-bit one, not its equal.
    blurred_8bit = measure_video(encode(tmp_path / "blur8.mp4", FORMATS[REFERENCE][1], blur=3.0))
    for result in blurred:
        assert result.sharpness < 0.1 * sharp.sharpness
        assert result.sharpness <= blurred_8bit.sharpness * 1.05
