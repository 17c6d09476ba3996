"""Numbers and values as the report's table cells and sentences write them.

Every function accepts any value a result table holds (numpy scalars, NaN, None) and writes
``"n/a"`` for a missing or non-finite number.
"""

from __future__ import annotations

import math
from typing import Any

from vadscene.audit.report import figures


def num(value: Any, digits: int = 4, *, signed: bool = False) -> str:
    """A number with ``digits`` decimals (``signed``: with its sign, ``+0.0123``)."""
    if not figures.is_finite_number(value):
        return "n/a"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def ci(value: Any, low: Any, high: Any, *, signed: bool = False) -> str:
    """``0.8412 [0.8120, 0.8690]``; the bracket is left out when the interval is undefined."""
    text = num(value, signed=signed)
    if figures.is_finite_number(low) and figures.is_finite_number(high):
        text += f" [{num(low, signed=signed)}, {num(high, signed=signed)}]"
    return text


def pct(value: Any) -> str:
    """A fraction as a percentage (:func:`vadscene.audit.report.figures.percent`)."""
    return figures.percent(value) if figures.is_finite_number(value) else "n/a"


def count(value: Any) -> str:
    """A whole number with thousands separators (``12,345``)."""
    return f"{int(value):,}" if figures.is_finite_number(value) else "n/a"


def plain(value: Any) -> str:
    """Any convention or cell value as one line of text (lists joined, mappings as k=v)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if isinstance(value, dict):
        return ", ".join(f"{k}={plain(v)}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return ", ".join(plain(v) for v in value) or "none"
    return str(value)
