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
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response
from starlette.routing import Route

from vadscene.annotate.urls import FILMSTRIP_ROUTE, VIDEO_ROUTE, is_safe_video_id
from vadscene.core.errors import StoreError, VadsceneError
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


def video_routes(workspace_root: Path | str) -> list[Route]:
    """The routes that serve the videos of the workspace at ``workspace_root``.

    The workspace is opened on the first request, not here, so that building the ASGI app
    never fails on a workspace that is still being set up; Streamlit builds the app once per
    process, so that is one open workspace (one SQLite connection) per process.
    """
    server = _VideoServer(Path(workspace_root))
    return [
        Route(VIDEO_ROUTE, server.serve, methods=["GET", "HEAD"], name="vadscene-video"),
        Route(FILMSTRIP_ROUTE, server.filmstrip, methods=["GET", "HEAD"], name="vadscene-strip"),
    ]


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

    def __init__(self, workspace_root: Path) -> None:
        self._root = workspace_root
        self._workspace: Workspace | None = None
        self._lock = threading.Lock()

    def _open(self) -> Workspace:
        """The workspace, opened once; a failure is not kept, so a fixed workspace is picked up."""
        with self._lock:
            if self._workspace is None:
                workspace = Workspace.open(self._root)
                _ = workspace.store  # opens the store now, so that its errors surface here
                self._workspace = workspace
            return self._workspace

    def serve(self, request: Request) -> Response:
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

    def filmstrip(self, request: Request) -> Response:
        """The filmstrip JPEG of the video the path names, made and cached on first request.

        The same id checks as :meth:`serve`; 404 with the reason when it cannot be made. The
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
