"""Serving videos over HTTP: a real uvicorn server on a free localhost port, spoken to with
``http.client`` so that request paths reach the server byte for byte (no client normalises or
re-quotes them)."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

import pytest
from helpers import write_video
from starlette.applications import Starlette
from support.clips import write_clip
from support.serving import Server, serving

from vadscene.annotate.serving import CACHE_CONTROL, CHUNK_SIZE, MEDIA_TYPES, video_routes
from vadscene.annotate.urls import VIDEO_ROUTE, is_safe_video_id, video_url
from vadscene.store.workspace import Workspace
from vadscene.video.proxies import BROWSER_PLAYABLE, build_proxies, proxy_path

VIDEO_ID = "Abuse001_x264"
PASSWD = b"root:x:0:0:root:/root:/bin/bash\n"


@pytest.fixture(scope="module")
def shared_workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    """A workspace the read-only tests share, with a file beside it worth stealing."""
    base = tmp_path_factory.mktemp("serving")
    (base / "videos").mkdir()
    for video_id, frames in ((VIDEO_ID, 30), ("Arson002_x264", 20)):
        write_video(base / "videos" / f"{video_id}.mp4", "libx264", frames=frames)
    (base / "passwd").write_bytes(PASSWD)
    with Workspace.create(base / "ws", video_root=base / "videos", dataset="small") as workspace:
        workspace.scan()
        (workspace.root / "passwd").write_bytes(PASSWD)
        yield workspace


@pytest.fixture(scope="module")
def server(shared_workspace: Workspace) -> Iterator[Server]:
    """One server for the tests that change nothing: starting one costs ~0.2 s."""
    with serving(shared_workspace.root) as running:
        yield running


@pytest.fixture
def own_server(small_workspace: Workspace) -> Iterator[Server]:
    """A server of its own for a test that changes its workspace."""
    with serving(small_workspace.root) as running:
        yield running


def video_bytes(workspace: Workspace, video_id: str = VIDEO_ID) -> bytes:
    return workspace.video_path(video_id).read_bytes()


# --- URLs and ids ---------------------------------------------------------------------------


def test_video_url_quotes_every_reserved_character() -> None:
    assert video_url("Abuse001_x264") == "/vadscene/video/Abuse001_x264"
    assert video_url("a b#c?d/e%f") == "/vadscene/video/a%20b%23c%3Fd%2Fe%25f"
    assert VIDEO_ROUTE.format(video_id="x") == video_url("x")


@pytest.mark.parametrize(
    "video_id",
    ["Abuse001_x264", "Thelma...Louise.1991__#01-53-54_01-54-50_label_A", "50% done", "…"],
)
def test_safe_ids(video_id: str) -> None:
    assert is_safe_video_id(video_id)


@pytest.mark.parametrize(
    "video_id",
    [
        "",
        ".",
        "..",
        "a/b",
        "a\\b",
        "/etc/passwd",
        "a\x00b",
        "a\nb",
        "%2e%2e",
        "..%2fetc",
        "%2e%2e%5cetc",
        "%252e%252e%252fetc%252fpasswd",
        "%25252fetc",
        "x%00",
    ],
)
def test_unsafe_ids(video_id: str) -> None:
    assert not is_safe_video_id(video_id)


def test_every_playable_container_has_a_media_type() -> None:
    assert {suffix for suffix, _ in BROWSER_PLAYABLE} | {".mp4"} == set(MEDIA_TYPES)


# --- whole files, ranges, HEAD, caching -----------------------------------------------------


def test_full_get_streams_the_file(server: Server, shared_workspace: Workspace) -> None:
    reply = server.get(video_url(VIDEO_ID))
    data = video_bytes(shared_workspace)
    assert reply.status == 200
    assert reply.body == data
    assert reply.headers["content-length"] == str(len(data))
    assert reply.headers["content-type"] == "video/mp4"
    assert reply.headers["accept-ranges"] == "bytes"
    assert reply.headers["cache-control"] == CACHE_CONTROL == "private, max-age=3600"
    fingerprint = shared_workspace.store.video(VIDEO_ID).fingerprint.rpartition(":")[2]
    assert reply.headers["etag"].startswith(f'"{fingerprint}-')


@pytest.mark.parametrize(
    ("spec", "first", "last"),
    [
        ("bytes=0-99", 0, 99),  # the first 100 bytes
        ("bytes=100-", 100, None),  # open-ended
        ("bytes=-500", -500, None),  # suffix
        ("bytes=-1", -1, None),  # the last byte
        ("bytes=50-50", 50, 50),  # one byte in the middle
        ("bytes=10-99999999", 10, None),  # end past the file: clipped
    ],
)
def test_single_ranges(
    server: Server, shared_workspace: Workspace, spec: str, first: int, last: int | None
) -> None:
    data = video_bytes(shared_workspace)
    size = len(data)
    assert size > 1000
    start = first % size
    end = size - 1 if last is None else last
    reply = server.get(video_url(VIDEO_ID), {"Range": spec})
    assert reply.status == 206
    assert reply.headers["content-range"] == f"bytes {start}-{end}/{size}"
    assert reply.headers["content-length"] == str(end - start + 1)
    assert reply.headers["content-type"] == "video/mp4"
    assert reply.body == data[start : end + 1]


@pytest.mark.parametrize("spec", ["bytes=99999999-", "bytes=99999999-100000000", "bytes=-0"])
def test_unsatisfiable_range(server: Server, shared_workspace: Workspace, spec: str) -> None:
    size = len(video_bytes(shared_workspace))
    reply = server.get(video_url(VIDEO_ID), {"Range": spec})
    assert reply.status == 416
    assert reply.headers["content-range"] == f"bytes */{size}"


def test_head_sends_headers_only(server: Server, shared_workspace: Workspace) -> None:
    size = len(video_bytes(shared_workspace))
    reply = server.get(video_url(VIDEO_ID), method="HEAD")
    assert reply.status == 200
    assert reply.body == b""
    assert reply.headers["content-length"] == str(size)
    assert reply.headers["content-type"] == "video/mp4"
    assert reply.headers["accept-ranges"] == "bytes"
    ranged = server.get(video_url(VIDEO_ID), {"Range": "bytes=0-9"}, method="HEAD")
    assert (ranged.status, ranged.body) == (206, b"")
    assert ranged.headers["content-range"] == f"bytes 0-9/{size}"


def test_etag_revalidation_and_if_range(server: Server, shared_workspace: Workspace) -> None:
    etag = server.get(video_url(VIDEO_ID), method="HEAD").headers["etag"]
    assert server.get(video_url(VIDEO_ID), method="HEAD").headers["etag"] == etag  # stable
    other = server.get(video_url("Arson002_x264"), method="HEAD").headers["etag"]
    assert other != etag

    for condition in (etag, f"W/{etag}", f'"nope", {etag}', "*"):
        unchanged = server.get(video_url(VIDEO_ID), {"If-None-Match": condition})
        assert (unchanged.status, unchanged.body) == (304, b"")
        assert unchanged.headers["etag"] == etag
        assert unchanged.headers["cache-control"] == CACHE_CONTROL
    assert server.get(video_url(VIDEO_ID), {"If-None-Match": '"nope"'}).status == 200

    # If-Range: the range only while the browser's copy is still current.
    assert server.get(video_url(VIDEO_ID), {"Range": "bytes=0-9", "If-Range": etag}).status == 206
    stale = server.get(video_url(VIDEO_ID), {"Range": "bytes=0-9", "If-Range": '"old"'})
    assert (stale.status, stale.body) == (200, video_bytes(shared_workspace))


def test_etag_changes_when_the_file_is_replaced_without_a_rescan(
    own_server: Server, small_workspace: Workspace
) -> None:
    path = small_workspace.video_path(VIDEO_ID)
    before = own_server.get(video_url(VIDEO_ID), method="HEAD").headers["etag"]
    write_video(path, "libx264", frames=31)
    after = own_server.get(video_url(VIDEO_ID))
    assert after.body == path.read_bytes()
    assert after.headers["etag"] != before


def test_ids_with_url_syntax_are_served(
    small_workspace: Workspace, small_videos: Path, own_server: Server
) -> None:
    odd_ids = ["Thelma...Louise.1991__#01-53-54_01-54-50_label_A", "50% done (take 2)"]
    for video_id in odd_ids:
        write_video(small_videos / f"{video_id}.mp4", "libx264", frames=5)
    assert set(small_workspace.scan().added) == set(odd_ids)
    for video_id in odd_ids:
        reply = own_server.get(video_url(video_id))
        assert reply.status == 200, reply.body
        assert reply.body == video_bytes(small_workspace, video_id)


def test_inside_streamlit_app(shared_workspace: Workspace, tmp_path: Path) -> None:
    """Mounted on ``st.App`` as the app does: Streamlit accepts the route, and its middleware
    (path security, gzip) leaves whole files, ranges and refusals intact.

    In a subprocess, because ``st.App`` pins process-wide Streamlit configuration.
    """
    (tmp_path / "page.py").write_text("import streamlit as st\n\nst.write('hello')\n")
    (tmp_path / "launcher.py").write_text(
        "import os\n\n"
        "import streamlit as st\n\n"
        "from vadscene.annotate.serving import video_routes\n\n"
        "app = st.App(os.environ['PAGE'], routes=video_routes(os.environ['WORKSPACE']))\n"
    )
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen()  # requests wait in the backlog until uvicorn is up: no polling
    environment = {
        **os.environ,
        "PAGE": str(tmp_path / "page.py"),
        "WORKSPACE": str(shared_workspace.root),
    }
    command = [sys.executable, "-m", "uvicorn", "launcher:app", "--fd", str(sock.fileno())]
    log = tmp_path / "uvicorn.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [*command, "--app-dir", str(tmp_path), "--log-level", "warning"],
            env=environment,
            pass_fds=[sock.fileno()],
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:
        server = Server(sock.getsockname()[1])
        data = video_bytes(shared_workspace)
        whole = server.get(video_url(VIDEO_ID), {"Accept-Encoding": "gzip"})
        assert whole.status == 200, log.read_text()
        assert "content-encoding" not in whole.headers
        assert whole.body == data
        assert whole.headers["etag"] and whole.headers["cache-control"] == CACHE_CONTROL
        ranged = server.get(video_url(VIDEO_ID), {"Range": "bytes=0-99", "Accept-Encoding": "gzip"})
        assert (ranged.status, ranged.body) == (206, data[:100])
        refused = server.get("/vadscene/video/..%2F..%2Fetc%2Fpasswd")
        assert refused.status in (400, 404)
        assert b"root:" not in refused.body
        assert server.get(video_url("Nope999_x264")).status == 404
        assert server.get("/_stcore/health").status == 200  # Streamlit itself is there too
    finally:
        process.terminate()
        process.wait(timeout=10)
        sock.close()


# --- refusals -------------------------------------------------------------------------------


def test_unknown_id_is_404_with_a_reason(server: Server) -> None:
    reply = server.get(video_url("Nope999_x264"))
    assert reply.status == 404
    assert reply.headers["content-type"].startswith("text/plain")
    assert reply.headers["cache-control"] == "no-store"
    assert b"unknown video 'Nope999_x264'" in reply.body


def test_only_get_and_head(server: Server) -> None:
    assert server.get(video_url(VIDEO_ID), method="POST").status == 405


TRAVERSALS = [
    "../../etc/passwd",
    "..%2F..%2Fetc%2Fpasswd",
    "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "%2E%2E%2F%2E%2E%2Fetc%2Fpasswd",
    "%252e%252e%252fetc%252fpasswd",
    "%25252e%25252e%25252fetc%25252fpasswd",
    "%2Fetc%2Fpasswd",
    "%252Fetc%252Fpasswd",
    "..%5C..%5Cetc%5Cpasswd",
    "%2e%2e%5c%2e%2e%5cetc%5cpasswd",
    "..",
    "%2e%2e",
    "%00",
    "Abuse001_x264%00",
    "..%2F..%2F..%2F..%2F..%2F..%2F..%2F..%2Fetc%2Fpasswd",
    "..%2Fvideos%2FAbuse001_x264.mp4",
    "..%2Fvadscene.yaml",
    # files that exist beside the workspace and the video folder (see shared_workspace)
    "passwd",
    "..%2Fpasswd",
    "..%2F..%2Fpasswd",
    "%2E%2E%252Fpasswd",
    "%2E%2E%5C%2E%2E%5Cpasswd",
]


@pytest.mark.parametrize("tail", TRAVERSALS)
def test_traversal_is_refused(server: Server, tail: str) -> None:
    """Refused by the router (a decoded ``/`` leaves the route) or by the id check."""
    reply = server.get("/vadscene/video/" + tail)
    assert reply.status in (400, 404), reply.body
    assert b"root:" not in reply.body
    assert b"dataset:" not in reply.body  # not vadscene.yaml either


def test_symlink_out_of_the_video_root_is_403(
    small_workspace: Workspace, small_videos: Path, tmp_path: Path, own_server: Server
) -> None:
    # A symlinked file scanning registers, pointing at a video outside the video root.
    outside = write_video(tmp_path / "elsewhere.mp4", "libx264", frames=5)
    (small_videos / "Linked005_x264.mp4").symlink_to(outside)
    assert small_workspace.scan().added == ["Linked005_x264"]
    reply = own_server.get(video_url("Linked005_x264"))
    assert reply.status == 403
    assert b"outside the video folder" in reply.body
    assert reply.body != outside.read_bytes()

    # A registered file swapped for a link to a secret after the scan.
    secret = tmp_path / "passwd"
    secret.write_bytes(PASSWD)
    registered = small_workspace.video_path(VIDEO_ID)
    registered.unlink()
    registered.symlink_to(secret)
    for headers in ({}, {"Range": "bytes=0-3"}):
        reply = own_server.get(video_url(VIDEO_ID), headers)
        assert reply.status == 403
        assert b"root:" not in reply.body


def test_symlinks_inside_the_video_root_are_served(
    small_workspace: Workspace, small_videos: Path, own_server: Server
) -> None:
    (small_videos / "Copy006_x264.mp4").symlink_to(small_videos / "Arson002_x264.mp4")
    assert small_workspace.scan().added == ["Copy006_x264"]
    reply = own_server.get(video_url("Copy006_x264"))
    assert reply.status == 200
    assert reply.body == video_bytes(small_workspace, "Arson002_x264")


def test_a_symlinked_video_root_is_served(small_videos: Path, tmp_path: Path) -> None:
    """Benchmarks often live on another disk behind a link: the folder is resolved too."""
    link = tmp_path / "videos-link"
    link.symlink_to(small_videos, target_is_directory=True)
    with Workspace.create(tmp_path / "linked-ws", video_root=link, dataset="small") as ws:
        ws.scan()
        with serving(ws.root) as server:
            reply = server.get(video_url(VIDEO_ID))
        assert reply.status == 200
        assert reply.body == (small_videos / f"{VIDEO_ID}.mp4").read_bytes()


def test_unplayable_video_needs_a_proxy(
    small_workspace: Workspace, small_videos: Path, own_server: Server
) -> None:
    (small_videos / "Arson002_x264.mp4").unlink()
    write_video(small_videos / "Arson002_x264.avi", "mpeg4", frames=20)
    assert small_workspace.scan().updated == ["Arson002_x264"]

    reply = own_server.get(video_url("Arson002_x264"))
    assert reply.status == 404
    assert b"(mpeg4 in .avi: browsers play only H.264 in .mp4" in reply.body
    assert b"run `vadscene proxies" in reply.body
    assert reply.headers["cache-control"] == "no-store"  # the browser asks again later

    assert build_proxies(small_workspace).made == ["Arson002_x264"]
    proxy = proxy_path(small_workspace, small_workspace.store.video("Arson002_x264"))
    reply = own_server.get(video_url("Arson002_x264"))
    assert reply.status == 200
    assert reply.headers["content-type"] == "video/mp4"
    assert reply.body == proxy.read_bytes()
    ranged = own_server.get(video_url("Arson002_x264"), {"Range": "bytes=-100"})
    assert ranged.status == 206
    assert ranged.body == proxy.read_bytes()[-100:]


def test_an_mp4_in_a_pixel_format_browsers_cannot_decode_needs_a_proxy(
    small_workspace: Workspace, small_videos: Path, own_server: Server
) -> None:
    write_clip(small_videos / "Arson002_x264.mp4", frames=20, pix_fmt="yuv444p")
    assert small_workspace.scan().updated == ["Arson002_x264"]
    reply = own_server.get(video_url("Arson002_x264"))
    assert reply.status == 404
    assert b"(H.264 yuv444p: browsers play only 8-bit 4:2:0)" in reply.body
    assert build_proxies(small_workspace).made == ["Arson002_x264"]
    assert own_server.get(video_url("Arson002_x264")).status == 200


def test_missing_original_is_404(
    small_workspace: Workspace, small_videos: Path, own_server: Server
) -> None:
    (small_videos / "Arson002_x264.mp4").unlink()
    reply = own_server.get(video_url("Arson002_x264"))
    assert reply.status == 404
    assert b"missing from the video folder" in reply.body


def test_broken_workspace_is_503_and_recovers(small_workspace: Workspace) -> None:
    """The workspace is opened on the first request; a failure is not remembered."""
    config = small_workspace.root / "vadscene.yaml"
    text = config.read_text(encoding="utf-8")
    config.unlink()
    with serving(small_workspace.root) as server:
        reply = server.get(video_url(VIDEO_ID))
        assert reply.status == 503
        assert b"not a vadscene workspace" in reply.body
        config.write_text(text, encoding="utf-8")
        assert server.get(video_url(VIDEO_ID)).status == 200


def test_large_file_streams_in_chunks(
    small_workspace: Workspace, small_videos: Path, own_server: Server
) -> None:
    """A file several chunks long goes out in pieces of at most ``CHUNK_SIZE`` (seen at the
    ASGI level, where the pieces are still visible) and arrives whole, ranges included."""
    path = small_videos / "Big007_x264.mp4"
    write_video(path, "libx264", frames=8)
    small_workspace.scan()
    with path.open("ab") as f:  # padding: only the bytes matter here
        f.write(os.urandom(1_000_000))
    data = path.read_bytes()
    assert own_server.get(video_url("Big007_x264")).body == data
    start, end = 200_000, 800_123
    reply = own_server.get(video_url("Big007_x264"), {"Range": f"bytes={start}-{end}"})
    assert reply.status == 206
    assert reply.body == data[start : end + 1]

    app = Starlette(routes=video_routes(small_workspace.root))
    for headers, expected in (({}, data), ({"range": f"bytes={start}-{end}"}, reply.body)):
        pieces = asyncio.run(asgi_body_pieces(app, video_url("Big007_x264"), headers))
        assert len(pieces) > 2
        assert max(len(piece) for piece in pieces) == CHUNK_SIZE
        assert b"".join(pieces) == expected


async def asgi_body_pieces(app: Starlette, path: str, headers: dict[str, str]) -> list[bytes]:
    """The body messages ``app`` sends for a GET of ``path``."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.4"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": unquote(path),
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }
    pieces: list[bytes] = []

    async def receive() -> dict[str, object]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, object]) -> None:
        if message["type"] == "http.response.body":
            pieces.append(message["body"])

    await app(scope, receive, send)
    return [piece for piece in pieces if piece]


# --- trusting nobody on the wire ------------------------------------------------------------


def test_only_configured_host_names_are_served(small_workspace: Workspace, tmp_path: Path) -> None:
    """`vadscene app` answers 127.0.0.1, localhost and --allow-host names; a foreign Host
    header — what a DNS-rebound page sends — gets 400 on every route, the video route included."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-c", "from vadscene.cli import main; main()", "app"]
    command += [str(small_workspace.root), "--port", str(port), "--allow-host", "Lab.example"]
    log = tmp_path / "app.log"
    with log.open("wb") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
    server = Server(port)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if server.get("/_stcore/health").status == 200:
                    break
            except OSError:
                pass
            assert process.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.3)
        video = video_url(VIDEO_ID)
        for host in ("127.0.0.1", f"127.0.0.1:{port}", f"localhost:{port}", "lab.example"):
            assert server.get("/_stcore/health", {"Host": host}).status == 200, host
            assert server.get(video, {"Host": host}).status == 200, host
        data = video_bytes(small_workspace)
        for host in ("evil.example", f"evil.example:{port}", "127.0.0.1.evil.example", ""):
            for path in ("/", "/_stcore/health", video):
                reply = server.get(path, {"Host": host})
                assert reply.status == 400, (host, path, reply.status)
                assert data[:1000] not in reply.body
    finally:
        process.terminate()
        process.wait(timeout=20)


def test_the_audit_page_reads_no_file_outside_the_workspace(
    small_workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Typed server paths outside the workspace — directly or through a symlink in it — are
    refused by name; nothing of the file reaches the page."""
    from streamlit.testing.v1 import AppTest

    from vadscene.core.paths import app_entry_point

    secret = Path("/etc/hostname")
    if not secret.is_file():
        pytest.skip("no /etc/hostname on this machine")
    contents = secret.read_text().strip()
    (small_workspace.root / "link.txt").symlink_to(secret)
    monkeypatch.setenv("VADSCENE_WORKSPACE", str(small_workspace.root))
    app = AppTest.from_file(str(app_entry_point()), default_timeout=60).run()
    app.switch_page("app_pages/audit.py").run()
    for ground_truth, models in (
        (str(secret), ""),
        ("link.txt", ""),
        ("../../../../../../etc/hostname", ""),
        ("", f"stolen={secret}"),
    ):
        app.text_input(key="audit_ground_truth").set_value(ground_truth)
        app.text_area(key="audit_extra_models").set_value(models)
        app.button(key="audit_run").click().run()
        assert not app.exception
        [error] = [e.value for e in app.error]
        assert "the app reads only files inside the workspace" in error, error
        shown = " ".join(str(element.value) for element in app.main if hasattr(element, "value"))
        assert contents not in shown.replace(str(secret), "")
