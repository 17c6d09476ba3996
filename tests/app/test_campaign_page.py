"""The Campaign page, run with AppTest on a real workspace: the overview a lead reads, the
annotator forms, the assignment form, and who is refused."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from vadscene.core.paths import app_entry_point
from vadscene.store.workspace import Workspace

APP = app_entry_point().parent
PAGE = str(APP / "app_pages" / "campaign.py")
LOGIN = "/vadscene/login/"  # the gate's route, vadscene.annotate.serving


@pytest.fixture
def workspace(small_workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    """The small workspace served to the page, which imports the app's own modules."""
    monkeypatch.setenv("VADSCENE_WORKSPACE", str(small_workspace.root))
    monkeypatch.delenv("VADSCENE_TEAM", raising=False)
    monkeypatch.syspath_prepend(str(APP))
    yield small_workspace


def page(url: str | None = None) -> AppTest:
    app = AppTest.from_file(PAGE, default_timeout=60)
    app.query_params["annotator"] = "lead"
    if url is not None:
        app.context["url"] = url
    return app.run()


def submit(app: AppTest, form: str, **fields: object) -> AppTest:
    for key, value in fields.items():
        _widget(app, f"campaign_{form}_{key}").set_value(value)
    _widget(app, f"campaign_{form}_submit").click()
    return app.run()


def _widget(app: AppTest, key: str) -> Any:
    for kind in ("text_input", "selectbox", "radio", "button"):
        found = [w for w in getattr(app, kind) if w.key == key]
        if found:
            return found[0]
    raise AssertionError(f"no widget with key {key} on the page")


def test_a_lead_sees_the_overview_and_its_csv(workspace: Workspace) -> None:
    store = workspace.store
    store.register_annotator("ana")
    video = store.video_ids()[0]
    store.record_decision(video, "color", "color", annotator="ana")
    store.record_assignments([(video, "ana", True)])
    app = page()
    assert not app.exception and not app.error
    assert app.title[0].value == "Campaign"
    table = app.dataframe[0].value
    assert table.loc[0, "annotator"] == "ana" and table.loc[0, "assigned"] == 1
    assert table.loc[0, "complete"] == 0  # one factor of ten
    factors = app.dataframe[1].value
    assert list(factors["factor"]) == [
        f.key for f in workspace.catalogue.factors if f.source == "manual"
    ]
    assert app.get("vega_lite_chart")  # the progress chart
    (download,) = app.get("download_button")
    assert download.proto.label == "Download the overview (CSV)"


def test_add_shows_the_personal_link_once(workspace: Workspace) -> None:
    app = page(url="https://lab.example:8443/campaign")
    app = submit(app, "add", name="Ana López")
    assert not app.exception and not app.error
    assert app.success[0].value.startswith("Added ana lópez (annotator)")
    (link,) = [c.value for c in app.code]
    base = "https://lab.example:8443" + LOGIN
    assert link.startswith(base)
    entry = workspace.store.annotator_for_secret(link.removeprefix(base))
    assert entry is not None and entry.annotator_id == "ana lópez"
    app.run()
    assert not app.code and not app.success  # the secret is not shown again


def test_without_the_browsers_address_the_link_says_where_the_host_goes(
    workspace: Workspace,
) -> None:
    app = submit(page(), "add", name="bo")
    (link,) = [c.value for c in app.code]
    assert link.startswith("http://<host>:<port>" + LOGIN)
    assert workspace.store.annotator_for_secret(link.rsplit("/", 1)[1]).annotator_id == "bo"


def test_a_refused_add_shows_why_and_writes_nothing(workspace: Workspace) -> None:
    workspace.store.register_annotator("Ana")
    before = workspace.store.annotator_events()
    app = submit(page(), "add", name="ANA")
    assert [e.value for e in app.error] == ["annotator 'ana' is already registered"]
    assert not app.code
    assert workspace.store.annotator_events() == before


def test_rename_merge_role_and_revoke(workspace: Workspace) -> None:
    store = workspace.store
    for name in ("ana", "bo", "cy"):
        store.register_annotator(name)
    secret = store.issue_access_link("bo")
    video = store.video_ids()[0]
    store.record_decision(video, "color", "grayscale", annotator="Bo_typo")

    app = submit(page(), "rename", old="ana", new="Anna")
    assert app.success[0].value == "Renamed ana to anna; their work follows."
    assert [a.annotator_id for a in store.annotator_registry()] == ["anna", "bo", "cy"]

    app = submit(app, "rename", old="anna", new="BO")
    assert [e.value for e in app.error] == ["annotator 'bo' is already registered"]
    assert [a.annotator_id for a in store.annotator_registry()] == ["anna", "bo", "cy"]

    app = submit(app, "merge", source="Bo_typo", into="bo")
    assert app.success[0].value.startswith("Merged Bo_typo into bo")
    assert store.current_values("bo") == {(video, "color"): "grayscale"}

    app = submit(app, "role", who="anna", role="lead")
    assert app.success[0].value == "anna is now lead."
    assert store.annotator("anna").role == "lead"

    app = submit(app, "revoke", who="bo")
    assert app.success[0].value.startswith("Revoked bo")
    assert not store.annotator("bo").active and store.annotator_for_secret(secret) is None
    assert store.current_values("bo") == {(video, "color"): "grayscale"}  # work stays

    app = submit(app, "revoke")  # nobody chosen
    assert [e.value for e in app.error] == ["choose an annotator first"]


def test_assignment_preview_then_apply(workspace: Workspace) -> None:
    store = workspace.store
    for name in ("ana", "bo", "cy"):
        store.register_annotator(name)
    videos = {v.video_id: v.category for v in store.videos()}
    app = page()
    app.number_input(key="campaign_overlap").set_value(2)
    app.number_input(key="campaign_seed").set_value(7)
    app = app.run()
    assert not app.exception and not app.error
    preview = app.dataframe[2].value
    assert list(preview["annotator"]) == ["ana", "bo", "cy"]
    assert preview["assigned"].sum() == preview["added"].sum() == 2 * len(videos)
    assert preview["withdrawn"].sum() == 0
    assert set(preview.columns) >= set(videos.values())  # per-category counts
    assert store.assignments() == {}  # a preview writes nothing
    app.button(key="campaign_apply").click()
    app = app.run()
    assert app.success[0].value == f"Applied: {2 * len(videos)} assignment changes logged."
    assigned = store.assignments()
    for video in videos:
        assert sum(video in assigned.get(n, []) for n in ("ana", "bo", "cy")) == 2
    planned = dict(zip(preview["annotator"], preview["assigned"], strict=True))
    assert {name: len(assigned.get(name, [])) for name in planned} == planned


def test_a_replan_keeps_started_work_and_drops_who_is_left_out(workspace: Workspace) -> None:
    store = workspace.store
    for name in ("ana", "bo", "cy"):
        store.register_annotator(name)
    videos = store.video_ids()
    store.record_assignments([(v, name, True) for v in videos for name in ("ana", "cy")])
    store.record_decision(videos[0], "color", "color", annotator="ana")
    store.record_decision(videos[1], "color", "color", annotator="cy")
    app = page()
    app.multiselect(key="campaign_plan_annotators").set_value(["ana", "bo"])
    app.number_input(key="campaign_overlap").set_value(1)
    app = app.run()
    assert not app.exception and not app.error
    preview = {row["annotator"]: row for row in app.dataframe[2].value.to_dict("records")}
    assert preview["cy"]["withdrawn"] == len(videos) and preview["cy"]["assigned"] == 0
    assert preview["ana"]["started"] == 1
    app.button(key="campaign_apply").click()
    app = app.run()
    assigned = store.assignments()
    assert videos[0] in assigned["ana"] and "cy" not in assigned
    assert sorted(assigned["ana"] + assigned["bo"]) == sorted(videos)
    assert store.current_values("cy") == {(videos[1], "color"): "color"}  # decisions stay


def test_an_impossible_plan_is_refused_and_writes_nothing(workspace: Workspace) -> None:
    workspace.store.register_annotator("ana")
    app = page()
    app.number_input(key="campaign_overlap").set_value(2)
    app = app.run()
    assert [e.value for e in app.error] == [
        "an overlap of 2 annotators per video needs at least 2 annotators; 1 given (ana)"
    ]
    assert not [b for b in app.button if b.key == "campaign_apply"]
    assert workspace.store.assignments() == {}


def as_session(token: str, page: str) -> None:
    """The page as a browser holding the session cookie ``token`` sees it.

    AppTest cannot send cookies: its stand-in for Streamlit's runtime hands every script a
    placeholder client, so the cookie is put on that client before the page runs."""
    import runpy

    from streamlit import runtime

    from vadscene.annotate.serving import SESSION_COOKIE

    client = runtime.get_instance().get_client.return_value
    client.client_context.cookies = {SESSION_COOKIE: token}
    runpy.run_path(page, run_name="__main__")


@pytest.fixture
def team(workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    monkeypatch.setenv("VADSCENE_TEAM", "1")
    workspace.store.register_annotator("ana")
    workspace.store.register_annotator("lea", role="lead")
    return workspace


def test_in_team_mode_a_lead_session_manages_the_campaign(team: Workspace) -> None:
    token = team.store.open_session("lea", via="link")
    app = AppTest.from_function(as_session, args=(token, PAGE), default_timeout=60).run()
    assert not app.exception and not app.error
    assert list(app.dataframe[0].value["annotator"]) == ["ana", "lea"]
    app = submit(app, "role", who="ana", role="lead")
    assert team.store.annotator("ana").role == "lead"
    assert team.store.annotator_events()[-1].by == "lea"  # logged as the session's lead


def test_in_team_mode_an_annotator_session_is_refused(team: Workspace) -> None:
    token = team.store.open_session("ana", via="link")
    before = team.store.annotator_events()
    app = AppTest.from_function(as_session, args=(token, PAGE), default_timeout=60)
    app.query_params["annotator"] = "lea"  # the URL names nobody in team mode
    app.run()
    assert not app.exception
    assert [e.value for e in app.error] == [
        "Only a lead can manage the campaign; you are logged in as ana (annotator)."
    ]
    assert not app.title and not app.dataframe and not app.button
    assert team.store.annotator_events() == before


def test_in_team_mode_a_revoked_session_is_refused(team: Workspace) -> None:
    token = team.store.open_session("lea", via="link")
    team.store.revoke_annotator("lea")
    app = AppTest.from_function(as_session, args=(token, PAGE), default_timeout=60).run()
    assert not app.exception
    assert "Your session has ended" in app.error[0].value
    assert not app.title and not app.dataframe
