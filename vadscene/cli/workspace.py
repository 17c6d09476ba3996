"""Workspace commands: ``init`` a workspace, ``scan`` its videos, show its ``status``, build the
``demo``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from vadscene.cli.console import err, out, print_json, print_table, progress_bar
from vadscene.cli.options import CATEGORY_RULES, GROUND_TRUTH_FORMATS, WorkspaceArg, require_choice

if TYPE_CHECKING:
    from vadscene.store.workspace import ScanReport, Workspace

commands = typer.Typer()


def _scan_with_progress(workspace: Workspace, videos: Path | None = None) -> ScanReport:
    with progress_bar("Probing videos") as update:
        return workspace.scan(update, video_root=videos)


def _print_scan(report: ScanReport, workspace: Workspace) -> None:
    from rich.text import Text

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
    if report.content_changed:
        count = len(report.content_changed)
        whose, them = ("1 video's", "it") if count == 1 else (f"{count} videos'", "them")
        out.print(
            Text.assemble(
                (
                    f"{whose} content differs from what was registered (decisions kept; "
                    f"measure {them} again):",
                    "yellow",
                ),
                f" {_listing(report.content_changed)}",
            )
        )
    if report.recategorised:
        out.print(
            f"{len(report.recategorised)} videos take a changed category from the ground "
            f"truth: {_listing(report.recategorised)}",
            markup=False,
            highlight=False,
        )
    if report.ground_truth_problem is not None:
        err.print(
            f"warning: the ground truth does not fit the videos, so their categories come from "
            f"the file names: {report.ground_truth_problem}",
            markup=False,
            highlight=False,
        )
    if report.not_in_folder:
        count = len(report.not_in_folder)
        named = [
            f"{video} (did you mean {meant}?)" if meant else video
            for video, meant in report.not_in_folder.items()
        ]
        err.print(
            f"warning: {count} ground-truth video{' is' if count == 1 else 's are'} not in the "
            f"video folder ({workspace.video_root}): {_listing(named)}",
            markup=False,
            highlight=False,
        )
        err.print(
            "  `vadscene measure` measures the others; add or rename their files and run "
            f"`vadscene scan {workspace.root}`",
            markup=False,
            highlight=False,
        )


_LISTED = 10
"""Names a scan report lists before it counts the rest."""


def _listing(names: list[str]) -> str:
    more = f" … and {len(names) - _LISTED} more" if len(names) > _LISTED else ""
    return ", ".join(names[:_LISTED]) + more


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
        typer.Option(
            metavar="NAME=LIST_FILE",
            help="Videos named in the list file belong to split NAME (repeatable).",
        ),
    ] = None,
) -> None:
    """Create a workspace for a benchmark and register its videos.

    Videos the ground truth names that the folder lacks are listed on stderr, each with the
    registered video it may be ("did you mean"); the workspace is made all the same (exit 0)
    and `measure` measures the others.
    """
    from pydantic import ValidationError

    from vadscene.core.errors import VadsceneError, validation_problems
    from vadscene.store.workspace import GroundTruthRef, NamingRules, Workspace

    format_ = require_choice("--gt-format", gt_format, GROUND_TRUTH_FORMATS)
    rule = require_choice("--category-rule", category_rule, CATEGORY_RULES)
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
        from vadscene.core.errors import VadsceneError

        raise VadsceneError(
            f"--split takes NAME=LIST_FILE, e.g. test=Anomaly_Test.txt; got '{value}'"
        )
    return name, Path(path)


@commands.command(epilog="Example: vadscene scan ucf-ws --videos /mnt/data/UCF_Crimes/Videos")
def scan(
    workspace: WorkspaceArg,
    videos: Annotated[
        Path | None,
        typer.Option(
            help="Point the workspace at this video folder (moved videos, or a workspace "
            "imported from a release); videos are matched by id."
        ),
    ] = None,
) -> None:
    """Re-scan a workspace's video folder, or point it at another (--videos): add new videos,
    re-probe changed ones, keep every decision."""
    from vadscene.store.workspace import Workspace

    with Workspace.open(workspace) as ws:
        before = ws.video_root
        report = _scan_with_progress(ws, videos)
        if videos is not None:
            known = len(report.updated) + len(report.unchanged) + len(report.missing)
            out.print(
                f"video folder: {before or 'none'} → {ws.video_root}; "
                f"{len(report.updated) + len(report.unchanged)} of {known} registered videos "
                "found there",
                markup=False,
                highlight=False,
            )
        _print_scan(report, ws)


@commands.command(epilog="Example: vadscene status ucf-ws")
def status(
    workspace: WorkspaceArg,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print one JSON object: workspace, dataset, videos (count), catalogue "
            "(name, factors: count), manual_factors, annotators (one object each: name, "
            "videos_complete, decided: manual factor → videos decided), unreadable (path, "
            "reason).",
        ),
    ] = False,
) -> None:
    """Show a workspace's videos, annotators and annotation progress.

    The table is box-drawn on a terminal and plain aligned text when piped.
    """
    from vadscene.store.workspace import Workspace

    with Workspace.open(workspace, read_only=True) as ws:
        store = ws.store
        videos = len(store.video_ids())
        annotators = store.annotators()
        progress = {name: store.progress(name) for name in annotators}
        manual = [f.key for f in ws.catalogue.factors if f.source == "manual"]
        unreadable = store.unreadable_files()
        root, dataset, catalogue = ws.root, ws.config.dataset, ws.catalogue
    if as_json:
        print_json(
            {
                "workspace": str(root),
                "dataset": dataset,
                "videos": videos,
                "catalogue": {"name": catalogue.name, "factors": len(catalogue.factors)},
                "manual_factors": manual,
                "annotators": [
                    {
                        "name": name,
                        "decided": {key: progress[name].decided_by_factor[key] for key in manual},
                        "videos_complete": progress[name].complete,
                    }
                    for name in annotators
                ],
                "unreadable": [{"path": path, "reason": reason} for path, reason in unreadable],
            }
        )
        return
    out.print(
        f"{dataset} at {root}: {videos} videos, catalogue '{catalogue.name}' "
        f"({len(catalogue.factors)} factors)",
        markup=False,
        highlight=False,
    )
    if not annotators:
        out.print("no annotator has recorded a decision yet", markup=False)
    # Factors down, annotators across (a few per table): readable at 80 columns, where
    # one column per factor was squeezed to "co…".
    for start in range(0, len(annotators), _STATUS_ANNOTATORS_PER_TABLE):
        names = annotators[start : start + _STATUS_ANNOTATORS_PER_TABLE]
        if start:
            out.print()
        print_table(
            ["videos decided", *names],
            [
                ["videos complete", *(f"{progress[n].complete}/{videos}" for n in names)],
                *([key, *(progress[n].decided_by_factor[key] for n in names)] for key in manual),
            ],
            rule_after=0,
        )
    for path, reason in unreadable:
        out.print(f"unreadable {path}: {reason}", markup=False, highlight=False)


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
