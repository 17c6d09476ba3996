"""Definition-conditioned probes: does a model's frame ranking follow the queried definition?

A model scores every frame once per *definition* (a text naming the anomaly classes to treat
as abnormal). From those scores (docs/metrics.md, "Definition-conditioned probes"; paper
[definitions] §3, App. A):

- D@5(Γ) = AUROC(s^Γ; A_Γ, N ∪ A_¬Γ), split into D@5ᴺ(Γ) = AUROC(s^Γ; A_Γ, N) and
  D@5ˣ(Γ) = AUROC(s^Γ; A_Γ, A_¬Γ) with ω_Γ = |N| / (|N| + |A_¬Γ|), so that
  D@5 = ω·D@5ᴺ + (1 − ω)·D@5ˣ exactly (Eq. 3, 17); reported as means over the queries.
- DC-Disc = mean_c AUROC(s^c; A_c, A_¬c).
- DC-DetΔ = mean_c [AUROC(s^c; A_c, N) − mean_{k≠c} AUROC(s^k; A_c, N)].
- DC-SelΔ = mean over (p, c) of [AUROC(s^c; U_{p,c}, U_{p,¬c}) −
  mean_{k∈C_p∖c} AUROC(s^k; U_{p,c}, U_{p,¬c})] over videos p holding ≥ 2 classes (Eq. 4).

Each also with AP in place of AUROC. Frame classes: an anomalous frame's *class set* is its
video's category, or the classes of the events covering it. A frame belongs to A_Γ when its
class set lies inside Γ and to A_¬Γ otherwise ("excluded frames leave the target set").

Method. Frames are grouped into *units* (video, class set); normal frames form the unit
(video, ∅). For one definition's scores a single pair count (:mod:`.pairs`) gives
W[u, v] = Σ_{t∈u anomalous} Σ_{s∈v} τ(s_t, s_s) for every anomalous unit u and every unit v.
Every AUROC above is a ratio of block sums of W; a bootstrap replicate with video
multiplicities k weighs W[u, v] by k_u·k_v, exactly like :func:`.metrics.micro_auroc`, so
the identity holds replicate by replicate.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from numba import njit
from threadpoolctl import threadpool_limits

from vadscene import jsonio
from vadscene.audit.bootstrap import percentile_interval
from vadscene.audit.inputs import AuditInputError, GroundTruth, numeric_scores
from vadscene.audit.loaders import (
    _TABLE_SEPARATORS,
    _align,
    _group_rows,
    _load_npy,
    _read_table,
)
from vadscene.audit.metrics import ratio_or_nan
from vadscene.audit.pairs import sorted_pair_counts
from vadscene.errors import parse_failure
from vadscene.video_lists import video_id_from_entry

PROBES: tuple[str, ...] = ("D@5", "D@5N", "D@5X", "DC-Disc", "DC-DetΔ", "DC-SelΔ")
"""The probes of the ``definition_probes`` table, in reading order."""


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

    Snippet repetition, truncation and padding follow :func:`.loaders.load_scores`.
    """
    path = Path(path)
    if not path.exists():
        raise AuditInputError(f"{path}: definition score file or folder not found")
    if path.is_dir():
        names, per_definition = _read_definition_folder(path, definitions)
        fmt = "folder of per-video (T × D) .npy arrays"
    elif path.suffix.lower() in _TABLE_SEPARATORS:
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
            _align(path, ground_truth, per_definition[definition], snippet_repeat, notes)
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
        array = _load_npy(file)
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
    table = _read_table(path, required=("video", "frame", "definition", "score"))
    table["definition"] = table["definition"].astype(str)
    names = list(dict.fromkeys(table["definition"]))
    unit = "snippet" if snippet_repeat > 1 else "frame"
    per_definition: dict[str, dict[str, np.ndarray]] = {}
    lengths: dict[str, tuple[str, int]] = {}
    for definition, rows in table.groupby("definition", sort=False):
        rows = rows.reset_index(drop=True)
        videos, groups = _group_rows(path, rows, indexed_by="frame", unit=unit)
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
    if path.suffix.lower() not in _TABLE_SEPARATORS:
        raise AuditInputError(f"{path}: events must be a .csv/.tsv/.parquet table")
    table = _read_table(path, required=("video", "start", "end", "class"))
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


# --- pair counts per unit -------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _Units:
    """Frames grouped by (video, class set); normal frames have class set −1."""

    unit: np.ndarray  # (F,) unit of every frame
    video: np.ndarray  # (units,) video of every unit
    class_set: np.ndarray  # (units,) class-set code, −1 for normal units
    frames: np.ndarray  # (units,) frames per unit

    @classmethod
    def of(cls, ground_truth: GroundTruth, classes: FrameClasses) -> _Units:
        stride = len(classes.class_sets) + 1
        key = ground_truth.video_index().astype(np.int64) * stride + classes.codes + 1
        # A frame's key mostly repeats its predecessor's: the unique keys of the runs (a few
        # per video) replace a sort of every frame.
        first = np.ones(key.size, dtype=bool)
        first[1:] = key[1:] != key[:-1]
        starts = np.flatnonzero(first)
        keys, run_unit = np.unique(key[starts], return_inverse=True)
        unit = np.repeat(run_unit, np.diff(np.r_[starts, key.size]))
        return cls(
            unit=unit.astype(np.intp),
            video=(keys // stride).astype(np.intp),
            class_set=(keys % stride - 1).astype(np.int64),
            frames=np.bincount(unit, minlength=keys.size).astype(np.float64),
        )


@dataclass(frozen=True, eq=False)
class _UnitRuns:
    """Runs of consecutive frames of one unit whose scores agree under every definition:
    snippet-repeated scores shrink sixteenfold once per model, not once per definition."""

    scores: np.ndarray  # (runs, D)
    unit: np.ndarray  # (runs,)
    weight: np.ndarray  # (runs,) frames per run

    @classmethod
    def of(cls, model: DefinitionScores, units: _Units) -> _UnitRuns:
        scores = model.scores
        starts = np.flatnonzero(_run_starts(scores, units.unit))
        weight = np.diff(np.append(starts, scores.shape[0])).astype(np.float64)
        return cls(scores[starts], units.unit[starts], weight)


@njit(cache=True, nogil=True)
def _run_starts(scores, unit):  # type: ignore[no-untyped-def]
    """Frames that start a run: a new unit, or a score differing under some definition.
    A loop stops comparing a frame at its first difference; numpy compared every column
    and built an (F × D) temporary (45 ms for UCF-Crime × 13 definitions)."""
    first = np.empty(unit.size, np.bool_)
    if unit.size:
        first[0] = True
    for i in range(1, unit.size):
        first[i] = unit[i] != unit[i - 1]
        for j in range(scores.shape[1]):
            if first[i]:
                break
            first[i] = scores[i, j] != scores[i - 1, j]
    return first


def unit_pair_counts(
    scores: np.ndarray, order: np.ndarray, runs: _UnitRuns, units: _Units
) -> np.ndarray:
    """W[i, v] = Σ_{t∈u_i} Σ_{s∈v} τ(s_t, s_s) for the anomalous units u_i (in unit order) and
    every unit v: the pair counts of the anomalous frames against every frame, from one
    :func:`.pairs.sorted_pair_counts` sweep in which anomalous runs play both roles.
    ``scores``: one definition's score per run of ``runs``; ``order`` sorts them ascending."""
    n_units = units.video.size
    anomalous_units = np.flatnonzero(units.class_set >= 0)
    rank = np.full(n_units, -1)
    rank[anomalous_units] = np.arange(anomalous_units.size)
    unit = runs.unit[order]
    return sorted_pair_counts(
        scores[order], rank[unit], unit, runs.weight[order], (anomalous_units.size, n_units)
    )


# --- the probes -----------------------------------------------------------------------------


@dataclass(frozen=True)
class DefinitionAudit:
    """The three tables of the definition-conditioned probes (columns in :mod:`.result`)."""

    probes: pd.DataFrame
    queries: pd.DataFrame
    classes: pd.DataFrame


def audit_definitions(
    ground_truth: GroundTruth,
    models: Sequence[DefinitionScores],
    classes: FrameClasses,
    queries: Sequence[Query] = (),
    *,
    resamples: np.ndarray | None = None,
    selection_seed: int = 0,
) -> DefinitionAudit:
    """Every definition-conditioned probe of every model, with 95 % bootstrap intervals.

    ``resamples`` (R, V) are the engine's paired video multiplicities (D@5, DC-Disc,
    DC-DetΔ); DC-SelΔ's interval resamples clusters of multi-event videos sharing one class
    set (the class pair of a two-event splice) with the same number R of replicates, from
    ``selection_seed``. Without ``queries`` the singleton queries Γ = {c} of every class are
    used. AP values are point estimates (no interval).
    """
    queries = list(queries) or [
        Query(c, frozenset([c]), "the default singleton queries") for c in classes.classes
    ]
    check_definition_inputs(classes, models, queries)
    units = _Units.of(ground_truth, classes)
    weights = np.vstack([np.ones((1, ground_truth.n_videos)), _or_empty(resamples, ground_truth)])
    rows: dict[str, list[dict]] = {"probes": [], "queries": [], "classes": []}
    # Per definition, the class sets whose frames meet anomalous ones as positives: its own
    # class (DC-Disc) and the targets of its queries (D@5ˣ).
    against_anomalies: dict[str, set[int]] = {}
    for c in classes.classes:
        against_anomalies.setdefault(c, set()).update(_own_sets(classes, c))
    for query in queries:
        against_anomalies.setdefault(query.definition, set()).update(
            _target_sets(classes, query.classes)
        )
    # Many small products: a threaded BLAS only contends for the cores (26× slower on a
    # loaded 2-core machine), so one BLAS thread, and two definitions at a time instead.
    # Models go one after the other, so only one model's per-definition sums are held.
    with (
        threadpool_limits(limits=1, user_api="blas"),
        ThreadPoolExecutor(max_workers=min(2, os.cpu_count() or 1)) as pool,
    ):
        for model in models:
            sums = _ModelSums(model, units, weights)
            list(pool.map(sums.prepare, against_anomalies, against_anomalies.values()))
            _audit_model(model, classes, queries, sums, weights, selection_seed, rows)
    return DefinitionAudit(
        probes=pd.DataFrame(rows["probes"], columns=PROBE_COLUMNS),
        queries=pd.DataFrame(rows["queries"], columns=QUERY_COLUMNS),
        classes=pd.DataFrame(rows["classes"], columns=CLASS_COLUMNS),
    )


PROBE_COLUMNS = ["model", "family", "probe", "metric", "value", "ci_low", "ci_high", "terms"]
QUERY_COLUMNS = [
    "model",
    "definition",
    "classes",
    "omega",
    "d5_auroc",
    "d5_normal_auroc",
    "d5_excluded_auroc",
    "identity_gap",
    "d5_ap",
    "d5_normal_ap",
    "d5_excluded_ap",
]
CLASS_COLUMNS = [
    "model",
    "class",
    "disc_auroc",
    "det_matching_auroc",
    "det_other_auroc",
    "det_delta_auroc",
    "disc_ap",
    "det_delta_ap",
]


def _or_empty(resamples: np.ndarray | None, ground_truth: GroundTruth) -> np.ndarray:
    return np.zeros((0, ground_truth.n_videos)) if resamples is None else resamples


class _ModelSums:
    """One model's pair counts, block sums and AP order per definition (:meth:`prepare`).

    H[L, g, r] = Σ_{u: class set L} Σ_{v ∈ group g} k_u(r)·W[u, v]·k_v(r) for replicate r
    (row 0: the point estimate), groups g = 0 for normal units and 1 + L' for class set L'.
    Every AUROC of the probes is a sum of H entries over its positive class sets and negative
    groups, divided by the matching frame counts.
    """

    def __init__(self, model: DefinitionScores, units: _Units, weights: np.ndarray) -> None:
        self.model = model
        self.units = units
        self.k_units = weights[:, units.video]  # (R + 1, units)
        self.anomalous_units = np.flatnonzero(units.class_set >= 0)
        n_sets = int(units.class_set.max()) + 1 if self.anomalous_units.size else 0
        self.group = units.class_set + 1
        self.group_frames = (self.k_units * units.frames) @ np.eye(n_sets + 1)[self.group]
        self.row_sets = np.eye(n_sets)[units.class_set[self.anomalous_units]]  # (A units, L)
        # Units sorted by group once, so each group's columns are a slice (no copies).
        self._by_group = np.argsort(self.group, kind="stable")
        self._k_sorted = np.ascontiguousarray(self.k_units[:, self._by_group].T)
        self._bounds = np.searchsorted(
            self.group[self._by_group], np.arange(self.group_frames.shape[1] + 1)
        )
        self.runs = _UnitRuns.of(model, units)
        self._pairs: dict[str, np.ndarray] = {}
        self._sums: dict[str, np.ndarray] = {}
        self._ranked: dict[str, _SortedScores] = {}

    def prepare(self, definition: str, against_anomalies: Iterable[int]) -> None:
        """Everything the probes read of one definition's scores, from one sort: W, its block
        sums H (against anomalous groups only for the class sets ``against_anomalies``) and
        the descending order AP walks. Definitions are independent, so several may be
        prepared at once on different threads (the sort, the pair count and the products
        release the GIL)."""
        column = np.ascontiguousarray(self.runs.scores[:, self.model.definitions.index(definition)])
        order = np.argsort(column)
        w = unit_pair_counts(column, order, self.runs, self.units)
        self._pairs[definition] = w
        self._sums[definition] = self._block_sums(w, sorted(against_anomalies))
        self._ranked[definition] = _SortedScores(
            column, order[::-1], self.runs.unit, self.runs.weight
        )

    def pairs(self, definition: str) -> np.ndarray:
        """W of the definition's scores (anomalous units × units)."""
        return self._pairs[definition]

    def sums(self, definition: str) -> np.ndarray:
        """H of the definition's scores (class sets × groups × replicates)."""
        return self._sums[definition]

    def ranked(self, definition: str) -> _SortedScores:
        return self._ranked[definition]

    def _block_sums(self, w: np.ndarray, sets: list[int]) -> np.ndarray:
        """H[:, 0] for every class set, H[sets, 1:] for the given ones, NaN elsewhere: every
        class's frames meet the normal frames under every definition (DC-DetΔ), but only a
        definition's own classes meet the other anomalies — the rest would be 2/3 of the
        products, never read."""
        w = w[:, self._by_group]
        k_rows = self.k_units[:, self.anomalous_units].T  # (A units, R + 1)
        n_groups = self.group_frames.shape[1]
        blocks = np.full((self.row_sets.shape[1], n_groups, self.k_units.shape[0]), np.nan)
        normal = slice(self._bounds[0], self._bounds[1])
        per_row = w[:, normal] @ self._k_sorted[normal]  # (A units, R + 1)
        blocks[:, 0, :] = self.row_sets.T @ (k_rows * per_row)
        rows = np.flatnonzero(self.row_sets[:, sets].any(1))
        row_sets = self.row_sets[np.ix_(rows, sets)]
        for g in range(1, n_groups):
            start, stop = self._bounds[g], self._bounds[g + 1]
            per_row = w[rows, start:stop] @ self._k_sorted[start:stop]
            blocks[sets, g, :] = row_sets.T @ (k_rows[rows] * per_row)
        return blocks

    def auroc_parts(
        self, definition: str, positive: list[int], negative_groups: list[int]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(pairs, positive frames, negative frames) per replicate."""
        blocks = self.sums(definition)
        pairs = blocks[np.ix_(positive, negative_groups)].sum((0, 1))
        positive_frames = self.group_frames[:, [1 + s for s in positive]].sum(1)
        return pairs, positive_frames, self.group_frames[:, negative_groups].sum(1)

    def auroc(self, definition: str, positive: list[int], negative_groups: list[int]) -> np.ndarray:
        pairs, n_positive, n_negative = self.auroc_parts(definition, positive, negative_groups)
        return ratio_or_nan(pairs, n_positive * n_negative)

    def ap(self, definition: str, positive: list[int], negative_groups: list[int]) -> float:
        positive_units = np.isin(self.group, [1 + s for s in positive])
        return self.ranked(definition).ap(positive_units, np.isin(self.group, negative_groups))


def _audit_model(
    model: DefinitionScores,
    classes: FrameClasses,
    queries: list[Query],
    sums: _ModelSums,
    weights: np.ndarray,
    selection_seed: int,
    rows: dict[str, list[dict]],
) -> None:
    set_of = [set(s) for s in classes.class_sets]
    label = {"model": model.name}
    # D@5 per query: N and X parts from the same pair sums, so the identity is exact.
    d5: dict[str, list[np.ndarray]] = {"D@5": [], "D@5N": [], "D@5X": []}
    d5_ap: dict[str, list[float]] = {"D@5": [], "D@5N": [], "D@5X": []}
    for query in queries:
        target = _target_sets(classes, query.classes)
        excluded = [1 + i for i, s in enumerate(set_of) if not s <= query.classes]
        pairs_n, n_target, n_normal = sums.auroc_parts(query.definition, target, [0])
        pairs_x, _, n_excluded = sums.auroc_parts(query.definition, target, excluded)
        normal_part = ratio_or_nan(pairs_n, n_target * n_normal)
        excluded_part = ratio_or_nan(pairs_x, n_target * n_excluded)
        whole = ratio_or_nan(pairs_n + pairs_x, n_target * (n_normal + n_excluded))
        omega = ratio_or_nan(n_normal, n_normal + n_excluded)
        for key, value in zip(d5, (whole, normal_part, excluded_part), strict=True):
            d5[key].append(value)
        aps = (
            sums.ap(query.definition, target, [0, *excluded]),
            sums.ap(query.definition, target, [0]),
            sums.ap(query.definition, target, excluded),
        )
        for key, value in zip(d5_ap, aps, strict=True):
            d5_ap[key].append(value)
        # The identity D@5 = ω·D@5ᴺ + (1 − ω)·D@5ˣ, checked on the point estimates.
        mixture = omega[0] * normal_part[0] + (1 - omega[0]) * excluded_part[0]
        rows["queries"].append(
            {
                **label,
                "definition": query.definition,
                "classes": ", ".join(sorted(query.classes)),
                "omega": float(omega[0]),
                "d5_auroc": float(whole[0]),
                "d5_normal_auroc": float(normal_part[0]),
                "d5_excluded_auroc": float(excluded_part[0]),
                "identity_gap": float(whole[0] - mixture) if np.isfinite(mixture) else np.nan,
                "d5_ap": aps[0],
                "d5_normal_ap": aps[1],
                "d5_excluded_ap": aps[2],
            }
        )
    for probe in d5:
        _probe_row(rows, model, probe, "auroc", _mean_defined(np.vstack(d5[probe])), len(queries))
        _probe_row(rows, model, probe, "ap", np.array([_nanmean(d5_ap[probe])]), len(queries))

    # DC-Disc and DC-DetΔ over the classes, one singleton definition per class.
    own_sets = [_own_sets(classes, c) for c in classes.classes]
    own_class = np.full(sums.group.size, -1)
    for index, own in enumerate(own_sets):
        own_class[np.isin(sums.group, [1 + i for i in own])] = index
    normal_units = sums.group == 0
    # AP of every class's frames against the normal frames under every definition:
    # detection_ap[k, c] (one pass per definition for all classes).
    detection_ap = np.vstack(
        [sums.ranked(k).ap_many(own_class, len(own_sets), normal_units) for k in classes.classes]
    )
    disc, det_delta, disc_ap, det_delta_ap = [], [], [], []
    for index, c in enumerate(classes.classes):
        own = own_sets[index]
        rest = [1 + i for i, s in enumerate(set_of) if s != {c}]
        others = [k for k in classes.classes if k != c]
        disc.append(sums.auroc(c, own, rest))
        matching = sums.auroc(c, own, [0])
        other = (
            _mean_defined(np.vstack([sums.auroc(k, own, [0]) for k in others]))
            if others
            else np.full_like(matching, np.nan)
        )
        det_delta.append(matching - other)
        disc_ap.append(sums.ap(c, own, rest))
        other_ap = _nanmean([detection_ap[k, index] for k in range(len(own_sets)) if k != index])
        det_delta_ap.append(float(detection_ap[index, index]) - other_ap)
        rows["classes"].append(
            {
                **label,
                "class": c,
                "disc_auroc": float(disc[-1][0]),
                "det_matching_auroc": float(matching[0]),
                "det_other_auroc": float(other[0]),
                "det_delta_auroc": float(det_delta[-1][0]),
                "disc_ap": disc_ap[-1],
                "det_delta_ap": det_delta_ap[-1],
            }
        )
    n_classes = len(classes.classes)
    _probe_row(rows, model, "DC-Disc", "auroc", _mean_defined(np.vstack(disc)), n_classes)
    _probe_row(rows, model, "DC-Disc", "ap", np.array([_nanmean(disc_ap)]), n_classes)
    _probe_row(rows, model, "DC-DetΔ", "auroc", _mean_defined(np.vstack(det_delta)), n_classes)
    _probe_row(rows, model, "DC-DetΔ", "ap", np.array([_nanmean(det_delta_ap)]), n_classes)

    # DC-SelΔ over the videos holding ≥ 2 classes.
    terms_auroc, terms_ap, clusters = _selection_terms(sums, set_of)
    replicates = weights.shape[0] - 1
    for metric, terms in (("auroc", terms_auroc), ("ap", terms_ap)):
        values = np.array([np.mean(terms)]) if terms else np.array([np.nan])
        if terms and metric == "auroc" and replicates:
            resampled = _cluster_bootstrap(np.array(terms), clusters, replicates, selection_seed)
            values = np.r_[values, resampled]
        _probe_row(rows, model, "DC-SelΔ", metric, values, len(terms))


def _target_sets(classes: FrameClasses, wanted: frozenset[str]) -> list[int]:
    """The class sets inside a query's Γ: its targets A_Γ."""
    return [i for i, s in enumerate(classes.class_sets) if s <= wanted]


def _own_sets(classes: FrameClasses, c: str) -> list[int]:
    """The class sets of A_c: exactly {c}."""
    return [i for i, s in enumerate(classes.class_sets) if s == {c}]


def _selection_terms(
    sums: _ModelSums, set_of: list[set[str]]
) -> tuple[list[float], list[float], list[str]]:
    """DC-SelΔ terms (p, c) in AUROC and AP, and each term's cluster (the sorted class set of
    its video p). Point estimates, from the unit pair counts W within each video."""
    units = sums.units
    terms_auroc: list[float] = []
    terms_ap: list[float] = []
    clusters: list[str] = []
    anomalous_units = sums.anomalous_units
    for p in np.unique(units.video[anomalous_units]):
        rows = np.flatnonzero(units.video[anomalous_units] == p)  # rows of W
        mine = anomalous_units[rows]  # the video's anomalous units
        present = sorted(set().union(*(set_of[s] for s in units.class_set[mine])))
        if len(present) < 2:
            continue
        for c in present:
            own = np.array([set_of[s] == {c} for s in units.class_set[mine]])
            if not own.any() or own.all():
                continue
            denominator = units.frames[mine[own]].sum() * units.frames[mine[~own]].sum()
            by_definition = {
                k: float(sums.pairs(k)[np.ix_(rows[own], mine[~own])].sum() / denominator)
                for k in present
            }
            positive_units = np.zeros(units.video.size, bool)
            positive_units[mine[own]] = True
            negative_units = np.zeros(units.video.size, bool)
            negative_units[mine[~own]] = True
            ap_by_definition = {
                k: sums.ranked(k).ap(positive_units, negative_units) for k in present
            }
            others = [k for k in present if k != c]
            terms_auroc.append(
                by_definition[c] - float(np.mean([by_definition[k] for k in others]))
            )
            terms_ap.append(
                ap_by_definition[c] - float(np.mean([ap_by_definition[k] for k in others]))
            )
            clusters.append(" + ".join(present))
    return terms_auroc, terms_ap, clusters


def _cluster_bootstrap(
    terms: np.ndarray, clusters: list[str], replicates: int, seed: int
) -> np.ndarray:
    """Mean of the terms under resampling whole clusters with replacement."""
    names, member = np.unique(clusters, return_inverse=True)
    sums = np.bincount(member, weights=terms, minlength=names.size)
    sizes = np.bincount(member, minlength=names.size).astype(np.float64)
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(names.size, np.full(names.size, 1 / names.size), size=replicates)
    return ratio_or_nan(draws @ sums, draws @ sizes)


def _probe_row(
    rows: dict[str, list[dict]],
    model: DefinitionScores,
    probe: str,
    metric: str,
    values: np.ndarray,
    terms: int,
) -> None:
    low, high = percentile_interval(values[1:]) if values.size > 1 else (np.nan, np.nan)
    rows["probes"].append(
        {
            "model": model.name,
            "family": model.family,
            "probe": probe,
            "metric": metric,
            "value": float(values[0]),
            "ci_low": low,
            "ci_high": high,
            "terms": terms,
        }
    )


def _mean_defined(stacked: np.ndarray) -> np.ndarray:
    """Column mean over the rows defined in that column (NaN where none is)."""
    defined = ~np.isnan(stacked)
    with np.errstate(invalid="ignore"):
        return np.where(
            defined.any(0), np.nansum(stacked, 0) / np.maximum(defined.sum(0), 1), np.nan
        )


def _nanmean(values: list[float]) -> float:
    finite = [v for v in values if np.isfinite(v)]
    return float(np.mean(finite)) if finite else float("nan")


class _SortedScores:
    """Weighted entries (runs of identical frames, each in one unit) sorted once, highest
    score first, so that AP for any positive/negative unit sets costs one pass:
    AP = Σ_k (R_k − R_{k−1})·P_k over the distinct thresholds, as
    ``sklearn.metrics.average_precision_score`` on the selected frames. ``order`` sorts
    ``scores`` descending; the order within ties is free, since AP reads the cumulative
    (integer, exact) weights only at the last entry of each tie."""

    def __init__(
        self, scores: np.ndarray, order: np.ndarray, unit: np.ndarray, weight: np.ndarray
    ) -> None:
        ranked = scores[order]
        self.unit = unit[order]
        self.weight = weight[order]
        self.last_of_tie = np.r_[ranked[1:] != ranked[:-1], True]

    def ap(self, positive_units: np.ndarray, negative_units: np.ndarray) -> float:
        """AP of the frames of ``positive_units`` against those of ``negative_units`` (disjoint
        boolean masks over the units)."""
        _, gained, true_positives, predicted = _ap_hits(
            self.unit, self.weight, self.last_of_tie, np.where(positive_units, 0, -1),
            negative_units, 1,
        )  # fmt: skip
        if gained.size == 0:
            return float("nan")
        total = true_positives[-1]
        return float(np.sum(gained / total * true_positives / predicted))

    def ap_many(
        self, positive_class: np.ndarray, n_sets: int, negative_units: np.ndarray
    ) -> np.ndarray:
        """:meth:`ap` for ``n_sets`` disjoint positive sets at once: ``positive_class``
        (units,) gives each unit's set (−1: none); one AP per set, NaN for an empty one."""
        which, gained, true_positives, predicted = _ap_hits(
            self.unit, self.weight, self.last_of_tie, positive_class, negative_units, n_sets
        )
        sums = np.zeros(n_sets)
        np.add.at(sums, which, gained * true_positives / predicted)  # in threshold order
        total = np.bincount(which, gained, minlength=n_sets)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(total > 0, sums / total, np.nan)


@njit(cache=True, nogil=True)
def _ap_hits(unit, weight, last_of_tie, positive_class, negative_units, n_sets):  # type: ignore[no-untyped-def]
    """The thresholds where some positive set's recall moves, in descending score order:
    (set, frames gained, true positives, predicted positives) at each, one row per set that
    gains. One pass over the sorted entries serves every set, and AP's sum reads only these
    rows (docs/metrics.md "Definition-conditioned probes": AP as sklearn computes it)."""
    size = unit.size
    which = np.empty(size, np.int64)
    gained = np.empty(size)
    true_positives = np.empty(size)
    predicted = np.empty(size)
    positive = np.zeros(n_sets)
    counted = np.zeros(n_sets)  # true positives at the previous threshold
    moved = np.empty(n_sets, np.int64)
    n_moved = 0
    negative = 0.0
    hits = 0
    for i in range(size):
        member = positive_class[unit[i]]
        if member >= 0:
            if positive[member] == counted[member]:
                moved[n_moved] = member
                n_moved += 1
            positive[member] += weight[i]
        elif negative_units[unit[i]]:
            negative += weight[i]
        if last_of_tie[i]:
            for j in range(n_moved):
                member = moved[j]
                which[hits] = member
                gained[hits] = positive[member] - counted[member]
                true_positives[hits] = positive[member]
                predicted[hits] = positive[member] + negative
                counted[member] = positive[member]
                hits += 1
            n_moved = 0
    return which[:hits], gained[:hits], true_positives[:hits], predicted[:hits]
