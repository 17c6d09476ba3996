"""Tests for vadscene.video.probe: probing real and generated videos, errors, fingerprints,
listing."""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path
from typing import Any, BinaryIO

import av
import helpers
import numpy as np
import pytest
from helpers import (
    assert_file_error,
    damage,
    realdata_dir,
    result_or_clean_error,
    write_video,
)
from support.clips import (
    audio_only_file,
    corrupt_video,
    cut_short,
    empty_file,
    non_video_file,
    truncated_video,
    unknown_codec_video,
    write_clip,
    zero_frame_video,
)

from vadscene.video.probe import (
    VIDEO_EXTENSIONS,
    VideoProbe,
    VideoProbeError,
    content_fingerprint,
    iter_video_files,
    probe_video,
)

# file name -> (frames, width, height), from realdata/PROVENANCE.md
REAL_CLIPS = {
    "holmesvad_Fighting033_x264_570_841.mp4": (271, 320, 240),
    "holmesvad_RoadAccidents133_x264_270_451.mp4": (181, 320, 240),
    "lavad_Robbery102_x264.mp4": (1827, 1200, 800),
    "vtest_lamminhthien.avi": (341, 1280, 720),
}


def assert_probe_error(path: Path, *fragments: str) -> VideoProbeError:
    return assert_file_error(VideoProbeError, probe_video, path, *fragments)


# --- generated videos -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "codec", "expected_codec"),
    [("clip.mp4", "libx264", "h264"), ("clip.avi", "mpeg4", "mpeg4")],
)
def test_probe_generated_video(tmp_path: Path, name: str, codec: str, expected_codec: str) -> None:
    path = write_video(tmp_path / name, codec)
    probe = probe_video(path)
    assert probe == VideoProbe(
        num_frames=25,
        fps=25.0,
        duration_s=1.0,
        width=64,
        height=48,
        codec=expected_codec,
        size_bytes=path.stat().st_size,
        fingerprint=content_fingerprint(path),
    )


def test_probe_vp9_webm(tmp_path: Path) -> None:
    if "libvpx-vp9" not in av.codecs_available:
        pytest.skip("PyAV build has no libvpx-vp9 encoder")
    probe = probe_video(write_video(tmp_path / "clip.webm", "libvpx-vp9", frames=30))
    assert (probe.num_frames, probe.fps, probe.codec) == (30, 25.0, "vp9")
    assert (probe.width, probe.height) == (64, 48)


def test_probe_counts_frames_not_header_for_other_rates(tmp_path: Path) -> None:
    probe = probe_video(write_video(tmp_path / "clip.mp4", "libx264", frames=45, fps=15))
    assert (probe.num_frames, probe.fps, probe.duration_s) == (45, 15.0, 3.0)


def test_probe_single_frame_video(tmp_path: Path) -> None:
    assert probe_video(write_video(tmp_path / "one.mp4", "libx264", frames=1)).num_frames == 1


def test_probe_accepts_str_path_and_as_dict(tmp_path: Path) -> None:
    path = write_video(tmp_path / "clip.mp4", "libx264")
    as_dict = probe_video(str(path)).as_dict()
    assert as_dict["num_frames"] == 25
    assert as_dict["codec"] == "h264"
    assert set(as_dict) == {
        "num_frames",
        "fps",
        "duration_s",
        "width",
        "height",
        "codec",
        "size_bytes",
        "fingerprint",
    }


def test_faststart_mp4_probes_like_normal_mp4(tmp_path: Path) -> None:
    path = write_video(tmp_path / "fast.mp4", "libx264", frames=40, faststart=True)
    assert probe_video(path).num_frames == 40


# --- error cases ------------------------------------------------------------------------


def test_missing_file(tmp_path: Path) -> None:
    assert_probe_error(tmp_path / "nope.mp4", "file not found")


def test_probe_error_survives_pickling(tmp_path: Path) -> None:
    """Errors raised in worker processes (multiprocessing) must arrive intact."""
    error = assert_probe_error(tmp_path / "nope.mp4", "file not found")
    clone = pickle.loads(pickle.dumps(error))
    assert (type(clone), clone.path, clone.reason, str(clone)) == (
        VideoProbeError,
        error.path,
        error.reason,
        str(error),
    )


def test_directory_is_not_a_video(tmp_path: Path) -> None:
    directory = tmp_path / "dir.mp4"
    directory.mkdir()
    assert_probe_error(directory, "not a regular file")


def test_empty_file(tmp_path: Path) -> None:
    assert_probe_error(empty_file(tmp_path / "empty.mp4"), "empty file")


def test_text_file_renamed_mp4(tmp_path: Path) -> None:
    assert_probe_error(non_video_file(tmp_path / "notes.mp4"), "cannot open", "Invalid data")


def test_truncated_mp4_without_faststart_cannot_open(tmp_path: Path) -> None:
    path = truncated_video(
        tmp_path / "cut.mp4", frames=100, width=160, height=120, faststart=False, fraction=0.3
    )
    assert_probe_error(path, "cannot open")


def test_truncated_faststart_mp4_is_reported_truncated(tmp_path: Path) -> None:
    path = truncated_video(
        tmp_path / "cut.mp4", frames=100, width=160, height=120, faststart=True, fraction=0.3
    )
    assert_probe_error(path, "truncated", "last packet incomplete")


def cut_after_packet(path: Path, packets: int) -> Path:
    """Cut ``path`` right after the bytes of its ``packets``-th video packet: no packet is
    left half-written, so only a declared frame count can tell the file is short."""
    with av.open(str(path)) as container:
        ends = [p.pos + p.size for p in container.demux(video=0) if p.size]
    return cut_short(path, ends[packets - 1] / path.stat().st_size)


@pytest.mark.parametrize("fraction", [0.35, 0.5, 0.8])
def test_truncated_avi_is_reported_truncated(tmp_path: Path, fraction: float) -> None:
    """Cut anywhere: inside a chunk (the last packet is flagged incomplete) or not."""
    path = truncated_video(
        tmp_path / "cut.avi", codec="mpeg4", frames=100, width=160, height=120, fraction=fraction
    )
    assert_probe_error(path, "truncated")


def test_avi_cut_on_a_chunk_boundary_is_reported_truncated(tmp_path: Path) -> None:
    """The AVI demuxer reads a file cut short without its index and flags nothing; the
    header's declared length gives it away."""
    path = write_clip(tmp_path / "cut.avi", codec="mpeg4", frames=100, width=160, height=120)
    assert_probe_error(cut_after_packet(path, 40), "truncated", "declares 100 frames")


def test_mp4_cut_on_a_packet_boundary_is_reported_truncated(tmp_path: Path) -> None:
    path = write_clip(tmp_path / "cut.mp4", frames=100, width=160, height=120, faststart=True)
    assert_probe_error(cut_after_packet(path, 40), "truncated", "declares 100 frames", "40")


@pytest.mark.parametrize(("name", "codec"), [("cut.mkv", "libx264"), ("cut.ts", "mpeg2video")])
def test_truncated_matroska_and_ts_probe_with_frames_that_exist(
    tmp_path: Path, name: str, codec: str
) -> None:
    """Documented limitation: these demuxers drop the partial packet without flagging it."""
    path = truncated_video(
        tmp_path / name, codec=codec, frames=100, width=160, faststart=False, fraction=0.6
    )
    assert 0 < probe_video(path).num_frames < 100


def test_unknown_codec(tmp_path: Path) -> None:
    assert_probe_error(unknown_codec_video(tmp_path / "clip.avi"), "unsupported codec")


def test_audio_only_mp4(tmp_path: Path) -> None:
    assert_probe_error(audio_only_file(tmp_path / "sound.mp4"), "no video stream")


def test_audio_with_cover_art_is_not_a_video(tmp_path: Path) -> None:
    path = audio_only_file(tmp_path / "song.mp4", cover_art=True)
    with av.open(str(path)) as container:  # the cover picture is a "video" stream...
        assert len(container.streams.video) == 1
    assert_probe_error(path, "no video stream")  # ...but not a video


def test_zero_frames(tmp_path: Path) -> None:
    assert_probe_error(zero_frame_video(tmp_path / "nothing.avi"), "zero frames")


def test_valid_header_with_garbage_payload(tmp_path: Path) -> None:
    path = corrupt_video(tmp_path / "garbage.mp4", frames=50)  # index intact, frames random
    with av.open(str(path)) as container:  # the header alone looks fine
        assert container.streams.video[0].frames == 50
    assert_probe_error(path, "no decodable frame")


@pytest.mark.parametrize(("name", "codec"), [("c.mp4", "libx264"), ("c.avi", "mpeg4")])
@pytest.mark.parametrize("seed", range(6))
def test_damaged_files_never_raise_raw_exceptions(
    tmp_path: Path, name: str, codec: str, seed: int
) -> None:
    """Random truncations and byte smashes either probe or raise VideoProbeError."""
    path = damage(write_video(tmp_path / name, codec, frames=30), seed)
    probe = result_or_clean_error(probe_video, VideoProbeError, path)
    assert probe is None or probe.num_frames > 0


# --- real clips (read in place) ---------------------------------------------------------


@pytest.mark.parametrize(
    ("required", "outcome"), [("0", pytest.skip.Exception), ("1", pytest.fail.Exception)]
)
def test_realdata_helper_skips_or_fails_when_absent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, required: str, outcome: type[BaseException]
) -> None:
    monkeypatch.setattr(helpers, "REALDATA", tmp_path / "absent")
    monkeypatch.setenv("VADSCENE_REQUIRE_REALDATA", required)
    with pytest.raises(outcome, match="absent"):
        realdata_dir()


@pytest.mark.realdata
@pytest.mark.parametrize("name", sorted(REAL_CLIPS))
def test_probe_real_clips(name: str) -> None:
    path = realdata_dir() / "videos" / name
    frames, width, height = REAL_CLIPS[name]
    probe = probe_video(path)
    assert (probe.num_frames, probe.width, probe.height, probe.codec) == (
        frames,
        width,
        height,
        "h264",
    )
    assert probe.size_bytes == path.stat().st_size
    assert probe.duration_s == pytest.approx(frames / probe.fps)


@pytest.mark.realdata
def test_real_avi_count_ignores_container_frame_count() -> None:
    path = realdata_dir() / "videos" / "vtest_lamminhthien.avi"
    with av.open(str(path)) as container:
        assert container.streams.video[0].frames == 682  # what the header claims
    probe = probe_video(path)
    assert probe.num_frames == 341
    # The header says 50 fps; timestamps step 2 ticks per frame: 25 fps, 13.6 s as the container.
    assert probe.fps == 25.0
    assert abs(probe.duration_s - 13.64) < 0.01


@pytest.mark.realdata
def test_truncated_real_mp4(tmp_path: Path) -> None:
    src = realdata_dir() / "videos" / "holmesvad_Fighting033_x264_570_841.mp4"
    assert_probe_error(cut_short(tmp_path / "cut.mp4", 0.3, source=src), "cannot open")


@pytest.mark.realdata
@pytest.mark.parametrize("fraction", [0.3, 0.45, 0.5, 0.9])
def test_truncated_real_avi(tmp_path: Path, fraction: float) -> None:
    """Its header declares 682 frame slots at 50 fps (every other one an empty "drop"
    chunk): the 341 real frames fill them all, a cut file does not."""
    src = realdata_dir() / "videos" / "vtest_lamminhthien.avi"
    assert_probe_error(cut_short(tmp_path / "cut.avi", fraction, source=src), "truncated")


@pytest.mark.realdata
def test_real_fingerprints_are_distinct_and_stable() -> None:
    paths = [realdata_dir() / "videos" / name for name in sorted(REAL_CLIPS)]
    fingerprints = [content_fingerprint(p) for p in paths]
    assert len(set(fingerprints)) == len(paths)
    assert fingerprints == [content_fingerprint(p) for p in paths]


# --- fingerprint ------------------------------------------------------------------------


def test_fingerprint_format_and_stability(tmp_path: Path) -> None:
    path = write_video(tmp_path / "clip.mp4", "libx264")
    fingerprint = content_fingerprint(path)
    assert fingerprint.startswith("b2s:")
    assert len(fingerprint) == len("b2s:") + 32
    int(fingerprint[4:], 16)
    assert content_fingerprint(str(path)) == fingerprint


def test_fingerprint_follows_content_not_name(tmp_path: Path) -> None:
    path = write_video(tmp_path / "clip.mp4", "libx264")
    copy = tmp_path / "other" / "renamed.mp4"
    copy.parent.mkdir()
    shutil.copyfile(path, copy)
    assert content_fingerprint(copy) == content_fingerprint(path)
    assert probe_video(copy).fingerprint == probe_video(path).fingerprint

    different = write_video(tmp_path / "longer.mp4", "libx264", frames=26)
    assert content_fingerprint(different) != content_fingerprint(path)


@pytest.mark.parametrize("size", [10, 64 * 1024, 150 * 1024, 5 * 1024 * 1024])
@pytest.mark.parametrize("where", ["start", "middle", "end"])
def test_fingerprint_sees_changes_in_each_sampled_window(
    tmp_path: Path, size: int, where: str
) -> None:
    path = tmp_path / "blob.bin"
    data = bytearray(np.random.default_rng(size).bytes(size))
    path.write_bytes(data)
    before = content_fingerprint(path)
    index = {"start": 0, "middle": size // 2, "end": size - 1}[where]
    data[index] ^= 0xFF
    path.write_bytes(data)
    assert content_fingerprint(path) != before


def test_fingerprint_sees_size_change(tmp_path: Path) -> None:
    path = tmp_path / "zeros.bin"
    path.write_bytes(bytes(1_000_000))
    before = content_fingerprint(path)
    path.write_bytes(bytes(1_000_001))
    assert content_fingerprint(path) != before


def test_fingerprint_does_not_read_whole_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only three 64 KiB windows are read, whatever the file size."""
    path = tmp_path / "big.bin"
    path.write_bytes(bytes(8 * 1024 * 1024))
    reads: list[int] = []
    real_open = Path.open

    class CountingReader:
        def __init__(self, handle: BinaryIO) -> None:
            self._handle = handle

        def __enter__(self) -> CountingReader:
            return self

        def __exit__(self, *exc_info: object) -> None:
            self._handle.close()

        def __getattr__(self, name: str) -> object:
            return getattr(self._handle, name)

        def read(self, size: int = -1) -> bytes:
            chunk = self._handle.read(size)
            reads.append(len(chunk))
            return chunk

    def counting_open(self: Path, *args: Any, **kwargs: Any) -> CountingReader:
        return CountingReader(real_open(self, *args, **kwargs))

    monkeypatch.setattr(Path, "open", counting_open)
    content_fingerprint(path)
    assert reads == [64 * 1024] * 3


def test_fingerprint_missing_file_raises_oserror(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        content_fingerprint(tmp_path / "missing.mp4")


# --- iter_video_files -------------------------------------------------------------------


def test_iter_video_files(tmp_path: Path) -> None:
    wanted = [
        "a.mp4",
        "b/Clip.AVI",
        "b/c/deep.MkV",
        "b/c/x.webm",
        "z-last.ts",
    ]
    ignored = [
        "notes.txt",
        "b/labels.csv",
        "b/mp4",  # no suffix
        ".hidden.mp4",
        "b/._Clip.AVI",  # macOS resource fork
        ".cache/cached.mp4",
        "b/.git/objects/x.mov",
    ]
    for name in wanted + ignored:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"x")
    (tmp_path / "dir.mp4").mkdir()  # a directory with a video suffix is not a file

    found = iter_video_files(tmp_path)
    assert found == sorted(tmp_path / name for name in wanted)
    assert iter_video_files(str(tmp_path)) == found


def test_iter_video_files_root_inside_hidden_dir(tmp_path: Path) -> None:
    root = tmp_path / ".datasets" / "ucf"
    root.mkdir(parents=True)
    (root / "v.mp4").write_bytes(b"x")
    assert iter_video_files(root) == [root / "v.mp4"]


def test_iter_video_files_covers_every_extension(tmp_path: Path) -> None:
    for suffix in VIDEO_EXTENSIONS:
        (tmp_path / f"v{suffix.upper()}").write_bytes(b"x")
    assert len(iter_video_files(tmp_path)) == len(VIDEO_EXTENSIONS) == 11
    assert all(s == s.lower() and s.startswith(".") for s in VIDEO_EXTENSIONS)


def test_iter_video_files_rejects_missing_root(tmp_path: Path) -> None:
    with pytest.raises(NotADirectoryError):
        iter_video_files(tmp_path / "missing")


@pytest.mark.realdata
def test_iter_video_files_on_real_clips() -> None:
    found = iter_video_files(realdata_dir() / "videos")
    assert [p.name for p in found] == sorted(REAL_CLIPS)
