"""The bad-input table: bad inputs, and what vadscene must answer to each.

:data:`CASES` holds damaged videos, broken score files, malformed or inconsistent releases, bad
options and refused store writes. Each case builds its input in a scratch folder, runs a CLI
command in-process or a library call, and :func:`run_case` checks the three promises of
:mod:`vadscene.core.errors`: one message naming the file, video or value and what was expected;
a non-zero exit code (exit 0 where the problem is reported but not fatal); and the annotation
store unchanged byte for byte (or, where the command records the problem by design, unchanged
outside the tables it records into). ``tests/reliability/test_bad_input.py`` runs every case,
and the reliability figures of docs/reliability.md (:mod:`support.figures`) count them.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import socket
import traceback
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import yaml

from support.clips import BAD_FILES, write_clip
from support.examples import (
    BAD,
    GOOD,
    NORMAL,
    registry_workspace,
    release_data,
    video_workspace,
    write_json,
)
from support.snapshots import snapshot_store, store_changes
from vadscene.cli import run
from vadscene.core.catalogue import load_catalogue
from vadscene.core.errors import VadsceneError
from vadscene.core.records import Measurement
from vadscene.store.database import AnnotationStore
from vadscene.store.workspace import STORE_NAME, Workspace

# --- building bad input -------------------------------------------------------------------


def _release_file(folder: Path, name: str, mutate: Callable[[dict[str, Any]], None]) -> Path:
    data = release_data(folder)
    mutate(data)
    return write_json(folder / name, data)


def _ground_truth(folder: Path, lines: list[str]) -> Path:
    path = folder / "gt.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


GT_LINES = [f"{GOOD} Abuse 5 12", f"{NORMAL} Normal -1 -1"]
"""UCF-Crime style ground truth (no frame counts: the workspace registry gives 30 and 25)."""


def _scores(folder: Path, rows: list[tuple[str, str]]) -> Path:
    path = folder / "scores.csv"
    path.write_text("video,score\n" + "".join(f"{v},{s}\n" for v, s in rows), encoding="utf-8")
    return path


def _good_scores() -> list[tuple[str, str]]:
    return [(GOOD, "0.5")] * 30 + [(NORMAL, "0.1")] * 25


# --- the bad-input cases ------------------------------------------------------------------


@dataclass(frozen=True)
class Attempt:
    """What one case runs once its input is built: a CLI command or a library call."""

    argv: tuple[str, ...] = ()
    call: Callable[[], object] | None = None
    store: Path | None = None
    """Workspace folder whose store must not change (see :func:`store_changes`)."""
    absent: Path | None = None
    """A path the refused command must not create (a workspace folder, a release file)."""


@dataclass(frozen=True)
class BadInputCase:
    """One bad input and what vadscene must answer.

    ``expected`` are fragments of the message, with ``{tmp}`` standing for the case's folder.
    ``exit_code`` is the CLI's; None marks a library call, which must raise a
    :class:`VadsceneError`. ``may_change`` names the store tables the command records the
    problem into by design.
    """

    name: str
    build: Callable[[Path], Attempt]
    expected: tuple[str, ...]
    exit_code: int | None = 1
    stream: Literal["stdout", "stderr"] = "stderr"
    may_change: frozenset[str] = frozenset()


def _cli(*args: str | Path, store: Path | None = None, absent: Path | None = None) -> Attempt:
    return Attempt(argv=tuple(str(a) for a in args), store=store, absent=absent)


def _store_call(root: Path, action: Callable[[AnnotationStore], object]) -> Attempt:
    """A store method called on a freshly opened workspace, closed afterwards."""

    def call() -> object:
        with Workspace.open(root) as workspace:
            return action(workspace.store)

    return Attempt(call=call, store=root)


def _scan_case(kind: str) -> Callable[[Path], Attempt]:
    """A bad file added to a workspace's video folder, then ``vadscene scan``."""

    def build(folder: Path) -> Attempt:
        root = video_workspace(folder)
        BAD_FILES[kind](folder / "videos" / f"{BAD}.mp4")
        return _cli("scan", root, store=root)

    return build


def _measure_case(kind: str | None) -> Callable[[Path], Attempt]:
    """A registered video replaced by a bad file (or deleted: None), then ``vadscene measure``."""

    def build(folder: Path) -> Attempt:
        root = video_workspace(folder)
        video = folder / "videos" / f"{GOOD}.mp4"
        if kind is None:
            video.unlink()
        else:
            BAD_FILES[kind](video)
        return _cli("measure", root, "--workers", "1", store=root)

    return build


def _audit_case(
    rows: Callable[[], list[tuple[str, str]]] | None, gt_lines: list[str] = GT_LINES
) -> Callable[[Path], Attempt]:
    """``vadscene audit`` of a score table (None: ground truth only) against a workspace."""

    def build(folder: Path) -> Attempt:
        root = registry_workspace(folder)
        args: list[str | Path] = ["audit", "--out", folder / "report", "--bootstrap", "0"]
        args += ["--gt", _ground_truth(folder, gt_lines), "--workspace", root]
        if rows is not None:
            args += ["--scores", f"model={_scores(folder, rows())}"]
        return _cli(*args, store=root, absent=folder / "report")

    return build


def _with_score(index: int, video: str, value: str) -> Callable[[], list[tuple[str, str]]]:
    def rows() -> list[tuple[str, str]]:
        table = _good_scores()
        table[index] = (video, value)
        return table

    return rows


def _validate_case(
    name: str, mutate: Callable[[dict[str, Any]], None]
) -> Callable[[Path], Attempt]:
    def build(folder: Path) -> Attempt:
        return _cli("validate", _release_file(folder, name, mutate))

    return build


def _import_case(
    name: str, mutate: Callable[[dict[str, Any]], None], *, into: Literal["new", "existing"]
) -> Callable[[Path], Attempt]:
    """``vadscene import`` of a mutated release into a new folder or an existing workspace."""

    def build(folder: Path) -> Attempt:
        release = _release_file(folder, name, mutate)
        if into == "new":
            return _cli("import", folder / "new-ws", release, absent=folder / "new-ws")
        root = registry_workspace(folder)
        return _cli("import", root, release, store=root)

    return build


def _duplicate_video(data: dict[str, Any]) -> None:
    data["videos"].append(data["videos"][0])


def _schema_version_3(data: dict[str, Any]) -> None:
    data["schema_version"] = 3


def _drop_last_factor(data: dict[str, Any]) -> None:
    """A valid release over a catalogue without the last factor ('road')."""
    dropped = data["catalogue"]["factors"].pop()["key"]
    data["support"] = [s for s in data["support"] if s["factor"] != dropped]


def _blank_annotator(data: dict[str, Any]) -> None:
    data["videos"][0]["factors"]["color"]["decisions"][0]["annotator"] = " "
    data["annotators"] = [" "]


def _nan_measurement(data: dict[str, Any]) -> None:
    data["videos"][0]["measurements"]["sharpness"]["value"] = math.nan


def _huge_frame_count(data: dict[str, Any]) -> None:
    data["videos"][0]["num_frames"] = 2**64


def _malformed(folder: Path) -> Path:
    text = json.dumps(release_data(folder), indent=2)
    path = folder / "cut.json"
    path.write_text(text[: len(text) // 2], encoding="utf-8")
    return path


def _init_with_catalogue(folder: Path) -> Attempt:
    catalogue = load_catalogue().model_dump(mode="json")
    catalogue["factors"][0]["contrasts"] = [{"positive": "color", "negative": "sepia"}]
    path = folder / "catalogue.yaml"
    path.write_text(yaml.safe_dump(catalogue, sort_keys=False), encoding="utf-8")
    (folder / "videos").mkdir()
    ws = folder / "ws"
    return _cli("init", ws, "--videos", folder / "videos", "--catalog", path, absent=ws)


def _init_with(*options: str) -> Callable[[Path], Attempt]:
    def build(folder: Path) -> Attempt:
        write_clip(folder / "videos" / f"{GOOD}.mp4")
        ws = folder / "ws"
        return _cli("init", ws, "--videos", folder / "videos", *options, absent=ws)

    return build


def _export_empty(folder: Path) -> Attempt:
    (folder / "videos").mkdir()
    with Workspace.create(folder / "ws", video_root=folder / "videos"):
        pass
    out = folder / "r.json"
    return _cli("export", folder / "ws", "--out", out, store=folder / "ws", absent=out)


def _taken(folder: Path) -> Path:
    """A regular file where a command wants to make a folder (a workspace, a report)."""
    path = folder / "taken"
    path.write_text("not a folder\n", encoding="utf-8")
    return path


def _init_on_a_file(folder: Path) -> Attempt:
    write_clip(folder / "videos" / f"{GOOD}.mp4")
    return _cli("init", _taken(folder), "--videos", folder / "videos")


def _export_into_a_folder(folder: Path) -> Attempt:
    root = registry_workspace(folder)
    (folder / "releases").mkdir()
    return _cli("export", root, "--out", folder / "releases", store=root)


def _audit_report_on_a_file(folder: Path) -> Attempt:
    root = registry_workspace(folder)
    gt = _ground_truth(folder, GT_LINES)
    args = ("audit", "--out", _taken(folder), "--gt", gt, "--workspace", root, "--bootstrap", "0")
    return _cli(*args, store=root)


def _deep_json(folder: Path) -> Attempt:
    path = folder / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    return _cli("validate", path)


def _taken_by_a_folder(folder: Path) -> Path:
    """A folder where a command wants to read a file."""
    path = folder / "export.json"
    path.mkdir()
    return path


def _free_port() -> int:
    """A local TCP port nothing listens on (the system's pick, released at once)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _unreachable_scheduler(folder: Path) -> Attempt:
    root = video_workspace(folder)
    address = f"tcp://127.0.0.1:{_free_port()}"
    options = ("--scheduler", address, "--scheduler-timeout", "1")
    return _cli("measure", root, *options, store=root)


def _store_case(action: Callable[[AnnotationStore], object]) -> Callable[[Path], Attempt]:
    def build(folder: Path) -> Attempt:
        return _store_call(registry_workspace(folder), action)

    return build


# --- the crash list (issue 14): inputs real benchmarks have ----------------------------------


def _non_utf8_name(videos: Path) -> None:
    """A real clip in ``videos`` whose file name is Latin-1 bytes, not UTF-8."""
    write_clip(videos / "renamed.mp4")
    os.rename(os.fsencode(videos / "renamed.mp4"), os.fsencode(videos) + b"/Arson\xe9002.mp4")


def _scan_non_utf8_name(folder: Path) -> Attempt:
    root = video_workspace(folder)
    _non_utf8_name(folder / "videos")
    return _cli("scan", root, store=root)


def _init_non_utf8_name(folder: Path) -> Attempt:
    write_clip(folder / "videos" / f"{GOOD}.mp4")
    _non_utf8_name(folder / "videos")
    return _cli("init", folder / "ws", "--videos", folder / "videos")


def _audit_into_a_folder_of_other_files(folder: Path) -> Attempt:
    root = registry_workspace(folder)
    (folder / "papers").mkdir()
    (folder / "papers" / "draft.tex").write_text("my paper\n", encoding="utf-8")
    gt = _ground_truth(folder, GT_LINES)
    args = ("audit", "--out", folder / "papers", "--gt", gt, "--workspace", root)
    return _cli(*args, store=root)


def _release_with_a_duplicated_key(folder: Path) -> Path:
    """A valid release whose first decision names its value twice (json.loads keeps the last)."""
    text = json.dumps(release_data(folder))
    path = folder / "twice.json"
    path.write_text(text.replace('"value": "grayscale"', '"value": "color", "value": "grayscale"'))
    return path


def _models_file_with_a_duplicated_key(folder: Path) -> Attempt:
    attempt = _audit_case(None)(folder)
    models = folder / "models.json"
    models.write_text('[{"name": "m", "path": "scores.csv", "path": "other.csv"}]')
    return replace(attempt, argv=(*attempt.argv, "--models", str(models)))


def _init_with_value_ambiguous(folder: Path) -> Attempt:
    """``vadscene init`` with a catalogue whose factor 'color' has a value " Ambiguous"."""
    catalogue = load_catalogue().model_dump(mode="json")
    catalogue["factors"][0]["values"] = [*catalogue["factors"][0]["values"], " Ambiguous"]
    path = folder / "catalogue.yaml"
    path.write_text(yaml.safe_dump(catalogue, sort_keys=False), encoding="utf-8")
    (folder / "videos").mkdir()
    ws = folder / "ws"
    return _cli("init", ws, "--videos", folder / "videos", "--catalog", path, absent=ws)


def _audit_with(*options: str) -> Callable[[Path], Attempt]:
    """The ground-truth-only audit of :func:`_audit_case`, with more options."""

    def build(folder: Path) -> Attempt:
        attempt = _audit_case(None)(folder)
        return replace(attempt, argv=(*attempt.argv, *options))

    return build


def _thresholds_value(value: str) -> Callable[[Path], Attempt]:
    """``vadscene thresholds … --rule explicit --value VALUE`` on a measured workspace."""

    def build(folder: Path) -> Attempt:
        root = registry_workspace(folder)
        with Workspace.open(root) as workspace:
            for video, sharpness in ((GOOD, 80.0), (NORMAL, 20.0)):
                workspace.store.record_measurement(
                    video,
                    "sharpness",
                    Measurement(
                        value=sharpness,
                        decoder="opencv",
                        frames_read=25,
                        seconds=0.01,
                        measured_at=datetime(2026, 1, 2, tzinfo=UTC),
                    ),
                )
        args = ("thresholds", root, "resolution", "--rule", "explicit", "--value", value)
        return _cli(*args, store=root)

    return build


SCAN_REASONS = {
    "corrupt_video": "no decodable frame",
    "truncated_video": "truncated: file ends inside frame",
    "empty_file": "empty file",
    "non_video_file": "cannot open: Invalid data found when processing input",
}
MEASURE_REASONS = {
    "corrupt_video": "no decodable frame",
    "truncated_video": "truncated or damaged: video packet",
    "empty_file": "empty file",
    "non_video_file": "cannot open: Invalid data found when processing input",
}


def _decision_in_2999(data: dict[str, Any]) -> None:
    data["videos"][0]["factors"]["color"]["decisions"][0]["decided_at"] = "2999-01-01T00:00:00Z"


def _decreasing_rule(data: dict[str, Any]) -> None:
    data["thresholds"] = [
        {
            "factor": "motion",
            "statistic": "motion",
            "rule": "terciles",
            "thresholds": [9.0, 1.0],
            "set_at": "2026-01-02T00:00:00Z",
        }
    ]


def _surrogate_note(data: dict[str, Any]) -> None:
    """A note holding a lone surrogate (valid JSON text), beside a decision the target does not
    hold yet: the decision must not be written either."""
    video = data["videos"][0]
    video["marks"] = [{"annotator": "ana", "note": "\udfff", "note_at": "2026-01-02T00:00:00Z"}]
    data["annotators"] = ["ana"]


"""Every bad-input case; ``tests/reliability/test_bad_input.py`` runs each one."""


@dataclass
class CaseOutcome:
    """What one case did, and each promise it broke (``problems``; empty = passed)."""

    case: BadInputCase
    exit_code: int | None
    message: str
    problems: list[str]

    @property
    def passed(self) -> bool:
        return not self.problems


def run_case(case: BadInputCase, folder: Path) -> CaseOutcome:
    """Build the case's input in ``folder`` (created), run it, and check every promise."""
    folder.mkdir(parents=True, exist_ok=True)
    attempt = case.build(folder)
    before = snapshot_store(attempt.store / STORE_NAME) if attempt.store else None
    problems: list[str] = []
    exit_code: int | None = None
    if attempt.call is not None:
        try:
            attempt.call()
        except VadsceneError as exc:
            message = str(exc)
        except Exception as exc:
            message = traceback.format_exc()
            problems.append(f"raised {type(exc).__name__} instead of a VadsceneError: {exc}")
        else:
            message = ""
            problems.append("no error was raised")
    else:
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                exit_code = run(list(attempt.argv))
            except Exception as exc:
                traceback.print_exc()
                problems.append(f"raw {type(exc).__name__} escaped the CLI: {exc}")
        message = (stdout if case.stream == "stdout" else stderr).getvalue()
        if "Traceback" in stdout.getvalue() + stderr.getvalue():
            problems.append("a traceback was printed")
        if exit_code != case.exit_code:
            problems.append(f"exit code {exit_code}, expected {case.exit_code}")
    for fragment in case.expected:
        wanted = fragment.format(tmp=folder)
        if wanted not in message:
            problems.append(f"message lacks {wanted!r}")
    if before is not None and attempt.store is not None:
        after = snapshot_store(attempt.store / STORE_NAME)
        problems += store_changes(before, after, may_change=case.may_change)
        if case.may_change and all(before.tables[t] == after.tables[t] for t in case.may_change):
            problems.append(f"nothing was recorded in {', '.join(sorted(case.may_change))}")
    if attempt.absent is not None and attempt.absent.exists():
        problems.append(f"{attempt.absent} was created by a refused command")
    return CaseOutcome(case, exit_code, message, problems)


CASES: tuple[BadInputCase, ...] = (
    *(
        BadInputCase(
            f"scan_{kind}",
            _scan_case(kind),
            ("1 files could not be registered", f"{BAD}.mp4: {reason}"),
            exit_code=0,
            stream="stdout",
            may_change=frozenset({"unreadable_files"}),
        )
        for kind, reason in SCAN_REASONS.items()
    ),
    *(
        BadInputCase(
            f"measure_{kind}",
            _measure_case(kind),
            (f"failed {GOOD}: {reason}",),
            may_change=frozenset({"measurement_failures"}),
        )
        for kind, reason in MEASURE_REASONS.items()
    ),
    BadInputCase(
        "measure_vanished_video",
        _measure_case(None),
        (
            f"missing {GOOD}: registered, but its file {{tmp}}/videos/{GOOD}.mp4 is no longer "
            "in the video folder",
        ),
        exit_code=3,
    ),
    BadInputCase(
        "audit_nan_score",
        _audit_case(_with_score(3, GOOD, "nan")),
        ("{tmp}/scores.csv: video Abuse001_x264: score nan at frame 3 is not finite",),
    ),
    BadInputCase(
        "audit_inf_score",
        _audit_case(_with_score(40, NORMAL, "inf")),
        (f"{{tmp}}/scores.csv: video {NORMAL}: score inf at frame 10 is not finite",),
    ),
    BadInputCase(
        "audit_scores_shorter_than_ground_truth",
        _audit_case(lambda: _good_scores()[:-2]),
        (f"{{tmp}}/scores.csv: video {NORMAL}: 23 scores but the ground truth has 25 frames",),
    ),
    BadInputCase(
        "audit_unknown_video_in_scores",
        _audit_case(lambda: [*_good_scores(), ("Stealing009_x264", "0.3")]),
        (
            "{tmp}/scores.csv: scores do not cover the ground truth ({tmp}/gt.txt)",
            "1 videos not in the ground truth: Stealing009_x264",
        ),
    ),
    BadInputCase(
        "audit_duplicate_video_in_ground_truth",
        _audit_case(None, [GT_LINES[0], GT_LINES[0]]),
        ("{tmp}/gt.txt:2: the video of this line is listed twice (first on line 1)",),
    ),
    BadInputCase(
        "audit_interval_past_video_end",
        _audit_case(None, [f"{GOOD} Abuse 5 60", GT_LINES[1]]),
        (
            f"{{tmp}}/gt.txt:1: video {GOOD}: interval [5, 60] (exclusive end) ends past the "
            "video's end: the video has 30 frames",
            "overrun 30 > tolerance 16",
        ),
    ),
    BadInputCase(
        "validate_duplicate_video_in_release",
        _validate_case("dup.json", _duplicate_video),
        (
            "{tmp}/dup.json: invalid release",
            f"$.videos[2].video_id: duplicate video id '{GOOD}' (also $.videos[0])",
        ),
    ),
    BadInputCase(
        "import_duplicate_video_in_release",
        _import_case("dup.json", _duplicate_video, into="existing"),
        ("{tmp}/dup.json: invalid release", f"duplicate video id '{GOOD}'"),
    ),
    BadInputCase(
        "validate_malformed_json",
        lambda folder: _cli("validate", _malformed(folder)),
        ("{tmp}/cut.json: not valid JSON",),
    ),
    BadInputCase(
        "import_malformed_json",
        lambda folder: _cli(
            "import", registry_workspace(folder), _malformed(folder), store=folder / "ws"
        ),
        ("{tmp}/cut.json: not valid JSON",),
    ),
    BadInputCase(
        "validate_wrong_schema_version",
        _validate_case("v3.json", _schema_version_3),
        (
            "{tmp}/v3.json: invalid release",
            "$.schema_version: unsupported release schema version 3 (this vadscene reads "
            "versions 1 and 2)",
        ),
    ),
    BadInputCase(
        "import_wrong_schema_version_into_new_folder",
        _import_case("v3.json", _schema_version_3, into="new"),
        ("{tmp}/v3.json: invalid release", "unsupported release schema version 3"),
    ),
    BadInputCase(
        "import_release_with_other_catalogue",
        _import_case("other.json", _drop_last_factor, into="existing"),
        (
            "{tmp}/other.json: its catalogue differs from the workspace's ({tmp}/ws)",
            "factors only in the workspace: road",
        ),
    ),
    BadInputCase(
        "import_unregistered_videos",
        lambda folder: _cli(
            "import",
            registry_workspace(folder, {GOOD: 30}, with_video_folder=True),
            write_json(folder / "r.json", release_data(folder)),
            store=folder / "ws",
        ),
        ("{tmp}/r.json: 1 released videos are not registered in {tmp}/ws", NORMAL),
    ),
    BadInputCase(
        "validate_release_not_found",
        lambda folder: _cli("validate", folder / "none.json"),
        ("{tmp}/none.json: release file not found",),
    ),
    BadInputCase(
        "import_release_not_found",
        lambda folder: _cli(
            "import", registry_workspace(folder), folder / "none.json", store=folder / "ws"
        ),
        ("{tmp}/none.json: release file not found",),
    ),
    BadInputCase(
        "init_catalogue_contrast_names_unknown_value",
        _init_with_catalogue,
        (
            "{tmp}/catalogue.yaml: invalid catalogue",
            "factor 'color': $.factors[0]: contrast 'color vs sepia' names unknown value "
            "'sepia' (values: color, grayscale)",
        ),
    ),
    BadInputCase(
        "init_unknown_category_rule",
        _init_with("--category-rule", "prefix"),
        ("unknown --category-rule 'prefix' (expected one of: ucf-crime, folder, regex, none)",),
    ),
    BadInputCase(
        "init_regex_rule_without_regex",
        _init_with("--category-rule", "regex"),
        ("--category-rule regex needs --category-regex with a group 'category'",),
    ),
    BadInputCase(
        "export_workspace_without_videos",
        _export_empty,
        ("{tmp}/ws: the workspace has no videos; nothing to release",),
    ),
    BadInputCase(
        "store_unknown_factor",
        _store_case(lambda s: s.record_decision(GOOD, "colour", "color", annotator="ana")),
        (f"video '{GOOD}': unknown factor 'colour' (catalogue 'ucf-crime' has: color,",),
        exit_code=None,
    ),
    BadInputCase(
        "store_value_not_in_factor",
        _store_case(lambda s: s.record_decision(GOOD, "color", "sepia", annotator="ana")),
        (
            f"video '{GOOD}', factor 'color': value 'sepia' is not allowed (expected one of: "
            "color, grayscale, ambiguous)",
        ),
        exit_code=None,
    ),
    BadInputCase(
        "store_unknown_video",
        _store_case(lambda s: s.record_decision("Nobody999", "color", "color", annotator="ana")),
        ("unknown video 'Nobody999' (the store at {tmp}/ws/annotations.db registers 2 videos)",),
        exit_code=None,
    ),
    BadInputCase(
        "store_unknown_mark",
        _store_case(lambda s: s.set_mark(GOOD, "star", True, annotator="ana")),
        ("unknown mark 'star' (expected one of: flag, skip, note)",),
        exit_code=None,
    ),
    BadInputCase(
        "init_invalid_category_regex",
        _init_with("--category-rule", "regex", "--category-regex", "(?P<category"),
        ("--category-regex", "not a valid regular expression"),
    ),
    BadInputCase(
        "init_category_regex_without_category_group",
        _init_with("--category-rule", "regex", "--category-regex", "^[A-Z][a-z]+"),
        ("--category-regex", "group 'category'"),
    ),
    BadInputCase(
        "init_workspace_path_is_a_file",
        _init_on_a_file,
        ("{tmp}/taken is a file; a workspace is a folder",),
    ),
    BadInputCase(
        "export_out_is_a_folder",
        _export_into_a_folder,
        ("{tmp}/releases is a folder; give a file name",),
    ),
    BadInputCase(
        "audit_out_is_a_file",
        _audit_report_on_a_file,
        ("cannot write the audit report there, {tmp}/taken is a file",),
    ),
    BadInputCase(
        "validate_deeply_nested_json",
        _deep_json,
        ("{tmp}/deep.json: JSON nested too deeply to read",),
    ),
    BadInputCase(
        "import_blank_annotator_into_new_folder",
        _import_case("blank.json", _blank_annotator, into="new"),
        ("{tmp}/blank.json: invalid release", "$.videos[0].factors.color.decisions[0].annotator"),
    ),
    BadInputCase(
        "import_nan_measurement_into_new_folder",
        _import_case("nan.json", _nan_measurement, into="new"),
        ("{tmp}/nan.json: invalid release", "$.videos[0].measurements.sharpness.value"),
    ),
    BadInputCase(
        "import_frame_count_beyond_64_bits_into_new_folder",
        _import_case("huge.json", _huge_frame_count, into="new"),
        ("{tmp}/huge.json: invalid release", "$.videos[0].num_frames"),
    ),
    BadInputCase(
        "export_without_out_option",
        lambda folder: _cli("export", registry_workspace(folder), store=folder / "ws"),
        ("vadscene export: Missing option '--out'", "(see 'vadscene export --help')"),
        exit_code=2,
    ),
    BadInputCase(
        "cli_unknown_command",
        lambda folder: _cli(
            "exprot",
            registry_workspace(folder),
            "--out",
            folder / "r.json",
            absent=folder / "r.json",
        ),
        ("vadscene: No such command 'exprot'", "(see 'vadscene --help')"),
        exit_code=2,
    ),
    BadInputCase(
        "measure_unknown_option",
        lambda folder: _cli(
            "measure", root := registry_workspace(folder), "--worker", "1", store=root
        ),
        ("vadscene measure: No such option: --worker (Possible options: --workers)",),
        exit_code=2,
    ),
    BadInputCase(
        "audit_bootstrap_not_an_integer",
        _audit_with("--bootstrap", "abc"),
        ("vadscene audit: Invalid value for '--bootstrap'", "valid integer", "(got 'abc')"),
        exit_code=2,
    ),
    BadInputCase(
        "labelstudio_import_export_is_a_folder",
        lambda folder: _cli(
            "labelstudio-import",
            root := registry_workspace(folder),
            _taken_by_a_folder(folder),
            store=root,
        ),
        ("error: {tmp}/export.json: is a folder; expected a file",),
    ),
    BadInputCase(
        "measure_unreachable_scheduler",
        _unreachable_scheduler,
        (
            "--scheduler tcp://127.0.0.1:",
            "cannot connect to the Dask scheduler within 1 s",
            "expected a running scheduler at an address like tcp://host:8786",
        ),
    ),
    # --- the crash list (issue 14) ---
    BadInputCase(
        "scan_non_utf8_file_name",
        _scan_non_utf8_name,
        ("1 files could not be registered", "Arson\\xe9002.mp4: file name is not valid UTF-8"),
        exit_code=0,
        stream="stdout",
        may_change=frozenset({"unreadable_files"}),
    ),
    BadInputCase(
        "init_non_utf8_file_name",
        _init_non_utf8_name,
        (
            "1 videos registered",
            "1 files could not be registered",
            "Arson\\xe9002.mp4: file name is not valid UTF-8",
        ),
        exit_code=0,
        stream="stdout",
    ),
    BadInputCase(
        "audit_every_frame_anomalous",
        _audit_case(None, [f"{GOOD} Abuse 0 30", f"{NORMAL} Fighting 0 25"]),
        (
            "{tmp}/gt.txt: all 55 frames of the 2 videos are anomalous; AUROC compares "
            "anomalous with normal frames",
        ),
    ),
    BadInputCase(
        "audit_no_frame_anomalous",
        _audit_case(_good_scores, [f"{GOOD} Abuse -1 -1", GT_LINES[1]]),
        ("{tmp}/gt.txt: none of the 55 frames of the 2 videos is anomalous",),
    ),
    BadInputCase(
        "audit_frame_count_of_ten_to_the_fourteen",
        _audit_case(None, [f"{GOOD} 100000000000000 Abuse 5 12", f"{NORMAL} 25 Normal -1 -1"]),
        (
            "{tmp}/gt.txt: the ground truth's 2 videos hold 100,000,000,000,025 frames in all "
            f"(video {GOOD} alone 100,000,000,000,000",
            "GiB of memory; this machine has",
        ),
    ),
    BadInputCase(
        "audit_negative_seed",
        _audit_with("--seed", "-1"),
        ("the bootstrap seed must be an integer ≥ 0, got -1",),
    ),
    BadInputCase(
        "demo_negative_seed",
        lambda folder: _cli("demo", folder / "demo", "--seed", "-1", absent=folder / "demo"),
        ("the demo seed must be an integer ≥ 0, got -1",),
    ),
    BadInputCase(
        "thresholds_nan_value",
        _thresholds_value("nan"),
        ("rule 'explicit': thresholds must be finite numbers, got (nan,)",),
    ),
    BadInputCase(
        "validate_duplicated_json_key",
        lambda folder: _cli("validate", _release_with_a_duplicated_key(folder)),
        (
            "{tmp}/twice.json: not valid JSON (a key appears twice in one object (the object "
            "starting at line 1 column ",
        ),
    ),
    BadInputCase(
        "import_duplicated_json_key",
        lambda folder: _cli(
            "import",
            registry_workspace(folder),
            _release_with_a_duplicated_key(folder),
            store=folder / "ws",
        ),
        (
            "{tmp}/twice.json: not valid JSON (a key appears twice in one object (the object "
            "starting at line 1 column ",
        ),
    ),
    BadInputCase(
        "audit_models_file_duplicated_json_key",
        _models_file_with_a_duplicated_key,
        (
            "{tmp}/models.json: not valid JSON (a key appears twice in one object (the object "
            "starting at line 1 column 2)",
        ),
    ),
    BadInputCase(
        "init_catalogue_value_spelling_ambiguous",
        _init_with_value_ambiguous,
        (
            "{tmp}/catalogue.yaml: invalid catalogue",
            "factor 'color': $.factors[0]: ' Ambiguous' is reserved (every factor admits "
            "'ambiguous', in any case or spacing)",
        ),
    ),
    BadInputCase(
        "audit_report_into_a_folder_of_other_files",
        _audit_into_a_folder_of_other_files,
        ("{tmp}/papers: holds files that are not an audit report (e.g. draft.tex)",),
    ),
    # --- truth across merges (issue 24) ---------------------------------------------------
    BadInputCase(
        "validate_decision_from_the_future",
        _validate_case("future.json", _decision_in_2999),
        (
            "$.videos[0].factors.color.decisions[0].decided_at: 2999-01-01T00:00:00.000000+00:00 "
            "is later than the release's created_at",
        ),
    ),
    BadInputCase(
        "import_decision_from_the_future",
        _import_case("future.json", _decision_in_2999, into="existing"),
        ("decided_at: 2999-01-01T00:00:00.000000+00:00 is later than",),
    ),
    BadInputCase(
        "validate_terciles_in_decreasing_order",
        _validate_case("rule.json", _decreasing_rule),
        ("$.thresholds[0]: thresholds must be in increasing order, got [9.0, 1.0]",),
    ),
    BadInputCase(
        "import_lone_surrogate_in_a_note",
        _import_case("surrogate.json", _surrogate_note, into="existing"),
        ("note: holds U+DFFF, which is not text",),
    ),
    BadInputCase(
        "store_decision_time_not_an_instant",
        _store_case(
            lambda store: store.record_decision(
                GOOD, "color", "color", annotator="ana", decided_at="2026-13-01T00:00:00+00:00"
            )
        ),
        ("decided_at: '2026-13-01T00:00:00+00:00' is not an ISO 8601 time",),
        exit_code=None,
    ),
    BadInputCase(
        "store_naive_mark_time",
        _store_case(
            lambda store: store.set_mark(
                GOOD, "flag", True, annotator="ana", marked_at="2026-01-01T00:00:00"
            )
        ),
        ("marked_at: 2026-01-01T00:00:00 has no UTC offset",),
        exit_code=None,
    ),
    BadInputCase(
        "store_motion_rule_on_sharpness",
        _store_case(
            lambda store: store.set_threshold("motion", "sharpness", "terciles", [1.0, 2.0])
        ),
        (
            "threshold rule of factor 'motion': factor 'motion' is measured by 'motion', not "
            "'sharpness'",
        ),
        exit_code=None,
    ),
)
