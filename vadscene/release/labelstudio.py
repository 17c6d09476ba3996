"""Label Studio interchange: a labeling config, tasks to import, and its JSON export read back.

A team that already runs `Label Studio <https://labelstud.io>`_ can label scene factors there
and bring the decisions into a workspace, where they are stored, released and audited exactly
like decisions clicked in the vadscene app. The mapping, both ways:

* **video → task.** ``data`` holds ``video`` (the URL the annotator's browser plays:
  ``base_url`` + :func:`vadscene.annotate.urls.video_url`, so the vadscene app must be reachable
  there), ``video_id`` and ``category``.
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
* **annotator ↔ user.** The export writes ``completed_by: {"email": annotator}``, the form
  Label Studio's import resolves to a member of the organisation (it refuses unknown emails, so
  either name annotators by their Label Studio emails or invite them under these names). Its
  JSON export names users by numeric id (some versions by a ``{"id", "email", ...}`` object):
  the annotator is the email when there is one, else ``labelstudio-user-<id>``.

Reading an export back (:func:`import_export`): skipped annotations (``was_cancelled``) and
predictions are ignored — auto poles come from ``vadscene measure``, not from Label Studio; a
decision on an auto factor is stored as an ``override`` of the workspace's current auto pole;
a factor left out of an annotation clears nothing. Label Studio keeps one time per annotation,
not per result, so every decision of an annotation is dated by its ``updated_at`` (the last
save; else ``created_at``; a time without offset is UTC, as Label Studio writes), and the export
dates an annotation from its earliest to its latest decision. Re-importing the same export
changes nothing.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from vadscene.annotate.urls import video_url
from vadscene.core.catalogue import AMBIGUOUS, Catalogue
from vadscene.core.errors import ReleaseError, validation_problems
from vadscene.core.files import atomic_write
from vadscene.core.paths import output_folder
from vadscene.core.records import AUTO_ANNOTATOR, DecisionSource, FactorDecision
from vadscene.store.database import Decision
from vadscene.store.workspace import Workspace

VIDEO_TAG = "video"
"""Name of the ``<Video>`` object tag, the ``to_name`` of every result."""

AUTO_MODEL_VERSION = "vadscene-auto"
"""``model_version`` of the prediction carrying the auto poles."""

USER_PREFIX = "labelstudio-user-"
"""Annotator name of a Label Studio user known only by numeric id: ``labelstudio-user-10``."""

TASKS_NAME = "tasks.json"
CONFIG_NAME = "labeling_config.xml"

_UPLOAD_PREFIX = re.compile(r"^[0-9a-f]{8}-")
"""Label Studio stores an uploaded file as ``<8 hex digits>-<original name>``."""


class LabelStudioError(ReleaseError):
    """A Label Studio export or catalogue does not fit the workspace; ``problems`` lists all."""


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


# --- writing --------------------------------------------------------------------------------


def labeling_config(catalogue: Catalogue) -> str:
    """The labeling config XML: the video, then per factor its name, criterion and choices."""
    if VIDEO_TAG in catalogue.keys:
        raise LabelStudioError(
            f"catalogue '{catalogue.name}': factor key '{VIDEO_TAG}' is the name of Label "
            "Studio's video tag; rename the factor"
        )
    view = ET.Element("View")
    ET.SubElement(view, "Video", name=VIDEO_TAG, value="$video")
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


def export_tasks(workspace: Workspace, *, base_url: str = "") -> list[dict[str, Any]]:
    """One Label Studio task per registered video, carrying every current decision.

    ``base_url`` is where the vadscene app serves videos (e.g. ``http://host:8501``); empty
    gives root-relative URLs, which play when Label Studio and the app share an origin.
    """
    by_video: dict[str, list[Decision]] = {}
    for d in workspace.store.current_decisions():
        if d.value is not None:
            by_video.setdefault(d.video_id, []).append(d)
    tasks = []
    for task_id, video in enumerate(workspace.store.videos(), start=1):
        groups: dict[tuple[str, bool], list[Decision]] = {}
        auto = []
        for d in by_video.get(video.video_id, []):
            if d.source == "auto":
                auto.append(d)
            else:
                groups.setdefault((d.annotator, d.source == "consensus"), []).append(d)
        tasks.append(
            {
                "id": task_id,
                "data": {
                    "video": base_url.rstrip("/") + video_url(video.video_id),
                    "video_id": video.video_id,
                    "category": video.category,
                },
                "annotations": [
                    {
                        "completed_by": {"email": annotator},
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
    workspace: Workspace, out_dir: Path | str, *, base_url: str = ""
) -> tuple[Path, Path]:
    """Write ``tasks.json`` and ``labeling_config.xml`` into ``out_dir``, each atomically."""
    out_dir = output_folder(out_dir, "the Label Studio tasks")
    tasks_path, config_path = out_dir / TASKS_NAME, out_dir / CONFIG_NAME
    config = labeling_config(workspace.catalogue)
    tasks = export_tasks(workspace, base_url=base_url)
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
    workspace: Workspace, tasks: list[dict[str, Any]], *, origin: str = "Label Studio export"
) -> LabelStudioImport:
    """Import Label Studio's JSON export (the parsed list of tasks) into a workspace.

    Everything is checked first — structure, then every task's video (from ``data.video_id``,
    else the last path segment of ``data.video``) and every result's factor and value — and
    :class:`LabelStudioError` lists each problem with its JSON path, writing nothing. Otherwise
    the decisions land in one store transaction, oldest first, so an annotator's latest
    annotation of a video wins.
    """
    try:
        parsed = _EXPORT.validate_python(tasks)
    except ValidationError as exc:
        raise LabelStudioError(
            f"{origin}: not a Label Studio JSON export", validation_problems(exc)
        ) from None
    catalogue = workspace.catalogue
    store = workspace.store
    registered = set(store.video_ids())
    auto_state = _auto_state(workspace)
    problems: list[str] = []
    rows: list[tuple[str, str, FactorDecision]] = []
    imported = cancelled = 0
    skipped: dict[str, int] = {}
    for i, task in enumerate(parsed):
        kept = [(j, a) for j, a in enumerate(task.annotations) if not a.was_cancelled]
        cancelled += len(task.annotations) - len(kept)
        if not kept:
            continue  # nothing to import, so the video need not be registered
        video_id, video_problem = _video_of(task.data, registered)
        if video_problem:
            problems.append(f"$[{i}].data: {video_problem}")
        for j, annotation in kept:
            where = f"$[{i}].annotations[{j}]"
            annotator = _annotator(annotation.completed_by)
            if annotator is None:
                problems.append(f"{where}.completed_by: names no user (expected an id or email)")
            elif annotator == AUTO_ANNOTATOR:
                problems.append(
                    f"{where}.completed_by: '{AUTO_ANNOTATOR}' is reserved for measured poles"
                )
            decided_at = _decided_at(annotation)
            for k, result in enumerate(annotation.result):
                if result.type != "choices":
                    skipped[result.type] = skipped.get(result.type, 0) + 1
                    continue
                checked = _factor_value(catalogue, result)
                if isinstance(checked, str):
                    problems.append(f"{where}.result[{k}]{checked}")
                    continue
                if video_problem or annotator in (None, AUTO_ANNOTATOR):
                    continue  # reported above; keep checking the results
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
    if problems:
        raise LabelStudioError(
            f"{origin}: does not fit the workspace at {workspace.root}; nothing was imported",
            problems,
        )
    rows.sort(key=lambda row: row[2].decided_at)
    counts = store.import_rows(videos=[], decisions=rows, marks=[], measurements=[], thresholds=[])
    return LabelStudioImport(
        annotations=imported,
        cancelled=cancelled,
        decisions_added=counts.decisions_added,
        decisions_already_present=counts.decisions_already_present,
        skipped_results=dict(sorted(skipped.items())),
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


def _annotator(user: int | _User) -> str | None:
    if isinstance(user, int):
        return f"{USER_PREFIX}{user}"
    if user.email:
        return user.email
    return f"{USER_PREFIX}{user.id}" if user.id is not None else None


def _decided_at(annotation: _Annotation) -> datetime:
    at = annotation.updated_at or annotation.created_at or datetime.now(UTC)
    return (at if at.tzinfo else at.replace(tzinfo=UTC)).astimezone(UTC)
