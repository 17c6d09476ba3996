"""`vadscene audit` end to end on the demo workspace: every report file, and a GT-only run."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from altair.vegalite.v6.schema import load_schema
from browser import chromium_page
from helpers import ARTIFACTS, copy_demo
from sklearn.metrics import roc_auc_score

from vadscene.cli import run

REPORT_FILES = {
    "report.json",
    "report.md",
    "report.html",
    "metrics.csv",
    "controls.csv",
    "per_category.csv",
    "comparisons.csv",
    "resolved.csv",
    "bias.csv",
    "scene_pairs.csv",
    "scene_conditioned.csv",
    "composition.csv",
}


@pytest.fixture(scope="module")
def demo(demo_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_demo(demo_template, tmp_path_factory.mktemp("audit") / "demo")


def _audit_demo(demo: Path, out: Path, *, bootstrap: int) -> int:
    models = demo / "benchmark" / "models.json"
    return run(
        [
            "audit",
            "--workspace",
            str(demo),
            "--models",
            str(models),
            "--bootstrap",
            str(bootstrap),
            "--out",
            str(out),
        ]
    )


def test_audit_of_the_demo_writes_every_report_file(demo: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    code = _audit_demo(demo, out, bootstrap=200)
    assert code == 0
    written = {p.name for p in out.iterdir()}
    assert REPORT_FILES.issubset(written)
    report = json.loads((out / "report.json").read_text())
    assert report["models"] == ["grayscale_keyed", "localizer", "video_constant", "random_baseline"]
    assert report["conventions"]["bootstrap"]["replicates"] == 200
    html = (out / "report.html").read_text()
    assert html.count('<figure id="figure-') >= 4 and not list(out.glob("figures/*.svg"))
    assert not re.search(r"<(script|link)[^>]+(src|href)=", html)

    # The planted behaviours show up: the grayscale-keyed model is scene-biased on colour,
    # the video-constant one has within-video AUROC exactly ½.
    bias = {(r["model"], r["factor"]): r for r in report["bias"]}
    assert abs(bias[("grayscale_keyed", "color")]["bias_auroc"] - 0.5) > 0.3
    metrics = {(r["model"], r["granularity"]): r["value"] for r in report["metrics"]}
    assert metrics[("video_constant", "within")] == 0.5

    # Pooled AUROC agrees with sklearn on the demo's own files.
    labels, scores = [], []
    for line in (demo / "benchmark" / "ground_truth.txt").read_text().splitlines():
        name, _category, *bounds = line.split()
        video = name.removesuffix(".mp4")
        values = np.load(demo / "benchmark" / "scores" / "localizer" / f"{video}.npy")
        frame_labels = np.zeros(values.size, bool)
        for start, end in zip(bounds[::2], bounds[1::2], strict=True):
            if int(start) >= 0:
                frame_labels[int(start) : int(end)] = True
        labels.append(frame_labels)
        scores.append(values)
    expected = roc_auc_score(np.concatenate(labels), np.concatenate(scores))
    assert abs(metrics[("localizer", "micro")] - expected) < 1e-12


def test_ground_truth_only_run_reports_the_composition(demo: Path, tmp_path: Path) -> None:
    out = tmp_path / "gt-only"
    code = run(
        [
            "audit",
            "--gt",
            str(demo / "benchmark" / "ground_truth.txt"),
            "--frame-counts",
            str(demo / "benchmark" / "frame_counts.txt"),
            "--out",
            str(out),
        ]
    )
    assert code == 0
    report = json.loads((out / "report.json").read_text())
    assert report["models"] == [] and report["metrics"] == []
    assert report["summary"]["videos"] == 12
    assert 0.5 < report["summary"]["oracle_video_constant_auroc"] <= 1
    assert "composition" in (out / "report.md").read_text().lower()


def test_audit_input_errors_are_one_message(
    demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scores = tmp_path / "bad.npy"
    np.save(scores, np.full(10, np.nan))
    code = run(
        [
            "audit",
            "--workspace",
            str(demo),
            "--scores",
            f"bad={scores}",
            "--out",
            str(tmp_path / "r"),
        ]
    )
    assert code == 1
    err = capsys.readouterr().err
    assert "bad.npy" in err and "Traceback" not in err


@pytest.mark.browser
def test_report_html_draws_every_figure_offline_with_tooltips(demo: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    code = _audit_demo(demo, out, bootstrap=100)
    assert code == 0
    specs = sorted(p.name.removesuffix(".vl.json") for p in (out / "figures").glob("*.vl.json"))
    with chromium_page() as page:
        requests: list[str] = []
        errors: list[str] = []
        page.on("request", lambda request: requests.append(request.url))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto((out / "report.html").as_uri())
        page.wait_for_selector("body[data-figures-drawn]", timeout=60_000)
        drawn = page.eval_on_selector_all(
            "figure",
            """els => els.map(e => {
                const svg = e.querySelector(".chart svg");
                const box = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
                return [e.id.replace("figure-", ""), e.querySelector(".chart").dataset.drawn,
                        box.width, box.height, svg ? svg.querySelectorAll("path").length : 0];
            })""",
        )
        # a heatmap cell's tooltip: the figures are live, not pictures
        page.locator("#figure-scene_pairs_1_grayscale-keyed .mark-text text").first.hover()
        tooltip = page.locator("#vg-tooltip-element")
        tooltip.wait_for(state="visible", timeout=10_000)
        tooltip_text = tooltip.inner_text()
        page.screenshot(path=str(ARTIFACTS / "audit-report.png"), full_page=True)
    assert sorted(name for name, *_ in drawn) == specs and len(specs) >= 8
    for name, state, width, height, paths in drawn:
        assert state == "true" and width > 200 and height > 100 and paths > 0, name
    assert "auroc" in tooltip_text and "contrast" in tooltip_text, tooltip_text
    assert errors == []
    assert all(url.startswith("file://") for url in requests), requests  # self-contained


def test_without_bootstrap_the_summary_says_there_is_no_interval(
    demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _audit_demo(demo, tmp_path / "r", bootstrap=0) == 0
    assert re.search(
        r"localizer: micro AUROC 0\.\d{4} \(no interval: B = 0\)\n", capsys.readouterr().out
    )


def test_demo_probes_show_definition_following_and_the_readout(demo: Path, tmp_path: Path) -> None:
    """The demo's definition-blind model gets DC-DetΔ exactly 0, the definition-following one
    a positive gain; the prototype readout covers both feature sets."""
    out = tmp_path / "probes"
    benchmark = demo / "benchmark"
    code = run(
        [
            "audit",
            "--workspace",
            str(demo),
            "--models",
            str(benchmark / "models.json"),
            "--probes",
            str(benchmark / "probes.json"),
            "--bootstrap",
            "50",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    report = json.loads((out / "report.json").read_text())
    probes = {(r["model"], r["probe"], r["metric"]): r for r in report["definition_probes"]}
    assert probes[("video_constant", "DC-DetΔ", "auroc")]["value"] == 0.0
    assert probes[("localizer", "DC-DetΔ", "auroc")]["ci_low"] > 0
    assert len(report["definition_queries"]) == 2 * 5  # two models × the demo's five queries
    readouts = {(r["model"], r["readout"]) for r in report["readout"]}
    assert readouts == {
        (m, r)
        for m in ("localizer", "video_constant")
        for r in ("global", "per_category", "within_video")
    }
    markdown = (out / "report.md").read_text()
    assert "## Definition following" in markdown and "## Representation readout" in markdown
    # the probes' figures (which the report-writer tests' tables have none of) are valid Vega-Lite
    schema = load_schema()
    for name in ("d5_decomposition", "definition_delta", "readout"):
        jsonschema.validate(json.loads((out / "figures" / f"{name}.vl.json").read_text()), schema)
