"""Release commands: ``export`` a workspace as a release, ``diff`` two releases, ``validate``
one, ``import`` one into a workspace.

With ``--json`` each prints one JSON object on stdout (its keys are listed in the option's
help) and nothing else there; progress and warnings stay on stderr."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from vadscene.cli.console import err, out, print_json, progress_bar
from vadscene.cli.options import WorkspaceArg

if TYPE_CHECKING:
    import pandas as pd

    from vadscene.store.database import ImportCounts

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
            "measurements. Text cells are quoted, but pandas reads ids such as 007 as numbers "
            'unless told: pd.read_csv(path, dtype={"video_id": str}, keep_default_na=False, '
            'na_values=[""]).',
        ),
    ] = None,
    parquet_file: Annotated[
        Path | None,
        typer.Option(
            "--parquet",
            help="Also write the CSV's table as this Parquet file: ids and values are "
            "strings, frame counts, frame rates and measurements numbers.",
        ),
    ] = None,
    annotator: Annotated[
        str | None,
        typer.Option(
            help="Release one annotator's decisions (plus auto poles) instead of the values "
            "resolved across all annotators."
        ),
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print one JSON object: release, schema, csv and parquet (the files written; "
            "null when not asked for), dataset, videos (count), annotators, selection (mode, "
            "annotator).",
        ),
    ] = False,
) -> None:
    """Export the workspace's annotations as a versioned JSON release (and CSV, Parquet).

    Values are resolved across all annotators unless --annotator is given.
    """
    from vadscene.core.paths import output_folder
    from vadscene.release.releases import build_release, write_release
    from vadscene.store.workspace import Workspace

    written = ((out_file, "the release"), (csv_file, "the CSV"), (parquet_file, "the Parquet"))
    targets = [(t.parent, what) for t, what in written if t]
    for folder, what in targets:  # refuse a file in the way before any work
        output_folder(folder, what, create=False)
    with Workspace.open(workspace, read_only=True) as ws, progress_bar("Building") as update:
        release = build_release(ws, annotator=annotator, progress=update)
    for folder, what in targets:
        output_folder(folder, what)
    with progress_bar("Writing files") as update:
        schema_path = write_release(
            release, out_file, csv_path=csv_file, parquet_path=parquet_file, progress=update
        )
    if as_json:
        print_json(
            {
                "release": str(out_file),
                "schema": str(schema_path),
                "csv": str(csv_file) if csv_file else None,
                "parquet": str(parquet_file) if parquet_file else None,
                "dataset": release.dataset,
                "videos": len(release.videos),
                "annotators": list(release.annotators),
                "selection": release.selection.model_dump(mode="json"),
            }
        )
        return
    out.print(
        f"wrote {out_file} ({len(release.videos)} videos, annotators: "
        f"{', '.join(release.annotators) or 'none'}) and schema {schema_path}",
        markup=False,
    )
    for table in (csv_file, parquet_file):
        if table:
            out.print(f"wrote {table}", markup=False)


@commands.command(epilog="Example: vadscene diff releases/ucf-v1.json releases/ucf-v2.json")
def diff(
    old_file: Annotated[Path, typer.Argument(help="The older release JSON.", show_default=False)],
    new_file: Annotated[Path, typer.Argument(help="The newer release JSON.", show_default=False)],
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print one JSON object: old, new (the files), summary (the line printed "
            "without --json), catalogue_changed, and one list of rows per table: videos "
            "(video_id, change), decisions (video_id, factor, annotator, old_value, "
            "new_value, old_source, new_source), values (video_id, factor, old_value, "
            "new_value, old_resolution, new_resolution), support (factor, positive, "
            "negative, count, old, new, delta); null where a side has no value.",
        ),
    ] = False,
) -> None:
    """Show what changed between two releases: videos, decisions, resolved values, support."""
    from vadscene.release.releases import diff_releases, read_release

    changes = diff_releases(read_release(old_file), read_release(new_file))
    tables = {
        "videos": changes.videos,
        "decisions": changes.decisions,
        "values": changes.values,
        "support": changes.support,
    }
    if as_json:
        print_json(
            {
                "old": str(old_file),
                "new": str(new_file),
                "summary": changes.summary(),
                "catalogue_changed": changes.catalogue_changed,
                **{name: _records(table) for name, table in tables.items()},
            }
        )
        return
    out.print(f"{old_file} → {new_file}: {changes.summary()}", markup=False)
    titles = {"values": "resolved values"}
    for name, table in tables.items():
        if not table.empty:
            out.print(f"\n{titles.get(name, name)}:", markup=False)
            out.print(table.fillna("—").to_string(index=False), markup=False, highlight=False)


def _records(table: pd.DataFrame) -> list[dict[str, Any]]:
    """A table's rows as JSON objects, a missing cell null."""
    rows: list[dict[str, Any]] = table.astype(object).where(table.notna(), None).to_dict("records")
    return rows


@commands.command(epilog="Example: vadscene validate releases/ucf-v1.json")
def validate(
    release_file: Annotated[Path, typer.Argument(help="Release JSON file.", show_default=False)],
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print one JSON object, an invalid file's too: file, valid; when valid, "
            "dataset, videos (count), schema_version, annotators; when not, error (what is "
            "wrong) and problems (each with its JSON path). The exit code is 1 when not "
            "valid, and nothing is printed on stderr.",
        ),
    ] = False,
) -> None:
    """Check a release file; print OK or every error with its JSON path (exit code 1)."""
    from vadscene.core.errors import ReleaseError
    from vadscene.release.releases import read_release

    try:
        release = read_release(release_file)
    except ReleaseError as exc:
        if as_json:
            message = str(exc).split("\n", 1)[0]
            print_json(
                {
                    "file": str(release_file),
                    "valid": False,
                    "error": message,
                    "problems": exc.problems,
                }
            )
        else:
            err.print(str(exc), markup=False, highlight=False)
        raise typer.Exit(1) from None
    if as_json:
        print_json(
            {
                "file": str(release_file),
                "valid": True,
                "dataset": release.dataset,
                "videos": len(release.videos),
                "schema_version": release.schema_version,
                "annotators": list(release.annotators),
            }
        )
        return
    out.print(
        f"OK: {release_file} — {release.dataset}, {len(release.videos)} videos, "
        f"schema version {release.schema_version}",
        markup=False,
    )


@commands.command(name="import", epilog="Example: vadscene import new-ws releases/ucf-v1.json")
def import_(
    workspace: WorkspaceArg,
    release_file: Annotated[Path, typer.Argument(help="Release JSON file.", show_default=False)],
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print one JSON object: workspace, release, created (true: a new workspace "
            "was made from the release; then videos and decisions, its counts). Merged into "
            "a workspace: videos_added, decisions_added, decisions_already_present, "
            "marks_added, measurements_updated, rules_updated, assignments_added, "
            "added_by_annotator (name: decisions), conflicts (kind, video_id, key, "
            "annotator, imported_value, imported_at, local_value, local_at).",
        ),
    ] = False,
) -> None:
    """Load a release: merge it into a workspace, or create the workspace from it."""
    from vadscene.release.releases import import_release, read_release, workspace_from_release
    from vadscene.store.workspace import Workspace

    with progress_bar(f"Reading {release_file.name}") as update:
        release = read_release(release_file, progress=update)
    where = {"workspace": str(workspace), "release": str(release_file)}
    if not (workspace / "vadscene.yaml").exists():
        with (
            progress_bar("Importing") as update,
            workspace_from_release(release, workspace, progress=update) as ws,
        ):
            videos, decisions = len(ws.store.video_ids()), len(ws.store.decision_log())
        if as_json:
            print_json({**where, "created": True, "videos": videos, "decisions": decisions})
        else:
            out.print(
                f"created {workspace} from {release_file}: {videos} videos, {decisions} "
                "decisions (no video files)",
                markup=False,
            )
        return
    with Workspace.open(workspace) as ws, progress_bar("Importing") as update:
        counts = import_release(release, ws, origin=str(release_file), progress=update)
    if as_json:
        print_json({**where, "created": False, **asdict(counts)})
    else:
        _print_merge(workspace, release_file, counts)


def _print_merge(workspace: Path, release_file: Path, counts: ImportCounts) -> None:
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
