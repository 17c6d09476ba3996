"""Readers of the array and table files benchmarks and models ship: ``.npy`` arrays,
CSV/TSV/Parquet tables.

Shared by ground truth, scores, features and soft labels, so each format is read and refused
in one way.
"""

from __future__ import annotations

import io
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
from numpy.lib import format as npy_format

from vadscene.benchmark.frames import (
    AuditInputError,
)
from vadscene.benchmark.video_lists import (
    video_id_from_entry,
)
from vadscene.core.errors import parse_failure

_NPY_V1 = b"\x93NUMPY\x01\x00"

TABLE_SEPARATORS = {".csv": ",", ".tsv": "\t", ".parquet": None}
ARROW_SUFFIXES = (".parquet", ".arrow", ".feather")
"""Score and ground-truth tables read column-wise by :mod:`vadscene.benchmark.arrow_tables`
(imported when such a table is read: pyarrow takes a while to load)."""
_NPY_PLAIN_HEADER = re.compile(
    rb"\{'descr': '([<|][fiub][1248])', 'fortran_order': False, 'shape': \((\d+(?:, \d+)*),?\), \}"
    rb" *\n"
)
"""The header numpy.save writes for a plain C-order numeric array (format 1.0)."""


def load_npy(file: Path) -> np.ndarray:
    """A numeric array saved by ``numpy.save`` (read-only when read by the fast path).

    Score and feature folders hold one small file per video (UCF-Crime: 290 per model), and
    ``np.load`` parses each header with ``ast.literal_eval``. The header numpy writes for a
    plain array is read here with one pattern and the data mapped with ``np.frombuffer``; any
    other file goes to ``np.load`` once its header declares no more data than the file holds.
    """
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise AuditInputError(f"{file}: cannot read ({exc.strerror})") from None
    except MemoryError:
        raise _beyond_memory(file) from None
    if data.startswith(_NPY_V1) and len(data) >= 10:
        start = 10 + int.from_bytes(data[8:10], "little")
        plain = _NPY_PLAIN_HEADER.fullmatch(data, 10, start)
        if plain is not None:
            dtype = np.dtype(plain[1].decode())
            shape = tuple(int(size) for size in plain[2].split(b","))
            if len(data) - start == dtype.itemsize * math.prod(shape):
                return np.frombuffer(data, dtype, offset=start).reshape(shape)
    try:
        _refuse_missing_data(file, data)
        array: np.ndarray = np.load(io.BytesIO(data), allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise AuditInputError(
            f"{file}: cannot read as a numeric .npy array ({type(exc).__name__}); expected a "
            "file written by numpy.save"
        ) from None
    except MemoryError:
        # The header promised no more than the file holds, yet the array still does not fit.
        raise _beyond_memory(file) from None
    return array


def _beyond_memory(file: Path) -> AuditInputError:
    return AuditInputError(
        f"{file}: the array ({file.stat().st_size:,} bytes on disk) does not fit in this "
        "machine's memory"
    )


def _refuse_missing_data(file: Path, data: bytes) -> None:
    """Refuse a header declaring more data than follows it, before ``np.load`` allocates it.

    Raises ``ValueError`` for a header numpy cannot parse.
    """
    stream = io.BytesIO(data)
    version = npy_format.read_magic(stream)
    if version == (1, 0):
        shape, _, dtype = npy_format.read_array_header_1_0(stream)
    else:
        # 3.0 differs from 2.0 only in allowing UTF-8, which no numeric descr uses.
        shape, _, dtype = npy_format.read_array_header_2_0(stream)
    if dtype.hasobject:
        return  # pickled data, which np.load refuses without allow_pickle
    declared = dtype.itemsize * math.prod(shape)
    present = len(data) - stream.tell()
    if declared > present:
        raise AuditInputError(
            f"{file}: cannot read as a numeric .npy array: its header declares "
            f"{math.prod(shape):,} {dtype} values of shape {shape} ({declared:,} bytes) but the "
            f"file holds only {present:,} bytes after the header; the file is truncated or its "
            "header is wrong — expected a file written by numpy.save"
        )


def read_table(path: Path, required: tuple[str, ...]) -> pd.DataFrame:
    separator = TABLE_SEPARATORS[path.suffix.lower()]
    try:
        if separator is None:
            table = pd.read_parquet(path)
        else:
            table = pd.read_csv(path, sep=separator, dtype={"video": str})
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise AuditInputError(f"{path}: cannot read the table ({parse_failure(exc)})") from None
    absent = [column for column in required if column not in table.columns]
    if absent:
        raise AuditInputError(
            f"{path}: missing column(s) {', '.join(absent)}; expected columns "
            f"{', '.join(required)} (the header has {len(table.columns)} column(s))"
        )
    if table.empty:
        raise AuditInputError(f"{path}: the table has no rows")
    return table


def group_rows(
    path: Path, table: pd.DataFrame, indexed_by: str | None, unit: str = "frame"
) -> tuple[list[str], list[np.ndarray]]:
    """Row numbers of each video (first-appearance order), sorted by ``indexed_by``.

    When ``indexed_by`` names a column, each video's values in it must be exactly 0..m-1.
    """
    names = table["video"].astype(str)
    blank = (table["video"].isna() | (names.str.strip() == "")).to_numpy()
    if blank.any():
        raise AuditInputError(
            f"{path}: {int(blank.sum())} rows have no video name (the first is data row "
            f"{int(np.flatnonzero(blank)[0]) + 1}); every row needs one"
        )
    raw_codes, raw_names = pd.factorize(names, sort=False)
    raw_ids = pd.Series([video_id_from_entry(name) for name in raw_names])
    if raw_ids.duplicated().any():
        video = raw_ids[raw_ids.duplicated()].iloc[0]
        spellings = np.flatnonzero(raw_ids == video)
        first_rows = [int(np.flatnonzero(raw_codes == i)[0]) + 1 for i in spellings[:5]]
        raise AuditInputError(
            f"{path}: one video appears under {len(spellings)} names (first on data rows "
            f"{', '.join(map(str, first_rows))}; ids drop folders, extensions and a trailing __N "
            "crop index); one row per video and frame is expected (average the crops first)"
        )
    codes, videos = raw_codes, raw_ids.to_numpy()
    index: np.ndarray | None = None
    if indexed_by is None:
        order = np.argsort(codes, kind="stable")
    else:
        column = table[indexed_by]
        if not pd.api.types.is_integer_dtype(column):
            raise AuditInputError(f"{path}: column {indexed_by} must hold integers (0-based)")
        index = column.to_numpy()
        order = np.lexsort((index, codes))
    counts = np.bincount(codes, minlength=len(videos))
    starts = np.concatenate([[0], np.cumsum(counts)])
    if index is not None:
        expected = np.arange(len(order)) - np.repeat(starts[:-1], counts)
        wrong = np.flatnonzero(index[order] != expected)
        if wrong.size:
            code = codes[order[wrong[0]]]
            seen = index[codes == code]
            values, times = np.unique(seen, return_counts=True)
            missing = sorted(set(range(counts[code])) - set(values.tolist()))
            raise AuditInputError(
                f"{path}: video {videos[code]}: {counts[code]} rows but column {indexed_by} "
                f"is not 0..{counts[code] - 1} once each ({unit}s missing: {missing[:10]}, "
                f"duplicated: {values[times > 1][:10].tolist()}, "
                f"out of range: {values[(values < 0) | (values >= counts[code])][:10].tolist()})"
            )
    return [str(v) for v in videos], np.split(order, starts[1:-1])
