"""Browser-playable H.264 proxies of benchmark videos the browser cannot play.

The labelling app shows videos in an HTML ``<video>`` element, and browsers decode only a few
container/codec pairs, and within those only some stream formats. Benchmarks ship many others:
MPEG-4 Part 2 or MJPEG in AVI (Avenue, ShanghaiTech training clips), H.264 in AVI
(``vtest_lamminhthien.avi``), HEVC, WMV, MPEG-2, and H.264 MP4s in 10-bit or 4:4:4.
For each registered video that a browser cannot play (:func:`unplayable_reason` says why),
:func:`build_proxies` transcodes a proxy once into ``WORKSPACE/cache/proxies/`` and
:func:`playable_path` tells the app which file to serve.

A proxy must not shift frame numbers: labels, measurements and ground truth count frames of
the *original* (as :func:`vadscene.video.probe.probe_video` counts them). So a proxy has
exactly one frame per source frame, in order, at the source's frame rate, and
:func:`make_proxy` refuses to write one when decoding delivers a different number of frames
than the probe counted.

Proxies are keyed by the source's content fingerprint, so replacing a video with other content
(and re-scanning) yields a new proxy and the old one is deleted as stale.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import av
from av.video.frame import PictureType

from vadscene.core.errors import OutputError, VadsceneError, WorkspaceError
from vadscene.core.files import atomic_output, process_exists
from vadscene.core.records import VideoInfo
from vadscene.video.folder import VideoFolder
from vadscene.video.probe import VideoProbeError, content_fingerprint, probe_video

_log = logging.getLogger(__name__)

BROWSER_PLAYABLE: frozenset[tuple[str, str]] = frozenset(
    {(".mp4", "h264"), (".webm", "vp8"), (".webm", "vp9")}
)
"""(lower-case container suffix, canonical FFmpeg codec name) pairs served as they are, when
the stream also passes :data:`BROWSER_PIXEL_FORMATS` (and, for H.264,
:data:`BROWSER_H264_PROFILES`).

Deliberately conservative: a pair is listed only when current Chrome, Edge, Firefox *and*
Safari play it, because an annotator facing a black player loses more time than a proxy
costs. Left out on purpose: any AVI, MKV, MPEG or WMV container (no browser demuxes them, even
around H.264); ``.mov`` and ``.m4v`` (their MIME types, ``video/quicktime`` and
``video/x-m4v``, are not accepted by every browser although the content often plays); HEVC
(Safari and hardware-dependent Chrome only); AV1 (Safari only on devices with hardware AV1
decoding); VP8/VP9 in MP4. WebM itself needs a recent Safari (macOS 11.3+, iOS 17.4+).
"""

BROWSER_PIXEL_FORMATS: frozenset[str] = frozenset({"yuv420p", "yuvj420p"})
"""Decoded pixel formats (FFmpeg names) a stream of a listed pair must have to be served as
it is: 8-bit 4:2:0, with video-range (``yuv420p``) or full-range (``yuvj420p``, common from
cameras and MJPEG-derived encodes) levels.

Browsers do not all decode the rest. H.264 in 10 bits (``yuv420p10le``, the High 10 profile)
or with 4:2:2 / 4:4:4 chroma (``yuv422p``, ``yuv444p``: the High 4:2:2 and High 4:4:4
profiles) plays in Chrome, whose bundled FFmpeg decodes it in software, but not in Firefox on
Windows or macOS, which hands H.264 to the platform decoder (Media Foundation's H.264 decoder
documents Baseline, Main and High only; Firefox has also refused 4:4:4 outright: "Decoder may
not have the capability to handle the requested video format with YUV444 chroma
subsampling"), nor in Safari (VideoToolbox). Such files look fine on the machine that made
them and show a black player elsewhere. The same rule is applied to VP8/VP9: VP9 profiles 1-3
(4:4:4, 10/12-bit) are not decoded everywhere either, and VP8 is always 8-bit 4:2:0. Proxies
are ``yuv420p``.
"""

BROWSER_H264_PROFILES: frozenset[str] = frozenset(
    {"Constrained Baseline", "Baseline", "Main", "High"}
)
"""H.264 profiles (FFmpeg's names) served as they are: those Media Foundation documents.

Checked besides the pixel format because a profile can exceed High while the pixels are
8-bit 4:2:0: x264's lossless mode (``qp 0``, used for "archival" re-encodes) writes yuv420p
as High 4:4:4 Predictive, which Media Foundation and VideoToolbox do not decode. A stream whose
profile FFmpeg does not report is judged by its pixel format alone.

Not checked, although documented: Media Foundation's level limit (5.1) and minimum frame size
(48x48, which Firefox on Windows enforces). A proxy keeps the source's size and frame rate, so
it would fail those limits just the same; proxying cannot help there.
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
_TEMP_NAME = re.compile(r"^\.(?P<proxy>.+-[0-9a-f]+\.mp4)\.(?P<pid>[0-9]+)-[0-9a-f]{8}\.tmp$")
"""A temporary file of :func:`make_proxy`: ``.<proxy name>.<pid>-<8 hex digits>.tmp``.

Disjoint from :data:`_PROXY_NAME` (one ends in ``.tmp``, the other in ``.mp4``), so a finished
proxy is never taken for a temporary file nor the other way round."""


class ProxyError(VadsceneError):
    """A proxy cannot be made; ``str(exc)`` is ``"<source>: <reason>"``.

    ``reason`` is a short phrase (a :class:`~vadscene.video.probe.VideoProbeError` reason when the
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
    """Registered videos that browsers play as they are (including H.264 MP4s and WebMs whose
    file cannot be read this time, so their pixel format is unknown)."""
    failed: list[tuple[str, str]] = field(default_factory=list)
    """(video id, reason) for every proxy that could not be made."""
    removed: int = 0
    """Stale proxies deleted: made from content a video no longer has."""
    unplayable: dict[str, str] = field(default_factory=dict)
    """Why browsers cannot play each video that needs a proxy (video id → reason from
    :func:`unplayable_reason`, e.g. ``"H.264 yuv444p: browsers play only 8-bit 4:2:0"``)."""
    removed_temporaries: list[str] = field(default_factory=list)
    """File names of temporary files that killed runs left behind, deleted by this run."""


def _canonical_codec(name: str) -> str:
    """The codec's own name for a decoder name: probing records the decoder that FFmpeg picked,
    which for AV1 is ``libdav1d`` in common builds, and playability is a property of the codec.
    """
    try:
        return av.Codec(name, "r").canonical_name
    except av.codec.codec.UnknownCodecError:
        return name


_CODEC_LABELS = {"h264": "H.264", "vp8": "VP8", "vp9": "VP9"}


def _playable_pairs_text() -> str:
    """``"H.264 in .mp4, VP8 or VP9 in .webm"``, from :data:`BROWSER_PLAYABLE`."""
    by_suffix: dict[str, list[str]] = {}
    for suffix, codec in sorted(BROWSER_PLAYABLE):
        by_suffix.setdefault(suffix, []).append(_CODEC_LABELS.get(codec, codec))
    return ", ".join(f"{' or '.join(codecs)} in {suffix}" for suffix, codecs in by_suffix.items())


def _video_stream(container: av.container.InputContainer) -> av.VideoStream | None:
    """The stream :func:`~vadscene.video.probe.probe_video` counts: the first video stream that is
    not cover art."""
    return next(
        (
            s
            for s in container.streams.video
            if not s.disposition & av.stream.Disposition.attached_pic
        ),
        None,
    )


_FORMAT_CACHE_SIZE = 4096
_formats: dict[tuple[str, int, int], tuple[str | None, str | None]] = {}
_formats_lock = threading.Lock()


def _stream_format(path: Path) -> tuple[str | None, str | None] | None:
    """(pixel format, profile) of the video stream of ``path`` as FFmpeg reports them on
    opening (either may be ``None`` when FFmpeg cannot tell), or ``None`` when the file cannot
    be read or has no video stream.

    Opening a file costs milliseconds and the server asks for every byte range it serves, so
    answers are remembered per (path, size, modification time): a file replaced in place is
    looked at again. Failures are not remembered.
    """
    try:
        stat = path.stat()
    except OSError:
        return None
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    known = _formats.get(key)
    if known is not None:
        return known
    try:
        with av.open(str(path), metadata_errors="replace") as container:
            stream = _video_stream(container)
            if stream is None or stream.codec_context is None:
                return None
            context = stream.codec_context
            found = (context.format.name if context.format else None, context.profile or None)
    except (av.FFmpegError, OSError):
        return None
    with _formats_lock:
        if len(_formats) >= _FORMAT_CACHE_SIZE:
            _formats.clear()
        _formats[key] = found
    return found


def _format_reason(codec: str, pix_fmt: str | None, profile: str | None) -> str | None:
    """Why browsers cannot play a stream of a listed pair with this pixel format and profile."""
    label = _CODEC_LABELS.get(codec, codec)
    if pix_fmt not in BROWSER_PIXEL_FORMATS:
        return f"{label} {pix_fmt or 'of unknown pixel format'}: browsers play only 8-bit 4:2:0"
    if codec == "h264" and profile is not None and profile not in BROWSER_H264_PROFILES:
        return f"H.264 {profile} profile: browsers play only Baseline, Main and High"
    return None


def _verdict(video: VideoInfo, video_root: Path | None) -> tuple[str | None, bool]:
    """(:func:`unplayable_reason`, whether that verdict is final): not final when the pair is
    playable but the file could not be looked at."""
    if video.path is None:
        return None, True
    suffix = Path(video.path).suffix.lower()
    codec = _canonical_codec(video.codec)
    if (suffix, codec) not in BROWSER_PLAYABLE:
        where = suffix or "a file without a suffix"
        return f"{codec} in {where}: browsers play only {_playable_pairs_text()}", True
    if video_root is None:
        return None, False
    found = _stream_format(Path(video_root) / video.path)
    if found is None:
        return None, False
    return _format_reason(codec, *found), True


def unplayable_reason(video: VideoInfo, video_root: Path | None = None) -> str | None:
    """Why a browser cannot play the video's file as it is, or ``None`` when it can.

    The rule, in order:

    1. A video without a file (a workspace imported from a release) needs no proxy: there is
       nothing to transcode. ``None``.
    2. The lower-case suffix and canonical codec must be a pair of :data:`BROWSER_PLAYABLE`,
       else ``"<codec> in <suffix>: browsers play only H.264 in .mp4, VP8 or VP9 in .webm"``
       (e.g. ``"mpeg4 in .avi: ..."``). Decided from the registered record alone.
    3. With ``video_root``, the file is opened and its video stream (the one
       :func:`~vadscene.video.probe.probe_video` counts) must decode to a pixel format of
       :data:`BROWSER_PIXEL_FORMATS` (8-bit 4:2:0), else ``"H.264 yuv444p: browsers play only
       8-bit 4:2:0"`` (likewise ``yuv420p10le``, ``yuv422p``; ``VP9 ...`` for VP9); and an
       H.264 stream must be of a profile of :data:`BROWSER_H264_PROFILES` when FFmpeg reports
       one, else ``"H.264 High 4:4:4 Predictive profile: browsers play only Baseline, Main and
       High"``. The registered record carries neither, hence the look at the file.

    When the file cannot be read (missing, unreadable, no video stream) step 3 is skipped and
    the verdict is step 2's: a missing file has nothing to serve or transcode either way.
    Without ``video_root`` only steps 1 and 2 apply.
    """
    return _verdict(video, video_root)[0]


def needs_proxy(video: VideoInfo, video_root: Path | None = None) -> bool:
    """Whether :func:`unplayable_reason` has a reason: a browser cannot play the video as it is.

    Pass the workspace's video folder as ``video_root`` to have the file's pixel format and
    profile checked; without it only the container/codec pair is judged.
    """
    return unplayable_reason(video, video_root) is not None


def proxy_path(workspace: VideoFolder, video: VideoInfo) -> Path:
    """Where the proxy of ``video`` lives: ``cache/proxies/<video id>-<fingerprint hash>.mp4``.

    The name carries the content fingerprint so that a proxy can never be served for content
    other than what was scanned.
    """
    key = video.fingerprint.rpartition(":")[2]
    return workspace.cache_dir / PROXY_DIR_NAME / f"{video.video_id}-{key}.mp4"


def playable_path(workspace: VideoFolder, video: VideoInfo) -> Path | None:
    """The file the app should serve for ``video``, or ``None`` when there is none yet.

    The original when browsers play it (:func:`needs_proxy` with the workspace's video
    folder, so the file's pixel format and profile count), else its proxy when
    :func:`build_proxies` has made it. ``None`` also when the original is missing, or the
    workspace has no video files.
    """
    root = workspace.video_root
    if root is None or video.path is None:
        return None
    candidate = proxy_path(workspace, video) if needs_proxy(video, root) else root / video.path
    return candidate if candidate.is_file() else None


def _even(size: float) -> int:
    """Round down to an even number of pixels (≥ 2): yuv420p subsamples chroma by 2."""
    return max(2, int(size) // 2 * 2)


def _output_size(width: int, height: int, max_height: int | None) -> tuple[int, int]:
    if max_height is not None and height > max_height:
        return _even(width * max_height / height), _even(max_height)
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

    The proxy is written to a hidden temporary file beside ``target``,
    ``.<target name>.<process id>-<8 random hex digits>.tmp``, and renamed over ``target``
    only when complete, so an interrupted or failed run never leaves a half-written proxy under
    ``target``, and the temporary file is removed. A killed process (``SIGKILL``, power loss)
    cannot remove it; :func:`build_proxies` deletes such leftovers once their process is gone.

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
    # The temporary name is unique per run (two builds may race on one video) and carries
    # the process id, which tells later runs whether its writer is still alive.
    try:
        with atomic_output(target) as tmp:
            written = _transcode(source, tmp, probe.num_frames, max_height, progress)
            if written != probe.num_frames:
                raise ProxyError(
                    source,
                    f"decoded {written} of {probe.num_frames} frames; a proxy would shift frame "
                    "numbers",
                )
    except OutputError as exc:
        raise ProxyError(source, f"cannot write the proxy: {exc}") from exc
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
            video = _video_stream(src)  # the stream probe_video counted
            if video is None:  # the file was replaced since it was probed
                raise ProxyError(source, "no video stream")
            video.thread_type = "AUTO"
            guessed = video.guessed_rate or video.average_rate or video.base_rate
            if not guessed:  # replaced too: probe_video refuses an unknown frame rate
                raise ProxyError(source, "unknown frame rate")
            rate = Fraction(guessed)
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

    ``wanted`` maps registered video ids to their current proxy's file name, or ``None`` when
    the video needs none (its file was replaced by a playable one). Files of ids not in
    ``wanted`` (unregistered ids, whose owner may come back, and videos whose file could not be
    looked at this time), temporary files and anything else are left alone.
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


def _remove_stale_temporaries(proxy_dir: Path) -> list[str]:
    """Delete temporary files of :func:`make_proxy` whose process is gone; returns their names.

    Only files named as :func:`make_proxy` names them (``.<proxy name>.<pid>-<8 hex>.tmp``,
    :data:`_TEMP_NAME`) are considered, and one is deleted only when no process with that id
    exists: a live process may be another build writing it right now (two builds may race).
    Assumes builds of one workspace run on one machine (process ids of another host mean
    nothing here). A pid reused by an unrelated process keeps its leftover until that process
    ends; finished proxies end in ``.mp4`` and never match.
    """
    if not proxy_dir.is_dir():
        return []
    removed = []
    for path in sorted(proxy_dir.iterdir()):
        match = _TEMP_NAME.match(path.name)
        if match is None or not path.is_file() or process_exists(int(match["pid"])):
            continue
        try:
            path.unlink(missing_ok=True)
        except OSError as exc:
            _log.warning("cannot remove the leftover temporary file %s: %s", path, _reason(exc))
            continue
        _log.info(
            "removed %s, left by an interrupted proxy run (process %s is gone)",
            path,
            match["pid"],
        )
        removed.append(path.name)
    return removed


def build_proxies(workspace: VideoFolder, *, progress: BuildProgress | None = None) -> ProxyReport:
    """Make the missing proxies of every registered video browsers cannot play.

    Which videos need one is :func:`unplayable_reason`, with the workspace's video folder (so
    the files' pixel formats and profiles are checked); the reasons are in
    ``report.unplayable``.

    Incremental: a proxy that exists under its fingerprinted name is reused without looking
    inside it (it was renamed into place only when complete). A video that cannot be
    transcoded, whose file is gone, or whose content changed since the last scan (its proxy
    would be filed under the old fingerprint) is recorded in ``failed`` and the run goes on.
    First, temporary files that killed runs left behind are deleted
    (``report.removed_temporaries``), and so are stale proxies (older content of a registered
    video, or of a video that no longer needs one). The proxies of a video whose file cannot
    be read this time (a folder not mounted, say) are kept.

    Raises :class:`~vadscene.core.errors.WorkspaceError` when the workspace has no video folder.
    """
    root = workspace.video_root
    if root is None:
        raise WorkspaceError(f"{workspace.root}: this workspace has no video files to proxy")
    videos = workspace.store.videos()
    todo: list[tuple[VideoInfo, Path]] = []  # (video, its file)
    wanted: dict[str, str | None] = {}
    report = ProxyReport()
    for video in videos:
        reason, final = _verdict(video, root)
        if reason is not None and video.path is not None:  # a video without a file has none
            todo.append((video, root / video.path))
            report.unplayable[video.video_id] = reason
            wanted[video.video_id] = proxy_path(workspace, video).name
        elif final:
            wanted[video.video_id] = None
    report.not_needed = len(videos) - len(todo)
    proxy_dir = workspace.cache_dir / PROXY_DIR_NAME
    report.removed_temporaries = _remove_stale_temporaries(proxy_dir)
    report.removed = _remove_stale(proxy_dir, wanted)
    for done, (video, source) in enumerate(todo):
        if progress is not None:
            progress(done, len(todo), video.video_id)
        target = proxy_path(workspace, video)
        if target.is_file():
            report.reused.append(video.video_id)
            continue
        _log.info("making a proxy of %s: %s", video.video_id, report.unplayable[video.video_id])
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
