"""The Streamlit app, run headless with AppTest against a real workspace."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from vadscene.paths import app_entry_point
from vadscene.workspace import Workspace


def test_videos_page_lists_videos_and_progress(
    small_workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    small_workspace.store.record_decision("Abuse001_x264", "color", "color", annotator="ana")
    monkeypatch.setenv("VADSCENE_WORKSPACE", str(small_workspace.root))
    app = AppTest.from_file(str(app_entry_point()), default_timeout=30).run()
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
