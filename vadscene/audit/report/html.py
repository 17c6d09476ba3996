"""The report as one self-contained HTML page (``report.html``).

The page needs no network: its CSS is inline, and its figures are drawn in the reader's
browser from their Vega-Lite specs by the Vega/Vega-Lite/vega-embed bundle inlined into the
page (:func:`vadscene.audit.report.vega.vega_bundle`), so their tooltips work and each can be
saved as SVG or PNG from its menu.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable
from typing import Any

import pandas as pd

from vadscene.audit.report.document import Block, BulletList, Document, Figure, Note, Table, Text
from vadscene.audit.report.vega import vega_bundle


def render_html(document: Document, specs: dict[str, dict[str, Any]]) -> str:
    """The page of ``document``; ``specs`` (figure name → Vega-Lite spec) are the figures the
    page draws, inlined with the bundle that draws them (neither when there is no figure)."""
    esc = html.escape
    toc = "\n".join(f'<li><a href="#{s.anchor}">{esc(s.title)}</a></li>' for s in document.sections)
    body = "\n".join(
        f'<section id="{s.anchor}">\n<h2>{esc(s.title)}</h2>\n'
        + "\n".join(_block(b) for b in s.blocks)
        + "\n</section>"
        for s in document.sections
    )
    scripts = ""
    if specs:
        # "</" would end the script element early: JSON allows it escaped as "<\/"
        data = json.dumps(specs, ensure_ascii=False).replace("</", "<\\/")
        scripts = (
            f'<script type="application/json" id="figure-specs">{data}</script>\n'
            f"<script>{vega_bundle()}</script>\n<script>{_DRAW_FIGURES}</script>"
        )
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{esc(document.title)}</title>
<style>{_CSS}</style>
</head>
<body>
<header>
<h1>{esc(document.title)}</h1>
<p>{esc(document.intro)}</p>
</header>
<nav aria-label="Contents">
<h2>Contents</h2>
<ol>
{toc}
</ol>
</nav>
<main>
{body}
</main>
{scripts}
</body>
</html>
"""


def _block(block: Block) -> str:
    esc = html.escape
    match block:
        case Text(text):
            return f"<p>{esc(text)}</p>"
        case Note(text):
            return f'<p class="note"><strong>How to read this.</strong> {esc(text)}</p>'
        case BulletList(items):
            return "<ul>\n" + "\n".join(f"<li>{esc(i)}</li>" for i in items) + "\n</ul>"
        case Figure(name, _, alt_text):
            return (
                f'<figure id="figure-{name}" aria-label="{esc(alt_text)}"><div class="chart">'
                "</div><noscript>This figure is drawn by the script in this page: allow "
                "JavaScript, or write the report with --svg for figures/"
                f"{name}.svg.</noscript></figure>"
            )
        case Table(frame, labels):
            return _table(frame, labels)
    raise TypeError(block)


def _table(frame: pd.DataFrame, labels: int) -> str:
    """A plain table; label columns left-aligned, number columns right-aligned (CSS classes)."""
    kinds = ["text" if i < labels else "num" for i in range(frame.shape[1])]

    def row(cells: Iterable[Any], tag: str) -> str:
        render = _cell if tag == "td" else html.escape
        return (
            "<tr>"
            + "".join(
                f'<{tag} class="{kind}">{render(str(cell))}</{tag}>'
                for kind, cell in zip(kinds, cells, strict=True)
            )
            + "</tr>"
        )

    body = "\n".join(row(values, "td") for values in frame.values)
    return (
        f'<div class="table-wrap"><table>\n<thead>{row(frame.columns, "th")}</thead>\n'
        f"<tbody>\n{body}\n</tbody>\n</table></div>"
    )


_CI_CELL = re.compile(r"^(\S+) (\[[^\]]+\])(.*)$")


def _cell(text: str) -> str:
    """Put a cell's interval on its own smaller line, so wide CI tables fit the page."""
    match = _CI_CELL.match(text)
    if match is None:
        return html.escape(text)
    value, interval, mark = (html.escape(part) for part in match.groups())
    return f'{value}{mark} <span class="ci">{interval}</span>'


_DRAW_FIGURES = """
(() => {
  const specs = JSON.parse(document.getElementById("figure-specs").textContent);
  const actions = { export: true, source: false, compiled: false, editor: false };
  // one figure at a time, so the page stays responsive while the later ones are drawn
  (async () => {
    for (const [name, spec] of Object.entries(specs)) {
      const target = document.getElementById(`figure-${name}`).querySelector(".chart");
      try {
        await vegaEmbed(target, spec, { renderer: "svg", actions });
        target.dataset.drawn = "true";
      } catch (error) {
        target.textContent = `This figure could not be drawn: ${error}`;
        target.dataset.drawn = "failed";
      }
    }
    document.body.dataset.figuresDrawn = "true";
  })();
})();
"""
"""Draws every figure into its placeholder; ``data-drawn`` on each and ``data-figures-drawn``
on the body say when it is done (for people's scripts and our tests)."""


_CSS = """
:root { color-scheme: light; }
body { font: 15px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial,
  sans-serif; color: #212121; background: #fff; max-width: 1180px; margin: 0 auto;
  padding: 24px 32px 64px; }
h1 { font-size: 1.9em; margin: 0.2em 0 0.3em; }
h2 { font-size: 1.35em; margin: 2em 0 0.6em; padding-bottom: 0.2em; border-bottom: 1px solid #ddd; }
header p { color: #424242; max-width: 60em; }
nav { background: #f6f8fa; border: 1px solid #e1e4e8; border-radius: 6px; padding: 4px 20px 8px;
  display: inline-block; }
nav h2 { font-size: 1em; margin: 0.8em 0 0.3em; border: none; }
nav ol { margin: 0; padding-left: 1.4em; }
a { color: #0b5cad; text-decoration: none; }
a:hover { text-decoration: underline; }
p.note { background: #fffbea; border-left: 4px solid #e6b800; padding: 8px 14px; max-width: 62em;
  color: #333; }
ul { padding-left: 1.4em; }
.table-wrap { overflow-x: auto; margin: 0.8em 0 1.2em; }
table { border-collapse: collapse; font-size: 13.5px; }
th, td { padding: 4px 10px; border-bottom: 1px solid #e5e5e5; white-space: nowrap; }
thead th { border-bottom: 2px solid #999; background: #fafafa; white-space: normal;
  vertical-align: bottom; min-width: 4em; }
tbody tr:nth-child(even) { background: #fbfbfb; }
.ci { display: block; color: #666; font-size: 0.9em; }
th.num, td.num { text-align: right; font-variant-numeric: tabular-nums; }
th.text, td.text { text-align: left; }
figure { margin: 1.2em 0; overflow-x: auto; }
figure svg { max-width: 100%; height: auto; }
figure .chart[data-drawn="failed"] { color: #b00020; }
"""
