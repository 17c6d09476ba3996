"""The Streamlit app, run headless with AppTest against a real workspace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import copy_demo
from streamlit.testing.v1 import AppTest

from vadscene.core.paths import app_entry_point
from vadscene.store.workspace import Workspace


def test_videos_page_lists_videos_and_progress(
    small_workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    small_workspace.store.record_decision("Abuse001_x264", "color", "color", annotator="ana")
    monkeypatch.setenv("VADSCENE_WORKSPACE", str(small_workspace.root))
    app = AppTest.from_file(str(app_entry_point()), default_timeout=30).run()
    app.switch_page("app_pages/overview.py").run()
    assert not app.exception
    assert app.title[0].value == "small"
    progress, videos = (frame.value for frame in app.dataframe[:2])
    assert sorted(videos["video"]) == sorted(v.video_id for v in small_workspace.store.videos())
    assert progress.loc[0, "annotator"] == "ana" and progress.loc[0, "color"] == 1


def test_without_a_workspace_the_app_says_how_to_start(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("VADSCENE_WORKSPACE", raising=False)
    app = AppTest.from_file(str(app_entry_point()), default_timeout=30).run()
    assert not app.exception
    assert "vadscene app WORKSPACE" in app.error[0].value
    monkeypatch.setenv("VADSCENE_WORKSPACE", str(tmp_path))
    app = AppTest.from_file(str(app_entry_point()), default_timeout=30).run()
    assert "not a vadscene workspace" in app.error[0].value


@pytest.fixture
def demo_app(demo_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh copy of the session's demo workspace, served to AppTest."""
    root = copy_demo(demo_template, tmp_path / "demo")
    monkeypatch.setenv("VADSCENE_WORKSPACE", str(root))
    return root


def test_measure_page_previews_and_applies_a_rule(demo_app: Path) -> None:
    app = AppTest.from_file(str(app_entry_point()), default_timeout=60).run()
    app.switch_page("app_pages/measure.py").run()
    assert not app.exception
    assert [s.value for s in app.subheader][:2] == [
        "Spatial resolution (resolution) — sharpness",
        "Motion energy (motion) — motion",
    ]
    app.radio(key="measure_rule_resolution").set_value("terciles").run()
    changes = [m.value for m in app.markdown if "videos change pole" in m.value]
    assert changes[0] == "**4 videos change pole** with this rule."  # median 6/6 → 4/4/4
    app.button(key="measure_apply_resolution").click().run()
    assert not app.exception
    with Workspace.open(demo_app) as workspace:
        rules = {factor: rule for factor, _s, rule, _t, _at in workspace.store.thresholds()}
    assert rules["resolution"] == "terciles"


def test_export_page_validates_and_offers_downloads(demo_app: Path) -> None:
    app = AppTest.from_file(str(app_entry_point()), default_timeout=60).run()
    app.switch_page("app_pages/export.py").run()
    assert not app.exception
    assert app.success[0].value.startswith("Valid release: 12 videos")
    app.radio(key="export_mode").set_value("one annotator").run()
    assert "annotators: demo-ana" in app.success[0].value


def test_audit_page_runs_the_engine_on_the_demo(demo_app: Path) -> None:
    app = AppTest.from_file(str(app_entry_point()), default_timeout=120).run()
    app.switch_page("app_pages/audit.py").run()
    assert not app.exception
    app.number_input(key="audit_bootstrap").set_value(100)
    app.button(key="audit_run").click().run()
    assert not app.exception and not app.error
    assert "12 videos" in app.markdown[0].value
    assert len(app.get("vega_lite_chart")) >= 4  # forest, decomposition, bias, pairs, composition
    assert app.get("download_button")
    # The demo's probes.json: D@5 split, DC-DetΔ per class and the prototype readout.
    titles = [json.loads(c.proto.spec)["title"]["text"] for c in app.get("vega_lite_chart")]
    assert "How much of D@5 tests the definition?" in titles
    assert "Is the anomaly in the representation, and does the head use it?" in titles


def test_annotate_page_has_no_widget_that_writes_decisions(demo_app: Path) -> None:
    """The surface component is the only writer (its events are tested in
    test_annotation_events.py and in the browser): no Streamlit radio, toggle or text box on
    the page can decide, flag, note or rename anything."""
    app = AppTest.from_file(str(app_entry_point()), default_timeout=60)
    app.query_params["annotator"] = "apptest"
    app.run()
    assert not app.exception
    assert not app.radio and not app.toggle and not app.text_input and not app.text_area
    assert app.session_state["annotate_queue"].annotator == "apptest"  # past the name gate
    with Workspace.open(demo_app) as workspace:
        assert workspace.store.current_values("apptest") == {}


def test_annotate_page_asks_for_a_name_it_does_not_have(demo_app: Path) -> None:
    app = AppTest.from_file(str(app_entry_point()), default_timeout=60).run()
    assert not app.exception
    assert "Choose your name" in app.info[0].value
    # The name box is in the dialog (a fragment, submitted in the browser test).
    assert [t.label for t in app.text_input] == ["Your name"]
    assert [b.label for b in app.button if b.label == "Add new annotator"]


def test_review_page_filters_and_records_a_consensus(demo_app: Path) -> None:
    app = AppTest.from_file(str(app_entry_point()), default_timeout=60)
    app.query_params["annotator"] = "adjudicator"
    app.run()
    app.switch_page("app_pages/review.py").run()
    assert not app.exception
    assert app.caption[0].value == "12 of 12 videos"
    # The demo's second annotator disagrees with the first on Explosion001's continuity.
    assert app.selectbox(key="review_video").options == ["Explosion001_x264"]
    choice = app.selectbox(key="review_value_Explosion001_x264_continuity")
    assert choice.value is None  # no default: the button waits for a choice
    choice.set_value("multi-view").run()
    app.button(key="review_record_Explosion001_x264_continuity").click().run()
    assert not app.exception
    with Workspace.open(demo_app) as workspace:
        [consensus] = [
            d
            for d in workspace.store.current_decisions(video_id="Explosion001_x264")
            if d.source == "consensus"
        ]
    assert (consensus.factor, consensus.value, consensus.annotator) == (
        "continuity",
        "multi-view",
        "adjudicator",
    )
