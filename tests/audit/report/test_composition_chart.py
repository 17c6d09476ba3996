"""The composition chart of a report: a benchmark of thousands of videos is drawn as groups of
videos (at most MAX_COMPOSITION_BARS bars) and its report written; a small one keeps one bar
per video."""

from __future__ import annotations

from pathlib import Path

from helpers import synthetic_benchmark

from vadscene.audit import run_audit
from vadscene.audit.report import figures
from vadscene.audit.report.writer import write_report


def test_the_report_of_an_audit_of_thousands_of_videos_is_written(tmp_path: Path) -> None:
    # 2,600 videos, 5,200 composition rows: far more than MAX_COMPOSITION_BARS
    ground_truth = synthetic_benchmark(2_600)
    result = run_audit(ground_truth, n_bootstrap=0)

    written = write_report(result, tmp_path / "report")

    assert {"report.json", "report.html", "figures/composition.vl.json"} <= set(written)
    spec = figures.composition_chart(result)  # what the app renders
    assert spec is not None
    rows = spec["data"]["values"]
    assert len(rows) <= 2 * figures.MAX_COMPOSITION_BARS
    by_label = {
        label: sum(r["count"] for r in rows if r["label"] == label)
        for label in ("anomalous", "normal")
    }
    assert by_label == {
        "anomalous": int(ground_truth.labels.sum()),
        "normal": int((~ground_truth.labels).sum()),
    }
    assert "2600 videos" in spec["encoding"]["x"]["title"]


def test_a_small_composition_keeps_one_bar_per_video() -> None:
    result = run_audit(synthetic_benchmark(30), n_bootstrap=0)
    spec = figures.composition_chart(result)
    assert spec is not None
    rows = spec["data"]["values"]
    assert sorted({r["video"] for r in rows}) == [f"Abuse{v:05d}" for v in range(30)]
