"""Release fuzzing: Hypothesis generates releases, and :func:`check_release_import` states
the import property.

:func:`release_inputs` draws valid random releases (consistent support and resolutions,
computed with :func:`vadscene.release.releases.pole_support` and
:func:`vadscene.annotate.consensus.resolve_assignment`) and mutations of valid ones, each to be
imported into a new folder or merged into a copy of the template workspace. The property:
importing either succeeds or raises a :class:`VadsceneError` and leaves no partial write. An
import into a new folder re-exports the same release; a merge makes current, for every piece
of state, the newer of the workspace's value and the release's (:func:`expected_merge`), and
a second merge adds nothing. ``tests/release/test_fuzz_release.py`` runs it on 1000 examples,
and the reliability figures of docs/reliability.md (:mod:`support.figures`) count its outcomes.
"""

from __future__ import annotations

import atexit
import copy
import json
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from functools import cache
from pathlib import Path
from typing import Any, Literal, TypeVar

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support.examples import BAD, GOOD, NORMAL, annotate_example, registry_workspace, write_json
from support.snapshots import snapshot_store, store_changes
from vadscene import __version__
from vadscene.annotate.consensus import resolve_assignment
from vadscene.core.catalogue import AMBIGUOUS, Catalogue, Factor, ThresholdRule
from vadscene.core.errors import VadsceneError
from vadscene.core.records import (
    AUTO_ANNOTATOR,
    AutoThreshold,
    DecisionSource,
    DecisionWithdrawal,
    FactorAssignment,
    FactorDecision,
    Measurement,
    MeasurementWithdrawal,
    Release,
    Selection,
    ToolInfo,
    VideoAssignment,
    VideoMarks,
    VideoRecord,
)
from vadscene.release.releases import (
    build_release,
    import_release,
    parse_release,
    pole_support,
    read_release,
    release_json,
    workspace_from_release,
)
from vadscene.store.database import AnnotationStore, ImportCounts
from vadscene.store.workspace import STORE_NAME, Workspace

SQLITE_INT = (-(2**63), 2**63 - 1)
HUMANS = ("ana", "ben", "carla")
T = TypeVar("T")
TEMPLATE_VIDEOS = (GOOD, BAD, NORMAL)
TEMPLATE_FACTORS = ("color", "crowd", "resolution", "setting", "motion")
"""The factors the template's merge workspaces hold state on (decisions, rules)."""

TEMPLATE_AT = datetime(2013, 6, 15, 12, tzinfo=UTC)
"""The time of everything in the template release. Generated times (2000–2025) fall on both
sides of it, so a merge into the template's workspace meets older and newer values."""
DIVERGED_AT = datetime(2016, 3, 1, 8, 30, tzinfo=UTC)
"""The time of what the template's merge workspaces hold beyond the template release
(:func:`_diverge`): withdrawals, a newer measurement, a second rule."""


Target = Literal["new", "merge", "merge-with-videos"]
TARGETS: tuple[Target, ...] = ("new", "merge", "merge-with-videos")
"""Where a generated release is imported: a new folder (:func:`workspace_from_release`), or
merged (:func:`import_release`) into a copy of the template's workspace without video files
(which registers new videos) or with a video folder (which refuses unregistered videos)."""


@dataclass(frozen=True)
class ReleaseInput:
    """One generated import: release JSON, whether it was built valid, and where it goes."""

    data: Any
    valid: bool
    target: Target


@dataclass(frozen=True)
class Template:
    """The release every mutation starts from, and closed workspaces holding it and what
    :func:`_diverge` adds (by target)."""

    data: dict[str, Any]
    catalogue: Catalogue
    workspaces: dict[str, Path]


_TIME_FIELDS = frozenset(
    {
        "created_at",
        "decided_at",
        "measured_at",
        "set_at",
        "withdrawn_at",
        "flagged_at",
        "skipped_at",
        "note_at",
        "assigned_at",
    }
)


def _redated(node: Any, at: str) -> Any:
    """A release's JSON with every time (``created_at`` too) replaced by ``at``."""
    if isinstance(node, list):
        return [_redated(child, at) for child in node]
    if isinstance(node, dict):
        return {
            key: at if key in _TIME_FIELDS and child is not None else _redated(child, at)
            for key, child in node.items()
        }
    return node


def _diverge(store: AnnotationStore) -> None:
    """What a merge workspace holds beyond the template release, all at :data:`DIVERGED_AT`:
    ana cleared her crowd decision on NORMAL, ben his note on BAD, carla removed a flag from
    GOOD; GOOD was measured again (the same sharpness, and motion found to have no value);
    the motion rule was set; BAD moved from ana to ben. A merge then meets withdrawals as well
    as values."""
    at = DIVERGED_AT
    for name in ("ana", "ben"):
        store.register_annotator(name)
    store.record_assignments([(BAD, "ana", False), (BAD, "ben", True)], at=at)
    store.record_decision(NORMAL, "crowd", None, annotator="ana", decided_at=at)
    store.set_mark(BAD, "note", None, annotator="ben", marked_at=at)
    store.set_mark(GOOD, "flag", False, annotator="carla", marked_at=at)
    sharpness = store.measurements()[GOOD]["sharpness"]
    store.record_video_measurements(
        GOOD, {"sharpness": sharpness.model_copy(update={"measured_at": at})}, undefined=["motion"]
    )
    store.set_threshold("motion", "motion", "terciles", [1.0, 2.0], set_at=at)


@cache
def template() -> Template:
    """Built once per process (in a temporary folder removed at exit); every time of the
    release is :data:`TEMPLATE_AT`."""
    folder = Path(tempfile.mkdtemp(prefix="vadscene-template-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    root = registry_workspace(folder, {GOOD: 30, BAD: 20, NORMAL: 25}, name="source")
    with Workspace.open(root) as workspace:
        annotate_example(workspace.store)
        workspace.store.register_annotator("ana")
        workspace.store.record_assignments([(GOOD, "ana", True), (BAD, "ana", True)])
        built = build_release(workspace)
    # the example is recorded now; generated times must fall on both sides of its times
    data = _redated(json.loads(release_json(built)), TEMPLATE_AT.isoformat())
    release = parse_release(data, origin="template")
    with workspace_from_release(release, folder / "merge") as workspace:
        _diverge(workspace.store)
    ids = {v.video_id: v.num_frames for v in release.videos}
    root = registry_workspace(folder, ids, with_video_folder=True, name="merge-with-videos")
    with Workspace.open(root) as workspace:
        import_release(release, workspace)
        _diverge(workspace.store)
    workspaces = {target: folder / target for target in TARGETS[1:]}
    return Template(json.loads(release_json(release)), release.catalogue, workspaces)


# Strategies for the pieces of a release. Texts are any unicode Hypothesis draws (no lone
# surrogates: JSON text read as UTF-8 cannot carry them, and pydantic refuses them).

_texts = st.text(max_size=12)


def _mostly(common: st.SearchStrategy[T], other: st.SearchStrategy[T]) -> st.SearchStrategy[T]:
    """``common`` three times in four, else ``other`` (``st.one_of`` weighs its branches
    alike, and drops a repeated one)."""
    return st.sampled_from([common, common, common, other]).flatmap(lambda chosen: chosen)


_names = _mostly(
    st.sampled_from(HUMANS),
    st.text(min_size=1, max_size=8).filter(lambda s: s.strip() != "" and s != AUTO_ANNOTATOR),
)
"""Annotator names: mostly the template's (a merge meets their state), else any text."""
_statistics = st.sampled_from(["sharpness", "motion"]) | st.text(min_size=1, max_size=8)
_finite = st.floats(allow_nan=False, allow_infinity=False)
_non_negative = st.floats(min_value=0, allow_infinity=False)
_counts = st.integers(0, SQLITE_INT[1])
_zones = st.just(UTC) | st.integers(-(24 * 60 - 1), 24 * 60 - 1).map(
    lambda minutes: timezone(timedelta(minutes=minutes))
)
"""UTC and every whole-minute offset a time may carry (±23:59)."""
_times = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2025, 12, 31, 23, 59, 59), timezones=_zones
)
_ties = st.builds(datetime.astimezone, st.sampled_from([TEMPLATE_AT, DIVERGED_AT]), _zones)
_instants = _mostly(_times, _ties)
"""Times of a valid release: 2000–2025 on the clock of any offset, so at most a day into 2026
in UTC; one in four exactly a template time, however spelled (a tie on merge)."""
_created = st.datetimes(
    min_value=datetime(2026, 1, 3), max_value=datetime(2026, 3, 31), timezones=_zones
)
"""A valid release's ``created_at``: later than every :data:`_instants` time in UTC, and past."""
_aware = st.datetimes(timezones=_zones)
_timestamps = (_aware | st.datetimes()).map(datetime.isoformat)
"""Timestamp text of any year, with and without a time zone (for mutations)."""
_video_ids = _mostly(
    st.sampled_from(TEMPLATE_VIDEOS),
    st.builds(
        "{}{:03d}_x264".format,
        st.sampled_from(["Abuse", "Arson", "Normal_Videos_"]),
        st.integers(0, 999),
    )
    | st.text(min_size=1, max_size=10),
)
"""Mostly the template's videos (a merge meets their state), else plausible others or any
text."""

_THRESHOLD_COUNTS: dict[ThresholdRule, tuple[int, ...]] = {
    "median": (1,),
    "terciles": (2,),
    "explicit": (1, 2),
}
"""How many thresholds each rule gives (the catalogue's rule, restated)."""


@st.composite
def _video_infos(draw: st.DrawFn, video_id: str) -> dict[str, Any]:
    return {
        "video_id": video_id,
        "category": draw(st.text(min_size=1, max_size=10)),
        "split": draw(st.none() | _texts),
        "path": draw(st.none() | _texts),
        "num_frames": draw(_counts),
        "fps": draw(_non_negative),
        "duration_s": draw(_non_negative),
        "width": draw(_counts),
        "height": draw(_counts),
        "codec": draw(_texts),
        "size_bytes": draw(_counts),
        "fingerprint": draw(_texts),
    }


def _factors(catalogue: Catalogue) -> st.SearchStrategy[Factor]:
    """Any factor of the catalogue, one of the template's half the time (a merge meets them)."""
    favoured = [f for f in catalogue.factors if f.key in TEMPLATE_FACTORS]
    return st.sampled_from(favoured) | st.sampled_from(catalogue.factors)


def _human_sources(factor: Factor) -> list[DecisionSource]:
    """The sources a person's decision on ``factor`` is stored with (a person's decision on an
    auto factor is an ``override``; validation refuses ``manual`` there)."""
    return ["manual", "consensus"] if factor.source == "manual" else ["override", "consensus"]


@st.composite
def _decisions(draw: st.DrawFn, factor: Factor, humans: list[str]) -> list[FactorDecision]:
    """Current decisions on one factor: distinct annotators, sources the store keeps as given.

    A manual factor takes ``manual`` and ``consensus``; an auto factor an ``auto`` pole and
    humans' ``override`` and ``consensus``.
    """
    values = st.sampled_from([*factor.values, AMBIGUOUS])
    auto = factor.source == "auto"
    who = draw(st.lists(st.sampled_from(humans), unique=True, min_size=0 if auto else 1))
    decisions = []
    for name in ([AUTO_ANNOTATOR] if auto and (not who or draw(st.booleans())) else []) + who:
        source = "auto" if name == AUTO_ANNOTATOR else draw(st.sampled_from(_human_sources(factor)))
        replaced = source == "override" and draw(st.booleans())
        decisions.append(
            FactorDecision(
                annotator=name,
                value=draw(values),
                source=source,
                decided_at=draw(_instants),
                note=draw(st.none() | _texts),
                replaced_auto_value=draw(st.sampled_from(factor.values)) if replaced else None,
                replaced_measurement=draw(st.none() | _finite) if replaced else None,
            )
        )
    return decisions


@st.composite
def _decision_withdrawals(
    draw: st.DrawFn,
    catalogue: Catalogue,
    humans: list[str],
    factors: dict[str, FactorAssignment],
) -> tuple[DecisionWithdrawal, ...]:
    """Cleared decisions, each by an annotator with no current decision on that factor,
    sorted by (factor, annotator)."""
    found = []
    for factor in draw(st.lists(_factors(catalogue), unique_by=lambda f: f.key, max_size=2)):
        decided = factors[factor.key].decisions if factor.key in factors else ()
        names = ([AUTO_ANNOTATOR] if factor.source == "auto" else []) + humans
        free = [name for name in names if name not in {d.annotator for d in decided}]
        for name in draw(st.lists(st.sampled_from(free), unique=True, max_size=2)) if free else ():
            source = (
                "auto" if name == AUTO_ANNOTATOR else draw(st.sampled_from(_human_sources(factor)))
            )
            found.append(
                DecisionWithdrawal(
                    factor=factor.key, annotator=name, source=source, withdrawn_at=draw(_instants)
                )
            )
    return tuple(sorted(found, key=lambda w: (w.factor, w.annotator)))


_measurements = st.builds(
    Measurement,
    value=_finite,
    params=st.dictionaries(
        _texts, st.none() | st.booleans() | st.integers(*SQLITE_INT) | _finite | _texts, max_size=3
    ),
    decoder=_texts,
    frames_read=_counts,
    seconds=_non_negative,
    measured_at=_instants,
)


@st.composite
def _measurement_withdrawals(
    draw: st.DrawFn, measured: dict[str, Measurement]
) -> tuple[MeasurementWithdrawal, ...]:
    """Statistics measured to have no value (none with a value in ``measured``), sorted."""
    statistics = draw(
        st.lists(_statistics.filter(lambda s: s not in measured), unique=True, max_size=2)
    )
    return tuple(
        MeasurementWithdrawal(statistic=s, withdrawn_at=draw(_instants)) for s in sorted(statistics)
    )


@st.composite
def _assignments(draw: st.DrawFn, humans: list[str]) -> tuple[VideoAssignment, ...]:
    """Who a video is assigned to or was withdrawn from, sorted by annotator."""
    who = sorted(draw(st.lists(st.sampled_from(humans), unique=True, max_size=2)))
    return tuple(
        VideoAssignment(
            annotator=name,
            assigned=draw(st.booleans()),
            assigned_at=draw(_instants),
            assigned_by=draw(st.none() | st.sampled_from(humans)),
        )
        for name in who
    )


MarkState = Literal["never", "set", "withdrawn"]


@st.composite
def _marks(draw: st.DrawFn, annotator: str) -> VideoMarks:
    """Marks that say something: each of flag, skip and note never set, set, or withdrawn (a
    cleared value with the time it was cleared), at least one of them with a time."""
    states: list[MarkState] = ["never", "set", "withdrawn"]
    flag, skip, note = (draw(st.sampled_from(states)) for _ in range(3))
    if flag == skip == note == "never":
        flag = draw(st.sampled_from(states[1:]))
    return VideoMarks(
        annotator=annotator,
        flagged=flag == "set",
        flagged_at=None if flag == "never" else draw(_instants),
        skipped=skip == "set",
        skipped_at=None if skip == "never" else draw(_instants),
        note=draw(st.text(min_size=1, max_size=12)) if note == "set" else None,
        note_at=None if note == "never" else draw(_instants),
    )


@st.composite
def _thresholds(draw: st.DrawFn, catalogue: Catalogue) -> list[AutoThreshold]:
    """Rules for some auto factors, sorted by factor, each with as many increasing finite
    thresholds as it gives, on the statistic the catalogue measures."""
    rules = []
    for key, auto in sorted((f.key, f.auto) for f in catalogue.factors if f.auto):
        if draw(st.booleans()):
            rule = draw(st.sampled_from(sorted(_THRESHOLD_COUNTS)))
            count = draw(st.sampled_from(_THRESHOLD_COUNTS[rule]))
            values = sorted(draw(st.lists(_finite, min_size=count, max_size=count)))
            rules.append(
                AutoThreshold(
                    factor=key,
                    statistic=auto.statistic,
                    rule=rule,
                    thresholds=tuple(values),
                    set_at=draw(_instants),
                )
            )
    return rules


@st.composite
def valid_releases(draw: st.DrawFn, catalogue: Catalogue) -> dict[str, Any]:
    """A random release that is valid and canonical (as ``vadscene export`` writes them).

    Values follow from the decisions (:func:`resolve_assignment`), support from the values
    (:func:`pole_support`); videos are sorted by id, decisions by annotator, withdrawals by
    factor and annotator, withdrawn statistics by name; marks are one per annotator and say
    something; thresholds are one per auto factor, sorted. Every time lies before
    ``created_at``, which lies in the past.
    """
    humans = draw(st.lists(_names, min_size=1, max_size=3, unique=True))
    mode = draw(st.sampled_from(["consensus", "annotator"]))
    chosen = draw(st.sampled_from(humans)) if mode == "annotator" else None
    if chosen is not None:
        humans = [chosen]
    records = []
    for video_id in sorted(draw(st.lists(_video_ids, min_size=1, max_size=4, unique=True))):
        chosen_factors = draw(st.lists(_factors(catalogue), unique_by=lambda f: f.key, max_size=3))
        factors = {
            f.key: resolve_assignment(draw(_decisions(f, humans)))
            for f in catalogue.factors
            if f in chosen_factors
        }
        measurements = draw(st.dictionaries(_statistics, _measurements, max_size=2))
        marks = [
            draw(_marks(name))
            for name in sorted(draw(st.lists(st.sampled_from(humans), unique=True)))
        ]
        records.append(
            VideoRecord(
                **draw(_video_infos(video_id)),
                factors=factors,
                measurements=measurements,
                marks=tuple(marks),
                withdrawn_decisions=draw(_decision_withdrawals(catalogue, humans, factors)),
                withdrawn_measurements=draw(_measurement_withdrawals(measurements)),
                assignments=draw(_assignments(humans)),
            )
        )
    named = {d.annotator for r in records for a in r.factors.values() for d in a.decisions}
    named |= {w.annotator for r in records for w in r.withdrawn_decisions}
    named |= {a.annotator for r in records for a in r.assignments}
    annotators = sorted(
        (named | {m.annotator for r in records for m in r.marks}) - {AUTO_ANNOTATOR}
    )
    if chosen is not None and chosen not in annotators:
        first = records[0]
        flag = VideoMarks(annotator=chosen, flagged=True, flagged_at=draw(_instants))
        records[0] = first.model_copy(update={"marks": (flag,)})
        annotators = [chosen]
    release = Release(
        schema_version=2,
        dataset=draw(st.text(min_size=1, max_size=10)),
        created_at=draw(_created),
        tool=ToolInfo(version=__version__),
        selection=Selection(mode=mode, annotator=chosen),
        catalogue=catalogue,
        annotators=tuple(annotators),
        thresholds=tuple(draw(_thresholds(catalogue))),
        videos=tuple(records),
        support=pole_support(catalogue, records),
    )
    return json.loads(release_json(release))


def _vocabulary(catalogue: Catalogue) -> list[Any]:
    """Words a release uses, so mutations often stay plausible (and get past the parser)."""
    words: list[Any] = [AMBIGUOUS, AUTO_ANNOTATOR, *HUMANS, GOOD, BAD, NORMAL, "", " "]
    words += ["manual", "auto", "override", "consensus", "annotator"]
    words += ["agreement", "single", "disagreement", "median", "terciles", "explicit"]
    words += ["2026-01-02T00:00:00Z", "2026-01-02T00:00:00", "2026-13-02T00:00:00Z", "yesterday"]
    # a future time, a template time spelled with the widest offsets, one before year 1 in UTC
    words += ["2999-01-01T00:00:00+00:00", "2013-06-16T11:59:00+23:59"]
    words += ["2013-06-14T12:01:00-23:59", "0001-01-01T00:00:00+23:59"]
    words += ["sharpness", "motion", [0.5], [1.0, 0.5], [0.5, 1.0, 2.0]]
    words += [0, -1, 1, 2, 2**63, 0.5, -0.5, True, False, None, [], {}]
    for factor in catalogue.factors:
        words += [factor.key, *factor.values]
    return words


_FIELD_NAMES = st.sampled_from(
    [
        *("flagged_at", "skipped_at", "note_at", "note", "flagged", "withdrawn_at"),
        *("assignments", "assigned", "assigned_at", "assigned_by"),
        *("withdrawn_decisions", "withdrawn_measurements", "statistic", "source"),
    ]
)
"""Keys an added key may be: a known field where it does not belong, or missing, is a
mutation that often still parses (a time beside a mark, a withdrawal list)."""


def _json_values() -> st.SearchStrategy[Any]:
    scalars = st.none() | st.booleans() | st.integers() | st.floats() | _texts
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_texts, inner, max_size=3),
        max_leaves=6,
    )


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every location inside a JSON value, as key/index tuples."""
    children = (
        node.items()
        if isinstance(node, dict)
        else enumerate(node)
        if isinstance(node, list)
        else ()
    )
    for key, child in children:
        yield (*prefix, key)
        yield from _paths(child, (*prefix, key))


MUTATIONS = ("delete", "replace", "retype", "duplicate", "swap", "extra_key")


@st.composite
def mutated(draw: st.DrawFn, base: Any, catalogue: Catalogue) -> Any:
    """``base`` with one to three random edits.

    Edits land anywhere, half of them inside ``videos``: delete a field or element; replace a
    value with a release word (a factor value, annotator, source, timestamp, number, ...) or
    random text; give it another JSON type; duplicate or swap list elements (duplicate
    videos, decisions, marks); add a key (a field name or random text). Rarely, the whole
    document is random JSON.
    """
    if draw(st.integers(0, 30)) == 0:
        return draw(_json_values())
    data = copy.deepcopy(base)
    words = st.sampled_from(_vocabulary(catalogue))
    for _ in range(draw(st.integers(1, 3))):
        paths = list(_paths(data))
        if not paths:
            break
        inside = [p for p in paths if p[0] == "videos"]
        path = draw(st.sampled_from(inside if inside and draw(st.booleans()) else paths))
        parent = data
        for key in path[:-1]:
            parent = parent[key]
        key, node = path[-1], parent[path[-1]]
        operation = draw(st.sampled_from(MUTATIONS))
        if operation == "delete":
            del parent[key]
        elif operation == "replace":
            parent[key] = draw(words | _texts | _timestamps | st.floats() | st.integers())
        elif operation == "retype":
            parent[key] = draw(_json_values())
        elif operation == "duplicate" and isinstance(node, list) and node:
            node.append(copy.deepcopy(draw(st.sampled_from(node))))
        elif operation == "swap" and isinstance(node, list) and len(node) > 1:
            i, j = draw(st.permutations(range(len(node))))[:2]
            node[i], node[j] = node[j], node[i]
        elif operation == "extra_key" and isinstance(node, dict):
            node[draw(_FIELD_NAMES | _texts)] = draw(words | _json_values())
        else:
            parent[key] = draw(words)
    return data


def release_inputs() -> st.SearchStrategy[ReleaseInput]:
    """Valid random releases, and mutations of the template or of a valid random release."""
    base = template()
    valid = valid_releases(base.catalogue)
    targets = st.sampled_from(TARGETS)
    return st.builds(ReleaseInput, valid, st.just(True), targets) | st.builds(
        ReleaseInput,
        mutated(base.data, base.catalogue) | valid.flatmap(lambda d: mutated(d, base.catalogue)),
        st.just(False),
        targets,
    )


# --- the merge property ---------------------------------------------------------------------

StateKey = tuple[str, str, str, str]
"""(kind, video, key, annotator) of one piece of state, as a :class:`Conflict` names it: a
decision's factor, a mark's kind, a measurement's statistic, a rule's factor; the video
empty for a rule, the annotator for a measurement or rule."""
Stamped = tuple[Any, datetime]
"""A piece of state's value (None: withdrawn) and the instant it was set."""
State = dict[StateKey, Stamped]


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text)


def _measured(m: Measurement) -> dict[str, Any]:
    return m.model_dump(exclude={"measured_at"})


def store_state(store: AnnotationStore) -> State:
    """Every piece of a store's current state, read with its public API."""
    state: State = {}
    for d in store.current_decisions():
        value = (d.value, d.source, d.note, d.replaced_auto_value, d.replaced_measurement)
        state["decision", d.video_id, d.factor, d.annotator] = (value, _instant(d.decided_at))
    for (video_id, annotator), kinds in store.marks_with_times().items():
        for kind, (mark, at) in kinds.items():
            if at is not None:
                state["mark", video_id, kind, annotator] = (mark, _instant(at))
    for video_id, statistics in store.measurements().items():
        for statistic, m in statistics.items():
            state["measurement", video_id, statistic, ""] = (_measured(m), m.measured_at)
    for video_id, withdrawn in store.measurement_withdrawals().items():
        for statistic, at in withdrawn.items():
            state["measurement", video_id, statistic, ""] = (None, _instant(at))
    for factor, statistic, rule, thresholds, at in store.thresholds():
        state["rule", "", factor, ""] = ((statistic, rule, tuple(thresholds)), _instant(at))
    for row in store.assignment_rows():
        key = ("assignment", row.video_id, "assigned", row.annotator)
        state[key] = ((row.assigned, row.assigned_by), _instant(row.assigned_at))
    return state


def release_state(release: Release) -> State:
    """Every piece of state a release carries, in the shape of :func:`store_state`."""
    state: State = {}
    for t in release.thresholds:
        state["rule", "", t.factor, ""] = ((t.statistic, t.rule, tuple(t.thresholds)), t.set_at)
    for video in release.videos:
        vid = video.video_id
        for factor, assignment in video.factors.items():
            for d in assignment.decisions:
                value = (d.value, d.source, d.note, d.replaced_auto_value, d.replaced_measurement)
                state["decision", vid, factor, d.annotator] = (value, d.decided_at)
        for w in video.withdrawn_decisions:
            cleared = (None, w.source, None, None, None)
            state["decision", vid, w.factor, w.annotator] = (cleared, w.withdrawn_at)
        for mark in video.marks:
            for kind, marked, at in (
                ("flag", mark.flagged, mark.flagged_at),
                ("skip", mark.skipped, mark.skipped_at),
                ("note", mark.note, mark.note_at),
            ):
                if at is not None:
                    state["mark", vid, kind, mark.annotator] = (marked, at)
        for statistic, m in video.measurements.items():
            state["measurement", vid, statistic, ""] = (_measured(m), m.measured_at)
        for wm in video.withdrawn_measurements:
            state["measurement", vid, wm.statistic, ""] = (None, wm.withdrawn_at)
        for a in video.assignments:
            key = ("assignment", vid, "assigned", a.annotator)
            state[key] = ((a.assigned, a.assigned_by), a.assigned_at)
    return state


def expected_merge(before: State, release: State) -> dict[StateKey, list[Stamped]]:
    """What may be current on each key after merging ``release`` into a store that held
    ``before``: the value with the newer time (on a tie, either)."""
    expected = {}
    for key in before.keys() | release.keys():
        held = [s for s in (before.get(key), release.get(key)) if s is not None]
        newest = max(at for _value, at in held)
        expected[key] = [s for s in held if s[1] == newest]
    return expected


def _headline(kind: str, value: Any) -> Any:
    """The part of a value whose difference makes an older import a conflict: a decision's
    value (not its note), a measurement's number, the rest whole."""
    if kind in ("decision", "assignment"):
        return value[0]
    if kind == "measurement":
        return None if value is None else value["value"]
    return value


@dataclass(frozen=True)
class WorkspaceState:
    """A store's current state and its decision log (by content), taken before a merge."""

    current: State
    logged_decisions: frozenset[tuple[Any, ...]]


def workspace_state(root: Path) -> WorkspaceState:
    with Workspace.open(root, read_only=True) as workspace:
        store = workspace.store
        logged = frozenset(
            (d.video_id, d.factor, d.annotator, d.value, d.source, _instant(d.decided_at))
            for d in store.decision_log()
        )
        return WorkspaceState(store_state(store), logged)


def merge_problems(before: State, theirs: State, after: State) -> list[str]:
    """Where ``after`` (the state after a merge) holds other than :func:`expected_merge`."""
    expected = expected_merge(before, theirs)
    found = []
    for key in sorted(after.keys() | expected.keys()):
        if key not in after:
            found.append(f"{'/'.join(key)}: no current value, expected {expected[key][0]}")
        elif key not in expected:
            found.append(f"{'/'.join(key)}: {after[key]} is current, but neither side held it")
        elif after[key] not in expected[key]:
            found.append(
                f"{'/'.join(key)}: {after[key]} is current, expected "
                + " or ".join(str(s) for s in expected[key])
            )
    return found


def _conflict_problems(counts: ImportCounts, before: WorkspaceState, theirs: State) -> list[str]:
    """Each listed conflict names an imported value older than (or as old as) the local one,
    with another value; each such decision not already in the log, measurement and rule is
    listed (a mark's log is not readable through the store API)."""
    ours = before.current
    found = []
    listed = set()
    for c in counts.conflicts:
        key: StateKey = (c.kind, c.video_id, c.key, c.annotator)
        listed.add(key)
        local, imported = ours.get(key), theirs.get(key)
        if (
            local is None
            or imported is None
            or (_instant(c.local_at), _instant(c.imported_at)) != (local[1], imported[1])
            or imported[1] > local[1]
            or _headline(c.kind, imported[0]) == _headline(c.kind, local[0])
        ):
            found.append(f"a conflict that is none: {c.describe()}")
    for key, imported in theirs.items():
        kind, video_id, name, annotator = key
        local = ours.get(key)
        if (
            kind in ("mark", "assignment")  # logs the store API does not read back
            or local is None
            or imported[1] >= local[1]
            or _headline(kind, imported[0]) == _headline(kind, local[0])
            or key in listed
        ):
            continue
        if kind == "decision":
            value, source = imported[0][:2]
            if (video_id, name, annotator, value, source, imported[1]) in before.logged_decisions:
                continue  # history already: skipped, as a second import of the release is
        found.append(f"{'/'.join(key)}: an older imported {imported} is not a conflict")
    return found


def _count_problems(counts: ImportCounts, before: WorkspaceState, theirs: State) -> list[str]:
    """Decisions added are those the log did not hold; measurements and rules updated, those
    the release held newer (or alone)."""
    found = []
    added = sum(
        1
        for (kind, video_id, factor, annotator), (value, at) in theirs.items()
        if kind == "decision"
        and (video_id, factor, annotator, value[0], value[1], at) not in before.logged_decisions
    )
    if counts.decisions_added != added:
        found.append(f"{counts.decisions_added} decisions added, expected {added}")
    for kind, reported in (
        ("measurement", counts.measurements_updated),
        ("rule", counts.rules_updated),
    ):
        newer = sum(
            1
            for key, (_value, at) in theirs.items()
            if key[0] == kind and (key not in before.current or at > before.current[key][1])
        )
        if reported != newer:
            found.append(f"{reported} {kind}s updated, expected {newer}")
    return found


@dataclass
class ImportVerdict:
    """How one generated release fared: refused or imported (``problems``: the property broke)."""

    outcome: Literal["refused", "imported"]
    detail: str
    problems: list[str] = field(default_factory=list)


def _comparable(path: Path) -> dict[str, Any]:
    """A release file without what an export stamps anew: its time and the writing tool."""
    data = json.loads(path.read_text(encoding="utf-8"))
    data.pop("created_at", None)
    data.pop("tool", None)
    return data


def _reexport(root: Path, release: Release, scratch: Path) -> list[str]:
    """Re-open the workspace, export it as the release was selected, and compare."""
    out = scratch / "again.json"
    with Workspace.open(root) as workspace:
        again = build_release(workspace, annotator=release.selection.annotator)
    out.write_text(release_json(again), encoding="utf-8")  # as write_release, minus the schema
    found = []
    try:
        read_release(out)
    except VadsceneError as exc:
        found.append(f"the re-exported release is invalid: {exc}")
    expected = json.loads(release_json(release))
    expected.pop("created_at")
    expected.pop("tool")
    if _comparable(out) != expected:
        found.append("the re-exported release differs from the imported one")
    return found


def _check_merge(
    release: Release, root: Path, before: WorkspaceState, counts: ImportCounts
) -> list[str]:
    """After a merge: for every piece of state, the current value is the newer of the
    workspace's before the merge and the release's (a merge never makes an older value
    current); conflicts and counts say so; the merged workspace exports a valid release; a
    second merge adds nothing and changes nothing."""
    theirs = release_state(release)
    with Workspace.open(root) as workspace:
        store = workspace.store
        after = store_state(store)
        found = merge_problems(before.current, theirs, after)
        found += _conflict_problems(counts, before, theirs)
        found += _count_problems(counts, before, theirs)
        try:
            parse_release(json.loads(release_json(build_release(workspace))), origin="merged")
        except VadsceneError as exc:
            found.append(f"the merged workspace exports an invalid release: {exc}")
        again = import_release(release, workspace)
        added = (
            again.videos_added,
            again.decisions_added,
            again.marks_added,
            again.measurements_updated,
            again.rules_updated,
        )
        if added != (0, 0, 0, 0, 0):
            found.append(f"importing the same release twice added {again}")
        if store_state(store) != after:
            found.append("importing the same release twice changed the current state")
    return found


def _import(release: Release, target: Target, root: Path) -> ImportCounts | None:
    if target == "new":
        workspace_from_release(release, root).close()
        return None
    with Workspace.open(root) as workspace:
        return import_release(release, workspace)


def check_release_import(item: ReleaseInput, scratch: Path) -> ImportVerdict:
    """The property: refused with a :class:`VadsceneError` and nothing written, or imported
    and reproduced.

    Refused: a new folder must not exist afterwards, a merged-into store must be unchanged
    byte for byte; a release built valid must not be refused (except by a workspace over
    videos it does not have). Imported into a new folder: exporting again gives the same
    release (except ``created_at`` and ``tool``, which describe the export itself). Merged:
    :func:`_check_merge`, against the workspace's state read before the merge.
    """
    source = write_json(scratch / "release.json", item.data)
    try:
        release = read_release(source)
    except VadsceneError as exc:
        problems = [f"a valid release was refused: {exc}"] if item.valid else []
        return ImportVerdict("refused", str(exc).splitlines()[-1][:120], problems)
    except Exception as exc:
        return ImportVerdict("refused", "raw", [f"read_release raised {type(exc).__name__}: {exc}"])
    root = scratch / "target"
    before = state = None
    if item.target != "new":
        shutil.copytree(template().workspaces[item.target], root)
        state = workspace_state(root)
        before = snapshot_store(root / STORE_NAME)
    try:
        counts = _import(release, item.target, root)
    except VadsceneError as exc:
        verdict = ImportVerdict("refused", f"on import: {str(exc).splitlines()[0][:120]}")
        if item.valid and item.target != "merge-with-videos":
            verdict.problems.append(f"a valid release was refused on import: {exc}")
    except Exception as exc:
        verdict = ImportVerdict("refused", "raw", [f"import raised {type(exc).__name__}: {exc}"])
    else:
        try:
            if counts is None or state is None:
                return ImportVerdict("imported", item.target, _reexport(root, release, scratch))
            merged = _check_merge(release, root, state, counts)
            return ImportVerdict("imported", item.target, merged)
        except Exception as exc:
            problem = f"checking the import raised {type(exc).__name__}: {exc}"
            return ImportVerdict("imported", item.target, [problem])
    if item.target == "new" and root.exists():
        verdict.problems.append(f"the refused import left {root} behind")
    if before is not None:
        verdict.problems += store_changes(before, snapshot_store(root / STORE_NAME))
    return verdict


FUZZ_SETTINGS = settings(
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
"""Examples are whole imports (slow for a unit test); no example database is kept on disk."""


@dataclass
class FuzzTally:
    """Generated releases by outcome: refused, imported, or failed (the property)."""

    examples: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)

    def add(self, verdict: ImportVerdict) -> None:
        self.examples += 1
        outcome = "failed" if verdict.problems else verdict.outcome
        self.outcomes[outcome] = self.outcomes.get(outcome, 0) + 1
        if verdict.problems:
            self.failures.append(f"{verdict.detail}: {'; '.join(verdict.problems)}")


def fuzz_release_imports(examples: int) -> FuzzTally:
    """Run the import property on ``examples`` generated releases (deterministically)."""
    tally = FuzzTally()

    @settings(FUZZ_SETTINGS, max_examples=examples, derandomize=True)
    @given(release_inputs())
    def one(item: ReleaseInput) -> None:
        with tempfile.TemporaryDirectory() as scratch:
            tally.add(check_release_import(item, Path(scratch)))

    one()
    return tally
