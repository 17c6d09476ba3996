"""A workspace: one benchmark's folder of configuration, annotation store, cache and releases.

Layout::

    WORKSPACE/
      vadscene.yaml     configuration (dataset, video root, naming rules, ground truth, catalogue)
      catalogue.yaml    the workspace's own copy of its catalogue, fixed at init
      annotations.db    the SQLite annotation store (see vadscene.store.database)
      cache/            derived data (measurements, browser proxies)
      releases/         exported releases

``vadscene init`` creates it and scans the video root; ``vadscene scan`` re-scans later (new
videos are added, changed ones re-probed, vanished ones reported — decisions are never dropped),
or re-points the workspace at another video folder (``scan --videos``, also for a workspace
imported from a release). A scan checks the videos against the ground truth: those it names
that the folder lacks are reported, each with the registered id it may mean, and a video's
category is the ground truth's (as the audit reads it) when the ground truth names it.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import re
import shutil
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from vadscene.benchmark.formats import GroundTruthFormat
from vadscene.benchmark.video_lists import (
    category_from_video_id,
    read_video_list,
    ucf_short_name,
)
from vadscene.core import jsonio
from vadscene.core.catalogue import Catalogue, load_catalogue
from vadscene.core.errors import (
    VadsceneError,
    WorkspaceError,
    parse_failure,
    validation_problems,
)
from vadscene.core.files import atomic_write
from vadscene.core.records import VideoInfo
from vadscene.store.database import AnnotationStore
from vadscene.video.probe import (
    VideoProbeError,
    content_fingerprint,
    iter_video_files,
    probe_video,
)

if TYPE_CHECKING:
    import numpy as np

    from vadscene.benchmark.frames import GroundTruth

CONFIG_NAME = "vadscene.yaml"
CATALOGUE_NAME = "catalogue.yaml"
STORE_NAME = "annotations.db"
WORKSPACE_FORMAT: Literal[1] = 1
INCOMPLETE_NAME = ".vadscene-incomplete"

LABELLING_READS_NORMAL_WITH_ANOMALY: Final = "anomalous"
"""A normal-category video with anomalous frames is labelled as an anomalous one: an
inconsistent ground truth must not stop a campaign. The audit refuses it unless told otherwise
(``vadscene audit --normal-with-anomaly``)."""
"""Marker of a workspace being created: lists what the creation made, so an interrupted one
can be removed. A folder holding it is not a workspace (its ``vadscene.yaml`` comes last)."""


CategoryRule = Literal["ucf-crime", "folder", "regex", "none"]
CATEGORY_RULES: tuple[CategoryRule, ...] = get_args(CategoryRule)


class NamingRules(BaseModel):
    """How a video file becomes a video id and a category.

    The id is always the file stem (UCF-Crime, XD-Violence and ShanghaiTech lists use stems).
    Category rules: ``ucf-crime`` — benchmark naming (:func:`category_from_video_id`: leading
    letters, ``Abuse028_x264`` → Abuse; XD-Violence ``…_label_B4-0-0`` → B4);
    ``folder`` — the parent folder's name; ``regex`` — the named group ``category`` of
    ``category_regex`` matched against the stem; ``none`` — every video is ``Unknown``. Under
    every rule a stem matching ``normal_regex`` is category ``normal_category``.
    """

    model_config = ConfigDict(extra="forbid")

    category_rule: CategoryRule = "ucf-crime"
    category_regex: str | None = Field(default=None, description="With rule 'regex'.")
    normal_regex: str = Field(default=r"(?i)^normal", description="Stems of normal videos.")
    normal_category: str = "Normal"

    @field_validator("category_regex", "normal_regex")
    @classmethod
    def _compiles(cls, pattern: str | None, info: ValidationInfo) -> str | None:
        if pattern is not None:
            try:
                compiled = re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"'{pattern}' is not a valid regular expression: {exc}") from None
            if info.field_name == "category_regex" and "category" not in compiled.groupindex:
                raise ValueError(
                    f"'{pattern}' has no named group 'category' to take the category from, "
                    r"e.g. '^(?P<category>[A-Za-z]+)\d+'"
                )
        return pattern

    def category_of(self, relative_path: Path) -> str:
        """The category of a video at ``relative_path`` under the video root."""
        stem = relative_path.stem
        if re.search(self.normal_regex, stem):
            return self.normal_category
        if self.category_rule == "ucf-crime":
            return category_from_video_id(stem, self.normal_category) or "Unknown"
        if self.category_rule == "folder":
            return relative_path.parent.name or "Unknown"
        if self.category_rule == "regex" and self.category_regex:
            match = re.search(self.category_regex, stem)
            if match and match.groupdict().get("category"):
                return match.group("category")
        return "Unknown"


class GroundTruthRef(BaseModel):
    """Where the benchmark's temporal ground truth is and how to read it (see vadscene.audit)."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="File or folder, absolute or relative to the workspace.")
    format: GroundTruthFormat
    interval_end: Literal["inclusive", "exclusive"] = "exclusive"


class WorkspaceConfig(BaseModel):
    """The contents of ``vadscene.yaml``."""

    model_config = ConfigDict(extra="forbid")

    format_version: Literal[1] = WORKSPACE_FORMAT
    dataset: str = Field(min_length=1)
    video_root: str | None = Field(
        description="Folder of the videos, absolute or relative to the workspace; null for a "
        "workspace imported from a release without its videos."
    )
    naming: NamingRules = Field(default_factory=NamingRules)
    ground_truth: GroundTruthRef | None = None
    splits: dict[str, str] = Field(
        default_factory=dict,
        description="Split name → video list file (absolute or relative to the workspace).",
    )
    catalogue: str = CATALOGUE_NAME


@dataclass
class ScanReport:
    """What a scan of the video root found."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    unlisted_in_split: dict[str, list[str]] = field(default_factory=dict)
    """Split → ids its list names that the video folder does not have."""
    content_changed: list[str] = field(default_factory=list)
    """Registered videos whose file now holds other content (re-probed: their decisions are
    kept, their statistics will be measured again)."""
    not_in_folder: dict[str, str | None] = field(default_factory=dict)
    """Ground-truth video no registered video is → the registered id it may mean (None when
    none is close; see :func:`closest_video_id`)."""
    recategorised: list[str] = field(default_factory=list)
    """Unchanged videos that took a changed ground-truth category (not probed again)."""
    ground_truth_problem: str | None = None
    """Why the ground truth could not be read against the videos (their categories then come
    from the naming rules, and :attr:`not_in_folder` is empty when not even its ids could be
    read)."""

    @property
    def registered(self) -> int:
        return len(self.added) + len(self.updated) + len(self.unchanged)


ScanProgress = Callable[[int, int, str], None]
"""Called as ``progress(done, total, current_file)`` while scanning."""


@dataclass(frozen=True)
class GroundTruthMatch:
    """A workspace's ground truth matched to its registered videos
    (:meth:`Workspace.match_ground_truth`), read as the audit reads it."""

    path: Path
    labels: dict[str, np.ndarray]
    """Registered video → its frame labels (True = anomalous), for the videos the ground truth
    covers."""
    categories: dict[str, str]
    """Registered video → its ground-truth category, for the same videos."""
    absent: dict[str, str | None]
    """Ground-truth video no registered video is → the registered id it may mean, or None."""


SIMILAR_ID_CUTOFF = 0.8
"""How alike (difflib ratio, ignoring case) an id must be to be offered as "did you mean"."""
_MAX_ID_COMPARISONS = 1_000_000
"""Above this many id pairs, no "did you mean" is looked for: it compares every pair."""


def closest_video_id(video_id: str, candidates: Iterable[str]) -> str | None:
    """The candidate ``video_id`` most likely means — the closest spelling ignoring case, at
    least :data:`SIMILAR_ID_CUTOFF` alike — e.g. ``Abuse028_x264 (1)`` (a browser's copy) or
    ``abuse028_X264`` for ``Abuse028_x264``; None when none is close."""
    by_folded: dict[str, str] = {}
    for candidate in candidates:
        by_folded.setdefault(candidate.casefold(), candidate)
    close = difflib.get_close_matches(
        video_id.casefold(), list(by_folded), n=1, cutoff=SIMILAR_ID_CUTOFF
    )
    return by_folded[close[0]] if close else None


def match_video_ids(
    named: Iterable[str], registered: Iterable[str]
) -> tuple[dict[str, str], dict[str, str | None]]:
    """Match the ids a ground truth names to registered ids as its reader matches frame
    counts: the same id, else the same UCF-Crime short name (``Abuse028`` ↔ ``Abuse028_x264``)
    when one registered video has it.

    Returns (registered id → ground-truth id, unmatched ground-truth id → the registered id
    no ground-truth id took that it may mean, or None). With more than
    :data:`_MAX_ID_COMPARISONS` pairs to compare, no "did you mean" is looked for.
    """
    registered = list(registered)
    present = set(registered)
    by_short: dict[str, str | None] = {}
    for video in registered:
        short = ucf_short_name(video)
        by_short[short] = None if short in by_short else video  # None: two have it
    matched: dict[str, str] = {}
    unmatched: list[str] = []
    for video in named:
        match = video if video in present else by_short.get(ucf_short_name(video))
        if match is None:
            unmatched.append(video)
        else:
            matched[match] = video
    free = [video for video in registered if video not in matched]
    if len(unmatched) * len(free) > _MAX_ID_COMPARISONS:
        return matched, dict.fromkeys(unmatched)
    return matched, {video: closest_video_id(video, free) for video in unmatched}


def ground_truth_video_ids(reference: GroundTruthRef, path: Path) -> list[str]:
    """The videos a ground truth names, in its order; :class:`AuditInputError` naming the file
    (and line) when it cannot be read.

    A UCF-Crime style text that takes its frame counts from the videos is read without them;
    any other ground truth is read whole (it carries its own counts).
    """
    from vadscene.benchmark.ground_truth import load_ground_truth

    stand_ins = _uncounted_annotation(reference, path)
    if stand_ins is not None:
        return list(stand_ins)
    truth = load_ground_truth(
        path,
        format=reference.format,
        interval_end=reference.interval_end,
        normal_with_anomaly=LABELLING_READS_NORMAL_WITH_ANOMALY,
    )
    return list(truth.video_ids)


def _uncounted_annotation(reference: GroundTruthRef, path: Path) -> dict[str, int] | None:
    """For a UCF-Crime style text without a frame-count column: each video it names, in order
    → the fewest frames its intervals fit in; None for any other ground truth.

    Such a text takes its frame counts from the registered videos, and its reader wants one
    for every video it names: one the folder lacks is read with this stand-in and left out.
    """
    if reference.format != "ucf-crime" or path.is_dir():
        return None  # a folder: the reader's own error says a text file is needed
    from vadscene.benchmark.ground_truth import uncounted_annotation_extents

    return uncounted_annotation_extents(path)


def _match_ground_truth(
    reference: GroundTruthRef, path: Path, counts: Mapping[str, int], normal_category: str
) -> GroundTruthMatch:
    from vadscene.benchmark.ground_truth import load_ground_truth

    stand_ins = _uncounted_annotation(reference, path)
    truth: GroundTruth
    if stand_ins is None:
        truth = load_ground_truth(
            path,
            format=reference.format,
            interval_end=reference.interval_end,
            normal_category=normal_category,
            normal_with_anomaly=LABELLING_READS_NORMAL_WITH_ANOMALY,
        )
        video_of, absent = match_video_ids(truth.video_ids, counts)
    else:
        video_of, absent = match_video_ids(stand_ins, counts)
        truth = load_ground_truth(
            path,
            format=reference.format,
            interval_end=reference.interval_end,
            registry_counts={**counts, **{video: stand_ins[video] for video in absent}},
            normal_with_anomaly=LABELLING_READS_NORMAL_WITH_ANOMALY,
            normal_category=normal_category,
        )
    index = {video: i for i, video in enumerate(truth.video_ids)}
    labels: dict[str, np.ndarray] = {}
    categories: dict[str, str] = {}
    for video in counts:
        # Without a category column the counts define the ground truth's videos, so a
        # registered video it does not name is one of them (all normal) under its own id.
        i = index.get(video_of.get(video, video))
        if i is not None:
            labels[video] = truth.labels[truth.offsets[i] : truth.offsets[i + 1]]
            categories[video] = truth.categories[i]
    return GroundTruthMatch(path, labels, categories, absent)


class Workspace:
    """An opened workspace. Use :meth:`create` or :meth:`open`."""

    def __init__(
        self,
        root: Path,
        config: WorkspaceConfig,
        catalogue: Catalogue,
        *,
        read_only: bool = False,
    ) -> None:
        self.root = root
        self.config = config
        self.catalogue = catalogue
        self.read_only = read_only
        self._store: AnnotationStore | None = None

    # --- creation and opening -------------------------------------------------------------

    @classmethod
    def create(
        cls,
        root: Path | str,
        *,
        video_root: Path | str | None,
        dataset: str | None = None,
        catalogue_path: Path | str | None = None,
        ground_truth: GroundTruthRef | None = None,
        naming: NamingRules | None = None,
        splits: dict[str, Path | str] | None = None,
        populate: Callable[[Workspace], object] | None = None,
    ) -> Workspace:
        """Create a workspace folder (it must not already be a workspace).

        ``populate`` (e.g. a scan, or a release import) runs before the configuration is
        written: ``vadscene.yaml``, which makes a folder a workspace, is written last. If
        anything fails, what this call created is removed again; if the process is killed,
        the folder holds no ``vadscene.yaml`` — nothing that looks like a workspace — and a
        marker (:data:`INCOMPLETE_NAME`) listing what it created, which the next ``create``
        (or :func:`discard_incomplete`) removes.

        Paths are taken relative to the current directory; they are stored relative to the
        workspace when inside it, so a workspace folder can be moved with its videos.
        """
        root = Path(root)
        if root.exists() and not root.is_dir():
            raise WorkspaceError(f"{root} is a file; a workspace is a folder (give a new path)")
        if (root / CONFIG_NAME).exists():
            raise WorkspaceError(
                f"{root} is already a vadscene workspace; use `vadscene scan {root}` to re-scan"
            )
        if video_root is not None and not Path(video_root).is_dir():
            raise WorkspaceError(f"video folder {video_root} does not exist or is not a folder")
        if ground_truth is not None:
            if not Path(ground_truth.path).exists():
                raise WorkspaceError(
                    f"ground-truth file {ground_truth.path} ({ground_truth.format}) does not exist"
                )
            # Read now, so a ground truth that cannot be read is refused before anything is
            # made (the error names the file and line), not at the first measure or audit.
            ground_truth_video_ids(ground_truth, Path(ground_truth.path))
            ground_truth = ground_truth.model_copy(
                update={"path": _portable(root, Path(ground_truth.path))}
            )
        for list_path in (splits or {}).values():
            read_video_list(list_path)  # refuse a missing or empty list now, not at scan time
        catalogue = load_catalogue(catalogue_path)
        config = WorkspaceConfig(
            splits={name: _portable(root, Path(p)) for name, p in (splits or {}).items()},
            dataset=dataset or catalogue.name,
            video_root=_portable(root, Path(video_root)) if video_root is not None else None,
            naming=naming or NamingRules(),
            ground_truth=ground_truth,
        )
        discard_incomplete(root)
        first_new = next((p for p in reversed((root, *root.parents)) if not p.exists()), None)
        created = (
            [first_new]
            if first_new is not None
            else [
                root / name
                for name in ("cache", "releases", CATALOGUE_NAME, *_store_files())
                if not (root / name).exists()
            ]
        )
        workspace = None
        try:
            root.mkdir(parents=True, exist_ok=True)
            atomic_write(
                root / INCOMPLETE_NAME,
                json.dumps({"created": [str(path.resolve()) for path in created]}),
            )
            for sub in ("cache", "releases"):
                (root / sub).mkdir(exist_ok=True)
            if catalogue_path is None or Path(catalogue_path).suffix.lower() not in (
                ".yaml",
                ".yml",
            ):
                text = yaml.safe_dump(
                    catalogue.model_dump(mode="json"), sort_keys=False, allow_unicode=True
                )
            else:
                text = Path(catalogue_path).read_text(encoding="utf-8")
            atomic_write(root / CATALOGUE_NAME, text)
            workspace = cls(root, config, catalogue)
            workspace.store.set_meta("dataset", config.dataset)
            if populate is not None:
                populate(workspace)
            workspace.save_config()
        except BaseException:
            if workspace is not None:
                workspace.close()
            discard_incomplete(root)
            raise
        (root / INCOMPLETE_NAME).unlink()
        return workspace

    @classmethod
    def open(cls, root: Path | str, *, read_only: bool = False) -> Workspace:
        """Open an existing workspace; :class:`WorkspaceError` naming what is wrong otherwise.

        ``read_only`` opens its store read-only: no lock is taken and nothing is created, so
        it works beside busy writers and on a read-only mount (commands that only read use it).
        """
        root = Path(root)
        config_path = root / CONFIG_NAME
        if (root / INCOMPLETE_NAME).exists():
            raise WorkspaceError(
                f"{root}: creating this workspace was interrupted, so it is not a workspace; "
                "run the `vadscene init` or `vadscene import` again"
            )
        if not config_path.is_file():
            raise WorkspaceError(
                f"{root} is not a vadscene workspace (no {CONFIG_NAME}); create one with "
                f"`vadscene init {root} --videos VIDEO_FOLDER` or `vadscene demo {root}`"
            )
        try:
            data = jsonio.load_yaml(config_path.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            raise WorkspaceError(f"{config_path}: not valid YAML: {parse_failure(exc)}") from None
        try:
            config = WorkspaceConfig.model_validate(data)
        except ValidationError as exc:
            raise WorkspaceError(
                f"{config_path}: invalid workspace configuration\n"
                + "\n".join(f"  - {p}" for p in validation_problems(exc))
            ) from None
        catalogue = load_catalogue(_resolve(root, config.catalogue))
        return cls(root, config, catalogue, read_only=read_only)

    def save_config(self) -> None:
        text = yaml.safe_dump(self.config.model_dump(mode="json"), sort_keys=False)
        atomic_write(self.root / CONFIG_NAME, text)

    # --- parts ----------------------------------------------------------------------------

    @property
    def store(self) -> AnnotationStore:
        if self._store is None:
            self._store = AnnotationStore(
                self.root / STORE_NAME, self.catalogue, read_only=self.read_only
            )
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def video_root(self) -> Path | None:
        root = self.config.video_root
        return _resolve(self.root, root) if root is not None else None

    @property
    def cache_dir(self) -> Path:
        return self.root / "cache"

    @property
    def ground_truth_path(self) -> Path | None:
        gt = self.config.ground_truth
        return _resolve(self.root, gt.path) if gt is not None else None

    def match_ground_truth(
        self, counts: Mapping[str, int] | None = None
    ) -> GroundTruthMatch | None:
        """The workspace's ground truth matched to its videos (``counts``: video → frames,
        by default the registry's); None when the workspace has none.

        Read as the audit reads it (:func:`vadscene.benchmark.ground_truth.load_ground_truth`
        with the registered frame counts), except that videos the ground truth names and no
        registered video is are left out and listed in :attr:`GroundTruthMatch.absent`.
        :class:`AuditInputError` when it cannot be read or does not fit the videos' counts.
        """
        reference, path = self.config.ground_truth, self.ground_truth_path
        if reference is None or path is None:
            return None
        if counts is None:
            counts = {video.video_id: video.num_frames for video in self.store.videos()}
        return _match_ground_truth(reference, path, counts, self.config.naming.normal_category)

    def readable_places(self) -> list[Path]:
        """Where the app may read files a person names: the workspace folder and what its
        configuration names (video folder, ground truth, split lists), each resolved."""
        places = [self.root, self.video_root, self.ground_truth_path]
        places += [_resolve(self.root, p) for p in self.config.splits.values()]
        return [place.resolve() for place in places if place is not None]

    def server_path(self, text: str, what: str) -> Path:
        """A server path typed into the app, resolved (relative paths: from the workspace) and
        refused unless it lies inside :meth:`readable_places`.

        The app is a web page: whoever can drive it must not read the server's files through
        it. Symlinks are resolved before the check, and the message names the path, never
        anything from the file.
        """
        path = _resolve(self.root, text.strip()).resolve()
        if not any(path == place or path.is_relative_to(place) for place in self.readable_places()):
            raise WorkspaceError(
                f"{what} {text.strip()}: the app reads only files inside the workspace "
                f"({self.root.resolve()}) and the folders its configuration names; copy the "
                "file into the workspace"
            )
        return path

    def video_path(self, video_id: str) -> Path:
        """The file of a registered video (only registered ids resolve to files)."""
        video = self.store.video(video_id)
        if self.video_root is None or video.path is None:
            raise WorkspaceError(f"video '{video_id}': this workspace has no video files")
        return self.video_root / video.path

    # --- scanning -------------------------------------------------------------------------

    def scan(
        self, progress: ScanProgress | None = None, *, video_root: Path | str | None = None
    ) -> ScanReport:
        """Probe every video under the video root and register it.

        Unreadable files are recorded with their reason and do not stop the scan. A file whose
        fingerprint and size are unchanged since the last scan is not probed again. Videos
        are checked against the ground truth (:attr:`ScanReport.not_in_folder`); a video's
        category is the ground truth's when it names the video, else a new video's comes from
        the naming rules and a registered one keeps its own (a release's, for an imported
        workspace).

        ``video_root`` re-points the workspace at another folder (also one imported from a
        release, which has none): videos are matched by id, and the configuration is saved
        once the scan has registered them. A folder that does not exist is refused with the
        configuration unchanged.
        """
        if video_root is None:
            return self._scan(progress)
        if not Path(video_root).is_dir():
            current = self.video_root or "no video folder"
            raise WorkspaceError(
                f"video folder {video_root} does not exist or is not a folder; the workspace "
                f"{self.root} still uses {current}"
            )
        kept = self.config
        self.config = kept.model_copy(update={"video_root": _portable(self.root, Path(video_root))})
        try:
            report = self._scan(progress)
        except BaseException:
            self.config = kept
            raise
        self.save_config()
        return report

    def _scan(self, progress: ScanProgress | None) -> ScanReport:
        report = ScanReport()
        root = self.video_root
        if root is None:
            raise WorkspaceError(
                f"{self.root}: this workspace has no video folder to scan (one imported from "
                f"a release); point it at its videos with `vadscene scan {self.root} --videos "
                "VIDEO_FOLDER`"
            )
        if not root.is_dir():
            raise WorkspaceError(f"{self.root}: video folder {root} does not exist")
        files = iter_video_files(root)
        split_of = self._split_membership()
        known = {v.video_id: v for v in self.store.videos()}
        seen: dict[str, str] = {}
        probed: list[VideoInfo] = []
        for done, path in enumerate(files, start=1):
            relative = path.relative_to(root)
            shown = _undecodable_name(relative)
            if progress is not None:
                progress(done - 1, len(files), _escape_controls(shown or str(relative)))
            if shown is not None:
                report.unreadable.append(
                    (
                        _escape_controls(shown),
                        "file name is not valid UTF-8; rename it (video ids are file stems)",
                    )
                )
                continue
            video_id = unicodedata.normalize("NFC", path.stem)  # as GT and score ids are
            control = next((c for c in path.name if unicodedata.category(c) == "Cc"), None)
            if control is not None:
                # The id is the stem, and an id holding a control character breaks the app's
                # video URL; the file is still in the folder, so it is not reported missing.
                seen.setdefault(video_id, relative.as_posix())
                report.unreadable.append(
                    (
                        _escape_controls(relative.as_posix()),
                        f"file name holds a control character (U+{ord(control):04X}); rename "
                        "the file",
                    )
                )
                continue
            if video_id in seen:
                report.unreadable.append(
                    (
                        relative.as_posix(),
                        f"duplicate video id '{video_id}' (already registered from "
                        f"{seen[video_id]}); video ids are file stems and must be unique",
                    )
                )
                continue
            seen[video_id] = relative.as_posix()
            previous = known.get(video_id)
            if (
                previous is not None
                and previous.path == relative.as_posix()
                and previous.split == split_of.get(video_id)
                and previous.fingerprint == content_fingerprint(path)
            ):
                report.unchanged.append(video_id)
                continue
            try:
                probe = probe_video(path)
            except VideoProbeError as exc:
                report.unreadable.append((relative.as_posix(), exc.reason))
                continue
            info = VideoInfo.model_validate(
                {
                    "video_id": video_id,
                    "category": self.config.naming.category_of(relative),
                    "split": split_of.get(video_id),
                    "path": relative.as_posix(),
                    **{k: v for k, v in probe.as_dict().items() if k in VideoInfo.model_fields},
                }
            )
            (report.added if previous is None else report.updated).append(video_id)
            if previous is not None:
                if previous.fingerprint != info.fingerprint:
                    report.content_changed.append(video_id)
                info = info.model_copy(update={"category": previous.category})
            probed.append(info)
        if progress is not None:
            progress(len(files), len(files), "")
        registry = {**known, **{info.video_id: info for info in probed}}
        categories = self._ground_truth_categories(report, registry)
        probed = [
            info.model_copy(update={"category": categories[info.video_id]})
            if info.video_id in categories
            else info
            for info in probed
        ]
        for video_id in report.unchanged:
            category = categories.get(video_id, known[video_id].category)
            if category != known[video_id].category:
                probed.append(known[video_id].model_copy(update={"category": category}))
                report.recategorised.append(video_id)
        self.store.register_videos(probed)
        self.store.record_unreadable(report.unreadable)
        report.missing = sorted(set(known) - set(seen))
        for name, list_path in self.config.splits.items():
            absent = [i for i in read_video_list(_resolve(self.root, list_path)) if i not in seen]
            if absent:
                report.unlisted_in_split[name] = absent
        return report

    def _ground_truth_categories(
        self, report: ScanReport, registry: dict[str, VideoInfo]
    ) -> dict[str, str]:
        """Video → its ground-truth category; fills in the report's ground-truth fields.

        A ground truth that does not fit the videos is reported, not raised: the videos are
        still registered (measure and audit will refuse it, naming the problem)."""
        reference, path = self.config.ground_truth, self.ground_truth_path
        if reference is None or path is None:
            return {}
        try:
            match = _match_ground_truth(
                reference,
                path,
                {video: info.num_frames for video, info in registry.items()},
                self.config.naming.normal_category,
            )
        except VadsceneError as exc:
            report.ground_truth_problem = str(exc)
            with contextlib.suppress(VadsceneError):  # the problem above says why
                named = ground_truth_video_ids(reference, path)
                report.not_in_folder = match_video_ids(named, registry)[1]
            return {}
        report.not_in_folder = match.absent
        return match.categories

    def _split_membership(self) -> dict[str, str]:
        """video id → split, from the configured list files (the first list naming it wins)."""
        membership: dict[str, str] = {}
        for name, list_path in self.config.splits.items():
            for video_id in read_video_list(_resolve(self.root, list_path)):
                membership.setdefault(video_id, name)
        return membership


def _store_files() -> tuple[str, ...]:
    return (STORE_NAME, f"{STORE_NAME}-wal", f"{STORE_NAME}-shm", f"{STORE_NAME}-journal")


def discard_incomplete(root: Path) -> bool:
    """Remove what an interrupted :meth:`Workspace.create` left in ``root`` (the paths its
    :data:`INCOMPLETE_NAME` marker lists, and the marker); True when there was something."""
    marker = root / INCOMPLETE_NAME
    if not marker.is_file():
        return False
    try:
        created = [Path(p) for p in json.loads(marker.read_text(encoding="utf-8"))["created"]]
    except (ValueError, KeyError, TypeError):
        created = []  # a marker cut short: nothing listed yet, so nothing was made after it
    for path in created:
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    marker.unlink(missing_ok=True)
    return True


def _undecodable_name(relative: Path) -> str | None:
    """``relative`` with its undecodable bytes shown as ``\\xNN`` when its name is not UTF-8.

    Python keeps such bytes as lone surrogates, which no text field (pydantic, SQLite,
    JSON) accepts; None when the name is valid text.
    """
    text = relative.as_posix()
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(text).decode("utf-8", "backslashreplace")
    return None


def _escape_controls(text: str) -> str:
    """``text`` with each control character shown as ``\\xNN``, so it prints on one line."""
    return "".join(f"\\x{ord(c):02x}" if unicodedata.category(c) == "Cc" else c for c in text)


def _portable(root: Path, path: Path) -> str:
    """``path`` relative to the workspace when inside it (the workspace can move), else absolute."""
    absolute = path.resolve()
    try:
        return absolute.relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(absolute)


def _resolve(root: Path, path: str) -> Path:
    candidate = Path(path)
    return candidate if candidate.is_absolute() else root / candidate
