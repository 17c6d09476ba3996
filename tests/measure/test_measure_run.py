"""Measuring a workspace: orders, threshold rules, overrides, faults, resuming, Dask."""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import av
import cv2
import numpy as np
import pytest
from helpers import copy_demo
from support.clips import cut_short, write_clip

from vadscene.cli import run
from vadscene.core.records import AUTO_ANNOTATOR
from vadscene.measure import run as measure_run
from vadscene.measure import statistics as measure
from vadscene.measure.run import measure_workspace
from vadscene.measure.statistics import measure_video
from vadscene.measure.thresholds import apply_rule, preview_rule
from vadscene.release.releases import build_release
from vadscene.store.workspace import GroundTruthRef, Workspace

BLUR = [0.0, 1.0, 2.0, 3.0, 4.5, 6.0]  # video i: sharpness strictly decreasing in i
SPEED = [3, 0, 5, 1, 4, 2]  # px per frame: motion order is a permutation of the blur order
NAMES = [
    f"{c}{i:03d}_x264"
    for i, c in enumerate(
        ["Abuse", "Arson", "Burglary", "Fighting", "Robbery", "Stealing"], start=1
    )
]


def write_scene_video(
    path: Path, *, blur: float, speed: int, frames: int = 40, segment: tuple[int, int] | None = None
) -> Path:
    """A textured background with a white square moving `speed` px/frame, all blurred:
    sharpness follows the blur; the mean frame difference follows the speed (a uniform square
    moved by d changes about 2·d columns' worth of intensity, however blurred).

    Inside `segment` the square moves 12 px/frame (a high-motion "event")."""
    rng = np.random.default_rng(7)
    background = cv2.resize(
        rng.integers(0, 255, (30, 40, 3), dtype=np.uint8),
        (160, 120),
        interpolation=cv2.INTER_NEAREST,
    )
    patch = np.full((24, 24, 3), 255, dtype=np.uint8)  # uniform: its diff grows with speed
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=25, options={"crf": "10"})
        stream.width, stream.height, stream.pix_fmt = 160, 120, "yuv420p"
        x = 10
        for t in range(frames):
            image = background.copy()
            image[40:64, x % 130 : x % 130 + 24] = patch
            if blur:  # the whole frame: a blurred edge moved by d still changes 2·d pixels' worth
                image = cv2.GaussianBlur(image, (0, 0), blur)
            container.mux(stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")))
            x += 12 if segment and segment[0] <= t < segment[1] else speed
        container.mux(stream.encode())
    return path


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "videos"
    root.mkdir()
    for name, blur, speed in zip(NAMES, BLUR, SPEED, strict=True):
        write_scene_video(root / f"{name}.mp4", blur=blur, speed=speed)
    return root


@pytest.fixture
def workspace(tmp_path: Path, corpus: Path) -> Workspace:
    ws = Workspace.create(tmp_path / "ws", video_root=corpus)
    ws.scan()
    yield ws
    ws.close()


def _values(ws: Workspace, statistic: str) -> list[float]:
    stored = ws.store.measurements()
    return [stored[name][statistic].value for name in NAMES]


def _auto_poles(ws: Workspace, factor: str) -> dict[str, str]:
    return {
        d.video_id: d.value
        for d in ws.store.current_decisions(annotator=AUTO_ANNOTATOR)
        if d.factor == factor
    }


def test_known_orders_and_default_rules(workspace: Workspace) -> None:
    report = measure_workspace(workspace, workers=2)
    assert sorted(report.measured) == sorted(NAMES) and not report.failed
    sharpness = _values(workspace, "sharpness")
    assert all(a > b for a, b in itertools.pairwise(sharpness))
    motion = _values(workspace, "motion")
    assert np.argsort(motion).tolist() == np.argsort(SPEED).tolist()
    # resolution: median split of 6 → the 3 sharpest are "high"; motion: terciles → 2/2/2.
    resolution = _auto_poles(workspace, "resolution")
    assert [resolution[n] for n in NAMES] == ["high"] * 3 + ["low"] * 3
    motion_poles = _auto_poles(workspace, "motion")
    expected = {0: "low", 1: "low", 2: "ambiguous", 3: "ambiguous", 4: "high", 5: "high"}
    assert [motion_poles[n] for n in NAMES] == [
        expected[rank] for rank in np.argsort(np.argsort(SPEED))
    ]
    stored = workspace.store.measurements()[NAMES[0]]["sharpness"]
    assert stored.params["fingerprint"] == workspace.store.video(NAMES[0]).fingerprint
    assert stored.frames_read == 40


def test_rerun_reuses_and_an_override_survives_rule_changes(workspace: Workspace) -> None:
    measure_workspace(workspace, workers=1)
    workspace.store.record_decision(NAMES[0], "resolution", "low", annotator="ana")
    again = measure_workspace(workspace, workers=1)
    assert again.measured == [] and sorted(again.reused) == sorted(NAMES)

    preview = preview_rule(workspace.store, "resolution", "terciles")
    expected_changes = 2  # the 3rd and 4th sharpest move from high/low to ambiguous
    assert len(preview.changed) == expected_changes
    assert _auto_poles(workspace, "resolution")[NAMES[2]] == "high"  # preview wrote nothing
    applied = apply_rule(workspace.store, "resolution", "terciles")
    assert len(applied.changed) == expected_changes
    assert applied.counts() == {"high": 2, "ambiguous": 2, "low": 2}

    record = {v.video_id: v for v in build_release(workspace).videos}[NAMES[0]]
    assert record.factors["resolution"].value == "low"  # ana's override, not the auto "high"
    assert record.factors["resolution"].resolution == "override"
    assert measure_workspace(workspace).rules[0].rule == "terciles"  # the rule in force stays


def test_faults_are_recorded_and_the_run_continues(
    workspace: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    root = workspace.video_root
    (root / f"{NAMES[1]}.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42" + b"garbage" * 500)
    (root / f"{NAMES[2]}.mp4").unlink()
    report = measure_workspace(workspace, workers=2)
    failed = dict(report.failed)
    assert set(failed) == {NAMES[1]}
    assert [video for video, _reason in report.missing] == [NAMES[2]]  # no file: not a failure
    assert len(report.measured) == len(NAMES) - 2
    assert dict(workspace.store.measurement_failures()) == failed
    code = run(["measure", str(workspace.root)])
    assert code == 1  # a failure outranks the partial exit code
    assert (
        f"missing {NAMES[2]}: registered, but its file {root / NAMES[2]}.mp4 is no longer in "
        "the video folder"
    ) in capsys.readouterr().err


def test_an_interrupted_run_resumes_without_remeasuring(workspace: Workspace) -> None:
    def interrupt_after_two(done: int, total: int, footage: float, current: str) -> None:
        if done == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        measure_workspace(workspace, workers=1, progress=interrupt_after_two)
    first = workspace.store.measurements()
    assert len(first) == 2
    resumed = measure_workspace(workspace, workers=1)
    assert sorted(resumed.reused) == sorted(first)
    assert len(resumed.measured) == len(NAMES) - 2
    after = workspace.store.measurements()
    for video, stats in first.items():
        assert after[video]["sharpness"].measured_at == stats["sharpness"].measured_at


def test_only_new_measures_just_the_added_video(workspace: Workspace) -> None:
    measure_workspace(workspace, workers=1)
    write_scene_video(workspace.video_root / "Vandalism009_x264.mp4", blur=0, speed=2)
    workspace.scan()
    report = measure_workspace(workspace, workers=1, only_new=True)
    assert report.measured == ["Vandalism009_x264"]


def test_ground_truth_excludes_anomalous_segments_from_motion(tmp_path: Path) -> None:
    videos = tmp_path / "videos"
    videos.mkdir()
    write_scene_video(videos / "Fighting001_x264.mp4", blur=0, speed=0, segment=(10, 30))
    gt = tmp_path / "gt.txt"
    gt.write_text("Fighting001_x264.mp4 Fighting 10 30 -1 -1\n")
    with_gt = Workspace.create(
        tmp_path / "with",
        video_root=videos,
        ground_truth=GroundTruthRef(path=str(gt), format="ucf-crime"),
    )
    without = Workspace.create(tmp_path / "without", video_root=videos)
    for ws in (with_gt, without):
        ws.scan()
        measure_workspace(ws, workers=1)
    excluded = with_gt.store.measurements()["Fighting001_x264"]["motion"]
    included = without.store.measurements()["Fighting001_x264"]["motion"]
    assert excluded.params["normal_segments"] == "ground truth"
    assert excluded.value < included.value / 3
    with_gt.close()
    without.close()


@pytest.mark.slow  # starts a local Dask cluster
def test_dask_cluster_gives_the_same_numbers_as_local_processes(
    workspace: Workspace, tmp_path: Path
) -> None:
    from distributed import LocalCluster
    from support.cluster import environment_kept

    copy = tmp_path / "copy"
    shutil.copytree(workspace.root, copy)
    measure_workspace(workspace, workers=2)
    with (
        environment_kept(),
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Workspace.open(copy) as remote,
    ):
        report = measure_workspace(remote, scheduler=cluster.scheduler_address)
        assert sorted(report.measured) == sorted(NAMES)
        for statistic in ("sharpness", "motion", "chroma"):
            assert _values(remote, statistic) == _values(workspace, statistic)


def test_demo_measured_poles_recover_the_planted_resolution(
    demo_template: Path, tmp_path: Path
) -> None:
    from vadscene.demo import load_demo_manifest

    with Workspace.open(copy_demo(demo_template, tmp_path / "demo")) as demo:
        planted = load_demo_manifest(demo.root / "benchmark").videos
        poles = _auto_poles(demo, "resolution")
        assert {v.video_id: v.planted["resolution"] for v in planted} == poles
        motion = _auto_poles(demo, "motion")
        for video in planted:  # terciles: a planted pole is never measured as the opposite one
            assert motion[video.video_id] in (video.planted["motion"], "ambiguous")


def _gt_workspace(tmp_path: Path, gt_lines: str) -> tuple[Workspace, Path]:
    """One 40-frame video with a fast event in frames 10-29, and a ucf-crime ground truth."""
    videos = tmp_path / "videos"
    videos.mkdir()
    write_scene_video(videos / "Fighting001_x264.mp4", blur=0, speed=0, segment=(10, 30))
    gt = tmp_path / "gt.txt"
    gt.write_text(gt_lines)
    ws = Workspace.create(
        tmp_path / "ws",
        video_root=videos,
        ground_truth=GroundTruthRef(path=str(gt), format="ucf-crime"),
    )
    ws.scan()
    return ws, gt


def test_editing_the_ground_truth_remeasures_motion(tmp_path: Path) -> None:
    ws, gt = _gt_workspace(tmp_path, "Fighting001_x264.mp4 Fighting 10 30 -1 -1\n")
    measure_workspace(ws, workers=1)
    still = ws.store.measurements()["Fighting001_x264"]["motion"].value
    gt.write_text("Fighting001_x264.mp4 Fighting 30 35 -1 -1\n")  # the event is now "normal"
    report = measure_workspace(ws, workers=1)
    assert report.measured == ["Fighting001_x264"] and report.reused == []
    motion = ws.store.measurements()["Fighting001_x264"]["motion"]
    # Independently: the whole clip with frames 30-34 (pairs 29-35) left out.
    normal = np.ones(40, bool)
    normal[30:35] = False
    expected = measure_video(ws.video_path("Fighting001_x264"), normal_mask=normal).motion
    assert motion.value == expected
    assert motion.value > 10 * still  # the fast event now counts
    assert measure_workspace(ws, workers=1).reused == ["Fighting001_x264"]
    ws.close()


def test_a_video_without_a_normal_pair_is_measured_once(tmp_path: Path) -> None:
    ws, _ = _gt_workspace(tmp_path, "Fighting001_x264.mp4 Fighting 0 40 -1 -1\n")
    measure_workspace(ws, workers=1)
    stored = ws.store.measurements()["Fighting001_x264"]
    assert "motion" not in stored and {"sharpness", "chroma"} <= set(stored)
    again = measure_workspace(ws, workers=1)
    assert again.measured == [] and again.reused == ["Fighting001_x264"]
    ws.close()


def test_motion_that_lost_its_normal_pairs_is_removed(tmp_path: Path) -> None:
    """A stale motion value must not outlive the ground truth that made it."""
    ws, gt = _gt_workspace(tmp_path, "Fighting001_x264.mp4 Fighting 10 30 -1 -1\n")
    measure_workspace(ws, workers=1)
    assert "motion" in ws.store.measurements()["Fighting001_x264"]
    gt.write_text("Fighting001_x264.mp4 Fighting 0 40 -1 -1\n")
    assert measure_workspace(ws, workers=1).measured == ["Fighting001_x264"]
    assert "motion" not in ws.store.measurements()["Fighting001_x264"]
    ws.close()


def test_another_decoder_version_remeasures(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    measure_workspace(workspace, workers=1)
    monkeypatch.setattr(measure, "DECODER_VERSIONS", "PyAV 0.0, libavcodec 0.0.0")
    report = measure_workspace(workspace, workers=1)
    assert sorted(report.measured) == sorted(NAMES) and report.reused == []
    stored = workspace.store.measurements()[NAMES[0]]["sharpness"]
    assert stored.params["decoder_versions"] == "PyAV 0.0, libavcodec 0.0.0"


def _children(pid: int) -> set[int]:
    """Live processes whose parent is ``pid`` (read from /proc)."""
    found = set()
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(
                line.split(":\t", 1) for line in status.read_text().splitlines() if ":\t" in line
            )
        except OSError:  # the process ended while we looked
            continue
        if int(fields.get("PPid", "0")) == pid and not fields.get("State", "").startswith("Z"):
            found.add(int(status.parent.name))
    return found


@pytest.mark.skipif(
    shutil.which("ffmpeg") is None or not Path("/proc/self/status").exists(),
    reason="needs the ffmpeg binary and Linux /proc",
)
@pytest.mark.durability  # SIGKILLs a running `vadscene measure` and waits for its workers
def test_killing_measure_leaves_no_worker_behind(tmp_path: Path) -> None:
    videos = tmp_path / "videos"
    videos.mkdir()
    for i in range(4):  # 20 s of 640x480 each: seconds of work per worker
        source = ["-f", "lavfi", "-i", "testsrc2=s=640x480:d=20:r=25", "-vf", f"hue=h={i * 40}"]
        output = ["-c:v", "libx264", "-preset", "ultrafast", videos / f"Fighting{i:03d}_x264.mp4"]
        subprocess.run(["ffmpeg", "-loglevel", "error", *source, *output], check=True)
    ws = Workspace.create(tmp_path / "ws", video_root=videos)
    ws.scan()
    ws.close()
    cli = Path(sys.executable).with_name("vadscene")
    command = [str(cli), "measure", str(tmp_path / "ws"), "--workers", "2"]
    parent = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    children: set[int] = set()  # the pool workers, and multiprocessing's resource tracker
    try:
        deadline = time.monotonic() + 60
        while len(_workers(children)) < 2 and parent.poll() is None:
            assert time.monotonic() < deadline, "the workers never started"
            children |= _children(parent.pid)
            time.sleep(0.01)
        assert len(_workers(children)) == 2, "the run ended before both workers were seen"
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
    deadline = time.monotonic() + 10
    while _alive(children) and time.monotonic() < deadline:
        time.sleep(0.05)
    survivors = _alive(children)
    for pid in survivors:  # leave nothing behind for the next test
        os.kill(pid, signal.SIGKILL)
    assert not survivors, f"processes {sorted(survivors)} outlived their parent"


def _workers(pids: set[int]) -> set[int]:
    """The pool workers among ``pids`` (spawned: their command line says so)."""
    workers = set()
    for pid in pids:
        try:
            if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes():
                workers.add(pid)
        except OSError:
            continue
    return workers


def _alive(pids: set[int]) -> set[int]:
    alive = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        if "State:\tZ" not in state:
            alive.add(pid)
    return alive


def test_pool_workers_use_one_opencv_thread() -> None:
    with measure_run._process_pool(1) as pool:
        assert pool.submit(cv2.getNumThreads).result() == 1


def test_fewer_frames_than_registered_fail_unless_partial_reads_are_allowed(
    workspace: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    video = NAMES[0]
    write_scene_video(workspace.video_path(video), blur=0, speed=2, frames=30)  # no re-scan
    report = measure_workspace(workspace, workers=1)
    reason = dict(report.failed)[video]
    assert "partial read: decoded 30 frames but the probe registered 40" in reason
    assert video not in workspace.store.measurements()
    workspace.close()
    assert run(["measure", str(workspace.root), "--allow-partial", "--workers", "1"]) == 0
    with Workspace.open(workspace.root) as ws:
        assert ws.store.measurements()[video]["sharpness"].frames_read == 30
        # A run that does not allow partial reads does not reuse the partial result.
        again = measure_workspace(ws, workers=1)
        assert again.failed == [(video, reason)] and video not in again.reused


def test_scan_flags_an_avi_cut_short(tmp_path: Path) -> None:
    """An AVI cut short opens and demuxes without an error: only its declared length tells."""
    videos = tmp_path / "videos"
    path = write_clip(videos / "Arson001_x264.avi", codec="mpeg4", frames=100, width=160)
    with av.open(str(path)) as container:
        ends = [p.pos + p.size for p in container.demux(video=0) if p.size]
    cut_short(path, ends[44] / path.stat().st_size)  # right after the 45th frame's chunk
    ws = Workspace.create(tmp_path / "ws", video_root=videos)
    report = ws.scan()
    assert report.registered == 0
    [(name, reason)] = report.unreadable
    assert name == "Arson001_x264.avi"
    assert "truncated: the AVI header declares 100 frames" in reason and "45 frames" in reason
    ws.close()
