"""Release fuzzing: Hypothesis generates releases, and :func:`check_release_import` states
the import property.

:func:`release_inputs` draws valid random releases (consistent support and resolutions,
computed with :func:`vadscene.release.releases.pole_support` and
:func:`vadscene.annotate.consensus.resolve_assignment`) and mutations of valid ones, each to be
imported into a new folder or merged into a copy of the template workspace. The property:
importing either succeeds and re-exports the same release, or raises a :class:`VadsceneError`
and leaves no partial write. ``tests/release/test_fuzz_release.py`` runs it on 1000 examples,
and the README's reliability figures (:mod:`support.figures`) count its outcomes.
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
from typing import Any, Literal

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support.examples import BAD, GOOD, NORMAL, annotate_example, registry_workspace, write_json
from support.snapshots import snapshot_store, store_changes
from vadscene import __version__
from vadscene.annotate.consensus import resolve_assignment
from vadscene.core.catalogue import AMBIGUOUS, Catalogue, Factor
from vadscene.core.errors import VadsceneError
from vadscene.core.records import (
    AUTO_ANNOTATOR,
    AutoThreshold,
    FactorDecision,
    Measurement,
    Release,
    Selection,
    ToolInfo,
    VideoMarks,
    VideoRecord,
)
from vadscene.release.releases import (
    build_release,
    import_release,
    pole_support,
    read_release,
    release_json,
    workspace_from_release,
)
from vadscene.store.workspace import STORE_NAME, Workspace

SQLITE_INT = (-(2**63), 2**63 - 1)
HUMANS = ("ana", "ben", "carla")


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
    """The release every mutation starts from, and closed workspaces holding it (by target)."""

    data: dict[str, Any]
    catalogue: Catalogue
    workspaces: dict[str, Path]


@cache
def template() -> Template:
    """Built once per process (in a temporary folder removed at exit)."""
    folder = Path(tempfile.mkdtemp(prefix="vadscene-template-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    root = registry_workspace(folder, {GOOD: 30, BAD: 20, NORMAL: 25}, name="source")
    with Workspace.open(root) as workspace:
        annotate_example(workspace.store)
        release = build_release(workspace)
    with workspace_from_release(release, folder / "merge"):
        pass
    ids = {v.video_id: v.num_frames for v in release.videos}
    root = registry_workspace(folder, ids, with_video_folder=True, name="merge-with-videos")
    with Workspace.open(root) as workspace:
        import_release(release, workspace)
    workspaces = {target: folder / target for target in TARGETS[1:]}
    return Template(json.loads(release_json(release)), release.catalogue, workspaces)


# Strategies for the pieces of a release. Texts are any unicode Hypothesis draws (no lone
# surrogates: JSON text read as UTF-8 cannot carry them, and pydantic refuses them).

_texts = st.text(max_size=12)
_names = st.sampled_from(HUMANS) | st.text(min_size=1, max_size=8).filter(
    lambda s: s.strip() != "" and s != AUTO_ANNOTATOR
)
_finite = st.floats(allow_nan=False, allow_infinity=False)
_non_negative = st.floats(min_value=0, allow_infinity=False)
_counts = st.integers(0, SQLITE_INT[1])
_zones = st.builds(
    timezone,
    st.timedeltas(
        min_value=timedelta(hours=-23, minutes=-59), max_value=timedelta(hours=23, minutes=59)
    ),
)
_aware = st.datetimes(timezones=st.just(UTC) | _zones)
_timestamps = (_aware | st.datetimes()).map(datetime.isoformat)
"""Timestamp text, with and without a time zone."""
_video_ids = st.builds(
    "{}{:03d}_x264".format,
    st.sampled_from(["Abuse", "Arson", "Normal_Videos_"]),
    st.integers(0, 999),
) | st.text(min_size=1, max_size=10)


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


@st.composite
def _decisions(draw: st.DrawFn, factor: Factor, humans: list[str]) -> list[FactorDecision]:
    """Current decisions on one factor: distinct annotators, sources the store keeps as given.

    A manual factor takes ``manual`` and ``consensus``; an auto factor an ``auto`` pole and
    humans' ``override`` and ``consensus`` (validation refuses ``manual`` there).
    """
    values = st.sampled_from([*factor.values, AMBIGUOUS])
    human_sources = (
        ["manual", "consensus"] if factor.source == "manual" else ["override", "consensus"]
    )
    auto = factor.source == "auto"
    who = draw(st.lists(st.sampled_from(humans), unique=True, min_size=0 if auto else 1))
    decisions = []
    for name in ([AUTO_ANNOTATOR] if auto and (not who or draw(st.booleans())) else []) + who:
        source = "auto" if name == AUTO_ANNOTATOR else draw(st.sampled_from(human_sources))
        replaced = source == "override" and draw(st.booleans())
        decisions.append(
            FactorDecision(
                annotator=name,
                value=draw(values),
                source=source,
                decided_at=draw(_aware),
                note=draw(st.none() | _texts),
                replaced_auto_value=draw(st.sampled_from(factor.values)) if replaced else None,
                replaced_measurement=draw(st.none() | _finite) if replaced else None,
            )
        )
    return decisions


_measurements = st.builds(
    Measurement,
    value=_finite,
    params=st.dictionaries(
        _texts, st.none() | st.booleans() | st.integers(*SQLITE_INT) | _finite | _texts, max_size=3
    ),
    decoder=_texts,
    frames_read=_counts,
    seconds=_non_negative,
    measured_at=_aware,
)


@st.composite
def _marks(draw: st.DrawFn, annotator: str) -> VideoMarks:
    """Marks that say something: a flag, a skip or a non-empty note."""
    flagged, skipped = draw(st.booleans()), draw(st.booleans())
    notes = st.text(min_size=1, max_size=12)
    note = draw(st.none() | notes if flagged or skipped else notes)
    return VideoMarks(annotator=annotator, flagged=flagged, skipped=skipped, note=note)


@st.composite
def valid_releases(draw: st.DrawFn, catalogue: Catalogue) -> dict[str, Any]:
    """A random release that is valid and canonical (as ``vadscene export`` writes them).

    Values follow from the decisions (:func:`resolve_assignment`), support from the values
    (:func:`pole_support`); videos are sorted by id, decisions by annotator; marks are one
    per annotator and say something; thresholds are one per auto factor, sorted.
    """
    humans = draw(st.lists(_names, min_size=1, max_size=3, unique=True))
    mode = draw(st.sampled_from(["consensus", "annotator"]))
    chosen = draw(st.sampled_from(humans)) if mode == "annotator" else None
    if chosen is not None:
        humans = [chosen]
    records = []
    for video_id in sorted(draw(st.lists(_video_ids, min_size=1, max_size=4, unique=True))):
        factors = draw(
            st.lists(st.sampled_from(catalogue.factors), unique_by=lambda f: f.key, max_size=3)
        )
        marks = [
            draw(_marks(name))
            for name in sorted(draw(st.lists(st.sampled_from(humans), unique=True)))
        ]
        records.append(
            VideoRecord(
                **draw(_video_infos(video_id)),
                factors={
                    f.key: resolve_assignment(draw(_decisions(f, humans)))
                    for f in catalogue.factors
                    if f in factors
                },
                measurements=draw(st.dictionaries(_texts, _measurements, max_size=2)),
                marks=tuple(marks),
            )
        )
    named = {d.annotator for r in records for a in r.factors.values() for d in a.decisions}
    annotators = sorted(
        (named | {m.annotator for r in records for m in r.marks}) - {AUTO_ANNOTATOR}
    )
    if chosen is not None and chosen not in annotators:
        first = records[0]
        records[0] = first.model_copy(
            update={"marks": (VideoMarks(annotator=chosen, flagged=True),)}
        )
        annotators = [chosen]
    thresholds = [
        AutoThreshold(
            factor=key,
            statistic=rule.statistic,
            rule=draw(st.sampled_from(["median", "terciles", "explicit"])),
            thresholds=tuple(draw(st.lists(_finite, max_size=2))),
            set_at=draw(_aware),
        )
        for key, rule in sorted((f.key, f.auto) for f in catalogue.factors if f.auto)
        if draw(st.booleans())
    ]
    release = Release(
        schema_version=1,
        dataset=draw(st.text(min_size=1, max_size=10)),
        created_at=draw(_aware),
        tool=ToolInfo(version=__version__),
        selection=Selection(mode=mode, annotator=chosen),
        catalogue=catalogue,
        annotators=tuple(annotators),
        thresholds=tuple(thresholds),
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
    words += [0, -1, 1, 2, 2**63, 0.5, -0.5, True, False, None, [], {}]
    for factor in catalogue.factors:
        words += [factor.key, *factor.values]
    return words


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
    videos, decisions, marks); add an unknown key. Rarely, the whole document is random JSON.
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
            node[draw(_texts)] = draw(_json_values())
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


def _check_merge(release: Release, root: Path) -> list[str]:
    """After a merge: every released decision is current unless the store holds a later one on
    its key (merges never go back in time), every mark is current; a second merge adds
    nothing."""
    with Workspace.open(root) as workspace:
        store = workspace.store
        current = {(d.video_id, d.factor, d.annotator): d for d in store.current_decisions()}
        marks = store.marks()
        found = []
        for video in release.videos:
            for key, assignment in video.factors.items():
                for d in assignment.decisions:
                    now = current.get((video.video_id, key, d.annotator))
                    released = (d.value, d.source, d.decided_at.isoformat(timespec="microseconds"))
                    if now is None or (
                        (now.value, now.source, now.decided_at) != released
                        and datetime.fromisoformat(now.decided_at) <= d.decided_at
                    ):
                        found.append(f"{video.video_id}/{key}/{d.annotator}: not current")
            for m in video.marks:
                released_marks = {"flag": m.flagged, "skip": m.skipped, "note": m.note}
                if marks.get((video.video_id, m.annotator)) != released_marks:
                    found.append(f"{video.video_id}: marks of {m.annotator} not current")
        again = import_release(release, workspace)
        if (again.videos_added, again.decisions_added, again.marks_set) != (0, 0, 0):
            found.append(f"importing the same release twice added {again}")
    return found


def _import(release: Release, target: Target, root: Path) -> None:
    if target == "new":
        workspace_from_release(release, root).close()
    else:
        with Workspace.open(root) as workspace:
            import_release(release, workspace)


def check_release_import(item: ReleaseInput, scratch: Path) -> ImportVerdict:
    """The property: refused with a :class:`VadsceneError` and nothing written, or imported
    and reproduced.

    Refused: a new folder must not exist afterwards, a merged-into store must be unchanged
    byte for byte; a release built valid must not be refused (except by a workspace over
    videos it does not have). Imported into a new folder: exporting again gives the same
    release (except ``created_at`` and ``tool``, which describe the export itself). Merged:
    every released decision and mark is current, and merging again adds nothing.
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
    before = None
    if item.target != "new":
        shutil.copytree(template().workspaces[item.target], root)
        before = snapshot_store(root / STORE_NAME)
    try:
        _import(release, item.target, root)
    except VadsceneError as exc:
        verdict = ImportVerdict("refused", f"on import: {str(exc).splitlines()[0][:120]}")
        if item.valid and item.target != "merge-with-videos":
            verdict.problems.append(f"a valid release was refused on import: {exc}")
    except Exception as exc:
        verdict = ImportVerdict("refused", "raw", [f"import raised {type(exc).__name__}: {exc}"])
    else:
        try:
            if item.target == "new":
                return ImportVerdict("imported", item.target, _reexport(root, release, scratch))
            return ImportVerdict("imported", item.target, _check_merge(release, root))
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
