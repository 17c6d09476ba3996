"""Errors vadscene raises for bad input, and how pydantic errors are turned into readable ones.

Every error a user can cause (a bad catalogue, an unknown video, a malformed release) is a
:class:`VadsceneError` whose message names the file, the video or factor, and what was expected.
The CLI prints these messages and exits non-zero; anything else is a bug.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable

import yaml
from pydantic import ValidationError

from vadscene.core.jsonio import DuplicateKeyError


class VadsceneError(Exception):
    """Base class of every error caused by the user's input or data."""


class CatalogueError(VadsceneError):
    """A scene-factor catalogue is invalid."""


class WorkspaceError(VadsceneError):
    """A workspace folder or its configuration is missing or invalid."""


class StoreError(VadsceneError):
    """A write to the annotation store was refused (unknown video or factor, bad value, ...)."""


class StoreUnavailableError(StoreError):
    """The store could not be read or written although the input was fine: retrying later (or
    after freeing disk space, or on a writable copy) may succeed. The message says what was
    written: nothing, or (a bulk import stopped part-way) how much, and that importing again
    completes it."""


class StoreLockedError(StoreUnavailableError):
    """Another writer held the store's lock for longer than the write path waits."""


class StoreFullError(StoreUnavailableError):
    """The disk holding the store (or an output file) is full."""


class StoreReadOnlyError(StoreUnavailableError):
    """The store's file or folder cannot be written (read-only mount or permissions)."""


class UndoRefusedError(StoreError):
    """The annotator's last action can no longer be undone: a newer decision on its key (made
    elsewhere, merged in since) is current, and undoing would bring an older value back."""


class StoreCorruptError(StoreError):
    """The store's file is damaged or is not a vadscene store."""


class OutputError(VadsceneError):
    """An output file (release, CSV, schema, report, proxy) could not be written."""


class ReleaseError(VadsceneError):
    """A release file cannot be read, is invalid, or does not fit the target workspace."""

    def __init__(self, message: str, problems: Iterable[str] = ()) -> None:
        self.problems = list(problems)
        full = (
            message
            if not self.problems
            else message + "\n" + "\n".join(f"  - {p}" for p in self.problems)
        )
        super().__init__(full)


def json_path(loc: Iterable[int | str]) -> str:
    """A pydantic error location as a JSON path: ``("videos", 3, "id")`` → ``$.videos[3].id``."""
    path = "$"
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def validation_problems(exc: ValidationError) -> list[str]:
    """One line per pydantic error: ``<JSON path>: <message>``, in pydantic's order.

    The offending value is described by its type only (``got a str``), never shown: the file
    may be any file a user or a page can name, and its content must not reach the message.
    """
    problems = []
    for error in exc.errors(include_url=False):
        message = error["msg"]
        if error["type"] not in {"value_error", "assertion_error"} and "input" in error:
            message += f" (got a {type(error['input']).__name__})"
        problems.append(f"{json_path(error['loc'])}: {message.removeprefix('Value error, ')}")
    return problems


_QUOTED_TEXT = re.compile(r"'([^']*)'")
"""A quoted fragment of a YAML problem: a token kind (``'<scalar>'``), an indicator (``','``)
or text spelled in the file (an alias, a tag), which :func:`_token_kind_only` hides."""


def _token_kind_only(quoted: re.Match[str]) -> str:
    text = quoted.group(1)
    return quoted.group(0) if len(text) <= 2 or re.fullmatch(r"<[\w ]+>", text) else "'…'"


def parse_failure(exc: BaseException) -> str:
    """Why a file could not be parsed, by position only — never a fragment of its text.

    JSON, YAML, CSV and text decoding errors otherwise quote the offending line, token or
    byte; a named file may be a key or a password list, so only the parser's verdict and the
    line/column (or byte offset) are kept.
    """
    if isinstance(exc, DuplicateKeyError):  # its message gives the object's position
        return str(exc)
    if isinstance(exc, json.JSONDecodeError):
        where = f" at line {exc.lineno} column {exc.colno}" if exc.lineno else ""
        return f"{exc.msg}{where}"
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 text: undecodable byte at offset {exc.start}"
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        verdict = _QUOTED_TEXT.sub(_token_kind_only, exc.problem or exc.context or "invalid YAML")
        return f"{verdict}{where}"
    pandas = sys.modules.get("pandas")  # not loaded: exc cannot be one of its errors
    if pandas is not None and isinstance(exc, pandas.errors.ParserError):  # counts, lines
        return str(exc).strip()
    return f"unreadable ({type(exc).__name__})"
