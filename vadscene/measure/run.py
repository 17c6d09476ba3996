"""Measuring a whole workspace: cached, resumable, parallel (processes or Dask), fault-tolerant.

Each video is measured by :func:`vadscene.measure.statistics.measure_video` in a worker; the
main process is the only writer and commits every video's statistics as soon as they arrive,
so an interrupted run (Ctrl-C, kill) keeps everything finished and the next run resumes. A
result is reused when its parameters — statistic version, decoder versions, stride, content
fingerprint, a digest of the normal-frame mask — equal the current ones. Failures (corrupt,
truncated, zero-frame, non-video files) are recorded per video with their reason and never
stop the run. Videos without a file — named by the ground truth but not in the video folder, or
registered and gone from it since — are not measured and are listed in the report with the
reason: the run is then partial, and what is stored for them is kept.

Workers: a local process pool by default; with ``scheduler="tcp://host:8786"`` the same calls
go to a Dask distributed cluster (the video paths must be readable from the workers). Dask is
the optional extra ``pip install 'vadscene[dask]'``; a scheduler that does not answer within
``scheduler_timeout`` seconds is an error before anything is recorded.
"""

from __future__ import annotations

import ctypes
import hashlib
import multiprocessing
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import cv2
import numpy as np

from vadscene.core.cluster import DEFAULT_SCHEDULER_TIMEOUT, connect_scheduler
from vadscene.core.errors import VadsceneError
from vadscene.core.records import Measurement, VideoInfo
from vadscene.measure.statistics import (
    MeasurementError,
    MeasureParams,
    VideoMeasurement,
    measure_video,
)
from vadscene.measure.thresholds import PoleChanges, apply_rule
from vadscene.store.workspace import Workspace

STATISTICS = ("sharpness", "motion", "chroma")
STATISTIC_NAMES = {
    "sharpness": "Laplacian-variance sharpness",
    "motion": "mean frame-difference motion",
    "chroma": "mean chroma",
}
"""Each statistic as a person reads it: what is measured, not the factor it decides — the
"resolution" factor measures sharpness, so a sharp 320×240 clip is "high"."""

_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>

MeasureProgress = Callable[[int, int, float, str], None]
"""Called as ``progress(videos_done, videos_total, footage_seconds_done, current_video)``."""


@dataclass
class MeasureReport:
    """What a measurement run did."""

    measured: list[str] = field(default_factory=list)
    reused: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    missing: list[tuple[str, str]] = field(default_factory=list)
    """(video, reason) of the videos without a file: not measured, their stored data kept."""
    footage_seconds: float = 0.0
    wall_seconds: float = 0.0
    rules: list[PoleChanges] = field(default_factory=list)


def describe_measurement(
    statistic: str, value: float, rule: str, thresholds: Sequence[float]
) -> str:
    """A measured value with the rule that made its pole, e.g. ``Laplacian-variance sharpness
    123.4 (median split at 98.7)``; ``thresholds`` empty: the rule is not applied yet."""
    name = STATISTIC_NAMES.get(statistic, statistic)
    return f"{name} {_number(value)} ({_rule_phrase(rule, thresholds)})"


def _rule_phrase(rule: str, thresholds: Sequence[float]) -> str:
    if not thresholds:
        return f"{rule} rule, not applied yet"
    at = " and ".join(_number(t) for t in thresholds)
    if rule == "median":
        return f"median split at {at}"
    if rule == "terciles":
        return f"tercile splits at {at}"
    return f"threshold{'s' if len(thresholds) > 1 else ''} at {at}"


def _number(value: float) -> str:
    """Four significant digits, and whole numbers from 1,000 (no exponent)."""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"


@dataclass(frozen=True)
class _Job:
    video: VideoInfo
    path: Path
    normal_mask: np.ndarray | None
    params: dict[str, str | int | float | bool | None]


def measurement_params(
    params: MeasureParams, video: VideoInfo, normal_mask: np.ndarray | None
) -> dict[str, str | int | float | bool | None]:
    """The cache key stored with every statistic: everything the values depend on.

    The measurement parameters (statistic version, decoder and its library versions,
    stride), the content fingerprint, and which frames count as normal: ``"whole video"``
    without ground truth, else a digest of the mask itself, so editing an interval
    re-measures the video.
    """
    return {
        **params.as_dict(),
        "fingerprint": video.fingerprint,
        "normal_segments": "whole video" if normal_mask is None else "ground truth",
        "normal_mask": None if normal_mask is None else mask_digest(normal_mask),
    }


def mask_digest(normal_mask: np.ndarray) -> str:
    """``"b2:<32 hex>"``: BLAKE2b of the mask's length and its bits (True = normal frame)."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(len(normal_mask).to_bytes(8, "little"))
    digest.update(np.packbits(np.asarray(normal_mask, dtype=bool)).tobytes())
    return "b2:" + digest.hexdigest()


def _ground_truth(workspace: Workspace, report: MeasureReport) -> dict[str, np.ndarray]:
    """Per-video True-for-normal frame masks from the workspace's temporal ground truth; the
    videos it names that no registered video is go to ``report.missing``."""
    match = workspace.match_ground_truth()
    if match is None:
        return {}
    for video, meant in match.absent.items():
        report.missing.append(
            (
                video,
                f"in the ground truth ({match.path}) but not in the video folder "
                f"({workspace.video_root})" + (f"; did you mean {meant}?" if meant else ""),
            )
        )
    return {video: ~labels for video, labels in match.labels.items()}


def _jobs(
    workspace: Workspace,
    params: MeasureParams,
    only_new: bool,
    allow_partial: bool,
    report: MeasureReport,
) -> Iterator[_Job]:
    """Jobs for the videos to measure; those whose cached results still hold go to
    ``report.reused``, those without a file to ``report.missing``."""
    masks = _ground_truth(workspace, report)
    stored = workspace.store.measurements()
    for video in workspace.store.videos():
        mask = masks.get(video.video_id)
        key = measurement_params(params, video, mask)
        cached = stored.get(video.video_id, {})
        if (only_new and cached) or _still_current(cached, key, video, allow_partial):
            report.reused.append(video.video_id)
            continue
        path = workspace.video_path(video.video_id)
        if not path.is_file():
            report.missing.append(
                (
                    video.video_id,
                    f"registered, but its file {path} is no longer in the video folder (run "
                    f"`vadscene scan {workspace.root}` if it moved)",
                )
            )
            continue
        yield _Job(video, path, mask, key)


def _still_current(
    cached: dict[str, Measurement], key: dict, video: VideoInfo, allow_partial: bool
) -> bool:
    """Whether a video's stored statistics were measured under ``key``, on the whole video.

    Every statistic of a video is written in one transaction (a motion without a normal pair
    is recorded as withdrawn in it), so sharpness and chroma under the current key with no
    motion mean the measurement found no normal pair: that is a result, not a reason to decode
    again. A partial measurement (``--allow-partial``: fewer frames read than registered) is
    current only for runs that allow partial reads.
    """
    if not {"sharpness", "chroma"} <= set(cached):
        return False
    whole = cached["sharpness"].frames_read >= video.num_frames
    return (whole or allow_partial) and all(m.params == key for m in cached.values())


def _statistics(result: VideoMeasurement, params: dict) -> dict[str, Measurement]:
    at = datetime.now(UTC)
    values = {"sharpness": result.sharpness, "motion": result.motion, "chroma": result.chroma}
    return {
        name: Measurement(
            value=value,
            params=params,
            decoder=result.decoder,
            seconds=result.seconds,
            frames_read=result.motion_pairs if name == "motion" else result.frames_read,
            measured_at=at,
        )
        for name, value in values.items()
        if value is not None
    }


def measure_workspace(
    workspace: Workspace,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    scheduler_timeout: float = DEFAULT_SCHEDULER_TIMEOUT,
    only_new: bool = False,
    params: MeasureParams | None = None,
    progress: MeasureProgress | None = None,
    allow_partial: bool = False,
) -> MeasureReport:
    """Measure every registered video that lacks current results, then re-derive auto poles.

    A video that decodes fewer frames than it declares or than the scan registered fails
    with the reason; ``allow_partial`` measures the frames that decode instead, and the
    stored ``frames_read`` says how many (see :func:`vadscene.measure.statistics.measure_video`).

    Videos without a file are not measured: :attr:`MeasureReport.missing` names them with
    the reason, and what is stored for them is kept.

    Auto factors keep the threshold rule in force (last applied, else the catalogue's); the
    report lists how many videos changed pole.
    """
    if workspace.video_root is None:
        raise VadsceneError(
            f"{workspace.root}: this workspace has no video files to measure (one imported "
            f"from a release); point it at its videos with `vadscene scan {workspace.root} "
            "--videos VIDEO_FOLDER`"
        )
    params = params or MeasureParams()
    report = MeasureReport()
    jobs = list(_jobs(workspace, params, only_new, allow_partial, report))
    started = time.perf_counter()
    total = len(jobs)
    if progress is not None:
        progress(0, total, 0.0, "")
    store = workspace.store
    outcomes = _run(jobs, params, workers, scheduler, scheduler_timeout, allow_partial)
    for done, (job, outcome) in enumerate(outcomes, start=1):
        if isinstance(outcome, VideoMeasurement):
            statistics = _statistics(outcome, job.params)
            store.record_video_measurements(
                job.video.video_id, statistics, undefined=set(STATISTICS) - set(statistics)
            )
            report.measured.append(job.video.video_id)
        else:
            store.record_measurement_failure(job.video.video_id, outcome, job.params)
            report.failed.append((job.video.video_id, outcome))
        report.footage_seconds += job.video.duration_s
        if progress is not None:
            progress(done, total, report.footage_seconds, job.video.video_id)
    report.wall_seconds = time.perf_counter() - started
    measured = {statistic for stats in store.measurements().values() for statistic in stats}
    for factor in workspace.catalogue.factors:
        if factor.auto is not None and factor.auto.statistic in measured:
            report.rules.append(apply_rule(store, factor.key))
    return report


def _run(
    jobs: list[_Job],
    params: MeasureParams,
    workers: int | None,
    scheduler: str | None,
    scheduler_timeout: float,
    allow_partial: bool,
) -> Iterator[tuple[_Job, VideoMeasurement | str]]:
    """(job, measurement or failure reason) as each video finishes, in completion order."""
    if not jobs:
        return
    if scheduler is not None:
        yield from _run_dask(jobs, params, scheduler, scheduler_timeout, allow_partial)
        return
    workers = workers or os.cpu_count() or 1
    with _process_pool(min(workers, len(jobs))) as pool:
        futures = {pool.submit(_measure_one, j, params, allow_partial): j for j in jobs}
        try:
            for future in as_completed(futures):
                yield futures[future], future.result()
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def _process_pool(workers: int) -> ProcessPoolExecutor:
    """A local pool whose workers die with this process and run OpenCV single-threaded.

    Workers are spawned, not forked: a process that has already run OpenCV (the app, a test,
    a notebook) holds OpenCV's worker threads, a forked child inherits its thread pool's
    state without the threads, and its first parallel OpenCV call (or ``setNumThreads``)
    can hang for ever. Spawning is paid once per worker per run. The workers are started
    (lazily, by ``submit``) from the thread that uses the pool, which outlives it:
    ``PR_SET_PDEATHSIG`` fires when the *thread* that started a worker ends.
    """
    return ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_start_worker,
        initargs=(os.getpid(),),
    )


def _start_worker(parent_pid: int) -> None:
    """Pool initializer: die with the parent; one OpenCV thread per worker process.

    Without the first, a SIGKILLed ``vadscene measure`` leaves its workers orphaned (parent
    PID 1), blocked forever on the task queue. On Linux the kernel delivers SIGKILL to the
    worker when its parent dies (``prctl(PR_SET_PDEATHSIG)``); the parent PID is checked
    after the call, because a parent that died before it would never trigger the signal.
    Parallelism comes from processes, so OpenCV's own thread pool would only make the
    workers fight over the cores (see :mod:`vadscene.measure.statistics`).
    """
    cv2.setNumThreads(1)
    if sys.platform == "linux":
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
        if os.getppid() != parent_pid:
            os._exit(1)  # the parent is already gone


def _run_dask(
    jobs: list[_Job],
    params: MeasureParams,
    scheduler: str,
    timeout: float,
    allow_partial: bool,
) -> Iterator[tuple[_Job, VideoMeasurement | str]]:
    client = connect_scheduler(scheduler, timeout)
    from distributed import as_completed as dask_completed  # importable: the client connected

    with client:
        futures = {
            client.submit(_measure_one, j, params, allow_partial, pure=False): j for j in jobs
        }
        try:
            for future in dask_completed(futures):
                yield futures[future], future.result()
        except BaseException:
            client.cancel(list(futures))
            raise


def _measure_one(job: _Job, params: MeasureParams, allow_partial: bool) -> VideoMeasurement | str:
    """Worker entry point: a measurement, or the reason it failed (never raises for bad files)."""
    try:
        return measure_video(
            job.path,
            normal_mask=job.normal_mask,
            params=params,
            expected_frames=job.video.num_frames,
            allow_partial=allow_partial,
        )
    except MeasurementError as exc:
        return exc.reason
