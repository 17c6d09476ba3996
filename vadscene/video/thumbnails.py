"""Filmstrips: evenly spaced thumbnails of a video, judged at a glance under the player.

Continuity cuts, field of view and setting show in a row of stills without watching the whole
clip. A filmstrip is one JPEG holding :data:`FILMSTRIP_THUMBS` thumbnails side by side, taken at
the centres of equal segments of the video (:func:`filmstrip_frames`), so frame ``k`` of the
strip shows what is typical of its stretch rather than a cut at its edge.

Thumbnails are read by random access with decord (``VideoReader.get_batch``): decord seeks to
the keyframe before each requested frame and decodes forward only from there, and it decodes
at thumbnail size, so a strip costs a small fraction of a full decode. Strips are cached in
``WORKSPACE/cache/filmstrips/`` under the video's content fingerprint (a replaced file gets a new
strip), made lazily when the app first asks, and for the whole workspace by
``vadscene proxies``.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from vadscene.core.errors import VadsceneError
from vadscene.core.records import VideoInfo
from vadscene.video.folder import VideoFolder

FILMSTRIP_THUMBS = 12
"""Thumbnails per strip: enough to see every cut of a typical 5–60 s clip at a glance."""

THUMB_HEIGHT = 90
"""Pixels; the width follows the video's aspect ratio (rounded to even)."""

JPEG_QUALITY = 80

FILMSTRIP_DIR_NAME = "filmstrips"


class FilmstripError(VadsceneError):
    """A video's filmstrip cannot be made (no file, or decord cannot read it)."""


@dataclass
class FilmstripReport:
    """What :func:`build_filmstrips` did, per video id."""

    made: list[str] = field(default_factory=list)
    reused: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)


def filmstrip_frames(num_frames: int, count: int = FILMSTRIP_THUMBS) -> list[int]:
    """The frame shown by each thumbnail: the centre ``⌊(i + ½)·n / count⌋`` of the ``i``-th of
    ``count`` equal segments of ``n`` frames (0-based; a clip shorter than ``count`` frames
    repeats frames). Empty for a video without frames."""
    if num_frames <= 0:
        return []
    return [min(num_frames - 1, int((i + 0.5) * num_frames / count)) for i in range(count)]


def filmstrip_path(workspace: VideoFolder, video: VideoInfo) -> Path:
    """``cache/filmstrips/<fingerprint hash>-<count>.jpg``: keyed by content, never by the id
    (an id may hold characters a file name cannot)."""
    key = video.fingerprint.rpartition(":")[2]
    return workspace.cache_dir / FILMSTRIP_DIR_NAME / f"{key}-{FILMSTRIP_THUMBS}.jpg"


def _thumb_size(width: int, height: int) -> tuple[int, int]:
    scale = THUMB_HEIGHT / max(1, height)
    return max(2, round(width * scale / 2) * 2), THUMB_HEIGHT


def render_filmstrip(source: Path, video: VideoInfo) -> np.ndarray:
    """The strip as an RGB array ``(THUMB_HEIGHT, FILMSTRIP_THUMBS × thumb width, 3)``."""
    from decord import DECORDError, VideoReader, cpu

    frames = filmstrip_frames(video.num_frames)
    if not frames:
        raise FilmstripError(f"video '{video.video_id}': {source} has no frames")
    width, height = _thumb_size(video.width, video.height)
    try:
        reader = VideoReader(str(source), ctx=cpu(0), width=width, height=height)
        # decord may count a frame or two fewer than the probe: stay inside what it has.
        available = len(reader)
        batch = reader.get_batch([min(f, available - 1) for f in frames]).asnumpy()
    except (DECORDError, RuntimeError, OSError) as exc:
        raise FilmstripError(
            f"video '{video.video_id}': decord cannot read {source} ({exc})"
        ) from None
    return np.concatenate(list(batch), axis=1)


def make_filmstrip(workspace: VideoFolder, video: VideoInfo) -> Path:
    """The cached strip of ``video``, made now if absent. The original file is read (the
    proxy, if the original is gone); the JPEG is written beside its final name and renamed
    into place, so a reader never sees half a file."""
    target = filmstrip_path(workspace, video)
    if target.is_file():
        return target
    source = _source(workspace, video)
    strip = render_filmstrip(source, video)
    ok, encoded = cv2.imencode(
        ".jpg", cv2.cvtColor(strip, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY]
    )
    if not ok:
        raise FilmstripError(f"video '{video.video_id}': the strip could not be encoded")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{secrets.token_hex(4)}.partial")
    partial.write_bytes(encoded.tobytes())
    os.replace(partial, target)
    return target


def _source(workspace: VideoFolder, video: VideoInfo) -> Path:
    from vadscene.video.proxies import proxy_path

    if workspace.video_root is not None and video.path is not None:
        original = workspace.video_root / video.path
        if original.is_file():
            return original
    proxy = proxy_path(workspace, video)
    if proxy.is_file():
        return proxy
    raise FilmstripError(
        f"video '{video.video_id}': no file to take thumbnails from "
        f"({video.path or 'no path'} is not in the video folder and there is no proxy)"
    )


def build_filmstrips(
    workspace: VideoFolder, *, progress: Callable[[int, int, str], None] | None = None
) -> FilmstripReport:
    """Make the strip of every registered video that has none; a failure is reported per
    video and does not stop the run."""
    report = FilmstripReport()
    videos = workspace.store.videos()
    for done, video in enumerate(videos, start=1):
        if filmstrip_path(workspace, video).is_file():
            report.reused.append(video.video_id)
        else:
            try:
                make_filmstrip(workspace, video)
                report.made.append(video.video_id)
            except FilmstripError as exc:
                report.failed.append((video.video_id, str(exc)))
        if progress is not None:
            progress(done, len(videos), video.video_id)
    return report
