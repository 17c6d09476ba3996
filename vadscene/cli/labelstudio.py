"""Label Studio commands: ``labelstudio-export`` tasks and their labeling config,
``labelstudio-import`` an export's annotations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from vadscene.cli.console import out, progress_bar
from vadscene.cli.options import WorkspaceArg

commands = typer.Typer()

EmailOption = Annotated[
    list[str] | None,
    typer.Option(
        "--email",
        metavar="NAME=ADDRESS",
        help="The e-mail of an annotator's Label Studio user (repeatable); the annotator "
        "registry's e-mails are used for the others.",
        show_default=False,
    ),
]
UsersOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--users",
        metavar="FILE",
        help="Annotators' e-mails from a file (repeatable): a CSV with columns name,email "
        "(optional: id, the Label Studio user id), or JSON {name: email}, or Label Studio's "
        "user list (GET /api/users/) to turn the user ids of its export into e-mails.",
        show_default=False,
    ),
]


@commands.command(
    name="labelstudio-export",
    epilog="Example: vadscene labelstudio-export ucf-ws --out ls/ --base-url "
    "http://127.0.0.1:8501 --email ana=ana@lab.org --email ben=ben@lab.org",
)
def labelstudio_export(
    workspace: WorkspaceArg,
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for tasks.json + config XML.")],
    base_url: Annotated[
        str, typer.Option(help="Prefix of the video URLs (where `vadscene app` serves).")
    ] = "",
    email: EmailOption = None,
    users: UsersOption = None,
) -> None:
    """Export Label Studio tasks (one per video, decisions as annotations by each annotator's
    Label Studio user, auto poles as predictions) and the matching labeling config."""
    from vadscene.release.labelstudio import LabelStudioUsers, write_labelstudio
    from vadscene.store.workspace import Workspace

    mapping = LabelStudioUsers.gather(email or [], users or [])
    with Workspace.open(workspace) as ws:
        tasks_path, config_path = write_labelstudio(ws, out_dir, base_url=base_url, users=mapping)
    out.print(f"wrote {tasks_path} and {config_path}")


@commands.command(
    name="labelstudio-import",
    epilog="Example: vadscene labelstudio-import ucf-ws export.json --users ls-users.json "
    "--email ana=ana@lab.org",
)
def labelstudio_import(
    workspace: WorkspaceArg,
    export_file: Annotated[
        Path, typer.Argument(help="Label Studio JSON export.", show_default=False)
    ],
    email: EmailOption = None,
    users: UsersOption = None,
) -> None:
    """Import a Label Studio JSON export: each Label Studio user's annotations come back
    under the annotator their e-mail is mapped to."""
    from vadscene.core import jsonio
    from vadscene.core.errors import ReleaseError
    from vadscene.release.labelstudio import LabelStudioUsers, import_export
    from vadscene.store.workspace import Workspace

    mapping = LabelStudioUsers.gather(email or [], users or [])
    try:
        tasks = jsonio.loads(export_file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ReleaseError(f"{export_file}: Label Studio export not found") from None
    except json.JSONDecodeError as exc:
        raise ReleaseError(f"{export_file}: not valid JSON ({exc})") from None
    with Workspace.open(workspace) as ws, progress_bar("Importing") as update:
        summary = import_export(ws, tasks, users=mapping, origin=str(export_file), progress=update)
    out.print(
        f"imported {export_file}: {summary.annotations} annotations, "
        f"{summary.decisions_added} decisions added, {summary.decisions_already_present} "
        f"already present, {summary.cancelled} cancelled ignored"
    )
    if summary.new_annotators:
        named = ", ".join(f"{who} ({n} annotations)" for who, n in summary.new_annotators.items())
        out.print(
            "new annotators, named by their Label Studio e-mail (each annotator the workspace "
            f"had has another e-mail, so none of them is one of these): {named}"
        )
    if summary.skipped_results:
        skipped = ", ".join(f"{n} {kind}" for kind, n in summary.skipped_results.items())
        out.print(f"skipped results that are not choices (no factor decision): {skipped}")
