"""Paper-ready LaTeX tables (``vadscene audit --latex``): booktabs tables holding every number
of the report, TeX's special characters escaped, and — compiled by a real pdflatex — no
overfull box in a one-column or a two-column article (issue 27).

Two audits are tabled: the demo's (4 models, 6 contrasts) and a wide one shaped like
UCF-Crime's papers (16 models with long names, 14 categories, every catalogue contrast:
224 bias rows). The compiling tests are slow; they skip without pdflatex unless
VADSCENE_REQUIRE_TEX=1 (set in CI), which makes a missing pdflatex a failure.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pytest
from helpers import copy_demo

from vadscene.cli import run
from vadscene.core.catalogue import load_catalogue

TABLES = ("metrics.tex", "bias.tex", "resolved.tex")

CATEGORIES = [
    *("Abuse", "Arrest", "Arson", "Assault", "Burglary", "Explosion", "Fighting"),
    *("RoadAccidents", "Robbery", "Shooting", "Shoplifting", "Stealing", "Vandalism"),
]
WIDE_MODELS = (
    # name, family, skill: how far the anomalous frames' scores are raised
    ("Sultani et al. & MIL (C3D, 32 segments)", "weakly-supervised C3D", 0.10),
    ("RTFM (I3D-ResNet50, 10-crop)", "weakly-supervised I3D", 0.25),
    ("MGFN (VideoSwin-B, 10-crop)", "weakly-supervised VideoSwin", 0.30),
    ("UR-DMU (I3D-ResNet50)", "weakly-supervised I3D", 0.30),
    ("UR-DMU (VideoSwin-B)", "weakly-supervised VideoSwin", 0.35),
    ("S3R (I3D-ResNet50, self-supervised)", "weakly-supervised I3D", 0.25),
    ("PEL4VAD (I3D + prompt learning)", "weakly-supervised I3D", 0.35),
    ("TEVAD (I3D + SwinBERT captions)", "weakly-supervised I3D", 0.30),
    ("CLIP-TSA (ViT-B/16)", "CLIP-based", 0.35),
    ("VadCLIP (ViT-B/16, weakly supervised)", "CLIP-based", 0.40),
    ("AnomalyCLIP (ViT-L/14@336px)", "CLIP-based", 0.40),
    ("GlanceVAD_I3D_glance_supervision", "weakly-supervised I3D", 0.35),
    ("LAVAD (BLIP-2 + Llama-2-13B, training-free)", "training-free VLM/LLM", 0.20),
    ("Holmes-VAD (LLaVA-1.5-7B, 100% instruction data)", "training-free VLM/LLM", 0.30),
    ("VERA (InternVL2-8B, verbalized learning)", "training-free VLM/LLM", 0.25),
    ("random_baseline #16", "baselines", 0.0),
)

DOCUMENTS = {
    # the page the issue names (A4, 2 cm margins) and article's own, narrower one
    "onecolumn": "\\documentclass{article}\n\\usepackage[a4paper,margin=2cm]{geometry}",
    "twocolumn": "\\documentclass[twocolumn]{article}\n\\usepackage[a4paper,margin=2cm]{geometry}",
    "onecolumn-article": "\\documentclass{article}",
    "twocolumn-article": "\\documentclass[twocolumn]{article}",
}
BAD_BOXES = re.compile(r"Overfull \\[hv]box|Underfull \\hbox|Float too large|Float\(s\) lost")


# --- the audits ------------------------------------------------------------------------------


def _audit(out: Path, *args: str) -> tuple[dict, Path]:
    """``vadscene audit … --latex --out OUT``: the report's JSON and the LaTeX folder."""
    code = run(["audit", *args, "--latex", "--out", str(out)])
    assert code == 0
    return json.loads((out / "report.json").read_text(encoding="utf-8")), out / "latex"


@pytest.fixture(scope="module")
def demo_audit(demo_template: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    root = copy_demo(demo_template, tmp_path_factory.mktemp("latex-demo") / "demo")
    models = root / "benchmark" / "models.json"
    return _audit(
        root.parent / "report",
        *("--workspace", str(root), "--models", str(models), "--bootstrap", "50"),
    )


@pytest.fixture(scope="module")
def unbreakable_audit(
    demo_template: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[dict, Path]:
    """The demo's audit with one model named by a 100-letter word: no column can hold it, and
    there is nowhere to break it."""
    root = copy_demo(demo_template, tmp_path_factory.mktemp("latex-unbreakable") / "demo")
    models = json.loads((root / "benchmark" / "models.json").read_text(encoding="utf-8"))
    models[0]["name"] = UNBREAKABLE
    (root / "benchmark" / "models.json").write_text(json.dumps(models), encoding="utf-8")
    return _audit(
        root.parent / "report",
        *("--workspace", str(root), "--models", str(root / "benchmark" / "models.json")),
        *("--bootstrap", "20"),
    )


UNBREAKABLE = "Grayscale" + "Keyed" * 18 + "Model"


def _wide_benchmark(root: Path) -> list[str]:
    """A UCF-Crime-shaped benchmark: 3 videos of each of 13 anomaly categories and 15 Normal
    ones, per-frame scores of :data:`WIDE_MODELS` and a label table giving every video a pole
    of every catalogue factor; the audit's arguments."""
    rng = np.random.default_rng(27)
    videos = [(f"{c}{i:03d}_x264", c) for c in CATEGORIES for i in range(1, 4)]
    videos += [(f"Normal_Videos_{i:03d}_x264", "Normal") for i in range(1, 16)]
    truth, counts, events = [], [], {}
    for video, category in videos:
        frames = int(rng.integers(160, 320))
        counts.append(f"{video} {frames}")
        if category == "Normal":
            truth.append(f"{video}.mp4  Normal  -1  -1  -1  -1")
            events[video] = (0, 0)
        else:
            start = int(rng.integers(10, frames // 2))
            end = int(rng.integers(start + 20, frames - 5))
            truth.append(f"{video}.mp4  {category}  {start}  {end}  -1  -1")
            events[video] = (start, end)
    root.mkdir(parents=True)
    (root / "gt.txt").write_text("\n".join(truth) + "\n", encoding="utf-8")
    (root / "frames.txt").write_text("\n".join(counts) + "\n", encoding="utf-8")
    models = []
    frames_of = {line.split()[0]: int(line.split()[1]) for line in counts}
    for k, (name, family, skill) in enumerate(WIDE_MODELS):
        folder = root / "scores" / f"m{k:02d}"
        folder.mkdir(parents=True)
        for video, _ in videos:
            scores = rng.normal(0.4, 0.15, frames_of[video])
            start, end = events[video]
            scores[start:end] += skill
            np.save(folder / f"{video}.npy", scores.astype(np.float32))
        models.append({"name": name, "path": f"scores/m{k:02d}", "family": family})
    (root / "models.json").write_text(json.dumps(models), encoding="utf-8")
    rows = ["video,factor,value"]
    for video, _ in videos:
        for factor in load_catalogue().factors:
            poles = sorted({p for c in factor.contrasts for p in (c.positive, c.negative)})
            rows.append(f"{video},{factor.key},{poles[int(rng.integers(len(poles)))]}")
    (root / "labels.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return [
        *("--gt", str(root / "gt.txt"), "--frame-counts", str(root / "frames.txt")),
        *("--models", str(root / "models.json"), "--labels", str(root / "labels.csv")),
    ]


@pytest.fixture(scope="module")
def wide_audit(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    base = tmp_path_factory.mktemp("latex-wide")
    return _audit(base / "report", *_wide_benchmark(base / "inputs"), "--bootstrap", "20")


# --- what the tables hold --------------------------------------------------------------------


def _bodies(tex: str) -> str:
    """The rows of every tabular of ``tex``: no comments, captions, labels or column specs,
    multi-line titles joined, ``\\allowbreak`` and ``\\multicolumn`` spans dropped."""
    rows = []
    inside = False
    for line in tex.splitlines():
        if line.startswith("\\begin{tabular}"):
            inside = True
        elif line == "\\end{tabular}":
            inside = False
        elif inside:
            rows.append(line)
    text = "\n".join(rows)
    text = re.sub(
        r"\\begin\{tabular\}\[b\]\{@\{\}c@\{\}\}(.*?)\\end\{tabular\}",
        lambda m: m.group(1).replace(" \\\\ ", " "),
        text,
    )
    text = text.replace("\\allowbreak{}", "")
    return re.sub(r"\\multicolumn\{\d+\}\{[^}]*\}", "", text)


def _numbers(latex: Path, labels: Iterable[str]) -> Counter[str]:
    """Every number in the rows of the tables, once per appearance; ``labels`` (model,
    family and contrast names, which may hold digits) are taken out first."""
    from vadscene.audit.report.latex import escape

    text = "\n".join(_bodies((latex / name).read_text(encoding="utf-8")) for name in TABLES)
    for label in sorted({escape(label) for label in labels}, key=len, reverse=True):
        text = text.replace(label, " ")
    return Counter(re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])", text))


def _expected_numbers(report: dict) -> Counter[str]:
    """The numbers the tables carry, from the report's JSON: each AUROC and its interval in
    percent with two decimals, each bias-AUC and interval with three, the pole sizes once
    per contrast, each resolved count and its number of pairs."""
    expected: Counter[str] = Counter()

    def add(value: float | None, scale: float, digits: int) -> None:
        if value is not None:
            expected[f"{scale * value:.{digits}f}"] += 1

    for row in report["metrics"]:
        for key in ("value", "ci_low", "ci_high"):
            add(row[key], 100, 2)
    poles: set[tuple] = set()
    for row in report["bias"]:
        for key in ("bias_auroc", "ci_low", "ci_high"):
            add(row[key], 1, 3)
            add(row[f"{key}_leak_free"], 1, 3)
        poles.add(tuple(row[k] for k in ("factor", "positive", "negative")) + _poles(row))
    for *_, n_positive, n_negative in poles:
        expected.update([str(n_positive), str(n_negative)])
    for row in report["resolved"]:
        expected.update([str(row["resolved"]), str(row["pairs"])])
    return expected


def _poles(row: dict) -> tuple[int, int]:
    """A contrast's pole sizes, the same for every model: the table gives them once."""
    return row["n_positive"], row["n_negative"]


def _labels(report: dict) -> list[str]:
    contrasts = [f"{r['factor']}: {r['positive']} vs {r['negative']}" for r in report["bias"]]
    families = [r["family"] for r in report["resolved"]]
    return [*report["models"], *families, *contrasts]


def _stars(latex: Path) -> int:
    return sum(
        _bodies((latex / name).read_text(encoding="utf-8")).count("$^{\\ast}$") for name in TABLES
    )


@pytest.mark.parametrize("audit", ["demo_audit", "wide_audit", "unbreakable_audit"])
def test_the_tables_carry_every_number_of_the_report(
    audit: str, request: pytest.FixtureRequest
) -> None:
    """However a table is laid out (blocks, continued floats, wrapped names), the numbers in
    its rows are the report's, each as often as the report has it."""
    report, latex = request.getfixturevalue(audit)
    assert _numbers(latex, _labels(report)) == _expected_numbers(report)
    significant = sum(
        (r.get("significant") is True) + (r.get("significant_leak_free") is True)
        for r in report["bias"]
    )
    assert _stars(latex) == significant


def test_latex_tables_are_booktabs_with_aligned_numbers(demo_audit: tuple[dict, Path]) -> None:
    report, latex = demo_audit
    assert {p.name for p in latex.iterdir()} == {*TABLES, "tables.tex"}
    metrics = (latex / "metrics.tex").read_text(encoding="utf-8")
    for rule in ("\\toprule", "\\midrule", "\\bottomrule", "S[table-format=2.2]"):
        assert rule in metrics
    micro = next(
        r
        for r in report["metrics"]
        if r["model"] == "grayscale_keyed" and r["granularity"] == "micro"
    )
    row = next(line for line in metrics.splitlines() if line.startswith("grayscale\\_keyed & "))
    # micro is the first granularity: its estimate, low and high are the row's first cells
    assert row.split(" & ")[1:4] == [
        f"{100 * micro[k]:.2f}" for k in ("value", "ci_low", "ci_high")
    ]
    bias = (latex / "bias.tex").read_text(encoding="utf-8")
    assert "bias-AUC" in bias and "(Normal only)" in bias
    assert "\\textit{color: color vs grayscale}, $n_\\oplus/n_\\ominus = 4/5$" in bias
    resolved = (latex / "resolved.tex").read_text(encoding="utf-8")
    # five subsets are too many columns: one row per subset, granularities as columns
    assert "Family & micro & cross & within & macro & per-category & " in resolved
    cells = {
        (r["family"], r["granularity"]): f"{r['resolved']}/{r['pairs']}" for r in report["resolved"]
    }
    order = ("micro", "cross", "within", "macro", "per_category", "category_vs_normal")
    for family in ("all", "within-family", "cross-family", "demo-cnn", "demo-vlm"):
        row = " & ".join([family, *(cells[(family, g)] for g in order)])
        assert row + " \\\\" in resolved


def test_each_file_names_the_packages_it_needs(
    demo_audit: tuple[dict, Path], wide_audit: tuple[dict, Path]
) -> None:
    """Every table file says in its first lines which packages a paper must load, and
    ``tables.tex`` loads them all and inputs every table."""
    for _, latex in (demo_audit, wide_audit):
        for name in TABLES:
            head = (latex / name).read_text(encoding="utf-8").split("\\begin{table", 1)[0]
            assert head.startswith("% ") and "\\usepackage{booktabs}" in head
            assert "\\usepackage{siunitx}" in head
        standalone = (latex / "tables.tex").read_text(encoding="utf-8")
        assert all(f"\\input{{{name}}}" in standalone for name in TABLES)
        assert _packages(latex) <= set(re.findall(r"^\\usepackage\{(\w+)\}", standalone, re.M))


def test_wide_tables_span_the_page_and_continue_in_further_floats(
    wide_audit: tuple[dict, Path],
) -> None:
    """224 bias rows do not fit on a page: the table goes on in floats that name the first;
    the 16 long model names make the metrics span both columns."""
    _, latex = wide_audit
    bias = (latex / "bias.tex").read_text(encoding="utf-8")
    floats = bias.count("\\begin{table*}")
    assert floats > 1 and "\\begin{table}" not in bias
    assert bias.count("continued from Table~\\ref{tab:vadscene-bias}") == floats - 1
    assert "\\label{tab:vadscene-bias-2}" in bias
    metrics = (latex / "metrics.tex").read_text(encoding="utf-8")
    assert "\\begin{table*}" in metrics and "\\resizebox" not in metrics
    assert "Sultani et al. \\& MIL" in metrics and "100\\% instruction" in metrics


def test_a_name_too_long_for_any_column_scales_its_tables_down(
    unbreakable_audit: tuple[dict, Path],
) -> None:
    """The last resort: the tables holding the name are scaled to the line width (and say
    so, and ask for graphicx); the resolved pairs, which do not name models, are not."""
    _, latex = unbreakable_audit
    for name in ("metrics.tex", "bias.tex"):
        text = (latex / name).read_text(encoding="utf-8")
        assert UNBREAKABLE in text and "\\resizebox{\\linewidth}{!}{%" in text
        assert "\\usepackage{graphicx}" in text.split("\\begin{table", 1)[0]
    assert "\\resizebox" not in (latex / "resolved.tex").read_text(encoding="utf-8")


def test_without_bootstrap_the_tables_have_no_interval_columns(
    demo_template: Path, tmp_path: Path
) -> None:
    root = copy_demo(demo_template, tmp_path / "demo")
    models = root / "benchmark" / "models.json"
    report, latex = _audit(
        tmp_path / "report",
        *("--workspace", str(root), "--models", str(models), "--bootstrap", "0"),
    )
    metrics = (latex / "metrics.tex").read_text(encoding="utf-8")
    assert "without bootstrap intervals" in metrics and "@{\\,[}" not in metrics
    assert _numbers(latex, _labels(report)) == _expected_numbers(report)


def test_latex_escapes_special_characters() -> None:
    from vadscene.audit.report.latex import escape

    assert escape("a_b & 50% #1 {x} $y ~z ^w \\") == (
        "a\\_b \\& 50\\% \\#1 \\{x\\} \\$y "
        "\\textasciitilde{}z \\textasciicircum{}w \\textbackslash{}"
    )


# --- compiled by pdflatex --------------------------------------------------------------------


def require_pdflatex() -> str:
    """The pdflatex on PATH; skip when there is none, fail when VADSCENE_REQUIRE_TEX=1."""
    found = shutil.which("pdflatex")
    if found is None:
        message = "pdflatex is not on PATH"
        if os.environ.get("VADSCENE_REQUIRE_TEX") == "1":
            pytest.fail(f"{message} but VADSCENE_REQUIRE_TEX=1 requires it")
        pytest.skip(message)
    return found


@pytest.mark.parametrize(
    ("required", "outcome"), [("0", pytest.skip.Exception), ("1", pytest.fail.Exception)]
)
def test_require_pdflatex_skips_or_fails_when_absent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, required: str, outcome: type[BaseException]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("VADSCENE_REQUIRE_TEX", required)
    with pytest.raises(outcome, match="pdflatex is not on PATH"):
        require_pdflatex()


def _packages(latex: Path) -> set[str]:
    """The packages the table files' preamble comments name."""
    return {
        package
        for name in TABLES
        for line in (latex / name).read_text(encoding="utf-8").splitlines()
        if line.startswith("%")
        for package in re.findall(r"\\usepackage\{(\w+)\}", line)
    }


def _compile(folder: Path, name: str, pdflatex: str) -> str:
    """Run pdflatex on ``folder/name`` (nonstop, halting on the first error); the log."""
    done = subprocess.run(
        [pdflatex, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", name],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
    )
    log = (folder / Path(name).with_suffix(".log")).read_text(encoding="utf-8", errors="replace")
    assert done.returncode == 0, log[-3000:]
    return log


def _bad_boxes(log: str) -> list[str]:
    return [line for line in log.splitlines() if BAD_BOXES.search(line)]


@pytest.mark.slow
@pytest.mark.parametrize("audit", ["demo_audit", "wide_audit", "unbreakable_audit"])
@pytest.mark.parametrize("document", sorted(DOCUMENTS))
def test_the_tables_fit_a_one_and_a_two_column_paper(
    audit: str, document: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Each table, \\input into an article with the preamble its comment names, compiles
    without an overfull or underfull line or a float too large for the page — in one column
    and in two, on the issue's A4 page with 2 cm margins and on article's narrower own."""
    pdflatex = require_pdflatex()
    _, latex = request.getfixturevalue(audit)
    paper = tmp_path / "paper.tex"
    paper.write_text(
        "\n".join(
            [
                DOCUMENTS[document],
                *(f"\\usepackage{{{p}}}" for p in sorted(_packages(latex))),
                "\\begin{document}",
                "The audit's tables.",
                *(f"\\input{{{(latex / name).as_posix()}}}" for name in TABLES),
                "\\end{document}",
            ]
        ),
        encoding="utf-8",
    )
    assert _bad_boxes(_compile(tmp_path, paper.name, pdflatex)) == []


@pytest.mark.slow
@pytest.mark.parametrize("audit", ["demo_audit", "wide_audit"])
def test_tables_tex_compiles_on_its_own(audit: str, request: pytest.FixtureRequest) -> None:
    pdflatex = require_pdflatex()
    _, latex = request.getfixturevalue(audit)
    folder = latex.parent / f"compiled-{audit}"
    shutil.copytree(latex, folder, dirs_exist_ok=True)
    assert _bad_boxes(_compile(folder, "tables.tex", pdflatex)) == []
