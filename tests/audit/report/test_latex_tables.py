"""Paper-ready LaTeX tables (``vadscene audit --latex``): booktabs tables holding the report's
numbers, and TeX's special characters escaped."""

from __future__ import annotations

import json
from pathlib import Path

from vadscene.cli import run


def test_latex_tables_are_booktabs_with_the_report_numbers(
    snippet_demo: Path, tmp_path: Path
) -> None:
    out = tmp_path / "report"
    code = run(
        [
            "audit",
            "--workspace",
            str(snippet_demo),
            "--models",
            str(snippet_demo / "benchmark" / "models.json"),
            "--bootstrap",
            "20",
            "--latex",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    assert {p.name for p in (out / "latex").iterdir()} == {
        "metrics.tex",
        "bias.tex",
        "resolved.tex",
    }
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    metrics = (out / "latex" / "metrics.tex").read_text(encoding="utf-8")
    for rule in ("\\toprule", "\\midrule", "\\bottomrule", "\\begin{tabular}{lcccccc}"):
        assert rule in metrics
    micro = next(
        r
        for r in report["metrics"]
        if r["model"] == "grayscale_keyed" and r["granularity"] == "micro"
    )
    row = next(line for line in metrics.splitlines() if line.startswith("grayscale\\_keyed & "))
    expected = (
        f"{100 * micro['value']:.2f} [{100 * micro['ci_low']:.2f}, {100 * micro['ci_high']:.2f}]"
    )
    assert row.split(" & ")[1] == expected
    bias = (out / "latex" / "bias.tex").read_text(encoding="utf-8")
    assert (
        "bias-AUC (Normal only)" in bias and "color: color vs grayscale & grayscale\\_keyed" in bias
    )
    resolved = (out / "latex" / "resolved.tex").read_text(encoding="utf-8")
    assert "Granularity & all & demo-cnn & demo-vlm \\\\" in resolved


def test_latex_escapes_special_characters() -> None:
    from vadscene.audit.report.latex import escape

    assert escape("a_b & 50% #1 {x} $y ~z ^w \\") == (
        "a\\_b \\& 50\\% \\#1 \\{x\\} \\$y "
        "\\textasciitilde{}z \\textasciicircum{}w \\textbackslash{}"
    )
