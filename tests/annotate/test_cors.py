"""Videos and filmstrips for pages of other origins (Label Studio's player): CORS headers for
the origins `vadscene app --allow-origin` names, and for no other; never ``*``.

A real uvicorn server on a free localhost port, spoken to with ``http.client``
(:class:`support.serving.Server`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.serving import Reply, Server, serving

from vadscene.annotate.serving import (
    ALLOWED_ORIGINS_VARIABLE,
    allowed_origins,
    parse_origin,
)
from vadscene.annotate.urls import filmstrip_url, video_url
from vadscene.cli import run
from vadscene.core.errors import VadsceneError
from vadscene.store.workspace import Workspace

LABEL_STUDIO = "http://localhost:8080"
OTHER_ALLOWED = "https://ls.lab.org"
ABUSE = "Abuse001_x264"


@pytest.fixture
def cors_server(small_workspace: Workspace) -> Iterator[Server]:
    with serving(small_workspace.root, [LABEL_STUDIO, OTHER_ALLOWED]) as running:
        yield running


def _requests(server: Server) -> dict[str, tuple[str, str, dict[str, str]]]:
    """Every kind of answer the two routes give: name → (method, path, extra headers)."""
    etag = server.get(video_url(ABUSE)).headers["etag"]
    return {
        "full": ("GET", video_url(ABUSE), {}),
        "range": ("GET", video_url(ABUSE), {"Range": "bytes=0-99"}),
        "head": ("HEAD", video_url(ABUSE), {}),
        "not modified": ("GET", video_url(ABUSE), {"If-None-Match": etag}),
        "unknown video": ("GET", video_url("Nowhere001_x264"), {}),
        "filmstrip": ("GET", filmstrip_url(ABUSE), {}),
    }


def _ask(server: Server, request: tuple[str, str, dict[str, str]], origin: str | None) -> Reply:
    method, path, headers = request
    return server.get(path, {**headers, **({"Origin": origin} if origin else {})}, method=method)


def test_an_allowed_origin_is_named_on_every_answer(cors_server: Server) -> None:
    expected_status = {
        "full": 200,
        "range": 206,
        "head": 200,
        "not modified": 304,
        "unknown video": 404,
        "filmstrip": 200,
    }
    for name, request in _requests(cors_server).items():
        for origin in (LABEL_STUDIO, OTHER_ALLOWED):
            reply = _ask(cors_server, request, origin)
            assert reply.status == expected_status[name], name
            assert reply.headers["access-control-allow-origin"] == origin, name
            assert reply.headers["vary"] == "Origin", name
    ranged = _ask(cors_server, _requests(cors_server)["range"], LABEL_STUDIO)
    exposed = {
        h.strip().lower() for h in ranged.headers["access-control-expose-headers"].split(",")
    }
    assert {"content-range", "accept-ranges"} <= exposed
    assert ranged.headers["content-range"].startswith("bytes 0-99/")


@pytest.mark.parametrize(
    "origin",
    [
        None,
        "http://localhost:8081",  # another port is another origin
        "https://localhost:8080",  # another scheme too
        "http://evil.example",
        "http://localhost:8080.evil.example",
        "null",  # a sandboxed frame or a file:// page
        "HTTP://LOCALHOST:8080",  # browsers send origins in lower case: not a spelling of ours
    ],
)
def test_no_other_origin_is_named(cors_server: Server, origin: str | None) -> None:
    for name, request in _requests(cors_server).items():
        reply = _ask(cors_server, request, origin)
        assert "access-control-allow-origin" not in reply.headers, (name, origin)
        # the answer depends on Origin, so a cache must not reuse it for another origin
        assert reply.headers["vary"] == "Origin", name


def test_without_allowed_origins_there_are_no_cors_headers(small_workspace: Workspace) -> None:
    with serving(small_workspace.root, []) as server:
        for name, request in _requests(server).items():
            reply = _ask(server, request, LABEL_STUDIO)
            assert not {h for h in reply.headers if h.startswith("access-control-")}, name
            assert "vary" not in reply.headers, name


@pytest.mark.parametrize(
    ("given", "origin"),
    [
        ("http://localhost:8080", "http://localhost:8080"),
        (" HTTPS://LS.Lab.ORG ", "https://ls.lab.org"),
        ("http://ls.lab.org:80", "http://ls.lab.org"),  # browsers leave the default port out
        ("https://ls.lab.org:443", "https://ls.lab.org"),
        ("https://ls.lab.org:8443", "https://ls.lab.org:8443"),
        ("http://[::1]:8080", "http://[::1]:8080"),
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
    ],
)
def test_origins_are_written_as_browsers_send_them(given: str, origin: str) -> None:
    assert parse_origin(given) == origin


@pytest.mark.parametrize(
    ("given", "reason"),
    [
        ("*", "'*': every web page would be let in; name each origin"),
        ("localhost:8080", "expected scheme://host[:port] with http or https"),
        ("ftp://files.lab.org", "expected scheme://host[:port] with http or https"),
        ("http://", "expected scheme://host[:port] with http or https"),
        ("http://ls.lab.org:99999", "expected scheme://host[:port] with http or https"),
        ("http://ls.lab.org:80a", "expected scheme://host[:port] with http or https"),
        ("http://ls.lab.org/", "no path, query or fragment; did you mean http://ls.lab.org?"),
        (
            "http://localhost:8080/projects/1",
            "no path, query or fragment; did you mean http://localhost:8080?",
        ),
        ("http://ls.lab.org?x=1", "did you mean http://ls.lab.org?"),
        ("http://ls.lab.org#top", "did you mean http://ls.lab.org?"),
        ("http://ana:secret@ls.lab.org", "an origin holds no user name or password"),
    ],
)
def test_a_malformed_origin_is_refused_saying_what_is_expected(given: str, reason: str) -> None:
    with pytest.raises(VadsceneError) as caught:
        parse_origin(given, "--allow-origin")
    assert str(caught.value).startswith(f"--allow-origin '{given}': ")
    assert reason in str(caught.value)


def test_the_server_reads_its_origins_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(ALLOWED_ORIGINS_VARIABLE, "http://localhost:8080, https://ls.lab.org,")
    assert allowed_origins() == ["http://localhost:8080", "https://ls.lab.org"]
    monkeypatch.setenv(ALLOWED_ORIGINS_VARIABLE, "")
    assert allowed_origins() == []
    with pytest.raises(VadsceneError, match="origin '\\*'"):
        allowed_origins("*")


def test_the_app_command_refuses_a_bad_origin_before_starting(
    small_workspace: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    root = str(small_workspace.root)
    assert run(["app", root, "--allow-origin", "localhost:8080"]) == 1
    err = capsys.readouterr().err
    assert "--allow-origin 'localhost:8080': expected scheme://host[:port]" in err


def test_team_mode_refuses_allow_origin(
    small_workspace: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    """Label Studio's player asks for videos with ``crossorigin="anonymous"``, which sends no
    cookie to another origin, and in team mode nothing answers without a session cookie: the
    combination would serve nothing, so it is refused."""
    small_workspace.store.register_annotator("ana")
    root = str(small_workspace.root)
    assert run(["app", root, "--team", "--allow-origin", LABEL_STUDIO]) == 1
    err = capsys.readouterr().err
    assert "--allow-origin works in local mode only" in err
    assert "without the session cookie" in err
