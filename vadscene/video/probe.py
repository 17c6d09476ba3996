"""Open and probe the video files of a benchmark.

Every other part of vadscene keys its work on what this module reports: the number of
frames a decoder will actually deliver, the frame rate, the frame size, and a content
fingerprint that lets cached results survive renames and moves. Probing has to be cheap
(benchmarks hold ~1,900 videos) and it has to say *why* a file is unusable, because a
broken download or a renamed audio file must be caught before anyone spends time
labelling it.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import av

VIDEO_EXTENSIONS: frozenset[str] = frozenset(
    {".mp4", ".avi", ".mkv", ".mov", ".webm", ".mpg", ".mpeg", ".m4v", ".wmv", ".flv", ".ts"}
)
"""Lower-case file suffixes (with the dot) that :func:`iter_video_files` treats as videos."""

_FINGERPRINT_CHUNK = 64 * 1024


@dataclass(frozen=True)
class VideoProbe:
    """What :func:`probe_video` learned about one file.

    ``num_frames`` is the number of frames that a decoder delivers (non-empty demuxed
    packets of the video stream), not what the container header claims; ``duration_s``
    is derived from it (``num_frames / fps``) so the two can never disagree.
    """

    num_frames: int
    fps: float
    duration_s: float
    width: int
    height: int
    codec: str
    size_bytes: int
    fingerprint: str

    def as_dict(self) -> dict[str, object]:
        """Plain-dict form, for JSON/YAML caches and tables."""
        return asdict(self)


class VideoProbeError(Exception):
    """A file cannot be used as a video; ``str(exc)`` is ``"<path>: <reason>"``.

    The reason is a short phrase naming the problem so that a batch report over a whole
    benchmark can be grouped by cause: ``"file not found"``, ``"not a regular file"``,
    ``"empty file"``, ``"cannot read: ..."``, ``"cannot open: <FFmpeg reason>"``,
    ``"no video stream"``, ``"unsupported codec: ..."``, ``"unknown frame rate"``,
    ``"zero frames"``, ``"truncated: ..."``, ``"no decodable frame: ..."``.
    FFmpeg/PyAV exceptions never escape :func:`probe_video`; they are translated into
    this one type.
    """

    def __init__(self, path: Path | str, reason: str) -> None:
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")

    def __reduce__(self) -> tuple[type[VideoProbeError], tuple[Path, str]]:
        """Pickle by (path, reason): probing a benchmark in worker processes sends errors back."""
        return (type(self), (self.path, self.reason))


def content_fingerprint(path: Path | str) -> str:
    """Return a fast content fingerprint ``"b2s:<32 hex digits>"`` for caching.

    BLAKE2b (16-byte digest) over the file size and three 64 KiB samples taken at the
    start, the middle and the end of the file. Reading ~192 KiB instead of whole
    multi-hundred-MB videos keeps probing I/O-light, and it still changes when a file is
    re-encoded, truncated, or replaced by another clip, and stays the same for a
    byte-identical copy under another name. It is *not* a cryptographic hash of the whole
    file: two files of equal size that differ only outside the sampled windows collide
    (files up to 192 KiB are covered completely, because the windows then overlap).
    Use it to identify content for caching, not to verify integrity.

    Raises ``OSError`` (e.g. ``FileNotFoundError``) if the file cannot be read.
    """
    path = Path(path)
    digest = hashlib.blake2b(digest_size=16)
    with path.open("rb") as f:
        size = os.fstat(f.fileno()).st_size
        digest.update(size.to_bytes(8, "little"))
        last = max(0, size - _FINGERPRINT_CHUNK)
        for offset in (0, last // 2, last):
            f.seek(offset)
            digest.update(f.read(_FINGERPRINT_CHUNK))
    return "b2s:" + digest.hexdigest()


def ffmpeg_reason(exc: av.FFmpegError | OSError) -> str:
    """FFmpeg's own words for a failure, plus its last log line when PyAV captured one."""
    reason = exc.strerror or type(exc).__name__
    log = getattr(exc, "log", None)  # (level, component, message), only when logging is on
    if log and log[2].strip():
        reason += f" ({log[2].strip()})"
    return reason


class PacketTally:
    """What demuxing a video stream delivered, to compare with what the file declares.

    Fed every demuxed packet of the stream (:meth:`add`); :meth:`shortfall` then says whether
    the packets fall short of the length the container's header declares. Containers that
    declare no length (Matroska, WebM, MPEG-TS: ``stream.frames == 0``) cannot be checked.
    """

    def __init__(self) -> None:
        self.packets = 0  # non-empty packets = frames the decoder will deliver
        self._last_dts: int | None = None
        self._dts_step = 1

    def add(self, packet: av.Packet) -> None:
        """Count one demuxed packet (empty flush packets are ignored)."""
        if not packet.size:
            return
        self.packets += 1
        if packet.dts is not None:
            if self._last_dts is not None and packet.dts > self._last_dts:
                self._dts_step = packet.dts - self._last_dts
            self._last_dts = packet.dts

    def shortfall(
        self, container: av.container.InputContainer, stream: av.video.stream.VideoStream
    ) -> str | None:
        """``None`` when the packets cover the declared length, else the reason they do not.

        AVI declares its length in frame slots of the stream's time base (``strh``
        ``dwLength``), and a slot may be an empty "drop" chunk that the demuxer never
        delivers (the real ``vtest_lamminhthien.avi``: 682 slots at 50 fps for 341 frames at
        25 fps), so it is checked by where the last packet's slot ends: its decoding
        timestamp plus the step between the last two packets. An AVI cut short loses its
        index, and the demuxer then reads the chunks that remain without flagging anything.
        Other containers (MP4/MOV) declare their number of samples, one per packet.
        """
        declared = stream.frames
        if declared <= 0:
            return None
        if container.format.name == "avi":
            covered = (self._last_dts or 0) + self._dts_step
            if covered >= declared:
                return None
            assert stream.time_base is not None  # FFmpeg gives every demuxed stream one
            rate = float(1 / stream.time_base)
            return (
                f"truncated: the AVI header declares {declared} frames ({declared / rate:.2f} s "
                f"at {rate:g} fps) but the file ends after frame {covered} "
                f"({covered / rate:.2f} s, {self.packets} frames present)"
            )
        if self.packets >= declared:
            return None
        return (
            f"truncated: the {container.format.name.split(',')[0]} index declares {declared} "
            f"frames but only {self.packets} are present"
        )


def probe_video(path: Path | str) -> VideoProbe:
    """Probe one video file: frame count, fps, size, codec, fingerprint.

    How frames are counted, and why. Container frame-count fields are unreliable: the
    real ``vtest_lamminhthien.avi`` declares 682 frames (its AVI index includes empty
    "drop" chunks) but only 341 decode. So we open the file with PyAV, take the first
    video stream (cover-art "attached pictures" are skipped), demux the packets of that
    stream *without decoding them* and count the non-empty ones: the frames a full decode
    delivers, at a fraction of its cost. The whole file is read, so on a real benchmark the
    probe is I/O-bound, not CPU-bound.

    Decodability: the first frame is decoded (packets are fed to the decoder until one
    frame comes out; decode errors on leading packets are tolerated, as players do), so a
    file with a valid header but garbage payload is rejected instead of counted.

    Truncation: when the demuxer reports that the last packet was cut short by the end of
    the file (a partial read flagged as corrupt, which the mp4/mov and AVI demuxers do),
    the file is rejected as ``"truncated"`` rather than probed with fewer frames, because
    labels and ground truth for a benchmark video refer to the complete clip. So is a file
    whose packets fall short of the length its container declares (:class:`PacketTally`):
    an AVI cut short (its index is lost and the demuxer reads the remaining chunks without
    flagging anything) or an MP4 cut on a packet boundary. An mp4 cut before its ``moov``
    atom (the usual case: moov written last) cannot be opened at all and is reported as
    ``"cannot open: ..."``. Limitation:
    truncated Matroska/WebM/MPEG-TS files (their demuxers silently drop the partial packet,
    and they declare no frame count) are indistinguishable from shorter videos and probe
    successfully with the frames that exist.

    ``fps`` is FFmpeg's guessed rate (falling back to the average, then the base rate): the
    guess follows the packet timing, where the average trusts the header. For the AVI above
    the header says 50 fps while timestamps advance by 2 ticks per frame — 25 fps, so its
    341 frames last 13.6 s as the container says; for ordinary MP4s the two rates agree.

    Raises :class:`VideoProbeError` for every way the file can be unusable.
    """
    import av  # here: `vadscene status` and the store's readers need no PyAV

    path = Path(path)
    if not path.exists():
        raise VideoProbeError(path, "file not found")
    if not path.is_file():
        raise VideoProbeError(path, "not a regular file")
    try:
        size_bytes = path.stat().st_size
        if size_bytes == 0:
            raise VideoProbeError(path, "empty file")
        fingerprint = content_fingerprint(path)
    except OSError as exc:
        raise VideoProbeError(path, f"cannot read: {ffmpeg_reason(exc)}") from exc

    try:
        container = av.open(str(path), metadata_errors="replace")
    except (av.FFmpegError, OSError) as exc:
        raise VideoProbeError(path, f"cannot open: {ffmpeg_reason(exc)}") from exc

    with container:
        stream = next(
            (
                s
                for s in container.streams.video
                if not s.disposition & av.stream.Disposition.attached_pic
            ),
            None,
        )
        if stream is None:
            raise VideoProbeError(path, "no video stream")
        if stream.codec_context is None:  # PyAV found no decoder for the codec id
            raise VideoProbeError(path, "unsupported codec: no decoder for the video stream")
        rate = stream.guessed_rate or stream.average_rate or stream.base_rate
        if not rate:  # None or 0: duration would be undefined
            raise VideoProbeError(path, "unknown frame rate")

        tally = PacketTally()
        num_frames = 0
        decoded = False
        last_corrupt = False
        decode_error: av.FFmpegError | None = None
        try:
            for packet in container.demux(stream):
                tally.add(packet)
                if packet.size == 0:  # PyAV's end-of-stream flush packet, or an empty chunk
                    continue
                num_frames += 1
                last_corrupt = packet.is_corrupt
                if not decoded:
                    try:
                        decoded = bool(packet.decode())
                    except av.FFmpegError as exc:
                        decode_error = exc
            if num_frames and not decoded:
                # Decoders with reordering delay hold frames back until flushed.
                decoded = bool(stream.codec_context.decode(None))
        except av.FFmpegError as exc:
            raise VideoProbeError(
                path, f"cannot read after {num_frames} frames: {ffmpeg_reason(exc)}"
            ) from exc

        if num_frames == 0:
            raise VideoProbeError(path, "zero frames")
        if last_corrupt:
            raise VideoProbeError(
                path, f"truncated: file ends inside frame {num_frames} (last packet incomplete)"
            )
        if not decoded:
            detail = ffmpeg_reason(decode_error) if decode_error else "decoder produced nothing"
            raise VideoProbeError(path, f"no decodable frame: {detail}")
        shortfall = tally.shortfall(container, stream)
        if shortfall is not None:
            raise VideoProbeError(path, shortfall)

        fps = float(rate)
        return VideoProbe(
            num_frames=num_frames,
            fps=fps,
            duration_s=num_frames / fps,
            width=stream.codec_context.width,
            height=stream.codec_context.height,
            codec=stream.codec_context.name,
            size_bytes=size_bytes,
            fingerprint=fingerprint,
        )


def iter_video_files(root: Path | str) -> list[Path]:
    """All video files under ``root``, recursively, in sorted order.

    A file counts as a video when its suffix, lower-cased, is in :data:`VIDEO_EXTENSIONS`
    (benchmarks mix ``.mp4`` and ``.MP4``). Hidden files and hidden directories (name
    starting with ``.``, relative to ``root``) are skipped, so macOS ``._clip.mp4``
    resource forks and ``.cache``/``.git`` trees never turn into phantom videos.
    Symlinked files are listed; symlinked sub-directories are not descended into (avoids
    cycles). The sort order is deterministic so runs over a benchmark are reproducible.

    Raises ``NotADirectoryError`` if ``root`` is not a directory, so a mistyped path fails
    loudly instead of yielding an empty benchmark.
    """
    root = Path(root)
    if not root.is_dir():
        raise NotADirectoryError(f"{root}: not a directory")
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        found.extend(
            Path(dirpath, name)
            for name in filenames
            if not name.startswith(".") and Path(name).suffix.lower() in VIDEO_EXTENSIONS
        )
    return sorted(found)
