"""Stream workspace videos to the annotator's browser over HTTP.

``st.video`` copies a file's bytes into Streamlit's in-memory media storage, so every video an
annotator opens would be read whole into the server process. Instead the app mounts
:func:`video_routes` on Streamlit's ASGI entry (``st.App(script, routes=video_routes(root))``)
and points ``<video src=...>`` at :func:`video_url`; the browser then fetches the file itself,
in byte ranges as it seeks, and caches it while the annotator replays.

Only registered videos are addressable: the URL names a video id, the id is looked up in the
annotation store, and the file served is :func:`vadscene.video.proxies.playable_path` of that video
(the original when browsers play it, else its proxy). No path is ever built from the request.
Byte ranges, ``HEAD`` and ``If-Range`` are Starlette's :class:`~starlette.responses.FileResponse`
(it implements single and multiple ranges, 416 with ``Content-Range: bytes */size``, and
streams in chunks); this module adds the lookup, the checks, caching headers and
``If-None-Match``.

In team mode (``vadscene app --team``) :func:`session_gate` stands in front of everything the
server answers — pages, Streamlit's websocket and API, static files, these video routes: a
request without a live login session gets no byte of the app. The gate also is the way in: an
annotator's personal access link, or an identity provider's login mapped onto a registered
annotator by e-mail (:class:`ProviderLogin`).
"""

from __future__ import annotations

import html
import logging
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Literal
from urllib.parse import unquote, urlsplit

from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import HTTPConnection, Request
from starlette.responses import FileResponse, HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from vadscene.annotate.urls import FILMSTRIP_ROUTE, VIDEO_ROUTE, is_safe_video_id
from vadscene.core.errors import StoreError, VadsceneError
from vadscene.core.instants import canonical, now
from vadscene.core.records import VideoInfo
from vadscene.store.workspace import Workspace
from vadscene.video.proxies import playable_path, unplayable_reason

CHUNK_SIZE = 256 * 1024
"""Bytes per read while streaming: memory stays flat however large the video."""

CACHE_CONTROL = "private, max-age=3600"
"""The browser keeps a video for an hour, so replays and seeks back cost no download; private
because the workspace is an annotator's, not something a shared proxy should keep."""

MEDIA_TYPES = {".mp4": "video/mp4", ".webm": "video/webm"}
"""Content type by suffix of every file :func:`~vadscene.video.proxies.playable_path` can return:
the containers of :data:`~vadscene.video.proxies.BROWSER_PLAYABLE` (a test keeps the two in
step), and proxies are MP4."""


SESSION_COOKIE = "vadscene_session"
"""The cookie holding a team-mode login session's token (HttpOnly, SameSite=Lax)."""

LOCAL_HOSTS = ("127.0.0.1", "localhost")
"""Host names the app always answers to: this machine's."""

ALLOWED_HOSTS_VARIABLE = "VADSCENE_ALLOWED_HOSTS"
"""Environment variable through which ``vadscene app --allow-host`` tells the server process
which further host names to answer (comma-separated)."""


def allowed_hosts(extra: str | None = None) -> list[str]:
    """:data:`LOCAL_HOSTS` plus the comma-separated names in ``extra`` (default: the
    :data:`ALLOWED_HOSTS_VARIABLE` environment variable)."""
    given = os.environ.get(ALLOWED_HOSTS_VARIABLE, "") if extra is None else extra
    names = [name.strip().lower() for name in given.split(",") if name.strip()]
    return list(dict.fromkeys([*LOCAL_HOSTS, *names]))


def host_check(hosts: list[str]) -> Middleware:
    """Middleware answering 400 to any request — page, API, websocket, video — whose ``Host``
    header names none of ``hosts`` (the port is ignored).

    Why: DNS rebinding. A web page on a foreign name that its owner re-points at 127.0.0.1
    is, to the browser, same-origin with the app; it could frame it, drive it and read files
    through it. Such a request still carries the foreign name in ``Host``, so refusing every
    name but the configured ones closes that door.
    """
    return Middleware(TrustedHostMiddleware, allowed_hosts=hosts, www_redirect=False)


ALLOWED_ORIGINS_VARIABLE = "VADSCENE_ALLOWED_ORIGINS"
"""Environment variable through which ``vadscene app --allow-origin`` tells the server process
which web origins may load videos and filmstrips from another page (comma-separated)."""

CORS_EXPOSED_HEADERS = "Content-Range, Accept-Ranges, Content-Length, ETag"
"""What a script of an allowed origin may read of a video response besides the basics: what
it needs to fetch a video in ranges itself."""


def parse_origin(text: str, what: str = "origin") -> str:
    """The web origin ``text`` names, written as browsers send it in ``Origin`` (scheme and
    host lower case, no default port): ``scheme://host[:port]``, http or https, nothing more.
    :class:`VadsceneError` naming ``what`` (the option) and saying what was expected
    otherwise, suggesting the origin when a path was given."""
    given = text.strip()
    if given == "*":
        raise VadsceneError(
            f"{what} '*': every web page would be let in; name each origin, e.g. "
            "http://localhost:8080"
        )
    parts = urlsplit(given)
    try:
        port = parts.port
    except ValueError:
        port = -1
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname or port == -1:
        raise VadsceneError(
            f"{what} '{text}': expected scheme://host[:port] with http or https, e.g. "
            "http://localhost:8080 (where Label Studio is opened)"
        )
    scheme, host = parts.scheme.lower(), parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    default = {"http": 80, "https": 443}[scheme]
    origin = f"{scheme}://{host}" + (f":{port}" if port not in (None, default) else "")
    if parts.username is not None or parts.password is not None:
        raise VadsceneError(f"{what} '{text}': an origin holds no user name or password")
    if parts.path or parts.query or parts.fragment or given.endswith(("?", "#")):
        raise VadsceneError(
            f"{what} '{text}': an origin has no path, query or fragment; did you mean {origin}?"
        )
    return origin


def allowed_origins(extra: str | None = None) -> list[str]:
    """The origins in the comma-separated ``extra`` (default: the
    :data:`ALLOWED_ORIGINS_VARIABLE` environment variable), each checked by
    :func:`parse_origin`."""
    given = os.environ.get(ALLOWED_ORIGINS_VARIABLE, "") if extra is None else extra
    return list(dict.fromkeys(parse_origin(o) for o in given.split(",") if o.strip()))


def video_routes(workspace_root: Path | str, *, allowed_origins: Sequence[str] = ()) -> list[Route]:
    """The routes that serve the videos and filmstrips of the workspace at ``workspace_root``.

    The workspace is opened on the first request, not here, so that building the ASGI app
    never fails on a workspace that is still being set up; Streamlit builds the app once per
    process, so that is one open workspace (one SQLite connection) per process.

    ``allowed_origins`` (as :func:`parse_origin` writes them) are the web pages of other
    origins that may use the responses — Label Studio's player asks for the video in CORS
    mode (``crossorigin="anonymous"``, without cookies), and the browser plays it only when
    the response names the page's origin in ``Access-Control-Allow-Origin``. A request whose
    ``Origin`` is one of them gets that header; no other does, and no response ever says
    ``*``. With origins configured every response also says ``Vary: Origin``, so a browser
    never reuses a cached copy made for another origin. No preflight is needed: a media
    element's range requests are never preflighted, and a script's single range is a
    CORS-safelisted request header.
    """
    server = _VideoServer(Path(workspace_root), frozenset(allowed_origins))
    return [
        Route(VIDEO_ROUTE, server.serve, methods=["GET", "HEAD"], name="vadscene-video"),
        Route(FILMSTRIP_ROUTE, server.filmstrip, methods=["GET", "HEAD"], name="vadscene-strip"),
    ]


class _LazyWorkspace:
    """A workspace opened on first use, once; a failure is not kept, so a fixed workspace is
    picked up by the next request."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._workspace: Workspace | None = None
        self._lock = threading.Lock()

    def __call__(self) -> Workspace:
        with self._lock:
            if self._workspace is None:
                workspace = Workspace.open(self._root)
                _ = workspace.store  # opens the store now, so that its errors surface here
                self._workspace = workspace
            return self._workspace


class _VideoFileResponse(FileResponse):
    """Starlette's file response with larger reads (its default is 64 KiB)."""

    chunk_size = CHUNK_SIZE


def _refusal(status_code: int, reason: str) -> Response:
    """A short plain-text error that no cache keeps: a missing proxy may exist a minute later."""
    return PlainTextResponse(reason, status_code=status_code, headers={"cache-control": "no-store"})


def _matches(if_none_match: str, etag: str) -> bool:
    """``If-None-Match`` comparison, which is weak: ``W/"x"`` matches ``"x"`` (RFC 9110 13.1.2)."""
    tags = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
    return "*" in tags or etag in tags


class _VideoServer:
    """The endpoint, holding the lazily opened workspace.

    The endpoint is a plain function, so Starlette runs it in its thread pool: the store read,
    ``resolve`` and ``stat`` never block the event loop that also carries Streamlit's
    websockets. The store's connection is shared by those threads under its own lock.
    """

    def __init__(self, workspace_root: Path, origins: frozenset[str] = frozenset()) -> None:
        self._open = _LazyWorkspace(workspace_root)
        self._origins = origins

    def serve(self, request: Request) -> Response:
        """The video's file or the refusal (:meth:`_serve`), with CORS headers (:meth:`_cors`)."""
        return self._cors(request, self._serve(request))

    def filmstrip(self, request: Request) -> Response:
        """The filmstrip or the refusal (:meth:`_filmstrip`), with CORS headers."""
        return self._cors(request, self._filmstrip(request))

    def _cors(self, request: Request, response: Response) -> Response:
        """``response`` usable by a page of an allowed origin (see :func:`video_routes`).
        Refusals too, so that such a page learns the reason rather than a CORS error."""
        if self._origins:
            response.headers["vary"] = "Origin"
            origin = request.headers.get("origin")
            if origin in self._origins:
                response.headers["access-control-allow-origin"] = origin
                response.headers["access-control-expose-headers"] = CORS_EXPOSED_HEADERS
        return response

    def _serve(self, request: Request) -> Response:
        """Serve the playable file of the video the path names, or say why not.

        400 for an id :func:`is_safe_video_id` refuses; 404 for an id the store does not
        register, and for a registered video with nothing to play (no proxy yet, file gone,
        no video folder); 503 when the workspace cannot be opened.

        403 when the file resolves (through symlinks) to somewhere outside both the video
        folder and the workspace cache. Scanning follows symlinked files, so a video root may
        register a link to anywhere on the disk — and a file swapped for a link after the scan
        stays registered. The server is reachable by anyone who can reach the app, so it only
        hands out files that physically live in the two folders the workspace owns; a
        benchmark kept elsewhere is served by pointing the workspace's video folder at it
        (the folder itself may be a symlink: both folders are resolved before comparing).

        The ETag combines the fingerprint registered at scan time with the served file's size
        and modification time: the fingerprint names the content, and the stat part changes
        the tag when a file is replaced without a re-scan, so a browser never mixes cached
        byte ranges of two different files.
        """
        found = self._registered_video(request)
        if isinstance(found, Response):
            return found
        workspace, video = found
        video_id = video.video_id

        path = playable_path(workspace, video)
        if path is None:
            return _refusal(404, _unplayable_reason(workspace, video))
        try:
            real = path.resolve(strict=True)
            stat_result = os.stat(real)
        except OSError:
            return _refusal(404, f"video '{video_id}': its file has just disappeared")
        owned = [workspace.cache_dir.resolve()]
        if workspace.video_root is not None:
            owned.append(workspace.video_root.resolve())
        if not any(real.is_relative_to(folder) for folder in owned):
            return _refusal(
                403,
                f"video '{video_id}': its file links outside the video folder and the "
                "workspace cache, and only files inside them are served; point the "
                "workspace's video folder at where the videos really are",
            )

        fingerprint = video.fingerprint.rpartition(":")[2]
        etag = f'"{fingerprint}-{stat_result.st_size:x}-{stat_result.st_mtime_ns:x}"'
        headers = {
            "cache-control": CACHE_CONTROL,
            "etag": etag,
            "x-content-type-options": "nosniff",
        }
        if_none_match = request.headers.get("if-none-match")
        if if_none_match is not None and _matches(if_none_match, etag):
            return Response(status_code=304, headers=headers)
        return _VideoFileResponse(
            real,
            headers=headers,
            media_type=MEDIA_TYPES[path.suffix.lower()],
            stat_result=stat_result,
        )

    def _registered_video(self, request: Request) -> tuple[Workspace, VideoInfo] | Response:
        """The workspace and registry entry of the video the path names, or the refusal: 400
        for a name that is not an id, 503 when the workspace cannot be opened, 404 when the id
        is not registered."""
        video_id: str = request.path_params["video_id"]
        if not is_safe_video_id(video_id):
            return _refusal(400, "not a video id")
        try:
            workspace = self._open()
        except VadsceneError as exc:
            return _refusal(503, f"the workspace cannot be opened: {exc}")
        try:
            return workspace, workspace.store.video(video_id)
        except StoreError:
            return _refusal(404, f"unknown video '{video_id}'")

    def _filmstrip(self, request: Request) -> Response:
        """The filmstrip JPEG of the video the path names, made and cached on first request.

        The same id checks as :meth:`_serve`; 404 with the reason when it cannot be made. The
        file is named by the video's content fingerprint, so its name is a strong ETag.
        """
        from vadscene.video.thumbnails import FilmstripError, make_filmstrip

        found = self._registered_video(request)
        if isinstance(found, Response):
            return found
        workspace, video = found
        try:
            path = make_filmstrip(workspace, video)
        except FilmstripError as exc:
            return _refusal(404, str(exc))
        headers = {"cache-control": CACHE_CONTROL, "etag": f'"{path.stem}"'}
        if_none_match = request.headers.get("if-none-match")
        if if_none_match is not None and _matches(if_none_match, headers["etag"]):
            return Response(status_code=304, headers=headers)
        return FileResponse(path, headers=headers, media_type="image/jpeg")


def _unplayable_reason(workspace: Workspace, video: VideoInfo) -> str:
    """Why a registered video has no file to play, and what to run about it."""
    if workspace.video_root is None or video.path is None:
        return f"video '{video.video_id}': this workspace has no video files"
    reason = unplayable_reason(video, workspace.video_root)
    if reason is not None:
        return (
            f"video '{video.video_id}': browsers cannot play {video.path} ({reason}) and it "
            f"has no proxy yet; run `vadscene proxies {workspace.root}`"
        )
    return (
        f"video '{video.video_id}': {video.path} is missing from the video folder; "
        f"restore it or run `vadscene scan {workspace.root}`"
    )


# --- team mode: the session gate ---------------------------------------------------------------

TEAM_MODE_VARIABLE = "VADSCENE_TEAM"
"""Set to "1" by ``vadscene app --team`` for the server process: the gate is on."""

AUTH_FILE_VARIABLE = "VADSCENE_AUTH_FILE"
"""Environment variable naming the private file in which ``vadscene app --team --oidc-…``
hands the server process its OpenID Connect settings (read and deleted by ``app/server.py``)."""

LOGIN_PREFIX = "/vadscene/login/"
"""An access link is this path plus the annotator's secret (:func:`login_path`)."""

LOGOUT_PATH = "/vadscene/logout"
"""Ends this browser's session and clears its cookie."""

SESSION_MAX_AGE = 30 * 24 * 3600
"""Seconds a browser keeps the session cookie: a campaign's working days open the app without
the link every morning; revoking the annotator ends the session at once whatever the cookie."""

LOGIN_FAILURE_LIMIT = 10
LOGIN_FAILURE_WINDOW = timedelta(minutes=10)
"""After :data:`LOGIN_FAILURE_LIMIT` refused logins from one address within this window, its
further attempts are answered 429 without looking at the secret: a link's secret cannot be
guessed in the attempts left."""

RESOURCE_PREFIXES = ("/_stcore/", "/vadscene/", "/static/", "/media/", "/component/", "/app/")
"""Paths of what is not a page — Streamlit's API and assets, videos, filmstrips, downloads,
components: refused with an empty 401, never the login page."""

_log = logging.getLogger("vadscene.serving")


def login_path(secret: str) -> str:
    """The URL path of the personal access link holding ``secret`` (append it to the app's
    address)."""
    return LOGIN_PREFIX + secret


@dataclass(frozen=True)
class ProviderLogin:
    """An identity provider's login (Streamlit's OpenID Connect, in ``app/server.py``), as the
    gate uses it: its own routes run the provider's flow; once it has left a verified identity
    in the browser's cookies, the gate maps that e-mail onto a registered annotator
    (:meth:`~vadscene.store.team.TeamStore.annotator_by_email`) and opens a session."""

    name: str
    """Shown on the login page's button ("Log in with …")."""
    paths: frozenset[str]
    """The flow's routes, let through without a session."""
    cookie_prefix: str
    """Names of the cookies the flow leaves; cleared once the gate has mapped them, so the
    session cookie is the only credential left."""
    start_url: Callable[[], str]
    """Where the login page's button leads (a URL made per request: it may expire)."""
    verified_email: Callable[[Mapping[str, str]], str | None]
    """The e-mail of the identity the request's cookies prove (signature checked), or None."""


def session_gate(workspace_root: Path | str, provider: ProviderLogin | None = None) -> Middleware:
    """Middleware refusing every request — page, websocket, API, static file, video,
    filmstrip, download — without a live login session of a registered annotator, checked on
    every request (and on every message of an open websocket), so a revocation takes effect on
    the next one.

    Without a session: a page gets a self-contained login page (401) offering ``provider``'s
    login when there is one; a websocket upgrade is refused; everything else gets an empty 401.
    The gate answers the way in itself: :data:`LOGIN_PREFIX` (a personal link), the
    ``provider``'s verified identity, :data:`LOGOUT_PATH`. Refused logins are recorded in the
    store, logged, and rate-limited per remote address (:data:`LOGIN_FAILURE_LIMIT`).
    """
    return Middleware(SessionGate, workspace_root=Path(workspace_root), provider=provider)


class SessionGate:
    """The ASGI middleware of :func:`session_gate`.

    Store reads run in the thread pool: a store busy committing must not hold up the event loop
    that carries every annotator's websocket."""

    def __init__(
        self, app: ASGIApp, workspace_root: Path, provider: ProviderLogin | None = None
    ) -> None:
        self.app = app
        self._workspace = _LazyWorkspace(workspace_root)
        self._provider = provider

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            await self._websocket(scope, receive, send)
        elif scope["type"] == "http":
            await self._http(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    # --- requests -----------------------------------------------------------------------------

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope)
        path = scope["path"]
        if path.startswith(LOGIN_PREFIX):
            response = await run_in_threadpool(self._unless_closed, self._link_login, request)
        elif path == LOGOUT_PATH:
            response = await run_in_threadpool(self._unless_closed, self._logout, request)
        elif self._provider is not None and path in self._provider.paths:
            await self.app(scope, receive, send)
            return
        else:
            found = await run_in_threadpool(self._session_of, request)
            if found is True:
                await self.app(scope, receive, send)
                return
            response = found if isinstance(found, Response) else self._refusal(request)
        await response(scope, receive, send)

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        connection = HTTPConnection(scope)
        if await run_in_threadpool(self._session_of, connection) is not True:
            _log.warning("refused a websocket without a session from %s", _remote(connection))
            await send({"type": "websocket.close", "code": 1008})
            return

        async def checked_receive() -> Message:
            """Every message the browser sends is a request too: a revoked session's next key
            closes the socket before Streamlit sees it."""
            message = await receive()
            if message["type"] == "websocket.receive" and (
                await run_in_threadpool(self._session_of, connection) is not True
            ):
                _log.warning(
                    "closed the websocket of an ended session from %s", _remote(connection)
                )
                await send({"type": "websocket.close", "code": 1008})
                return {"type": "websocket.disconnect", "code": 1008}
            return message

        await self.app(scope, checked_receive, send)

    # --- sessions -----------------------------------------------------------------------------

    def _unless_closed(self, handler: Callable[[Request], Response], request: Request) -> Response:
        """``handler``'s response, or 503 when the workspace cannot be opened."""
        try:
            self._workspace()
        except VadsceneError:
            return _closed()
        return handler(request)

    def _session_of(self, connection: HTTPConnection) -> bool | Response:
        """True when the request carries a live session; else the response to give when the
        gate has one to give (a mapped provider login, the workspace unavailable), else False."""
        try:
            store = self._workspace().store
        except VadsceneError:
            return _closed()
        token = connection.cookies.get(SESSION_COOKIE)
        if token and store.session_annotator(token) is not None:
            return True
        if (
            self._provider is not None
            and isinstance(connection, Request)
            and any(name.startswith(self._provider.cookie_prefix) for name in connection.cookies)
        ):
            return self._provider_login(connection)
        return False

    def _refusal(self, request: Request) -> Response:
        """No session: the login page for a page, an empty 401 for anything else."""
        accepts_html = "text/html" in request.headers.get("accept", "")
        path = request.url.path
        if (
            request.method in ("GET", "HEAD")
            and accepts_html
            and not path.startswith(RESOURCE_PREFIXES)
        ):
            return self._page(401, "Login required", self._login_text())
        return Response(status_code=401, headers=_PRIVATE)

    def _login_text(self) -> str:
        text = (
            "<p>Open your personal access link: your lead gets it from "
            "<code>vadscene annotators add</code>.</p>"
        )
        if self._provider is not None:
            url = html.escape(self._provider.start_url(), quote=True)
            name = html.escape(self._provider.name)
            text += f'<p><a class="button" href="{url}">Log in with {name}</a></p>'
        return text

    def _link_login(self, request: Request) -> Response:
        """A personal access link: a session for its annotator, the secret out of the address
        bar at once (303 to the app); a bad or revoked secret is a recorded failure (403)."""
        remote = _remote(request)
        store = self._workspace().store
        limited = self._rate_limited(remote)
        if limited is not None:
            return limited
        secret = unquote(request.url.path[len(LOGIN_PREFIX) :])
        annotator = store.annotator_for_secret(secret) if secret else None
        if annotator is None:
            self._failed(remote, "an unknown or revoked access link")
            return self._page(
                403,
                "This link does not open the app",
                "<p>The access link is unknown or has been revoked. Ask your lead for a new "
                "one.</p>",
            )
        return self._enter(request, annotator.annotator_id, "link")

    def _provider_login(self, request: Request) -> Response:
        """The provider's flow left an identity: a session for the registered annotator with
        its e-mail, else a recorded failure (403) naming the e-mail and what a lead runs."""
        assert self._provider is not None
        remote = _remote(request)
        limited = self._rate_limited(remote)
        if limited is not None:
            return limited
        email = self._provider.verified_email(request.cookies)
        if email is None:  # expired, or signed by an earlier server start: log in again
            response: Response = self._page(401, "Login required", self._login_text())
            self._clear_provider_cookies(request, response)
            return response
        annotator = self._workspace().store.annotator_by_email(email)
        if annotator is None:
            self._failed(remote, f"the e-mail {email} belongs to no registered annotator")
            shown = html.escape(email)
            response = self._page(
                403,
                "Not a registered annotator",
                f"<p>You logged in as <b>{shown}</b>, but no registered annotator has this "
                "e-mail. A lead must register it first:</p>"
                f"<pre>vadscene annotators add WORKSPACE NAME --email {shown}</pre>",
            )
        else:
            response = self._enter(request, annotator.annotator_id, "oidc")
        self._clear_provider_cookies(request, response)
        return response

    def _enter(self, request: Request, annotator_id: str, via: Literal["link", "oidc"]) -> Response:
        """Open a session (closing one this browser still held) and send the browser to the
        app with its cookie."""
        store = self._workspace().store
        previous = request.cookies.get(SESSION_COOKIE)
        if previous:
            store.close_session(previous)
        token = store.open_session(annotator_id, via=via)
        _log.info("%s logged in (%s) from %s", annotator_id, via, _remote(request))
        response = Response(status_code=303, headers={**_PRIVATE, "location": "/"})
        response.set_cookie(
            SESSION_COOKIE,
            token,
            max_age=SESSION_MAX_AGE,
            path="/",
            secure=request.url.scheme in ("https", "wss"),
            httponly=True,
            samesite="lax",
        )
        return response

    def _logout(self, request: Request) -> Response:
        token = request.cookies.get(SESSION_COOKIE)
        if token:
            self._workspace().store.close_session(token)
        response = Response(status_code=303, headers={**_PRIVATE, "location": "/"})
        response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="lax")
        return response

    def _rate_limited(self, remote: str) -> Response | None:
        since = canonical(now() - LOGIN_FAILURE_WINDOW)
        if self._workspace().store.login_failures_since(remote, since) < LOGIN_FAILURE_LIMIT:
            return None
        _log.warning("refused a login from %s: too many failed logins", remote)
        minutes = int(LOGIN_FAILURE_WINDOW.total_seconds() // 60)
        response = self._page(
            429,
            "Too many failed logins",
            f"<p>Too many failed logins from your address; try again in {minutes} minutes.</p>",
        )
        response.headers["retry-after"] = str(int(LOGIN_FAILURE_WINDOW.total_seconds()))
        return response

    def _failed(self, remote: str, reason: str) -> None:
        self._workspace().store.record_login_failure(remote, reason)
        _log.warning("refused a login from %s: %s", remote, reason)

    def _clear_provider_cookies(self, request: Request, response: Response) -> None:
        assert self._provider is not None
        for name in request.cookies:
            if name.startswith(self._provider.cookie_prefix):
                response.delete_cookie(name, path="/")

    @staticmethod
    def _page(status_code: int, title: str, body: str) -> HTMLResponse:
        """A page of its own: no script, no style or image from the server, nothing of the
        app."""
        document = _PAGE.format(title=html.escape(title), body=body)
        return HTMLResponse(document, status_code=status_code, headers=_PAGE_HEADERS)


def _closed() -> Response:
    """503 for a workspace that cannot be opened; why goes to the server's log only, since the
    one asking has no session."""
    _log.exception("the workspace cannot be opened")
    return _refusal(503, "the workspace cannot be opened; the server's log says why")


def _remote(connection: HTTPConnection) -> str:
    """The client's address (behind a local reverse proxy, the one it forwards: uvicorn reads
    ``X-Forwarded-For`` from 127.0.0.1)."""
    return connection.client.host if connection.client else "unknown"


_PRIVATE = {"cache-control": "no-store", "referrer-policy": "no-referrer"}
_PAGE_HEADERS = {
    **_PRIVATE,
    "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'",
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
}
_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title} · vadscene</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body {{ font: 16px/1.5 system-ui, sans-serif; max-width: 36rem; margin: 4rem auto;
  padding: 0 1rem; color: #1f2430; }}
h1 {{ font-size: 1.4rem; }}
pre, code {{ background: #f0f2f6; border-radius: 4px; padding: 0.1rem 0.3rem; }}
pre {{ padding: 0.6rem; white-space: pre-wrap; }}
a.button {{ display: inline-block; padding: 0.5rem 1rem; border-radius: 6px;
  background: #ff4b4b; color: white; text-decoration: none; }}
</style></head>
<body><h1>{title}</h1>{body}</body></html>
"""
