"""Tests for vadscene.video.proxies: which videos need a proxy, making proxies, incremental
builds."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest
from helpers import realdata_dir, write_video
from support import clips

from vadscene.cli import run
from vadscene.core.errors import VadsceneError, WorkspaceError
from vadscene.core.records import VideoInfo
from vadscene.store.workspace import Workspace
from vadscene.video.probe import probe_video
from vadscene.video.proxies import (
    BROWSER_PLAYABLE,
    ProxyError,
    build_proxies,
    make_proxy,
    needs_proxy,
    playable_path,
    proxy_path,
    unplayable_reason,
)

AVI = "Abuse001_x264.avi"  # mpeg4 (MPEG-4 Part 2) in AVI: needs a proxy
MP4 = "Arson002_x264.mp4"  # H.264 in MP4: played as it is

AVI_REASON = "mpeg4 in .avi: browsers play only H.264 in .mp4, VP8 or VP9 in .webm"
NOT_420_8BIT = ": browsers play only 8-bit 4:2:0"
BROWSER_SAFE_PROFILES = {"Constrained Baseline", "Baseline", "Main", "High"}
"""What Media Foundation's H.264 decoder documents (Baseline, Main, High), written out here."""

X264_FORMATS = {f.name for f in av.Codec("libx264", "w").video_formats}
needs_10bit_x264 = pytest.mark.skipif(
    "yuv420p10le" not in X264_FORMATS,
    reason="the libx264 bundled with this PyAV cannot encode 10-bit (yuv420p10le)",
)


def info(path: str | None, codec: str) -> VideoInfo:
    """A registered video as far as playability is concerned."""
    return VideoInfo(
        video_id="clip",
        category="Unknown",
        path=path,
        num_frames=1,
        fps=25.0,
        duration_s=0.04,
        width=2,
        height=2,
        codec=codec,
        size_bytes=1,
        fingerprint="b2s:" + "0" * 32,
    )


def frame_means(path: Path) -> list[float]:
    """Mean grey level of every decoded frame, in order: identifies the synthetic frames."""
    with av.open(str(path)) as container:
        return [
            float(frame.to_ndarray(format="gray").mean())
            for frame in container.decode(container.streams.video[0])
        ]


def corrupt_after(path: Path, good_frames: int) -> Path:
    """Overwrite the payload of every packet after the first ``good_frames`` with noise.

    The file still opens and its first frame decodes (so it probes and registers), but
    decoding fails further in: a download damaged in the middle.
    """
    with av.open(str(path)) as container:
        packets = [(p.pos, p.size) for p in container.demux(container.streams.video[0]) if p.size]
    data = bytearray(path.read_bytes())
    rng = np.random.default_rng(0)
    for pos, size in packets[good_frames:]:
        data[pos : pos + size] = rng.integers(0, 256, size, dtype=np.uint8).tobytes()
    path.write_bytes(bytes(data))
    return path


def leftovers(directory: Path) -> list[str]:
    """Temporary files left in a proxy folder."""
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


def write_clip(
    path: Path,
    pix_fmt: str,
    *,
    codec: str = "libx264",
    frames: int = 12,
    options: dict[str, str] | None = None,
) -> Path:
    """A clip encoded in ``pix_fmt`` with encoder ``options``: the stream formats browsers do
    not all decode."""
    return clips.write_clip(
        path, frames=frames, codec=codec, pix_fmt=pix_fmt, encoder_options=options
    )


def stream_format(path: Path) -> tuple[str, str, str | None]:
    """(codec, decoded pixel format, profile) of the first video stream, as FFmpeg reports."""
    with av.open(str(path)) as container:
        context = container.streams.video[0].codec_context
        return context.name, context.format.name, context.profile


@pytest.fixture
def videos(tmp_path: Path) -> Path:
    root = tmp_path / "videos"
    root.mkdir()
    write_video(root / AVI, "mpeg4", frames=30, width=66, height=50)
    write_video(root / MP4, "libx264", frames=20)
    return root


@pytest.fixture
def workspace(tmp_path: Path, videos: Path) -> Iterator[Workspace]:
    ws = Workspace.create(tmp_path / "ws", video_root=videos, dataset="proxies")
    assert ws.scan().registered == 2
    yield ws
    ws.close()


def registered(workspace: Workspace, video_id: str) -> VideoInfo:
    return workspace.store.video(video_id)


# --- which videos need a proxy --------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "codec", "expected"),
    [
        ("a.mp4", "h264", False),
        ("a.MP4", "h264", False),  # benchmarks mix suffix cases
        ("a.webm", "vp8", False),
        ("a.webm", "vp9", False),
        ("a.avi", "h264", True),  # no browser demuxes AVI, whatever the codec
        ("a.avi", "mpeg4", True),
        ("a.avi", "mjpeg", True),
        ("a.mkv", "h264", True),
        ("a.mov", "h264", True),
        ("a.m4v", "h264", True),
        ("a.mp4", "hevc", True),
        ("a.mp4", "mpeg4", True),
        ("a.wmv", "wmv2", True),
        ("a.webm", "libdav1d", True),  # AV1 (decoder name): not in Safari without hardware
        ("a.webm", "libvpx-vp9", False),  # decoder name of a listed codec
        ("a.mp4", "no-such-codec", True),
        (None, "mpeg4", False),  # no file: nothing to transcode
    ],
)
def test_needs_proxy(path: str | None, codec: str, expected: bool) -> None:
    assert needs_proxy(info(path, codec)) is expected


def test_browser_playable_is_lower_case_suffix_and_codec_pairs() -> None:
    assert (".mp4", "h264") in BROWSER_PLAYABLE
    for suffix, codec in BROWSER_PLAYABLE:
        assert suffix.startswith(".") and suffix == suffix.lower()
        assert av.Codec(codec, "r").canonical_name == codec


def test_needs_proxy_on_scanned_videos(workspace: Workspace, videos: Path) -> None:
    assert registered(workspace, "Abuse001_x264").codec == "mpeg4"
    assert needs_proxy(registered(workspace, "Abuse001_x264"))
    assert not needs_proxy(registered(workspace, "Arson002_x264"))
    assert unplayable_reason(registered(workspace, "Abuse001_x264"), videos) == AVI_REASON
    assert unplayable_reason(registered(workspace, "Arson002_x264"), videos) is None


@pytest.mark.parametrize(
    ("path", "codec", "reason"),
    [
        ("a.avi", "mpeg4", AVI_REASON),
        ("a.AVI", "h264", "h264 in .avi: browsers play only H.264 in .mp4, VP8 or VP9 in .webm"),
        ("a.mp4", "hevc", "hevc in .mp4: browsers play only H.264 in .mp4, VP8 or VP9 in .webm"),
        (
            "a",
            "h264",
            "h264 in a file without a suffix: browsers play only H.264 in .mp4, "
            "VP8 or VP9 in .webm",
        ),
    ],
)
def test_unplayable_reason_names_the_container_and_codec(
    path: str, codec: str, reason: str
) -> None:
    assert unplayable_reason(info(path, codec)) == reason


@pytest.mark.parametrize(
    ("pix_fmt", "options", "profile", "reason"),
    [
        ("yuv420p", {}, "High", None),
        ("yuvj420p", {}, "High", None),  # full-range 8-bit 4:2:0 (cameras): browsers play it
        ("yuv444p", {}, "High 4:4:4 Predictive", "H.264 yuv444p" + NOT_420_8BIT),
        ("yuv422p", {}, "High 4:2:2", "H.264 yuv422p" + NOT_420_8BIT),
        pytest.param(
            "yuv420p10le",
            {},
            "High 10",
            "H.264 yuv420p10le" + NOT_420_8BIT,
            marks=needs_10bit_x264,
        ),
        (  # x264's lossless mode: 8-bit 4:2:0 pixels, but a profile above High
            "yuv420p",
            {"qp": "0"},
            "High 4:4:4 Predictive",
            "H.264 High 4:4:4 Predictive profile: browsers play only Baseline, Main and High",
        ),
    ],
)
def test_h264_mp4_needs_a_proxy_unless_8bit_420_and_at_most_high_profile(
    tmp_path: Path, pix_fmt: str, options: dict[str, str], profile: str, reason: str | None
) -> None:
    write_clip(tmp_path / "clip.mp4", pix_fmt, options=options)
    # the file is what the case says it is
    assert stream_format(tmp_path / "clip.mp4") == ("h264", pix_fmt, profile)
    video = info("clip.mp4", "h264")

    assert unplayable_reason(video, tmp_path) == reason
    assert needs_proxy(video, tmp_path) is (reason is not None)
    assert not needs_proxy(video)  # without the folder only the (.mp4, h264) pair is judged


def test_vp9_webm_needs_a_proxy_unless_8bit_420(tmp_path: Path) -> None:
    write_clip(tmp_path / "profile0.webm", "yuv420p", codec="libvpx-vp9")
    write_clip(tmp_path / "profile1.webm", "yuv444p", codec="libvpx-vp9")
    assert stream_format(tmp_path / "profile0.webm") == ("vp9", "yuv420p", "Profile 0")
    assert stream_format(tmp_path / "profile1.webm") == ("vp9", "yuv444p", "Profile 1")

    assert unplayable_reason(info("profile0.webm", "vp9"), tmp_path) is None
    assert unplayable_reason(info("profile1.webm", "vp9"), tmp_path) == "VP9 yuv444p" + NOT_420_8BIT


def test_unreadable_file_is_judged_by_container_and_codec(tmp_path: Path) -> None:
    (tmp_path / "notes.mp4").write_text("not a video")
    # nothing to look at: the pair decides (a missing file has nothing to serve anyway)
    assert unplayable_reason(info("absent.mp4", "h264"), tmp_path) is None
    assert unplayable_reason(info("notes.mp4", "h264"), tmp_path) is None
    assert unplayable_reason(info("absent.avi", "mpeg4"), tmp_path) == (
        "mpeg4 in .avi: browsers play only H.264 in .mp4, VP8 or VP9 in .webm"
    )


def test_a_file_replaced_in_place_is_judged_again(tmp_path: Path) -> None:
    video = info("clip.mp4", "h264")
    write_clip(tmp_path / "clip.mp4", "yuv420p")
    assert unplayable_reason(video, tmp_path) is None
    write_clip(tmp_path / "clip.mp4", "yuv444p", frames=13)

    assert unplayable_reason(video, tmp_path) == "H.264 yuv444p" + NOT_420_8BIT


def test_proxy_path_is_keyed_by_fingerprint(workspace: Workspace) -> None:
    video = registered(workspace, "Abuse001_x264")
    path = proxy_path(workspace, video)
    assert path.parent == workspace.cache_dir / "proxies"
    assert path.name == f"Abuse001_x264-{video.fingerprint.removeprefix('b2s:')}.mp4"


# --- building proxies for a workspace -------------------------------------------------------


def test_build_makes_one_matching_proxy(workspace: Workspace, videos: Path) -> None:
    avi, mp4 = registered(workspace, "Abuse001_x264"), registered(workspace, "Arson002_x264")
    assert playable_path(workspace, avi) is None  # not built yet
    assert playable_path(workspace, mp4) == videos / MP4

    seen: list[tuple[int, int, str]] = []
    report = build_proxies(workspace, progress=lambda *args: seen.append(args))

    assert report.made == ["Abuse001_x264"]
    assert (report.reused, report.failed, report.not_needed, report.removed) == ([], [], 1, 0)
    assert report.unplayable == {"Abuse001_x264": AVI_REASON}
    assert report.removed_temporaries == []
    assert seen == [(0, 1, "Abuse001_x264"), (1, 1, "")]
    proxy = proxy_path(workspace, avi)
    assert sorted(proxy.parent.iterdir()) == [proxy]
    assert playable_path(workspace, avi) == proxy
    assert playable_path(workspace, mp4) == videos / MP4

    probe = probe_video(proxy)
    assert probe.codec == "h264"
    assert (probe.num_frames, probe.fps) == (avi.num_frames, avi.fps) == (30, 25.0)
    assert (probe.width, probe.height) == (66, 50)
    # one proxy frame per source frame, in order: frame N shows what frame N of the source shows
    source_means, proxy_means = frame_means(videos / AVI), frame_means(proxy)
    assert len(proxy_means) == len(source_means) == 30
    np.testing.assert_allclose(proxy_means, source_means, atol=4)


def test_second_build_reuses_the_proxy(workspace: Workspace) -> None:
    build_proxies(workspace)
    proxy = proxy_path(workspace, registered(workspace, "Abuse001_x264"))
    mtime = proxy.stat().st_mtime_ns

    report = build_proxies(workspace)

    assert (report.made, report.reused, report.failed) == ([], ["Abuse001_x264"], [])
    assert proxy.stat().st_mtime_ns == mtime


def test_changed_source_gets_a_new_proxy_and_the_stale_one_goes(
    workspace: Workspace, videos: Path
) -> None:
    build_proxies(workspace)
    old = proxy_path(workspace, registered(workspace, "Abuse001_x264"))
    proxy_dir = old.parent
    unrelated = proxy_dir / f"Unregistered001-{'a' * 32}.mp4"  # not ours to judge: kept
    unrelated.write_bytes(b"")
    not_ours = proxy_dir / f".{old.name}.x1y2.tmp"  # not named as our temporaries: kept
    not_ours.write_bytes(b"")

    write_video(videos / AVI, "mpeg4", frames=40, width=66, height=50)
    assert workspace.scan().updated == ["Abuse001_x264"]
    report = build_proxies(workspace)

    new = proxy_path(workspace, registered(workspace, "Abuse001_x264"))
    assert new != old
    assert (report.made, report.removed) == (["Abuse001_x264"], 1)
    assert not old.exists()
    assert sorted(proxy_dir.iterdir()) == sorted([new, unrelated, not_ours])
    assert probe_video(new).num_frames == 40


def test_proxy_of_a_video_replaced_by_a_playable_file_goes(
    workspace: Workspace, videos: Path
) -> None:
    build_proxies(workspace)
    old = proxy_path(workspace, registered(workspace, "Abuse001_x264"))
    (videos / AVI).unlink()
    write_video(videos / "Abuse001_x264.mp4", "libx264", frames=30)
    assert workspace.scan().updated == ["Abuse001_x264"]

    report = build_proxies(workspace)

    assert (report.made, report.not_needed, report.removed) == ([], 2, 1)
    assert not old.exists()
    video = registered(workspace, "Abuse001_x264")
    assert playable_path(workspace, video) == videos / "Abuse001_x264.mp4"


def test_h264_mp4s_browsers_cannot_decode_get_a_yuv420p_proxy(
    workspace: Workspace, videos: Path
) -> None:
    sources = {
        "Explosion008_x264": write_clip(videos / "Explosion008_x264.mp4", "yuv444p"),
        "Stealing010_x264": write_clip(
            videos / "Stealing010_x264.mp4", "yuv420p", options={"qp": "0"}
        ),
    }
    reasons = {
        "Abuse001_x264": AVI_REASON,
        "Explosion008_x264": "H.264 yuv444p" + NOT_420_8BIT,
        "Stealing010_x264": (
            "H.264 High 4:4:4 Predictive profile: browsers play only Baseline, Main and High"
        ),
    }
    if "yuv420p10le" in X264_FORMATS:  # else only the 10-bit case is left out
        sources["Shooting009_x264"] = write_clip(videos / "Shooting009_x264.mp4", "yuv420p10le")
        reasons["Shooting009_x264"] = "H.264 yuv420p10le" + NOT_420_8BIT
    write_clip(videos / "Vandalism011_x264.mp4", "yuvj420p")  # full range 8-bit 4:2:0: fine
    assert sorted(workspace.scan().added) == sorted([*sources, "Vandalism011_x264"])
    for video_id in sources:  # the unplayable original is never served
        assert playable_path(workspace, registered(workspace, video_id)) is None
    vandalism = registered(workspace, "Vandalism011_x264")
    assert playable_path(workspace, vandalism) == videos / "Vandalism011_x264.mp4"

    report = build_proxies(workspace)

    assert report.made == sorted(reasons)
    assert report.unplayable == reasons
    assert (report.failed, report.not_needed) == ([], 2)  # Arson002 and Vandalism011
    for video_id, source in sources.items():
        proxy = proxy_path(workspace, registered(workspace, video_id))
        assert playable_path(workspace, registered(workspace, video_id)) == proxy
        codec, pix_fmt, profile = stream_format(proxy)
        assert (codec, pix_fmt) == ("h264", "yuv420p")
        assert profile in BROWSER_SAFE_PROFILES
        source_means, proxy_means = frame_means(source), frame_means(proxy)
        assert len(proxy_means) == len(source_means) == 12
        np.testing.assert_allclose(proxy_means, source_means, atol=4)
    assert playable_path(workspace, vandalism) == videos / "Vandalism011_x264.mp4"


def test_proxy_of_a_file_that_cannot_be_read_now_is_kept(
    tmp_path: Path, workspace: Workspace, videos: Path
) -> None:
    write_clip(videos / "Explosion008_x264.mp4", "yuv444p")
    workspace.scan()
    assert build_proxies(workspace).made == ["Abuse001_x264", "Explosion008_x264"]
    proxy = proxy_path(workspace, registered(workspace, "Explosion008_x264"))
    (videos / "Explosion008_x264.mp4").rename(tmp_path / "away.mp4")  # a folder not mounted

    report = build_proxies(workspace)

    # whether it needs a proxy cannot be told now, so its proxy is not judged stale
    assert (report.removed, report.made, report.failed) == (0, [], [])
    assert proxy.is_file()
    (tmp_path / "away.mp4").rename(videos / "Explosion008_x264.mp4")
    assert build_proxies(workspace).reused == ["Abuse001_x264", "Explosion008_x264"]


def test_corrupt_source_is_reported_and_the_run_goes_on(
    tmp_path: Path, workspace: Workspace, videos: Path
) -> None:
    corrupt_after(write_video(videos / "Burglary003_x264.avi", "mpeg4", frames=30), 10)
    write_video(videos / "Fighting004_x264.avi", "mpeg4", frames=10)
    assert sorted(workspace.scan().added) == ["Burglary003_x264", "Fighting004_x264"]

    report = build_proxies(workspace)

    assert report.made == ["Abuse001_x264", "Fighting004_x264"]
    [(video_id, reason)] = report.failed
    assert video_id == "Burglary003_x264"
    assert reason.startswith("cannot decode frame 11: ")
    bad = registered(workspace, "Burglary003_x264")
    assert not proxy_path(workspace, bad).exists()
    assert playable_path(workspace, bad) is None
    assert leftovers(workspace.cache_dir / "proxies") == []


def test_changed_or_missing_file_since_scan_is_reported(workspace: Workspace, videos: Path) -> None:
    write_video(videos / "Fighting004_x264.avi", "mpeg4", frames=10)
    workspace.scan()
    (videos / AVI).write_bytes(b"not a video any more")
    (videos / "Fighting004_x264.avi").unlink()

    report = build_proxies(workspace)

    assert report.made == []
    assert report.failed == [
        ("Abuse001_x264", "file changed since the last scan; re-scan first"),
        ("Fighting004_x264", "file not found"),
    ]
    assert list((workspace.cache_dir / "proxies").glob("*")) == []


def test_build_needs_video_files(tmp_path: Path) -> None:
    with Workspace.create(tmp_path / "ws", video_root=None, dataset="bare") as ws:
        with pytest.raises(WorkspaceError, match="no video files"):
            build_proxies(ws)
        assert playable_path(ws, info("a.mp4", "h264")) is None


# --- leftovers of killed runs ---------------------------------------------------------------

TEMPORARY = re.compile(r"^\.(?P<proxy>.+\.mp4)\.(?P<pid>[0-9]+)-[0-9a-f]{8}\.tmp$")
"""How make_proxy names its temporary file (see its docstring): hidden, the proxy's name, the
writing process's id and 8 random hex digits."""

PAUSED_CHILD = """
import sys, time
from pathlib import Path
from vadscene.video.proxies import make_proxy

source, target, paused = map(Path, sys.argv[1:])

def pause(done, total):
    # Mid-encode: the output file is created with the first packet, which x264's lookahead
    # delays by some frames; the last frame is still before the flush and the index.
    if done == total or any(target.parent.glob(f".{target.name}.*.tmp")):
        paused.touch()
        time.sleep(600)

make_proxy(source, target, progress=pause)
"""


def ended_process_id() -> int:
    """The id of a process that has run and been reaped: nothing has that id now."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


@pytest.mark.skipif(sys.platform == "win32", reason="needs SIGKILL")
def test_temporary_file_of_a_killed_run_is_removed_by_the_next(
    tmp_path: Path, workspace: Workspace, videos: Path
) -> None:
    avi = registered(workspace, "Abuse001_x264")
    target = proxy_path(workspace, avi)
    paused = tmp_path / "paused"
    with (tmp_path / "child.err").open("w") as stderr:
        child = subprocess.Popen(
            [sys.executable, "-c", PAUSED_CHILD, str(videos / AVI), str(target), str(paused)],
            stderr=stderr,
        )
    try:
        deadline = time.monotonic() + 60
        while not paused.exists():
            assert child.poll() is None, (tmp_path / "child.err").read_text()
            assert time.monotonic() < deadline, "the proxy subprocess never paused"
            time.sleep(0.05)
    finally:
        child.send_signal(signal.SIGKILL)  # the way an OOM kill or a power cut ends a run
        child.wait()
    assert child.returncode == -signal.SIGKILL
    [left] = leftovers(target.parent)
    match = TEMPORARY.match(left)
    assert match is not None, left
    assert (match["proxy"], int(match["pid"])) == (target.name, child.pid)
    assert not target.exists()

    report = build_proxies(workspace)

    assert report.removed_temporaries == [left]
    assert report.made == ["Abuse001_x264"]
    assert sorted(target.parent.iterdir()) == [target]
    probe = probe_video(target)
    assert (probe.codec, probe.num_frames) == ("h264", 30)
    assert stream_format(target)[1] == "yuv420p"


def test_only_temporaries_of_ended_processes_named_as_ours_are_removed(
    tmp_path: Path, workspace: Workspace
) -> None:
    build_proxies(workspace)
    proxy = proxy_path(workspace, registered(workspace, "Abuse001_x264"))
    mtime = proxy.stat().st_mtime_ns
    folder = proxy.parent
    ended = ended_process_id()
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        stale = [  # as killed runs leave them: the writing process is gone
            f".{proxy.name}.{ended}-0123abcd.tmp",
            f".Fighting004_x264-{'c' * 32}.mp4.{ended}-89abcdef.tmp",  # an unregistered video's
        ]
        kept = [
            f".{proxy.name}.{running.pid}-0123abcd.tmp",  # a run writing it right now
            f".{proxy.name}.x1y2.tmp",  # not named as ours
            f".notes.mp4.{ended}-0123abcd.tmp",  # not a proxy's name inside
            f"{proxy.name}.{ended}-0123abcd.tmp",  # not hidden
            f".{proxy.name}.{ended}-0123abcd.tmp.mp4",
            # a finished proxy (of an unregistered id) whose name holds a temporary's
            f".{proxy.name}.{ended}-0123abcd-{'d' * 32}.mp4",
        ]
        for name in stale + kept:
            (folder / name).write_bytes(b"partial")

        report = build_proxies(workspace)

        assert report.removed_temporaries == sorted(stale)
        assert (report.reused, report.removed) == (["Abuse001_x264"], 0)
        assert sorted(p.name for p in folder.iterdir()) == sorted([proxy.name, *kept])
        assert proxy.stat().st_mtime_ns == mtime  # the finished proxy is untouched
    finally:
        running.kill()
        running.wait()


# --- make_proxy -----------------------------------------------------------------------------


def test_make_proxy_scales_to_even_size_and_keeps_an_ntsc_rate(tmp_path: Path) -> None:
    source = tmp_path / "ntsc.avi"
    with av.open(str(source), "w") as container:
        stream = container.add_stream("mpeg4", rate=Fraction(30000, 1001))
        stream.width, stream.height, stream.pix_fmt = 99, 75, "yuv420p"
        for i in range(12):
            image = np.full((75, 99, 3), i * 20, dtype=np.uint8)
            container.mux(stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")))
        container.mux(stream.encode())

    full = probe_video(make_proxy(source, tmp_path / "full.mp4"))
    small = probe_video(make_proxy(source, tmp_path / "small.mp4", max_height=31))

    assert (full.width, full.height) == (98, 74)  # rounded down to even
    assert (small.width, small.height) == (40, 30)  # 99 * 31 / 75 = 40.9 → 40; 31 → 30
    for probe in (full, small):
        assert probe.num_frames == 12
        assert probe.fps == pytest.approx(30000 / 1001, rel=1e-9)
    with av.open(str(tmp_path / "full.mp4")) as container:
        assert container.streams.video[0].guessed_rate == Fraction(30000, 1001)


def test_make_proxy_writes_faststart_and_drops_audio(tmp_path: Path) -> None:
    source = tmp_path / "with_audio.avi"
    with av.open(str(source), "w") as container:
        video = container.add_stream("mpeg4", rate=25)
        video.width, video.height, video.pix_fmt = 32, 32, "yuv420p"
        audio = container.add_stream("mp2", rate=44100)
        for _ in range(10):
            frame = av.VideoFrame.from_ndarray(np.zeros((32, 32, 3), np.uint8), format="rgb24")
            container.mux(video.encode(frame))
        silence = av.AudioFrame.from_ndarray(
            np.zeros((1, 1152 * 2), np.int16), format="s16", layout="stereo"
        )
        silence.sample_rate = 44100
        container.mux(audio.encode(silence))
        container.mux(video.encode())
        container.mux(audio.encode())

    with av.open(str(source)) as container:
        assert len(container.streams.audio) == 1

    proxy = make_proxy(source, tmp_path / "proxy.mp4")

    data = proxy.read_bytes()
    assert data.index(b"moov") < data.index(b"mdat")  # index first: playback starts at once
    with av.open(str(proxy)) as container:
        assert len(container.streams.audio) == 0
        assert len(container.streams.video) == 1


def test_make_proxy_reports_progress_per_frame(tmp_path: Path) -> None:
    source = write_video(tmp_path / "clip.avi", "mpeg4", frames=7)
    seen: list[tuple[int, int]] = []

    make_proxy(source, tmp_path / "out" / "clip.mp4", progress=lambda *args: seen.append(args))

    assert seen == [(i, 7) for i in range(8)]


def test_failed_make_proxy_leaves_the_target_and_no_temporary_file(tmp_path: Path) -> None:
    source = corrupt_after(write_video(tmp_path / "clip.avi", "mpeg4", frames=30), 5)
    target = tmp_path / "out" / "clip.mp4"
    target.parent.mkdir()
    target.write_bytes(b"previous proxy")

    with pytest.raises(ProxyError, match="cannot decode frame 6") as caught:
        make_proxy(source, target)

    assert isinstance(caught.value, VadsceneError)
    assert caught.value.source == source
    assert str(caught.value).startswith(f"{source}: ")
    assert target.read_bytes() == b"previous proxy"  # replaced only by a complete proxy
    assert leftovers(target.parent) == []


def test_make_proxy_of_a_non_video_names_the_probe_reason(tmp_path: Path) -> None:
    source = tmp_path / "notes.avi"
    source.write_text("not a video")
    target = tmp_path / "notes.mp4"

    with pytest.raises(ProxyError, match=r"notes\.avi: cannot open: "):
        make_proxy(source, target)
    with pytest.raises(ProxyError, match="file not found"):
        make_proxy(tmp_path / "absent.avi", target)
    with pytest.raises(ValueError, match="max_height"):
        make_proxy(source, target, max_height=1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.avi"]


# --- real data ------------------------------------------------------------------------------


@pytest.mark.realdata
def test_real_videos_need_a_proxy_only_for_the_avi() -> None:
    folder = realdata_dir() / "videos"
    needs = {}
    for path in sorted(folder.iterdir()):
        probe = probe_video(path)
        video = info(path.name, probe.codec)
        needs[path.name] = (probe.codec, needs_proxy(video))
    assert needs == {
        "holmesvad_Fighting033_x264_570_841.mp4": ("h264", False),
        "holmesvad_RoadAccidents133_x264_270_451.mp4": ("h264", False),
        "lavad_Robbery102_x264.mp4": ("h264", False),
        "vtest_lamminhthien.avi": ("h264", True),  # H.264, but browsers do not read AVI
    }


@pytest.mark.realdata
def test_real_avi_proxy_keeps_its_341_frames(tmp_path: Path) -> None:
    source = realdata_dir() / "videos" / "vtest_lamminhthien.avi"
    # read in place; only the proxy is written, into tmp_path; 240 lines keep the encode quick
    probe = probe_video(make_proxy(source, tmp_path / "vtest.mp4", max_height=240))

    assert probe.codec == "h264"
    assert (probe.num_frames, probe.fps) == (341, 25.0)  # the AVI's "drop" chunks are not frames
    assert (probe.width, probe.height) == (426, 240)


def test_the_command_says_why_each_proxy_was_made_and_what_it_cleaned_up(
    workspace: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = workspace.cache_dir / "proxies"
    folder.mkdir(parents=True, exist_ok=True)
    proxy = proxy_path(workspace, registered(workspace, "Abuse001_x264"))
    stale = f".{proxy.name}.{ended_process_id()}-0123abcd.tmp"
    (folder / stale).write_bytes(b"partial")

    assert run(["proxies", str(workspace.root)]) == 0

    printed = capsys.readouterr().out
    assert "made Abuse001_x264: mpeg4 in .avi: browsers play only H.264 in .mp4" in printed
    assert f"removed {stale}, left by an interrupted run" in printed
    assert "proxies: 1 made, 0 reused, 1 videos play as they are, 0 failed" in printed
