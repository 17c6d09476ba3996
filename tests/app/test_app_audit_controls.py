"""The Audit page's controls, as the CLI has them: the ground truth's interval-end convention
and format, soft labels, interval AP and LaTeX; run headless with AppTest on the demo
workspace."""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import numpy as np
import pytest
from helpers import copy_demo, write_demo_soft_labels
from sklearn.metrics import roc_auc_score
from streamlit.testing.v1 import AppTest

from vadscene.core.paths import app_entry_point


@pytest.fixture
def demo_app(demo_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = copy_demo(demo_template, tmp_path / "demo")
    monkeypatch.setenv("VADSCENE_WORKSPACE", str(root))
    return root


def _oracle(root: Path, *, inclusive: bool) -> float:
    """Oracle video-constant AUROC by hand: every frame scored with its video's anomalous
    fraction, read from the demo's UCF-Crime style text and counts files."""
    counts = {
        name: int(n)
        for name, n in (
            line.split()
            for line in (root / "benchmark" / "frame_counts.txt").read_text().splitlines()
        )
    }
    labels, scores = [], []
    for line in (root / "benchmark" / "ground_truth.txt").read_text().splitlines():
        name, _category, *bounds = line.split()
        video = name.removesuffix(".mp4")
        frames = np.zeros(counts[video], dtype=bool)
        for start, end in zip(bounds[::2], bounds[1::2], strict=True):
            if int(start) >= 0:
                frames[int(start) : int(end) + inclusive] = True
        labels.append(frames)
        scores.append(np.full(frames.size, frames.mean()))
    return roc_auc_score(np.concatenate(labels), np.concatenate(scores))


def _shown_oracle(app: AppTest) -> float:
    summary = next(m.value for m in app.markdown if "oracle video-constant AUROC" in m.value)
    return float(re.search(r"oracle video-constant AUROC (\d\.\d+)", summary).group(1))


def test_interval_end_control_changes_the_ground_truth_read(demo_app: Path) -> None:
    exclusive, inclusive = _oracle(demo_app, inclusive=False), _oracle(demo_app, inclusive=True)
    assert round(exclusive, 4) != round(inclusive, 4)  # the control matters on this file
    app = AppTest.from_file(str(app_entry_point()), default_timeout=120).run()
    app.switch_page("app_pages/audit.py").run()
    assert not app.exception
    assert app.radio(key="audit_interval_end").value == "exclusive"  # the workspace's setting
    assert app.selectbox(key="audit_ground_truth_format").value == "ucf-crime"
    app.number_input(key="audit_bootstrap").set_value(0)
    app.button(key="audit_run").click().run()
    assert not app.exception and not app.error
    assert _shown_oracle(app) == round(exclusive, 4)
    app.radio(key="audit_interval_end").set_value("inclusive")
    app.button(key="audit_run").click().run()
    assert not app.exception and not app.error
    assert _shown_oracle(app) == round(inclusive, 4)
    app.selectbox(key="audit_ground_truth_format").set_value("json")
    app.button(key="audit_run").click().run()
    assert app.error and "json" in app.error[0].value.lower()


def test_soft_labels_interval_ap_and_latex_as_the_cli_has_them(demo_app: Path) -> None:
    """The options the page once lacked: soft labels add the Prob-AUC table, interval AP its
    columns, LaTeX the latex/ tables of the download; a soft-labels path outside the
    workspace is refused by name."""
    write_demo_soft_labels(demo_app)

    app = AppTest.from_file(str(app_entry_point()), default_timeout=120).run()
    app.switch_page("app_pages/audit.py").run()
    app.number_input(key="audit_bootstrap").set_value(0)
    app.text_input(key="audit_soft_labels").input("/etc/passwd")
    app.button(key="audit_run").click().run()
    assert app.error and "soft labels file /etc/passwd" in app.error[0].value
    app.text_input(key="audit_soft_labels").input("soft.csv")
    app.checkbox(key="audit_interval_ap").check()
    app.checkbox(key="audit_latex").check()
    app.button(key="audit_run").click().run()
    assert not app.exception and not app.error
    result = app.session_state["audit_result"]
    assert list(dict.fromkeys(result.prob_auc["model"])) == list(result.models)
    assert result.further["interval_ap"].notna().all()
    titles = [e.label for e in app.expander]
    assert "Prob-AUC (soft labels)" in titles
    assert {"Controls", "Retention summary", "Video level"} <= set(titles)
    archive = zipfile.ZipFile(io.BytesIO(app.session_state["audit_report"]))
    assert any(name.startswith("latex/") for name in archive.namelist())
    assert "report.json" in archive.namelist()


def test_interval_ap_events_and_normal_with_anomaly_select_boxes(demo_app: Path) -> None:
    """The two settings of the ground truth's events reach the run as the CLI options do:
    the conventions state the chosen event rule and the Normal-video check, and the page
    shows the interval AP table."""
    app = AppTest.from_file(str(app_entry_point()), default_timeout=120).run()
    app.switch_page("app_pages/audit.py").run()
    app.number_input(key="audit_bootstrap").set_value(0)
    app.checkbox(key="audit_interval_ap").check()
    app.selectbox(key="audit_interval_ap_events").set_value("merged")
    app.selectbox(key="audit_normal_with_anomaly").set_value("anomalous")
    app.button(key="audit_run").click().run()
    assert not app.exception and not app.error
    result = app.session_state["audit_result"]
    assert result.conventions["interval_ap"]["event_rule"].startswith("merged:")
    assert result.conventions["normal_with_anomaly"].startswith("anomalous: ")
    assert set(result.interval_ap["population"]) == {"all", "anomalous"}
    titles = [e.label for e in app.expander]
    assert "Interval AP per population, prediction and tIoU" in titles
