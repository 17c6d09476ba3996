"""Measurement commands: ``measure`` the videos, set an auto factor's ``thresholds``, make the
browser ``proxies`` and filmstrips."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from vadscene.cli.console import err, out, progress_bar
from vadscene.cli.options import THRESHOLD_RULES, WorkspaceArg, require_choice

if TYPE_CHECKING:
    from vadscene.measure.thresholds import PoleChanges

commands = typer.Typer()

PARTIAL_EXIT_CODE = 3
"""``measure``'s exit code when some videos have no file and the others were measured."""


@commands.command(epilog="Example: vadscene measure ucf-ws --workers 2")
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
    annotator's override. Videos without a file (named by the ground truth but not in the
    video folder, or gone from it) are listed and skipped; the others are measured.

    Exit code 0: every video measured (or still current); 3: partial, some videos have no
    file (listed, nothing stored for them is lost); 1: a video could not be measured, or an
    error.
    """
    from vadscene.measure.run import measure_workspace
    from vadscene.store.workspace import Workspace

    with Workspace.open(workspace) as ws, progress_bar("Measuring") as update:

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
        f"failed {len(report.failed)}, missing {len(report.missing)}"
    )
    for change in report.rules:
        _print_pole_changes(change)
    for video_id, reason in report.failed:
        err.print(
            f"  failed {video_id}: {reason} ({files[video_id]})",
            markup=False,
            highlight=False,
        )
    for video_id, reason in report.missing:
        err.print(f"  missing {video_id}: {reason}", markup=False, highlight=False)
    if report.failed:
        raise typer.Exit(1)
    if report.missing:
        raise typer.Exit(PARTIAL_EXIT_CODE)


@commands.command(epilog="Example: vadscene thresholds ucf-ws motion --rule terciles --dry-run")
def thresholds(
    workspace: WorkspaceArg,
    factor: Annotated[str, typer.Argument(help="Auto factor key, e.g. resolution or motion.")],
    rule: Annotated[
        str | None,
        typer.Option(
            help=f"{', '.join(THRESHOLD_RULES[:-1])} or {THRESHOLD_RULES[-1]} "
            "(default: rule in force)."
        ),
    ] = None,
    value: Annotated[
        list[float] | None,
        typer.Option(metavar="THRESHOLD", help="Threshold for --rule explicit (once or twice)."),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option(help="Show how many videos would change pole; write nothing.")
    ] = False,
) -> None:
    """Set an auto factor's threshold rule and re-derive its poles (overrides are kept)."""
    from vadscene.measure.thresholds import apply_rule, preview_rule
    from vadscene.store.workspace import Workspace

    chosen = require_choice("--rule", rule, THRESHOLD_RULES) if rule is not None else None
    with Workspace.open(workspace) as ws:
        change = (preview_rule if dry_run else apply_rule)(
            ws.store, factor, chosen, tuple(value or ())
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


@commands.command(epilog="Example: vadscene proxies ucf-ws")
def proxies(workspace: WorkspaceArg) -> None:
    """Make H.264 MP4 proxies of videos a browser cannot play, and every video's filmstrip
    (cached, incremental)."""
    from vadscene.store.workspace import Workspace
    from vadscene.video.proxies import build_proxies
    from vadscene.video.thumbnails import build_filmstrips

    with Workspace.open(workspace) as ws, progress_bar("Making proxies") as update:
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
    with Workspace.open(workspace) as ws, progress_bar("Making filmstrips") as update:
        strips = build_filmstrips(ws, progress=update)
    out.print(
        f"filmstrips: {len(strips.made)} made, {len(strips.reused)} reused, "
        f"{len(strips.failed)} failed"
    )
    for video_id, reason in strips.failed:
        err.print(f"  failed {video_id}: {reason}", markup=False, highlight=False)
    if report.failed or strips.failed:
        raise typer.Exit(1)
