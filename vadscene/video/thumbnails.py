"""Filmstrips: evenly spaced thumbnails of a video, judged at a glance under the player.

Continuity cuts, field of view and setting show in a row of stills without watching the whole
clip. A filmstrip is one JPEG holding :data:`FILMSTRIP_THUMBS` thumbnails side by side, taken at
the centres of equal segments of the video (:func:`filmstrip_frames`), so frame ``k`` of the
strip shows what is typical of its stretch rather than a cut at its edge.

Frame ``k`` is the ``k``-th frame a full decode from the start delivers (what
:func:`~vadscene.video.probe.probe_video` counts), and a strip costs a fraction of that decode
because it is read by random access: seek to the keyframe before each wanted frame and decode
forward from there. Two readers do it (:func:`read_frames`), and deliver the same frames:

* ``"decord"`` (``VideoReader.get_batch``) where decord is installed — it has wheels for
  Linux x86_64 and Windows only — and numbers the file's frames right: an MP4/MOV or
  Matroska/WebM (:data:`DECORD_FORMATS`) whose every keyframe starts a closed group of pictures
  (:func:`filmstrip_reader`). decord sorts timestamps and counts frames on from keyframes,
  which misplaces frames of MPEG-TS files, of AVIs with B-frames (their timestamps are in
  decode order) and of MP4s with open groups of pictures;
* ``"pyav"`` everywhere else (:func:`pyav_frames`): it numbers frames by counting decoded
  frames from keyframes where counting is safe, and decodes from the start where it is not.

Both give full-size RGB frames, which one resize makes into thumbnails, so a strip is the same
whichever reader made it. Strips are cached in ``WORKSPACE/cache/filmstrips/`` under the
video's content fingerprint (a replaced file gets a new strip), made lazily when the app first
asks, and for the whole workspace by ``vadscene proxies``.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import os
import secrets
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Literal

import av
import cv2
import numpy as np

from vadscene.core.errors import VadsceneError
from vadscene.core.records import VideoInfo
from vadscene.video.folder import VideoFolder
from vadscene.video.probe import ffmpeg_reason

FILMSTRIP_THUMBS = 12
"""Thumbnails per strip: enough to see every cut of a typical 5–60 s clip at a glance."""

THUMB_HEIGHT = 90
"""Pixels; the width follows the video's aspect ratio (rounded to even)."""

JPEG_QUALITY = 80

FILMSTRIP_DIR_NAME = "filmstrips"

FilmstripReader = Literal["decord", "pyav"]
"""Which library reads a strip's frames (:func:`read_frames`)."""

DECORD_FORMATS = frozenset({"mov,mp4,m4a,3gp,3g2,mj2", "matroska,webm"})
"""FFmpeg's names of the containers whose frames decord numbers right: they store each frame's
presentation time in an index, so sorting the timestamps gives the order of a full decode."""


class FilmstripError(VadsceneError):
    """A video's filmstrip cannot be made (no file, or its frames cannot be read)."""


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


def render_filmstrip(
    source: Path, video: VideoInfo, *, reader: FilmstripReader | None = None
) -> np.ndarray:
    """The strip as an RGB array ``(THUMB_HEIGHT, FILMSTRIP_THUMBS × thumb width, 3)``;
    ``reader`` as in :func:`read_frames`."""
    frames = filmstrip_frames(video.num_frames)
    if not frames:
        raise FilmstripError(f"video '{video.video_id}': {source} has no frames")
    size = _thumb_size(video.width, video.height)
    try:
        decoded = read_frames(source, frames, reader=reader)
    except FilmstripError as exc:
        raise FilmstripError(f"video '{video.video_id}': {exc}") from None
    thumbs = [cv2.resize(frame, size, interpolation=cv2.INTER_AREA) for frame in decoded]
    return np.concatenate(thumbs, axis=1)


def read_frames(
    source: Path, indices: Sequence[int], *, reader: FilmstripReader | None = None
) -> list[np.ndarray]:
    """Frames ``indices`` of ``source`` as full-size RGB arrays, in the order asked.

    Frame ``k`` is the ``k``-th a full decode from the start delivers; an index past the last
    frame that decodes gives that last frame. ``reader`` picks the library; by default
    :func:`filmstrip_reader` chooses for the file. Raises :class:`FilmstripError` naming the file
    and the reader when the frames cannot be read.
    """
    chosen = reader or filmstrip_reader(source)
    if chosen == "pyav":
        found = pyav_frames(source, indices)
        return [found[i] for i in indices]
    if chosen != "decord":
        raise FilmstripError(f"unknown filmstrip reader {chosen!r}; expected 'decord' or 'pyav'")
    decord = _decord()
    if decord is None:
        raise FilmstripError(
            "the 'decord' reader needs decord, which is not installed (it has wheels for "
            "Linux x86_64 and Windows only); the 'pyav' reader works everywhere"
        )
    try:
        video = decord.VideoReader(str(source), ctx=decord.cpu(0))
        # decord may count a frame or two fewer than the probe: stay inside what it has.
        last = len(video) - 1
        return list(video.get_batch([min(i, last) for i in indices]).asnumpy())
    except (decord.DECORDError, RuntimeError, OSError) as exc:
        raise FilmstripError(f"decord cannot read {source} ({exc})") from None


def filmstrip_reader(source: Path) -> FilmstripReader:
    """The reader :func:`read_frames` uses by default for ``source``: decord where it is
    installed and reads the file right — its container is one of :data:`DECORD_FORMATS` and
    every keyframe starts a closed group of pictures (no frame decoded after it is shown
    before it, none decoded before it is shown after it) — and PyAV otherwise, also for a file
    PyAV cannot open, so that its error names the problem. Finding out costs one pass over the
    packets, without decoding them."""
    if _decord() is None:
        return "pyav"
    try:
        with av.open(str(source)) as container:
            if container.format.name not in DECORD_FORMATS:
                return "pyav"
            points = _SeekPoints.of(container, _video_stream(container, source))
    except (av.FFmpegError, OSError, FilmstripError):
        return "pyav"
    return "decord" if points.closed else "pyav"


@functools.cache
def _decord() -> ModuleType | None:
    """decord, imported once, or None where it is not installed (no wheel for the machine)."""
    try:
        import decord
    except ImportError:
        return None
    module: ModuleType = decord
    return module


def pyav_frames(source: Path, indices: Sequence[int]) -> dict[int, np.ndarray]:
    """Frames ``indices`` of ``source`` (numbered as :func:`read_frames` does), read with PyAV
    by random access: index → full-size RGB array.

    One pass over the packets, without decoding them, finds the *seek points*: keyframes
    before which every packet shows earlier and from which every packet shows later — the
    start of a closed group of pictures, not the keyframe of an open one, after which frames
    shown before it are decoded. Decoding from seek point ``p`` delivers frames ``p, p + 1, …``
    in order, so for
    each wanted frame the reader seeks to the last seek point at or before it — or decodes on,
    when that point is behind it — and counts. It checks where each seek lands (the packet, and
    the first frame out of the decoder, must be the seek point's), and when a demuxer lands
    elsewhere, reads the whole file from the start instead.
    """
    wanted = sorted(set(indices))
    if not wanted:
        return {}
    try:
        with av.open(str(source)) as container:
            stream = _video_stream(container, source)
            stream.thread_type = "AUTO"
            points = _SeekPoints.of(container, stream)
            try:
                return _seeking(container, stream, points, wanted)
            except _Lost:
                pass
        return _from_the_start(source, wanted)
    except av.FFmpegError as exc:
        raise FilmstripError(f"PyAV cannot read {source} ({ffmpeg_reason(exc)})") from None
    except OSError as exc:
        raise FilmstripError(f"cannot read {source} ({ffmpeg_reason(exc)})") from None


class _Lost(Exception):
    """A seek landed somewhere the packet pass does not account for."""


@dataclass(frozen=True)
class _SeekPoints:
    """The packets of a video stream (empty ones left out, as the probe leaves them out) and
    the seek points among them, by decode position."""

    pts: list[int | None]
    position: dict[tuple[int | None, int | None], int]
    """Decode position of each packet by (pts, byte position); -1 for a pair seen twice."""
    points: list[int]
    timestamps: list[tuple[int, ...]]
    """For each seek point, the timestamps to seek to, in the order to try them."""
    closed: bool
    """Whether every keyframe is a seek point."""

    @classmethod
    def of(cls, container: av.container.InputContainer, stream: av.VideoStream) -> _SeekPoints:
        pts: list[int | None] = []
        dts: list[int | None] = []
        keys: list[bool] = []
        position: dict[tuple[int | None, int | None], int] = {}
        for packet in container.demux(stream):
            if packet.size == 0:
                continue
            identity = (packet.pts, packet.pos)
            position[identity] = -1 if identity in position else len(pts)
            pts.append(packet.pts)
            dts.append(packet.dts)
            keys.append(packet.is_keyframe)
        points = [0]
        timestamps: list[tuple[int, ...]] = [(dts[0] if pts and dts[0] is not None else 0,)]
        if not pts or any(p is None for p in pts):
            return cls(pts, position, points, timestamps, closed=False)
        shown = np.array(pts, dtype=np.int64)
        earlier = np.maximum.accumulate(shown)  # latest time shown by packets 0..k
        later = np.minimum.accumulate(shown[::-1])[::-1]  # earliest shown by packets k..
        clean = np.zeros(len(pts), dtype=bool)
        clean[1:] = earlier[:-1] < shown[1:]
        clean[1:-1] &= shown[1:-1] < later[2:]
        later_keys = np.flatnonzero(keys[1:]) + 1
        points += [k for k in later_keys.tolist() if clean[k]]
        # Demuxers seek by presentation time (MP4, Matroska, AVI) or, like MPEG-TS, land past
        # it and need the decode time, which is never later.
        timestamps = []
        for k in points:
            shown_at, decode = int(shown[k]), dts[k]
            tried = [shown_at] if decode is None or decode >= shown_at else [shown_at, decode]
            timestamps.append(tuple(tried))
        return cls(pts, position, points, timestamps, closed=len(points) == len(later_keys) + 1)


def _seeking(
    container: av.container.InputContainer,
    stream: av.VideoStream,
    points: _SeekPoints,
    wanted: list[int],
) -> dict[int, np.ndarray]:
    found: dict[int, np.ndarray] = {}
    run: Iterator[tuple[int, av.VideoFrame]] | None = None
    position = -1
    last: av.VideoFrame | None = None
    for target in wanted:
        point = bisect.bisect_right(points.points, target) - 1
        if run is None or points.points[point] > position:
            run = _decode_from(container, stream, points, point)
        for position, frame in run:
            last = frame
            if position == target:
                found[target] = frame.to_ndarray(format="rgb24")
                break
        else:  # the file ends before the target: the last frame stands in
            if last is None:
                raise _Lost
            final = last.to_ndarray(format="rgb24")
            return found | {t: final for t in wanted if t not in found}
    return found


def _decode_from(
    container: av.container.InputContainer,
    stream: av.VideoStream,
    points: _SeekPoints,
    point: int,
) -> Iterator[tuple[int, av.VideoFrame]]:
    """Frames from seek point ``point`` (an index into ``points.points``) on, with their
    numbers; raises :class:`_Lost` when no timestamp lands on that point or an earlier one."""
    target = points.points[point]
    for timestamp in points.timestamps[point]:
        container.seek(timestamp, stream=stream, backward=True)
        packets = (p for p in container.demux(stream) if p.size)
        first = next(packets, None)
        landed = -1 if first is None else points.position.get((first.pts, first.pos), -1)
        if 0 <= landed <= target and landed in points.points:
            break
    else:
        raise _Lost
    assert first is not None  # landed ≥ 0
    expected = points.pts[landed] if landed else None
    frames = _decoded(stream.codec_context, itertools.chain([first], packets))
    for position, frame in enumerate(frames, start=landed):
        if expected is not None and frame.pts != expected:
            raise _Lost  # the decoder dropped or reordered frames around the seek point
        expected = None
        yield position, frame


def _from_the_start(source: Path, wanted: list[int]) -> dict[int, np.ndarray]:
    """Every frame decoded in order, the wanted ones kept."""
    found: dict[int, np.ndarray] = {}
    last: av.VideoFrame | None = None
    remaining = set(wanted)
    with av.open(str(source)) as container:
        stream = _video_stream(container, source)
        stream.thread_type = "AUTO"
        packets = (p for p in container.demux(stream) if p.size)
        for position, frame in enumerate(_decoded(stream.codec_context, packets)):
            last = frame
            if position in remaining:
                found[position] = frame.to_ndarray(format="rgb24")
                remaining.discard(position)
                if not remaining:
                    return found
        if last is None:
            raise FilmstripError(f"no frame of {source} decodes")
        return found | dict.fromkeys(remaining, last.to_ndarray(format="rgb24"))


def _decoded(
    decoder: av.video.codeccontext.VideoCodecContext, packets: Iterable[av.Packet]
) -> Iterator[av.VideoFrame]:
    """The frames of ``packets`` (none empty: an empty packet tells the decoder the stream
    ends) in presentation order, then those it held back for reordering."""
    for packet in packets:
        yield from decoder.decode(packet)
    yield from decoder.decode(None)


def _video_stream(container: av.container.InputContainer, source: Path) -> av.VideoStream:
    """The stream the probe counts: the first video stream that is not cover art."""
    for stream in container.streams.video:
        if not stream.disposition & av.stream.Disposition.attached_pic:
            return stream
    raise FilmstripError(f"{source} has no video stream")


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
