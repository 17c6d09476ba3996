"""Workspace commands: ``init`` a workspace, ``scan`` its videos, show its ``status``, build the
``demo``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, get_args

import typer
from pydantic import ValidationError
from rich.table import Column, Table
from rich.text import Text

from vadscene.cli.console import out, progress_bar
from vadscene.cli.options import WorkspaceArg, require_choice
from vadscene.core.errors import VadsceneError, validation_problems
from vadscene.store.workspace import (
    CategoryRule,
    GroundTruthFormat,
    GroundTruthRef,
    NamingRules,
    ScanReport,
    Workspace,
)

commands = typer.Typer()

_GROUND_TRUTH_FORMATS: tuple[GroundTruthFormat, ...] = get_args(GroundTruthFormat)
_CATEGORY_RULES: tuple[CategoryRule, ...] = get_args(CategoryRule)


def _scan_with_progress(workspace: Workspace) -> ScanReport:
    with progress_bar("Probing videos") as update:
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


@commands.command(
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
        str, typer.Option(help=f"Ground-truth format: {', '.join(_GROUND_TRUTH_FORMATS)}.")
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
    format_ = require_choice("--gt-format", gt_format, _GROUND_TRUTH_FORMATS)
    rule = require_choice("--category-rule", category_rule, _CATEGORY_RULES)
    if rule == "regex" and not category_regex:
        raise VadsceneError("--category-rule regex needs --category-regex with a group 'category'")
    try:
        naming = NamingRules(category_rule=rule, category_regex=category_regex)
    except ValidationError as exc:
        reasons = [problem.split(": ", 1)[-1] for problem in validation_problems(exc)]
        raise VadsceneError(f"--category-regex: {'; '.join(reasons)}") from None
    reports: list[ScanReport] = []
    ws = Workspace.create(
        workspace,
        video_root=videos,
        dataset=dataset,
        catalogue_path=catalog,
        ground_truth=GroundTruthRef(path=str(gt), format=format_) if gt else None,
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


@commands.command(epilog="Example: vadscene scan ucf-ws")
def scan(workspace: WorkspaceArg) -> None:
    """Re-scan a workspace's video folder: add new videos, re-probe changed ones."""
    with Workspace.open(workspace) as ws:
        _print_scan(_scan_with_progress(ws), ws)


@commands.command(epilog="Example: vadscene status ucf-ws")
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


@commands.command(epilog="Example: vadscene demo /tmp/demo-ws && vadscene app /tmp/demo-ws")
def demo(
    workspace: WorkspaceArg,
    seed: Annotated[int, typer.Option(help="Seed of the generated benchmark.")] = 0,
) -> None:
    """Build the demo benchmark (synthetic videos, ground truth, model scores) as a workspace."""
    from vadscene.demo import build_demo_workspace

    with progress_bar("Rendering demo videos") as update:
        ws = build_demo_workspace(workspace, seed=seed, progress=update)
    with ws:
        out.print(
            f"demo workspace {ws.root}: {len(ws.store.video_ids())} videos, ground truth "
            f"{ws.ground_truth_path}, scores under {ws.root / 'benchmark' / 'scores'}"
        )
