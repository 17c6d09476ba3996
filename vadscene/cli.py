"""The ``vadscene`` command line: thin commands over the library.

Every command prints what it did, shows progress for long work, reports bad input as one clear
message with exit code 1, and ends its ``--help`` with an example (a test enforces it).
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import click
import typer
from pydantic import ValidationError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from vadscene import __version__
from vadscene.errors import ReleaseError, VadsceneError, validation_problems
from vadscene.paths import output_folder
from vadscene.thresholds import PoleChanges
from vadscene.workspace import (
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
    ws = Workspace.create(
        workspace,
        video_root=videos,
        dataset=dataset,
        catalogue_path=catalog,
        ground_truth=GroundTruthRef(path=str(gt), format=gt_format) if gt else None,
        naming=naming,
        splits=dict(_split_option(s) for s in split or []),
    )
    with ws:
        _print_scan(_scan_with_progress(ws), ws)


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
    with Workspace.open(workspace) as ws:
        store = ws.store
        videos = store.videos()
        out.print(
            f"[bold]{ws.config.dataset}[/bold] at {ws.root}: {len(videos)} videos, "
            f"catalogue '{ws.catalogue.name}' ({len(ws.catalogue.factors)} factors)"
        )
        table = Table("annotator", "videos complete", *ws.catalogue.keys)
        for name in store.annotators():
            progress = store.progress(name)
            table.add_row(
                name,
                f"{progress.complete}/{progress.videos}",
                *(str(progress.decided_by_factor.get(k, "auto")) for k in ws.catalogue.keys),
            )
        out.print(table)
        for path, reason in store.unreadable_files():
            out.print(f"[yellow]unreadable[/yellow] {path}: {reason}", markup=True)


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
    out_file: Annotated[Path, typer.Option("--out", help="Release JSON file to write.")],
    csv_file: Annotated[Path | None, typer.Option("--csv", help="Also write this CSV.")] = None,
    annotator: Annotated[
        str | None, typer.Option(help="Release one annotator's decisions (plus auto poles).")
    ] = None,
    consensus: Annotated[
        bool, typer.Option(help="Resolve values across all annotators (the default).")
    ] = False,
) -> None:
    """Export the workspace's annotations as a versioned JSON release (and CSV)."""
    from vadscene.release import build_release, write_release

    if annotator and consensus:
        raise VadsceneError("give --annotator NAME or --consensus, not both")
    with Workspace.open(workspace) as ws:
        release = build_release(ws, annotator=annotator)
    schema_path = write_release(release, out_file, csv_path=csv_file)
    out.print(
        f"wrote {out_file} ({len(release.videos)} videos, annotators: "
        f"{', '.join(release.annotators) or 'none'}) and schema {schema_path}"
    )
    if csv_file:
        out.print(f"wrote {csv_file}")


@app.command(epilog="Example: vadscene validate releases/ucf-v1.json")
def validate(
    release_file: Annotated[Path, typer.Argument(help="Release JSON file.", show_default=False)],
) -> None:
    """Check a release file; print OK or every error with its JSON path (exit code 1)."""
    from vadscene.release import read_release

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
    from vadscene.release import import_release, read_release, workspace_from_release

    release = read_release(release_file)
    if (workspace / "vadscene.yaml").exists():
        with Workspace.open(workspace) as ws:
            counts = import_release(release, ws, origin=str(release_file))
        out.print(
            f"merged {release_file} into {workspace}: {counts.decisions_added} decisions added, "
            f"{counts.decisions_already_present} already present, {counts.videos_added} videos "
            f"added, {counts.marks_set} marks set"
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
        typer.Option(help="Dask scheduler address (tcp://host:8786) to run on a cluster."),
    ] = None,
    only_new: Annotated[
        bool, typer.Option(help="Measure only videos that have no measurement yet.")
    ] = False,
) -> None:
    """Measure sharpness, motion and a colour hint per video; derive the auto factors' poles.

    Cached by content and parameters, resumable after an interruption, never overwriting an
    annotator's override. Exit code 1 when any video could not be measured.
    """
    from vadscene.measure_run import measure_workspace

    with Workspace.open(workspace) as ws, _progress("Measuring") as update:

        def show(done: int, total: int, footage: float, current: str) -> None:
            update(done, total, f"{footage / 3600:.2f} h of footage · {current}")

        report = measure_workspace(
            ws, workers=workers, scheduler=scheduler, only_new=only_new, progress=show
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
    from vadscene.thresholds import apply_rule, preview_rule

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
    """Make H.264 MP4 proxies of videos a browser cannot play (cached, incremental)."""
    from vadscene.proxies import build_proxies

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
    if report.failed:
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
        typer.Option(help="NAME=PATH[@FAMILY] per model: .npy folder, .npy, CSV or Parquet."),
    ] = None,
    models_file: Annotated[
        Path | None,
        typer.Option(
            "--models",
            help="JSON list of {name, path, family} (paths relative to the file), e.g. the "
            "demo's benchmark/models.json; combines with --scores.",
        ),
    ] = None,
    snippet_repeat: Annotated[
        int, typer.Option(help="Scores are per snippet of this many frames (16 is common).")
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
        typer.Option(help="Scene labels, ground truth and frame counts from this workspace."),
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
) -> None:
    """Audit model frame scores: AUROC granularities, bootstrap CIs, scene bias; write a report.

    Without --scores it reports the benchmark's composition (a ground-truth-only run).
    """
    from vadscene.audit import run_audit
    from vadscene.audit.loaders import parse_scores_argument
    from vadscene.audit.report import write_report
    from vadscene.audit.sources import (
        gather_inputs,
        gather_probe_inputs,
        read_model_list,
        read_probe_list,
    )
    from vadscene.audit.tables import load_soft_labels

    _require_choice("--interval-end", interval_end, ("exclusive", "inclusive"))
    output_folder(out_dir, "the audit report", create=False)  # created once the inputs are read
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
    written = write_report(result, out_dir)
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
    from vadscene.audit.definitions import classes_from_categories, load_events
    from vadscene.audit.sources import gather_inputs
    from vadscene.audit.splices import (
        plan_splices,
        write_plan_files,
        write_splice_features,
        write_splice_videos,
    )
    from vadscene.video import iter_video_files

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
    from vadscene.labelstudio import write_labelstudio

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
    from vadscene.labelstudio import import_export

    try:
        tasks = json.loads(export_file.read_text(encoding="utf-8"))
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


@app.command(name="app", epilog="Example: vadscene app ucf-ws --port 8501")
def app_(
    workspace: Annotated[
        Path | None, typer.Argument(help="Workspace (default: the demo workspace).")
    ] = None,
    port: Annotated[int, typer.Option(help="Port to serve on.")] = 8501,
    host: Annotated[
        str, typer.Option(help="Address to bind; 127.0.0.1 keeps the app on this machine.")
    ] = "127.0.0.1",
) -> None:
    """Start the annotation app in the browser."""
    from vadscene.paths import app_server_script, default_demo_workspace

    if workspace is None:
        workspace = default_demo_workspace()
        if not (workspace / "vadscene.yaml").exists():
            out.print(f"building the demo workspace at {workspace} …")
            demo(workspace)
    Workspace.open(workspace).close()
    env = {**os.environ, "VADSCENE_WORKSPACE": str(Path(workspace).resolve())}
    settings = {
        "server.address": host,
        "server.port": port,
        "server.headless": "true",
        "browser.gatherUsageStats": "false",
        "client.toolbarMode": "minimal",
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


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show version.")
    ] = False,
) -> None:
    """Label scene factors on VAD benchmarks, publish releases, audit model scores."""


def run(argv: list[str] | None = None) -> int:
    """Run the CLI on ``argv`` (default: the process arguments); returns the exit code.

    User errors (:class:`VadsceneError`) become one message on stderr and exit code 1.
    """
    try:
        code = app(args=argv, prog_name="vadscene", standalone_mode=False)
    except VadsceneError as exc:
        err.print(f"error: {exc}", markup=False, highlight=False)
        return 1
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except (click.Abort, KeyboardInterrupt):
        err.print("aborted")
        return 130
    return code if isinstance(code, int) else 0


def main() -> None:
    """Console entry point."""
    sys.exit(run())
