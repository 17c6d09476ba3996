"""Paper-ready LaTeX tables of an audit: metrics, scene bias and resolved pairs.

Each file holds one or more ``table``/``table*`` floats of booktabs ``tabular``\\ s, ready for
``\\input{}``: AUROCs as percentages with two decimals (as the papers tabulate them), bias-AUCs
with three, each followed by its 95 % interval ``[low, high]``; numbers sit in siunitx ``S``
columns, so their decimal points align. The preamble a paper needs is written at the top of
every file, and ``tables.tex`` compiles them all on their own.

The tables are laid out to fit without an overfull box in one-column and two-column papers
alike, so one set of files serves both (docs/latex.md). A table is sized for the narrowest
common page (:data:`COLUMN_WIDTH_PT`, :data:`TEXT_WIDTH_PT`, :data:`FLOAT_HEIGHT_PT`): from its
estimated width it is a ``table`` when it fits one column of a two-column paper, else a
``table*`` spanning both columns — in a one-column paper ``table*`` is an ordinary ``table``.
Too wide for that at ``\\small``, it is set ``\\footnotesize``, then split into blocks of fewer
column groups stacked in one float; only then are long row names wrapped, and only when
nothing else fits is the tabular scaled down (``\\resizebox``, which shrinks every glyph). Too
tall for a page, a table is continued in further floats.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pandas as pd

from vadscene.audit.compute.result import GRANULARITIES, AuditResult
from vadscene.audit.report import figures

COLUMN_WIDTH_PT = 229.0
"""One column of the narrowest common two-column page: ``article``'s (229.5 pt; CVPR 234 pt,
ACM 241 pt, IEEE 252 pt, A4 with 2 cm margins 237 pt)."""
TEXT_WIDTH_PT = 345.0
"""The narrowest common text width: one-column ``article``'s (345 pt; LNCS 347 pt, NeurIPS 397
pt, A4 with 2 cm margins 484 pt)."""
FLOAT_HEIGHT_PT = 500.0
"""Room for one float, caption included, on ``article``'s 550 pt text height (LNCS 548 pt)."""

_SPECIAL = re.compile(r"([\\&%$#_{}~^])")
_REPLACEMENT = {"\\": r"\textbackslash{}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}

# Advance widths of Computer Modern at 8 pt (cmr8.tfm) in em, the widest of the sizes a table
# uses relative to its size, so estimates err towards too wide. Characters a table escapes
# (``_``, ``{``, …) and the ones OT1 sets from other fonts get a generous 0.6 em, anything
# else (accented or non-Latin letters) 1 em.
_EM_WIDTHS = {
    **dict.fromkeys("!',.:;[]`il", 0.296),
    **dict.fromkeys("fj", 0.325),
    **dict.fromkeys(" -", 0.355),
    "I": 0.383,
    **dict.fromkeys("()t", 0.414),
    "r": 0.415,
    "s": 0.42,
    **dict.fromkeys("cez", 0.473),
    "?": 0.502,
    **dict.fromkeys("$*/0123456789ago", 0.532),
    "J": 0.546,
    **dict.fromkeys("kqvxy", 0.561),
    **dict.fromkeys("Sbdhnpu", 0.591),
    **dict.fromkeys('"\\^_{|}~', 0.6),
    "Z": 0.65,
    "L": 0.664,
    "F": 0.694,
    **dict.fromkeys("EP", 0.723),
    "B": 0.753,
    **dict.fromkeys("CTw", 0.768),
    "R": 0.782,
    **dict.fromkeys("AHNUVXY", 0.796),
    **dict.fromkeys("<>", 0.8),
    "D": 0.812,
    "K": 0.826,
    **dict.fromkeys("&+=@OQ", 0.827),
    "G": 0.834,
    **dict.fromkeys("#%m", 0.886),
    "M": 0.973,
    "W": 1.091,
}
_ITALIC = 1.08  # cmti is a little wider than cmr where it differs
_SIZES = {"small": 9.0, "footnotesize": 8.0}
"""Font sizes (pt) of the size commands in a 10 pt class, in the order they are tried."""
_LINE = {"small": 11.0, "footnotesize": 9.5, "normalsize": 12.0}
"""Baseline skips (pt) of the sizes: a tabular row's height."""
_TABCOLSEP = 6.0
_RULE_HEIGHT = 4.0  # a booktabs rule with its space above and below, generously
_CAPTION_SKIP = 10.0
_MARGIN_PT = 4.0
"""Kept free of a table's width: the estimates are good to about a point per column group."""
_MIN_WRAPPED_STUB_EM = 6.0
"""Narrowest a wrapped row-name column is made, in em of the table's size."""
_BREAK_AFTER = re.compile(r"(?<=[ _/+\-])")
"""Where a wrapped row name may break: after a space, ``_``, ``/``, ``+`` or ``-``."""


def latex_tables(result: AuditResult) -> dict[str, str]:
    """File name (``metrics.tex``, ``bias.tex``, ``resolved.tex``) → LaTeX source, plus
    ``tables.tex``, a document that ``\\input``\\ s them; tables without rows are left out,
    and with none there is no ``tables.tex`` either."""
    tables = {
        name: table
        for name, table in (
            ("metrics.tex", _metrics(result)),
            ("bias.tex", _bias(result)),
            ("resolved.tex", _resolved(result)),
        )
        if table is not None
    }
    files = {name: table.source() for name, table in tables.items()}
    if tables:
        files["tables.tex"] = _standalone(tables)
    return files


def escape(text: object) -> str:
    """Text safe inside a LaTeX cell: ``\\ & % $ # _ { } ~ ^`` escaped."""
    return _SPECIAL.sub(lambda m: _REPLACEMENT.get(m.group(1), "\\" + m.group(1)), str(text))


# --- what a table holds ----------------------------------------------------------------------


@dataclass(frozen=True)
class _Estimate:
    """A numeric cell: an estimate with its interval (NaN: none) and a significance star."""

    value: float
    low: float = math.nan
    high: float = math.nan
    star: bool = False


_Cell = _Estimate | str
"""A data cell: an estimate (in an ``S`` column group) or centred text."""


@dataclass(frozen=True)
class _Row:
    name: str
    cells: tuple[_Cell, ...]


@dataclass(frozen=True)
class _Section:
    """Rows under an optional header row (titles of the name column and of each cell column)
    and an optional full-width line ``(LaTeX, plain text of the same width)``."""

    rows: tuple[_Row, ...]
    header: tuple[str, ...] | None = None
    line: tuple[str, str] | None = None


@dataclass(frozen=True)
class _Grid:
    """A tabular's content: sections of rows of the same cell columns."""

    sections: tuple[_Section, ...]
    digits: int
    scale: float = 1.0


@dataclass(frozen=True)
class _Layout:
    size: str
    wide: bool  # table* (spanning a two-column page's columns) rather than table
    stub_width: float | None = None  # wrap row names to this width (pt)
    resized: bool = False


@dataclass
class _Table:
    """One file's floats: what they hold, caption, label, the layout chosen, a grid per float."""

    what: str
    caption: str
    label: str
    layout: _Layout
    grids: list[_Grid]
    packages: list[str] = field(default_factory=list)
    key: tuple = ()  # how good the layout is (:func:`_planned`): less is better

    def source(self) -> str:
        """The file: its preamble comment, then its floats."""
        placement = "table*" if self.layout.wide else "table"
        fits = (
            "it spans both columns of a two-column\n% paper (table*; in a one-column paper "
            "that is an ordinary table)."
            if self.layout.wide
            else "it fits one column of a two-column paper."
        )
        lines = [
            f"% {self.what} (`vadscene audit --latex`).",
            "% \\input{} it in a paper whose preamble has "
            + " ".join(f"\\usepackage{{{p}}}" for p in self.packages),
            f"% Sized for the narrowest common page, {fits}",
        ]
        if self.layout.resized:
            lines.append("% Scaled down to the line width: too wide to fit in small type.")
        for part, grid in enumerate(self.grids, start=1):
            if len(self.grids) == 1:
                caption, label = self.caption, self.label
            elif part == 1:
                caption = f"{self.caption} Part 1 of {len(self.grids)}."
                label = self.label
            else:
                caption = (
                    f"{self.caption.split('. ')[0].rstrip('.')}, part {part} of "
                    f"{len(self.grids)} (continued from Table~\\ref{{{self.label}}})."
                )
                label = f"{self.label}-{part}"
            lines += [
                f"\\begin{{{placement}}}[{'tp' if self.layout.wide else 'tbp'}]",
                "\\centering",
                f"\\caption{{{caption}}}",
                f"\\label{{{label}}}",
                f"\\{self.layout.size}",
                *_tabular(grid, self.layout),
                f"\\end{{{placement}}}",
            ]
        return "\n".join(lines) + "\n"


# --- the three tables ------------------------------------------------------------------------


def _metrics(result: AuditResult) -> _Table | None:
    metrics = result.metrics
    if metrics.empty:
        return None
    order = [g for g in figures.GRANULARITY_LABELS if g in GRANULARITIES]
    by_key = {(str(r.model), str(r.granularity)): r for r in metrics.itertuples()}
    models = figures.model_order(result)

    def estimate(model: str, granularity: str) -> _Estimate:
        row = by_key.get((model, granularity))
        if row is None:
            return _Estimate(math.nan)
        return _Estimate(_number(row.value), _number(row.ci_low), _number(row.ci_high))

    def arrangement(per_block: int) -> Callable[[Sequence[str]], _Grid]:
        blocks = [order[i : i + per_block] for i in range(0, len(order), per_block)]

        def grid(chunk: Sequence[str]) -> _Grid:
            sections = tuple(
                _Section(
                    rows=tuple(
                        _Row(model, tuple(estimate(model, g) for g in block)) for model in chunk
                    ),
                    header=("Model", *(_granularity_label(g) for g in block)),
                )
                for block in blocks
            )
            return _Grid(sections, digits=2, scale=100.0)

        return grid

    return _planned(
        what="Frame AUROC of each model at each granularity",
        caption="Frame AUROC (\\%) at each granularity"
        + (
            f", 95\\,\\% paired video-bootstrap interval ({_replicates(result)})."
            if _any_interval(metrics, "")
            else ", without bootstrap intervals."
        ),
        label="tab:vadscene-metrics",
        arrangements=[arrangement(6), arrangement(3), arrangement(2)],
        units=models,
    )


def _bias(result: AuditResult) -> _Table | None:
    bias = result.bias
    if bias.empty:
        return None
    leak_free = "bias_auroc_leak_free" in bias
    labels = figures.contrast_labels(bias)
    order = pd.Categorical(labels, categories=figures.contrast_order(bias), ordered=True)
    models = pd.Categorical(bias["model"], categories=figures.model_order(result), ordered=True)
    index = pd.DataFrame({"c": order, "m": models}).sort_values(["c", "m"], kind="stable").index
    # A group is a contrast's rows; its poles' sizes are the same for every model.
    groups: dict[tuple[str, int, int], list[_Row]] = {}
    for position in index:
        row = bias.loc[position]
        cells = [
            _Estimate(
                _number(row["bias_auroc"]),
                _number(row["ci_low"]),
                _number(row["ci_high"]),
                _flag(row.get("significant")),
            )
        ]
        if leak_free:
            cells.append(
                _Estimate(
                    _number(row["bias_auroc_leak_free"]),
                    _number(row["ci_low_leak_free"]),
                    _number(row["ci_high_leak_free"]),
                    _flag(row.get("significant_leak_free")),
                )
            )
        key = (str(labels[position]), int(row["n_positive"]), int(row["n_negative"]))
        groups.setdefault(key, []).append(_Row(str(row["model"]), tuple(cells)))
    header = ("Model", "bias-AUC (all)", *(["bias-AUC (Normal only)"] if leak_free else []))
    # A contrast with more models than a float holds continues in the next one.
    units = [
        (key, tuple(rows[i : i + _BIAS_ROWS_PER_UNIT]))
        for key, rows in groups.items()
        for i in range(0, len(rows), _BIAS_ROWS_PER_UNIT)
    ]

    def grid(chunk: Sequence[tuple[tuple[str, int, int], tuple[_Row, ...]]]) -> _Grid:
        sections = tuple(
            _Section(
                rows=rows,
                header=header if i == 0 else None,
                line=(
                    f"\\textit{{{escape(label)}}}, "
                    f"$n_\\oplus/n_\\ominus = {n_positive}/{n_negative}$",
                    f"{label}, nn/nn = {n_positive}/{n_negative}",
                ),
            )
            for i, ((label, n_positive, n_negative), rows) in enumerate(chunk)
        )
        return _Grid(sections, digits=3)

    return _planned(
        what="Scene bias-AUC of each model for each contrast",
        caption="Scene bias-AUC on normal footage"
        + (
            " with 95\\,\\% within-pole bootstrap interval"
            if _any_interval(bias, "") or (leak_free and _any_interval(bias, "_leak_free"))
            else ", without bootstrap intervals"
        )
        + "; rows grouped by contrast, with the videos at its poles ($n_\\oplus/n_\\ominus$); "
        "all: normal frames of every video"
        + (", Normal only: Normal videos (no anomaly leakage)" if leak_free else "")
        + ". $^{\\ast}$: permutation test significant after Holm correction across contrasts.",
        label="tab:vadscene-bias",
        arrangements=[grid],
        units=units,
    )


_BIAS_ROWS_PER_UNIT = 30
"""Most models of one contrast in one float (:data:`FLOAT_HEIGHT_PT` holds about 40 rows)."""


def _resolved(result: AuditResult) -> _Table | None:
    resolved = result.resolved
    if resolved.empty:
        return None
    families = list(dict.fromkeys(resolved["family"].astype(str)))
    order = [g for g in figures.GRANULARITY_LABELS if g in set(resolved["granularity"])]
    counts = {
        (str(r.granularity), str(r.family)): f"{r.resolved}/{r.pairs}"
        for r in resolved.itertuples()
    }

    def by_family(chunk: Sequence[str]) -> _Grid:
        rows = tuple(
            _Row(_granularity_label(g), tuple(counts.get((g, f), "--") for f in families))
            for g in chunk
        )
        return _Grid((_Section(rows, header=("Granularity", *families)),), digits=0)

    def by_granularity(chunk: Sequence[str]) -> _Grid:
        rows = tuple(_Row(f, tuple(counts.get((g, f), "--") for g in order)) for f in chunk)
        header = ("Family", *map(_granularity_label, order))
        return _Grid((_Section(rows, header=header),), digits=0)

    plans = [
        _planned(
            what="Resolved model pairs at each granularity",
            caption=(
                "Resolved model pairs (the paired 95\\,\\% interval of the difference "
                "excludes 0) over all pairs, within and across backbone families, and within "
                "each family."
                if figures.has_intervals(result)
                else "Model pairs compared, over all pairs, within and across backbone "
                "families, and within each family; "
                "no bootstrap intervals were computed ($B = 0$), so no pair is resolved."
            ),
            label="tab:vadscene-resolved",
            arrangements=[arrange],
            units=units,
        )
        # families as columns, or as rows when there are too many of them to be columns
        for arrange, units in ((by_family, order), (by_granularity, families))
    ]
    return min(plans, key=lambda table: table.key)


# --- planning: float, size, arrangement and continuation -------------------------------------


def _planned(
    *,
    what: str,
    caption: str,
    label: str,
    arrangements: Sequence[Callable[[Sequence], _Grid]],
    units: Sequence,
) -> _Table:
    """The best layout that fits, the units (rows, or a contrast's rows) spread over as many
    floats as their height needs. Best: not scaled down, then the fewest floats, the fewest
    wrapped row names, one column rather than both, the fewest column-group blocks (the
    arrangements come widest first), ``\\small`` rather than ``\\footnotesize``."""
    units = list(units)
    best: tuple[tuple, _Layout, list[_Grid]] | None = None
    for wide, page in ((False, COLUMN_WIDTH_PT), (True, TEXT_WIDTH_PT)):
        budget = page - _MARGIN_PT
        for index, arrange in enumerate(arrangements):
            grid = arrange(units)
            for size in _SIZES:
                for layout in _layouts(grid, size, wide, budget):
                    grids = _continued(arrange, units, layout, caption)
                    wrapped = _wrapped_names(grid, layout)
                    key = (False, len(grids), wrapped, wide, index, list(_SIZES).index(size))
                    if best is None or key < best[0]:
                        best = key, layout, grids
    if best is None:
        layout = _Layout("footnotesize", wide=True, resized=True)
        best = (True,), layout, _continued(arrangements[-1], units, layout, caption)
    _, layout, grids = best
    packages = ["booktabs", "siunitx"]
    if layout.stub_width is not None:
        packages.append("array")
    if layout.resized:
        packages.append("graphicx")
    return _Table(what, caption, label, layout, grids, packages, key=best[0])


def _layouts(grid: _Grid, size: str, wide: bool, budget: float) -> list[_Layout]:
    """The layouts of ``grid`` at ``size`` within ``budget`` (pt): as it is, else with its row
    names wrapped to the room the other columns leave (never narrower than
    :data:`_MIN_WRAPPED_STUB_EM` or than a name's longest unbreakable piece)."""
    columns, lines = _widths(grid, size)
    stub = _stub_width(grid, size)
    if max(columns + stub, lines) <= budget:
        return [_Layout(size, wide)]
    room = math.floor(budget - columns)
    needed = max(_MIN_WRAPPED_STUB_EM * _SIZES[size], _longest_segment(grid, size))
    if lines <= budget and needed <= room < stub:
        return [_Layout(size, wide, stub_width=room)]
    return []


def _wrapped_names(grid: _Grid, layout: _Layout) -> int:
    if layout.stub_width is None:
        return 0
    names = {row.name for section in grid.sections for row in section.rows}
    return sum(_text_width(n, _SIZES[layout.size]) > layout.stub_width for n in names)


def _continued(
    arrange: Callable[[Sequence], _Grid], units: list, layout: _Layout, caption: str
) -> list[_Grid]:
    """The fewest consecutive, near-equal chunks of ``units`` whose floats each fit the page."""
    width = TEXT_WIDTH_PT if layout.wide else COLUMN_WIDTH_PT
    caption_lines = math.ceil(_text_width(caption, _LINE["normalsize"] - 2) / width) + 1
    budget = FLOAT_HEIGHT_PT - caption_lines * _LINE["normalsize"] - _CAPTION_SKIP
    for parts in range(1, len(units) + 1):
        size, extra = divmod(len(units), parts)
        bounds = [i * size + min(i, extra) for i in range(parts + 1)]
        grids = [arrange(units[a:b]) for a, b in itertools.pairwise(bounds)]
        if all(_height(g, layout) <= budget for g in grids):
            return grids
    return [arrange(units[i : i + 1]) for i in range(len(units))]


# --- width and height estimates --------------------------------------------------------------


def _text_width(text: str, size: float, *, italic: bool = False) -> float:
    """Estimated width (pt) of plain text at ``size`` pt."""
    em = sum(_EM_WIDTHS.get(c, 1.0) for c in text)
    return em * size * (_ITALIC if italic else 1.0)


@dataclass(frozen=True)
class _Columns:
    """The tabular columns of each cell column: an estimate's value and interval columns
    (``S``) with the digits before the point, and whether a star column follows, or a
    centred text column."""

    kinds: tuple[str, ...]  # "estimate" or "text"
    intervals: tuple[bool, ...]
    stars: tuple[bool, ...]
    integer_digits: tuple[tuple[int, int, int], ...]  # value, low, high

    def span(self, j: int) -> int:
        return 1 + 2 * self.intervals[j] + self.stars[j] if self.kinds[j] == "estimate" else 1


def _columns(grid: _Grid) -> _Columns:
    rows = [row for section in grid.sections for row in section.rows]
    count = max((len(r.cells) for r in rows), default=0)
    kinds, intervals, stars, digits = [], [], [], []
    for j in range(count):
        cells = [r.cells[j] for r in rows if j < len(r.cells)]
        estimates = [c for c in cells if isinstance(c, _Estimate)]
        kinds.append("estimate" if estimates else "text")
        intervals.append(any(_finite(c.low) and _finite(c.high) for c in estimates))
        stars.append(any(c.star for c in estimates))
        digits.append(
            tuple(
                max(
                    (_integer_digits(v, grid) for c in estimates if _finite(v := getattr(c, a))),
                    default=1,
                )
                for a in ("value", "low", "high")
            )
        )
    return _Columns(tuple(kinds), tuple(intervals), tuple(stars), tuple(digits))  # type: ignore[arg-type]


def _integer_digits(value: float, grid: _Grid) -> int:
    return len(f"{abs(grid.scale * value):.{grid.digits}f}".split(".")[0])


def _number_width(integer: int, grid: _Grid, size: float) -> float:
    digits = integer + grid.digits
    return (digits * _EM_WIDTHS["0"] + (_EM_WIDTHS["."] if grid.digits else 0)) * size


def _cell_column_widths(grid: _Grid, size: float) -> list[float]:
    """Width of each cell column's tabular columns (padding inside the group included)."""
    columns = _columns(grid)
    rows = [row for section in grid.sections for row in section.rows]
    widths = []
    for j, kind in enumerate(columns.kinds):
        if kind == "text":
            widths.append(max(_text_width(str(r.cells[j]), size) for r in rows if j < len(r.cells)))
            continue
        value, low, high = columns.integer_digits[j]
        width = _number_width(value, grid, size)
        if columns.intervals[j]:
            width += _number_width(low, grid, size) + _number_width(high, grid, size)
            width += (0.167 + _EM_WIDTHS["["] + _EM_WIDTHS[","] + 0.167 + _EM_WIDTHS["]"]) * size
        if columns.stars[j]:
            width += 0.6 * size  # the star column (its padding is the space between groups)
        widths.append(width)
    return widths


def _stub_width(grid: _Grid, size: str) -> float:
    names = [row.name for section in grid.sections for row in section.rows]
    names += [section.header[0] for section in grid.sections if section.header]
    return max(_text_width(n, _SIZES[size]) for n in names)


def _longest_segment(grid: _Grid, size: str) -> float:
    """Width of the longest piece of a row name that cannot be broken."""
    names = [row.name for section in grid.sections for row in section.rows]
    return max(_text_width(piece, _SIZES[size]) for n in names for piece in _BREAK_AFTER.split(n))


def _widths(grid: _Grid, size: str) -> tuple[float, float]:
    """Estimated widths (pt) of the tabular without its row-name column (no padding at the
    outer edges), and of its widest full-width line."""
    points = _SIZES[size]
    cells = _cell_column_widths(grid, points)
    for section in grid.sections:
        for j, title in enumerate((section.header or ())[1:]):
            lines = _title_lines(title, cells[j], points)
            cells[j] = max(cells[j], *(_text_width(line, points) for line in lines))
    full = [
        _text_width(section.line[1], points, italic=True)
        for section in grid.sections
        if section.line
    ]
    return sum(cells) + 2 * _TABCOLSEP * len(cells), max(full, default=0.0)


def _title_lines(title: str, width: float, size: float) -> list[str]:
    """A column title broken at spaces into lines filled up to ``width`` (pt), so that a title
    over an estimate does not widen it; a word wider than that stays whole."""
    lines: list[str] = []
    for word in title.split(" "):
        if lines and _text_width(f"{lines[-1]} {word}", size) <= width:
            lines[-1] += f" {word}"
        else:
            lines.append(word)
    return lines


def _height(grid: _Grid, layout: _Layout) -> float:
    """Estimated height (pt) of the tabular: its rows (a wrapped name taking more lines), its
    header and full-width lines, and the rules and spaces between them."""
    line = _LINE[layout.size]
    height = 2 * _RULE_HEIGHT  # top and bottom rules
    points = _SIZES[layout.size]
    widths = _cell_column_widths(grid, points)
    for section in grid.sections:
        if section.header:
            titles = [
                len(_title_lines(t, widths[j], points)) for j, t in enumerate(section.header[1:])
            ]
            height += line * max([1, *titles]) + _RULE_HEIGHT
        if section.line:
            height += line + _RULE_HEIGHT
        for row in section.rows:
            lines = 1
            if layout.stub_width is not None:
                lines = math.ceil(_text_width(row.name, _SIZES[layout.size]) / layout.stub_width)
            height += line * max(1, lines)
    return height


# --- LaTeX -----------------------------------------------------------------------------------


def _tabular(grid: _Grid, layout: _Layout) -> list[str]:
    columns = _columns(grid)
    count = len(columns.kinds)
    spec = ["@{}"]
    if layout.stub_width is not None:
        spec.append(f">{{\\raggedright\\arraybackslash}}p{{{layout.stub_width:g}pt}}")
    else:
        spec.append("l")
    for j, kind in enumerate(columns.kinds):
        if kind == "text":
            spec.append("c")
            continue
        value, low, high = columns.integer_digits[j]
        spec.append(_s_column(value, grid))
        if columns.intervals[j]:
            spec.append("@{\\,[}" + _s_column(low, grid) + "@{,\\,}" + _s_column(high, grid))
            # The bracket takes the place of the space between columns, so it adds it back.
            # (a star column after it has the space on its right)
            last = j == count - 1 or columns.stars[j]
            spec.append("@{]}" if last else "@{]\\hspace{2\\tabcolsep}}")
        if columns.stars[j]:
            spec.append("l")
    spec.append("@{}")
    total = 1 + sum(columns.span(j) for j in range(count))
    widths = _cell_column_widths(grid, _SIZES[layout.size])

    def title_cell(j: int, title: str) -> str:
        edge = "@{}" if j == count - 1 else ""
        lines = [escape(line) for line in _title_lines(title, widths[j], _SIZES[layout.size])]
        text = (
            lines[0]
            if len(lines) == 1
            else "\\begin{tabular}[b]{@{}c@{}}" + " \\\\ ".join(lines) + "\\end{tabular}"
        )
        if columns.span(j) == 1:
            # braced, an S column takes it for text, not a number
            return text if columns.kinds[j] == "text" else f"{{{text}}}"
        return f"\\multicolumn{{{columns.span(j)}}}{{c{edge}}}{{{text}}}"

    def name_cell(name: str) -> str:
        text = escape(name)
        if layout.stub_width is not None:
            text = re.sub(r"(\\_|/|\+)", r"\1\\allowbreak{}", text)
        return text

    def data_cells(j: int, cell: _Cell) -> str:
        if not isinstance(cell, _Estimate):
            return escape(cell)
        interval = _finite(cell.low) and _finite(cell.high)
        if not _finite(cell.value) or (columns.intervals[j] and not interval):
            text = _format(cell.value, grid) if _finite(cell.value) else "--"
            edge = "@{}" if j == count - 1 else ""
            return f"\\multicolumn{{{columns.span(j)}}}{{c{edge}}}{{{text}}}"
        parts = [_format(cell.value, grid)]
        if columns.intervals[j]:
            parts += [_format(cell.low, grid), _format(cell.high, grid)]
        if columns.stars[j]:
            parts.append("$^{\\ast}$" if cell.star else "")
        return " & ".join(parts)

    lines = [f"\\begin{{tabular}}{{{''.join(spec)}}}", "\\toprule"]
    for i, section in enumerate(grid.sections):
        if section.header:
            if i:
                lines.append("\\midrule")
            titles = [escape(section.header[0])]
            titles += [title_cell(j, t) for j, t in enumerate(section.header[1:])]
            lines += [" & ".join(titles) + " \\\\", "\\midrule"]
        elif section.line and i:
            lines.append("\\addlinespace")
        if section.line:
            lines.append(f"\\multicolumn{{{total}}}{{@{{}}l@{{}}}}{{{section.line[0]}}} \\\\")
        for row in section.rows:
            cells = [name_cell(row.name), *(data_cells(j, c) for j, c in enumerate(row.cells))]
            lines.append(" & ".join(cells) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    if layout.resized:
        lines = ["\\resizebox{\\linewidth}{!}{%", *lines, "}"]
    return lines


def _s_column(integer: int, grid: _Grid) -> str:
    return f"S[table-format={integer}{f'.{grid.digits}' if grid.digits else ''}]"


def _standalone(tables: dict[str, _Table]) -> str:
    packages = list(dict.fromkeys(p for t in tables.values() for p in t.packages))
    return (
        "\n".join(
            [
                "% The audit's tables on their own: run `pdflatex tables.tex` in this folder.",
                "% Add twocolumn to the class options to see them in a two-column paper.",
                "\\documentclass{article}",
                *(f"\\usepackage{{{p}}}" for p in packages),
                "\\begin{document}",
                *(f"\\input{{{name}}}" for name in tables),
                "\\end{document}",
            ]
        )
        + "\n"
    )


def _granularity_label(granularity: str) -> str:
    return figures.GRANULARITY_LABELS[granularity].split(" — ")[0]


def _number(value: object) -> float:
    return float(value) if figures.is_finite_number(value) else math.nan


def _flag(value: object) -> bool:
    """A true flag (numpy's included); NaN, a missing flag, is false."""
    return value in (True,)


def _finite(value: float) -> bool:
    return math.isfinite(value)


def _format(value: float, grid: _Grid) -> str:
    return f"{grid.scale * value:.{grid.digits}f}"


def _any_interval(table: pd.DataFrame, suffix: str) -> bool:
    low, high = table[f"ci_low{suffix}"], table[f"ci_high{suffix}"]
    return bool((low.map(figures.is_finite_number) & high.map(figures.is_finite_number)).any())


def _replicates(result: AuditResult) -> str:
    b = (result.conventions.get("bootstrap") or {}).get("replicates")
    return f"$B = {b}$" if b is not None else "bootstrap"
