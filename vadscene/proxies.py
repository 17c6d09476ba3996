"""Browser-playable H.264 proxies of benchmark videos the browser cannot play.

The labelling app shows videos in an HTML ``<video>`` element, and browsers decode only a few
container/codec pairs. Benchmarks ship many others: MPEG-4 Part 2 or MJPEG in AVI (Avenue,
ShanghaiTech training clips), H.264 in AVI (``vtest_lamminhthien.avi``), HEVC, WMV, MPEG-2.
For each registered video that a browser cannot play, :func:`build_proxies` transcodes a
proxy once into ``WORKSPACE/cache/proxies/`` and :func:`playable_path` tells the app which
file to serve.

A proxy must not shift frame numbers: labels, measurements and ground truth count frames of
the *original* (as :func:`vadscene.video.probe_video` counts them). So a proxy has exactly one
frame per source frame, in order, at the source's frame rate, and :func:`make_proxy` refuses to
write one when decoding delivers a different number of frames than the probe counted.

Proxies are keyed by the source's content fingerprint, so replacing a video with other content
(and re-scanning) yields a new proxy and the old one is deleted as stale.
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import av
from av.video.frame import PictureType

from vadscene.errors import VadsceneError, WorkspaceError
from vadscene.records import VideoInfo
from vadscene.video import VideoProbeError, content_fingerprint, probe_video
from vadscene.workspace import Workspace

BROWSER_PLAYABLE: frozenset[tuple[str, str]] = frozenset(
    {(".mp4", "h264"), (".webm", "vp8"), (".webm", "vp9")}
)
"""(lower-case container suffix, canonical FFmpeg codec name) pairs served as they are.

Deliberately conservative: a pair is listed only when current Chrome, Edge, Firefox *and*
Safari play it, because an annotator facing a black player loses more time than a proxy
costs. Left out on purpose: any AVI, MKV, MPEG or WMV container (no browser demuxes them, even
around H.264); ``.mov`` and ``.m4v`` (their MIME types, ``video/quicktime`` and
``video/x-m4v``, are not accepted by every browser although the content often plays); HEVC
(Safari and hardware-dependent Chrome only); AV1 (Safari only on devices with hardware AV1
decoding); VP8/VP9 in MP4. WebM itself needs a recent Safari (macOS 11.3+, iOS 17.4+).

Known gap: the registered codec name does not reveal the profile, so a 10-bit or 4:4:4 H.264
MP4 (which browsers do not decode) is treated as playable.
"""

PROXY_DIR_NAME = "proxies"

ProxyProgress = Callable[[int, int], None]
"""Called as ``progress(frames_done, frames_total)`` while one proxy is encoded."""

BuildProgress = Callable[[int, int, str], None]
"""Called as ``progress(done, total, current_video_id)`` while proxies are built."""

_CRF = "23"
_PRESET = "veryfast"
_KEYFRAME_INTERVAL_S = 2
_PROXY_NAME = re.compile(r"^(?P<video_id>.+)-[0-9a-f]+\.mp4$")


class ProxyError(VadsceneError):
    """A proxy cannot be made; ``str(exc)`` is ``"<source>: <reason>"``.

    ``reason`` is a short phrase (a :class:`~vadscene.video.VideoProbeError` reason when the
    source does not probe, ``"cannot decode frame N: ..."``, ``"decoded N of M frames ..."``,
    ``"cannot write the proxy: ..."``) so that a batch report can be read at a glance.
    """

    def __init__(self, source: Path | str, reason: str) -> None:
        self.source = Path(source)
        self.reason = reason
        super().__init__(f"{self.source}: {reason}")


@dataclass
class ProxyReport:
    """What :func:`build_proxies` did; the lists hold video ids."""

    made: list[str] = field(default_factory=list)
    reused: list[str] = field(default_factory=list)
    not_needed: int = 0
    """Registered videos that browsers play as they are."""
    failed: list[tuple[str, str]] = field(default_factory=list)
    """(video id, reason) for every proxy that could not be made."""
    removed: int = 0
    """Stale proxies deleted: made from content a video no longer has."""


def _canonical_codec(name: str) -> str:
    """The codec's own name for a decoder name: probing records the decoder that FFmpeg picked,
    which for AV1 is ``libdav1d`` in common builds, and playability is a property of the codec.
    """
    try:
        return av.Codec(name, "r").canonical_name
    except av.codec.codec.UnknownCodecError:
        return name


def needs_proxy(video: VideoInfo) -> bool:
    """Whether a browser cannot play the video's file as it is (see :data:`BROWSER_PLAYABLE`).

    A video without a file (a workspace imported from a release) needs no proxy: there is
    nothing to transcode.
    """
    if video.path is None:
        return False
    suffix = Path(video.path).suffix.lower()
    return (suffix, _canonical_codec(video.codec)) not in BROWSER_PLAYABLE


def proxy_path(workspace: Workspace, video: VideoInfo) -> Path:
    """Where the proxy of ``video`` lives: ``cache/proxies/<video id>-<fingerprint hash>.mp4``.

    The name carries the content fingerprint so that a proxy can never be served for content
    other than what was scanned.
    """
    key = video.fingerprint.rpartition(":")[2]
    return workspace.cache_dir / PROXY_DIR_NAME / f"{video.video_id}-{key}.mp4"


def playable_path(workspace: Workspace, video: VideoInfo) -> Path | None:
    """The file the app should serve for ``video``, or ``None`` when there is none yet.

    The original when browsers play it, else its proxy when :func:`build_proxies` has made
    it. ``None`` also when the original is missing, or the workspace has no video files.
    """
    root = workspace.video_root
    if root is None or video.path is None:
        return None
    candidate = proxy_path(workspace, video) if needs_proxy(video) else root / video.path
    return candidate if candidate.is_file() else None


def _even(size: float) -> int:
    """Round down to an even number of pixels (≥ 2): yuv420p subsamples chroma by 2."""
    return max(2, int(size) // 2 * 2)


def _output_size(width: int, height: int, max_height: int | None) -> tuple[int, int]:
    if max_height is not None and height > max_height:
        width, height = width * max_height / height, max_height
    return _even(width), _even(height)


def _reason(exc: av.FFmpegError | OSError) -> str:
    return exc.strerror or str(exc)


def _decoded_frames(
    container: av.container.InputContainer, stream: av.VideoStream, source: Path
) -> Iterator[av.VideoFrame]:
    """Every frame of ``stream`` in presentation order.

    Empty packets are skipped, not sent, as :func:`probe_video` skips them when counting: the
    AVI "drop" chunks of ``vtest_lamminhthien.avi`` are empty, and sending an empty packet
    would tell the decoder the stream has ended.
    """
    decoder = stream.codec_context
    count = 0
    try:
        for packet in container.demux(stream):
            if packet.size == 0:
                continue
            for frame in decoder.decode(packet):
                count += 1
                yield frame
        for frame in decoder.decode(None):  # frames held back for reordering
            count += 1
            yield frame
    except av.FFmpegError as exc:
        raise ProxyError(source, f"cannot decode frame {count + 1}: {_reason(exc)}") from exc


def make_proxy(
    source: Path,
    target: Path,
    *,
    max_height: int | None = None,
    progress: ProxyProgress | None = None,
) -> Path:
    """Transcode ``source`` into an H.264 MP4 at ``target`` that every browser plays.

    One output frame per source frame, in order, at the source's frame rate, so frame N of
    the proxy is frame N of the original. libx264 ``crf 23``, ``preset veryfast``, yuv420p
    8-bit (what browsers decode), width and height rounded down to even numbers (scaled down
    to ``max_height`` first when given), pixel aspect ratio kept, a keyframe every two seconds
    (the browser seeks to keyframes, and annotators scrub a lot), ``+faststart`` (index first,
    so playback starts before the file is downloaded). Audio is dropped: it plays no part in
    labelling.

    The proxy is written to a hidden temporary file beside ``target`` and renamed over it only
    when complete, so an interrupted or failed run never leaves a half-written proxy under
    ``target`` and the temporary file is removed (a killed process can leave one behind; its
    name starts with ``.`` and ends with ``.tmp``).

    Raises :class:`ProxyError` when the source does not probe, a frame cannot be decoded, the
    decoder delivers a different number of frames than :func:`probe_video` counts, or the proxy
    cannot be written. ``ValueError`` for a ``max_height`` below 2.
    """
    source, target = Path(source), Path(target)
    if max_height is not None and max_height < 2:
        raise ValueError(f"max_height must be at least 2 pixels, got {max_height}")
    try:
        probe = probe_video(source)
    except VideoProbeError as exc:
        raise ProxyError(source, exc.reason) from exc

    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ProxyError(source, f"cannot write the proxy: {_reason(exc)}") from exc
    # Unique per run (two builds may race on one video); not mkstemp, whose 0600 mode the
    # rename would carry over to the proxy.
    tmp = target.with_name(f".{target.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        written = _transcode(source, tmp, probe.num_frames, max_height, progress)
        if written != probe.num_frames:
            raise ProxyError(
                source,
                f"decoded {written} of {probe.num_frames} frames; a proxy would shift frame "
                "numbers",
            )
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return target


def _transcode(
    source: Path,
    tmp: Path,
    total: int,
    max_height: int | None,
    progress: ProxyProgress | None,
) -> int:
    """Decode ``source`` and encode every frame into ``tmp``; returns the frames written."""
    written = 0
    try:
        with (
            av.open(str(source), metadata_errors="replace") as src,
            av.open(str(tmp), "w", format="mp4", options={"movflags": "+faststart"}) as out,
        ):
            video = next(
                s
                for s in src.streams.video
                if not s.disposition & av.stream.Disposition.attached_pic
            )  # the stream probe_video counted
            video.thread_type = "AUTO"
            rate = Fraction(video.guessed_rate or video.average_rate or video.base_rate)
            time_base = 1 / rate
            width, height = _output_size(
                video.codec_context.width, video.codec_context.height, max_height
            )
            encoder = out.add_stream("libx264", rate=rate, options={"crf": _CRF, "preset": _PRESET})
            encoder.width, encoder.height, encoder.pix_fmt = width, height, "yuv420p"
            encoder.codec_context.gop_size = max(1, round(rate * _KEYFRAME_INTERVAL_S))
            if video.codec_context.sample_aspect_ratio:
                encoder.codec_context.sample_aspect_ratio = video.codec_context.sample_aspect_ratio
            if progress is not None:
                progress(0, total)
            for frame in _decoded_frames(src, video, source):
                image = frame.reformat(width=width, height=height, format="yuv420p")
                image.pts, image.time_base = written, time_base
                image.pict_type = PictureType.NONE  # let x264 place keyframes, not the source
                out.mux(encoder.encode(image))
                written += 1
                if progress is not None:
                    progress(written, total)
            out.mux(encoder.encode(None))
    except (av.FFmpegError, OSError) as exc:
        raise ProxyError(source, f"cannot write the proxy: {_reason(exc)}") from exc
    return written


def _remove_stale(proxy_dir: Path, wanted: dict[str, str | None]) -> int:
    """Delete proxies of registered videos other than the wanted one; returns how many.

    ``wanted`` maps every registered video id to its current proxy's file name, or ``None``
    when it needs none (its file was replaced by a playable one). Files of unregistered ids
    (their owner may come back), temporary files and anything else are left alone.
    """
    if not proxy_dir.is_dir():
        return 0
    removed = 0
    for path in proxy_dir.iterdir():
        match = _PROXY_NAME.match(path.name)
        video_id = match["video_id"] if match else None
        if video_id in wanted and path.name != wanted[video_id]:
            path.unlink(missing_ok=True)
            removed += 1
    return removed


def build_proxies(workspace: Workspace, *, progress: BuildProgress | None = None) -> ProxyReport:
    """Make the missing proxies of every registered video browsers cannot play.

    Incremental: a proxy that exists under its fingerprinted name is reused without looking
    inside it (it was renamed into place only when complete). A video that cannot be
    transcoded, whose file is gone, or whose content changed since the last scan (its proxy
    would be filed under the old fingerprint) is recorded in ``failed`` and the run goes on.
    Stale proxies (older content of a registered video) are deleted first.

    Raises :class:`~vadscene.errors.WorkspaceError` when the workspace has no video folder.
    """
    root = workspace.video_root
    if root is None:
        raise WorkspaceError(f"{workspace.root}: this workspace has no video files to proxy")
    videos = workspace.store.videos()
    todo = [v for v in videos if needs_proxy(v)]
    wanted: dict[str, str | None] = {v.video_id: None for v in videos}
    wanted.update({v.video_id: proxy_path(workspace, v).name for v in todo})
    report = ProxyReport(
        not_needed=len(videos) - len(todo),
        removed=_remove_stale(workspace.cache_dir / PROXY_DIR_NAME, wanted),
    )
    for done, video in enumerate(todo):
        if progress is not None:
            progress(done, len(todo), video.video_id)
        target = proxy_path(workspace, video)
        if target.is_file():
            report.reused.append(video.video_id)
            continue
        source = root / video.path
        try:
            if content_fingerprint(source) != video.fingerprint:
                report.failed.append(
                    (video.video_id, "file changed since the last scan; re-scan first")
                )
                continue
            make_proxy(source, target)
        except FileNotFoundError:
            report.failed.append((video.video_id, "file not found"))
        except OSError as exc:
            report.failed.append((video.video_id, f"cannot read: {_reason(exc)}"))
        except ProxyError as exc:
            report.failed.append((video.video_id, exc.reason))
        else:
            report.made.append(video.video_id)
    if progress is not None:
        progress(len(todo), len(todo), "")
    return report
