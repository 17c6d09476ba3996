"""The report as a document: sections of paragraphs, notes, lists, tables and figures.

The section builders (:mod:`vadscene.audit.report.sections`) make one :class:`Document` and
both renderers (:mod:`vadscene.audit.report.markdown`, :mod:`vadscene.audit.report.html`) read
it, so ``report.md`` and ``report.html`` never say different things. Tables hold cells already
formatted as text; figures hold their Vega-Lite spec, drawn by whichever renderer shows them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # only named in annotations
    import pandas as pd


@dataclass(frozen=True)
class Text:
    """A paragraph."""

    text: str


@dataclass(frozen=True)
class Note:
    """A "how to read this" paragraph."""

    text: str


@dataclass(frozen=True)
class BulletList:
    """A bulleted list, one line of text per item."""

    items: tuple[str, ...]


@dataclass(frozen=True)
class Table:
    """Cells already formatted; the first ``labels`` columns are text, the rest numbers."""

    frame: pd.DataFrame
    labels: int = 1


@dataclass(frozen=True)
class Figure:
    """A chart, named for its files (``figures/NAME.vl.json``, ``figures/NAME.svg``)."""

    name: str
    spec: dict[str, Any]
    """The chart's Vega-Lite spec (:mod:`vadscene.audit.report.figures`), written as it is:
    the tests, not the report, validate it against the schema."""
    alt_text: str


Block = Text | Note | BulletList | Table | Figure
"""What a section is made of."""


@dataclass(frozen=True)
class Section:
    """A titled part of the report: its blocks in reading order."""

    title: str
    blocks: tuple[Block, ...]

    @property
    def anchor(self) -> str:
        """GitHub's heading anchor, so the Markdown contents links work there too."""
        return re.sub(r"[^a-z0-9 -]", "", self.title.lower()).replace(" ", "-")


@dataclass(frozen=True)
class Document:
    """The whole report: a title, an introductory paragraph and the sections."""

    title: str
    intro: str
    sections: tuple[Section, ...]

    def figures(self) -> list[Figure]:
        """Every figure of every section, in reading order."""
        return [b for s in self.sections for b in s.blocks if isinstance(b, Figure)]
