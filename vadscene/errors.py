"""Errors vadscene raises for bad input, and how pydantic errors are turned into readable ones.

Every error a user can cause (a bad catalogue, an unknown video, a malformed release) is a
:class:`VadsceneError` whose message names the file, the video or factor, and what was expected.
The CLI prints these messages and exits non-zero; anything else is a bug.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import ValidationError


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
    after freeing disk space, or on a writable copy) may succeed. Nothing was written."""


class StoreLockedError(StoreUnavailableError):
    """Another writer held the store's lock for longer than the write path waits."""


class StoreFullError(StoreUnavailableError):
    """The disk holding the store (or an output file) is full."""


class StoreReadOnlyError(StoreUnavailableError):
    """The store's file or folder cannot be written (read-only mount or permissions)."""


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
    """One line per pydantic error: ``<JSON path>: <message>``, in pydantic's order."""
    problems = []
    for error in exc.errors(include_url=False):
        message = error["msg"]
        if error["type"] not in {"value_error", "assertion_error"} and "input" in error:
            shown = repr(error["input"])
            message += f" (got {shown[:80] + '…' if len(shown) > 80 else shown})"
        problems.append(f"{json_path(error['loc'])}: {message.removeprefix('Value error, ')}")
    return problems
