"""Audit commands: ``audit`` model scores into a report, build the DC-SelΔ ``splices``."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from vadscene.cli.console import err, out, print_json, progress_bar
from vadscene.cli.options import (
    GROUND_TRUTH_FORMATS,
    EventsOption,
    FrameCountsOption,
    GroundTruthOption,
    IntervalEndOption,
    require_choice,
)
from vadscene.core.cluster import DEFAULT_SCHEDULER_TIMEOUT

if TYPE_CHECKING:
    from vadscene.audit.compute.result import AuditResult
    from vadscene.audit.request import AuditRequest

commands = typer.Typer()


@commands.command(
    epilog="Example: vadscene audit --gt Temporal_Anomaly_Annotation.txt --frame-counts "
    "frames.txt --scores rtfm=scores/rtfm@i3d --scores vadclip=scores/vadclip.csv@clip "
    "--snippet-repeat 16 --release releases/ucf-v1.json --out audit-report"
)
def audit(
    ctx: typer.Context,
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for the report files.")],
    gt: GroundTruthOption = None,
    protocol: Annotated[
        str | None,
        typer.Option(
            help="look-inside or scene-bias: set every convention that paper used "
            "(docs/papers.md): look-inside = inclusive interval ends, interval AP by the "
            "VadCLIP rule; scene-bias = B = 1000, unstratified per-category "
            "bootstrap. Options given explicitly win.",
        ),
    ] = None,
    gt_format: Annotated[
        str | None,
        typer.Option(
            help=f"Ground-truth format ({', '.join(GROUND_TRUTH_FORMATS)}); "
            "default: detected from the file (.csv/.tsv/.parquet/.arrow/.feather: a table "
            "video, frame, label[, category])."
        ),
    ] = None,
    interval_end: IntervalEndOption = "exclusive",
    frame_counts: FrameCountsOption = None,
    scores: Annotated[
        list[str] | None,
        typer.Option(
            metavar="NAME=PATH[@FAMILY][:K]",
            help="One model's frame scores (repeat per model): .npy folder, .npy, CSV/TSV, or "
            "a Parquet/Arrow table (video, [frame,] score; a column named NAME holds this "
            "model's scores, so one table can hold several models); @FAMILY groups models for "
            "comparisons; :K = this model's scores are per snippet of K frames (overrides "
            "--snippet-repeat).",
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
            metavar="NAME=PATH[@FAMILY]",
            help="One model scored once per definition (repeat per model): a table video, "
            "frame, definition, score (CSV/Parquet) or a folder of (T × D) .npy with "
            "definitions.txt; adds the definition-following probes.",
        ),
    ] = None,
    events: EventsOption = None,
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
            metavar="NAME=PATH[@FAMILY]",
            help="One model's features (repeat per model): folder of per-video (snippets × d) "
            ".npy features; adds the prototype readout.",
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
            "whole-video intervals; tIoU 0.1–0.9; all and anomaly-containing videos; "
            "class-wise mAP with definition scores).",
        ),
    ] = False,
    interval_ap_events: Annotated[
        str,
        typer.Option(
            help="Events of interval AP: vadclip (each annotated segment, end-exclusive, kept "
            "apart, as the released VadCLIP code) or merged (runs of frame labels).",
        ),
    ] = "vadclip",
    normal_with_anomaly: Annotated[
        str,
        typer.Option(
            help="A Normal-category video with anomalous frames: error (default) or "
            "anomalous (counted as an anomalous video, listed in the conventions).",
        ),
    ] = "error",
    category_bootstrap: Annotated[
        str,
        typer.Option(
            help="Replicates of the per-category AUROCs: stratified (default; videos "
            "resampled within each category, so every category is in every replicate) or "
            "unstratified (the shared video resamples).",
        ),
    ] = "stratified",
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
    scheduler: Annotated[
        str | None,
        typer.Option(
            help="Dask scheduler address (tcp://host:8786) to run the pair counting and "
            "bootstrap on a cluster; needs pip install 'vadscene[dask]'."
        ),
    ] = None,
    scheduler_timeout: Annotated[
        float, typer.Option(help="Seconds to wait for the Dask scheduler to answer.")
    ] = DEFAULT_SCHEDULER_TIMEOUT,
    replicate_memory: Annotated[
        int | None,
        typer.Option(
            min=1,
            metavar="MIB",
            help="MiB the draws of one block of bootstrap replicates may take (default 256); "
            "the replicates run in as many blocks as it takes, with the same numbers.",
        ),
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Print the memory and time the audit will need (from the shapes and a "
            "short calibration on a subsample) and whether it fits this machine (and the "
            "--scheduler's cluster), then exit: nothing audited, no report written. With "
            "--json: the plan as one JSON object.",
        ),
    ] = False,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print the summary as one JSON object instead of lines: summary (videos, "
            "frames, anomalous_frames, normal_frames, anomalous_videos, mixed_videos, "
            "prevalence, within_pair_fraction, max_within_gain, oracle_video_constant_auroc, "
            "one_bit_auroc, within_effective_videos), scene_coverage (factor: covered "
            "videos), models (model, family, micro_auroc, ci_low, ci_high), "
            "definition_probes (model, probe, auroc), "
            "warnings, report (file name: path); a number without a value is null. The "
            "report is written all the same.",
        ),
    ] = False,
) -> None:
    """Audit model frame scores: AUROC granularities, bootstrap CIs, scene bias; write a report.

    Without --scores it reports the benchmark's composition (a ground-truth-only run).
    """
    from vadscene.audit.compute.intervals import EVENT_RULES
    from vadscene.audit.compute.uncertainty import CATEGORY_BOOTSTRAPS
    from vadscene.audit.io.scores import parse_scores_argument
    from vadscene.audit.io.sources import INTERVAL_ENDS
    from vadscene.audit.protocols import PROTOCOLS
    from vadscene.audit.report.summary import summary_line
    from vadscene.audit.report.writer import REPORT_STEPS, bias_warnings
    from vadscene.audit.request import AuditRequest, prepare, write_outputs
    from vadscene.benchmark.ground_truth import NORMAL_WITH_ANOMALY

    # typed options (or from the environment) win over the protocol; typer bundles its own
    # click, so the parameter source is compared by name
    given = {
        name
        for name in ctx.params
        if getattr(ctx.get_parameter_source(name), "name", "DEFAULT") not in _DEFAULT_SOURCES
    }
    request = AuditRequest(
        protocol=require_choice("--protocol", protocol, tuple(PROTOCOLS)) if protocol else None,
        explicit=frozenset(given),
        ground_truth=gt,
        ground_truth_format=gt_format,
        interval_end=require_choice("--interval-end", interval_end, INTERVAL_ENDS),
        frame_counts=frame_counts,
        workspace=workspace,
        scores=tuple(parse_scores_argument(a) for a in scores or []),
        model_lists=(models_file,) if models_file else (),
        snippet_repeat=snippet_repeat,
        video_order=video_order,
        release=release,
        labels=labels,
        catalogue=catalogue,
        probe_lists=(probes_file,) if probes_file else (),
        definition_scores=tuple(parse_scores_argument(a) for a in definition_scores or []),
        events=events,
        queries=queries,
        features=tuple(parse_scores_argument(a) for a in features or []),
        feature_snippet_frames=feature_snippet_frames,
        soft_labels=soft_labels,
        bootstrap=bootstrap,
        seed=seed,
        interval_ap=interval_ap,
        interval_ap_events=require_choice("--interval-ap-events", interval_ap_events, EVENT_RULES),
        normal_with_anomaly=require_choice(
            "--normal-with-anomaly", normal_with_anomaly, NORMAL_WITH_ANOMALY
        ),
        category_bootstrap=require_choice(
            "--category-bootstrap", category_bootstrap, CATEGORY_BOOTSTRAPS
        ),
        latex=latex,
        svg=svg,
        out=out_dir,
        scheduler=scheduler,
        scheduler_timeout=scheduler_timeout,
    )
    if replicate_memory is not None:
        request = replace(request, replicate_memory=replicate_memory * 2**20)
    if dry_run:
        _print_plan(request, as_json)
        return
    prepared = prepare(request)
    with progress_bar("Auditing") as update:
        result = prepared.run(progress=lambda step, done, total: update(done, total, step))
    with progress_bar("Writing the report") as update:
        written = write_outputs(
            result,
            out_dir,
            request,
            progress=lambda step: update(REPORT_STEPS.index(step), len(REPORT_STEPS), step),
        )
    warnings = bias_warnings(result)
    for warning in warnings:
        err.print(f"warning: {warning}", markup=False, highlight=False)
    coverage = result.conventions.get("scene_coverage") or {}
    if as_json:
        print_json(_audit_summary(result, bool(prepared.models), coverage, warnings, written))
        return
    full = f"{result.summary['videos']} of {result.summary['videos']} videos"
    if any(covered != full for covered in coverage.values()):
        out.print(
            "scene labels cover " + ", ".join(f"{k}: {c}" for k, c in coverage.items()),
            markup=False,
        )
    out.print(summary_line(result))
    if prepared.models:
        micro = result.metrics.query("granularity == 'micro'")
        for row in micro.itertuples():
            interval = (
                f"[{row.ci_low:.4f}, {row.ci_high:.4f}]"
                if math.isfinite(row.ci_low) and math.isfinite(row.ci_high)
                else "(no interval: B = 0)"
                if prepared.request.bootstrap == 0
                else "(no interval)"
            )
            out.print(  # not markup: "[0.81, 0.93]" is text
                f"  {row.model}: micro AUROC {row.value:.4f} {interval}", markup=False
            )
    probes = result.definition_probes
    for row in probes[probes["metric"] == "auroc"].itertuples() if not probes.empty else ():
        value = f"{row.value:+.4f}" if math.isfinite(row.value) else "n/a (no input for it)"
        out.print(f"  {row.model}: {row.probe} {value}", markup=False)
    out.print(f"wrote {', '.join(p.name for p in written.values())} to {out_dir}")


def _print_plan(request: AuditRequest, as_json: bool) -> None:
    """``audit --dry-run``: the plan of the request's audit (:mod:`vadscene.audit.plan`)."""
    from vadscene.audit.plan import plan_audit
    from vadscene.core.cluster import connect_scheduler

    client = (
        connect_scheduler(request.scheduler, request.scheduler_timeout)
        if request.scheduler is not None
        else None
    )
    try:
        plan = plan_audit(request, client=client)
    finally:
        if client is not None:
            client.close()
    if as_json:
        print_json(plan.to_dict())
        return
    for line in plan.lines():
        out.print(line, markup=False, highlight=False)


_DEFAULT_SOURCES = ("DEFAULT", "DEFAULT_MAP")
"""Parameter sources of an option the user did not give."""


def _audit_summary(
    result: AuditResult,
    has_models: bool,
    coverage: dict[str, str],
    warnings: list[str],
    written: dict[str, Path],
) -> dict[str, Any]:
    """What ``audit --json`` prints (the keys its help lists)."""
    metrics = result.metrics
    micro = metrics.query("granularity == 'micro'") if has_models else metrics.iloc[:0]
    probes = result.definition_probes
    auroc = probes[probes["metric"] == "auroc"] if not probes.empty else probes
    return {
        "summary": {key: _number(value) for key, value in result.summary.items()},
        "scene_coverage": dict(coverage),
        "models": [
            {
                "model": row.model,
                "family": row.family,
                "micro_auroc": _number(row.value),
                "ci_low": _number(row.ci_low),
                "ci_high": _number(row.ci_high),
            }
            for row in micro.itertuples()
        ],
        "definition_probes": [
            {"model": row.model, "probe": row.probe, "auroc": _number(row.value)}
            for row in auroc.itertuples()
        ],
        "warnings": warnings,
        "report": {name: str(path) for name, path in written.items()},
    }


def _number(value: object) -> int | float | None:
    """A table's number as JSON has it: an int stays one, a NaN or infinity is null."""
    if isinstance(value, bool):
        return int(value)
    number = value.item() if hasattr(value, "item") else value  # numpy scalars
    if isinstance(number, int):
        return number
    if isinstance(number, float):
        return number if math.isfinite(number) else None
    raise TypeError(f"not a number: {value!r}")


@commands.command(
    epilog="Example: vadscene splices --workspace ucf-ws --out splices/ (the controlled DC-Sel "
    "set: 20 span pairs per ordered class pair, seed 7)"
)
def splices(
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for the splice set.")],
    workspace: Annotated[
        Path | None,
        typer.Option(help="Ground truth, frame counts and video files from this workspace."),
    ] = None,
    gt: GroundTruthOption = None,
    interval_end: IntervalEndOption = "exclusive",
    frame_counts: FrameCountsOption = None,
    videos: Annotated[
        Path | None, typer.Option(help="Folder of the source videos (file stem = video id).")
    ] = None,
    features: Annotated[
        Path | None,
        typer.Option(help="Folder of per-video (snippets × d) .npy features: splice these too."),
    ] = None,
    events: EventsOption = None,
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
    from vadscene.audit.io.sources import INTERVAL_ENDS, gather_inputs
    from vadscene.audit.splices import (
        plan_splices,
        write_plan_files,
        write_splice_features,
        write_splice_videos,
    )
    from vadscene.core.errors import VadsceneError
    from vadscene.core.paths import output_folder
    from vadscene.store.workspace import Workspace
    from vadscene.video.probe import iter_video_files

    ends = require_choice("--interval-end", interval_end, INTERVAL_ENDS)
    if videos is None and workspace is None and features is None:
        raise VadsceneError("splices: give --videos, --workspace (its videos) or --features")
    output_folder(out_dir, "the splice set", create=False)
    truth, _, _ = gather_inputs(
        ground_truth=gt, interval_end=ends, frame_counts=frame_counts, workspace=workspace
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
    needed = sorted({s.video for splice in plan for s in splice.segments})
    video_files: dict[str, Path] = {}
    if videos is not None:
        video_files = {p.stem: p for p in iter_video_files(videos)}
    elif workspace is not None:
        with Workspace.open(workspace) as ws:
            video_files = {v: ws.video_path(v) for v in needed}
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
        with progress_bar("Splicing videos") as update:
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
