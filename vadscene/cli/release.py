"""Release commands: ``export`` a workspace as a release, ``diff`` two releases, ``validate``
one, ``import`` one into a workspace."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from vadscene.cli.console import err, out
from vadscene.cli.options import WorkspaceArg
from vadscene.core.errors import ReleaseError
from vadscene.core.paths import output_folder
from vadscene.store.workspace import Workspace

commands = typer.Typer()


@commands.command(
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


@commands.command(epilog="Example: vadscene diff releases/ucf-v1.json releases/ucf-v2.json")
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


@commands.command(epilog="Example: vadscene validate releases/ucf-v1.json")
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


@commands.command(name="import", epilog="Example: vadscene import new-ws releases/ucf-v1.json")
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
            f"added, {counts.marks_added} marks and {counts.assignments_added} assignments "
            f"added, {counts.measurements_updated} measurements and {counts.rules_updated} "
            "threshold rules updated",
            markup=False,
        )
        for name, added in counts.added_by_annotator.items():
            out.print(f"  {name}: {added} decisions added", markup=False)
        if counts.conflicts:
            out.print(
                f"{len(counts.conflicts)} imported values are older than the workspace's own "
                "and were not made current (the newer value stays current):",
                markup=False,
            )
            for c in counts.conflicts:
                out.print(f"  {c.describe()}", markup=False)
    else:
        with workspace_from_release(release, workspace) as ws:
            out.print(
                f"created {workspace} from {release_file}: {len(ws.store.video_ids())} videos, "
                f"{len(ws.store.decision_log())} decisions (no video files)"
            )
