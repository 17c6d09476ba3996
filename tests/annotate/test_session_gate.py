"""The team-mode session gate (vadscene.annotate.serving.session_gate) in front of the real
video routes and stand-ins for Streamlit's own routes (a page, its API, its websocket, its
static files), driven by Starlette's TestClient over a real workspace and store."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator, Mapping
from datetime import timedelta
from http.cookies import SimpleCookie

import pytest
from helpers import ABUSE
from starlette.applications import Starlette
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse
from starlette.routing import Route, WebSocketRoute
from starlette.testclient import TestClient
from starlette.websockets import WebSocket, WebSocketDisconnect

from vadscene.annotate.serving import (
    LOGIN_FAILURE_LIMIT,
    LOGIN_FAILURE_WINDOW,
    LOGOUT_PATH,
    SESSION_COOKIE,
    ProviderLogin,
    host_check,
    login_path,
    session_gate,
    video_routes,
)
from vadscene.annotate.urls import filmstrip_url, video_url
from vadscene.core.instants import canonical, now
from vadscene.store.workspace import Workspace

PAGE = "<html><body>the app</body></html>"
HTML = {"accept": "text/html,application/xhtml+xml"}
REMOTE = "203.0.113.7"
IDP_COOKIE = "idp_user"
"""The stand-in provider's identity cookie: ``<e-mail>|<signature>``, the signature a secret
only the provider and the gate know."""
IDP_SECRET = "s3cret"


async def _page(_request: object) -> HTMLResponse:
    return HTMLResponse(PAGE)


async def _health(_request: object) -> PlainTextResponse:
    return PlainTextResponse("ok")


async def _asset(_request: object) -> PlainTextResponse:
    return PlainTextResponse("console.log('streamlit');")


async def _provider_flow(_request: object) -> JSONResponse:
    return JSONResponse({"flow": "provider"})


async def _stream(websocket: WebSocket) -> None:
    """Streamlit's websocket as far as the gate sees it: messages in, answers out."""
    await websocket.accept()
    try:
        while True:
            await websocket.send_text("echo " + await websocket.receive_text())
    except WebSocketDisconnect:
        pass


def _signed(email: str) -> str:
    return f"{email}|{IDP_SECRET}"


def _verified_email(cookies: Mapping[str, str]) -> str | None:
    email, _, signature = cookies.get(IDP_COOKIE, "").partition("|")
    return email if email and signature == IDP_SECRET else None


PROVIDER = ProviderLogin(
    name="Lab ID",
    paths=frozenset({"/auth/login", "/oauth2callback"}),
    cookie_prefix=IDP_COOKIE,
    start_url=lambda: "/auth/login?provider=token&x=<y>",
    verified_email=_verified_email,
)


def _app(workspace: Workspace, provider: ProviderLogin | None = None) -> Starlette:
    routes = [
        *video_routes(workspace.root),
        Route("/", _page),
        Route("/review", _page),
        Route("/_stcore/health", _health),
        Route("/_stcore/host-config", _health),
        Route("/static/js/index.js", _asset),
        Route("/media/abc.mp4", _asset),
        Route("/auth/login", _provider_flow),
        Route("/oauth2callback", _provider_flow),
        WebSocketRoute("/_stcore/stream", _stream),
    ]
    middleware = [host_check(["testserver"]), session_gate(workspace.root, provider)]
    return Starlette(routes=routes, middleware=middleware)


@pytest.fixture
def team(small_workspace: Workspace) -> Workspace:
    """The small workspace with two registered annotators; ana has a personal link."""
    store = small_workspace.store
    store.register_annotator("Ana", email="ana@lab.org")
    store.register_annotator("Ben", role="lead", email="ben@lab.org")
    return small_workspace


@pytest.fixture
def client(team: Workspace) -> Iterator[TestClient]:
    with TestClient(_app(team), client=(REMOTE, 50000), follow_redirects=False) as running:
        yield running


def _set_cookie(response: object) -> SimpleCookie:
    headers = response.headers.get_list("set-cookie")  # type: ignore[attr-defined]
    cookie: SimpleCookie = SimpleCookie()
    for header in headers:
        cookie.load(header)
    return cookie


def _failures(workspace: Workspace) -> list[tuple[str, str]]:
    with sqlite3.connect(workspace.root / "annotations.db") as db:
        return db.execute("SELECT remote, reason FROM login_failures ORDER BY at").fetchall()


def _sessions(workspace: Workspace) -> list[tuple[str, str]]:
    with sqlite3.connect(workspace.root / "annotations.db") as db:
        return db.execute("SELECT annotator, via FROM sessions ORDER BY created_at").fetchall()


def _log_in(client: TestClient, workspace: Workspace, name: str = "ana") -> str:
    secret = workspace.store.issue_access_link(name)
    response = client.get(login_path(secret))
    assert response.status_code == 303, response.text
    return client.cookies[SESSION_COOKIE]


# --- without a session nothing answers ----------------------------------------------------------


def test_without_a_session_no_route_answers(client: TestClient, team: Workspace) -> None:
    for path in ("/", "/review"):
        page = client.get(path, headers=HTML)
        assert page.status_code == 401
        assert "Login required" in page.text and "the app" not in page.text
        assert "<script" not in page.text and "vadscene annotators add" in page.text
        assert page.headers["cache-control"] == "no-store"
        assert "default-src 'none'" in page.headers["content-security-policy"]
    resources = [
        video_url(ABUSE),
        filmstrip_url(ABUSE),
        "/_stcore/health",
        "/_stcore/host-config",
        "/static/js/index.js",
        "/media/abc.mp4",
        "/auth/login",  # no provider configured: its routes are closed like any other
        "/",  # a page asked for by a script (no text/html): nothing either
    ]
    for path in resources:
        for method in ("GET", "HEAD"):
            reply = client.request(method, path, headers={"range": "bytes=0-99"})
            assert (reply.status_code, reply.content) == (401, b""), (method, path)
    assert client.post("/", headers=HTML).status_code == 401
    with pytest.raises(WebSocketDisconnect) as refused, client.websocket_connect("/_stcore/stream"):
        pass
    assert refused.value.code == 1008
    # A made-up session token is no session.
    client.cookies.set(SESSION_COOKIE, "not-a-token")
    assert (
        client.get(video_url(ABUSE)).status_code,
        client.get("/", headers=HTML).status_code,
    ) == (
        401,
        401,
    )
    assert _sessions(team) == []


def test_a_foreign_host_is_refused_before_the_gate(client: TestClient) -> None:
    reply = client.get("/", headers={**HTML, "host": "evil.example"})
    assert reply.status_code == 400


# --- personal links -----------------------------------------------------------------------------


def test_a_personal_link_opens_a_session_and_leaves_the_address_bar(
    client: TestClient, team: Workspace, small_videos: object
) -> None:
    secret = team.store.issue_access_link("Ana")
    reply = client.get(login_path(secret))
    assert reply.status_code == 303
    assert reply.headers["location"] == "/"  # the secret does not stay in the address bar
    assert reply.headers["referrer-policy"] == "no-referrer"
    morsel = _set_cookie(reply)[SESSION_COOKIE]
    assert morsel["httponly"] is True and morsel["samesite"].lower() == "lax"
    assert morsel["path"] == "/" and not morsel["secure"]  # plain http: no Secure
    assert secret not in morsel.value
    assert team.store.session_annotator(morsel.value).annotator_id == "ana"
    assert _sessions(team) == [("ana", "link")]

    assert client.get("/", headers=HTML).text == PAGE
    assert client.get("/_stcore/health").text == "ok"
    video = client.get(video_url(ABUSE))
    assert video.status_code == 200
    assert video.content == team.video_path(ABUSE).read_bytes()
    assert client.get(filmstrip_url(ABUSE)).headers["content-type"] == "image/jpeg"
    with client.websocket_connect("/_stcore/stream") as socket:
        socket.send_text("rerun")
        assert socket.receive_text() == "echo rerun"


def test_over_tls_the_session_cookie_is_secure(team: Workspace) -> None:
    secret = team.store.issue_access_link("Ana")
    app = _app(team)
    with TestClient(app, base_url="https://testserver", follow_redirects=False) as client:
        reply = client.get(login_path(secret))
    morsel = _set_cookie(reply)[SESSION_COOKIE]
    assert morsel["secure"] is True and morsel["httponly"] is True


def test_a_bad_link_is_refused_recorded_and_logged(
    client: TestClient, team: Workspace, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="vadscene.serving"):
        reply = client.get(login_path("guessed-secret"), headers=HTML)
    assert reply.status_code == 403
    assert "unknown or has been revoked" in reply.text
    assert SESSION_COOKIE not in _set_cookie(reply)
    assert _failures(team) == [(REMOTE, "an unknown or revoked access link")]
    assert any(REMOTE in r.getMessage() and "refused" in r.getMessage() for r in caplog.records)
    assert _sessions(team) == []


def test_failed_logins_are_rate_limited_per_address(client: TestClient, team: Workspace) -> None:
    good = team.store.issue_access_link("Ana")
    for attempt in range(LOGIN_FAILURE_LIMIT):
        assert client.get(login_path(f"guess-{attempt}")).status_code == 403
    # The limit is reached: even the right secret is not looked at, and nothing more recorded.
    limited = client.get(login_path(good), headers=HTML)
    assert limited.status_code == 429
    assert limited.headers["retry-after"] == str(int(LOGIN_FAILURE_WINDOW.total_seconds()))
    assert SESSION_COOKIE not in _set_cookie(limited)
    assert len(_failures(team)) == LOGIN_FAILURE_LIMIT
    assert _sessions(team) == []
    # Another address is not held back by this one's failures.
    with TestClient(_app(team), client=("198.51.100.2", 1), follow_redirects=False) as other:
        assert other.get(login_path(good)).status_code == 303


def test_failures_older_than_the_window_do_not_count(client: TestClient, team: Workspace) -> None:
    old = canonical(now() - LOGIN_FAILURE_WINDOW - timedelta(seconds=5))
    with sqlite3.connect(team.root / "annotations.db") as db:
        db.executemany(
            "INSERT INTO login_failures (at, remote, reason) VALUES (?, ?, 'old')",
            [(old, REMOTE)] * (LOGIN_FAILURE_LIMIT + 5),
        )
    assert client.get(login_path(team.store.issue_access_link("Ana"))).status_code == 303


def test_a_revocation_takes_effect_on_the_next_request(client: TestClient, team: Workspace) -> None:
    secret = team.store.issue_access_link("Ana")
    assert client.get(login_path(secret)).status_code == 303
    assert client.get(video_url(ABUSE)).status_code == 200
    with client.websocket_connect("/_stcore/stream") as socket:
        socket.send_text("key 1")
        assert socket.receive_text() == "echo key 1"
        team.store.revoke_annotator("ana", by="ben")
        socket.send_text("key 2")  # the open socket's next message
        with pytest.raises(WebSocketDisconnect) as closed:
            socket.receive_text()
    assert closed.value.code == 1008
    assert (client.get(video_url(ABUSE)).status_code, client.get(video_url(ABUSE)).content) == (
        401,
        b"",
    )
    assert client.get("/", headers=HTML).status_code == 401
    assert client.get(login_path(secret)).status_code == 403  # the link is dead too


def test_logout_ends_the_session(client: TestClient, team: Workspace) -> None:
    token = _log_in(client, team)
    reply = client.get(LOGOUT_PATH)
    assert reply.status_code == 303
    assert team.store.session_annotator(token) is None
    client.cookies.set(SESSION_COOKIE, token)  # a copy kept of the cookie is worth nothing
    assert client.get("/", headers=HTML).status_code == 401


def test_a_second_login_in_one_browser_closes_the_first_session(
    client: TestClient, team: Workspace
) -> None:
    first = _log_in(client, team, "ana")
    second = _log_in(client, team, "ben")
    assert team.store.session_annotator(first) is None
    assert team.store.session_annotator(second).annotator_id == "ben"


def test_a_broken_workspace_is_503_and_says_nothing_of_it(team: Workspace) -> None:
    config = team.root / "vadscene.yaml"
    text = config.read_text(encoding="utf-8")
    config.unlink()
    with TestClient(_app(team), follow_redirects=False) as client:
        for path in ("/", login_path("x"), video_url(ABUSE)):
            reply = client.get(path, headers=HTML)
            assert reply.status_code == 503
            assert str(team.root) not in reply.text
        config.write_text(text, encoding="utf-8")
        assert client.get("/", headers=HTML).status_code == 401


# --- an identity provider -------------------------------------------------------------------------


@pytest.fixture
def with_provider(team: Workspace) -> Iterator[TestClient]:
    with TestClient(
        _app(team, PROVIDER), client=(REMOTE, 50000), follow_redirects=False
    ) as running:
        yield running


def test_the_login_page_offers_the_provider_and_its_flow_passes(
    with_provider: TestClient,
) -> None:
    page = with_provider.get("/", headers=HTML)
    assert page.status_code == 401
    assert 'href="/auth/login?provider=token&amp;x=&lt;y&gt;"' in page.text
    assert "Log in with Lab ID" in page.text
    assert with_provider.get("/auth/login").json() == {"flow": "provider"}
    assert with_provider.get("/oauth2callback").json() == {"flow": "provider"}


def test_a_provider_identity_maps_onto_the_registered_annotator(
    with_provider: TestClient, team: Workspace
) -> None:
    with_provider.cookies.set(IDP_COOKIE, _signed("BEN@lab.org"))
    reply = with_provider.get("/", headers=HTML)
    assert reply.status_code == 303 and reply.headers["location"] == "/"
    cookies = _set_cookie(reply)
    assert cookies[IDP_COOKIE].value == ""  # the provider's cookie is cleared: one credential
    token = cookies[SESSION_COOKIE].value
    assert team.store.session_annotator(token).annotator_id == "ben"
    assert _sessions(team) == [("ben", "oidc")]
    with_provider.cookies.delete(IDP_COOKIE)
    assert with_provider.get("/", headers=HTML).text == PAGE


def test_an_unregistered_or_forged_identity_is_refused(
    with_provider: TestClient, team: Workspace
) -> None:
    with_provider.cookies.set(IDP_COOKIE, _signed("eve@elsewhere.org"))
    reply = with_provider.get("/", headers=HTML)
    assert reply.status_code == 403
    assert "eve@elsewhere.org" in reply.text
    assert "vadscene annotators add WORKSPACE NAME --email eve@elsewhere.org" in reply.text
    assert _set_cookie(reply)[IDP_COOKIE].value == ""
    assert _failures(team) == [
        (REMOTE, "the e-mail eve@elsewhere.org belongs to no registered annotator")
    ]
    # A cookie naming a registered e-mail without the provider's signature proves nothing.
    with_provider.cookies.set(IDP_COOKIE, "ana@lab.org|forged")
    forged = with_provider.get("/", headers=HTML)
    assert forged.status_code == 401 and "Login required" in forged.text
    with_provider.cookies.set(IDP_COOKIE, "ana@lab.org|forged")
    assert with_provider.get(video_url(ABUSE)).status_code == 401
    assert _sessions(team) == []


def test_a_revoked_annotator_cannot_come_back_through_the_provider(
    with_provider: TestClient, team: Workspace
) -> None:
    team.store.revoke_annotator("ana")
    with_provider.cookies.set(IDP_COOKIE, _signed("ana@lab.org"))
    assert with_provider.get("/", headers=HTML).status_code == 403
    assert _sessions(team) == []
