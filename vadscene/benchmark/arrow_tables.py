"""Column-wise reading of Parquet and Arrow IPC frame tables: one row per video and frame.

Scores (``video, frame, score``) and ground truth (``video, frame, label[, category]``) of a
large benchmark come as one table of tens of millions of rows. It is read here with pyarrow,
a batch of rows at a time (a Parquet row group is decoded, copied into numpy arrays of the
whole columns and dropped), never row by row and never through pandas object columns, and
grouped by video with array operations whose Python work is per video name, not per row: the
video column is read as numbers into its distinct names (Parquet keeps it dictionary-encoded),
each row's place is ``start of its video + its frame``, and a table already in (video, frame)
order is taken as it is, without a copy.

Files (:data:`vadscene.benchmark.readers.ARROW_SUFFIXES`): ``.parquet``, or Arrow IPC
(``.arrow``, ``.feather``: the file format, read memory mapped, or the stream format). Rows
may come in any order. Video ids are file stems
(:func:`vadscene.benchmark.video_lists.video_id_from_entry`), in order of first appearance.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from vadscene.benchmark.frames import EXACT_INTEGER_LIMIT, AuditInputError
from vadscene.benchmark.readers import ARROW_SUFFIXES as ARROW_SUFFIXES  # the files read here
from vadscene.benchmark.video_lists import video_id_from_entry

ColumnKind = Literal["score", "label", "text"]
"""What a value column holds: finite numbers, 0/1 labels, or a text constant per video."""

_BLOCK_ROWS = 1 << 18
"""Rows read, checked or counted at once: bounds the temporaries, not the table."""
_KINDS: dict[str, str] = {
    "score": "numbers (float, integer or boolean)",
    "label": "0/1 labels (boolean, integer or float)",
    "text": "text",
}


@dataclass(frozen=True)
class FrameTable:
    """A table's rows grouped by video, each video's rows in frame order, back to back.

    ``values`` holds each score or label column in that order (float32 stays float32), as
    arrays of their own; ``texts`` each text column as one value per video.
    """

    videos: list[str]
    counts: np.ndarray  # int64, rows per video
    values: dict[str, np.ndarray]
    texts: dict[str, list[str]]


def table_columns(path: Path) -> list[str]:
    """The column names of a Parquet or Arrow IPC table, read from its schema only."""
    return list(_schema(path).names)


def read_frame_table(
    path: Path,
    columns: Mapping[str, ColumnKind],
    *,
    frame: Literal["required", "optional"] = "required",
    optional: Sequence[str] = (),
    unit: str = "frame",
) -> FrameTable:
    """The ``video`` column, the ``frame`` column (0-based numbers of each video's rows; when
    ``frame="optional"`` and absent, rows count in file order) and ``columns`` of a table.

    Each video's ``frame`` values must be exactly ``0..n-1``, once each. ``optional`` names
    the ``columns`` that may be absent. Missing columns, wrong column types, empty names,
    empty values, non-finite scores, integer scores beyond ±2⁵³, labels other than 0/1 and
    text that changes within a video are :class:`AuditInputError` naming the file, column,
    video and frame (``unit`` words the frame numbers, e.g. ``snippet``).
    """
    schema = _schema(path)
    names = set(schema.names)
    required = ["video"] + (["frame"] if frame == "required" else [])
    required += [c for c in columns if c not in optional]
    absent = [column for column in required if column not in names]
    if absent:
        raise AuditInputError(
            f"{path}: missing column(s) {', '.join(absent)}; expected columns "
            f"{', '.join(['video', 'frame', *columns])} (the table has {len(names)} column(s))"
        )
    kinds: dict[str, str] = {"video": "video"} | ({"frame": "frame"} if "frame" in names else {})
    kinds |= {column: kind for column, kind in columns.items() if column in names}
    _check_types(path, schema, kinds)
    read = _Columns.of(path, kinds)
    if read.n_rows == 0:
        raise AuditInputError(f"{path}: the table has no rows")
    grouping = _Grouping.of(path, read, unit)
    values: dict[str, np.ndarray] = {}
    texts: dict[str, list[str]] = {}
    for column, kind in columns.items():
        if column not in names:
            continue
        if read.nulls[column]:
            raise AuditInputError(
                f"{path}: column {column}: {read.nulls[column]} rows have no value (the first: "
                f"{grouping.place(read.first_null[column])}); every row needs one"
            )
        if kind == "text":
            texts[column] = _constant_per_video(path, column, read, grouping)
        else:
            values[column] = _checked_values(path, column, kind, read.arrays.pop(column), grouping)
    return FrameTable(grouping.videos, grouping.counts, values, texts)


def _schema(path: Path) -> pa.Schema:
    with _readable(path):
        if path.suffix.lower() == ".parquet":
            return pq.read_schema(path)
        return _ipc_reader(path).schema


@contextmanager
def _readable(path: Path) -> Iterator[None]:
    """Turns pyarrow's failures to read ``path`` into an :class:`AuditInputError`."""
    try:
        yield
    except (OSError, pa.ArrowException) as exc:
        what = "Parquet" if path.suffix.lower() == ".parquet" else "Arrow IPC (file or stream)"
        raise AuditInputError(
            f"{path}: cannot read the table as {what} ({type(exc).__name__})"
        ) from None


def _ipc_reader(path: Path) -> pa.ipc.RecordBatchFileReader | pa.ipc.RecordBatchStreamReader:
    try:
        return pa.ipc.open_file(pa.memory_map(str(path)))
    except pa.ArrowInvalid:
        return pa.ipc.open_stream(pa.memory_map(str(path)))


def _is_text(kind: pa.DataType) -> bool:
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    return bool(
        pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_string_view(kind)
    )


def _check_types(path: Path, schema: pa.Schema, kinds: Mapping[str, str]) -> None:
    expected = {
        "video": "video names (text or integers)",
        "frame": "integers (0-based frame numbers)",
        **_KINDS,
    }
    for column, role in kinds.items():
        kind = schema.field(column).type
        if role == "video":
            fits = _is_text(kind) or pa.types.is_integer(kind)
        elif role == "text":
            fits = _is_text(kind)
        elif role == "frame":
            fits = pa.types.is_integer(kind)
        else:
            fits = pa.types.is_floating(kind) or pa.types.is_integer(kind)
            fits = fits or pa.types.is_boolean(kind)
        if not fits:
            raise AuditInputError(f"{path}: column {column} must hold {expected[role]}, got {kind}")


@dataclass
class _Columns:
    """A table's columns as numpy arrays, filled batch by batch: a Parquet file's columns are
    never all in memory as Arrow data next to their numpy copies (an Arrow IPC file is memory
    mapped). A text (or video) column is the number of each row's value among
    ``names[column]``; ``nulls`` and ``first_null`` count and place each column's empty
    values, refused once the rows are grouped (so the message can name video and frame)."""

    n_rows: int
    arrays: dict[str, np.ndarray]
    names: dict[str, list[str]]
    nulls: dict[str, int]
    first_null: dict[str, int]
    _lookups: dict[str, tuple[pa.Array, np.ndarray]] = field(default_factory=dict)

    @classmethod
    def of(cls, path: Path, kinds: Mapping[str, str]) -> _Columns:
        with _readable(path):
            if path.suffix.lower() == ".parquet":
                # Parquet keeps text dictionary-encoded: read so, a number per row, no string
                text = [c for c, kind in kinds.items() if kind in ("video", "text")]
                # row groups decoded one at a time, not the whole file buffered first
                file = pq.ParquetFile(path, read_dictionary=text, pre_buffer=False)
                n_rows = file.metadata.num_rows
                batches = file.iter_batches(batch_size=_BLOCK_ROWS, columns=list(kinds))
                schema = file.schema_arrow
            else:
                table = _ipc_reader(path).read_all().select(list(kinds))  # memory mapped
                n_rows, batches, schema = table.num_rows, iter(table.to_batches()), table.schema
            read = cls(
                n_rows, {}, {c: [] for c, k in kinds.items() if k in ("video", "text")}, {}, {}
            )
            numbers: dict[str, dict[str, int]] = {column: {} for column in read.names}
            for column, kind in kinds.items():
                read.arrays[column] = np.empty(n_rows, _numpy_type(schema.field(column).type, kind))
                read.nulls[column] = 0
            at = 0
            for batch in batches:
                for column in kinds:
                    read._take(column, batch.column(column), at, numbers.get(column))
                at += batch.num_rows
        return read

    def _take(self, column: str, data: pa.Array, at: int, numbers: dict[str, int] | None) -> None:
        rows = slice(at, at + len(data))
        if data.null_count:
            if not self.nulls[column]:
                blank = pc.is_null(data).to_numpy(zero_copy_only=False)
                self.first_null[column] = at + int(np.flatnonzero(blank)[0])
            self.nulls[column] += data.null_count
            data = (
                data.fill_null(_FILLER[self.arrays[column].dtype.kind]) if numbers is None else data
            )
        if numbers is None:
            self.arrays[column][rows] = data.to_numpy(zero_copy_only=False)
            return
        if not pa.types.is_dictionary(data.type):
            data = pc.dictionary_encode(data)
        last = self._lookups.get(column)
        if last is not None and last[0].equals(data.dictionary):
            lookup = last[1]  # the batches of a row group share its dictionary
        else:
            lookup = self._lookup(column, data.dictionary.to_pylist(), numbers)
            self._lookups[column] = (data.dictionary, lookup)
        indices = data.indices
        if indices.null_count:
            indices = indices.fill_null(0)
        self.arrays[column][rows] = (
            lookup[indices.to_numpy(zero_copy_only=False)] if lookup.size else 0
        )

    def _lookup(self, column: str, dictionary: list[object], numbers: dict[str, int]) -> np.ndarray:
        """The number of each of a batch's distinct values among the column's names."""
        names = self.names[column]
        lookup = np.empty(len(dictionary), dtype=np.int32)
        for i, name in enumerate(dictionary):
            number = numbers.get(text := str(name))
            if number is None:
                number = numbers[text] = len(names)
                names.append(text)
            lookup[i] = number
        return lookup


_FILLER = {"b": False, "i": 0, "u": 0, "f": 0.0}
"""What stands in for an empty value until its error is raised, once the rows are grouped."""


def _numpy_type(kind: pa.DataType, role: str) -> np.dtype:
    """The numpy type a column is read into: text as numbers into its names, float16 as
    float32, any other number as itself."""
    if role in ("video", "text"):
        return np.dtype(np.int32)
    if pa.types.is_float16(kind):
        return np.dtype(np.float32)
    numbers: np.dtype = np.dtype(kind.to_pandas_dtype())
    return numbers


@dataclass
class _Grouping:
    """Where each row of a table goes: its video (in order of first appearance) and frame."""

    path: Path
    videos: list[str]
    counts: np.ndarray  # rows per video
    codes: np.ndarray  # video of each row
    frames: np.ndarray | None  # frame of each row, None: rows in file order
    positions: np.ndarray | None  # grouped place of each row, None: rows already in place
    unit: str

    def place(self, row: int) -> str:
        """Row ``row`` (0-based) by its video and frame, for messages."""
        video = self.videos[int(self.codes[row])]
        if self.frames is None:
            return f"video {video}, data row {row + 1}"
        return f"video {video}, {self.unit} {int(self.frames[row])}"

    @classmethod
    def of(cls, path: Path, read: _Columns, unit: str) -> _Grouping:
        if read.nulls["video"]:
            raise AuditInputError(
                f"{path}: column video: {read.nulls['video']} rows have no video name (the "
                f"first is data row {read.first_null['video'] + 1}); every row needs one"
            )
        videos, codes = _first_appearance(path, read.names["video"], read.arrays.pop("video"))
        counts = np.zeros(len(videos), dtype=np.int64)
        for begin in range(0, codes.size, _BLOCK_ROWS):  # bincount makes an int64 copy
            counts += np.bincount(codes[begin : begin + _BLOCK_ROWS], minlength=len(videos))
        if "frame" not in read.arrays:
            if codes.size > 1 and bool(np.any(codes[1:] < codes[:-1])):
                # rows keep their file order within each video
                inverse = np.argsort(codes, kind="stable")
                positions = np.empty_like(inverse)
                positions[inverse] = np.arange(inverse.size)
                return cls(path, videos, counts, codes, None, positions, unit)
            return cls(path, videos, counts, codes, None, None, unit)
        frames = read.arrays.pop("frame")
        if read.nulls["frame"]:
            row = read.first_null["frame"]
            raise AuditInputError(
                f"{path}: column frame: {read.nulls['frame']} rows have no {unit} number (the "
                f"first: video {videos[int(codes[row])]}, data row {row + 1}); every row "
                "needs one"
            )
        grouping = cls(path, videos, counts, codes, frames, None, unit)
        grouping.positions = grouping._checked_positions()
        return grouping

    def _checked_positions(self) -> np.ndarray | None:
        """Each row's place ``start of its video + frame``, checked to be a permutation of the
        rows (every frame of every video once); ``None`` when the rows are in place already."""
        if self._in_order():
            return None
        assert self.frames is not None
        starts = np.concatenate([[0], np.cumsum(self.counts)])
        positions = np.empty(self.codes.size, dtype=np.int64)
        seen = np.zeros(self.codes.size, dtype=bool)
        for begin in range(0, self.codes.size, _BLOCK_ROWS):
            codes = self.codes[begin : begin + _BLOCK_ROWS]
            frames = _as_int64(self.frames[begin : begin + _BLOCK_ROWS])
            outside = np.flatnonzero((frames < 0) | (frames >= self.counts[codes]))
            if outside.size:
                self._refuse_frames(int(codes[outside[0]]))
            places = positions[begin : begin + _BLOCK_ROWS]
            np.add(starts[codes], frames, out=places)
            seen[places] = True
        if not seen.all():  # n places in range, one missing: another is taken twice
            missing = int(np.argmin(seen))
            self._refuse_frames(int(np.searchsorted(starts, missing, side="right")) - 1)
        return positions

    def _in_order(self) -> bool:
        """Whether the rows run video by video (in order of first appearance), each video's
        frames 0, 1, 2, … — every frame once, so nothing is to be checked or moved."""
        codes, frames = self.codes, self.frames
        assert frames is not None
        if codes[0] != 0 or frames[0] != 0:
            return False
        for begin in range(0, codes.size - 1, _BLOCK_ROWS):
            code = codes[begin : begin + _BLOCK_ROWS + 1]  # one row of overlap for the steps
            frame = _as_int64(frames[begin : begin + _BLOCK_ROWS + 1])  # no wrap-around
            same = code[1:] == code[:-1]
            # within a video the next frame; at a new video the next video, from frame 0
            step = np.where(same, frame[1:] == frame[:-1] + 1, (code[1:] == code[:-1] + 1))
            if not (step & (same | (frame[1:] == 0))).all():
                return False
        return True

    def _refuse_frames(self, code: int) -> None:
        assert self.frames is not None
        count = int(self.counts[code])
        seen = self.frames[self.codes == code]
        values, times = np.unique(seen, return_counts=True)
        missing = np.setdiff1d(np.arange(count), values)
        raise AuditInputError(
            f"{self.path}: video {self.videos[code]}: {count} rows but column frame is not "
            f"0..{count - 1} once each ({self.unit}s missing: {missing[:10].tolist()}, "
            f"duplicated: {values[times > 1][:10].tolist()}, "
            f"out of range: {values[(values < 0) | (values >= count)][:10].tolist()})"
        )

    def arranged(self, values: np.ndarray) -> np.ndarray:
        """``values`` (one per row, in file order) in grouped order."""
        if self.positions is None:
            return values
        arranged = np.empty_like(values)
        arranged[self.positions] = values
        return arranged


def _as_int64(numbers: np.ndarray) -> np.ndarray:
    if numbers.dtype == np.uint64:  # beyond int64 is out of range all the same
        numbers = np.minimum(numbers, np.iinfo(np.int64).max)
    return numbers.astype(np.int64, copy=False)


def _run_starts(values: np.ndarray) -> np.ndarray:
    """The rows where a run of equal values starts (row 0 included), a block at a time."""
    starts = [np.zeros(1, dtype=np.int64)]
    for begin in range(0, values.size - 1, _BLOCK_ROWS):
        stop = min(begin + _BLOCK_ROWS, values.size - 1)
        starts.append(
            np.flatnonzero(values[begin + 1 : stop + 1] != values[begin:stop]) + begin + 1
        )
    return np.concatenate(starts)


def _first_appearance(
    path: Path, names: list[str], raw: np.ndarray
) -> tuple[list[str], np.ndarray]:
    """Video ids in order of first appearance and each row's number among them, from the
    distinct names and each row's name number; two names of one id are an error."""
    ids = [video_id_from_entry(name) for name in names]
    # The first row of each name: among the starts of runs of equal names (one per video
    # in a table grouped by video), so the sort is over runs, not rows.
    runs = _run_starts(raw)
    run_names, first_run = np.unique(raw[runs], return_index=True)
    order = run_names[np.argsort(first_run, kind="stable")]
    number: dict[str, int] = {}
    spellings: dict[str, list[int]] = {}
    rank = np.empty(len(names), dtype=np.int64)
    for name in order.tolist():
        video = ids[name]
        spellings.setdefault(video, []).append(name)
        rank[name] = number.setdefault(video, len(number))
    merged = next((s for s in spellings.values() if len(s) > 1), None)
    if merged is not None:
        first_rows = [int(np.argmax(raw == name)) + 1 for name in merged[:5]]
        raise AuditInputError(
            f"{path}: column video: one video appears under {len(merged)} names (first on data "
            f"rows {', '.join(map(str, first_rows))}; ids drop folders, extensions and a "
            "trailing __N crop index); one row per video and frame is expected (average the "
            "crops first)"
        )
    in_order = order.size == len(names) and bool(np.array_equal(order, np.arange(len(names))))
    codes = raw if in_order else rank[raw]
    return list(number), codes


def _checked_values(
    path: Path, column: str, kind: ColumnKind, array: np.ndarray, grouping: _Grouping
) -> np.ndarray:
    """A score or label column in grouped order: float32 (and float16) stays float32, other
    numbers become float64 (labels: bool)."""
    where = f"{path}: column {column}"
    if kind == "label":
        if array.dtype != bool:
            bad = np.flatnonzero((array != 0) & (array != 1))
            if bad.size:
                raise AuditInputError(
                    f"{where}: labels must be 0/1, got {array[bad[0]].item()} at "
                    f"{grouping.place(int(bad[0]))} ({bad.size} such rows)"
                )
            array = array == 1
        return grouping.arranged(array)
    if array.dtype.kind in "iu":
        beyond = np.flatnonzero(np.abs(array) > EXACT_INTEGER_LIMIT)
        if beyond.size:
            raise AuditInputError(
                f"{where}: integer score {array[beyond[0]].item()} at "
                f"{grouping.place(int(beyond[0]))} is beyond ±2⁵³ and cannot be held exactly "
                f"as float64 ({beyond.size} such scores); rescale the scores"
            )
    if array.dtype.kind in "iub":
        array = array.astype(np.float64)
    if not np.isfinite(array).all():
        bad = np.flatnonzero(~np.isfinite(array))
        raise AuditInputError(
            f"{where}: score {array[bad[0]].item()} at {grouping.place(int(bad[0]))} is not "
            f"finite ({bad.size} non-finite scores)"
        )
    return grouping.arranged(array)


def _constant_per_video(path: Path, column: str, read: _Columns, grouping: _Grouping) -> list[str]:
    """The one value of a text column in each video."""
    values, arranged = read.names[column], grouping.arranged(read.arrays.pop(column))
    starts = np.concatenate([[0], np.cumsum(grouping.counts)])
    first = arranged[starts[:-1]]
    changed = np.flatnonzero(arranged != np.repeat(first, grouping.counts))
    if changed.size:
        code = int(np.searchsorted(starts, changed[0], side="right")) - 1
        distinct = np.unique(arranged[starts[code] : starts[code + 1]]).size
        raise AuditInputError(
            f"{path}: column {column}: video {grouping.videos[code]}: {distinct} different "
            f"values; the {column} must be constant per video (the first change at "
            f"{grouping.unit} {int(changed[0] - starts[code])})"
        )
    return [values[i] for i in first.tolist()]
