"""A page of another origin plays `vadscene app --allow-origin`'s videos in real Chromium the
way Label Studio's player asks for them (``crossorigin="anonymous"``), and counts the frames
Label Studio would count; a page of an origin not named is refused by the browser."""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from browser import chromium_page
from helpers import write_video
from support.serving import app_process

from vadscene.annotate.urls import filmstrip_url, video_url
from vadscene.release.labelstudio import FPS_FIELD, export_tasks
from vadscene.store.workspace import Workspace

pytestmark = pytest.mark.browser

VIDEO_ID = "Arrest001_x264"

PLAY = """async ([video, strip]) => {
  const element = document.createElement("video");
  element.crossOrigin = "anonymous";  // as Label Studio's player asks
  element.muted = true;
  element.preload = "metadata";
  const played = await new Promise((resolve) => {
    element.onloadedmetadata = () => resolve({duration: element.duration});
    element.onerror = () => resolve({error: element.error ? element.error.code : -1});
    element.src = video;
  });
  const asked = async (url, headers) => {
    try {
      const reply = await fetch(url, {headers});
      return {status: reply.status, range: reply.headers.get("content-range"),
              type: reply.headers.get("content-type")};
    } catch (error) {
      return {error: String(error)};
    }
  };
  return {played, ranged: await asked(video, {Range: "bytes=0-99"}), strip: await asked(strip)};
}"""


@contextmanager
def page_server(folder: Path) -> Iterator[int]:
    """A static web server for ``folder`` on a free loopback port: the other origin."""
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(folder))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def app_allowing(root: Path, origin: str, log: Path) -> Iterator[int]:
    """`vadscene app ROOT --allow-origin ORIGIN` on a free port, until it answers."""
    with app_process(root, log, "--allow-origin", origin) as port:
        yield port


def test_label_studio_style_player_plays_only_for_the_allowed_origin(tmp_path: Path) -> None:
    write_video(tmp_path / "videos" / f"{VIDEO_ID}.mp4", "libx264", frames=360, fps=30)
    with Workspace.create(tmp_path / "ws", video_root=tmp_path / "videos") as workspace:
        workspace.scan()
        (task,) = export_tasks(workspace)
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "index.html").write_text("<!doctype html><title>player</title>")
    results: dict[str, Any] = {}
    with page_server(tmp_path / "site") as page_port:
        allowed = f"http://127.0.0.1:{page_port}"
        with (
            app_allowing(tmp_path / "ws", allowed, tmp_path / "app.log") as app_port,
            chromium_page() as page,
        ):
            app = f"http://127.0.0.1:{app_port}"
            urls = [app + video_url(VIDEO_ID), app + filmstrip_url(VIDEO_ID)]
            # the same page from http://localhost:PORT is another origin, not named
            for origin in (allowed, f"http://localhost:{page_port}"):
                page.goto(f"{origin}/index.html")
                results[origin] = page.evaluate(PLAY, urls)

    good = results[allowed]
    assert good["ranged"]["status"] == 206 and good["ranged"]["range"].startswith("bytes 0-99/")
    assert good["strip"] == {"status": 200, "range": None, "type": "image/jpeg"}
    # Label Studio shows ceil(duration × frameRate) frames, frameRate read from the task
    assert math.ceil(good["played"]["duration"] * task["data"][FPS_FIELD]) == 360

    refused = results[f"http://localhost:{page_port}"]
    assert "error" in refused["played"], refused
    assert "error" in refused["ranged"] and "error" in refused["strip"], refused
