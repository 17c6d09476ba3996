"""Releases: export a workspace's annotations as versioned JSON (and CSV), validate, import.

A release is self-describing: it embeds the catalogue, every video's registry entry, each
annotator's current decision per factor with provenance, the value the audit uses, auto
measurements with their threshold rules, and the support per pole of every contrast. Its JSON
Schema is generated from :mod:`vadscene.core.records` and written beside every release.

Export → import into a fresh workspace → export reproduces the release exactly except
``created_at``: the import writes every decision, mark, measurement and rule back with its
original annotator, source and time. Importing into a workspace merges by time, per key, for
every kind of state (:meth:`~vadscene.store.database.AnnotationStore.import_rows`).

Building, writing, reading and importing a release take a ``progress(done, total)``
callback (:data:`Progress`), which draws the progress bars of ``vadscene export`` and
``vadscene import``.
"""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from vadscene import __version__
from vadscene.annotate.consensus import resolve_assignment
from vadscene.core import jsonio
from vadscene.core.catalogue import AMBIGUOUS, Catalogue, Factor, threshold_rule_problems
from vadscene.core.errors import ReleaseError, parse_failure, validation_problems
from vadscene.core.files import replace_together
from vadscene.core.instants import CLOCK_SKEW, canonical, now
from vadscene.core.records import (
    AUTO_ANNOTATOR,
    RELEASE_SCHEMA_VERSION,
    AutoThreshold,
    DecisionWithdrawal,
    FactorAssignment,
    FactorDecision,
    MeasurementWithdrawal,
    PoleSupport,
    Release,
    Selection,
    ToolInfo,
    VideoAssignment,
    VideoInfo,
    VideoMarks,
    VideoRecord,
)
from vadscene.release import diff as release_diff
from vadscene.release import tables as release_tables
from vadscene.store.database import Decision, ImportCounts
from vadscene.store.workspace import Workspace, discard_incomplete

SCHEMA_FILE_NAME = f"release-v{RELEASE_SCHEMA_VERSION}.schema.json"

Progress = Callable[[int, int], None]
"""``progress(done, total)``: called as work advances, ``done`` rising to ``total`` (last call
``done == total``); what is counted is the function's to say."""


def _ticker(progress: Progress | None, total: int) -> Callable[[int], None]:
    """``tick(done)`` passing on to ``progress`` about 200 of the ``total`` steps and the last
    (a call per video would cost more than drawing the bar is worth)."""
    stride = max(1, total // 200)

    def tick(done: int) -> None:
        if progress is not None and (done % stride == 0 or done == total):
            progress(done, total)

    return tick


# --- building a release ---------------------------------------------------------------------


def pole_support(catalogue: Catalogue, videos: Iterable[VideoRecord]) -> tuple[PoleSupport, ...]:
    """Videos per pole of every contrast, with ambiguous and unresolved counted apart."""
    videos = list(videos)
    rows = []
    for factor in catalogue.factors:
        values = [v.factors[factor.key].value if factor.key in v.factors else None for v in videos]
        for contrast in factor.contrasts:
            rows.append(
                PoleSupport(
                    factor=factor.key,
                    positive=contrast.positive,
                    negative=contrast.negative,
                    primary=contrast.primary,
                    n_positive=values.count(contrast.positive),
                    n_negative=values.count(contrast.negative),
                    n_ambiguous=values.count(AMBIGUOUS),
                    n_unresolved=values.count(None),
                )
            )
    return tuple(rows)


def build_release(
    workspace: Workspace,
    *,
    annotator: str | None = None,
    created_at: datetime | None = None,
    progress: Progress | None = None,
) -> Release:
    """The release of a workspace's current state.

    With ``annotator``, values come from that annotator's decisions (plus auto poles); without,
    from everyone's (consensus mode, see :func:`resolve_assignment`). ``progress`` counts the
    videos whose record is made.
    """
    store = workspace.store
    videos = store.videos()
    if not videos:
        raise ReleaseError(f"{workspace.root}: the workspace has no videos; nothing to release")
    if annotator is not None and annotator not in store.annotators():
        raise ReleaseError(
            f"{workspace.root}: annotator '{annotator}' has no decisions "
            f"(annotators: {', '.join(store.annotators()) or 'none yet'})"
        )
    thresholds = _finite_thresholds(workspace)
    keep = {annotator, AUTO_ANNOTATOR} if annotator else None
    by_video: dict[str, dict[str, list[FactorDecision]]] = {}
    withdrawn: dict[str, list[DecisionWithdrawal]] = {}
    for d in store.current_decisions():
        if keep is not None and d.annotator not in keep:
            continue
        if d.value is None:
            withdrawn.setdefault(d.video_id, []).append(
                DecisionWithdrawal.model_validate(
                    {
                        "factor": d.factor,
                        "annotator": d.annotator,
                        "source": d.source,
                        "withdrawn_at": d.decided_at,
                    }
                )
            )
            continue
        by_video.setdefault(d.video_id, {}).setdefault(d.factor, []).append(_released(d))
    marks: dict[str, list[VideoMarks]] = {}
    for (video_id, who), m in sorted(store.marks_with_times().items()):
        if keep is None or who in keep:
            marks.setdefault(video_id, []).append(
                VideoMarks.model_validate(
                    {
                        "annotator": who,
                        "flagged": m["flag"][0],
                        "flagged_at": m["flag"][1],
                        "skipped": m["skip"][0],
                        "skipped_at": m["skip"][1],
                        "note": m["note"][0],
                        "note_at": m["note"][1],
                    }
                )
            )
    measurements = store.measurements()
    no_value = store.measurement_withdrawals()
    assigned: dict[str, list[VideoAssignment]] = {}
    for row in store.assignment_rows():
        if keep is None or row.annotator in keep:
            assigned.setdefault(row.video_id, []).append(
                VideoAssignment.model_validate(
                    {
                        "annotator": row.annotator,
                        "assigned": row.assigned,
                        "assigned_at": row.assigned_at,
                        "assigned_by": row.assigned_by,
                    }
                )
            )
    records = []
    tick = _ticker(progress, len(videos))
    tick(0)
    for video in videos:
        decided = by_video.get(video.video_id, {})
        records.append(
            VideoRecord(
                **video.model_dump(),
                factors={
                    key: resolve_assignment(decided[key])
                    for key in workspace.catalogue.keys
                    if key in decided
                },
                measurements=measurements.get(video.video_id, {}),
                marks=tuple(marks.get(video.video_id, ())),
                withdrawn_decisions=tuple(
                    sorted(withdrawn.get(video.video_id, ()), key=lambda w: (w.factor, w.annotator))
                ),
                withdrawn_measurements=tuple(
                    MeasurementWithdrawal.model_validate({"statistic": s, "withdrawn_at": at})
                    for s, at in sorted(no_value.get(video.video_id, {}).items())
                ),
                assignments=tuple(assigned.get(video.video_id, ())),
            )
        )
        tick(len(records))
    release = Release(
        schema_version=RELEASE_SCHEMA_VERSION,
        dataset=workspace.config.dataset,
        created_at=created_at or now(),
        tool=ToolInfo(version=__version__),
        selection=Selection(mode="annotator" if annotator else "consensus", annotator=annotator),
        catalogue=workspace.catalogue,
        annotators=_annotators(records),
        thresholds=thresholds,
        videos=tuple(records),
        support=pole_support(workspace.catalogue, records),
    )
    latest = max((at for _path, at in _times(release)), default=release.created_at)
    if created_at is None and latest > release.created_at:
        # a colleague's clock ahead of ours (within the store's allowance) dated a value later
        return release.model_copy(update={"created_at": latest})
    return release


def _finite_thresholds(workspace: Workspace) -> tuple[AutoThreshold, ...]:
    """The stored threshold rules, refusing a non-finite threshold with the command that fixes it.

    Older versions accepted ``thresholds … --value nan``; such a row cannot be released (a
    release's thresholds are finite numbers) and its poles are not meaningful, so export stops
    and names the factor rather than dropping the rule from the release unnoticed.
    """
    stored = workspace.store.thresholds()
    for factor, _statistic, _rule, values, _at in stored:
        if not all(math.isfinite(v) for v in values):
            auto = next((f.auto for f in workspace.catalogue.factors if f.key == factor), None)
            rule = auto.rule if auto is not None and auto.rule != "explicit" else "median"
            raise ReleaseError(
                f"{workspace.store.path}: factor '{factor}' has a stored threshold that is not "
                "a finite number (an older vadscene accepted --value nan); nothing was exported. "
                f"Set its rule again, e.g. `vadscene thresholds {workspace.root} {factor} "
                f"--rule {rule}` (or --rule explicit --value X), then export"
            )
    return tuple(
        AutoThreshold.model_validate(
            {"factor": f, "statistic": s, "rule": r, "thresholds": tuple(t), "set_at": at}
        )
        for f, s, r, t, at in stored
    )


def _released(d: Decision) -> FactorDecision:
    """A stored decision as a release record (its time, stored as text, parsed)."""
    return FactorDecision.model_validate(
        {
            "annotator": d.annotator,
            "value": d.value,
            "source": d.source,
            "decided_at": d.decided_at,
            "note": d.note,
            "replaced_auto_value": d.replaced_auto_value,
            "replaced_measurement": d.replaced_measurement,
        }
    )


def _annotators(records: Iterable[VideoRecord]) -> tuple[str, ...]:
    names: set[str] = set()
    for record in records:
        names.update(m.annotator for m in record.marks)
        names.update(w.annotator for w in record.withdrawn_decisions if w.source != "auto")
        names.update(a.annotator for a in record.assignments)
        for assignment in record.factors.values():
            names.update(d.annotator for d in assignment.decisions if d.source != "auto")
    return tuple(sorted(names))


# --- writing --------------------------------------------------------------------------------


def release_json_schema() -> dict[str, Any]:
    """The JSON Schema of the release format, generated from the pydantic models."""
    schema = Release.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://vadscene.dev/schemas/{SCHEMA_FILE_NAME}"
    return schema


def shipped_schema_path() -> Path:
    """The schema file shipped inside the package (kept equal to the generated one by a test)."""
    return Path(str(resources.files("vadscene.release") / "schemas" / SCHEMA_FILE_NAME))


def release_json(release: Release) -> str:
    return release.model_dump_json(indent=2) + "\n"


def write_release(
    release: Release,
    out: Path | str,
    *,
    csv_path: Path | str | None = None,
    parquet_path: Path | str | None = None,
    progress: Progress | None = None,
) -> Path:
    """Write the release JSON (and CSV, and Parquet) and the JSON Schema beside it, together
    or not at all.

    :func:`vadscene.core.files.replace_together`: each file goes to a temporary file in its folder,
    is synced and renamed over the target, with the umask's permissions; a reader never sees
    a half-written release, nor a new JSON beside an old CSV. The CSV and the Parquet file
    hold the same table (:mod:`vadscene.release.tables`). ``progress`` counts the files
    rendered and then their writing as one step. Returns the schema path.
    """
    out = Path(out)
    schema_path = out.parent / SCHEMA_FILE_NAME
    renderers: list[tuple[Path, Callable[[], str | bytes]]] = [
        (out, lambda: release_json(release)),
        (schema_path, lambda: json.dumps(release_json_schema(), indent=2) + "\n"),
    ]
    if csv_path is not None:
        renderers.append((Path(csv_path), lambda: release_csv(release)))
    if parquet_path is not None:
        renderers.append((Path(parquet_path), lambda: release_tables.release_parquet(release)))
    for path, _ in renderers:
        _check_output_path(path)
    steps = len(renderers) + 1
    files: list[tuple[Path, str | bytes]] = []
    for path, render in renderers:
        if progress is not None:
            progress(len(files), steps)
        files.append((path, render()))
    if progress is not None:
        progress(len(files), steps)
    replace_together(files)
    if progress is not None:
        progress(steps, steps)
    return schema_path


def release_csv(release: Release) -> str:
    """The export CSV (see :mod:`vadscene.release.tables`: resolved values, how each was
    resolved, measurements; cells escaped against spreadsheet formulas)."""
    return release_tables.release_csv(release)


def _check_output_path(path: Path) -> None:
    if not path.parent.is_dir():
        raise ReleaseError(f"{path}: folder {path.parent} does not exist")
    if path.is_dir():
        raise ReleaseError(f"{path} is a folder; give a file name, e.g. {path / path.name}.json")


# --- reading and validating -----------------------------------------------------------------


def parse_release(
    data: Any, *, origin: str = "release", progress: Progress | None = None
) -> Release:
    """Validate parsed JSON as a release: structure (pydantic) then meaning
    (:func:`semantic_problems`, whose video checks ``progress`` counts).

    A version 1 release (before marks carried times) is read as version 2 with each set mark
    dated at the release's ``created_at``, the latest time it can have been set: merged, it
    wins over a local mark only when that is older than the release itself.

    Raises :class:`ReleaseError` whose ``problems`` list every error with its JSON path.
    """
    if isinstance(data, dict) and data.get("schema_version") == 1:
        data = _from_version_1(data)
    if isinstance(data, dict) and "schema_version" in data:
        version = data["schema_version"]
        if version != RELEASE_SCHEMA_VERSION:
            raise ReleaseError(
                f"{origin}: invalid release",
                [
                    "$.schema_version: unsupported release schema version "
                    # a version number is shown; any other value may be text from any file
                    + (f"{version} " if type(version) is int else "")
                    + f"(this vadscene reads versions 1 and {RELEASE_SCHEMA_VERSION})"
                ],
            )
    try:
        release = Release.model_validate(data)
    except ValidationError as exc:
        raise ReleaseError(f"{origin}: invalid release", validation_problems(exc)) from None
    found = semantic_problems(release, progress=progress)
    if found:
        raise ReleaseError(f"{origin}: invalid release", found)
    return release


def _from_version_1(data: dict[str, Any]) -> dict[str, Any]:
    """A version 1 release's data as version 2 (see :func:`parse_release`); data that is not
    shaped like a release is passed on for validation to report."""
    videos = data.get("videos")
    if not isinstance(videos, list):
        return {**data, "schema_version": 2}
    created_at = data.get("created_at")
    upgraded = []
    for video in videos:
        if isinstance(video, dict) and isinstance(video.get("marks"), list):
            marks = []
            for mark in video["marks"]:
                if isinstance(mark, dict):
                    mark = dict(mark)
                    for kind, at in (("flagged", "flagged_at"), ("skipped", "skipped_at")):
                        if mark.get(kind):
                            mark[at] = created_at
                    if mark.get("note") is not None:
                        mark["note_at"] = created_at
                marks.append(mark)
            video = {**video, "marks": marks}
        upgraded.append(video)
    return {**data, "schema_version": 2, "videos": upgraded}


def read_release(path: Path | str, *, progress: Progress | None = None) -> Release:
    """Read and validate a release file; ``progress`` counts the videos checked, which starts
    once the JSON is parsed and its structure validated."""
    path = Path(path)
    if not path.is_file():
        raise ReleaseError(f"{path}: release file not found")
    try:
        data = jsonio.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ReleaseError(f"{path}: not valid JSON ({parse_failure(exc)})") from None
    except RecursionError:
        raise ReleaseError(
            f"{path}: JSON nested too deeply to read (a release is at most a few levels deep)"
        ) from None
    return parse_release(data, origin=str(path), progress=progress)


def semantic_problems(release: Release, *, progress: Progress | None = None) -> list[str]:
    """Everything a structurally valid release can still get wrong, each with its JSON path;
    ``progress`` counts the videos checked."""
    catalogue = release.catalogue
    found: list[str] = []
    first_seen: dict[str, int] = {}
    tick = _ticker(progress, len(release.videos))
    for i, video in enumerate(release.videos):
        tick(i)
        where = f"$.videos[{i}]"
        if video.video_id in first_seen:
            found.append(
                f"{where}.video_id: duplicate video id '{video.video_id}' "
                f"(also $.videos[{first_seen[video.video_id]}])"
            )
        first_seen.setdefault(video.video_id, i)
        if i and video.video_id < release.videos[i - 1].video_id:
            found.append(
                f"{where}.video_id: '{video.video_id}' comes after "
                f"'{release.videos[i - 1].video_id}'; videos are sorted by video_id"
            )
        for key, assignment in video.factors.items():
            found.extend(_assignment_problems(catalogue, f"{where}.factors.{key}", key, assignment))
        found.extend(_marks_problems(f"{where}.marks", video.marks))
        found.extend(_withdrawal_problems(catalogue, where, video))
    tick(len(release.videos))
    found.extend(_threshold_order_problems(release.thresholds))
    for i, threshold in enumerate(release.thresholds):
        found.extend(
            f"$.thresholds[{i}]: {problem}"
            for problem in threshold_rule_problems(
                catalogue,
                threshold.factor,
                threshold.statistic,
                threshold.rule,
                threshold.thresholds,
            )
        )
    found.extend(_time_problems(release))
    selection = release.selection
    if (selection.mode == "annotator") != (selection.annotator is not None):
        found.append("$.selection: an annotator is given exactly when mode is 'annotator'")
    if selection.mode == "annotator" and selection.annotator is not None:
        others = sorted(set(_annotators(release.videos)) - {selection.annotator})
        if others:
            found.append(
                f"$.selection.annotator: a release of '{selection.annotator}' holds only their "
                f"decisions and marks (and auto poles), but it has some by {', '.join(others)}"
            )
        elif selection.annotator not in _annotators(release.videos):
            found.append(
                f"$.selection.annotator: a release of '{selection.annotator}' holds none of "
                "their decisions or marks"
            )
    expected_annotators = _annotators(release.videos)
    if release.annotators != expected_annotators:
        found.append(
            f"$.annotators: {list(release.annotators)} does not match the annotators in the "
            f"records {list(expected_annotators)}"
        )
    if not found:
        expected_support = pole_support(catalogue, release.videos)
        for i, (given, counted) in enumerate(zip(release.support, expected_support, strict=False)):
            if given != counted:
                found.append(
                    f"$.support[{i}]: {given.factor} {given.positive}/{given.negative} says "
                    f"{given.n_positive}/{given.n_negative}/{given.n_ambiguous}/"
                    f"{given.n_unresolved} but the records give {counted.n_positive}/"
                    f"{counted.n_negative}/{counted.n_ambiguous}/{counted.n_unresolved}"
                )
        if len(release.support) != len(expected_support):
            found.append(
                f"$.support: {len(release.support)} rows, the catalogue's contrasts need "
                f"{len(expected_support)}"
            )
    return found


def _assignment_problems(
    catalogue: Catalogue, where: str, key: str, assignment: FactorAssignment
) -> list[str]:
    if key not in catalogue.keys:
        return [f"{where}: unknown factor '{key}' (catalogue has: {', '.join(catalogue.keys)})"]
    factor = catalogue.factor(key)
    expected = ", ".join([*factor.values, AMBIGUOUS])
    found = []
    if assignment.value is not None and not factor.allows(assignment.value):
        found.append(
            f"{where}.value: '{assignment.value}' is not a value of factor '{key}' "
            f"(expected one of: {expected})"
        )
    annotators = [d.annotator for d in assignment.decisions]
    if len(set(annotators)) != len(annotators):
        found.append(f"{where}.decisions: an annotator appears more than once")
    elif annotators != sorted(annotators):
        found.append(f"{where}.decisions: not sorted by annotator ({', '.join(annotators)})")
    for j, d in enumerate(assignment.decisions):
        if not d.annotator.strip():
            found.append(f"{where}.decisions[{j}].annotator: the annotator name is blank")
        if not factor.allows(d.value):
            found.append(
                f"{where}.decisions[{j}].value: '{d.value}' is not a value of factor '{key}' "
                f"(expected one of: {expected})"
            )
        found.extend(
            _source_problems(
                f"{where}.decisions[{j}]",
                factor,
                d.annotator,
                d.source,
                "decision on it is an 'override' (with the auto pole it replaced)",
            )
        )
    if not found:
        resolved = resolve_assignment(assignment.decisions)
        if (resolved.value, resolved.resolution) != (assignment.value, assignment.resolution):
            found.append(
                f"{where}: value {assignment.value!r} ({assignment.resolution}) does not follow "
                f"from its decisions, which give {resolved.value!r} ({resolved.resolution})"
            )
    return found


def _time_problems(release: Release) -> list[str]:
    """Every time no later than the release's ``created_at``, and that no later than this
    clock plus :data:`~vadscene.core.instants.CLOCK_SKEW`: a value from the future would stay
    current over every later change of whoever merges it."""
    limit = now() + CLOCK_SKEW
    if release.created_at > limit:
        return [
            f"$.created_at: {canonical(release.created_at)} is later than this clock "
            f"({canonical(now())}) plus {int(CLOCK_SKEW.total_seconds() // 60)} min"
        ]
    found = []
    created = canonical(release.created_at)
    for path, instant in _times(release):
        if instant > release.created_at:
            found.append(
                f"{path}: {canonical(instant)} is later than the release's created_at "
                f"({created}); a time from the future would stay current over every later "
                "change"
            )
    return found


def _times(release: Release) -> Iterator[tuple[str, datetime]]:
    """(JSON path, instant) of every time a release carries, ``created_at`` aside."""
    for i, threshold in enumerate(release.thresholds):
        yield f"$.thresholds[{i}].set_at", threshold.set_at
    for i, video in enumerate(release.videos):
        where = f"$.videos[{i}]"
        for key, assignment in video.factors.items():
            for j, d in enumerate(assignment.decisions):
                yield f"{where}.factors.{key}.decisions[{j}].decided_at", d.decided_at
        for statistic, m in video.measurements.items():
            yield f"{where}.measurements.{statistic}.measured_at", m.measured_at
        for j, mark in enumerate(video.marks):
            for name in ("flagged_at", "skipped_at", "note_at"):
                at = getattr(mark, name)
                if at is not None:
                    yield f"{where}.marks[{j}].{name}", at
        for j, w in enumerate(video.withdrawn_decisions):
            yield f"{where}.withdrawn_decisions[{j}].withdrawn_at", w.withdrawn_at
        for j, wm in enumerate(video.withdrawn_measurements):
            yield f"{where}.withdrawn_measurements[{j}].withdrawn_at", wm.withdrawn_at
        for j, a in enumerate(video.assignments):
            yield f"{where}.assignments[{j}].assigned_at", a.assigned_at


def _withdrawal_problems(catalogue: Catalogue, where: str, video: VideoRecord) -> list[str]:
    """Withdrawals of known factors, sorted and unique, none contradicting a current value."""
    found = []
    keys = [(w.factor, w.annotator) for w in video.withdrawn_decisions]
    if len(set(keys)) != len(keys):
        found.append(f"{where}.withdrawn_decisions: a factor is withdrawn twice by one annotator")
    elif keys != sorted(keys):
        found.append(f"{where}.withdrawn_decisions: not sorted by factor, then annotator")
    for j, w in enumerate(video.withdrawn_decisions):
        path = f"{where}.withdrawn_decisions[{j}]"
        if w.factor not in catalogue.keys:
            found.append(f"{path}.factor: unknown factor '{w.factor}'")
            continue
        decided = video.factors.get(w.factor)
        if decided is not None and any(d.annotator == w.annotator for d in decided.decisions):
            found.append(
                f"{path}: '{w.annotator}' both decided and withdrew '{w.factor}'; a release "
                "holds each annotator's current state only"
            )
        factor = catalogue.factor(w.factor)
        if not w.annotator.strip():
            found.append(f"{path}.annotator: the annotator name is blank")
        found.extend(
            _source_problems(
                path, factor, w.annotator, w.source, "withdrawal on it is an 'override'"
            )
        )
    statistics = [w.statistic for w in video.withdrawn_measurements]
    if statistics != sorted(set(statistics)):
        found.append(f"{where}.withdrawn_measurements: not sorted, or a statistic twice")
    names = [a.annotator for a in video.assignments]
    if names != sorted(set(names)):
        found.append(f"{where}.assignments: not sorted by annotator, or an annotator twice")
    for j, a in enumerate(video.assignments):
        if not a.annotator.strip() or a.annotator == AUTO_ANNOTATOR:
            found.append(f"{where}.assignments[{j}].annotator: not a person's name")
    for j, wm in enumerate(video.withdrawn_measurements):
        if wm.statistic in video.measurements:
            found.append(
                f"{where}.withdrawn_measurements[{j}]: '{wm.statistic}' has a value in "
                "measurements too"
            )
    return found


def _source_problems(
    path: str, factor: Factor, annotator: str, source: str, on_measured: str
) -> list[str]:
    """A decision's or withdrawal's source against its annotator and its factor's source:
    ``auto`` only from the measurement, a person on a measured factor an ``override``."""
    found = []
    if (annotator == AUTO_ANNOTATOR) != (source == "auto"):
        found.append(f"{path}: annotator '{AUTO_ANNOTATOR}' goes with source 'auto' only")
    if source in ("auto", "override") and factor.source != "auto":
        found.append(f"{path}.source: '{factor.key}' is a manual factor")
    if source == "manual" and factor.source == "auto":
        found.append(
            f"{path}.source: '{factor.key}' is measured; a person's {on_measured}, not 'manual'"
        )
    return found


def _marks_problems(where: str, marks: tuple[VideoMarks, ...]) -> list[str]:
    """One mark per annotator, sorted, each setting or withdrawing a flag, skip or note."""
    found = []
    names = [m.annotator for m in marks]
    if len(set(names)) != len(names):
        found.append(f"{where}: an annotator has more than one mark; merge them into one")
    elif names != sorted(names):
        found.append(f"{where}: not sorted by annotator ({', '.join(names)})")
    for j, mark in enumerate(marks):
        if not mark.annotator.strip():
            found.append(f"{where}[{j}].annotator: the annotator name is blank")
        if mark.note == "":  # the store keeps no empty notes
            found.append(f"{where}[{j}].note: an empty note; use null for no note")
        elif not (mark.flagged_at or mark.skipped_at or mark.note_at):
            found.append(
                f"{where}[{j}]: says nothing (no flag, skip or note was ever set or withdrawn)"
            )
    return found


def _threshold_order_problems(thresholds: tuple[AutoThreshold, ...]) -> list[str]:
    """One rule per auto factor, sorted by factor."""
    found = []
    seen: dict[str, int] = {}
    for i, threshold in enumerate(thresholds):
        if threshold.factor in seen:
            found.append(
                f"$.thresholds[{i}].factor: a second rule for '{threshold.factor}' "
                f"(also $.thresholds[{seen[threshold.factor]}]); one rule per factor"
            )
        elif i and threshold.factor < thresholds[i - 1].factor:
            found.append(
                f"$.thresholds[{i}].factor: '{threshold.factor}' comes after "
                f"'{thresholds[i - 1].factor}'; thresholds are sorted by factor"
            )
        seen.setdefault(threshold.factor, i)
    return found


# --- importing ------------------------------------------------------------------------------


def catalogue_differences(ours: Catalogue, theirs: Catalogue) -> list[str]:
    """Differences that change what values mean (keys, values, contrasts, source)."""
    found = []
    if ours.keys != theirs.keys:
        missing = [k for k in theirs.keys if k not in ours.keys]
        extra = [k for k in ours.keys if k not in theirs.keys]
        if missing:
            found.append(f"factors only in the release: {', '.join(missing)}")
        if extra:
            found.append(f"factors only in the workspace: {', '.join(extra)}")
        if not missing and not extra:
            found.append("the factors are in a different order")
    for key in (k for k in theirs.keys if k in ours.keys):
        a, b = ours.factor(key), theirs.factor(key)
        for name in ("values", "contrasts", "source", "auto"):
            if getattr(a, name) != getattr(b, name):
                found.append(
                    f"factor '{key}': {name} differ ({getattr(a, name)} vs {getattr(b, name)})"
                )
    return found


def import_release(
    release: Release,
    workspace: Workspace,
    *,
    origin: str = "release",
    progress: Progress | None = None,
) -> ImportCounts:
    """Merge a validated release into a workspace in one transaction (all or nothing).

    The catalogues must agree on keys, values, contrasts and sources. In a workspace with
    video files every released video must already be registered; a workspace without video
    files (one made from a release) registers the released videos. ``progress`` counts the
    rows merged (:meth:`~vadscene.store.database.AnnotationStore.import_rows`).
    """
    differences = catalogue_differences(workspace.catalogue, release.catalogue)
    if differences:
        raise ReleaseError(
            f"{origin}: its catalogue differs from the workspace's ({workspace.root})",
            differences,
        )
    registered = set(workspace.store.video_ids())
    unknown = [v.video_id for v in release.videos if v.video_id not in registered]
    if unknown and workspace.video_root is not None:
        raise ReleaseError(
            f"{origin}: {len(unknown)} released videos are not registered in {workspace.root}",
            unknown[:20] + ([f"… and {len(unknown) - 20} more"] if len(unknown) > 20 else []),
        )
    new_ids = set(unknown)  # a set: membership in the list made this quadratic in the videos
    new_videos = [
        VideoInfo(**v.model_dump(include=set(VideoInfo.model_fields)))
        for v in release.videos
        if v.video_id in new_ids
    ]
    return workspace.store.import_rows(
        videos=new_videos,
        decisions=[
            (v.video_id, key, d)
            for v in release.videos
            for key, assignment in v.factors.items()
            for d in assignment.decisions
        ],
        marks=[(v.video_id, m) for v in release.videos for m in v.marks],
        measurements=[
            (v.video_id, statistic, m)
            for v in release.videos
            for statistic, m in v.measurements.items()
        ],
        thresholds=release.thresholds,
        withdrawn_decisions=[
            (v.video_id, w) for v in release.videos for w in v.withdrawn_decisions
        ],
        withdrawn_measurements=[
            (v.video_id, w) for v in release.videos for w in v.withdrawn_measurements
        ],
        assignments=[(v.video_id, a) for v in release.videos for a in v.assignments],
        progress=progress,
    )


def workspace_from_release(
    release: Release, root: Path | str, *, progress: Progress | None = None
) -> Workspace:
    """A new workspace (without video files) holding exactly what the release holds
    (``progress`` as in :func:`import_release`).

    ``root`` must be a new or empty folder. All or nothing: the workspace's configuration is
    written only after the import, and if anything fails what this call created is removed
    again; a killed import leaves no folder that looks like a workspace, and the next import
    into it starts afresh (:meth:`Workspace.create`).
    """
    root = Path(root)
    discard_incomplete(root)
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise ReleaseError(
            f"{root}: not a vadscene workspace and not empty; import into a workspace or a new "
            "folder"
        )
    with tempfile.TemporaryDirectory() as scratch:
        catalogue_file = Path(scratch) / "catalogue.json"
        catalogue_file.write_text(release.catalogue.model_dump_json(), encoding="utf-8")
        return Workspace.create(
            root,
            video_root=None,
            dataset=release.dataset,
            catalogue_path=catalogue_file,
            populate=lambda workspace: import_release(release, workspace, progress=progress),
        )


# Tables of a release (new module, so this file's import/merge code stays apart).
to_dataframe = release_tables.to_dataframe
diff_releases = release_diff.diff_releases
