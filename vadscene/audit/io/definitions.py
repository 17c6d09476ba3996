"""Inputs of the definition-conditioned probes: scores per definition, frame classes, queries.

Read from files (:func:`load_definition_scores`, :func:`load_events`, :func:`load_queries`)
or built in Python, and checked against each other (:func:`check_definition_inputs`) before
:func:`vadscene.audit.compute.definitions.audit_definitions` computes anything
(docs/metrics.md, "Definition-conditioned probes"; paper [definitions] §3, App. A).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vadscene.audit.io.scores import align_scores
from vadscene.benchmark.frames import AuditInputError, GroundTruth, numeric_scores
from vadscene.benchmark.readers import (
    TABLE_SEPARATORS,
    group_rows,
    load_npy,
    read_table,
)
from vadscene.benchmark.video_lists import video_id_from_entry
from vadscene.core import jsonio
from vadscene.core.errors import parse_failure

# --- inputs ---------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class DefinitionScores:
    """One model's scores per frame and per definition, aligned to a :class:`GroundTruth`."""

    name: str
    definitions: tuple[str, ...]
    scores: np.ndarray  # float64, shape (F, D)
    source: str
    family: str | None = None
    notes: tuple[str, ...] = ()

    def of(self, definition: str) -> np.ndarray:
        return self.scores[:, self.definitions.index(definition)]


@dataclass(frozen=True, eq=False)
class FrameClasses:
    """The class set of every anomalous frame: ``class_sets[code]`` is a frozenset of class
    names, ``codes`` (F,) an index into it (−1 on normal frames)."""

    classes: tuple[str, ...]
    class_sets: tuple[frozenset[str], ...]
    codes: np.ndarray  # int64, shape (F,)
    source: str
    first_video: dict[str, str]  # class → the first video holding it (for messages)


@dataclass(frozen=True)
class Query:
    """A queried target set Γ and the definition whose scores answer it."""

    definition: str
    classes: frozenset[str]
    source: str = "the queries"  # the file it came from, named in error messages


def load_definition_scores(
    path: Path | str,
    ground_truth: GroundTruth,
    *,
    name: str,
    family: str | None = None,
    snippet_repeat: int = 1,
    definitions: Sequence[str] | None = None,
) -> DefinitionScores:
    """One model's definition-conditioned scores, aligned frame by frame to ``ground_truth``.

    Formats:

    - **long table** (``.csv``, ``.tsv``, ``.parquet``): columns ``video``, ``frame``,
      ``definition``, ``score``; every definition must cover the same frames (snippets when
      ``snippet_repeat > 1``) of every video, numbered ``0..m-1``.
    - **npy folder**: one ``(T, D)`` ``.npy`` per video (ids from the file stems); column j
      holds definition j of ``definitions`` or, when not given, of the folder's
      ``definitions.txt`` (one definition per line).

    Snippet repetition, truncation and padding follow
    :func:`vadscene.audit.io.scores.load_scores`.
    """
    path = Path(path)
    if not path.exists():
        raise AuditInputError(f"{path}: definition score file or folder not found")
    if path.is_dir():
        names, per_definition = _read_definition_folder(path, definitions)
        fmt = "folder of per-video (T × D) .npy arrays"
    elif path.suffix.lower() in TABLE_SEPARATORS:
        names, per_definition = _read_definition_table(path, snippet_repeat)
        fmt = f"long table video, frame, definition, score ({path.suffix[1:]})"
    else:
        raise AuditInputError(
            f"{path}: unsupported definition scores; expected a folder of (T × D) .npy files "
            "with definitions.txt, or a .csv/.tsv/.parquet table video, frame, definition, score"
        )
    columns = []
    notes: list[str] = []
    for definition in names:
        notes = [f"format: {fmt}"]
        columns.append(
            align_scores(path, ground_truth, per_definition[definition], snippet_repeat, notes)
        )
    return DefinitionScores(
        name=name,
        definitions=tuple(names),
        scores=np.column_stack(columns),
        source=str(path),
        family=family,
        notes=tuple(notes),
    )


def _read_definition_folder(
    path: Path, definitions: Sequence[str] | None
) -> tuple[list[str], dict[str, dict[str, np.ndarray]]]:
    if definitions is None:
        listing = path / "definitions.txt"
        if not listing.is_file():
            raise AuditInputError(
                f"{path}: no definitions.txt (one definition per line, in column order) and "
                "no definitions given"
            )
        definitions = [
            line.strip()
            for line in listing.read_text(encoding="utf-8").splitlines()
            if line.strip()
        ]
    names = list(definitions)
    if len(set(names)) != len(names) or not names:
        raise AuditInputError(
            f"{path}: definitions must be unique and non-empty; got {len(names)} names, "
            f"{len(set(names))} distinct"
        )
    files = sorted(path.glob("*.npy"))
    if not files:
        raise AuditInputError(f"{path}: no .npy definition score files in the folder")
    per_definition: dict[str, dict[str, np.ndarray]] = {d: {} for d in names}
    for file in files:
        video = video_id_from_entry(file.name)
        if video in per_definition[names[0]]:
            raise AuditInputError(f"{path}: several files hold video {video}")
        array = load_npy(file)
        if array.ndim == 1 and len(names) == 1:
            array = array[:, None]
        if array.ndim != 2 or array.shape[1] != len(names):
            raise AuditInputError(
                f"{file}: video {video}: expected scores of shape (T, {len(names)}), one column "
                f"per definition, got {array.shape}"
            )
        array = numeric_scores(array, f"{file}: video {video}")
        for j, definition in enumerate(names):
            per_definition[definition][video] = array[:, j]
    return names, per_definition


def _read_definition_table(
    path: Path, snippet_repeat: int
) -> tuple[list[str], dict[str, dict[str, np.ndarray]]]:
    table = read_table(path, required=("video", "frame", "definition", "score"))
    table["definition"] = table["definition"].astype(str)
    names = list(dict.fromkeys(table["definition"]))
    unit = "snippet" if snippet_repeat > 1 else "frame"
    per_definition: dict[str, dict[str, np.ndarray]] = {}
    lengths: dict[str, tuple[str, int]] = {}
    for definition, rows in table.groupby("definition", sort=False):
        rows = rows.reset_index(drop=True)
        videos, groups = group_rows(path, rows, indexed_by="frame", unit=unit)
        column = rows["score"].to_numpy()
        values = {
            video: numeric_scores(column[group], f"{path}: video {video}, definition {definition}")
            for video, group in zip(videos, groups, strict=True)
        }
        for video, array in values.items():
            first = lengths.setdefault(video, (str(definition), array.shape[0]))
            if first[1] != array.shape[0]:
                raise AuditInputError(
                    f"{path}: video {video}: definition '{definition}' has {array.shape[0]} "
                    f"{unit}s but definition '{first[0]}' has {first[1]}; every definition "
                    f"must score every {unit}"
                )
        per_definition[str(definition)] = values
    for definition, values in per_definition.items():
        missing = [v for v in lengths if v not in values]
        if missing:
            raise AuditInputError(
                f"{path}: video {missing[0]}: no scores for definition '{definition}' "
                f"({len(missing)} videos lack it); every definition must score every {unit}"
            )
    return names, per_definition


def classes_from_categories(ground_truth: GroundTruth) -> FrameClasses:
    """Every anomalous frame's class is its video's category (UCF-Crime style)."""
    video = ground_truth.video_index()
    categories = np.array(ground_truth.categories, dtype=object)
    anomalous_normal = sorted(
        {
            ground_truth.video_ids[v]
            for v in np.unique(video[ground_truth.labels])
            if categories[v] == ground_truth.normal_category
        }
    )
    if anomalous_normal:
        raise AuditInputError(
            f"{ground_truth.source}: video {anomalous_normal[0]} has category "
            f"{ground_truth.normal_category} but anomalous frames; give an events table "
            "with their classes"
        )
    classes = tuple(
        sorted({c for c, a in zip(categories, ground_truth.anomalous_counts(), strict=True) if a})
    )
    code_of = {c: i for i, c in enumerate(classes)}
    per_video = np.array([code_of.get(c, -1) for c in categories], dtype=np.int64)
    codes = np.where(ground_truth.labels, per_video[video], -1)
    return FrameClasses(
        classes=classes,
        class_sets=tuple(frozenset([c]) for c in classes),
        codes=codes,
        source=f"video categories of {ground_truth.source}",
        first_video=_first_videos(ground_truth, codes, [frozenset([c]) for c in classes]),
    )


def load_events(path: Path | str, ground_truth: GroundTruth) -> FrameClasses:
    """Class sets from an events table ``video, start, end, class`` (CSV/TSV/Parquet; frames,
    start inclusive, end exclusive; several rows and classes per video, XD-Violence style).

    Event frames outside the ground truth's anomalous frames are ignored (the ground truth
    decides what is anomalous); an anomalous frame covered by no event is an error.
    """
    path = Path(path)
    if not path.is_file():
        raise AuditInputError(f"{path}: events table not found")
    if path.suffix.lower() not in TABLE_SEPARATORS:
        raise AuditInputError(f"{path}: events must be a .csv/.tsv/.parquet table")
    table = read_table(path, required=("video", "start", "end", "class"))
    offsets = dict(zip(ground_truth.video_ids, ground_truth.offsets[:-1].tolist(), strict=True))
    counts = dict(zip(ground_truth.video_ids, ground_truth.frame_counts.tolist(), strict=True))
    classes = tuple(sorted(table["class"].astype(str).unique()))
    code_of = {c: i for i, c in enumerate(classes)}
    membership = np.zeros((ground_truth.n_frames, len(classes)), dtype=bool)
    columns = zip(
        table["video"].astype(str),
        table["start"],
        table["end"],
        table["class"].astype(str),
        strict=True,
    )
    for row_number, (entry, start, end, name) in enumerate(columns, start=1):
        video = video_id_from_entry(entry)
        where = f"{path}: row {row_number}, video {video}"
        if video not in offsets:
            raise AuditInputError(f"{where}: video not in the ground truth ({ground_truth.source})")
        try:
            start, end = int(start), int(end)
        except (TypeError, ValueError):
            raise AuditInputError(f"{where}: start and end must be frame numbers") from None
        if not 0 <= start < end <= counts[video]:
            raise AuditInputError(
                f"{where}: event [{start}, {end}) is not inside the video's {counts[video]} "
                "frames (start inclusive, end exclusive)"
            )
        first = offsets[video]
        membership[first + start : first + end, code_of[name]] = True
    membership &= ground_truth.labels[:, None]
    uncovered = ground_truth.labels & ~membership.any(1)
    if uncovered.any():
        video = ground_truth.video_ids[int(ground_truth.video_index()[np.argmax(uncovered)])]
        raise AuditInputError(
            f"{path}: video {video}: anomalous frames covered by no event "
            f"({int(uncovered.sum())} such frames in all); every anomalous frame needs a class"
        )
    bits = membership.astype(np.int64) @ (1 << np.arange(len(classes), dtype=np.int64))
    unique_bits, codes = np.unique(bits, return_inverse=True)
    class_sets = [frozenset(c for i, c in enumerate(classes) if b >> i & 1) for b in unique_bits]
    if unique_bits[0] == 0:  # normal frames
        codes = codes - 1
        class_sets = class_sets[1:]
    present = tuple(sorted(set().union(*class_sets))) if class_sets else ()
    codes = codes.astype(np.int64)
    return FrameClasses(
        classes=present,
        class_sets=tuple(class_sets),
        codes=codes,
        source=str(path),
        first_video=_first_videos(ground_truth, codes, class_sets),
    )


def _first_videos(
    ground_truth: GroundTruth, codes: np.ndarray, class_sets: Sequence[frozenset[str]]
) -> dict[str, str]:
    """Each class's first video in ground-truth order, named in error messages."""
    first: dict[str, str] = {}
    anomalous = np.flatnonzero(codes >= 0)
    videos = ground_truth.video_index()[anomalous]
    _, first_frames = np.unique(codes[anomalous], return_index=True)  # frames in video order
    for position in np.sort(first_frames):
        for name in sorted(class_sets[codes[anomalous[position]]]):
            first.setdefault(name, ground_truth.video_ids[videos[position]])
    return first


def load_queries(path: Path | str) -> list[Query]:
    """Queried target sets from a JSON list of ``{"definition": id, "classes": [..]}``."""
    path = Path(path)
    try:
        entries = jsonio.loads(path.read_text(encoding="utf-8"))
        queries = [
            Query(str(e["definition"]), frozenset(map(str, e["classes"])), str(path))
            for e in entries
        ]
    except FileNotFoundError:
        raise AuditInputError(f"{path}: queries file not found") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise AuditInputError(f"{path}: not valid JSON ({parse_failure(exc)})") from None
    except KeyError as exc:
        raise AuditInputError(
            f"{path}: expected a JSON list of {{definition, classes}} objects (an entry has no "
            f"{exc.args[0]!r})"
        ) from None
    except TypeError:
        raise AuditInputError(
            f"{path}: expected a JSON list of {{definition, classes}} objects (an entry or "
            "value has the wrong type)"
        ) from None
    empty = [q.definition for q in queries if not q.classes]
    if not queries or empty:
        raise AuditInputError(f"{path}: every query needs at least one class (empty: {empty})")
    return queries


def check_definition_inputs(
    classes: FrameClasses,
    models: Sequence[DefinitionScores],
    queries: Sequence[Query],
) -> None:
    """Every class needs a definition named after it in every model; every query's classes
    must be known and its definition scored."""
    for query in queries:
        unknown = sorted(query.classes - set(classes.classes))
        if unknown:
            raise AuditInputError(
                f"{query.source}: query '{query.definition}' names classes {unknown} that "
                f"no anomalous frame has ({classes.source} has {list(classes.classes)})"
            )
    for model in models:
        absent = [c for c in classes.classes if c not in model.definitions]
        if absent:
            raise AuditInputError(
                f"{model.source}: model '{model.name}' has no definition for the classes "
                f"{absent} of {classes.source} (video {classes.first_video[absent[0]]} holds "
                f"'{absent[0]}'); each class needs a definition of the same name"
            )
        unscored = [q.definition for q in queries if q.definition not in model.definitions]
        if unscored:
            raise AuditInputError(
                f"{model.source}: model '{model.name}' does not score the queried "
                f"definitions {unscored} of {queries[0].source}"
            )
