"""Where the commands write: the result on stdout, warnings, failures and progress on stderr.

``out`` and ``err`` are rich consoles made at their first use, so that a command printing
plain text (``--help``, ``--json``) does not load rich. On stdout, :func:`print_json` writes
a command's one JSON document and :func:`print_table` a table: box-drawn on a terminal, plain
aligned columns when piped. ``--help`` is plain text laid out by :class:`HelpFormatter`.
"""

from __future__ import annotations

import json
import re
import textwrap
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, cast

import typer

if TYPE_CHECKING:
    from rich.console import Console
    from typer._click.formatting import HelpFormatter as _ClickHelpFormatter
else:
    _ClickHelpFormatter = typer.Context.formatter_class


class _Deferred:
    """A rich :class:`~rich.console.Console` created when an attribute is first read or set."""

    def __init__(self, **options: Any) -> None:
        object.__setattr__(self, "_options", options)
        object.__setattr__(self, "_console", None)

    def _made(self) -> Console:
        console: Console | None = object.__getattribute__(self, "_console")
        if console is None:
            from rich.console import Console

            console = Console(**object.__getattribute__(self, "_options"))
            object.__setattr__(self, "_console", console)
        return console

    def __getattr__(self, name: str) -> Any:
        return getattr(self._made(), name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._made(), name, value)


out = cast("Console", _Deferred(soft_wrap=True))
err = cast("Console", _Deferred(stderr=True, soft_wrap=True))


def print_json(document: object) -> None:
    """``document`` as the command's one JSON document on stdout (UTF-8, indented; NaN is
    refused: a missing number is ``null``)."""
    typer.echo(json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False))


def print_table(
    headers: Sequence[str], rows: Sequence[Sequence[object]], *, rule_after: int | None = None
) -> None:
    """A table on stdout, its first column left-aligned and the others right-aligned.

    On a terminal, box-drawn (a rule under row ``rule_after``); piped or redirected, plain
    text: columns two spaces apart, no box characters, no colour. Cells are text, never rich
    markup.
    """
    cells = [[str(cell) for cell in row] for row in rows]
    if out.is_terminal:
        from rich.table import Column, Table
        from rich.text import Text

        table = Table(
            Column(Text(headers[0]), overflow="fold"),
            *(Column(Text(h), justify="right", overflow="fold") for h in headers[1:]),
        )
        for index, row in enumerate(cells):
            table.add_row(*(Text(cell) for cell in row), end_section=index == rule_after)
        out.print(table)
        return
    lines = [list(headers), *cells]
    widths = [max(_width(line[i]) for line in lines) for i in range(len(headers))]
    for line in lines:
        padded = [line[0] + " " * (widths[0] - _width(line[0]))]
        padded += [" " * (w - _width(c)) + c for c, w in zip(line[1:], widths[1:], strict=True)]
        typer.echo("  ".join(padded).rstrip())


def _width(text: str) -> int:
    """Terminal columns of ``text``: wide (CJK) characters take two, combining marks none."""
    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
        for c in text
    )


@contextmanager
def progress_bar(description: str) -> Iterator[Callable[..., None]]:
    """A progress bar on stderr; yields ``update(done, total, current="")``. Drawn only on a
    terminal: piped or logged, a bar would leave nothing but blank lines."""
    if not err.is_terminal:
        yield lambda done, total, current="": None
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        TextColumn("{task.fields[current]}", style="dim", markup=False),  # a name, not markup
        console=cast(_Deferred, err)._made(),
        transient=True,
    ) as bar:
        task = bar.add_task(description, total=None, current="")

        def update(done: int, total: int, current: str = "") -> None:
            bar.update(task, completed=done, total=total, current=current)

        yield update


class HelpFormatter(_ClickHelpFormatter):
    """Click's plain help layout, its lines broken only at spaces.

    Click also breaks at hyphens and inside long words, which splits a flag (``--snippet-``,
    ``repeat``), a file name or an example over two lines, so that what a reader copies is
    wrong. A paragraph whose first line is ``\\b`` is kept as written, as in click.
    """

    def write_text(self, text: str) -> None:
        self.write(_fill(text, self.width, " " * self.current_indent) + "\n")

    def write_dl(
        self, rows: Sequence[tuple[str, str]], col_max: int = 30, col_spacing: int = 2
    ) -> None:
        rows = list(rows)
        first_width = min(max((_width(first) for first, _ in rows), default=0), col_max)
        margin = " " * (self.current_indent + first_width + col_spacing)
        for first, second in rows:
            self.write(" " * self.current_indent + first)
            lines = _fill(second, max(self.width - first_width - col_spacing - 2, 10), "")
            if not second:
                self.write("\n")
                continue
            if _width(first) <= first_width:  # the text starts beside the name, else below
                self.write(" " * (first_width + col_spacing - _width(first)))
            else:
                self.write("\n" + margin)
            head, *rest = lines.splitlines()
            self.write(head + "\n")
            for line in rest:
                self.write((margin + line).rstrip() + "\n")


class HelpContext(typer.Context):
    """The context of every vadscene command: its help is laid out by :class:`HelpFormatter`."""

    formatter_class = HelpFormatter


def _fill(text: str, width: int, indent: str) -> str:
    """``text`` wrapped to ``width`` columns at spaces only, each line starting with ``indent``;
    paragraphs (blank-line separated) keep their own indentation, and one whose first line
    is ``\\b`` keeps its lines as written."""
    filled = []
    for paragraph in re.split(r"\n\s*\n", text.expandtabs().strip("\n")):
        lines = paragraph.splitlines()
        if lines[0].strip() == "\b":
            filled.append("\n".join(indent + line for line in lines[1:]))
            continue
        own = indent + " " * (len(lines[0]) - len(lines[0].lstrip()))
        filled.append(
            textwrap.fill(
                " ".join(line.strip() for line in lines),
                width,
                initial_indent=own,
                subsequent_indent=own,
                break_on_hyphens=False,
                break_long_words=False,
            )
        )
    return "\n\n".join(filled)
