"""Spreadsheet cells that stay text: the one escaping of every CSV vadscene writes.

A cell starting with ``=``, ``+``, ``-``, ``@``, tab or carriage return is a formula to a
spreadsheet (OWASP "CSV injection"); an annotator may be called "=1+1", a note may start with
"-". Such text is written with a leading ``'``, which spreadsheets show as text, and read back
without it.
"""

from __future__ import annotations

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(cell: object) -> object:
    """``cell`` as written to a CSV: text that a spreadsheet would run gets a leading ``'``.

    >>> spreadsheet_safe("=1+1"), spreadsheet_safe(-1.5)
    ("'=1+1", -1.5)
    """
    if isinstance(cell, str) and cell.startswith(FORMULA_STARTS):
        return "'" + cell
    return cell


def spreadsheet_text(cell: str) -> str:
    """A CSV cell read back: the ``'`` :func:`spreadsheet_safe` added, removed."""
    if cell.startswith("'") and cell[1:].startswith(FORMULA_STARTS):
        return cell[1:]
    return cell
