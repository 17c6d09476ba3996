"""Team mode (`vadscene app --team`) in headless Chromium: a login on every route, two ways in
(personal links, and OpenID Connect against a real provider, `oidc-provider-mock`, started
here on loopback), and every decision carrying the logged-in annotator and nobody else.

Expected values come from the keys the test pressed and from the workspace's SQLite file read
by a connection of the test's own."""

from __future__ import annotations

import json
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import oidc_provider_mock
import pytest
from browser import FLAGS, require_chromium
from helpers import copy_demo

from vadscene.annotate.serving import SESSION_COOKIE, login_path
from vadscene.annotate.urls import filmstrip_url, video_url
from vadscene.core.catalogue import load_catalogue
from vadscene.store.workspace import Workspace

pytestmark = pytest.mark.browser

READY = "() => window.__vadsceneAnnotate && window.__vadsceneAnnotate.ready"
FACTORS = list(load_catalogue().factors)
ANNOTATORS = {"ana": "annotator", "ben": "annotator", "cleo": "annotator", "lea": "lead"}
LEA_EMAIL = "Lea.Lead@Lab.org"
"""Registered for lea in another case than the provider reports it (lea.lead@lab.org)."""


@dataclass
class Team:
    url: str
    root: Path
    links: dict[str, str]
    """Annotator → their personal access link (a full URL)."""
    provider: str
    log: Path


def _wait_for(condition: Callable[[], object], seconds: float = 30, what: str = "") -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what or condition}"
        time.sleep(0.1)


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return int(response.status)
    except urllib.error.HTTPError as refused:
        return refused.code


@pytest.fixture(scope="module")
def provider() -> Iterator[str]:
    """A real OpenID Connect provider on loopback; it approves whoever the form names."""
    with oidc_provider_mock.run_server_in_thread() as server:
        yield f"http://localhost:{server.server_port}"


@pytest.fixture(scope="module")
def team(
    demo_template: Path, tmp_path_factory: pytest.TempPathFactory, provider: str
) -> Iterator[Team]:
    """`vadscene app --team` with an OpenID Connect login on a copy of the demo, four
    registered annotators and a personal link each."""
    require_chromium()
    base = tmp_path_factory.mktemp("team")
    root = copy_demo(demo_template, base / "demo")
    secrets = {}
    with Workspace.open(root) as workspace:
        for name, role in ANNOTATORS.items():
            email = LEA_EMAIL if name == "lea" else f"{name}@lab.org"
            workspace.store.register_annotator(name, role=role, email=email)  # type: ignore[arg-type]
            secrets[name] = workspace.store.issue_access_link(name)
    oidc_file = base / "oidc.toml"
    oidc_file.write_text(
        "[auth]\n"
        f'server_metadata_url = "{provider}/.well-known/openid-configuration"\n'
        'client_id = "vadscene-tests"\n'
        'client_secret = "not-so-secret"\n'
    )
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-c", "from vadscene.cli import main; main()", "app", str(root)]
    command += ["--port", str(port), "--team", "--oidc-secrets", str(oidc_file)]
    log_path = base / "server.log"
    with log_path.open("wb") as log:
        server = subprocess.Popen(command, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if _status(f"{url}/_stcore/health") == 401:  # up, and behind the gate
                    break
            except OSError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the app did not start: {log_path.read_text()[-2000:]}")
            time.sleep(0.3)
        links = {name: url + login_path(secret) for name, secret in secrets.items()}
        yield Team(url, root, links, provider, log_path)
    finally:
        server.terminate()
        server.wait(timeout=10)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    executable = require_chromium()
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=FLAGS)
        try:
            yield launched
        finally:
            launched.close()


def _context(browser: object) -> object:
    return browser.new_context(viewport={"width": 1440, "height": 900})  # type: ignore[attr-defined]


def _db(team: Team, sql: str, parameters: tuple = ()) -> list[tuple]:
    with sqlite3.connect(team.root / "annotations.db") as db:
        return db.execute(sql, parameters).fetchall()


def _log_of(team: Team, annotator: str) -> list[tuple[str, str, str]]:
    return [
        tuple(row)
        for row in _db(
            team,
            "SELECT video_id, factor, value FROM decisions WHERE annotator = ? "
            "ORDER BY decision_id",
            (annotator,),
        )
    ]


def _videos(team: Team) -> list[str]:
    return [row[0] for row in _db(team, "SELECT video_id FROM videos ORDER BY video_id")]


def _logged_in(browser: object, team: Team, name: str, video: str) -> object:
    """A new browser context logged in through ``name``'s personal link, on the Annotate page
    at ``video``."""
    page = _context(browser).new_page()  # type: ignore[attr-defined]
    page.goto(team.links[name])
    assert page.url == team.url + "/"  # the secret left the address bar
    page.goto(f"{team.url}/?video={video}")
    page.wait_for_function(READY, timeout=60_000)
    page.locator(f".vs-annotate[data-video='{video}']").wait_for(timeout=30_000)
    page.get_by_text(f"Annotating as {name}").wait_for(timeout=30_000)
    return page


def _settle(team: Team, names: list[str], want: int, seconds: float = 90) -> None:
    """Wait until the named annotators' logs hold ``want`` rows and stop growing."""
    deadline, previous, since = time.monotonic() + seconds, -1, time.monotonic()
    while time.monotonic() < deadline:
        count = sum(len(_log_of(team, name)) for name in names)
        if count != previous:
            previous, since = count, time.monotonic()
        elif time.monotonic() - since > (2 if count >= want else 10):
            return
        time.sleep(0.2)


# --- two annotators at once ---------------------------------------------------------------------


def test_two_annotators_at_once_each_write_as_themselves(browser: object, team: Team) -> None:
    """ana presses the first value and ben the second of every factor of the same videos, the
    two keyboards interleaved at pace: each log holds exactly its own keys."""
    videos = _videos(team)[:3]
    ana = _logged_in(browser, team, "ana", videos[0])
    ben = _logged_in(browser, team, "ben", videos[0])
    assert "vadscene_session" not in ana.evaluate("() => document.cookie")  # HttpOnly
    expected: dict[str, list[tuple[str, str, str]]] = {"ana": [], "ben": []}
    for video in videos:
        for factor in FACTORS:
            for page, name, choice in ((ana, "ana", 0), (ben, "ben", 1)):
                page.keyboard.press(str(choice + 1))
                expected[name].append((video, factor.key, factor.values[choice]))
                page.wait_for_timeout(25)
            for page in (ana, ben):
                page.keyboard.press("ArrowDown")
                page.wait_for_timeout(25)
        for page in (ana, ben):
            page.keyboard.press("n")
        # the next video: where n leads, the same for both (neither has decided any yet)
        for page in (ana, ben):
            page.wait_for_function(
                f"() => window.__vadsceneAnnotate.current !== {json.dumps(video)}",
                timeout=30_000,
            )
    want = sum(len(rows) for rows in expected.values())
    _settle(team, ["ana", "ben"], want)
    assert _log_of(team, "ana") == expected["ana"]
    assert _log_of(team, "ben") == expected["ben"]
    # Nobody else wrote anything meanwhile, under any name.
    strangers = _db(
        team,
        "SELECT DISTINCT annotator FROM decisions WHERE annotator NOT IN "
        "('ana', 'ben', 'auto', 'demo-ana', 'demo-ben')",
    )
    assert strangers == []
    for page in (ana, ben):
        page.context.close()


# --- no session, no app -------------------------------------------------------------------------


PROBE = """async ([video, strip]) => {
  const fetched = async (path) => {
    const r = await fetch(path, {headers: {range: "bytes=0-99"}, cache: "no-store"});
    return [r.status, (await r.arrayBuffer()).byteLength];
  };
  const socket = await new Promise((resolve) => {
    const ws = new WebSocket(`ws://${location.host}/_stcore/stream`);
    ws.onopen = () => { ws.close(); resolve("open"); };
    ws.onerror = () => resolve("refused");
  });
  return {
    video: await fetched(video),
    strip: await fetched(strip),
    health: await fetched("/_stcore/health"),
    script: await fetched("/static/js/index.js"),
    socket,
  };
}"""
"""What a page of the app's origin can reach: a video and a filmstrip (in ranges), Streamlit's
API, a static file, its websocket."""


def test_without_a_session_no_page_websocket_video_or_filmstrip(
    browser: object, team: Team
) -> None:
    video = _videos(team)[0]
    # The login page's own policy lets it fetch nothing; the probe ignores it (bypass_csp), so
    # what refuses is the server.
    context = browser.new_context(bypass_csp=True)  # type: ignore[attr-defined]
    page = context.new_page()
    reply = page.goto(team.url + "/")
    assert reply.status == 401
    page.get_by_text("Login required").wait_for()
    assert page.locator(".stApp, .vs-annotate").count() == 0
    assert page.evaluate("() => document.scripts.length") == 0
    answers = page.evaluate(PROBE, [video_url(video), filmstrip_url(video)])
    assert answers == {
        "video": [401, 0],
        "strip": [401, 0],
        "health": [401, 0],
        "script": [401, 0],
        "socket": "refused",
    }
    assert "refused a websocket without a session" in team.log.read_text()
    context.close()

    # The same probe from a logged-in browser reaches everything: the refusals above are the
    # missing session's, not the browser's.
    context = browser.new_context(bypass_csp=True)  # type: ignore[attr-defined]
    page = context.new_page()
    page.goto(team.links["ana"])
    answers = page.evaluate(PROBE, [video_url(video), filmstrip_url(video)])
    assert answers["video"] == [206, 100] and answers["strip"] == [206, 100]
    assert answers["health"][0] == 200 and answers["socket"] == "open"
    context.close()


# --- writing as another -------------------------------------------------------------------------


def test_a_url_naming_another_annotator_writes_as_the_logged_in_one(
    browser: object, team: Team
) -> None:
    """On the old Annotate page, ``?annotator=`` chose the identity: ana's key landed in ben's
    log."""
    video = _videos(team)[5]
    ben_before = _log_of(team, "ben")
    page = _context(browser).new_page()  # type: ignore[attr-defined]
    page.goto(team.links["ana"])
    page.goto(f"{team.url}/?annotator=ben&video={video}")
    page.wait_for_function(READY, timeout=60_000)
    page.locator(f".vs-annotate[data-video='{video}']").wait_for(timeout=30_000)
    before = len(_log_of(team, "ana"))
    page.keyboard.press("2")
    _wait_for(
        lambda: len(_log_of(team, "ana")) + len(_log_of(team, "ben")) > before + len(ben_before),
        what="the key stored",
    )
    assert _log_of(team, "ben") == ben_before
    assert _log_of(team, "ana")[before:] == [(video, FACTORS[0].key, FACTORS[0].values[1])]
    page.get_by_text("you are logged in as 'ana'").wait_for(timeout=30_000)
    page.get_by_text("Annotating as ana").wait_for()
    assert "annotator=" not in page.url
    page.context.close()


def test_a_forged_or_replayed_event_records_nothing_for_another(
    browser: object, team: Team
) -> None:
    """An event naming another annotator is refused; an event ben's page sent, replayed into
    ana's session, is ana's own write at most: ben's log does not change."""
    video = _videos(team)[6]
    ben = _logged_in(browser, team, "ben", video)
    ben.keyboard.press("1")
    _wait_for(lambda: (video, FACTORS[0].key, FACTORS[0].values[0]) in _log_of(team, "ben"))
    sent = ben.evaluate(
        "() => { const s = window.__vadsceneAnnotate; return {page: s.page, seq: s.seq}; }"
    )
    replayed = {
        "page": sent["page"],
        "seq": sent["seq"],
        "video": video,
        "factor": FACTORS[0].key,
        "action": "decide",
        "value": FACTORS[0].values[0],
    }
    ben_before = _log_of(team, "ben")

    ana = _logged_in(browser, team, "ana", video)
    ana_before = _log_of(team, "ana")
    forged = {
        "page": "forged",
        "seq": 1,
        "video": video,
        "factor": FACTORS[1].key,
        "action": "decide",
        "value": FACTORS[1].values[1],
        "annotator": "ben",
    }
    ana.evaluate(
        "(events) => window.__vadsceneAnnotate.setState('events', events)", [forged, replayed]
    )
    # the forged event is refused outright; the replayed one is ana's own write at most
    _wait_for(lambda: len(_log_of(team, "ana")) == len(ana_before) + 1, what="ana's row")
    assert _log_of(team, "ana")[len(ana_before) :] == [
        (video, FACTORS[0].key, FACTORS[0].values[0]),
    ]
    time.sleep(1)
    assert _log_of(team, "ben") == ben_before
    for page in (ana, ben):
        page.context.close()


# --- revocation ---------------------------------------------------------------------------------


def test_a_revoked_annotator_is_refused_on_the_next_request(browser: object, team: Team) -> None:
    video = _videos(team)[7]
    page = _logged_in(browser, team, "cleo", video)
    page.keyboard.press("1")
    _wait_for(lambda: len(_log_of(team, "cleo")) == 1, what="cleo's first key")
    with Workspace.open(team.root) as workspace:
        workspace.store.revoke_annotator("cleo", by="lea")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("2")  # the open websocket's next message: refused, nothing stored
    # Asked of the server, not of the browser's cache (what it has cached it keeps).
    fetched = page.evaluate(
        "async (path) => { const r = await fetch(path, {cache: 'no-store'});"
        " return [r.status, (await r.arrayBuffer()).byteLength]; }",
        video_url(video),
    )
    assert fetched == [401, 0]
    time.sleep(2)
    assert _log_of(team, "cleo") == [(video, FACTORS[0].key, FACTORS[0].values[0])]
    assert "closed the websocket of an ended session" in team.log.read_text()
    assert page.reload().status == 401
    assert page.goto(team.links["cleo"]).status == 403
    page.context.close()


# --- OpenID Connect -----------------------------------------------------------------------------


def _provider_user(team: Team, sub: str, email: str) -> None:
    """Tell the provider who ``sub`` is (its claims)."""
    request = urllib.request.Request(
        f"{team.provider}/users/{quote(sub)}",
        data=json.dumps({"email": email, "name": sub}).encode(),
        headers={"content-type": "application/json"},
        method="PUT",
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 204


def _oidc_login(browser: object, team: Team, sub: str) -> object:
    page = _context(browser).new_page()  # type: ignore[attr-defined]
    assert page.goto(team.url + "/").status == 401
    page.get_by_role("link", name="Log in with localhost").click()
    page.get_by_placeholder("sub").fill(sub)
    page.get_by_role("button", name="Authorize").click()
    return page


def test_an_oidc_login_maps_onto_the_registered_annotator(browser: object, team: Team) -> None:
    _provider_user(team, "lea-sub", "lea.lead@lab.org")
    page = _oidc_login(browser, team, "lea-sub")
    page.wait_for_function(READY, timeout=60_000)
    page.get_by_text("Annotating as lea").wait_for(timeout=30_000)
    assert page.url.startswith(team.url + "/") and "code=" not in page.url
    cookies = {c["name"]: c for c in page.context.cookies()}
    assert cookies[SESSION_COOKIE]["httpOnly"] and cookies[SESSION_COOKIE]["sameSite"] == "Lax"
    assert not [name for name in cookies if name.startswith("_streamlit_user")]
    assert _db(team, "SELECT annotator FROM sessions WHERE via = 'oidc'") == [("lea",)]
    before = len(_log_of(team, "lea"))
    page.keyboard.press("1")
    _wait_for(lambda: len(_log_of(team, "lea")) == before + 1, what="lea's key stored")
    page.context.close()


def test_an_oidc_login_of_an_unregistered_email_is_refused(browser: object, team: Team) -> None:
    _provider_user(team, "mallory", "mallory@elsewhere.org")
    failures = len(_db(team, "SELECT 1 FROM login_failures"))
    page = _oidc_login(browser, team, "mallory")
    page.get_by_text("Not a registered annotator").wait_for(timeout=30_000)
    page.get_by_text(
        "vadscene annotators add WORKSPACE NAME --email mallory@elsewhere.org"
    ).wait_for()
    assert page.locator(".stApp").count() == 0
    assert SESSION_COOKIE not in {c["name"] for c in page.context.cookies()}
    reasons = [row[0] for row in _db(team, "SELECT reason FROM login_failures")]
    assert len(reasons) == failures + 1
    assert "mallory@elsewhere.org" in reasons[-1]
    assert "refused a login" in team.log.read_text()
    assert page.reload().status == 401  # back at the login page, not stuck on the refusal
    page.context.close()
