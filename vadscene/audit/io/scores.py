"""Reading model frame scores into :class:`ModelScores`, aligned to a ground truth.

Video ids are file stems, as for ground truth (:mod:`vadscene.benchmark.ground_truth`).

Score formats (:func:`load_scores`, detected from the path): a long table (``.csv``/``.tsv``,
or ``.parquet``/``.arrow``/``.feather`` read column-wise), a folder of per-video ``.npy``
files, or one concatenated 1-D ``.npy`` split by a video order. See :func:`load_scores` for
the alignment and snippet-repetition rules.

Scores are aligned for all videos at once: every video's scores are read into one array
back to back, and checking, reordering to the ground truth and snippet repetition are array
operations over it, so the Python work per video is a file read or a name lookup.
"""

from __future__ import annotations

import os
import re
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from vadscene.benchmark.frames import (
    AuditInputError,
    GroundTruth,
    numeric_scores,
    require_finite,
)
from vadscene.benchmark.ground_truth import check_video_sets
from vadscene.benchmark.readers import (
    ARROW_SUFFIXES,
    TABLE_SEPARATORS,
    group_rows,
    load_npy,
    read_table,
)
from vadscene.benchmark.video_lists import (
    distinct_video_ids,
    read_video_list,
    video_id_from_entry,
    video_id_from_stem,
)
from vadscene.core.errors import VadsceneError

ScoreSource = Path | str | np.ndarray | Sequence[float] | Mapping[str, np.ndarray | Sequence[float]]
"""A score file or folder, one array of all videos' scores, or a mapping video → scores."""


@dataclass(frozen=True, eq=False)
class ModelScores:
    """One model's frame scores aligned to a :class:`GroundTruth` (float32 or float64, finite).

    ``scores`` may be any 1-D array or sequence of numbers; it is stored as a read-only
    copy, float32 when the values are float32 (or float16: exact, and half the memory of
    float64; ties stay ties) and float64 otherwise — never rounded to float32. A read-only
    float32/float64 array that owns its data is kept without a copy (nothing else can write
    to it; :func:`load_scores` hands over such arrays). NaN, ±inf, non-numbers and integers
    beyond ±2⁵³ are refused here, in the words of :func:`vadscene.audit.io.scores.load_scores`;
    the length is checked against the ground truth by :func:`vadscene.audit.run_audit`.
    """

    name: str
    scores: np.ndarray  # float32 or float64, shape (F,)
    source: str
    family: str | None = None
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise AuditInputError(
                f"{self.source}: a model needs a non-empty name, got {self.name!r}"
            )
        where = f"{self.source}: model '{self.name}'"
        scores = self.scores
        if not _sealed(scores):
            scores = numeric_scores(scores, where, keep_float32=True)  # a new array
        if scores.ndim != 1:
            raise AuditInputError(
                f"{where}: expected scores of shape (F,) (one per frame), got {scores.shape}"
            )
        if _CHECKED.get(id(scores)) is not scores:
            require_finite(scores, where)
        scores.flags.writeable = False
        object.__setattr__(self, "scores", scores)
        object.__setattr__(self, "notes", tuple(self.notes))


def load_scores(
    path: ScoreSource,
    ground_truth: GroundTruth,
    *,
    name: str,
    family: str | None = None,
    snippet_repeat: int = 1,
    video_order: Path | str | Sequence[str] | None = None,
) -> ModelScores:
    """One model's scores, aligned frame by frame to ``ground_truth`` (float32 where every
    score read is float32, else float64).

    ``path`` is a file or folder, or the scores themselves: a 1-D array (or list) of all
    videos' scores back to back, split like a concatenated ``.npy``, or a mapping of video id
    to that video's scores, aligned like a folder of per-video files. Arrays are checked with
    the same rules and words as files.

    Formats, detected from the path:

    - **table** (``.csv``, ``.tsv``, ``.parquet``, ``.arrow``, ``.feather``): columns
      ``video``, ``score`` and optional ``frame``, rows in any order; with ``frame`` each
      video's rows must number ``0..m-1`` (snippets when ``snippet_repeat > 1``), without it
      rows are taken in file order. Parquet and Arrow IPC tables are read column-wise
      (:mod:`vadscene.benchmark.arrow_tables`), and one may hold several models: a column
      named like the model (``name``) is its scores, else the ``score`` column is.
    - **npy folder**: one ``.npy`` per video, shape ``(m,)`` or ``(m, 1)``; ids from stems.
      Several files of one video (crops ``__0`` … ``__9``) or 2-D ``(m, C)`` arrays are
      errors: average the crops first.
    - **concatenated** ``.npy``: one 1-D array holding all videos back to back, in
      ``video_order`` (a list file read by :func:`vadscene.benchmark.video_lists.read_video_list`,
      or a sequence of ids/entries; default: the ground truth's order). With
      ``snippet_repeat=1`` video ``v`` owns ``n_v`` values. With ``snippet_repeat=k > 1`` it
      owns ``m_v`` snippet scores, where ``m_v`` follows the first rule among ``ceil(n_v/k)``,
      ``floor(n_v/k)``, ``(n_v-1)//k`` whose total equals the array's length (rules with
      equal totals split identically); the rule used is stated in the notes. XD-Violence's
      standard I3D features have ``(n_v-1)//16`` snippets for all 800 test videos, but
      UCF-Crime's follow no rule of the raw frame counts (9 of 290 videos have one snippet
      fewer than ``floor(n_v/16)``): split those against a snippet-resolution ground truth
      (PEL4VAD ``single_gt``: ``16·m_v`` frames, so ``ceil`` is exact) or save per-video files.

    Snippet repetition (``snippet_repeat=k``): each score is repeated ``k`` times
    (``np.repeat``), giving ``L = k·m`` values for a video of ``n`` frames. ``L > n`` with
    ``L - n < k`` is truncated to ``n``; ``L < n`` with ``n - L <= k`` is padded with the last
    score (up to one whole snippet may be missing: feature extractors drop the last, possibly
    complete, snippet); any other ``L`` is an error. Without repetition every video needs
    exactly ``n`` scores. Scores must be finite. Videos of the scores missing from the ground
    truth, and ground-truth videos without scores, are errors listing them.
    """
    file = Path(path) if isinstance(path, str | Path) else None
    label: Path | str
    if file is None:
        label = f"scores of model '{name}'"
    else:
        label = file
        if not file.exists():
            raise AuditInputError(f"{file}: score file or folder not found")
    if isinstance(snippet_repeat, bool) or not isinstance(snippet_repeat, int):
        raise AuditInputError(f"{label}: snippet_repeat must be an integer, got {snippet_repeat!r}")
    if snippet_repeat < 1:
        raise AuditInputError(f"{label}: snippet_repeat must be >= 1, got {snippet_repeat}")
    unit = "snippet" if snippet_repeat > 1 else "frame"
    suffix = "" if file is None else file.suffix.lower()
    mapping = isinstance(path, Mapping)
    concatenated = (file is None and not mapping) or (
        file is not None and file.is_file() and suffix == ".npy"
    )
    if video_order is not None and not concatenated:
        raise AuditInputError(
            f"{label}: video_order applies to one concatenated .npy score array only"
        )
    notes: list[str] = []
    per_video: _PerVideo
    if isinstance(path, Mapping):
        notes.append("format: in-memory mapping of video → scores")
        per_video = _PerVideo.of(
            {
                video_id_from_entry(str(video)): _one_video(values, f"{label}: video {video}", unit)
                for video, values in path.items()
            }
        )
    elif file is None:
        order = _video_order(label, ground_truth, video_order)
        per_video = _split_concatenated(
            label, np.asarray(path), ground_truth, order, snippet_repeat, notes
        )
        notes[-1] = notes[-1].replace("one concatenated .npy", "one in-memory array")
    elif file.is_dir():
        notes.append("format: folder of per-video .npy score arrays")
        per_video = _read_score_folder(file, unit)
    elif suffix in ARROW_SUFFIXES:
        column = score_column(file, name)
        notes.append(f"format: score table ({suffix[1:]}, column {column}, read column-wise)")
        per_video = _read_arrow_scores(file, column, unit)
    elif suffix in TABLE_SEPARATORS:
        notes.append(f"format: score table ({suffix[1:]})")
        per_video = _read_score_table(file, unit)
    elif concatenated:
        order = _video_order(file, ground_truth, video_order)
        per_video = _split_concatenated(
            file, load_npy(file), ground_truth, order, snippet_repeat, notes
        )
    else:
        raise AuditInputError(
            f"{file}: unsupported score file; expected a folder of .npy files, one "
            "concatenated .npy, or a .csv/.tsv/.parquet/.arrow/.feather table"
        )
    scores = align_scores(label, ground_truth, per_video, snippet_repeat, notes)
    scores.flags.writeable = False  # a new array: ModelScores keeps it without a copy
    _CHECKED[id(scores)] = scores  # align_scores checked every value repeated into it
    return ModelScores(
        name=name,
        scores=scores,
        source="in-memory scores" if file is None else str(file),
        family=family,
        notes=tuple(notes),
    )


class ModelSpec(NamedTuple):
    """One model to audit: its name, score path, backbone family and, when its scores are
    per snippet, its own snippet length (``None``: the run's default)."""

    name: str
    path: Path
    family: str | None = None
    snippet_repeat: int | None = None


def parse_scores_argument(text: str) -> ModelSpec:
    """``NAME=PATH[@FAMILY][:K]`` → :class:`ModelSpec`, e.g. ``rtfm=out/rtfm.npy@i3d:16``.

    ``:K`` (digits at the very end) gives this model's snippet repeat, so frame-level and
    snippet-level models can be audited in one run. The family is the part after the last
    ``@`` when it contains no path separator, so a path with ``@`` in a folder name still
    parses. Name, path and family must not be empty.
    """
    usage = f"expected NAME=PATH[@FAMILY][:K], e.g. rtfm=scores/rtfm.npy@i3d:16; got {text!r}"
    name, separator, rest = text.partition("=")
    name, rest = name.strip(), rest.strip()
    if not separator or not name or not rest:
        raise AuditInputError(f"model scores argument: {usage}")
    repeat = None
    if (suffix := re.fullmatch(r"(.+):(\d+)", rest)) is not None:
        rest, repeat = suffix.group(1).strip(), int(suffix.group(2))
    location, at, family = rest.rpartition("@")
    if not at or "/" in family or "\\" in family:
        location, family = rest, ""
    elif not family.strip() or not location.strip():
        raise AuditInputError(f"model scores argument: empty path or family; {usage}")
    return ModelSpec(name, Path(location.strip()), family.strip() or None, repeat)


# --- scores -------------------------------------------------------------------------------


_READ_SIZE = 1 << 16
"""Bytes asked of one read of a score file: a UCF-Crime video's snippet scores in one call."""
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_NPY_MAGIC = b"\x93NUMPY\x01\x00"
_VECTOR_HEADERS = {
    f"{{'descr': '{dtype.str}', 'fortran_order': False, 'shape': (".encode(): dtype
    for dtype in _FLOATS
}
"""The start of the header numpy.save writes for a little-endian float32/float64 array."""
_VECTOR_HEADER_LENGTH = len(next(iter(_VECTOR_HEADERS)))


class _PerVideo(NamedTuple):
    """Scores of several videos back to back: video ``videos[i]`` owns the next
    ``lengths[i]`` values. ``fresh``: ``values`` is an array of its own, which the aligned
    scores may be without a copy."""

    videos: list[str]
    values: np.ndarray
    lengths: np.ndarray  # int64
    fresh: bool

    @classmethod
    def of(cls, per_video: Mapping[str, np.ndarray]) -> _PerVideo:
        arrays = list(per_video.values())
        return cls(
            list(per_video),
            np.concatenate(arrays) if arrays else np.empty(0),
            np.array([array.shape[0] for array in arrays], dtype=np.int64),
            True,
        )


_CHECKED: weakref.WeakValueDictionary[int, np.ndarray] = weakref.WeakValueDictionary()
"""The sealed arrays :func:`load_scores` aligned, by id while they live: their values are the
scores it found finite, so :class:`ModelScores` does not check every frame again."""


def _sealed(values: object) -> bool:
    """A read-only float32/float64 array owning its data: nothing else can change it."""
    return (
        isinstance(values, np.ndarray)
        and values.dtype in _FLOATS
        and values.flags.owndata
        and not values.flags.writeable
    )


def _read_score_folder(path: Path, unit: str) -> _PerVideo:
    """Every ``*.npy`` of the folder (sorted by name), one video each.

    A plain float32/float64 file of shape ``(m,)`` or ``(m, 1)`` — what models save — is
    read with one system call and its header checked as bytes; any other file goes through
    :func:`~vadscene.benchmark.readers.load_npy` and :func:`_one_video`, which accept or
    refuse it in their own words.
    """
    try:
        names = sorted(entry.name for entry in os.scandir(path) if entry.name.endswith(".npy"))
    except OSError as exc:
        raise AuditInputError(f"{path}: cannot list the score folder ({exc.strerror})") from None
    if not names:
        raise AuditInputError(f"{path}: no .npy score files in the folder")
    videos: list[str] = []
    pieces: list[tuple[memoryview, np.dtype] | np.ndarray] = []
    lengths: list[int] = []
    file_of: dict[str, str] = {}
    folder = os.open(path, os.O_RDONLY)  # the files are opened relative to it
    try:
        for name in names:
            stem = name[:-4]
            plain = stem == stem.strip() and "/" not in stem and "\\" not in stem
            video = video_id_from_stem(stem) if plain else video_id_from_entry(name)
            if video in file_of:
                raise AuditInputError(
                    f"{path}: {file_of[video]} and {name} are both video {video}; "
                    "one file per video is expected (average the crops first)"
                )
            file_of[video] = name
            piece = _plain_scores(folder, name)
            if piece is None:
                array = _one_video(load_npy(path / name), f"{path / name}: video {video}", unit)
                pieces.append(array)
                lengths.append(array.shape[0])
            else:
                pieces.append(piece[:2])
                lengths.append(piece[2])
            videos.append(video)
    finally:
        os.close(folder)
    return _PerVideo(videos, _joined(pieces), np.array(lengths, dtype=np.int64), True)


def _plain_scores(folder: int, name: str) -> tuple[memoryview, np.dtype, int] | None:
    """The data bytes, dtype and length of a plain float32/float64 ``.npy`` of shape (m,) or
    (m, 1) in ``folder`` (a descriptor); ``None`` for any other file or on any error (the
    caller reads it again with the full reader and its messages)."""
    try:
        descriptor = os.open(name, os.O_RDONLY, dir_fd=folder)
    except OSError:
        return None
    try:
        data = os.read(descriptor, _READ_SIZE)
        if len(data) == _READ_SIZE:  # a long video: the rest of the file
            chunks = [data]
            while chunk := os.read(descriptor, 1 << 24):
                chunks.append(chunk)
            data = b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(descriptor)
    # The header numpy.save writes: magic, version 1.0, its length, the dict, spaces, "\n".
    if data[:8] != _NPY_MAGIC:
        return None
    start = 10 + int.from_bytes(data[8:10], "little")
    dtype = _VECTOR_HEADERS.get(data[10 : 10 + _VECTOR_HEADER_LENGTH])
    close = data.find(b")", 10 + _VECTOR_HEADER_LENGTH, start)
    if dtype is None or close < 0 or data[start - 1 : start] != b"\n":
        return None
    if data[close : start - 1].rstrip(b" ") != b"), }":
        return None
    shape = data[10 + _VECTOR_HEADER_LENGTH : close]
    count = shape[:-1] if shape.endswith(b",") else shape[:-3] if shape.endswith(b", 1") else b""
    if not count.isdigit() or len(data) - start != int(count) * dtype.itemsize:
        return None
    return memoryview(data)[start:], dtype, int(count)


def _joined(pieces: Sequence[tuple[memoryview, np.dtype] | np.ndarray]) -> np.ndarray:
    """One array of the pieces back to back (float32 only if every piece is float32)."""
    first = pieces[0]
    if isinstance(first, tuple) and all(
        isinstance(piece, tuple) and piece[1] == first[1] for piece in pieces
    ):
        # one copy out of the joined bytes: an array of its own, writeable
        return np.frombuffer(b"".join(piece[0] for piece in pieces), first[1]).copy()
    return np.concatenate(
        [
            np.frombuffer(piece[0], piece[1]) if isinstance(piece, tuple) else piece
            for piece in pieces
        ]
    )


def _one_video(values: object, where: str, unit: str) -> np.ndarray:
    """One video's scores: float32 or float64 of shape (T,) (a (T, 1) column is accepted)."""
    array = numeric_scores(values, where, unit, keep_float32=True)
    if array.ndim == 2 and array.shape[1] == 1:
        array = array[:, 0]
    if array.ndim != 1:
        hint = " (one column per crop? average the crops first)" if array.ndim == 2 else ""
        raise AuditInputError(
            f"{where}: expected scores of shape (T,) or (T, 1), got {array.shape}{hint}"
        )
    return array


def _read_score_table(path: Path, unit: str) -> _PerVideo:
    table = read_table(path, required=("video", "score"))
    index = "frame" if "frame" in table.columns else None
    videos, rows = group_rows(path, table, indexed_by=index, unit=unit)
    column = table["score"].to_numpy()
    return _PerVideo.of(
        {
            video: numeric_scores(column[video_rows], f"{path}: video {video}", unit)
            for video, video_rows in zip(videos, rows, strict=True)
        }
    )


def score_column(path: Path, name: str) -> str:
    """The column of a Parquet/Arrow table holding model ``name``'s scores: the one named
    like the model, else ``score``."""
    from vadscene.benchmark.arrow_tables import table_columns

    columns = table_columns(path)
    return name if name in columns and name not in ("video", "frame") else "score"


def _read_arrow_scores(path: Path, column: str, unit: str) -> _PerVideo:
    from vadscene.benchmark.arrow_tables import read_frame_table

    table = read_frame_table(path, {column: "score"}, frame="optional", unit=unit)
    values = table.values[column]
    # owned: a copy out of the file's columns; else a read-only view of them
    return _PerVideo(table.videos, values, table.counts, values.flags.owndata)


def _video_order(
    path: Path | str, ground_truth: GroundTruth, video_order: Path | str | Sequence[str] | None
) -> list[str]:
    if video_order is None:
        return list(ground_truth.video_ids)
    try:
        if isinstance(video_order, str | Path):
            return read_video_list(video_order)
        order = distinct_video_ids(enumerate(map(str, video_order), 1), unit="entries")
    except VadsceneError as exc:
        raise AuditInputError(f"{path}: video order: {exc}") from None
    if not order:
        raise AuditInputError(f"{path}: the video order is empty")
    return order


def _split_concatenated(
    path: Path | str,
    array: np.ndarray,
    ground_truth: GroundTruth,
    order: list[str],
    snippet_repeat: int,
    notes: list[str],
) -> _PerVideo:
    if array.ndim == 2 and array.shape[1] == 1:
        array = array[:, 0]
    if array.ndim != 1:
        raise AuditInputError(
            f"{path}: a concatenated score array must be 1-D, got shape {array.shape}"
        )
    array = numeric_scores(
        array, str(path), "snippet" if snippet_repeat > 1 else "frame", keep_float32=True
    )
    check_video_sets(path, ground_truth, order)
    index = {video: i for i, video in enumerate(ground_truth.video_ids)}
    frames = ground_truth.frame_counts[[index[v] for v in order]]
    k = snippet_repeat
    rules = {"n" if k == 1 else "ceil(n/k)": -(-frames // k)}
    if k > 1:
        rules |= {"floor(n/k)": frames // k, "(n-1)//k": (frames - 1) // k}
    totals = {rule: int(lengths.sum()) for rule, lengths in rules.items()}
    rule = next((r for r, total in totals.items() if total == array.shape[0]), None)
    if rule is None:
        expected = ", ".join(f"{total} ({r})" for r, total in totals.items())
        raise AuditInputError(
            f"{path}: the concatenated array has {array.shape[0]} values but the "
            f"{len(order)} videos of the order need {expected}"
            + (
                " per frame; one score per snippet needs snippet_repeat"
                if k == 1
                else " snippets; when the snippet counts follow no rule of n (UCF-Crime's I3D "
                "features), save per-video files or a table, or use a ground truth at snippet "
                "resolution (e.g. PEL4VAD single_gt)"
            )
        )
    notes.append(
        "format: one concatenated .npy"
        + (f", split into {rule} snippets per video (k={k}, n frames)" if k > 1 else "")
    )
    return _PerVideo(order, array, rules[rule].astype(np.int64), True)


def align_scores(
    path: Path | str,
    ground_truth: GroundTruth,
    per_video: Mapping[str, np.ndarray] | _PerVideo,
    k: int,
    notes: list[str],
) -> np.ndarray:
    """Each video's scores (a mapping video → 1-D scores, or scores back to back) as one
    array in the ground truth's frame order, each repeated ``k`` times (see
    :func:`load_scores` for the rules); float32 stays float32. A new array unless the
    scores were already a fresh array in that order and ``k == 1``."""
    scores = per_video if isinstance(per_video, _PerVideo) else _PerVideo.of(per_video)
    check_video_sets(path, ground_truth, scores.videos)
    n = ground_truth.frame_counts
    position = {video: i for i, video in enumerate(scores.videos)}
    order = np.fromiter(
        (position[video] for video in ground_truth.video_ids), np.int64, ground_truth.n_videos
    )
    m = scores.lengths[order]
    bounds = np.concatenate([[0], np.cumsum(m)])
    values, fresh = scores.values, scores.fresh
    if not np.array_equal(order, np.arange(order.size)):
        starts = np.concatenate([[0], np.cumsum(scores.lengths)])[order]
        values = values[np.repeat(starts - bounds[:-1], m) + np.arange(bounds[-1])]
        fresh = True
    length = m * k
    wrong_length = m != n if k == 1 else (length < n - k) | (length >= n + k)
    failing = wrong_length | (m == 0)
    finite = np.isfinite(values)
    if not finite.all():
        nonfinite = np.concatenate([[0], np.cumsum(~finite)])[bounds]
        failing |= np.diff(nonfinite) > 0
    if failing.any():
        _refuse_video(path, ground_truth, values, bounds, int(np.argmax(failing)), k)
    if k == 1:
        notes.append("one score per frame (no snippet repetition)")
        return values if fresh else values.copy()
    # Frame f of a video takes snippet f // k; frames past the last snippet take its score
    # (padding), and its repetition stops at the video's end (truncation): the last
    # snippet of each video is repeated n - k·(m - 1) times, the others k times.
    repeats = np.full(values.size, k, dtype=np.int64)
    repeats[bounds[1:] - 1] = n - k * (m - 1)
    extra = length - n
    truncated, padded = extra[extra > 0], -extra[extra < 0]
    notes.append(
        f"snippet_repeat={k}: each score repeated {k}×; "
        f"{truncated.size} videos truncated to their frame count (by up to "
        f"{int(truncated.max(initial=0))} frames), {padded.size} padded with their last score "
        f"(by up to {int(padded.max(initial=0))} frames), "
        f"{ground_truth.n_videos - truncated.size - padded.size} exact"
    )
    return np.repeat(values, repeats)


def _refuse_video(
    path: Path | str,
    ground_truth: GroundTruth,
    values: np.ndarray,
    bounds: np.ndarray,
    i: int,
    k: int,
) -> None:
    """The error of video ``i`` (in the ground truth's order), the first that fails."""
    video, n = ground_truth.video_ids[i], int(ground_truth.frame_counts[i])
    unit = "snippet" if k > 1 else "frame"
    own = values[bounds[i] : bounds[i + 1]]
    require_finite(own, f"{path}: video {video}", unit, scope=" in this video")
    m = own.shape[0]
    if m == 0:
        raise AuditInputError(f"{path}: video {video}: no scores (the video has {n} frames)")
    if k == 1:
        raise AuditInputError(
            f"{path}: video {video}: {m} scores but the ground truth has {n} frames"
        )
    raise AuditInputError(
        f"{path}: video {video}: {m} snippets × {k} = {m * k} frames, but the ground "
        f"truth has {n} frames (allowed {n - k}..{n + k - 1}: truncate fewer than {k} "
        f"extra frames or pad at most {k} missing ones)"
    )
