"""Label Studio interchange: a labeling config, tasks to import, and its JSON export read back.

A team that already runs `Label Studio <https://labelstud.io>`_ can label scene factors there
and bring the decisions into a workspace, where they are stored, released and audited exactly
like decisions clicked in the vadscene app. The mapping, both ways:

* **video → task.** ``data`` holds ``video`` (the URL the annotator's browser plays:
  ``base_url`` + :func:`vadscene.annotate.urls.video_url`, so the vadscene app must be reachable
  there, and answer Label Studio's origin: ``vadscene app --allow-origin``), ``video_id``,
  ``category`` and ``fps``, the registered frame rate. The config's ``<Video>`` reads its
  ``frameRate`` from that field, so Label Studio's frame counter counts the video's frames
  (it shows duration × frameRate; its default of 24 makes a 360-frame clip at 30 fps read
  288). A video registered without a frame rate gets no ``fps``, and Label Studio falls back
  to 24.
* **factor → ``<Choices>``** named by the factor key, single choice, over the factor's values
  plus ``ambiguous``, under a header with the factor's name and one with its criterion (a
  header, not the ``hint`` attribute: Label Studio shows ``hint`` only behind a feature flag).
* **human decision → ``choices`` result** ``{"from_name": key, "to_name": "video", "type":
  "choices", "value": {"choices": [value]}}``. An annotator's decisions on one video form one
  annotation; their ``consensus`` decisions form a second one marked ``ground_truth: true``,
  Label Studio's mark of the reference annotation, and ``ground_truth`` reads back as
  consensus. Every other annotation says ``ground_truth: false`` explicitly, because Label
  Studio's import defaults it to true.
* **auto pole → prediction** of model version :data:`AUTO_MODEL_VERSION`, so Label Studio
  pre-fills auto factors; an annotator who changes one makes an override (below).
* **annotator ↔ user** (:class:`LabelStudioUsers`). Label Studio's import names a user by
  e-mail (``completed_by: {"email": ...}``) and refuses one that is no member of the
  organisation; its JSON export names users by numeric id (a snapshot export made with
  ``annotations__completed_by`` expanded, by ``{"id", "email", ...}``). So each annotator
  needs an e-mail: given (``--email NAME=ADDRESS``, ``--users FILE``), else the one in the
  annotator registry, else the name itself when it is an e-mail address. An export with an
  annotator lacking one is refused, naming them all, before anything is written. On the way
  back a user id is turned into an e-mail by Label Studio's user list (``GET /api/users/``,
  given as a ``--users`` file) and the e-mail into the annotator it was mapped to, so the
  round trip keeps names.

  A user no mapping names is the same person as an annotator the workspace already knows,
  or a newcomer; importing them under a derived name when they may be the former is how one
  person came to count twice (a ``single`` decision turned into an ``agreement``). So an
  unknown user is imported under their e-mail only when every annotator of the workspace has
  a known e-mail (then nobody can be them), and is listed in the summary; otherwise, and
  always for a user known only by id, the import is refused, listing each with what to map.

Reading an export back (:func:`import_export`): skipped annotations (``was_cancelled``) and
predictions are ignored — auto poles come from ``vadscene measure``, not from Label Studio; a
decision on an auto factor is stored as an ``override`` of the workspace's current auto pole;
a factor left out of an annotation clears nothing. Label Studio keeps one time per annotation,
not per result, so every decision of an annotation is dated by its ``updated_at`` (the last
save; else ``created_at``; a time without offset is UTC, as Label Studio writes). Label Studio
does not keep the times of the annotations it imports (it dates them at the import), so
decisions that went through Label Studio come back dated by it; the export still dates an
annotation from its earliest to its latest decision, for a reader of the file. Re-importing
the same export changes nothing.
"""

from __future__ import annotations

import csv
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from vadscene.annotate.urls import video_url
from vadscene.core import jsonio
from vadscene.core.catalogue import AMBIGUOUS, Catalogue
from vadscene.core.errors import ReleaseError, StoreError, validation_problems
from vadscene.core.files import atomic_write
from vadscene.core.paths import output_folder
from vadscene.core.records import AUTO_ANNOTATOR, DecisionSource, FactorDecision
from vadscene.store.database import Decision
from vadscene.store.team import canonical_annotator
from vadscene.store.workspace import Workspace

VIDEO_TAG = "video"
"""Name of the ``<Video>`` object tag, the ``to_name`` of every result."""

FPS_FIELD = "fps"
"""Task data field holding the video's frame rate, read by the ``<Video>`` tag's
``frameRate``."""

AUTO_MODEL_VERSION = "vadscene-auto"
"""``model_version`` of the prediction carrying the auto poles."""

TASKS_NAME = "tasks.json"
CONFIG_NAME = "labeling_config.xml"

USERS_HELP = (
    "a CSV with a header row naming the columns name and email (optional: id, the Label "
    "Studio user id), or JSON: an object {name: email}, or a list of objects with email and "
    "name or id (Label Studio's own user list, GET /api/users/, is one)"
)
"""What a ``--users`` file holds, for help texts and errors."""

_UPLOAD_PREFIX = re.compile(r"^[0-9a-f]{8}-")
"""Label Studio stores an uploaded file as ``<8 hex digits>-<original name>``."""


class LabelStudioError(ReleaseError):
    """A Label Studio export, user mapping or catalogue does not fit the workspace;
    ``problems`` lists all."""


@dataclass(frozen=True)
class LabelStudioImport:
    """What :func:`import_export` read and added."""

    annotations: int
    """Annotations imported (cancelled ones not counted)."""
    cancelled: int
    """Skipped or cancelled annotations, ignored."""
    decisions_added: int
    decisions_already_present: int
    """Decisions identical to the annotator's current one (same value, source and time)."""
    skipped_results: dict[str, int] = field(default_factory=dict)
    """Results of other types (a comment ``textarea``, a ``rating``, …) carry no factor
    decision: type → how many were skipped."""
    new_annotators: dict[str, int] = field(default_factory=dict)
    """Label Studio users no mapping named, imported under their e-mail (the workspace knew
    every annotator's e-mail, so none of them is one): e-mail → annotations."""


# --- who is who -----------------------------------------------------------------------------


@dataclass(frozen=True)
class UserMapping:
    """One given fact about a Label Studio user: its e-mail belongs to annotator ``name``,
    and/or Label Studio knows it as user ``user_id``."""

    email: str
    name: str | None = None
    user_id: int | None = None
    where: str = ""
    """Where it was given (an option, a file's line or entry), for messages."""


@dataclass(frozen=True)
class LabelStudioUsers:
    """The annotator ↔ Label Studio user mapping given for an export or import; the
    annotator registry's e-mails complete it (:func:`export_tasks`, :func:`import_export`).
    Gathered and checked by :meth:`gather`."""

    mappings: tuple[UserMapping, ...] = ()

    @classmethod
    def gather(
        cls, emails: Iterable[str] = (), files: Iterable[Path | str] = ()
    ) -> LabelStudioUsers:
        """The mapping of ``--email NAME=ADDRESS`` texts and ``--users`` files
        (:data:`USERS_HELP`); :class:`LabelStudioError` listing every malformed one."""
        mappings: list[UserMapping] = []
        problems: list[str] = []
        for text in emails:
            name, sep, email = text.rpartition("=")
            where = f"--email {text}"
            if not sep or not name.strip() or not email.strip():
                problems.append(f"{where}: expected NAME=ADDRESS, e.g. ana=ana@lab.org")
            elif not _is_email(email.strip()):
                problems.append(f"{where}: '{email.strip()}' is not an e-mail address")
            else:
                mappings.append(UserMapping(email.strip(), name=name.strip(), where=where))
        for path in files:
            found, file_problems = _read_users_file(Path(path))
            mappings += found
            problems += file_problems
        if problems:
            raise LabelStudioError("the Label Studio user mapping cannot be used", problems)
        return cls(tuple(mappings))


def _is_email(text: str) -> bool:
    local, at, domain = text.partition("@")
    return bool(at and local and domain) and not any(c.isspace() for c in text)


def _read_users_file(path: Path) -> tuple[list[UserMapping], list[str]]:
    """The mappings a ``--users`` file gives, and its problems (each naming the file and the
    line or entry)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return [], [f"{path}: users file not found"]
    except (OSError, UnicodeDecodeError) as exc:
        return [], [f"{path}: cannot be read ({exc})"]
    if path.suffix.lower() == ".csv":
        return _users_csv(path, text)
    if path.suffix.lower() == ".json":
        return _users_json(path, text)
    return [], [f"{path}: expected a .csv or .json users file: {USERS_HELP}"]


def _users_csv(path: Path, text: str) -> tuple[list[UserMapping], list[str]]:
    rows = csv.reader(text.splitlines())
    header = [cell.strip().casefold() for cell in next(rows, [])]
    if "email" not in header or not ({"name", "id"} & set(header)):
        return [], [f"{path}: line 1 must name the columns name and email (optional: id)"]
    mappings, problems = [], []
    for line, row in enumerate(rows, start=2):
        if not any(cell.strip() for cell in row):
            continue
        cells = dict(zip(header, (cell.strip() for cell in row), strict=False))
        found = _user_entry(
            cells.get("email"), cells.get("name") or None, cells.get("id") or None, True
        )
        if isinstance(found, str):
            problems.append(f"{path}, line {line}: {found}")
        else:
            email, name, user_id = found
            mappings.append(UserMapping(email, name, user_id, f"{path}, line {line}"))
    return mappings, problems


def _users_json(path: Path, text: str) -> tuple[list[UserMapping], list[str]]:
    try:
        data = jsonio.loads(text)
    except json.JSONDecodeError as exc:
        return [], [f"{path}: not valid JSON ({exc})"]
    if isinstance(data, dict):
        entries: list[tuple[str, Any, Any, Any]] = [
            (f"{path}, key {name!r}", email, name, None) for name, email in data.items()
        ]
    elif isinstance(data, list):
        entries = [
            (f"{path}, entry {i}", *((e.get("email"), e.get("name"), e.get("id"))))
            if isinstance(e, dict)
            else (f"{path}, entry {i}", None, None, None)
            for i, e in enumerate(data)
        ]
    else:
        return [], [f"{path}: expected {USERS_HELP}"]
    mappings, problems = [], []
    for where, email, name, user_id in entries:
        found = _user_entry(email, name, user_id, False)
        if isinstance(found, str):
            problems.append(f"{where}: {found}")
        else:
            mappings.append(UserMapping(found[0], found[1], found[2], where))
    return mappings, problems


def _user_entry(
    email: object, name: object, user_id: object, from_text: bool
) -> tuple[str, str | None, int | None] | str:
    """(email, name, id) of one entry, or what is wrong with it."""
    if not isinstance(email, str) or not _is_email(email.strip()):
        return f"expected an e-mail address, got {email!r}"
    if name is not None and (not isinstance(name, str) or not name.strip()):
        return f"expected a name (text), got {name!r}"
    if from_text and isinstance(user_id, str) and user_id.isdigit():
        user_id = int(user_id)
    if user_id is not None and (not isinstance(user_id, int) or isinstance(user_id, bool)):
        return f"expected a Label Studio user id (a whole number), got {user_id!r}"
    if name is None and user_id is None:
        return "expected a name or a Label Studio user id beside the e-mail"
    return email.strip(), name.strip() if isinstance(name, str) else None, user_id


def _name_key(name: str) -> str:
    """The canonical id of an annotator name, for matching (``Ana`` is ``ana``); a name the
    registry could not hold matches only as written."""
    try:
        return canonical_annotator(name)
    except StoreError:
        return name


class _Directory:
    """The mapping given, completed by the annotator registry, checked for contradictions,
    and matched against the workspace's annotators."""

    def __init__(self, workspace: Workspace, users: LabelStudioUsers) -> None:
        store = workspace.store
        problems: list[str] = []
        # canonical name -> (name, e-mail, where given)
        by_name: dict[str, tuple[str, str, str]] = {}
        for m in users.mappings:
            if m.name is None:
                continue
            if m.name.strip().casefold() == AUTO_ANNOTATOR:
                problems.append(f"{m.where}: '{AUTO_ANNOTATOR}' is measurement, not a user")
                continue
            key = _name_key(m.name)
            earlier = by_name.get(key)
            if earlier is not None and earlier[1].casefold() != m.email.casefold():
                problems.append(
                    f"{m.where}: maps '{m.name}' to {m.email}, but {earlier[2]} maps it to "
                    f"{earlier[1]}"
                )
            elif earlier is None:
                by_name[key] = (m.name, m.email, m.where)
        registry = store.annotator_registry()
        for entry in registry:
            if entry.email and entry.annotator_id not in by_name:
                by_name[entry.annotator_id] = (
                    entry.annotator_id,
                    entry.email,
                    f"the annotator registry ('{entry.annotator_id}')",
                )
        # e-mail (case folded) -> canonical name
        self._by_email: dict[str, str] = {}
        for key, (name, email, where) in by_name.items():
            other = self._by_email.setdefault(email.casefold(), key)
            if other != key:
                problems.append(
                    f"{where}: maps '{name}' to {email}, which {by_name[other][2]} gives "
                    f"'{by_name[other][0]}'; one Label Studio user is one annotator"
                )
        self._by_id: dict[int, tuple[str, str]] = {}
        for m in users.mappings:
            if m.user_id is None:
                continue
            known = self._by_id.setdefault(m.user_id, (m.email, m.where))
            if known[0].casefold() != m.email.casefold():
                problems.append(
                    f"{m.where}: gives Label Studio user {m.user_id} the e-mail {m.email}, "
                    f"but {known[1]} gives it {known[0]}"
                )
        if problems:
            raise LabelStudioError("the Label Studio user mapping contradicts itself", problems)
        self._by_name = by_name
        # how the workspace writes each of its annotators, by canonical name
        known_names = [*store.annotators(), *(entry.annotator_id for entry in registry)]
        self._spelling = {_name_key(name): name for name in known_names}

    def email_of(self, name: str) -> str | None:
        """The e-mail of the annotator ``name``: mapped, registered, or the name itself."""
        found = self._by_name.get(_name_key(name))
        if found is not None:
            return found[1]
        return name if _is_email(name) else None

    def annotator_of(self, email: str) -> str | None:
        """The annotator the e-mail belongs to, written as the workspace writes them."""
        key = self._by_email.get(email.casefold())
        if key is None and _name_key(email) in self._spelling:
            key = _name_key(email)
        if key is None:
            return None
        return self._spelling[key] if key in self._spelling else self._by_name[key][0]

    def email_of_id(self, user_id: int) -> str | None:
        found = self._by_id.get(user_id)
        return found[0] if found else None

    def without_email(self) -> list[str]:
        """The workspace's annotators with no known e-mail: any of them may be a user no
        mapping names."""
        return sorted(name for name in self._spelling.values() if self.email_of(name) is None)


# --- writing --------------------------------------------------------------------------------


def labeling_config(catalogue: Catalogue) -> str:
    """The labeling config XML: the video (its frame rate from each task's data), then per
    factor its name, criterion and choices."""
    if VIDEO_TAG in catalogue.keys:
        raise LabelStudioError(
            f"catalogue '{catalogue.name}': factor key '{VIDEO_TAG}' is the name of Label "
            "Studio's video tag; rename the factor"
        )
    view = ET.Element("View")
    ET.SubElement(view, "Video", name=VIDEO_TAG, value="$video", frameRate=f"${FPS_FIELD}")
    for factor in catalogue.factors:
        ET.SubElement(view, "Header", value=factor.name)
        ET.SubElement(view, "Header", value=factor.criterion, size="5")
        choices = ET.SubElement(
            view, "Choices", name=factor.key, toName=VIDEO_TAG, choice="single", showInline="true"
        )
        for value in (*factor.values, AMBIGUOUS):
            ET.SubElement(choices, "Choice", value=value)
    ET.indent(view)
    return ET.tostring(view, encoding="unicode") + "\n"


def export_tasks(
    workspace: Workspace, *, base_url: str = "", users: LabelStudioUsers | None = None
) -> list[dict[str, Any]]:
    """One Label Studio task per registered video, carrying every current decision.

    ``base_url`` is where the vadscene app serves videos (e.g. ``http://host:8501``); empty
    gives root-relative URLs, which play when Label Studio and the app share an origin.
    ``users`` maps annotators to Label Studio e-mails (the registry's complete it); an
    annotator with none refuses the export (:class:`LabelStudioError` naming them all).
    """
    directory = _Directory(workspace, users or LabelStudioUsers())
    by_video: dict[str, list[Decision]] = {}
    for d in workspace.store.current_decisions():
        if d.value is not None:
            by_video.setdefault(d.video_id, []).append(d)
    emails: dict[str, str | None] = {}
    unmapped: dict[str, int] = {}
    for decisions in by_video.values():
        for d in decisions:
            if d.source != "auto" and d.annotator not in emails:
                emails[d.annotator] = directory.email_of(d.annotator)
            if d.source != "auto" and emails[d.annotator] is None:
                unmapped[d.annotator] = unmapped.get(d.annotator, 0) + 1
    if unmapped:
        raise LabelStudioError(
            f"{workspace.root}: Label Studio knows its users by e-mail and refuses an "
            f"annotation by anyone else, and {len(unmapped)} annotator(s) have no e-mail; "
            "map each with --email NAME=ADDRESS (the address of their Label Studio user) or "
            "--users FILE, or register it (vadscene annotators add WORKSPACE NAME --email "
            "ADDRESS); nothing was written",
            [f"{name}: {n} decision(s)" for name, n in sorted(unmapped.items())],
        )
    tasks = []
    for task_id, video in enumerate(workspace.store.videos(), start=1):
        groups: dict[tuple[str, bool], list[Decision]] = {}
        auto = []
        for d in by_video.get(video.video_id, []):
            if d.source == "auto":
                auto.append(d)
            else:
                groups.setdefault((d.annotator, d.source == "consensus"), []).append(d)
        data: dict[str, Any] = {
            "video": base_url.rstrip("/") + video_url(video.video_id),
            "video_id": video.video_id,
            "category": video.category,
        }
        if video.fps > 0:
            data[FPS_FIELD] = video.fps
        tasks.append(
            {
                "id": task_id,
                "data": data,
                "annotations": [
                    {
                        "completed_by": {"email": emails[annotator]},
                        "result": [_choices_result(d) for d in decisions],
                        "ground_truth": consensus,
                        "was_cancelled": False,
                        "created_at": _ls_time(min(d.decided_at for d in decisions)),
                        "updated_at": _ls_time(max(d.decided_at for d in decisions)),
                    }
                    for (annotator, consensus), decisions in sorted(groups.items())
                ],
                "predictions": [
                    {
                        "model_version": AUTO_MODEL_VERSION,
                        "score": None,
                        "result": [_choices_result(d) for d in auto],
                    }
                ]
                if auto
                else [],
            }
        )
    return tasks


def write_labelstudio(
    workspace: Workspace,
    out_dir: Path | str,
    *,
    base_url: str = "",
    users: LabelStudioUsers | None = None,
) -> tuple[Path, Path]:
    """Write ``tasks.json`` and ``labeling_config.xml`` into ``out_dir``, each atomically;
    nothing is written when :func:`export_tasks` or :func:`labeling_config` refuses."""
    out_dir = output_folder(out_dir, "the Label Studio tasks", create=False)
    config = labeling_config(workspace.catalogue)
    tasks = export_tasks(workspace, base_url=base_url, users=users)
    out_dir = output_folder(out_dir, "the Label Studio tasks")
    tasks_path, config_path = out_dir / TASKS_NAME, out_dir / CONFIG_NAME
    atomic_write(tasks_path, json.dumps(tasks, indent=2, ensure_ascii=False) + "\n")
    atomic_write(config_path, config)
    return tasks_path, config_path


def _choices_result(d: Decision) -> dict[str, Any]:
    return {
        "id": d.factor,
        "from_name": d.factor,
        "to_name": VIDEO_TAG,
        "type": "choices",
        "value": {"choices": [d.value]},
    }


def _ls_time(stored: str) -> str:
    """A store timestamp as Label Studio writes times: UTC with a ``Z``."""
    utc = datetime.fromisoformat(stored).astimezone(UTC)
    return utc.isoformat(timespec="microseconds").replace("+00:00", "Z")


# --- reading --------------------------------------------------------------------------------
# Only the fields the import uses are modelled; Label Studio's others (id, lead_time, task,
# project, meta, drafts, predictions, ...) pass through unread.


class _User(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: int | None = None
    email: str | None = None


class _Result(BaseModel):
    model_config = ConfigDict(extra="allow")

    from_name: str
    type: str
    value: dict[str, Any]


class _Annotation(BaseModel):
    model_config = ConfigDict(extra="allow")

    completed_by: int | _User
    result: list[_Result]
    was_cancelled: bool = False
    ground_truth: bool = False
    created_at: datetime | None = None
    updated_at: datetime | None = None


class _Task(BaseModel):
    model_config = ConfigDict(extra="allow")

    data: dict[str, Any]
    annotations: list[_Annotation] = []


_EXPORT = TypeAdapter(list[_Task])


def import_export(
    workspace: Workspace,
    tasks: list[dict[str, Any]],
    *,
    users: LabelStudioUsers | None = None,
    origin: str = "Label Studio export",
    progress: Callable[[int, int], None] | None = None,
) -> LabelStudioImport:
    """Import Label Studio's JSON export (the parsed list of tasks) into a workspace.

    Everything is checked first — structure, then every task's video (from ``data.video_id``,
    else the last path segment of ``data.video``), every annotation's user (``users`` and the
    annotator registry map them to annotators; the module's docstring says when an unknown
    one is imported under their e-mail) and every result's factor and value — and
    :class:`LabelStudioError` lists each problem with its JSON path, writing nothing.
    Otherwise the decisions land in the store oldest first, so an annotator's latest
    annotation of a video wins. ``progress(done, total)`` is called as tasks are checked.
    """
    try:
        parsed = _EXPORT.validate_python(tasks)
    except ValidationError as exc:
        raise LabelStudioError(
            f"{origin}: not a Label Studio JSON export", validation_problems(exc)
        ) from None
    directory = _Directory(workspace, users or LabelStudioUsers())
    without_email = directory.without_email()
    catalogue = workspace.catalogue
    store = workspace.store
    registered = set(store.video_ids())
    auto_state = _auto_state(workspace)
    problems: list[str] = []
    rows: list[tuple[str, str, FactorDecision]] = []
    imported = cancelled = 0
    skipped: dict[str, int] = {}
    unknown: dict[tuple[int | None, str | None], int] = {}
    new_annotators: dict[str, int] = {}
    for i, task in enumerate(parsed):
        if progress is not None and i % 256 == 0:
            progress(i, len(parsed))
        kept = [(j, a) for j, a in enumerate(task.annotations) if not a.was_cancelled]
        cancelled += len(task.annotations) - len(kept)
        if not kept:
            continue  # nothing to import, so the video need not be registered
        video_id, video_problem = _video_of(task.data, registered)
        if video_problem:
            problems.append(f"$[{i}].data: {video_problem}")
        for j, annotation in kept:
            where = f"$[{i}].annotations[{j}]"
            user = _user_of(annotation.completed_by)
            annotator = None
            if user is None:
                problems.append(f"{where}.completed_by: names no user (expected an id or email)")
            else:
                user_id, email = user
                email = email or (directory.email_of_id(user_id) if user_id is not None else None)
                annotator = directory.annotator_of(email) if email else None
                if annotator is None and email and _is_email(email) and not without_email:
                    annotator = email
                    new_annotators[email] = new_annotators.get(email, 0) + 1
                elif annotator is None:
                    unknown[user_id, email] = unknown.get((user_id, email), 0) + 1
            decided_at = _decided_at(annotation)
            for k, result in enumerate(annotation.result):
                if result.type != "choices":
                    skipped[result.type] = skipped.get(result.type, 0) + 1
                    continue
                checked = _factor_value(catalogue, result)
                if isinstance(checked, str):
                    problems.append(f"{where}.result[{k}]{checked}")
                    continue
                if video_problem or annotator is None:
                    continue  # reported; keep checking the results
                key, value = checked
                replaced: tuple[str | None, float | None] = (None, None)
                source: DecisionSource
                if annotation.ground_truth:
                    source = "consensus"
                elif (video_id, key) in auto_state:
                    source, replaced = "override", auto_state[video_id, key]
                else:
                    source = "manual"
                decision = FactorDecision(
                    annotator=annotator,
                    value=value,
                    source=source,
                    decided_at=decided_at,
                    replaced_auto_value=replaced[0],
                    replaced_measurement=replaced[1],
                )
                rows.append((video_id, key, decision))
            imported += 1
    problems += [
        _unknown_user(*user, n, without_email)
        for user, n in sorted(unknown.items(), key=lambda item: (str(item[0][0]), str(item[0][1])))
    ]
    if problems:
        raise LabelStudioError(
            f"{origin}: does not fit the workspace at {workspace.root}; nothing was imported",
            problems,
        )
    rows.sort(key=lambda row: row[2].decided_at)
    counts = store.import_rows(videos=[], decisions=rows, marks=[], measurements=[], thresholds=[])
    if progress is not None:
        progress(len(parsed), len(parsed))
    return LabelStudioImport(
        annotations=imported,
        cancelled=cancelled,
        decisions_added=counts.decisions_added,
        decisions_already_present=counts.decisions_already_present,
        skipped_results=dict(sorted(skipped.items())),
        new_annotators=dict(sorted(new_annotators.items())),
    )


def _unknown_user(
    user_id: int | None, email: str | None, annotations: int, without_email: Sequence[str]
) -> str:
    """What to do about a Label Studio user who maps to no annotator."""
    who = "Label Studio user" + (f" {user_id}" if user_id is not None else "")
    count = f"{annotations} annotation(s)"
    if email is None:
        return (
            f"{who} ({count}): the export names them by id only; give Label Studio's user "
            "list (GET /api/users/, saved as a .json file) with --users, or their e-mail in "
            "a --users file with an id column"
        )
    shown = ", ".join(without_email[:5]) + (
        f" and {len(without_email) - 5} more" if len(without_email) > 5 else ""
    )
    return (
        f"{who} {email} ({count}): no annotator is mapped to this e-mail, and it may be one "
        f"of those whose e-mail is unknown ({shown}); map it with --email NAME={email} "
        "(a newcomer too: their name in this workspace)"
    )


def _auto_state(workspace: Workspace) -> dict[tuple[str, str], tuple[str | None, float | None]]:
    """(video, auto factor) → (current auto pole, measured statistic): what an override replaces.

    The store looks this up itself for a single decision but not for bulk rows, which carry
    their provenance; an override from Label Studio is recorded just as one clicked in the app.
    """
    store = workspace.store
    measured = store.measurements()
    poles = {
        (d.video_id, d.factor): d.value for d in store.current_decisions(annotator=AUTO_ANNOTATOR)
    }
    state = {}
    for video_id in store.video_ids():
        for factor in workspace.catalogue.factors:
            if factor.auto is not None:
                statistic = measured.get(video_id, {}).get(factor.auto.statistic)
                state[video_id, factor.key] = (
                    poles.get((video_id, factor.key)),
                    statistic.value if statistic else None,
                )
    return state


def _video_of(data: dict[str, Any], registered: set[str]) -> tuple[str, str | None]:
    """The registered video a task shows, or a problem saying why there is none.

    ``data.video_id`` is authoritative. Without it the URL's last path segment is tried as an
    id, then without its extension, then without Label Studio's upload prefix; a local-storage
    URL (``/data/local-files/?d=path``) names its file in ``d``.
    """
    if "video_id" in data:
        video_id = str(data["video_id"])
        if video_id in registered:
            return video_id, None
        return video_id, f"unknown video '{video_id}' (from data.video_id)"
    url = data.get(VIDEO_TAG)
    if not isinstance(url, str):
        return "", "neither data.video_id nor a data.video URL names the video"
    parts = urlsplit(url)
    path = parse_qs(parts.query).get("d", [unquote(parts.path)])[0]
    name = path.rstrip("/").rsplit("/", 1)[-1]
    stem = PurePosixPath(name).stem
    for candidate in (name, stem, _UPLOAD_PREFIX.sub("", stem)):
        if candidate in registered:
            return candidate, None
    return name, f"unknown video '{name}' (from data.video {url!r})"


def _factor_value(catalogue: Catalogue, result: _Result) -> tuple[str, str] | str:
    """(factor key, value) of a result, or its problem as a JSON path suffix and message."""
    if result.from_name not in catalogue.keys:
        return (
            f".from_name: unknown factor '{result.from_name}' "
            f"(catalogue '{catalogue.name}' has: {', '.join(catalogue.keys)})"
        )
    factor = catalogue.factor(result.from_name)
    choices = result.value.get("choices")
    if not (isinstance(choices, list) and len(choices) == 1):
        return f".value.choices: expected one choice, got {choices!r}"
    if not (isinstance(choices[0], str) and factor.allows(choices[0])):
        return (
            f".value.choices: {choices[0]!r} is not a value of factor '{factor.key}' "
            f"(expected one of: {', '.join([*factor.values, AMBIGUOUS])})"
        )
    return factor.key, choices[0]


def _user_of(user: int | _User) -> tuple[int | None, str | None] | None:
    """(id, e-mail) of the user an annotation names, either possibly None; None for neither."""
    if isinstance(user, int):
        return user, None
    if user.email is None and user.id is None:
        return None
    return user.id, user.email


def _decided_at(annotation: _Annotation) -> datetime:
    at = annotation.updated_at or annotation.created_at or datetime.now(UTC)
    return (at if at.tzinfo else at.replace(tzinfo=UTC)).astimezone(UTC)
