"""The ``vadscene`` command line: thin commands over the library.

Every command prints what it did, shows progress for long work (a bar on stderr, drawn on a
terminal), reports every failure as one line naming the thing and what was expected (exit
code 2 for usage errors, 1 otherwise; see :func:`run`), and ends its ``--help`` (or ``-h``:
plain text, never markup) with an example (a test enforces it). With ``--json`` a command
prints one JSON document on stdout and nothing else there. ``python -m vadscene`` is the
same command.

One module per command group: :mod:`.workspace` (init, scan, status, demo), :mod:`.release`
(export, diff, validate, import), :mod:`.measure` (measure, thresholds, proxies),
:mod:`.audit` (audit, splices), :mod:`.labelstudio`, :mod:`.serve` (app), :mod:`.team`
(annotators, assign); the options they share are declared once in :mod:`.options`. The
modules import the library inside the commands, so that ``vadscene --help`` loads none of it.
"""

from __future__ import annotations

import functools
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from vadscene import __version__
from vadscene.cli import audit, labelstudio, measure, release, serve, team, workspace
from vadscene.cli.console import HelpContext, err, out

if TYPE_CHECKING:
    from typer._click.core import Command

__all__ = ["app", "command", "err", "main", "out", "run"]

app = typer.Typer(
    name="vadscene",
    help="Label scene factors on VAD benchmarks, publish releases, audit model scores.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain help: rich markup would take "[dask]" and "[@FAMILY]" in the help for styles
    # and show flags as "--latex <bool>".
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},  # subcommands inherit it
)
for _group in (workspace, release, measure, audit, labelstudio, serve, team):
    app.add_typer(_group.commands)


@functools.cache
def command() -> Command:
    """The click command tree :func:`run` runs: :data:`app`'s, with the help laid out by
    :class:`~vadscene.cli.console.HelpFormatter` and every example kept on one line (it is
    copied whole into a shell)."""
    root = typer.main.get_command(app)
    pending = [root]
    while pending:
        current = pending.pop()
        current.context_class = HelpContext
        if current.epilog:
            current.epilog = "\b\n" + current.epilog  # click's mark for "do not rewrap"
        pending.extend(getattr(current, "commands", {}).values())
    return root


def _version(value: bool) -> None:
    if value:
        typer.echo(f"vadscene {__version__}")
        raise typer.Exit()


_debug = False
"""Set by ``--debug``: :func:`run` lets errors propagate with their traceback."""


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show version.")
    ] = False,
    debug: Annotated[
        bool, typer.Option("--debug", help="Show the full traceback of an error.")
    ] = False,
) -> None:
    """Label scene factors on VAD benchmarks, publish releases, audit model scores."""
    global _debug
    _debug = debug


def run(argv: list[str] | None = None) -> int:
    """Run the CLI on ``argv`` (default: the process arguments); returns the exit code.

    Every failure is one line on stderr and no traceback (``--debug`` shows it): exit code 2
    for a usage error (unknown command or option, missing or unparsable value), 1 for
    everything else — bad input (:class:`VadsceneError`), a file that cannot be read or
    written, a missing optional dependency, or a bug.
    """
    global _debug
    _debug = False
    try:
        code = command().main(args=argv, prog_name="vadscene", standalone_mode=False)
    except (typer.Abort, KeyboardInterrupt):
        err.print("aborted")
        return 130
    except Exception as exc:
        if _debug:
            raise
        message, code = _failure(exc)
        if message:
            err.print(f"error: {message}", markup=False, highlight=False, soft_wrap=True)
        return code
    return code if isinstance(code, int) else 0


def _failure(exc: Exception) -> tuple[str, int]:
    """The one-line message and exit code of an error that ended a command."""
    from vadscene.core.errors import VadsceneError

    if isinstance(exc, VadsceneError):
        return str(exc), 1
    if isinstance(exc, typer.TyperException):  # typer's own parser: usage and parse errors
        if type(exc).__name__ == "NoArgsIsHelpError":  # a group given no command (as typer tells)
            typer.echo(exc.format_message())  # its help, as --help shows it
            return "", getattr(exc, "exit_code", 2)
        return _usage_message(exc), getattr(exc, "exit_code", 1)
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}{_OS_ERROR_WORDS.get(type(exc), exc.strerror or str(exc))}", 1
    if isinstance(exc, ImportError):
        return (
            f"this command needs the Python module '{exc.name}', which is not installed: "
            "vadscene's dependencies are incomplete (reinstall with pip install vadscene)",
            1,
        )
    return (
        f"unexpected {type(exc).__name__}: {exc} — a bug in vadscene; rerun with "
        "'vadscene --debug ...' for the traceback and report it",
        1,
    )


_OS_ERROR_WORDS = {
    IsADirectoryError: "is a folder; expected a file",
    NotADirectoryError: "part of the path is a file; expected a folder",
    PermissionError: "permission denied (check the file's owner and mode)",
}
"""I/O errors in the words of :func:`run`: what is wrong and what was expected."""


def _usage_message(exc: typer.TyperException) -> str:
    """``vadscene export: Missing option '--out'. (see 'vadscene export --help')``."""
    from pydantic import ValidationError

    context = getattr(exc, "ctx", None)

    message = exc.format_message().replace("\n", " ")
    cause = exc.__cause__
    if isinstance(cause, ValidationError):  # a value typer could not convert: show it
        inputs = [e["input"] for e in cause.errors(include_url=False) if "input" in e]
        message += f" (got {inputs[0]!r})" if inputs else ""
    if context is None:
        return message
    return f"{context.command_path}: {message} (see '{context.command_path} --help')"


def main() -> None:
    """Console entry point."""
    sys.exit(run())
