"""Small real video clips, and files that are not readable videos, for the tests to scan,
probe and measure: :func:`write_clip` encodes a tiny clip with PyAV; the other writers damage
one, or make a file that only looks like a video."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import av
import numpy as np

CLIP_FRAMES = 30


def write_clip(
    path: Path,
    *,
    frames: int = CLIP_FRAMES,
    faststart: bool = False,
    codec: str = "libx264",
    fps: int = 25,
    width: int = 64,
    height: int = 48,
    pix_fmt: str = "yuv420p",
    encoder_options: dict[str, str] | None = None,
) -> Path:
    """A tiny real clip (a moving bar on a changing background), the kind of video the
    workspace tests use; ``faststart`` writes an MP4's index (moov) before the frames."""
    path.parent.mkdir(parents=True, exist_ok=True)
    options = {"movflags": "faststart"} if faststart else {}
    with av.open(str(path), "w", options=options) as container:
        stream = container.add_stream(codec, rate=fps, options=encoder_options or {})
        stream.width, stream.height, stream.pix_fmt = width, height, pix_fmt
        for i in range(frames):
            image = np.full((height, width, 3), (i * 9) % 256, dtype=np.uint8)
            image[:, (i * 3) % width] = 255
            frame = av.VideoFrame.from_ndarray(image, format="rgb24").reformat(format=pix_fmt)
            container.mux(stream.encode(frame))
        container.mux(stream.encode())
    return path


# Bad video files, each written to ``path`` (which is returned). The scan and measure cases of
# :mod:`support.bad_input` use :data:`BAD_FILES`; ``tests/video/test_video.py`` and
# ``tests/measure/test_measure.py`` use them all.


def cut_short(path: Path, fraction: float = 0.5, *, source: Path | None = None) -> Path:
    """Keep the first ``fraction`` of the bytes of ``source`` (default: ``path`` itself)."""
    data = (source or path).read_bytes()
    path.write_bytes(data[: int(len(data) * fraction)])
    return path


def corrupt_video(path: Path, *, frames: int = CLIP_FRAMES) -> Path:
    """Intact header and index, random frames: opens, but nothing decodes."""
    data = bytearray(write_clip(path, frames=frames, faststart=True).read_bytes())
    payload = data.index(b"mdat") + 4  # moov (the index) stays intact, the frames do not
    data[payload:] = np.random.default_rng(0).bytes(len(data) - payload)
    path.write_bytes(data)
    return path


def truncated_video(
    path: Path, *, frames: int = 60, faststart: bool = True, fraction: float = 0.5, **clip: Any
) -> Path:
    """The first ``fraction`` of a clip (``clip``: more :func:`write_clip` options). With its
    index first (``faststart``) the index promises frames that are missing; without, an MP4
    loses its index (written last)."""
    return cut_short(write_clip(path, frames=frames, faststart=faststart, **clip), fraction)


def empty_file(path: Path) -> Path:
    path.write_bytes(b"")
    return path


def non_video_file(path: Path) -> Path:
    """Text under a video's name."""
    path.write_text("these are not the frames you are looking for\n" * 20, encoding="utf-8")
    return path


def zero_frame_video(path: Path) -> Path:
    """An AVI with a video stream and not one frame."""
    with av.open(str(path), "w") as container:
        stream = container.add_stream("mpeg4", rate=25)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        container.start_encoding()
    return path


def audio_only_file(path: Path, *, cover_art: bool = False) -> Path:
    """A short silent AAC track; ``cover_art`` adds an mjpeg cover picture, which FFmpeg lists
    as a video stream although it is no video."""
    with av.open(str(path), "w") as container:
        audio = container.add_stream("aac", rate=8000)
        if cover_art:
            cover = container.add_stream("mjpeg", rate=1)
            cover.width = cover.height = 32
            cover.pix_fmt = "yuvj420p"
            cover.disposition = av.stream.Disposition.attached_pic
            picture = av.VideoFrame.from_ndarray(np.zeros((32, 32, 3), np.uint8), format="rgb24")
            container.mux(cover.encode(picture))
            container.mux(cover.encode())
        for i in range(10):
            samples = np.zeros((1, 1024), dtype=np.float32)
            frame = av.AudioFrame.from_ndarray(samples, format="fltp", layout="mono")
            frame.sample_rate, frame.pts = 8000, i * 1024
            container.mux(audio.encode(frame))
        container.mux(audio.encode())
    return path


def unknown_codec_video(path: Path) -> Path:
    """An AVI whose codec fourcc names no codec FFmpeg knows."""
    data = write_clip(path, codec="mpeg4").read_bytes()
    path.write_bytes(data.replace(b"FMP4", b"QQQQ"))
    return path


BAD_FILES: dict[str, Callable[[Path], Path]] = {
    "corrupt_video": corrupt_video,
    "truncated_video": truncated_video,
    "empty_file": empty_file,
    "non_video_file": non_video_file,
}
"""Ways to make a file that is not a readable video, by name."""
