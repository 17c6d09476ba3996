"""Reading model frame scores into :class:`ModelScores`, aligned to a ground truth.

Video ids are file stems, as for ground truth (:mod:`vadscene.benchmark.ground_truth`).

Score formats (:func:`load_scores`, detected from the path): a long table (``.csv``/``.tsv``/
``.parquet``), a folder of per-video ``.npy`` files, or one concatenated 1-D ``.npy`` split
by a video order. See :func:`load_scores` for the alignment and snippet-repetition rules.
"""

from __future__ import annotations

import re
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
from vadscene.benchmark.readers import TABLE_SEPARATORS, group_rows, load_npy, read_table
from vadscene.benchmark.video_lists import (
    distinct_video_ids,
    read_video_list,
    video_id_from_entry,
)
from vadscene.core.errors import VadsceneError

ScoreSource = Path | str | np.ndarray | Sequence[float] | Mapping[str, np.ndarray | Sequence[float]]
"""A score file or folder, one array of all videos' scores, or a mapping video → scores."""


@dataclass(frozen=True, eq=False)
class ModelScores:
    """One model's frame scores aligned to a :class:`GroundTruth` (float64, finite).

    ``scores`` may be any 1-D array or sequence of numbers; it is stored as a read-only
    float64 copy. NaN, ±inf, non-numbers and integers beyond ±2⁵³ are refused here, in the
    words of :func:`vadscene.audit.io.scores.load_scores`; the length is checked against the
    ground truth by :func:`vadscene.audit.run_audit`.
    """

    name: str
    scores: np.ndarray  # float64, shape (F,)
    source: str
    family: str | None = None
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise AuditInputError(
                f"{self.source}: a model needs a non-empty name, got {self.name!r}"
            )
        where = f"{self.source}: model '{self.name}'"
        scores = numeric_scores(self.scores, where)
        if scores.ndim != 1:
            raise AuditInputError(
                f"{where}: expected scores of shape (F,) (one per frame), got {scores.shape}"
            )
        require_finite(scores, where)
        scores.flags.writeable = False  # numeric_scores made a new array: no second copy
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
    """One model's scores, aligned frame by frame to ``ground_truth`` (float64).

    ``path`` is a file or folder, or the scores themselves: a 1-D array (or list) of all
    videos' scores back to back, split like a concatenated ``.npy``, or a mapping of video id
    to that video's scores, aligned like a folder of per-video files. Arrays are checked with
    the same rules and words as files.

    Formats, detected from the path:

    - **table** (``.csv``, ``.tsv``, ``.parquet``): columns ``video``, ``score`` and optional
      ``frame``; with ``frame`` each video's rows must number ``0..m-1`` (snippets when
      ``snippet_repeat > 1``), without it rows are taken in file order.
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
    if isinstance(path, Mapping):
        notes.append("format: in-memory mapping of video → scores")
        per_video = {
            video_id_from_entry(str(video)): _one_video(values, f"{label}: video {video}", unit)
            for video, values in path.items()
        }
    elif file is None:
        order = _video_order(label, ground_truth, video_order)
        per_video = _split_concatenated(
            label, np.asarray(path), ground_truth, order, snippet_repeat, notes
        )
        notes[-1] = notes[-1].replace("one concatenated .npy", "one in-memory array")
    elif file.is_dir():
        notes.append("format: folder of per-video .npy score arrays")
        per_video = _read_score_folder(file, unit)
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
            "concatenated .npy, or a .csv/.tsv/.parquet table"
        )
    scores = align_scores(label, ground_truth, per_video, snippet_repeat, notes)
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


def _read_score_folder(path: Path, unit: str) -> dict[str, np.ndarray]:
    files = sorted(path.glob("*.npy"))
    if not files:
        raise AuditInputError(f"{path}: no .npy score files in the folder")
    per_video: dict[str, np.ndarray] = {}
    file_of: dict[str, Path] = {}
    for file in files:
        video = video_id_from_entry(file.name)
        if video in per_video:
            raise AuditInputError(
                f"{path}: {file_of[video].name} and {file.name} are both video {video}; "
                "one file per video is expected (average the crops first)"
            )
        per_video[video] = _one_video(load_npy(file), f"{file}: video {video}", unit)
        file_of[video] = file
    return per_video


def _one_video(values: object, where: str, unit: str) -> np.ndarray:
    """One video's scores: float64 of shape (T,) (a (T, 1) column is accepted)."""
    array = numeric_scores(values, where, unit)
    if array.ndim == 2 and array.shape[1] == 1:
        array = array[:, 0]
    if array.ndim != 1:
        hint = " (one column per crop? average the crops first)" if array.ndim == 2 else ""
        raise AuditInputError(
            f"{where}: expected scores of shape (T,) or (T, 1), got {array.shape}{hint}"
        )
    return array


def _read_score_table(path: Path, unit: str) -> dict[str, np.ndarray]:
    table = read_table(path, required=("video", "score"))
    index = "frame" if "frame" in table.columns else None
    videos, rows = group_rows(path, table, indexed_by=index, unit=unit)
    column = table["score"].to_numpy()
    return {
        video: numeric_scores(column[video_rows], f"{path}: video {video}", unit)
        for video, video_rows in zip(videos, rows, strict=True)
    }


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
) -> dict[str, np.ndarray]:
    if array.ndim == 2 and array.shape[1] == 1:
        array = array[:, 0]
    if array.ndim != 1:
        raise AuditInputError(
            f"{path}: a concatenated score array must be 1-D, got shape {array.shape}"
        )
    array = numeric_scores(array, str(path), "snippet" if snippet_repeat > 1 else "frame")
    check_video_sets(path, ground_truth, order)
    frames = ground_truth.frame_counts[[ground_truth.video_ids.index(v) for v in order]]
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
    pieces = np.split(array, np.cumsum(rules[rule])[:-1])
    return dict(zip(order, pieces, strict=True))


def align_scores(
    path: Path | str,
    ground_truth: GroundTruth,
    per_video: dict[str, np.ndarray],
    k: int,
    notes: list[str],
) -> np.ndarray:
    check_video_sets(path, ground_truth, list(per_video))
    unit = "snippet" if k > 1 else "frame"
    truncated: list[int] = []
    padded: list[int] = []
    aligned = np.empty(ground_truth.n_frames)
    videos = zip(
        ground_truth.video_ids,
        ground_truth.frame_counts.tolist(),
        ground_truth.offsets[:-1].tolist(),
        strict=True,
    )
    for video, n, start in videos:
        frames = aligned[start : start + n]
        values = per_video[video]
        require_finite(values, f"{path}: video {video}", unit, scope=" in this video")
        m = values.shape[0]
        if m == 0:
            raise AuditInputError(f"{path}: video {video}: no scores (the video has {n} frames)")
        if k == 1:
            if m != n:
                raise AuditInputError(
                    f"{path}: video {video}: {m} scores but the ground truth has {n} frames"
                )
            frames[:] = values
            continue
        length = m * k
        if n - k <= length < n + k:
            if length > n:
                truncated.append(length - n)
            elif length < n:
                padded.append(n - length)
            # Frame f takes snippet f // k; frames past the last snippet take its score. The
            # last snippet used is repeated only up to the video's end: k may be huge.
            kept = min(length, n)
            used = -(-kept // k)
            repeats = np.full(used, k, dtype=np.int64)
            repeats[-1] = kept - k * (used - 1)
            frames[:kept] = np.repeat(values[:used], repeats)
            frames[kept:] = values[-1]
        else:
            raise AuditInputError(
                f"{path}: video {video}: {m} snippets × {k} = {length} frames, but the ground "
                f"truth has {n} frames (allowed {n - k}..{n + k - 1}: truncate fewer than {k} "
                f"extra frames or pad at most {k} missing ones)"
            )
    if k == 1:
        notes.append("one score per frame (no snippet repetition)")
    else:
        notes.append(
            f"snippet_repeat={k}: each score repeated {k}×; "
            f"{len(truncated)} videos truncated to their frame count (by up to "
            f"{max(truncated, default=0)} frames), {len(padded)} padded with their last score "
            f"(by up to {max(padded, default=0)} frames), "
            f"{ground_truth.n_videos - len(truncated) - len(padded)} exact"
        )
    return aligned
