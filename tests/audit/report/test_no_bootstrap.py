"""`vadscene audit --bootstrap 0`: no report file, caption or summary line speaks of an
interval it did not compute (issue 26, item 7)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers import copy_demo, write_demo_soft_labels

from vadscene.cli import run

NO_INTERVALS = "no bootstrap intervals were computed (B = 0)"


def _audit(demo: Path, out: Path) -> int:
    return run(
        [
            "audit",
            "--workspace",
            str(demo),
            "--models",
            str(demo / "benchmark" / "models.json"),
            "--probes",
            str(demo / "benchmark" / "probes.json"),
            "--soft-labels",
            str(write_demo_soft_labels(demo)),
            "--interval-ap",
            "--bootstrap",
            "0",
            "--latex",
            "--out",
            str(out),
        ]
    )


@pytest.fixture(scope="module")
def demo(demo_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_demo(demo_template, tmp_path_factory.mktemp("no-bootstrap") / "demo")


@pytest.fixture(scope="module")
def unbootstrapped(demo: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo audited with every input, B = 0 and LaTeX tables: the report folder."""
    out = tmp_path_factory.mktemp("no-bootstrap-report") / "report"
    assert _audit(demo, out) == 0
    return out


def _texts(out: Path) -> dict[str, str]:
    files = [out / "report.md", out / "report.html", *sorted((out / "latex").glob("*.tex"))]
    files += sorted(out.glob("*.vl.json")) + sorted((out / "figures").glob("*.vl.json"))
    return {str(p.relative_to(out)): p.read_text() for p in files}


def test_no_file_claims_a_95_percent_interval(unbootstrapped: Path) -> None:
    texts = _texts(unbootstrapped)
    assert "report.md" in texts and "latex/metrics.tex" in texts
    interval = re.compile(r"95\s*(%|\\,\\%|\\%)|percentile|B = 0 (video-)?bootstrap replicates")
    claims = {name: interval.findall(text) for name, text in texts.items()}
    assert {name: found for name, found in claims.items() if found} == {}


def test_the_report_and_conventions_say_no_interval_was_computed(unbootstrapped: Path) -> None:
    out = unbootstrapped
    assert NO_INTERVALS in (out / "report.md").read_text()
    assert NO_INTERVALS in (out / "report.html").read_text()
    bootstrap = json.loads((out / "report.json").read_text())["conventions"]["bootstrap"]
    assert bootstrap["replicates"] == 0
    assert bootstrap["interval"] == "none: " + NO_INTERVALS


def test_the_cli_summary_prints_no_nan_interval(
    demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _audit(demo, tmp_path / "report") == 0
    micro = [line for line in capsys.readouterr().out.splitlines() if "micro AUROC" in line]
    assert len(micro) == 4  # the demo's four models
    assert all("nan" not in line and line.endswith("(no interval: B = 0)") for line in micro)
