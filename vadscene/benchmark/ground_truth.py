"""Reading benchmark ground truth into :class:`vadscene.benchmark.frames.GroundTruth`.

Video ids are always file stems: folders and extensions are dropped and a trailing crop index
``__N`` is removed (:func:`vadscene.benchmark.video_lists.video_id_from_entry`), so
``Abuse/Abuse028_x264.mp4``, ``test/Abuse028_x264__1.npy`` and ``Abuse028_x264`` are the same
video. Frames are numbered from 0.

Ground-truth formats (:data:`GROUND_TRUTH_FORMATS`; ``format=None`` detects them: a folder is
``npy-folder``, ``.json`` is ``json``, ``.csv``/``.tsv``/``.parquet``/``.arrow``/``.feather``
is ``table``, any other file is ``ucf-crime`` text):

``ucf-crime``
    One video per line, whitespace-separated; blank lines and ``#`` comments are skipped.
    Three layouts, fixed by the first line and required on every line:

    - ``name category s1 e1 s2 e2 ...`` (UCF-Crime ``Temporal_Anomaly_Annotation.txt``);
    - ``name frames category s1 e1 ...`` (UR-DMU ``UCF_Annotation.txt``: raw frame count);
    - ``name s1 e1 s2 e2 ...`` (XD-Violence ``annotations.txt``: no category column).

    Any even number of interval numbers; the pair ``-1 -1`` means "no interval". Intervals
    are frame numbers: ``interval_end="exclusive"`` (default) labels frames ``s <= f < e``
    anomalous, ``"inclusive"`` labels ``s <= f <= e``. Frame counts come from the frames
    column, else from ``frame_counts`` (a mapping id → frames or a counts file, see
    :func:`load_frame_counts`); passing both is an error. Count keys match video ids exactly
    or by their UCF-Crime short name (``Abuse028_x264`` ↔ ``Abuse028``,
    ``Normal_Videos_003_x264`` ↔ ``Normal003``, as in uws4vad ``ucf_tframes.txt``).
    Without a category column (XD style, which lists only anomalous videos) the counts define
    the video set and its order: counted videos absent from the annotation are all-normal.
    With a category column the annotation defines the video set and its order; extra counts
    are ignored. An interval whose end overruns the frame count by at most
    ``END_OVERRUN_TOLERANCE`` frames (decoders disagree by a frame or two; the UCF-Crime
    annotation has five such intervals) is clipped to the video end and recorded in
    ``conventions["clipped_intervals"]``; a larger overrun, a start at or after the end, a
    negative number or ``s > e`` is an error.

``npy-folder``
    One 1-D ``.npy`` of 0/1 (or bool, or 0.0/1.0) per video; a trailing ``_gt`` is removed
    from the stem before the crop index (PEL4VAD ``single_gt/Abuse028_x264__9_gt.npy`` →
    ``Abuse028_x264``). Videos are ordered by sorted id.

``json``
    ``{"<video>": {"num_frames": n, "labels": [0/1 × n]}, ...}`` (S3R ShanghaiTech ground
    truth); videos in file order.

``table``
    CSV, TSV, Parquet or Arrow IPC (``.arrow``, ``.feather``), one row per frame: columns
    ``video``, ``frame``, ``label`` and optionally ``category`` (constant per video). The
    frames of each video must be exactly ``0..n-1``, each once, in any row order. Videos in
    order of first appearance. Parquet and Arrow tables are read column-wise
    (:mod:`vadscene.benchmark.arrow_tables`): a benchmark of tens of millions of frames.

Categories come from the category column where the format has one, else from
:func:`vadscene.benchmark.video_lists.category_from_video_id`; a video whose name carries no
category (ShanghaiTech ``01_0014``) gets ``normal_category`` when it has no anomalous frame
and ``"Anomaly"`` otherwise. ``GroundTruth.conventions`` records ``format``,
``interval_end``, ``frame_counts`` (where the counts came from), ``categories``,
``video_order``, any clipped intervals, ``segments`` (what interval AP's events are made of)
and ``normal_with_anomaly``, and lists the videos with touching or overlapping intervals
(``overlapping_intervals``).

Annotated segments: the ``ucf-crime`` text keeps each interval as written, unmerged and
unclipped, read ``[start, end)`` on the annotated numbers whatever ``interval_end`` is (as the
released VadCLIP evaluation reads them; ``GroundTruth.segments``); the per-frame formats have
no segments but their label runs.

Consistency: a video of the normal category with anomalous frames is an error naming it, or,
with ``normal_with_anomaly="anomalous"``, is counted as anomalous everywhere: its category
becomes ``"Anomaly"`` (so it leaves every Normal-only population) and the conventions list it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from vadscene.benchmark.formats import GROUND_TRUTH_FORMATS
from vadscene.benchmark.formats import GroundTruthFormat as GroundTruthFormat
from vadscene.benchmark.frames import (
    AuditInputError,
    GroundTruth,
    binary_labels,
    refuse_beyond_memory,
)
from vadscene.benchmark.readers import (
    ARROW_SUFFIXES,
    TABLE_SEPARATORS,
    group_rows,
    load_npy,
    read_table,
)
from vadscene.benchmark.video_lists import (
    category_from_video_id,
    ucf_short_name,
    video_id_from_entry,
)
from vadscene.core import jsonio
from vadscene.core.errors import parse_failure

END_OVERRUN_TOLERANCE = 16
"""Frames an interval end may overrun the video's frame count before it is an error."""
ANOMALY_CATEGORY = "Anomaly"
"""Category of an anomalous video whose name carries no category (ShanghaiTech), and of a
normal-category video with anomalous frames under ``normal_with_anomaly="anomalous"``."""
NormalWithAnomaly = Literal["error", "anomalous"]
NORMAL_WITH_ANOMALY: tuple[NormalWithAnomaly, ...] = ("error", "anomalous")
"""What a video of the normal category with anomalous frames is: an error, or anomalous."""
_MAX_LISTED = 20
_INTEGER = re.compile(r"-?\d+")


def load_ground_truth(
    path: Path | str,
    *,
    format: str | None = None,
    interval_end: Literal["inclusive", "exclusive"] = "exclusive",
    frame_counts: Mapping[str, int] | Path | str | None = None,
    registry_counts: Mapping[str, int] | None = None,
    normal_category: str = "Normal",
    normal_with_anomaly: NormalWithAnomaly = "error",
) -> GroundTruth:
    """Frame labels of a benchmark from any of :data:`GROUND_TRUTH_FORMATS` (see module doc).

    ``interval_end`` and ``frame_counts`` apply to the ``ucf-crime`` text format only;
    ``frame_counts`` given with another format is an error (those formats carry their counts).
    ``registry_counts`` — the frame counts a workspace registered by probing its videos — are
    the fallback for a ``ucf-crime`` file without a count column when no ``frame_counts``
    are given; other formats ignore them. ``normal_with_anomaly``: what a video of
    ``normal_category`` with anomalous frames is (module doc, "Consistency").
    """
    path = Path(path)
    if not path.exists():
        raise AuditInputError(f"{path}: ground-truth file or folder not found")
    if format is None:
        format = _detect_ground_truth_format(path)
    elif format not in GROUND_TRUTH_FORMATS:
        raise AuditInputError(
            f"{path}: unknown ground-truth format {format!r}; expected one of "
            f"{', '.join(GROUND_TRUTH_FORMATS)}"
        )
    if interval_end not in ("inclusive", "exclusive"):
        raise AuditInputError(
            f"{path}: interval_end must be 'inclusive' or 'exclusive', got {interval_end!r}"
        )
    if normal_with_anomaly not in NORMAL_WITH_ANOMALY:
        raise AuditInputError(
            f"{path}: normal_with_anomaly must be one of {', '.join(NORMAL_WITH_ANOMALY)}, "
            f"got {normal_with_anomaly!r}"
        )
    if format != "ucf-crime" and frame_counts is not None:
        raise AuditInputError(
            f"{path}: frame_counts applies to the ucf-crime text format only; the {format} "
            "format carries its own frame counts"
        )
    if format == "ucf-crime":
        if path.is_dir():
            raise AuditInputError(f"{path}: the ucf-crime format needs a text file, not a folder")
        gt_parts = _read_annotation(path, interval_end, frame_counts, registry_counts)
    elif format == "npy-folder":
        gt_parts = _read_npy_folder(path)
    elif format == "json":
        gt_parts = _read_json(path)
    else:
        gt_parts = _read_label_table(path)
    return gt_parts.build(path, format, normal_category, normal_with_anomaly)


def load_frame_counts(path: Path | str) -> dict[str, int]:
    """Frame count per video id from a counts file, in file order.

    One video per line as ``<video> <frames>``, ``<video>@<frames>`` (uws4vad
    ``ucf_tframes.txt``), ``<video>,<frames>`` or tab-separated; a first line whose count is
    not an integer (a CSV header such as ``video,frames``), blank lines and ``#`` comments are
    skipped. Counts must be positive; a video listed twice is an error.
    """
    path = Path(path)
    counts: dict[str, int] = {}
    first_line: dict[str, int] = {}
    header_allowed = True
    for number, line in enumerate(_read_text_lines(path, "frame-counts file"), 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        separator = next((s for s in ("@", ",", "\t") if s in text), None)
        fields = [field.strip() for field in text.rsplit(separator, 1)]
        if len(fields) != 2 or not _INTEGER.fullmatch(fields[1]):
            if header_allowed:
                header_allowed = False
                continue
            raise AuditInputError(
                f"{path}:{number}: expected '<video> <frames>' (or '@', ',' or tab as "
                f"separator): {len(fields)} field(s), the last not an integer"
            )
        header_allowed = False
        video, frames = video_id_from_entry(fields[0]), int(fields[1])
        if frames <= 0:
            raise AuditInputError(f"{path}:{number}: frame count {frames} <= 0; expected >= 1")
        if video in counts:
            raise AuditInputError(
                f"{path}:{number}: the video of this line is listed twice (first on line "
                f"{first_line[video]}); expected each video once"
            )
        counts[video], first_line[video] = frames, number
    if not counts:
        raise AuditInputError(f"{path}: the frame-counts file lists no video")
    return counts


# --- ground truth -------------------------------------------------------------------------


@dataclass
class _Parts:
    """Ground truth before assembly: per-video labels, categories (None: from the name),
    annotated segments (None: a per-frame format, whose segments are its label runs)."""

    videos: list[str]
    categories: list[str | None]
    labels: list[np.ndarray]
    conventions: dict[str, str]
    segments: list[tuple[tuple[int, int], ...]] | None = None

    def build(
        self,
        path: Path,
        format: str,
        normal_category: str,
        normal_with_anomaly: NormalWithAnomaly = "error",
    ) -> GroundTruth:
        if not self.videos:
            raise AuditInputError(f"{path}: the ground truth lists no video")
        categories: list[str] = []
        from_labels = 0
        for video, given, labels in zip(self.videos, self.categories, self.labels, strict=True):
            category = (
                given if given is not None else category_from_video_id(video, normal_category)
            )
            if category is None:
                from_labels += 1
                category = ANOMALY_CATEGORY if labels.any() else normal_category
            categories.append(category)
        source = self.conventions.pop("categories", "video names (category_from_video_id)")
        if from_labels:
            source += (
                f"; {from_labels} videos without a category in their name: "
                f"{normal_category!r} if no anomalous frame, else {ANOMALY_CATEGORY!r}"
            )
        # refused, or recategorised in place, before the categories are frozen below
        normal_with_anomaly_stated = _treat_normal_with_anomaly(
            path, self.videos, categories, self.labels, normal_category, normal_with_anomaly
        )
        conventions = {
            "format": format,
            "interval_end": "not applicable (per-frame labels)",
            **self.conventions,
            "categories": source,
            "normal_category": normal_category,
            "segments": (
                "annotated intervals as written, unmerged, read [start, end) on the annotated "
                "numbers: the events of interval AP under the vadclip rule"
                if self.segments is not None
                else "runs of anomalous frame labels (a per-frame format has no annotated "
                "segments, so interval AP's vadclip and merged rules coincide)"
            ),
            "normal_with_anomaly": normal_with_anomaly_stated,
        }
        lengths = [len(labels) for labels in self.labels]
        return GroundTruth(
            video_ids=tuple(self.videos),
            categories=tuple(categories),
            offsets=np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
            labels=np.concatenate(self.labels).astype(bool),
            source=str(path),
            conventions=conventions,
            normal_category=normal_category,
            segments=tuple(self.segments) if self.segments is not None else None,
        )


def _treat_normal_with_anomaly(
    path: Path,
    videos: list[str],
    categories: list[str],
    labels: list[np.ndarray],
    normal_category: str,
    rule: NormalWithAnomaly,
) -> str:
    """Refuse, or recategorise in place as anomalous, the videos of ``normal_category`` with
    anomalous frames; the conventions' sentence on what was found and done.

    Such a video would count as mixed in micro/within/macro while every Normal-only
    population (the leak-free bias population, category-vs-Normal) took it for normal.
    """
    found = [
        i
        for i, (category, video_labels) in enumerate(zip(categories, labels, strict=True))
        if category == normal_category and video_labels.any()
    ]
    named = [f"{videos[i]} ({int(labels[i].sum())} anomalous frames)" for i in found]
    if found and rule == "error":
        raise AuditInputError(
            f"{path}: {len(found)} video(s) of category {normal_category!r} have anomalous "
            f"frames: {_listing(named)}; fix the ground truth, or count them as anomalous "
            "with normal_with_anomaly='anomalous' (vadscene audit --normal-with-anomaly "
            "anomalous)"
        )
    if not found:
        return f"{rule}: no video of category {normal_category!r} has anomalous frames"
    for i in found:
        categories[i] = ANOMALY_CATEGORY
    return (
        f"anomalous: {len(found)} video(s) of category {normal_category!r} with anomalous "
        f"frames counted as anomalous everywhere, category set to {ANOMALY_CATEGORY!r}: "
        f"{_listing(named)}"
    )


@dataclass
class _Line:
    """One parsed line of a ucf-crime annotation."""

    number: int
    video: str
    frames: int | None
    category: str | None
    intervals: list[tuple[int, int]]


def _detect_ground_truth_format(path: Path) -> str:
    if path.is_dir():
        return "npy-folder"
    suffix = path.suffix.lower()
    if suffix == ".json":
        return "json"
    if suffix in TABLE_SEPARATORS or suffix in ARROW_SUFFIXES:
        return "table"
    if suffix in {".npy", ".npz", ".mat", ".pkl"}:
        raise AuditInputError(
            f"{path}: a single {suffix} file is not a supported ground truth; use a folder "
            "of per-video .npy files, a .json, a table, or a UCF-Crime style text annotation"
        )
    return "ucf-crime"


def _read_annotation(
    path: Path,
    interval_end: str,
    frame_counts: Mapping[str, int] | Path | str | None,
    registry_counts: Mapping[str, int] | None = None,
) -> _Parts:
    lines = _parse_annotation_lines(path)
    has_frames = lines[0].frames is not None
    has_category = lines[0].category is not None
    conventions = {"interval_end": interval_end}
    if has_frames:
        if frame_counts is not None:
            raise AuditInputError(
                f"{path}: the annotation has a frame-count column; do not also pass frame_counts"
            )
        videos = [line.video for line in lines]
        # one layout throughout: every line has the frame-count column
        counts = {line.video: line.frames for line in lines if line.frames is not None}
        conventions["frame_counts"] = "column"
    else:
        if frame_counts is None:
            if registry_counts is None:
                raise AuditInputError(
                    f"{path}: the annotation has no frame-count column; pass frame_counts "
                    "(a counts file or a mapping video → frames)"
                )
            given = _checked_mapping(registry_counts)
            conventions["frame_counts"] = "workspace registry (probed videos)"
        elif isinstance(frame_counts, str | Path):
            given = load_frame_counts(frame_counts)
            conventions["frame_counts"] = f"counts file {frame_counts}"
        else:
            given = _checked_mapping(frame_counts)
            conventions["frame_counts"] = "mapping"
        videos, counts = _match_counts(path, [line.video for line in lines], given, has_category)
        aliased = [video for video in counts if video not in given]
        if aliased:
            conventions["frame_counts"] += (
                f" ({len(aliased)} videos matched by UCF-Crime short name, e.g. "
                f"{aliased[0]} ↔ {ucf_short_name(aliased[0])})"
            )
        if not has_category:
            conventions["video_set"] = (
                f"the frame counts: {len(videos)} videos, {len(videos) - len(lines)} of them "
                "not in the annotation and all-normal"
            )
    conventions["video_order"] = "frame counts" if "video_set" in conventions else "file"
    largest = max(videos, key=counts.__getitem__)
    total = sum(counts.values())
    refuse_beyond_memory(
        2 * total,  # a bool per frame, and the concatenated copy
        f"{path}: the ground truth's {len(videos)} videos hold {total:,} frames in all (video "
        f"{largest} alone {counts[largest]:,}; frame counts from {conventions['frame_counts']}); "
        "their labels",
    )
    by_video = {line.video: line for line in lines}
    clipped: list[str] = []
    labels = []
    segments: list[tuple[tuple[int, int], ...]] = []
    for video in videos:
        n = counts[video]
        video_labels = np.zeros(n, dtype=bool)
        line = by_video.get(video)
        if line is not None:  # a video only in the frame counts is all-normal
            for start, end in line.intervals:
                stop = end + 1 if interval_end == "inclusive" else end
                where = (
                    f"{path}:{line.number}: video {video}: interval [{start}, {end}] "
                    f"({interval_end} end)"
                )
                if start >= n:
                    raise AuditInputError(
                        f"{where} starts at or after the video's end: the video has {n} frames "
                        f"(0..{n - 1}; frame count from {conventions['frame_counts']})"
                    )
                if stop > n:
                    if stop - n > END_OVERRUN_TOLERANCE:
                        raise AuditInputError(
                            f"{where} ends past the video's end: the video has {n} frames "
                            f"(0..{n - 1}), so the end may be at most "
                            f"{n if interval_end == 'exclusive' else n - 1} (overrun "
                            f"{stop - n} > tolerance {END_OVERRUN_TOLERANCE}; frame count from "
                            f"{conventions['frame_counts']})"
                        )
                    clipped.append(f"{video} [{start}, {end}] n={n}")
                video_labels[start:stop] = True
        labels.append(video_labels)
        segments.append(tuple(line.intervals) if line is not None else ())
    overlapping = [
        f"{video} {' '.join(f'[{s}, {e}]' for s, e in intervals)}"
        for video, intervals in zip(videos, segments, strict=True)
        if _touch_or_overlap(intervals, interval_end)
    ]
    if overlapping:
        conventions["overlapping_intervals"] = (
            f"{len(overlapping)} video(s) with touching or overlapping intervals "
            f"({interval_end} ends), merged into one run of frame labels and kept apart for "
            f"interval AP under the vadclip rule: {_listing(overlapping)}"
        )
    if clipped:
        conventions["clipped_intervals"] = (
            f"{len(clipped)} interval(s) ending up to {END_OVERRUN_TOLERANCE} frames past the "
            f"frame count clipped to the video end: {_listing(clipped)}"
        )
    categories: list[str | None] = [
        by_video[video].category if video in by_video else None for video in videos
    ]
    if has_category:
        conventions["categories"] = "category column"
    return _Parts(videos, categories, labels, conventions, segments)


def _touch_or_overlap(intervals: tuple[tuple[int, int], ...], interval_end: str) -> bool:
    """Whether two intervals of one video share a frame or leave none between them, as
    frame labels under ``interval_end`` (so they merge into one run of labels)."""
    stops = sorted((s, e + 1 if interval_end == "inclusive" else e) for s, e in intervals)
    reach = -1
    for start, stop in stops:
        if start <= reach:
            return True
        reach = max(reach, stop)
    return False


def uncounted_annotation_extents(path: Path) -> dict[str, int] | None:
    """For a UCF-Crime style annotation text without a frame-count column: each video it names,
    in order → the fewest frames its intervals fit in; None when the text has the column.

    Such a text takes its frame counts from the registered videos, and :func:`load_ground_truth`
    wants one for every video it names: a video the folder lacks can be read with this stand-in
    and left out. Errors are the reader's own, with line numbers.
    """
    lines = _parse_annotation_lines(path)
    if lines[0].frames is not None:
        return None
    return {
        line.video: max((end + 1 for _start, end in line.intervals), default=1) for line in lines
    }


def _parse_annotation_lines(path: Path) -> list[_Line]:
    layouts = {
        (True, True): "name frames category intervals...",
        (False, True): "name category intervals...",
        (False, False): "name intervals...",
    }
    parsed: list[_Line] = []
    seen: dict[str, tuple[int, str]] = {}
    for number, text in enumerate(_read_text_lines(path, "annotation file"), 1):
        tokens = text.split()
        if not tokens or tokens[0].startswith("#"):
            continue
        video, rest = video_id_from_entry(tokens[0]), tokens[1:]
        frames = category = None
        if len(rest) >= 2 and _INTEGER.fullmatch(rest[0]) and not _INTEGER.fullmatch(rest[1]):
            frames, category, rest = int(rest[0]), rest[1], rest[2:]
        elif rest and not _INTEGER.fullmatch(rest[0]):
            category, rest = rest[0], rest[1:]
        layout = layouts[(frames is not None, category is not None)]
        if parsed:
            first = parsed[0]
            expected = layouts[(first.frames is not None, first.category is not None)]
            if layout != expected:
                raise AuditInputError(
                    f"{path}:{number}: line has layout '{layout}' but line "
                    f"{first.number} has '{expected}'; expected one layout throughout"
                )
        bad = [token for token in rest if not _INTEGER.fullmatch(token)]
        if bad:
            raise AuditInputError(
                f"{path}:{number}: expected integer interval bounds after the name; "
                f"{len(bad)} of the {len(rest)} fields there are not integers"
            )
        numbers = [int(token) for token in rest]
        if len(numbers) % 2:
            raise AuditInputError(
                f"{path}:{number}: {len(numbers)} interval numbers, expected "
                "start/end pairs (an even number)"
            )
        if frames is not None and frames <= 0:
            raise AuditInputError(f"{path}:{number}: frame count {frames} <= 0; expected >= 1")
        intervals = []
        for start, end in zip(numbers[::2], numbers[1::2], strict=True):
            if (start, end) == (-1, -1):
                continue
            if start < 0 or end < start:
                raise AuditInputError(
                    f"{path}:{number}: invalid interval [{start}, {end}] "
                    "(negative, or start after end; -1 -1 means no interval)"
                )
            intervals.append((start, end))
        if video in seen:
            first_number, spelling = seen[video]
            spellings = (
                ": the two names are one id (ids drop folders, extensions and a trailing __N "
                "crop index)"
                if spelling != tokens[0]
                else ""
            )
            raise AuditInputError(
                f"{path}:{number}: the video of this line is listed twice (first on line "
                f"{first_number}){spellings}; expected each video once, under distinct names"
            )
        seen[video] = number, tokens[0]
        parsed.append(_Line(number, video, frames, category, intervals))
    if not parsed:
        raise AuditInputError(f"{path}: the annotation lists no video")
    return parsed


def _match_counts(
    path: Path, annotated: list[str], counts: dict[str, int], has_category: bool
) -> tuple[list[str], dict[str, int]]:
    """Videos (annotation order, or counts order without a category column) and their counts."""
    by_short: dict[str, str | None] = {}
    for key in counts:
        short = ucf_short_name(key)
        by_short[short] = None if short in by_short else key  # None: ambiguous
    key_of: dict[str, str] = {}
    missing: list[str] = []
    for video in annotated:
        match = video if video in counts else by_short.get(ucf_short_name(video))
        if match is None:
            missing.append(video)
        else:
            key_of[video] = match
    if missing:
        raise AuditInputError(
            f"{path}: {len(missing)} annotated videos have no frame count (looked up by id "
            f"and by UCF-Crime short name): {_listing(missing)}"
        )
    if has_category:
        return annotated, {video: counts[key] for video, key in key_of.items()}
    video_of = {key: video for video, key in key_of.items()}
    videos = [video_of.get(key, key) for key in counts]
    return videos, {video: counts[key] for video, key in zip(videos, counts, strict=True)}


def _checked_mapping(frame_counts: Mapping[str, int]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for key, frames in frame_counts.items():
        video = video_id_from_entry(str(key))
        if isinstance(frames, bool) or not isinstance(frames, int | np.integer) or frames <= 0:
            raise AuditInputError(
                f"frame_counts mapping: video {video}: frame count must be a positive "
                f"integer, got {frames!r}"
            )
        if video in counts:
            raise AuditInputError(f"frame_counts mapping: video {video} is given twice")
        counts[video] = int(frames)
    return counts


def _read_npy_folder(path: Path) -> _Parts:
    files = sorted(path.glob("*.npy"))
    if not files:
        raise AuditInputError(f"{path}: no .npy ground-truth files in the folder")
    by_video: dict[str, tuple[Path, np.ndarray]] = {}
    for file in files:
        video = video_id_from_entry(file.stem.removesuffix("_gt"))
        if video in by_video:
            raise AuditInputError(
                f"{path}: {by_video[video][0].name} and {file.name} are both video {video}"
            )
        array = load_npy(file)
        if array.ndim != 1:
            raise AuditInputError(
                f"{file}: video {video}: expected a 1-D 0/1 array, got shape {array.shape}"
            )
        by_video[video] = (file, binary_labels(array, f"{file}: video {video}"))
    videos = sorted(by_video)
    return _Parts(
        videos,
        [None] * len(videos),
        [by_video[video][1] for video in videos],
        {"frame_counts": "array lengths", "video_order": "sorted ids"},
    )


def _read_json(path: Path) -> _Parts:
    try:
        data = jsonio.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AuditInputError(f"{path}: not a valid JSON file ({parse_failure(exc)})") from None
    if not isinstance(data, dict):
        raise AuditInputError(
            f'{path}: expected {{"<video>": {{"num_frames": n, "labels": [...]}}, ...}}'
        )
    videos: list[str] = []
    labels: list[np.ndarray] = []
    for position, (key, entry) in enumerate(data.items(), 1):
        if not isinstance(entry, dict) or not {"num_frames", "labels"} <= entry.keys():
            # the key is not shown: a file that is no ground truth has no video names
            raise AuditInputError(
                f'{path}: entry {position}: expected {{"num_frames": n, "labels": [...]}}'
            )
        video = video_id_from_entry(key)
        where = f"{path}: video {video}"
        if video in videos:
            raise AuditInputError(f"{where} appears twice")
        frames, values = entry["num_frames"], entry["labels"]
        if isinstance(frames, bool) or not isinstance(frames, int) or not isinstance(values, list):
            raise AuditInputError(f"{where}: num_frames must be an integer and labels a list")
        if len(values) != frames:
            raise AuditInputError(
                f"{where}: num_frames is {frames} but labels has {len(values)} values"
            )
        try:
            array = np.asarray(values, dtype=np.float64)
        except (TypeError, ValueError):
            raise AuditInputError(f"{where}: labels must be numbers 0/1") from None
        videos.append(video)
        labels.append(binary_labels(array, where))
    return _Parts(
        videos,
        [None] * len(videos),
        labels,
        {"frame_counts": "num_frames (equal to the labels' lengths)", "video_order": "file"},
    )


def _read_label_table(path: Path) -> _Parts:
    if path.suffix.lower() in ARROW_SUFFIXES:
        return _read_arrow_labels(path)
    table = read_table(path, required=("video", "frame", "label"))
    videos, rows = group_rows(path, table, indexed_by="frame")
    labels = [
        binary_labels(table["label"].to_numpy()[r], f"{path}: video {v}")
        for v, r in zip(videos, rows, strict=True)
    ]
    conventions = {"frame_counts": "rows per video", "video_order": "first appearance"}
    if "category" not in table.columns:
        return _Parts(videos, [None] * len(videos), labels, conventions)
    column = table["category"].astype(str).to_numpy()
    categories: list[str | None] = []
    for video, video_rows in zip(videos, rows, strict=True):
        values = pd.unique(column[video_rows])
        if len(values) != 1:
            raise AuditInputError(
                f"{path}: video {video}: {len(values)} different categories; the "
                "category must be constant per video"
            )
        categories.append(str(values[0]))
    conventions["categories"] = "category column"
    return _Parts(videos, categories, labels, conventions)


def _read_arrow_labels(path: Path) -> _Parts:
    from vadscene.benchmark.arrow_tables import read_frame_table

    table = read_frame_table(path, {"label": "label", "category": "text"}, optional=("category",))
    bounds = np.cumsum(table.counts)[:-1]
    conventions = {"frame_counts": "rows per video", "video_order": "first appearance"}
    categories: list[str | None] = [None] * len(table.videos)
    if "category" in table.texts:
        conventions["categories"] = "category column"
        categories = list(table.texts["category"])
    return _Parts(table.videos, categories, np.split(table.values["label"], bounds), conventions)


def check_video_sets(path: Path | str, ground_truth: GroundTruth, videos: list[str]) -> None:
    known = set(ground_truth.video_ids)
    given = set(videos)
    unknown = [v for v in videos if v not in known]
    missing = [v for v in ground_truth.video_ids if v not in given]
    problems = []
    if unknown:
        problems.append(f"{len(unknown)} videos not in the ground truth: {_listing(unknown)}")
    if missing:
        problems.append(f"{len(missing)} ground-truth videos without scores: {_listing(missing)}")
    if problems:
        raise AuditInputError(
            f"{path}: scores do not cover the ground truth ({ground_truth.source}): "
            + "; ".join(problems)
        )


# --- shared readers -----------------------------------------------------------------------


def _read_text_lines(path: Path, what: str) -> list[str]:
    if not path.is_file():
        raise AuditInputError(f"{path}: {what} not found")
    try:
        return path.read_text(encoding="utf-8-sig").splitlines()
    except UnicodeDecodeError as exc:
        raise AuditInputError(
            f"{path}: {what} is not UTF-8 text (undecodable byte at offset {exc.start})"
        ) from None


def _listing(names: list[str]) -> str:
    shown = ", ".join(names[:_MAX_LISTED])
    return shown + (f", … ({len(names) - _MAX_LISTED} more)" if len(names) > _MAX_LISTED else "")
