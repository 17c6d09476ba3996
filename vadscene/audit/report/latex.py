"""Paper-ready LaTeX tables of an audit: metrics, scene bias and resolved pairs (booktabs).

AUROCs are printed as percentages with two decimals (as the papers tabulate them), with the
95 % interval in brackets. Each table is a ``tabular`` inside a ``table`` float with a caption
stating the conventions, for ``\\input{}`` into a paper that loads ``booktabs``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from vadscene.audit.compute.result import GRANULARITIES, AuditResult
from vadscene.audit.report import figures

_SPECIAL = re.compile(r"([\\&%$#_{}~^])")
_REPLACEMENT = {"\\": r"\textbackslash{}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def latex_tables(result: AuditResult) -> dict[str, str]:
    """File name (``metrics.tex``, ``bias.tex``, ``resolved.tex``) → LaTeX source; tables
    without rows are left out."""
    tables = {
        "metrics.tex": _metrics(result),
        "bias.tex": _bias(result),
        "resolved.tex": _resolved(result),
    }
    return {name: text for name, text in tables.items() if text is not None}


def write_latex_tables(result: AuditResult, out_dir: Path | str) -> dict[str, Path]:
    """Write :func:`latex_tables` into ``out_dir`` (created if missing); name → path."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = {}
    for name, text in latex_tables(result).items():
        (out_dir / name).write_text(text, encoding="utf-8")
        written[name] = out_dir / name
    return written


def escape(text: object) -> str:
    """Text safe inside a LaTeX cell: ``\\ & % $ # _ { } ~ ^`` escaped."""
    return _SPECIAL.sub(lambda m: _REPLACEMENT.get(m.group(1), "\\" + m.group(1)), str(text))


def _metrics(result: AuditResult) -> str | None:
    metrics = result.metrics
    if metrics.empty:
        return None
    labels = [figures.GRANULARITY_LABELS[g].split(" — ")[0] for g in GRANULARITIES]
    rows = []
    for model in figures.model_order(result):
        cells = metrics[metrics["model"] == model].set_index("granularity")
        rows.append(
            [escape(model)]
            + [_ci(*cells.loc[g, ["value", "ci_low", "ci_high"]]) for g in GRANULARITIES]
        )
    return _table(
        ["Model", *map(escape, labels)],
        rows,
        caption="Frame AUROC (\\%) at each granularity, 95\\,\\% paired video-bootstrap interval "
        f"({_replicates(result)}).",
        label="tab:vadscene-metrics",
    )


def _bias(result: AuditResult) -> str | None:
    bias = result.bias
    if bias.empty:
        return None
    two = "bias_auroc_leak_free" in bias
    order = pd.Categorical(
        figures.contrast_labels(bias), categories=figures.contrast_order(bias), ordered=True
    )
    models = pd.Categorical(bias["model"], categories=figures.model_order(result), ordered=True)
    index = pd.DataFrame({"c": order, "m": models}).sort_values(["c", "m"], kind="stable").index
    header = ["Contrast", "Model", "$n_\\oplus$/$n_\\ominus$", "bias-AUC (all)"]
    if two:
        header += ["bias-AUC (Normal only)"]
    rows = []
    for _, row in bias.loc[index].iterrows():
        cells = [
            escape(f"{row['factor']}: {row['positive']} vs {row['negative']}"),
            escape(row["model"]),
            f"{row['n_positive']}/{row['n_negative']}",
            _ci(row["bias_auroc"], row["ci_low"], row["ci_high"], percent=False)
            + _star(row.get("significant")),
        ]
        if two:
            cells.append(
                _ci(
                    row["bias_auroc_leak_free"],
                    row["ci_low_leak_free"],
                    row["ci_high_leak_free"],
                    percent=False,
                )
                + _star(row.get("significant_leak_free"))
            )
        rows.append(cells)
    return _table(
        header,
        rows,
        caption="Scene bias-AUC on normal footage with 95\\,\\% within-pole bootstrap interval; "
        "all: normal frames of every video, Normal only: Normal videos "
        "(no anomaly leakage). $^{\\ast}$: permutation test significant after Holm "
        "correction across contrasts.",
        label="tab:vadscene-bias",
        text_columns=2,
    )


def _resolved(result: AuditResult) -> str | None:
    resolved = result.resolved
    if resolved.empty:
        return None
    families = list(dict.fromkeys(resolved["family"]))
    rows = []
    for granularity in GRANULARITIES:
        cells = resolved[resolved["granularity"] == granularity].set_index("family")
        label = figures.GRANULARITY_LABELS[granularity].split(" — ")[0]
        rows.append(
            [escape(label)]
            + [f"{cells.loc[f, 'resolved']}/{cells.loc[f, 'pairs']}" for f in families]
        )
    return _table(
        ["Granularity", *(escape(f) for f in families)],
        rows,
        caption="Resolved model pairs (the paired 95\\,\\% interval of the difference excludes "
        "0) over all pairs and within each backbone family.",
        label="tab:vadscene-resolved",
    )


def _table(
    header: Sequence[str],
    rows: list[list[str]],
    *,
    caption: str,
    label: str,
    text_columns: int = 1,
) -> str:
    columns = "l" * text_columns + "c" * (len(header) - text_columns)
    lines = [
        "\\begin{table}[t]",
        "\\centering",
        f"\\caption{{{caption}}}",
        f"\\label{{{label}}}",
        f"\\begin{{tabular}}{{{columns}}}",
        "\\toprule",
        " & ".join(header) + " \\\\",
        "\\midrule",
        *(" & ".join(row) + " \\\\" for row in rows),
        "\\bottomrule",
        "\\end{tabular}",
        "\\end{table}",
    ]
    return "\n".join(lines) + "\n"


def _ci(value: float, low: float, high: float, *, percent: bool = True) -> str:
    scale, digits = (100, 2) if percent else (1, 3)
    if not figures.is_finite_number(value):
        return "--"
    text = f"{scale * value:.{digits}f}"
    if figures.is_finite_number(low) and figures.is_finite_number(high):
        text += f" [{scale * low:.{digits}f}, {scale * high:.{digits}f}]"
    return text


def _star(significant: object) -> str:
    return "$^{\\ast}$" if significant in (True,) else ""


def _replicates(result: AuditResult) -> str:
    b = (result.conventions.get("bootstrap") or {}).get("replicates")
    return f"$B = {b}$" if b is not None else "bootstrap"
