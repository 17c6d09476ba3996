"""Label Studio commands: ``labelstudio-export`` tasks and their labeling config,
``labelstudio-import`` an export's annotations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from vadscene.cli.console import out
from vadscene.cli.options import WorkspaceArg
from vadscene.core import jsonio
from vadscene.core.errors import ReleaseError
from vadscene.store.workspace import Workspace

commands = typer.Typer()


@commands.command(
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


@commands.command(
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
