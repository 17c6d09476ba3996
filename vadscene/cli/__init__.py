"""The ``vadscene`` command line: thin commands over the library.

Every command prints what it did, shows progress for long work, reports every failure as one
line naming the thing and what was expected (exit code 2 for usage errors, 1 otherwise; see
:func:`run`), and ends its ``--help`` with an example (a test enforces it).
"""

from __future__ import annotations

import errno
import json
import math
import os
import socket
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Column, Table
from rich.text import Text

from vadscene import __version__
from vadscene.core import jsonio
from vadscene.core.errors import ReleaseError, VadsceneError, validation_problems
from vadscene.core.paths import output_folder
from vadscene.measure.thresholds import PoleChanges
from vadscene.store.workspace import (
    CATEGORY_RULES,
    GROUND_TRUTH_FORMATS,
    GroundTruthRef,
    NamingRules,
    ScanReport,
    Workspace,
)

app = typer.Typer(
    name="vadscene",
    help="Label scene factors on VAD benchmarks, publish releases, audit model scores.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)

WorkspaceArg = Annotated[Path, typer.Argument(help="Workspace folder.", show_default=False)]


@contextmanager
def _progress(description: str) -> Iterator[Callable[..., None]]:
    """A progress bar on stderr; yields ``update(done, total, current="")``."""
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        TextColumn("{task.fields[current]}", style="dim"),
        console=err,
        transient=True,
    ) as progress:
        task = progress.add_task(description, total=None, current="")

        def update(done: int, total: int, current: str = "") -> None:
            progress.update(task, completed=done, total=total, current=current)

        yield update


def _scan_with_progress(workspace: Workspace) -> ScanReport:
    with _progress("Probing videos") as update:
        return workspace.scan(update)


def _print_scan(report: ScanReport, workspace: Workspace) -> None:
    out.print(
        f"{workspace.root}: {report.registered} videos registered "
        f"({len(report.added)} new, {len(report.updated)} re-probed, "
        f"{len(report.unchanged)} unchanged)"
    )
    if report.unreadable:
        out.print(f"[yellow]{len(report.unreadable)} files could not be registered:[/yellow]")
        for path, reason in report.unreadable:
            out.print(f"  {path}: {reason}", markup=False)
    for name, absent in report.unlisted_in_split.items():
        out.print(
            f"[yellow]split '{name}': {len(absent)} listed videos are not in the video folder:"
            f"[/yellow] {', '.join(absent[:10])}{' …' if len(absent) > 10 else ''}"
        )
    if report.missing:
        out.print(
            f"[yellow]{len(report.missing)} registered videos are no longer in the video folder "
            "(their decisions are kept):[/yellow] " + ", ".join(report.missing),
        )


@app.command(
    epilog="Example: vadscene init ucf-ws --videos /data/UCF_Crimes/Videos "
    "--gt Temporal_Anomaly_Annotation.txt --gt-format ucf-crime --split test=Anomaly_Test.txt"
)
def init(
    workspace: WorkspaceArg,
    videos: Annotated[Path, typer.Option(help="Folder of the benchmark's videos (recursive).")],
    catalog: Annotated[
        Path | None,
        typer.Option(help="Scene-factor catalogue (YAML/JSON); default: UCF-Crime's."),
    ] = None,
    gt: Annotated[Path | None, typer.Option(help="Temporal ground-truth file or folder.")] = None,
    gt_format: Annotated[
        str, typer.Option(help=f"Ground-truth format: {', '.join(GROUND_TRUTH_FORMATS)}.")
    ] = "ucf-crime",
    dataset: Annotated[
        str | None, typer.Option(help="Dataset name (default: catalogue's).")
    ] = None,
    category_rule: Annotated[
        str,
        typer.Option(help="Category from: ucf-crime (name prefix), folder, regex, none."),
    ] = "ucf-crime",
    category_regex: Annotated[
        str | None, typer.Option(help="With --category-rule regex: a named group 'category'.")
    ] = None,
    split: Annotated[
        list[str] | None,
        typer.Option(help="NAME=LIST_FILE: videos named in the list belong to split NAME."),
    ] = None,
) -> None:
    """Create a workspace for a benchmark and register its videos."""
    _require_choice("--gt-format", gt_format, GROUND_TRUTH_FORMATS)
    _require_choice("--category-rule", category_rule, CATEGORY_RULES)
    if category_rule == "regex" and not category_regex:
        raise VadsceneError("--category-rule regex needs --category-regex with a group 'category'")
    try:
        naming = NamingRules(category_rule=category_rule, category_regex=category_regex)
    except ValidationError as exc:
        reasons = [problem.split(": ", 1)[-1] for problem in validation_problems(exc)]
        raise VadsceneError(f"--category-regex: {'; '.join(reasons)}") from None
    reports: list[ScanReport] = []
    ws = Workspace.create(
        workspace,
        video_root=videos,
        dataset=dataset,
        catalogue_path=catalog,
        ground_truth=GroundTruthRef(path=str(gt), format=gt_format) if gt else None,
        naming=naming,
        splits=dict(_split_option(s) for s in split or []),
        populate=lambda created: reports.append(_scan_with_progress(created)),
    )
    with ws:
        _print_scan(reports[0], ws)


def _split_option(value: str) -> tuple[str, Path]:
    name, sep, path = value.partition("=")
    if not sep or not name or not path:
        raise VadsceneError(
            f"--split takes NAME=LIST_FILE, e.g. test=Anomaly_Test.txt; got '{value}'"
        )
    return name, Path(path)


def _require_choice(option: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise VadsceneError(f"unknown {option} '{value}' (expected one of: {', '.join(choices)})")


@app.command(epilog="Example: vadscene scan ucf-ws")
def scan(workspace: WorkspaceArg) -> None:
    """Re-scan a workspace's video folder: add new videos, re-probe changed ones."""
    with Workspace.open(workspace) as ws:
        _print_scan(_scan_with_progress(ws), ws)


@app.command(epilog="Example: vadscene status ucf-ws")
def status(workspace: WorkspaceArg) -> None:
    """Show a workspace's videos, annotators and annotation progress."""
    with Workspace.open(workspace, read_only=True) as ws:
        store = ws.store
        out.print(
            Text.assemble(
                (ws.config.dataset, "bold"),
                f" at {ws.root}: {len(store.videos())} videos, catalogue "
                f"'{ws.catalogue.name}' ({len(ws.catalogue.factors)} factors)",
            )
        )
        annotators = store.annotators()
        if not annotators:
            out.print("no annotator has recorded a decision yet", markup=False)
        progress = {name: store.progress(name) for name in annotators}
        manual = [f.key for f in ws.catalogue.factors if f.source == "manual"]
        # Factors down, annotators across (a few per table): readable at 80 columns, where
        # one column per factor was squeezed to "co…".
        for start in range(0, len(annotators), _STATUS_ANNOTATORS_PER_TABLE):
            names = annotators[start : start + _STATUS_ANNOTATORS_PER_TABLE]
            table = Table(Column("videos decided", overflow="fold"))
            for name in names:
                table.add_column(Text(name), justify="right", overflow="fold")
            table.add_row(
                "videos complete",
                *(f"{progress[n].complete}/{progress[n].videos}" for n in names),
                end_section=True,
            )
            for key in manual:
                table.add_row(key, *(str(progress[n].decided_by_factor[key]) for n in names))
            out.print(table)
        for path, reason in store.unreadable_files():
            out.print(Text.assemble(("unreadable", "yellow"), f" {path}: {reason}"))


_STATUS_ANNOTATORS_PER_TABLE = 4


@app.command(epilog="Example: vadscene demo /tmp/demo-ws && vadscene app /tmp/demo-ws")
def demo(
    workspace: WorkspaceArg,
    seed: Annotated[int, typer.Option(help="Seed of the generated benchmark.")] = 0,
) -> None:
    """Build the demo benchmark (synthetic videos, ground truth, model scores) as a workspace."""
    from vadscene.demo import build_demo_workspace

    with _progress("Rendering demo videos") as update:
        ws = build_demo_workspace(workspace, seed=seed, progress=update)
    with ws:
        out.print(
            f"demo workspace {ws.root}: {len(ws.store.video_ids())} videos, ground truth "
            f"{ws.ground_truth_path}, scores under {ws.root / 'benchmark' / 'scores'}"
        )


@app.command(
    epilog="Example: vadscene export ucf-ws --out releases/ucf-v1.json --csv releases/ucf-v1.csv"
)
def export(
    workspace: WorkspaceArg,
    out_file: Annotated[
        Path,
        typer.Option("--out", help="Release JSON file to write (missing folders are created)."),
    ],
    csv_file: Annotated[
        Path | None,
        typer.Option(
            "--csv",
            help="Also write this CSV: one row per video, the resolved value and how it was "
            "resolved per factor (unlabelled / ambiguous / disagreement told apart), and the "
            "measurements.",
        ),
    ] = None,
    annotator: Annotated[
        str | None,
        typer.Option(
            help="Release one annotator's decisions (plus auto poles) instead of the values "
            "resolved across all annotators."
        ),
    ] = None,
) -> None:
    """Export the workspace's annotations as a versioned JSON release (and CSV).

    Values are resolved across all annotators unless --annotator is given.
    """
    from vadscene.release.releases import build_release, write_release

    targets = [
        (t.parent, what) for t, what in ((out_file, "the release"), (csv_file, "the CSV")) if t
    ]
    for folder, what in targets:  # refuse a file in the way before any work
        output_folder(folder, what, create=False)
    with Workspace.open(workspace, read_only=True) as ws:
        release = build_release(ws, annotator=annotator)
    for folder, what in targets:
        output_folder(folder, what)
    schema_path = write_release(release, out_file, csv_path=csv_file)
    out.print(
        f"wrote {out_file} ({len(release.videos)} videos, annotators: "
        f"{', '.join(release.annotators) or 'none'}) and schema {schema_path}"
    )
    if csv_file:
        out.print(f"wrote {csv_file}")


@app.command(epilog="Example: vadscene diff releases/ucf-v1.json releases/ucf-v2.json")
def diff(
    old_file: Annotated[Path, typer.Argument(help="The older release JSON.", show_default=False)],
    new_file: Annotated[Path, typer.Argument(help="The newer release JSON.", show_default=False)],
) -> None:
    """Show what changed between two releases: videos, decisions, resolved values, support."""
    from vadscene.release.releases import diff_releases, read_release

    changes = diff_releases(read_release(old_file), read_release(new_file))
    out.print(f"{old_file} → {new_file}: {changes.summary()}", markup=False)
    for title, table in (
        ("videos", changes.videos),
        ("decisions", changes.decisions),
        ("resolved values", changes.values),
        ("support", changes.support),
    ):
        if not table.empty:
            out.print(f"\n{title}:", markup=False)
            out.print(table.fillna("—").to_string(index=False), markup=False, highlight=False)


@app.command(epilog="Example: vadscene validate releases/ucf-v1.json")
def validate(
    release_file: Annotated[Path, typer.Argument(help="Release JSON file.", show_default=False)],
) -> None:
    """Check a release file; print OK or every error with its JSON path (exit code 1)."""
    from vadscene.release.releases import read_release

    try:
        release = read_release(release_file)
    except ReleaseError as exc:
        err.print(str(exc), markup=False, highlight=False)
        raise typer.Exit(1) from None
    out.print(
        f"OK: {release_file} — {release.dataset}, {len(release.videos)} videos, "
        f"schema version {release.schema_version}"
    )


@app.command(name="import", epilog="Example: vadscene import new-ws releases/ucf-v1.json")
def import_(
    workspace: WorkspaceArg,
    release_file: Annotated[Path, typer.Argument(help="Release JSON file.", show_default=False)],
) -> None:
    """Load a release: merge it into a workspace, or create the workspace from it."""
    from vadscene.release.releases import import_release, read_release, workspace_from_release

    release = read_release(release_file)
    if (workspace / "vadscene.yaml").exists():
        with Workspace.open(workspace) as ws:
            counts = import_release(release, ws, origin=str(release_file))
        out.print(
            f"merged {release_file} into {workspace}: {counts.decisions_added} decisions added, "
            f"{counts.decisions_already_present} already present, {counts.videos_added} videos "
            f"added, {counts.marks_set} marks set",
            markup=False,
        )
        for name, added in counts.added_by_annotator.items():
            out.print(f"  {name}: {added} decisions added", markup=False)
        if counts.conflicts:
            out.print(
                f"{len(counts.conflicts)} imported decisions are older than the workspace's "
                "own and were kept as history only (the newer value stays current):",
                markup=False,
            )
            for c in counts.conflicts:
                out.print(
                    f"  {c.video_id} {c.factor} ({c.annotator}): imported {c.imported_value} "
                    f"of {c.imported_at}, kept {c.local_value} of {c.local_at}",
                    markup=False,
                )
    else:
        with workspace_from_release(release, workspace) as ws:
            out.print(
                f"created {workspace} from {release_file}: {len(ws.store.video_ids())} videos, "
                f"{len(ws.store.decision_log())} decisions (no video files)"
            )


@app.command(epilog="Example: vadscene measure ucf-ws --workers 2")
def measure(
    workspace: WorkspaceArg,
    workers: Annotated[
        int | None, typer.Option(help="Local worker processes (default: one per core).")
    ] = None,
    scheduler: Annotated[
        str | None,
        typer.Option(
            help="Dask scheduler address (tcp://host:8786) to run on a cluster; needs "
            "pip install 'vadscene[dask]'."
        ),
    ] = None,
    scheduler_timeout: Annotated[
        float, typer.Option(help="Seconds to wait for the Dask scheduler to answer.")
    ] = 30.0,
    only_new: Annotated[
        bool, typer.Option(help="Measure only videos that have no measurement yet.")
    ] = False,
    allow_partial: Annotated[
        bool,
        typer.Option(
            help="Measure the frames that decode of a video that delivers fewer than it "
            "declares (recorded as frames_read) instead of failing it."
        ),
    ] = False,
) -> None:
    """Measure sharpness, motion and a colour hint per video; derive the auto factors' poles.

    Cached by content and parameters, resumable after an interruption, never overwriting an
    annotator's override. Exit code 1 when any video could not be measured.
    """
    from vadscene.measure.run import measure_workspace

    with Workspace.open(workspace) as ws, _progress("Measuring") as update:

        def show(done: int, total: int, footage: float, current: str) -> None:
            update(done, total, f"{footage / 3600:.2f} h of footage · {current}")

        report = measure_workspace(
            ws,
            workers=workers,
            scheduler=scheduler,
            scheduler_timeout=scheduler_timeout,
            only_new=only_new,
            progress=show,
            allow_partial=allow_partial,
        )
        files = {video_id: ws.video_path(video_id) for video_id, _reason in report.failed}
    speed = report.footage_seconds / report.wall_seconds if report.wall_seconds else 0
    out.print(
        f"measured {len(report.measured)} videos ({report.footage_seconds / 3600:.2f} h of "
        f"footage, {speed:.0f}x real time), reused {len(report.reused)}, "
        f"failed {len(report.failed)}"
    )
    for change in report.rules:
        _print_pole_changes(change)
    for video_id, reason in report.failed:
        err.print(
            f"  failed {video_id}: {reason} ({files[video_id]})",
            markup=False,
            highlight=False,
        )
    if report.failed:
        raise typer.Exit(1)


@app.command(epilog="Example: vadscene thresholds ucf-ws motion --rule terciles --dry-run")
def thresholds(
    workspace: WorkspaceArg,
    factor: Annotated[str, typer.Argument(help="Auto factor key, e.g. resolution or motion.")],
    rule: Annotated[
        str | None, typer.Option(help="median, terciles or explicit (default: rule in force).")
    ] = None,
    value: Annotated[
        list[float] | None, typer.Option(help="Threshold for --rule explicit (once or twice).")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option(help="Show how many videos would change pole; write nothing.")
    ] = False,
) -> None:
    """Set an auto factor's threshold rule and re-derive its poles (overrides are kept)."""
    from vadscene.measure.thresholds import apply_rule, preview_rule

    if rule is not None:
        _require_choice("--rule", rule, ("median", "terciles", "explicit"))
    with Workspace.open(workspace) as ws:
        change = (preview_rule if dry_run else apply_rule)(
            ws.store, factor, rule, tuple(value or ())
        )
    _print_pole_changes(change, applied=not dry_run)


def _print_pole_changes(change: PoleChanges, *, applied: bool = True) -> None:
    counts = ", ".join(f"{pole} {n}" for pole, n in change.counts().items())
    verb = "changed" if applied else "would change"
    out.print(
        f"{change.factor}: {change.statistic} {change.rule} "
        f"{[round(t, 4) for t in change.thresholds]} → {counts}; "
        f"{len(change.changed)} videos {verb} pole"
    )


@app.command(epilog="Example: vadscene proxies ucf-ws")
def proxies(workspace: WorkspaceArg) -> None:
    """Make H.264 MP4 proxies of videos a browser cannot play, and every video's filmstrip
    (cached, incremental)."""
    from vadscene.video.proxies import build_proxies
    from vadscene.video.thumbnails import build_filmstrips

    with Workspace.open(workspace) as ws, _progress("Making proxies") as update:
        report = build_proxies(ws, progress=update)
    for video_id in report.made:
        out.print(f"  made {video_id}: {report.unplayable.get(video_id, '')}", markup=False)
    for path in report.removed_temporaries:
        out.print(f"  removed {path}, left by an interrupted run", markup=False)
    out.print(
        f"proxies: {len(report.made)} made, {len(report.reused)} reused, "
        f"{report.not_needed} videos play as they are, {len(report.failed)} failed"
    )
    for video_id, reason in report.failed:
        err.print(f"  failed {video_id}: {reason}", markup=False, highlight=False)
    with Workspace.open(workspace) as ws, _progress("Making filmstrips") as update:
        strips = build_filmstrips(ws, progress=update)
    out.print(
        f"filmstrips: {len(strips.made)} made, {len(strips.reused)} reused, "
        f"{len(strips.failed)} failed"
    )
    for video_id, reason in strips.failed:
        err.print(f"  failed {video_id}: {reason}", markup=False, highlight=False)
    if report.failed or strips.failed:
        raise typer.Exit(1)


@app.command(
    epilog="Example: vadscene audit --gt Temporal_Anomaly_Annotation.txt --frame-counts "
    "frames.txt --scores rtfm=scores/rtfm@i3d --scores vadclip=scores/vadclip.csv@clip "
    "--snippet-repeat 16 --release releases/ucf-v1.json --out audit-report"
)
def audit(
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for the report files.")],
    gt: Annotated[
        Path | None,
        typer.Option(help="Temporal ground truth (default: the --workspace's, if configured)."),
    ] = None,
    gt_format: Annotated[
        str | None,
        typer.Option(
            help=f"Ground-truth format ({', '.join(GROUND_TRUTH_FORMATS)}); "
            "default: detected from the file."
        ),
    ] = None,
    interval_end: Annotated[
        str, typer.Option(help="Interval ends in the ground truth: exclusive or inclusive.")
    ] = "exclusive",
    frame_counts: Annotated[
        Path | None,
        typer.Option(help="Frame counts file (id count per line) when the GT has no counts."),
    ] = None,
    scores: Annotated[
        list[str] | None,
        typer.Option(
            help="NAME=PATH[@FAMILY][:K] per model: .npy folder, .npy, CSV or Parquet; "
            ":K = this model's scores are per snippet of K frames (overrides --snippet-repeat)."
        ),
    ] = None,
    models_file: Annotated[
        Path | None,
        typer.Option(
            "--models",
            help="JSON list of {name, path, family, snippet_repeat} (paths relative to the "
            "file; family and snippet_repeat optional), e.g. the demo's benchmark/models.json; "
            "combines with --scores.",
        ),
    ] = None,
    snippet_repeat: Annotated[
        int,
        typer.Option(
            help="Scores are per snippet of this many frames (16 is common), for every model "
            "that gives no :K of its own."
        ),
    ] = 1,
    video_order: Annotated[
        Path | None,
        typer.Option(help="Video list giving the order of a concatenated .npy score file."),
    ] = None,
    release: Annotated[
        Path | None, typer.Option(help="Scene labels from this release file.")
    ] = None,
    workspace: Annotated[
        Path | None,
        typer.Option(
            help="Ground truth, frame counts and scene labels (unless --release or --labels) "
            "from this workspace."
        ),
    ] = None,
    labels: Annotated[
        Path | None,
        typer.Option(
            help="Scene labels from a table (CSV/TSV/Parquet): long (video, factor, value), "
            "wide (a video column and one column per factor), or an `export --csv` file."
        ),
    ] = None,
    catalogue: Annotated[
        Path | None,
        typer.Option(
            help="Catalogue the --labels table is checked against (default: UCF-Crime's)."
        ),
    ] = None,
    bootstrap: Annotated[int, typer.Option(help="Bootstrap replicates (0 = none).")] = 1000,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap draws.")] = 0,
    definition_scores: Annotated[
        list[str] | None,
        typer.Option(
            help="NAME=PATH[@FAMILY] per model scored once per definition: a table video, "
            "frame, definition, score (CSV/Parquet) or a folder of (T × D) .npy with "
            "definitions.txt; adds the definition-following probes."
        ),
    ] = None,
    events: Annotated[
        Path | None,
        typer.Option(
            help="Events table video, start, end, class giving the classes of anomalous "
            "frames (default: each video's category)."
        ),
    ] = None,
    queries: Annotated[
        Path | None,
        typer.Option(
            help='D@5 queries: JSON list of {"definition", "classes"} (default: one '
            "singleton query per class)."
        ),
    ] = None,
    features: Annotated[
        list[str] | None,
        typer.Option(
            help="NAME=PATH[@FAMILY] per model: folder of per-video (snippets × d) .npy "
            "features; adds the prototype readout."
        ),
    ] = None,
    feature_snippet_frames: Annotated[
        int | None, typer.Option(help="Frames per feature snippet (default 16).")
    ] = None,
    interval_ap: Annotated[
        bool,
        typer.Option(
            "--interval-ap",
            help="Also interval AP by the released VadCLIP rule (original, video-mean, "
            "whole-video intervals).",
        ),
    ] = False,
    soft_labels: Annotated[
        Path | None,
        typer.Option(
            help="Soft frame labels in [0, 1] (table video, frame, label, e.g. the share of "
            "annotators): adds each model's Prob-AUC."
        ),
    ] = None,
    probes_file: Annotated[
        Path | None,
        typer.Option(
            "--probes",
            help="JSON object listing definition_scores and features ({name, path, family}), "
            "queries, events (paths relative to the file), e.g. the demo's "
            "benchmark/probes.json; combines with the options above.",
        ),
    ] = None,
    latex: Annotated[
        bool,
        typer.Option(
            "--latex",
            help="Also write booktabs LaTeX tables (metrics, bias, resolved pairs) to OUT/latex.",
        ),
    ] = False,
    svg: Annotated[
        bool,
        typer.Option(
            "--svg",
            help="Also render every figure to OUT/figures/NAME.svg, shown in report.md "
            "(≈ 0.2 s a figure; report.html draws them in the browser either way).",
        ),
    ] = False,
) -> None:
    """Audit model frame scores: AUROC granularities, bootstrap CIs, scene bias; write a report.

    Without --scores it reports the benchmark's composition (a ground-truth-only run).
    """
    from vadscene.audit import run_audit
    from vadscene.audit.io.scores import parse_scores_argument
    from vadscene.audit.io.soft_labels import load_soft_labels
    from vadscene.audit.io.sources import (
        gather_inputs,
        gather_probe_inputs,
        read_model_list,
        read_probe_list,
    )
    from vadscene.audit.report.writer import (
        REPORT_STEPS,
        bias_warnings,
        check_report_folder,
        write_report,
    )

    _require_choice("--interval-end", interval_end, ("exclusive", "inclusive"))
    output_folder(out_dir, "the audit report", create=False)  # created once the inputs are read
    check_report_folder(out_dir)
    specs = [parse_scores_argument(a) for a in scores or []]
    specs += read_model_list(models_file) if models_file else []
    ground_truth, models, scene = gather_inputs(
        ground_truth=gt,
        ground_truth_format=gt_format,
        interval_end=interval_end,
        frame_counts=frame_counts,
        models=specs,
        snippet_repeat=snippet_repeat,
        video_order=video_order,
        release=release,
        workspace=workspace,
        labels=labels,
        catalogue=catalogue,
    )
    listed = read_probe_list(probes_file) if probes_file else {}
    definition_models, classes, query_list, feature_models = gather_probe_inputs(
        ground_truth,
        definition_scores=[parse_scores_argument(a) for a in definition_scores or []]
        + listed.get("definition_scores", []),
        events=events or listed.get("events"),
        queries=queries or listed.get("queries"),
        features=[parse_scores_argument(a) for a in features or []] + listed.get("features", []),
        snippet_repeat=snippet_repeat,
        feature_snippet_frames=feature_snippet_frames or listed.get("feature_snippet_frames", 16),
    )
    with _progress("Auditing") as update:
        result = run_audit(
            ground_truth,
            models,
            scene,
            n_bootstrap=bootstrap,
            seed=seed,
            progress=lambda step, done, total: update(done, total, step),
            definition_scores=definition_models,
            classes=classes,
            queries=query_list,
            features=feature_models,
            soft_labels=load_soft_labels(soft_labels, ground_truth) if soft_labels else None,
            interval_ap=interval_ap,
        )
    with _progress("Writing the report") as update:
        written = write_report(
            result,
            out_dir,
            svg=svg,
            progress=lambda step: update(REPORT_STEPS.index(step), len(REPORT_STEPS), step),
        )
    if latex:
        from vadscene.audit.report.latex import write_latex_tables

        written |= {
            f"latex/{n}": p for n, p in write_latex_tables(result, out_dir / "latex").items()
        }
    for warning in bias_warnings(result):
        err.print(f"warning: {warning}", markup=False, highlight=False)
    coverage = result.conventions.get("scene_coverage") or {}
    full = f"{result.summary['videos']} of {result.summary['videos']} videos"
    if any(covered != full for covered in coverage.values()):
        out.print(
            "scene labels cover " + ", ".join(f"{k}: {c}" for k, c in coverage.items()),
            markup=False,
        )
    summary = result.summary
    out.print(
        f"{summary['videos']} videos, {summary['frames']} frames, "
        f"w = {100 * summary['within_pair_fraction']:.3f} % within-video pairs, oracle "
        f"video-constant AUROC {summary['oracle_video_constant_auroc']:.4f}"
    )
    if models:
        micro = result.metrics.query("granularity == 'micro'")
        for row in micro.itertuples():
            out.print(  # not markup: "[0.81, 0.93]" and "[nan, nan]" are text
                f"  {row.model}: micro AUROC {row.value:.4f} [{row.ci_low:.4f}, {row.ci_high:.4f}]",
                markup=False,
            )
    probes = result.definition_probes
    for row in probes[probes["metric"] == "auroc"].itertuples() if not probes.empty else ():
        value = f"{row.value:+.4f}" if math.isfinite(row.value) else "n/a (no input for it)"
        out.print(f"  {row.model}: {row.probe} {value}", markup=False)
    out.print(f"wrote {', '.join(p.name for p in written.values())} to {out_dir}")


@app.command(
    epilog="Example: vadscene splices --workspace ucf-ws --out splices/ (the controlled DC-Sel "
    "set: 20 span pairs per ordered class pair, seed 7)"
)
def splices(
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for the splice set.")],
    workspace: Annotated[
        Path | None,
        typer.Option(help="Ground truth, frame counts and video files from this workspace."),
    ] = None,
    gt: Annotated[Path | None, typer.Option(help="Temporal ground truth file.")] = None,
    interval_end: Annotated[
        str, typer.Option(help="Interval ends in the ground truth: exclusive or inclusive.")
    ] = "exclusive",
    frame_counts: Annotated[
        Path | None, typer.Option(help="Frame counts file when the GT has no counts.")
    ] = None,
    videos: Annotated[
        Path | None, typer.Option(help="Folder of the source videos (file stem = video id).")
    ] = None,
    features: Annotated[
        Path | None,
        typer.Option(help="Folder of per-video (snippets × d) .npy features: splice these too."),
    ] = None,
    events: Annotated[
        Path | None,
        typer.Option(help="Events table video, start, end, class (default: video categories)."),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the span and context draws.")] = 7,
    pairs: Annotated[int, typer.Option(help="Span pairs per ordered class pair.")] = 20,
    step_frames: Annotated[int, typer.Option(help="Frames per feature step.")] = 16,
    min_steps: Annotated[int, typer.Option(help="Shorter spans are dropped.")] = 5,
    max_steps: Annotated[int, typer.Option(help="Longer spans are centre-cropped.")] = 32,
    context_steps: Annotated[int, typer.Option(help="Steps of each normal segment.")] = 8,
) -> None:
    """Build the controlled two-event splices N0 ⊕ A ⊕ N1 ⊕ B ⊕ N2 for DC-SelΔ: real video
    files (and/or spliced features) with their ground truth and events table."""
    from vadscene.audit.io.definitions import classes_from_categories, load_events
    from vadscene.audit.io.sources import gather_inputs
    from vadscene.audit.splices import (
        plan_splices,
        write_plan_files,
        write_splice_features,
        write_splice_videos,
    )
    from vadscene.video.probe import iter_video_files

    _require_choice("--interval-end", interval_end, ("exclusive", "inclusive"))
    if videos is None and workspace is None and features is None:
        raise VadsceneError("splices: give --videos, --workspace (its videos) or --features")
    output_folder(out_dir, "the splice set", create=False)
    truth, _, _ = gather_inputs(
        ground_truth=gt, interval_end=interval_end, frame_counts=frame_counts, workspace=workspace
    )
    classes = load_events(events, truth) if events else classes_from_categories(truth)
    plan = plan_splices(
        truth,
        classes,
        seed=seed,
        pairs=pairs,
        step_frames=step_frames,
        min_steps=min_steps,
        max_steps=max_steps,
        context_steps=context_steps,
    )
    video_files: dict[str, Path] = {}
    if videos is not None:
        video_files = {p.stem: p for p in iter_video_files(videos)}
    elif workspace is not None:
        with Workspace.open(workspace) as ws:
            needed = {s.video for splice in plan for s in splice.segments}
            video_files = {v: ws.video_path(v) for v in sorted(needed)}
    needed = sorted({s.video for splice in plan for s in splice.segments})
    absent = [v for v in needed if v not in video_files] if video_files else []
    if features is not None:
        have = {p.stem for p in Path(features).glob("*.npy")}
        absent += [f"{v} (features)" for v in needed if v not in have]
    if absent:  # checked before anything is written
        raise VadsceneError(
            f"splices: {len(absent)} source videos have no file: {', '.join(absent[:10])}"
        )
    paths = write_plan_files(plan, out_dir, step_frames=step_frames)
    if video_files:
        with _progress("Splicing videos") as update:
            write_splice_videos(plan, video_files, out_dir / "videos", progress=update)
    if features is not None:
        write_splice_features(plan, features, out_dir / "features", step_frames=step_frames)
    out.print(
        f"{len(plan)} splices of {len({(p.target, p.competitor) for p in plan})} ordered class "
        f"pairs (seed {seed}); ground truth {paths['ground_truth'].name}, events "
        f"{paths['events'].name}"
        + (", videos/" if video_files else "")
        + (", features/" if features is not None else "")
        + f" in {out_dir}"
    )


@app.command(
    name="labelstudio-export",
    epilog="Example: vadscene labelstudio-export ucf-ws --out ls/ --base-url http://127.0.0.1:8501",
)
def labelstudio_export(
    workspace: WorkspaceArg,
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for tasks.json + config XML.")],
    base_url: Annotated[
        str, typer.Option(help="Prefix of the video URLs (where `vadscene app` serves).")
    ] = "",
) -> None:
    """Export Label Studio tasks (one per video, decisions as annotations, auto poles as
    predictions) and the matching labeling config."""
    from vadscene.release.labelstudio import write_labelstudio

    with Workspace.open(workspace) as ws:
        tasks_path, config_path = write_labelstudio(ws, out_dir, base_url=base_url)
    out.print(f"wrote {tasks_path} and {config_path}")


@app.command(
    name="labelstudio-import", epilog="Example: vadscene labelstudio-import ucf-ws export.json"
)
def labelstudio_import(
    workspace: WorkspaceArg,
    export_file: Annotated[
        Path, typer.Argument(help="Label Studio JSON export.", show_default=False)
    ],
) -> None:
    """Import a Label Studio JSON export: each Label Studio user becomes an annotator."""
    from vadscene.release.labelstudio import import_export

    try:
        tasks = jsonio.loads(export_file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ReleaseError(f"{export_file}: Label Studio export not found") from None
    except json.JSONDecodeError as exc:
        raise ReleaseError(f"{export_file}: not valid JSON ({exc})") from None
    with Workspace.open(workspace) as ws:
        summary = import_export(ws, tasks, origin=str(export_file))
    out.print(
        f"imported {export_file}: {summary.annotations} annotations, "
        f"{summary.decisions_added} decisions added, {summary.decisions_already_present} "
        f"already present, {summary.cancelled} cancelled ignored"
    )
    if summary.skipped_results:
        skipped = ", ".join(f"{n} {kind}" for kind, n in summary.skipped_results.items())
        out.print(f"skipped results that are not choices (no factor decision): {skipped}")


def _check_port_free(host: str, port: int) -> None:
    """Raise one clear :class:`VadsceneError` when the app could not listen on host:port.

    Binds the way the server will (SO_REUSEADDR, so a port a stopped server left in
    TIME_WAIT is free): only a live listener — another app, another Streamlit — is refused.
    """
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise VadsceneError(
                f"port {port} on {host} is already in use; serve on another one with "
                f"--port (e.g. vadscene app --port {port + 1}, or make app PORT={port + 1})"
            ) from None
        reason = exc.strerror or str(exc)
        raise VadsceneError(f"cannot serve on {host}:{port}: {reason}") from None


@app.command(name="app", epilog="Example: vadscene app ucf-ws --port 8501")
def app_(
    workspace: Annotated[
        Path | None, typer.Argument(help="Workspace (default: the demo workspace).")
    ] = None,
    port: Annotated[int, typer.Option(help="Port to serve on.")] = 8501,
    host: Annotated[
        str, typer.Option(help="Address to bind; 127.0.0.1 keeps the app on this machine.")
    ] = "127.0.0.1",
    allow_host: Annotated[
        list[str] | None,
        typer.Option(
            help="A further host name browsers may reach the app by (repeatable); only "
            "127.0.0.1, localhost, the --host address and these are answered."
        ),
    ] = None,
) -> None:
    """Start the annotation app in the browser."""
    from vadscene.annotate.serving import ALLOWED_HOSTS_VARIABLE
    from vadscene.core.paths import app_server_script, default_demo_workspace

    _check_port_free(host, port)  # before a demo build: a taken port is known at once
    if workspace is None:
        workspace = default_demo_workspace()
        if not (workspace / "vadscene.yaml").exists():
            out.print(f"building the demo workspace at {workspace} …")
            demo(workspace)
    Workspace.open(workspace).close()
    names = [*(allow_host or []), *([host] if host not in ("0.0.0.0", "::") else [])]
    env = {
        **os.environ,
        "VADSCENE_WORKSPACE": str(Path(workspace).resolve()),
        ALLOWED_HOSTS_VARIABLE: ",".join(names),
    }
    settings = {
        "server.address": host,
        "server.port": port,
        "server.headless": "true",
        "browser.gatherUsageStats": "false",
        "client.toolbarMode": "minimal",
        # Streamlit forces a full garbage collection after every run: with the app's imports
        # that is 70–200 ms of CPU per key on the Annotate page, holding the GIL while the
        # confirmation waits to be sent. Python's own collector still runs as it always does.
        "runner.postScriptGC": "false",
        # Streamlit's source watcher (a developer's reload-on-save) walks every imported
        # module's path after each session's first run, on the server's event loop: with the
        # app's imports that held every page load's surface back by 100–200 ms.
        "server.fileWatcherType": "none",
    }
    command = [sys.executable, "-m", "streamlit", "run", str(app_server_script())]
    command += [part for key, value in settings.items() for part in (f"--{key}", str(value))]
    out.print(f"serving {workspace} at http://{host}:{port}")
    sys.stdout.flush()
    # Become the Streamlit server (same process id): stopping `vadscene app` stops the server,
    # with no orphaned child left holding the port.
    os.execve(sys.executable, command, env)


def _version(value: bool) -> None:
    if value:
        out.print(f"vadscene {__version__}")
        raise typer.Exit()


_debug = False
"""Set by ``--debug``: :func:`run` lets errors propagate with their traceback."""


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show version.")
    ] = False,
    debug: Annotated[
        bool, typer.Option("--debug", help="Show the full traceback of an error.")
    ] = False,
) -> None:
    """Label scene factors on VAD benchmarks, publish releases, audit model scores."""
    global _debug
    _debug = debug


def run(argv: list[str] | None = None) -> int:
    """Run the CLI on ``argv`` (default: the process arguments); returns the exit code.

    Every failure is one line on stderr and no traceback (``--debug`` shows it): exit code 2
    for a usage error (unknown command or option, missing or unparsable value), 1 for
    everything else — bad input (:class:`VadsceneError`), a file that cannot be read or
    written, a missing optional dependency, or a bug.
    """
    global _debug
    _debug = False
    try:
        code = app(args=argv, prog_name="vadscene", standalone_mode=False)
    except (typer.Abort, KeyboardInterrupt):
        err.print("aborted")
        return 130
    except Exception as exc:
        if _debug:
            raise
        message, code = _failure(exc)
        if message:
            err.print(f"error: {message}", markup=False, highlight=False, soft_wrap=True)
        return code
    return code if isinstance(code, int) else 0


def _failure(exc: Exception) -> tuple[str, int]:
    """The one-line message and exit code of an error that ended a command."""
    if isinstance(exc, VadsceneError):
        return str(exc), 1
    if isinstance(exc, typer.TyperException):  # typer's own parser: usage and parse errors
        return _usage_message(exc), getattr(exc, "exit_code", 1)
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}{_OS_ERROR_WORDS.get(type(exc), exc.strerror or str(exc))}", 1
    if isinstance(exc, ImportError):
        return (
            f"this command needs the Python module '{exc.name}', which is not installed: "
            "vadscene's dependencies are incomplete (reinstall with pip install vadscene)",
            1,
        )
    return (
        f"unexpected {type(exc).__name__}: {exc} — a bug in vadscene; rerun with "
        "'vadscene --debug ...' for the traceback and report it",
        1,
    )


_OS_ERROR_WORDS = {
    IsADirectoryError: "is a folder; expected a file",
    NotADirectoryError: "part of the path is a file; expected a folder",
    PermissionError: "permission denied (check the file's owner and mode)",
}
"""I/O errors in the words of :func:`run`: what is wrong and what was expected."""


def _usage_message(exc: typer.TyperException) -> str:
    """``vadscene export: Missing option '--out'. (see 'vadscene export --help')``."""
    context = getattr(exc, "ctx", None)
    if context is not None and not exc.format_message():  # no arguments: the help was shown
        return ""
    message = exc.format_message().replace("\n", " ")
    cause = exc.__cause__
    if isinstance(cause, ValidationError):  # a value typer could not convert: show it
        inputs = [e["input"] for e in cause.errors(include_url=False) if "input" in e]
        message += f" (got {inputs[0]!r})" if inputs else ""
    if context is None:
        return message
    return f"{context.command_path}: {message} (see '{context.command_path} --help')"


def main() -> None:
    """Console entry point."""
    sys.exit(run())
