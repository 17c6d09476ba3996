"""A release as tables, and scene-label tables read back.

Out: :func:`to_dataframe` (long: one row per video × factor; wide: one row per video),
:func:`release_csv`, the ``vadscene export --csv`` file, and :func:`release_parquet`, the
same table as ``vadscene export --parquet`` writes it. In: :func:`read_label_table` reads a
researcher's spreadsheet — long (``video, factor, value``) or wide (a video column and one
column per factor) — and the export CSV itself, validated against a catalogue.

Export CSV columns: ``video_id, category, split, num_frames, fps``, one column per factor
(the resolved value; ``ambiguous`` when annotators chose it; empty when there is no value),
``resolution:<factor>`` per factor (how the value was chosen: consensus, agreement, single,
override, auto; ``disagreement`` when annotators differ and nobody adjudicated;
``unlabelled`` when nobody decided), and ``measurement:<statistic>`` per measured statistic.
Text cells starting with ``=``, ``+``, ``-``, ``@``, tab or carriage return are prefixed with
``'`` so a spreadsheet shows them as text instead of running them as formulas (OWASP CSV
injection); :func:`read_label_table` removes that prefix again.

Every text cell of the CSV (ids, categories, values, the header) is quoted and every number
bare; a missing value is an empty cell. Quoting marks text for readers that honour it
(Python's :mod:`csv` module reads every cell as text; LibreOffice's "Format quoted field as
text"), but pandas, Excel and Google Sheets infer types whatever the quotes: a plain
``pd.read_csv`` reads the ids ``01``, ``007`` and ``1e5`` as numbers and ``nan`` or ``NA``
as missing. Read the ids as text with ``pd.read_csv(path, dtype={"video_id": str},
keep_default_na=False, na_values=[""])`` (only an empty cell is missing), or read the
Parquet file, whose text columns are strings.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

import pandas as pd

from vadscene.benchmark.video_lists import video_id_from_entry
from vadscene.core.catalogue import AMBIGUOUS, Catalogue
from vadscene.core.cells import spreadsheet_safe, spreadsheet_text
from vadscene.core.errors import VadsceneError, parse_failure
from vadscene.core.records import Release

UNLABELLED = "unlabelled"
"""Resolution shown for a video and factor nobody decided."""
RESOLUTION_PREFIX = "resolution:"
MEASUREMENT_PREFIX = "measurement:"
METADATA_COLUMNS = ("video_id", "category", "split", "num_frames", "fps")
"""The export CSV's per-video columns besides factors; a wide table may carry them."""
VIDEO_COLUMNS = ("video_id", "video")
"""Names accepted for the video column of a label table."""
_MAX_LISTED = 20


class LabelTableError(VadsceneError):
    """A scene-label table that cannot be read (message names the file, rows and values)."""


# --- out ---------------------------------------------------------------------------------------


def to_dataframe(release: Release, *, form: Literal["long", "wide"] = "long") -> pd.DataFrame:
    """The release's resolved values as a DataFrame.

    ``form="long"``: one row per video × catalogue factor, columns ``video_id, category,
    split, factor, value, resolution`` (value missing when there is none; resolution
    ``unlabelled`` when nobody decided). ``form="wide"``: one row per video, the export CSV's
    columns (see the module docstring), measurements as floats.
    """
    if form == "long":
        rows = [
            {
                "video_id": video.video_id,
                "category": video.category,
                "split": video.split,
                "factor": key,
                "value": video.factors[key].value if key in video.factors else None,
                "resolution": video.factors[key].resolution if key in video.factors else UNLABELLED,
            }
            for video in release.videos
            for key in release.catalogue.keys
        ]
        columns = ["video_id", "category", "split", "factor", "value", "resolution"]
        return pd.DataFrame(rows, columns=columns)
    if form != "wide":
        raise ValueError(f"form must be 'long' or 'wide', got {form!r}")
    keys = release.catalogue.keys
    statistics = sorted({s for video in release.videos for s in video.measurements})
    wide_rows = []
    for video in release.videos:
        row: dict[str, object] = {
            "video_id": video.video_id,
            "category": video.category,
            "split": video.split,
            "num_frames": video.num_frames,
            "fps": video.fps,
        }
        for key in keys:
            assignment = video.factors.get(key)
            row[key] = assignment.value if assignment is not None else None
        for key in keys:
            assignment = video.factors.get(key)
            row[RESOLUTION_PREFIX + key] = (
                assignment.resolution if assignment is not None else UNLABELLED
            )
        for statistic in statistics:
            measured = video.measurements.get(statistic)
            row[MEASUREMENT_PREFIX + statistic] = measured.value if measured else None
        wide_rows.append(row)
    columns = [
        *METADATA_COLUMNS,
        *keys,
        *(RESOLUTION_PREFIX + k for k in keys),
        *(MEASUREMENT_PREFIX + s for s in statistics),
    ]
    return pd.DataFrame(wide_rows, columns=columns)


def release_csv(release: Release) -> str:
    """The export CSV: :func:`to_dataframe` wide; text cells quoted and escaped against
    formulas, numbers bare, a missing value empty (see the module docstring)."""
    wide = to_dataframe(release, form="wide")
    lines = [",".join(_csv_cell(name) for name in wide.columns)]
    lines += [",".join(_csv_cell(cell) for cell in row) for row in wide.itertuples(index=False)]
    return "\n".join(lines) + "\n"


def _csv_cell(cell: object) -> str:
    if isinstance(cell, str):
        return '"' + str(spreadsheet_safe(cell)).replace('"', '""') + '"'
    if cell is None or pd.isna(cell):
        return ""
    number = cell.item() if hasattr(cell, "item") else cell  # numpy scalars: 25.0, not np.…
    return repr(number)


def release_parquet(release: Release) -> bytes:
    """The export table (:func:`to_dataframe` wide) as a Parquet file's bytes: text columns
    are strings (an id ``01`` stays ``01``, a factor nobody decided is a string column of
    nulls), ``num_frames`` an int64, ``fps`` and the measurements float64, a missing value
    null; cells are not escaped (no spreadsheet runs a Parquet file)."""
    wide = to_dataframe(release, form="wide")
    numbers = {"num_frames": "int64", "fps": "float64"} | {
        name: "float64" for name in wide.columns if name.startswith(MEASUREMENT_PREFIX)
    }
    typed = wide.astype({name: numbers.get(name, "string") for name in wide.columns})
    sink = io.BytesIO()
    typed.to_parquet(sink, index=False)
    return sink.getvalue()


# --- in ----------------------------------------------------------------------------------------


def read_label_table(path: Path | str, catalogue: Catalogue) -> dict[str, dict[str, str]]:
    """Scene labels of a table file: factor key → video id → value (``ambiguous`` included).

    CSV, TSV or Parquet. Long when the columns are a video column (``video`` or
    ``video_id``), ``factor`` and ``value``; otherwise wide: a video column and one column per
    factor key, plus any of the export CSV's other columns (metadata, ``resolution:*``,
    ``measurement:*``), which are not labels. Video ids are normalised as ground-truth ids
    are (:func:`vadscene.benchmark.video_lists.video_id_from_entry`). Empty cells are unlabelled.
    Every problem — unknown factor or column, a value the factor does not have, a video
    given twice — is collected and raised as one :class:`LabelTableError`.
    """
    path = Path(path)
    table = _read(path)
    video_column = next((c for c in VIDEO_COLUMNS if c in table.columns), None)
    if video_column is None:
        raise LabelTableError(
            f"{path}: no video column; expected one named {' or '.join(VIDEO_COLUMNS)} "
            f"(the header has {len(table.columns)} column(s))"
        )
    table = table.map(lambda c: spreadsheet_text(c.strip()) if isinstance(c, str) else c)
    long = {"factor", "value"} <= set(table.columns)
    if long:
        extra = sorted(set(table.columns) - {video_column, "factor", "value"})
        if extra:
            raise LabelTableError(
                f"{path}: a long label table has the columns {video_column}, factor, value; "
                f"unexpected: {', '.join(extra)}"
            )
        cells = [
            (row + 2, video, factor, value)  # row 1 is the header
            for row, (video, factor, value) in enumerate(
                table[[video_column, "factor", "value"]].itertuples(index=False)
            )
        ]
    else:
        factors = [c for c in table.columns if c in catalogue.keys]
        ignored = set(METADATA_COLUMNS) | {video_column}
        unknown = [
            c
            for c in table.columns
            if c not in factors
            and c not in ignored
            and not c.startswith((RESOLUTION_PREFIX, MEASUREMENT_PREFIX))
        ]
        if unknown or not factors:
            raise LabelTableError(
                f"{path}: "
                + (f"columns that are no factor: {', '.join(unknown)}; " if unknown else "")
                + f"a wide label table has a {video_column} column and one column per factor "
                f"of catalogue '{catalogue.name}' ({', '.join(catalogue.keys)}), or is long "
                "with the columns video, factor, value"
            )
        cells = [
            (row + 2, video, factor, value)
            for factor in factors
            for row, (video, value) in enumerate(
                table[[video_column, factor]].itertuples(index=False)
            )
        ]
    return _validated(path, cells, catalogue)


def _read(path: Path) -> pd.DataFrame:
    suffix = path.suffix.lower()
    if not path.is_file():
        raise LabelTableError(f"{path}: label table not found")
    try:
        if suffix == ".parquet":
            return pd.read_parquet(path).astype(object).where(lambda t: t.notna(), None)
        if suffix in (".csv", ".tsv"):
            return pd.read_csv(
                path,
                sep="," if suffix == ".csv" else "\t",
                dtype=str,
                keep_default_na=False,
                encoding="utf-8-sig",  # spreadsheets often save a byte-order mark
            )
    except (ValueError, OSError, UnicodeDecodeError) as exc:
        raise LabelTableError(
            f"{path}: cannot read the label table ({parse_failure(exc)})"
        ) from None
    raise LabelTableError(f"{path}: unsupported label table; expected .csv, .tsv or .parquet")


def _validated(
    path: Path, cells: list[tuple[int, object, object, object]], catalogue: Catalogue
) -> dict[str, dict[str, str]]:
    values: dict[str, dict[str, str]] = {key: {} for key in catalogue.keys}
    first_row: dict[tuple[str, str], int] = {}
    problems: list[str] = []
    for row, video, factor, value in cells:
        if _blank(value):
            continue
        if _blank(video):
            problems.append(f"row {row}: no video")
            continue
        factor, value = str(factor), str(value)
        if factor not in values:
            problems.append(
                f"row {row}: unknown factor '{factor}' (catalogue '{catalogue.name}' has: "
                f"{', '.join(catalogue.keys)})"
            )
            continue
        allowed = catalogue.factor(factor)
        if not allowed.allows(value):
            problems.append(
                f"row {row}: '{value}' is not a value of {factor} "
                f"(values: {', '.join((*allowed.values, AMBIGUOUS))})"
            )
            continue
        video_id = video_id_from_entry(str(video))
        if (video_id, factor) in first_row:
            problems.append(
                f"row {row}: {video_id} has a second {factor} value "
                f"(first on row {first_row[video_id, factor]})"
            )
            continue
        first_row[video_id, factor] = row
        values[factor][video_id] = value
    if problems:
        shown = problems[:_MAX_LISTED]
        more = len(problems) - len(shown)
        raise LabelTableError(
            f"{path}: {len(problems)} problems in the label table:\n"
            + "\n".join(f"  - {p}" for p in shown)
            + (f"\n  - … ({more} more)" if more else "")
        )
    if not first_row:
        raise LabelTableError(f"{path}: the label table holds no value")
    return values


def _blank(cell: object) -> bool:
    return cell is None or (isinstance(cell, float) and cell != cell) or str(cell).strip() == ""


def values_of_release(release: Release) -> Mapping[str, Mapping[str, str]]:
    """factor key → video id → resolved value (ambiguous included), as a table gives them."""
    values: dict[str, dict[str, str]] = {key: {} for key in release.catalogue.keys}
    for video in release.videos:
        for key, assignment in video.factors.items():
            if assignment.value is not None:
                values[key][video.video_id] = assignment.value
    return values
