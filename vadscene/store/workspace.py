"""A workspace: one benchmark's folder of configuration, annotation store, cache and releases.

Layout::

    WORKSPACE/
      vadscene.yaml     configuration (dataset, video root, naming rules, ground truth, catalogue)
      catalogue.yaml    the workspace's own copy of its catalogue, fixed at init
      annotations.db    the SQLite annotation store (see vadscene.store.database)
      cache/            derived data (measurements, browser proxies)
      releases/         exported releases

``vadscene init`` creates it and scans the video root; ``vadscene scan`` re-scans later (new
videos are added, changed ones re-probed, vanished ones reported — decisions are never dropped).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from vadscene.benchmark.ground_truth import GroundTruthFormat
from vadscene.benchmark.video_lists import category_from_video_id, read_video_list
from vadscene.core import jsonio
from vadscene.core.catalogue import Catalogue, load_catalogue
from vadscene.core.errors import WorkspaceError, parse_failure, validation_problems
from vadscene.core.files import atomic_write
from vadscene.core.records import VideoInfo
from vadscene.store.database import AnnotationStore
from vadscene.video.probe import (
    VideoProbeError,
    content_fingerprint,
    iter_video_files,
    probe_video,
)

CONFIG_NAME = "vadscene.yaml"
CATALOGUE_NAME = "catalogue.yaml"
STORE_NAME = "annotations.db"
WORKSPACE_FORMAT: Literal[1] = 1
INCOMPLETE_NAME = ".vadscene-incomplete"
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

    @property
    def registered(self) -> int:
        return len(self.added) + len(self.updated) + len(self.unchanged)


ScanProgress = Callable[[int, int, str], None]
"""Called as ``progress(done, total, current_file)`` while scanning."""


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

    def scan(self, progress: ScanProgress | None = None) -> ScanReport:
        """Probe every video under the video root and register it.

        Unreadable files are recorded with their reason and do not stop the scan. A file whose
        fingerprint and size are unchanged since the last scan is not probed again.
        """
        report = ScanReport()
        root = self.video_root
        if root is None:
            raise WorkspaceError(f"{self.root}: this workspace has no video folder to scan")
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
            probed.append(info)
        if progress is not None:
            progress(len(files), len(files), "")
        self.store.register_videos(probed)
        self.store.record_unreadable(report.unreadable)
        report.missing = sorted(set(known) - set(seen))
        for name, list_path in self.config.splits.items():
            absent = [i for i in read_video_list(_resolve(self.root, list_path)) if i not in seen]
            if absent:
                report.unlisted_in_split[name] = absent
        return report

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
