"""Write an audit's report: JSON, one CSV per table, figures, Markdown, a self-contained HTML and,
when asked, LaTeX tables.

The Markdown and the HTML are rendered from one document
(:func:`vadscene.audit.report.sections.build_document`), so the two files never say different
things. Every figure's Vega-Lite spec is written to ``figures/NAME.vl.json``, and the HTML draws
the figures from them in the reader's browser. SVG files are opt-in (``svg=True``, ``--svg``):
then each figure is also rendered to ``figures/NAME.svg`` for the Markdown and for papers, and
writing a report over an earlier one keeps the figures that did not change
(:func:`vadscene.audit.report.vega.figure_svg`). The report folder is replaced as a whole, so
an interrupted run never leaves a half-written file or a mixture of two reports.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from vadscene.audit.compute.result import AuditResult
from vadscene.audit.report.html import render_html
from vadscene.audit.report.latex import latex_tables
from vadscene.audit.report.markdown import render_markdown
from vadscene.audit.report.sections import build_document
from vadscene.audit.report.sections_scene import bias_warnings
from vadscene.audit.report.vega import figure_svg
from vadscene.core.errors import VadsceneError
from vadscene.core.files import NewFolder, sync_folder

__all__ = ["REPORT_STEPS", "bias_warnings", "check_report_folder", "write_report"]

REPORT_STEPS = ("json", "tables", "figures", "markdown", "html")
"""The steps :func:`write_report` announces to its ``progress`` callback, in order."""


def write_report(
    result: AuditResult,
    out_dir: Path,
    *,
    svg: bool = False,
    latex: bool = False,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Path]:
    """Write every report file into ``out_dir``, replacing the folder as a whole.

    ``out_dir`` may be missing, empty, or an earlier report (it holds ``report.json``); a
    folder of other files is refused (:class:`VadsceneError` naming one), because it is
    replaced: the files are written into a hidden sibling folder, which is then renamed into
    place, so readers never see a mix of an old and a new report, and a run that fails half
    way leaves the previous report as it was.

    The HTML draws its figures in the browser; ``svg=True`` also renders each one to
    ``figures/NAME.svg`` (an unchanged figure of the report being replaced is kept) and the
    Markdown shows them. ``latex=True`` adds the booktabs tables under ``latex/``
    (:func:`~vadscene.audit.report.latex.latex_tables`). Returns file name (relative to
    ``out_dir``, e.g. ``"metrics.csv"``, ``"figures/bias_dot_plot.vl.json"``) → path.
    ``progress`` is called with each step's name (:data:`REPORT_STEPS`) before it runs.
    """
    out_dir = Path(out_dir)
    check_report_folder(out_dir)
    _remove_stale_runs(out_dir)
    staging = out_dir.parent / f".{out_dir.name}.{os.getpid()}.{uuid.uuid4().hex}.new"
    try:
        with NewFolder(staging) as folder:
            written = _write_files(result, folder, progress, svg=svg, latex=latex, previous=out_dir)
            # Durability, in this order: every file's data and the staging folders' names
            # (one sync per file, in one pass, and one per folder: NewFolder), then the
            # renames, then the folder holding them. A file needs no temporary name or sync
            # of its own, since no one reads the staging folder; but the rename may reach
            # the disk only after the files it makes visible, or a power cut could leave a
            # report of empty files.
            folder.make_durable()
        _swap_in(staging, out_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return {name: out_dir / name for name in written}


def check_report_folder(out_dir: Path) -> None:
    """A report replaces its folder: refuse one that holds anything but an earlier report.

    :func:`write_report` checks; callers call it too before long work, so a wrong folder costs
    nothing.
    """
    if not out_dir.is_dir() or (out_dir / "report.json").is_file():
        return
    entries = sorted(entry.name for entry in out_dir.iterdir())
    if entries:
        raise VadsceneError(
            f"{out_dir}: holds files that are not an audit report (e.g. {entries[0]}) and the "
            "report replaces its whole folder; give a new or empty folder, or an earlier report's"
        )


def _remove_stale_runs(out_dir: Path) -> None:
    """Remove the hidden folders a killed run left beside ``out_dir`` (``.<name>.<pid>.….new``
    or ``.old``): those of processes no longer running; a live run's are its own."""
    if not out_dir.parent.is_dir():
        return
    pattern = re.compile(rf"\.{re.escape(out_dir.name)}\.(\d+)\.[0-9a-f]+\.(?:new|old)")
    for sibling in out_dir.parent.iterdir():
        match = pattern.fullmatch(sibling.name)
        if match and sibling.is_dir() and not _running(int(match.group(1))):
            shutil.rmtree(sibling, ignore_errors=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _swap_in(staging: Path, out_dir: Path) -> None:
    """Put the finished ``staging`` folder at ``out_dir``; an earlier report there is removed.

    Two renames, each atomic: the old folder steps aside, the new one takes its place. A
    reader sees the old report or the new one, never a mixture (between the renames, for an
    instant, neither). ``staging`` must already be durable (:meth:`NewFolder.make_durable`);
    the folder holding both is synced once after the renames, so they survive a power cut.
    """
    if not out_dir.exists():
        staging.rename(out_dir)
        sync_folder(out_dir.parent)
        return
    retired = staging.with_name(staging.name.removesuffix(".new") + ".old")
    out_dir.rename(retired)
    staging.rename(out_dir)
    sync_folder(out_dir.parent)
    shutil.rmtree(retired, ignore_errors=True)


def _write_files(
    result: AuditResult,
    folder: NewFolder,
    progress: Callable[[str], None] | None,
    *,
    svg: bool,
    latex: bool,
    previous: Path,
) -> dict[str, Path]:
    """Write every report file into the new ``folder``; file name → path. ``previous`` is the
    report being replaced, whose unchanged SVG figures are kept."""
    step = progress or (lambda _name: None)
    written: dict[str, Path] = {}

    def write(name: str, text: str) -> None:
        written[name] = folder.write(name, text)

    step("json")
    write("report.json", result.to_json())
    step("tables")
    for name in AuditResult.TABLES + AuditResult.OPTIONAL_TABLES:
        table: pd.DataFrame = getattr(result, name)
        if not table.empty:
            write(f"{name}.csv", table.to_csv(index=False, lineterminator="\n"))
    document = build_document(result)
    step("figures")
    specs: dict[str, dict[str, Any]] = {}
    for figure in document.figures():
        specs[figure.name] = spec = figure.spec
        write(f"figures/{figure.name}.vl.json", json.dumps(spec, ensure_ascii=False))
        if svg:
            name = f"figures/{figure.name}.svg"
            write(name, figure_svg(spec, previous / name))
    step("markdown")
    write("report.md", render_markdown(document, svg=svg))
    step("html")
    write("report.html", render_html(document, specs))
    if latex:  # in the same folder, so they are replaced together with the report
        for name, text in latex_tables(result).items():
            write(f"latex/{name}", text)
    return written
