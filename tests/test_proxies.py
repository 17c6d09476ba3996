"""Tests for vadscene.proxies: which videos need a proxy, making proxies, incremental builds."""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest
from helpers import realdata_dir, write_video

from vadscene.errors import VadsceneError, WorkspaceError
from vadscene.proxies import (
    BROWSER_PLAYABLE,
    ProxyError,
    build_proxies,
    make_proxy,
    needs_proxy,
    playable_path,
    proxy_path,
)
from vadscene.records import VideoInfo
from vadscene.video import probe_video
from vadscene.workspace import Workspace

AVI = "Abuse001_x264.avi"  # mpeg4 (MPEG-4 Part 2) in AVI: needs a proxy
MP4 = "Arson002_x264.mp4"  # H.264 in MP4: played as it is


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


def test_needs_proxy_on_scanned_videos(workspace: Workspace) -> None:
    assert registered(workspace, "Abuse001_x264").codec == "mpeg4"
    assert needs_proxy(registered(workspace, "Abuse001_x264"))
    assert not needs_proxy(registered(workspace, "Arson002_x264"))


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
    in_progress = proxy_dir / f".{old.name}.x1y2.tmp"  # another run's temporary file: kept
    in_progress.write_bytes(b"")

    write_video(videos / AVI, "mpeg4", frames=40, width=66, height=50)
    assert workspace.scan().updated == ["Abuse001_x264"]
    report = build_proxies(workspace)

    new = proxy_path(workspace, registered(workspace, "Abuse001_x264"))
    assert new != old
    assert (report.made, report.removed) == (["Abuse001_x264"], 1)
    assert not old.exists()
    assert sorted(proxy_dir.iterdir()) == sorted([new, unrelated, in_progress])
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
