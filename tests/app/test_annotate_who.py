"""Who annotates, on the Annotate page run with AppTest against a real workspace: in local mode
the name dialog lists the registered annotators and makes a new one only on purpose; a name in
the URL is the registered annotator it spells."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser import chromium_page
from streamlit.testing.v1 import AppTest

from vadscene.core.paths import app_entry_point
from vadscene.store.workspace import Workspace

READY = "() => window.__vadsceneAnnotate && window.__vadsceneAnnotate.ready"


@pytest.fixture
def app_root(small_workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("VADSCENE_WORKSPACE", str(small_workspace.root))
    monkeypatch.delenv("VADSCENE_TEAM", raising=False)
    return small_workspace.root


def _registry(root: Path) -> list[str]:
    with Workspace.open(root, read_only=True) as workspace:
        return [entry.annotator_id for entry in workspace.store.annotator_registry()]


def test_the_dialog_lists_the_registered_annotators(app_root: Path) -> None:
    with Workspace.open(app_root) as workspace:
        workspace.store.register_annotator("Ana López")
        workspace.store.register_annotator("Ben")
        workspace.store.register_annotator("Gone")
        workspace.store.revoke_annotator("gone")
    app = AppTest.from_file(str(app_entry_point()), default_timeout=60).run()
    assert not app.exception
    (picker,) = app.selectbox
    assert picker.label == "Registered annotators"
    assert picker.options == ["Ana López", "Ben"]  # display names; the revoked one is not offered
    assert [t.label for t in app.text_input] == ["Your name"]
    buttons = [b.label for b in app.button]
    assert "Start annotating" in buttons and "Add new annotator" in buttons


def test_a_typed_name_alone_registers_no_one(app_root: Path) -> None:
    app = AppTest.from_file(str(app_entry_point()), default_timeout=60).run()
    assert not app.selectbox  # nobody registered yet: only the way to add oneself
    assert [b.label for b in app.button if b.label == "Add new annotator"]
    app.text_input[0].input("Carla").run()
    assert not app.exception
    assert _registry(app_root) == []
    assert "annotator" not in app.query_params


def test_a_url_name_is_the_registered_annotator_it_spells(app_root: Path) -> None:
    with Workspace.open(app_root) as workspace:
        workspace.store.register_annotator("Ana")
        workspace.store.rename_annotator("ana", "Ana Maria")
    app = AppTest.from_file(str(app_entry_point()), default_timeout=60)
    app.query_params["annotator"] = "ANA"  # her former name, in capitals
    app.run()
    assert not app.exception
    assert app.session_state["annotate_queue"].annotator == "ana maria"


# --- the dialog, submitted in the browser ------------------------------------------------------


@pytest.mark.browser
def test_pick_a_registered_annotator_or_add_one_on_purpose(served: tuple[str, Path]) -> None:
    url, root = served
    with Workspace.open(root) as workspace:
        workspace.store.register_annotator("Ana")
        workspace.store.register_annotator("Ben")
        video = workspace.store.video_ids()[0]
    with chromium_page(1440, 900) as page:
        page.goto(f"{url}/?video={video}")
        dialog = page.get_by_role("dialog")
        dialog.get_by_text("Registered annotators").wait_for(timeout=60_000)
        dialog.get_by_role("combobox").click()
        page.get_by_role("option", name="Ben").click()
        dialog.get_by_role("button", name="Start annotating").click()
        page.wait_for_function(READY, timeout=60_000)
        page.get_by_text("Annotating as ben").wait_for(timeout=30_000)
        assert "annotator=ben" in page.url
        assert _registry(root) == ["ana", "ben"]

        page.get_by_role("button", name="Switch annotator").click()
        name = page.get_by_role("textbox", name="Your name")
        name.wait_for(timeout=30_000)
        name.fill("ANA")  # already registered: refused, and nothing changes
        page.get_by_role("button", name="Add new annotator").click()
        page.get_by_text("annotator 'ana' is already registered").wait_for(timeout=30_000)
        assert _registry(root) == ["ana", "ben"]
        name.fill("Carla")
        page.get_by_role("button", name="Add new annotator").click()
        page.get_by_text("Annotating as carla").wait_for(timeout=30_000)
        assert _registry(root) == ["ana", "ben", "carla"]
        assert "annotator=carla" in page.url
