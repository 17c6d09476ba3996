"""The report as Markdown (``report.md``): GitHub-flavoured, with a linked table of contents.

Figures are images of ``figures/NAME.svg`` when the report renders them (``svg=True``);
otherwise each one is a line pointing to where ``report.html`` draws it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from vadscene.audit.report.document import Block, BulletList, Document, Figure, Note, Table, Text


def render_markdown(document: Document, *, svg: bool) -> str:
    """The Markdown text of ``document``; ``svg``: the figures' SVG files exist, show them."""
    lines = [f"# {document.title}", "", document.intro, "", "## Contents", ""]
    lines += [f"{i}. [{s.title}](#{s.anchor})" for i, s in enumerate(document.sections, 1)]
    for section in document.sections:
        lines += ["", f"## {section.title}"]
        for block in section.blocks:
            lines += ["", *_block(block, svg=svg)]
    return "\n".join(lines) + "\n"


def _block(block: Block, *, svg: bool) -> list[str]:
    match block:
        case Text(text):
            return [text]
        case Note(text):
            return [f"> **How to read this.** {text}"]
        case BulletList(items):
            return [f"- {item}" for item in items]
        case Figure(name, _, alt_text) if svg:
            return [f"![{alt_text}](figures/{name}.svg)"]
        case Figure(name, _, alt_text):
            return [
                f"*Figure: {alt_text}* — drawn in [report.html](report.html#figure-{name}); "
                f"`--svg` also writes it as `figures/{name}.svg`, shown here."
            ]
        case Table(frame, labels):
            align = ["---" if i < labels else "---:" for i in range(frame.shape[1])]
            return [_row(frame.columns), _row(align)] + [_row(row) for row in frame.values]
    raise TypeError(block)


def _row(cells: Iterable[Any]) -> str:
    return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"
