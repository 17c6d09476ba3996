"""Filmstrips: which frames, what they show (against PyAV's decode of the same file), the cache,
the HTTP route and `vadscene proxies`."""

from __future__ import annotations

import math
from pathlib import Path

import av
import cv2
import numpy as np
import pytest
from helpers import ABUSE, SMALL_BENCHMARK
from support.serving import serving
from typer.testing import CliRunner

from vadscene.annotate.urls import filmstrip_url
from vadscene.cli import app
from vadscene.store.workspace import Workspace
from vadscene.video.thumbnails import (
    FILMSTRIP_THUMBS,
    THUMB_HEIGHT,
    build_filmstrips,
    filmstrip_frames,
    filmstrip_path,
    make_filmstrip,
)


@pytest.mark.parametrize("frames", [1, 5, 12, 30, 241, 10_000])
def test_thumbnails_sit_at_the_centres_of_equal_segments(frames: int) -> None:
    expected = []
    for i in range(FILMSTRIP_THUMBS):
        start, end = i * frames / FILMSTRIP_THUMBS, (i + 1) * frames / FILMSTRIP_THUMBS
        expected.append(min(frames - 1, math.floor((start + end) / 2)))
    got = filmstrip_frames(frames)
    assert got == expected
    assert all(0 <= f < frames for f in got) and got == sorted(got)
    assert filmstrip_frames(0) == []


def _decoded(path: Path) -> list[np.ndarray]:
    with av.open(str(path)) as container:
        return [frame.to_ndarray(format="rgb24") for frame in container.decode(video=0)]


def test_each_thumbnail_shows_its_frame(small_workspace: Workspace) -> None:
    """Every tile of the strip is nearest (mean absolute difference) to the frame it names,
    among all frames PyAV decodes from the same file, resized the same way."""
    video = small_workspace.store.video(ABUSE)
    path = make_filmstrip(small_workspace, video)
    strip = cv2.cvtColor(cv2.imread(str(path)), cv2.COLOR_BGR2RGB).astype(float)
    tile_width = strip.shape[1] // FILMSTRIP_THUMBS
    assert strip.shape[0] == THUMB_HEIGHT and strip.shape[1] == tile_width * FILMSTRIP_THUMBS
    frames = [
        cv2.resize(f, (tile_width, THUMB_HEIGHT), interpolation=cv2.INTER_AREA).astype(float)
        for f in _decoded(small_workspace.video_path(ABUSE))
    ]
    assert len(frames) == SMALL_BENCHMARK[f"{ABUSE}.mp4"]
    for i, wanted in enumerate(filmstrip_frames(video.num_frames)):
        tile = strip[:, i * tile_width : (i + 1) * tile_width]
        distances = [np.abs(tile - frame).mean() for frame in frames]
        assert int(np.argmin(distances)) == wanted, (i, wanted, np.argsort(distances)[:3])


def test_a_strip_is_made_once_and_cached_by_content(small_workspace: Workspace) -> None:
    video = small_workspace.store.video(ABUSE)
    path = make_filmstrip(small_workspace, video)
    assert path == filmstrip_path(small_workspace, video)
    assert path.parent == small_workspace.cache_dir / "filmstrips"
    made = path.stat().st_mtime_ns
    assert make_filmstrip(small_workspace, video).stat().st_mtime_ns == made  # reused
    assert not list(path.parent.glob("*.partial"))


def test_the_route_serves_the_strip_and_says_why_it_cannot(small_workspace: Workspace) -> None:
    small_workspace.video_path("Arson002_x264").unlink()
    with serving(small_workspace.root) as server:
        reply = server.get(filmstrip_url(ABUSE))
        assert reply.status == 200 and reply.headers["content-type"] == "image/jpeg"
        assert (
            reply.body
            == filmstrip_path(small_workspace, small_workspace.store.video(ABUSE)).read_bytes()
        )
        again = server.get(filmstrip_url(ABUSE), {"If-None-Match": reply.headers["etag"]})
        assert again.status == 304
        missing = server.get(filmstrip_url("Arson002_x264"))
        assert missing.status == 404 and b"Arson002_x264" in missing.body
        assert b"no file to take thumbnails from" in missing.body
        assert server.get(filmstrip_url("Nope_x264")).status == 404
        assert server.get("/vadscene/filmstrip/..%2F..%2Fpasswd").status in (400, 404)


def test_proxies_makes_every_strip_and_reports_failures(small_workspace: Workspace) -> None:
    small_workspace.video_path("Arson002_x264").unlink()
    result = CliRunner().invoke(app, ["proxies", str(small_workspace.root)])
    assert "filmstrips: 3 made, 0 reused, 1 failed" in result.output, result.output
    assert "Arson002_x264" in result.output
    report = build_filmstrips(small_workspace)
    assert sorted(report.reused) == sorted(
        v for v in small_workspace.store.video_ids() if v != "Arson002_x264"
    )
    assert [v for v, _ in report.failed] == ["Arson002_x264"]
