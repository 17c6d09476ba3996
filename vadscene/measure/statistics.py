"""Measure the two automatic scene factors of a video (and a colour hint) in one decoding pass.

Statistics
----------
All three are defined on the 8-bit full-range scale (black = 0, white = 255, zero colour = 0;
formulas and paper references in ``docs/metrics.md``, section "Measured scene statistics"),
computed from the decoder's own planes (Y = luma, U/V = chroma), read in order, each frame
exactly once:

* ``sharpness`` (factor *resolution*): mean over frames of ``var(L)``, where
  ``L = cv2.Laplacian(Y)`` with the default ``ksize=1`` kernel ``[[0,1,0],[1,-4,1],[0,1,0]]``
  and OpenCV's default border (reflect-101), at native resolution, and ``var`` is the
  population variance over all pixels: ``var(L) = ΣL²/N - (ΣL/N)²``. Blur removes the high
  frequencies the Laplacian responds to, so a blurrier (or upscaled) video scores lower.
* ``motion`` (factor *motion*): mean over consecutive frame pairs ``(t-1, t)`` with both frames
  normal of ``mean|Y_t - Y_{t-1}|``. Only normal frames count, because the factor describes
  the scene, and an anomalous event (a fight, an explosion) would otherwise make every
  anomalous video "high motion" by construction. ``None`` when no pair qualifies (a pair
  across a change of frame size or pixel format, which H.264 allows mid-stream, does not
  qualify either).
* ``chroma`` (hint for the manual factor *color*): mean over frames of
  ``mean|U-128| + mean|V-128|`` over the (subsampled) chroma planes. Grayscale footage encoded
  as YUV has U = V = 128, so it scores ~0 (encoder noise adds a few tenths at most); colour
  footage scores several units.

One scale. The planes are measured as coded and the sums mapped exactly onto 8-bit full
range, so the same picture scores the same in every pixel format (within rounding; the tests
encode one source in nine formats): limited-range video (Y in 16-235, U/V in 16-240, the
default of H.264, HEVC and MPEG video, and how an unflagged stream is read) is scaled by
``255/219`` per luma difference (sharpness ``× (255/219)²``, motion ``× 255/219``) and
``255/224`` for chroma; full-range video (``yuvj*`` MJPEG, or a stream flagged full range)
needs no mapping at 8 bits. Deeper video (9-16 bits) is measured on its native ``uint16``
plane and scaled by ``2^(bits-8)`` (limited range: 10-bit luma 64-940 is exactly 4 × 16-235)
or ``255 / (2^bits - 1)`` (full range), squared for sharpness; converting it to 8 bits first
would let swscale's dithering add fine noise that the Laplacian reads as detail. Formats that
are not planar YUV or gray (NV12, P010, RGB codecs) are converted to full-range 8-bit yuv420p
first.

Exactness. Every sum is an exact integer: for 8-bit planes the ksize-1 Laplacian is an
integer in [-1020, 1020], and the fused kernel (:mod:`vadscene.measure.kernel`, numba) computes
``ΣL``, ``ΣL²``, ``Σ|Y_t - Y_{t-1}|`` and the chroma sums in ``int64`` in one pass over the
frame, with no temporary planes. The OpenCV path (``cv2.Laplacian`` to ``CV_16S``, sums in
``int64``, ``cv2.norm(NORM_L1)``) is kept as the reference the kernel is tested against bit for
bit, and measures planes deeper than 8 bits (``CV_32F`` Laplacian, exact below 2^24). The
result equals ``cv2.meanStdDev(cv2.Laplacian(Y, cv2.CV_64F))[1]**2`` to ~1e-15 (the tests
check it).

Decoder
-------
PyAV, single-threaded, reading the Y/U/V planes of each decoded frame in place
(``np.frombuffer(plane)`` viewed as ``(height, line_size)`` rows cut to ``width``: no copy, no
colour conversion). The Y plane *is* the grayscale frame, so nothing is converted to BGR/RGB
and back (as OpenCV's and decord's readers, and PyAV's ``to_ndarray(format="gray")``, do with
swscale), and the chroma planes come for free. Parallelism comes from processes, one video
per worker, so the decoder runs single-threaded, and each worker process runs OpenCV
single-threaded too (OpenCV's own thread pool would fight the other workers):
:mod:`vadscene.measure.run`'s pool workers call ``cv2.setNumThreads(1)``; this module leaves
that process-global setting alone.

Sampling mode
-------------
``MeasureParams(stride=k)`` still decodes every frame (H.264 inter frames cannot be skipped:
later frames are predicted from them) and still computes motion on every pair, because it is
cheap and heavy-tailed: a few pairs (cuts, redraws) can carry much of the mean. Only
sharpness and chroma, the expensive and stable part, are computed on one frame per block of
``k``, at an offset that follows a golden-ratio sequence rather than a fixed phase, so the
samples cannot lock onto a periodic pattern such as the encoder's B-frame cadence (B-frames
are coded coarser, hence blurrier). It is not the default: exhaustive is the definition.

Faults
------
Every way a file can fail raises :class:`MeasurementError` (never a raw PyAV/OpenCV error),
with a reason naming the problem: ``"file not found"``, ``"not a regular file"``,
``"empty file"``, ``"cannot open: <FFmpeg reason>"``, ``"no video stream"``,
``"unsupported codec: ..."``, ``"zero frames"``, ``"no decodable frame: ..."``,
``"decoding failed after N frames: ..."``, ``"truncated or damaged: ..."``,
``"truncated: the AVI header declares ..."`` / ``"truncated: the mov index declares ..."``,
``"partial read: ..."``, ``"normal_mask has M entries but N frames were decoded ..."``. A file
that decodes some frames and then fails, or delivers fewer frames than its container declares,
than the demuxer delivered packets, or than the probe registered, is an error, not a partial
measurement: the missing frames would be absent from the means without anyone noticing, and
the ground-truth mask would no longer line up with what was measured. ``allow_partial=True``
(``vadscene measure --allow-partial``) opts into measuring what decodes, with ``frames_read``
recorded. Limitation: Matroska, WebM and MPEG-TS declare no frame count, so a file of theirs
cut on a packet boundary still looks like a shorter video.
"""

from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import av
import cv2
import numpy as np

from vadscene.core.errors import VadsceneError
from vadscene.measure.kernel import NO_PLANE, fused_kernel
from vadscene.video.probe import PacketTally, ffmpeg_reason

MEASURE_VERSION = "2"
"""Version of the statistics' definitions; bump it when they change, so cached results die."""

DECODER = "pyav"
"""The decoder every measurement uses (part of the cache key: statistics are on its luma)."""

DECODER_VERSIONS = f"PyAV {av.__version__}, libavcodec " + ".".join(
    map(str, av.library_versions["libavcodec"])
)
"""The decoder's library versions, also in the cache key."""

MASK_TOLERANCE = 0.05
"""Largest accepted difference between the mask length and the decoded frame count, as a
fraction of the frame count. Decoders and annotation tools disagree by a frame or two at the
end of a clip; a larger gap means the mask belongs to another video or another frame rate."""

# Pixel formats read in place: planar Y (U, V) at one bit depth, little-endian above 8 bits.
# Anything else (NV12, P010, RGB codecs, alpha) is converted to full-range 8-bit yuv420p first,
# which is slower but rare in VAD data.
_NATIVE_FORMAT = re.compile(r"(?:yuvj?(?:420|422|440|444|411|410)p|gray)(?:(9|10|12|14|16)le)?")
_GOLDEN = (5**0.5 - 1) / 2  # frac(φ), drives the sampling offsets of stride > 1


@dataclass(frozen=True)
class MeasureParams:
    """How a video is measured; :meth:`as_dict` is the cache key of a measurement.

    ``stride``: 1 (the default) measures every frame; ``k > 1`` is the sampling mode described
    in the module docstring (every frame is still decoded and motion still uses every pair;
    sharpness and chroma are computed on one frame per block of ``k``).
    """

    stride: int = 1

    def __post_init__(self) -> None:
        if isinstance(self.stride, bool) or not isinstance(self.stride, int) or self.stride < 1:
            raise ValueError(f"stride must be a positive integer, got {self.stride!r}")

    def as_dict(self) -> dict[str, int | str]:
        """Everything that determines the result: statistic version, decoder and the versions
        of its libraries (a new FFmpeg may decode a frame differently), and stride."""
        return {
            "measure_version": MEASURE_VERSION,
            "decoder": DECODER,
            "decoder_versions": DECODER_VERSIONS,
            "stride": self.stride,
        }


@dataclass(frozen=True)
class VideoMeasurement:
    """The statistics of one video (formulas in the module docstring) and how they were made.

    ``frames_read`` counts every decoded frame (also in sampling mode, where sharpness and
    chroma skip most of them); ``motion_pairs`` counts the frame pairs averaged into
    ``motion``; ``seconds`` is the wall time of the measurement; ``params`` is
    :meth:`MeasureParams.as_dict`.
    """

    sharpness: float
    motion: float | None
    chroma: float
    frames_read: int
    motion_pairs: int
    decoder: str
    seconds: float
    params: dict[str, int | str]

    def as_dict(self) -> dict[str, object]:
        """Plain-dict form, for JSON caches and tables."""
        return asdict(self)


class MeasurementError(VadsceneError):
    """A video cannot be measured; ``str(exc)`` is ``"<path>: <reason>"``.

    The reasons are listed in the module docstring; a corpus run groups failures by them.
    """

    def __init__(self, path: Path | str, reason: str) -> None:
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")

    def __reduce__(self) -> tuple[type[MeasurementError], tuple[Path, str]]:
        """Pickle by (path, reason): errors travel back from pool and Dask workers."""
        return (type(self), (self.path, self.reason))


def measure_video(
    path: Path | str,
    *,
    normal_mask: np.ndarray | None = None,
    params: MeasureParams = MeasureParams(),
    expected_frames: int | None = None,
    allow_partial: bool = False,
) -> VideoMeasurement:
    """Decode ``path`` once, in order, and return its sharpness, motion and chroma.

    ``normal_mask`` is one bool per frame, True for a normal frame (from the temporal ground
    truth); ``None`` means every frame is normal (normal videos, or no ground truth). It must be
    a 1-D *bool* array: 0/1 integer arrays are refused because anomaly labels use 1 for
    *anomalous*, and silently reading them as "1 = normal" would measure exactly the wrong
    frames. It only affects ``motion``. Its length is checked against the number of frames
    actually decoded: if they differ by at most :data:`MASK_TOLERANCE` of the frame count, the
    frames beyond the end of the mask count as normal and mask entries beyond the last frame
    are ignored (decoders and annotation tools often disagree by a frame or two at the end);
    a larger difference raises :class:`MeasurementError` naming both lengths.

    Partial reads are failures: fewer frames than the container declares (see
    :class:`vadscene.video.probe.PacketTally`), than the demuxer delivered packets, or than
    ``expected_frames`` (the workspace registry's count from the probe) raise
    :class:`MeasurementError` with the reason, because the means would silently describe part
    of the video and the ground truth would no longer line up. ``allow_partial=True`` measures
    the frames that decode instead (a damaged last packet is skipped, a longer mask is cut to
    the frames read) and ``frames_read`` records how many that was.

    Raises :class:`MeasurementError` for every unusable file (see the module docstring) and
    ``ValueError`` for a malformed ``normal_mask``. Module-level and returning a frozen
    dataclass, so it runs unchanged in process pools and on Dask workers.
    """
    started = time.perf_counter()
    path = Path(path)
    mask = _check_mask(normal_mask)
    _check_file(path)
    scan = _scan(path, params.stride, allow_partial)
    if expected_frames is not None and scan.frames_read < expected_frames and not allow_partial:
        raise MeasurementError(
            path,
            f"partial read: decoded {scan.frames_read} frames but the probe registered "
            f"{expected_frames} (the file changed since the scan? run `vadscene scan`)",
        )
    if allow_partial and mask is not None and len(mask) > scan.frames_read:
        mask = mask[: scan.frames_read]
    pairs_ok = _normal_pairs(path, mask, scan.frames_read) & ~np.isnan(scan.motion)
    motion_pairs = int(np.count_nonzero(pairs_ok))
    return VideoMeasurement(
        sharpness=float(np.mean(scan.sharpness)),
        motion=float(np.mean(scan.motion[pairs_ok])) if motion_pairs else None,
        chroma=float(np.mean(scan.chroma)),
        frames_read=scan.frames_read,
        motion_pairs=motion_pairs,
        decoder=DECODER,
        seconds=time.perf_counter() - started,
        params=params.as_dict(),
    )


@dataclass(frozen=True)
class _Scan:
    """Per-frame results of one decoding pass, before the normal mask is applied."""

    frames_read: int
    sharpness: np.ndarray  # var(L) per analysed frame
    chroma: np.ndarray  # mean|U-128| + mean|V-128| per analysed frame
    motion: np.ndarray  # mean|Y_t - Y_{t-1}| for t = 1 .. frames_read-1; NaN across a size change


def _check_mask(normal_mask: np.ndarray | None) -> np.ndarray | None:
    if normal_mask is None:
        return None
    mask = np.asarray(normal_mask)
    if mask.ndim != 1 or mask.dtype != np.bool_:
        raise ValueError(
            f"normal_mask must be a 1-D bool array (True = normal frame), "
            f"got shape {mask.shape} dtype {mask.dtype}"
        )
    return mask


def _check_file(path: Path) -> None:
    """Reject what FFmpeg would describe badly: a missing path, a directory, an empty file."""
    try:
        if not path.exists():
            raise MeasurementError(path, "file not found")
        if not path.is_file():
            raise MeasurementError(path, "not a regular file")
        if path.stat().st_size == 0:
            raise MeasurementError(path, "empty file")
    except OSError as exc:
        raise MeasurementError(path, f"cannot read: {ffmpeg_reason(exc)}") from exc


def _normal_pairs(path: Path, mask: np.ndarray | None, frames_read: int) -> np.ndarray:
    """For t = 1 .. frames_read-1: are frames t-1 and t both normal? (after the length check)"""
    if mask is None:
        return np.ones(frames_read - 1, dtype=bool)
    if abs(len(mask) - frames_read) > MASK_TOLERANCE * frames_read:
        raise MeasurementError(
            path,
            f"normal_mask has {len(mask)} entries but {frames_read} frames were decoded "
            f"(more than {MASK_TOLERANCE:.0%} apart: mask of another video?)",
        )
    normal = np.ones(frames_read, dtype=bool)  # frames past the end of the mask are normal
    shared = min(len(mask), frames_read)
    normal[:shared] = mask[:shared]
    return normal[1:] & normal[:-1]


@dataclass(frozen=True)
class _Scale:
    """How one pixel format's code values map onto the 8-bit full-range scale.

    A luma code value ``Y`` of a ``bits``-bit plane corresponds to ``Y * luma`` on the 8-bit
    full-range scale, up to an offset that differences and the Laplacian cancel; a chroma value
    ``C`` to ``(C - neutral) * chroma``. Limited ("MPEG", "tv") range puts black..white at
    16..235 and chroma at 16..240 (times ``2^(bits-8)``); full ("JPEG", "pc") range uses all of
    ``0 .. 2^bits - 1`` (ITU-T H.264 / H.265, equations E-1 to E-4 of the VUI semantics).
    """

    bits: int
    luma: float
    chroma: float
    neutral: int


@lru_cache(maxsize=64)
def _scale_of(format_name: str, full_range: bool) -> _Scale | None:
    """The scale of a natively read pixel format; ``None`` for formats converted first.

    ``yuvj*`` formats are full range by definition; for the others the decoder's colour-range
    flag decides, and an unspecified range is limited (the default of H.264, HEVC and MPEG
    video, and how FFmpeg itself interprets it).
    """
    match = _NATIVE_FORMAT.fullmatch(format_name)
    if match is None:
        return None
    bits = int(match.group(1) or 8)
    if full_range or format_name.startswith("yuvj"):
        luma = chroma = 255 / (2**bits - 1)
    else:
        luma = 255 / (219 * 2 ** (bits - 8))
        chroma = 255 / (224 * 2 ** (bits - 8))
    return _Scale(bits=bits, luma=luma, chroma=chroma, neutral=2 ** (bits - 1))


_FULL_RANGE = av.video.reformatter.ColorRange.JPEG
_UINT8 = np.dtype(np.uint8)
_UINT16 = np.dtype("<u2")

_CONVERTED = _Scale(bits=8, luma=1.0, chroma=1.0, neutral=128)
"""The scale of frames converted by :func:`_planes`: full-range 8-bit yuv420p."""


class _Plane(NamedTuple):
    """One plane of a decoded frame, in place: the decoder's padded rows and the picture width."""

    rows: np.ndarray  # (height, pitch), C-contiguous
    width: int

    @property
    def view(self) -> np.ndarray:
        """The picture: a (height, width) view of the rows."""
        return self.rows[:, : self.width]


def _planes(frame: av.VideoFrame) -> tuple[list[_Plane], _Scale]:
    """Y (U, V) of ``frame`` in the decoder's buffers, and their scale.

    Natively read formats are not copied or converted; higher bit depths stay on their
    native ``uint16`` plane rather than going through swscale, which would dither them to 8
    bits and add fine noise the Laplacian responds to. (Called for every frame, hence the
    module-level constants.)
    """
    scale = _scale_of(frame.format.name, frame.color_range == _FULL_RANGE)
    if scale is None:
        frame = frame.reformat(
            format="yuv420p",
            src_color_range=frame.color_range,
            dst_color_range=_FULL_RANGE,
            threads=1,
        )
        scale = _CONVERTED
    dtype = _UINT8 if scale.bits == 8 else _UINT16
    # numpy's stub lists a few buffer types, but any object exporting the buffer protocol
    # works, as a PyAV plane does (av.buffer.Buffer.__buffer__).
    planes = [
        _Plane(np.ndarray((p.height, p.line_size // dtype.itemsize), dtype, p), p.width)  # type: ignore[arg-type]
        for p in frame.planes[:3]
    ]
    return planes, scale


@lru_cache(maxsize=8)
def _neutral_chroma(shape: tuple[int, int], dtype: str, neutral: int) -> np.ndarray:
    """A constant zero-colour plane to measure chroma against in one ``cv2.norm``."""
    plane = np.full(shape, neutral, dtype=dtype)
    plane.flags.writeable = False
    return plane


def _laplacian_variance(luma: np.ndarray) -> float:
    """``var(cv2.Laplacian(luma))`` in code values, exactly, via ``ΣL²/N - (ΣL/N)²``.

    8-bit planes use a ``CV_16S`` Laplacian (an integer in [-1020, 1020]); deeper planes a
    ``CV_32F`` one, which still holds every value exactly (|L| <= 4 * 65535 < 2^24). The sums
    are taken in ``int64``, because ``cv2.norm(NORM_L2SQR)`` rounds.
    """
    lap = cv2.Laplacian(luma, cv2.CV_16S if luma.dtype == np.uint8 else cv2.CV_32F)
    values = lap.astype(np.int64).ravel()
    mean = int(values.sum()) / values.size
    return int(values @ values) / values.size - mean * mean


def _chroma_offset(plane: np.ndarray, neutral: int) -> float:
    """``mean|C - neutral|`` of one chroma plane in code values: its distance from colourless."""
    zero = _neutral_chroma(plane.shape, plane.dtype.str, neutral)
    return cv2.norm(plane, zero, cv2.NORM_L1) / plane.size


def _frame_statistics(
    planes: list[_Plane], scale: _Scale, previous: _Plane | None, analysed: bool
) -> tuple[float | None, float | None, float | None]:
    """``(sharpness, motion, chroma)`` terms of one frame on the 8-bit full-range scale.

    Sharpness and chroma are ``None`` when the frame is not analysed (sampling mode), motion
    when there is no comparable previous frame. 8-bit planes go through the fused kernel
    (:mod:`vadscene.measure.kernel`, one pass, exact integer sums); deeper planes, and motion
    alone, through OpenCV (the reference the kernel is tested against). Both paths turn the
    sums into the same floating-point operations, so they agree bit for bit.
    """
    luma = planes[0]
    pixels = luma.rows.shape[0] * luma.width
    if not analysed:
        if previous is None:
            return None, None, None
        return None, cv2.norm(luma.view, previous.view, cv2.NORM_L1) / pixels * scale.luma, None
    if scale.bits != 8:
        difference = (
            None
            if previous is None
            else cv2.norm(luma.view, previous.view, cv2.NORM_L1) / pixels * scale.luma
        )
        offsets = (_chroma_offset(c.view, scale.neutral) for c in planes[1:])
        return (
            _laplacian_variance(luma.view) * scale.luma**2,
            difference,
            sum(offsets, 0.0) * scale.chroma,
        )
    u, v = (planes[1].rows, planes[2].rows) if len(planes) == 3 else (NO_PLANE, NO_PLANE)
    chroma_width = planes[1].width if len(planes) == 3 else 0
    laplacian_sum, laplacian_squares, difference_sum, offset_u, offset_v = fused_kernel(
        luma.rows,
        luma.width,
        NO_PLANE if previous is None else previous.rows,
        u,
        v,
        chroma_width,
        scale.neutral,
    )
    mean = laplacian_sum / pixels
    chroma_pixels = u.shape[0] * chroma_width
    chroma_terms = (offset_u / chroma_pixels, offset_v / chroma_pixels) if chroma_width else ()
    return (
        (laplacian_squares / pixels - mean * mean) * scale.luma**2,
        None if previous is None else difference_sum / pixels * scale.luma,
        sum(chroma_terms, 0.0) * scale.chroma,
    )


def _open(path: Path) -> tuple[av.container.InputContainer, av.video.stream.VideoStream]:
    try:
        container = av.open(str(path), metadata_errors="replace")
    except (av.FFmpegError, OSError) as exc:
        raise MeasurementError(path, f"cannot open: {ffmpeg_reason(exc)}") from exc
    stream = next(
        (
            s
            for s in container.streams.video
            if not s.disposition & av.stream.Disposition.attached_pic
        ),
        None,
    )
    if stream is None or stream.codec_context is None:
        container.close()
        if stream is None:
            raise MeasurementError(path, "no video stream")
        raise MeasurementError(path, "unsupported codec: no decoder for the video stream")
    stream.codec_context.thread_count = 1  # parallelism comes from processes, see docstring
    return container, stream


def _is_analysed(t: int, stride: int) -> bool:
    """Whether frame ``t`` is analysed: all frames at stride 1, else one per block of ``stride``.

    The frame analysed in block ``b`` (frames ``b*stride ... b*stride + stride-1``) sits at
    offset ``floor(stride * frac(b * φ))``, φ = 0.618... (golden-ratio Weyl sequence): the
    offsets are evenly spread but never periodic, so the samples cannot lock onto periodic
    structure such as the encoder's B-frame cadence or repeated frames (see the module
    docstring). Pure arithmetic, hence identical on every machine and Python version.
    """
    if stride == 1:
        return True
    block, offset = divmod(t, stride)
    return offset == int(stride * (block * _GOLDEN % 1.0))


def _scan(path: Path, stride: int, allow_partial: bool) -> _Scan:
    """Decode every frame in order: motion for every pair, sharpness and chroma for the frames
    :func:`_is_analysed` picks (all of them at stride 1)."""
    sharpness: list[float] = []
    chroma: list[float] = []
    motion: list[float] = []
    tally = PacketTally()
    t = 0  # index of the next decoded frame = frames decoded so far
    prev: tuple[_Plane, _Scale] | None = None  # luma of frame t-1 and its scale
    container, stream = _open(path)
    with container:
        try:
            for packet in container.demux(stream):
                tally.add(packet)
                if packet.is_corrupt and packet.size:
                    if allow_partial:
                        continue  # measure the frames before the damage
                    raise MeasurementError(
                        path, f"truncated or damaged: video packet {tally.packets} is incomplete"
                    )
                for frame in packet.decode():
                    planes, scale = _planes(frame)
                    luma = planes[0]
                    comparable = (
                        prev[0]
                        if prev is not None
                        and prev[0].rows.shape == luma.rows.shape
                        and prev[0].width == luma.width
                        and prev[1] is scale  # scales are shared instances (lru_cache)
                        else None
                    )
                    sharp, difference, colour = _frame_statistics(
                        planes, scale, comparable, _is_analysed(t, stride)
                    )
                    if prev is not None:
                        motion.append(np.nan if difference is None else difference)
                    if sharp is not None and colour is not None:  # both or neither
                        sharpness.append(sharp)
                        chroma.append(colour)
                    prev = (luma, scale)
                    t += 1
        except (av.FFmpegError, OSError) as exc:
            if t == 0:
                raise MeasurementError(path, f"no decodable frame: {ffmpeg_reason(exc)}") from exc
            raise MeasurementError(
                path, f"decoding failed after {t} frames: {ffmpeg_reason(exc)}"
            ) from exc
        if tally.packets == 0:
            raise MeasurementError(path, "zero frames")
        if t == 0:
            raise MeasurementError(path, "no decodable frame: decoder produced nothing")
        shortfall = tally.shortfall(container, stream)
    if shortfall is None and t < tally.packets:
        shortfall = f"partial read: the decoder delivered {t} of the {tally.packets} frames"
    if shortfall is not None and not allow_partial:
        raise MeasurementError(path, shortfall)
    return _Scan(
        frames_read=t,
        sharpness=np.array(sharpness),
        chroma=np.array(chroma),
        motion=np.array(motion),
    )
