"""The audit at scale (``bench/audit_bench.py --workload scale``, issue 25).

Synthetic benchmarks shaped like real ones grown large: about 3,500 frames a video (lengths
uniform in ±20 %), 3 % anomalous videos (one anomalous interval each, 2–95 % of the video,
13 anomaly categories), one model whose float32 snippet scores (a logit of the video's
anomaly, video noise, the snippet's anomalous share and snippet noise) are repeated ×16 like
real models'. Built memory-efficiently: float32 scores, one preallocated label array, no
per-video Python lists of arrays.

Each run is a fresh ``spawn`` child that builds its inputs, resets its peak resident memory
to the current one (Linux ``/proc/self/clear_refs``, so the input builder's temporaries do
not count), runs ``run_audit`` and reports the wall time and the peak (``ru_maxrss``): the
whole process's during the audit, the inputs it holds included — what a machine must hold:

- **10k videos** (35 M frames), B = 200: the engine's time ÷ one ``np.argsort`` of all the
  model's frame scores, timed in the same child after the audit (target ≤ 2×), and the peak
  (target ≤ 1 GB). The audit runs warm: before it, the child makes the plan
  ``vadscene audit --dry-run`` would print (whose first run loads the compiled kernels; that
  time is printed apart), and the plan's estimates are printed beside the measurements;
- **100k videos** (350 M frames), B = 200: runs, peak ≤ 8 GB, and the time growth exponent
  log(t₁₀₀ₖ / t₁₀ₖ) / log(10) (target ≤ 1.2);
- **10⁶ videos of 100 frames**, B = 100, on a ``distributed.LocalCluster`` of 2 worker
  processes limited to 6 GB each (``run_audit(..., client=client)``): runs; the tasks' costs
  from the cluster's task stream, and from them an estimate — stated as one — of 10⁶ videos of
  3,500 frames on N workers.

``--quick`` shrinks the three (1k and 3k videos of 3,500 frames, 20k videos of 100 frames,
B = 50) for CI smoke runs; the targets are then marked under a "not comparable" heading.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import math
import multiprocessing as mp
import os
import resource
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np

SNIPPET = 16
ANOMALOUS_SHARE = 0.03
CATEGORIES = tuple(f"Anomaly{i:02d}" for i in range(13))  # as many as UCF-Crime has

TARGET_ARGSORT_RATIO = 2.0
TARGET_10K_PEAK_MB = 1000.0
TARGET_100K_PEAK_MB = 8000.0
TARGET_GROWTH_EXPONENT = 1.2
WORKER_MEMORY = "6GB"
WORKERS = 2
EXTRAPOLATED_FRAMES = 3_500  # the cluster run's extrapolation: 10⁶ videos of this many frames


@dataclass(frozen=True)
class ScaleRun:
    """One benchmark size: videos of about ``frames`` frames, B replicates."""

    label: str
    videos: int
    frames: int
    bootstrap: int
    cluster: bool = False


FULL = (
    ScaleRun("10k", 10_000, 3_500, 200),
    ScaleRun("100k", 100_000, 3_500, 200),
    ScaleRun("1M", 1_000_000, 100, 100, cluster=True),
)
QUICK = (
    ScaleRun("10k", 1_000, 3_500, 50),
    ScaleRun("100k", 3_000, 3_500, 50),
    ScaleRun("1M", 20_000, 100, 50, cluster=True),
)


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


# --- the synthetic benchmark ------------------------------------------------------------------


def build_inputs(videos: int, frames: int, seed: int = 0) -> tuple[Any, Any]:
    """(GroundTruth, ModelScores) of ``videos`` videos of about ``frames`` frames."""
    from vadscene.audit.io.scores import ModelScores
    from vadscene.benchmark.frames import GroundTruth

    rng = np.random.default_rng(seed)
    low, high = max(SNIPPET, int(frames * 0.8)), int(frames * 1.2) + 1
    lengths = rng.integers(low, high, size=videos)
    offsets = np.zeros(videos + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    anomalous = np.sort(rng.choice(videos, max(1, round(videos * ANOMALOUS_SHARE)), replace=False))
    labels = np.zeros(int(offsets[-1]), dtype=bool)
    share = np.clip(rng.beta(2.0, 5.0, size=anomalous.size), 0.02, 0.95)
    for video, fraction in zip(anomalous.tolist(), share.tolist(), strict=True):
        length = int(lengths[video])
        count = min(max(1, round(fraction * length)), length - 1)
        start = int(offsets[video]) + int(rng.integers(0, length - count + 1))
        labels[start : start + count] = True
    categories = np.full(videos, "Normal", dtype=object)
    categories[anomalous] = np.array(CATEGORIES, dtype=object)[
        np.arange(anomalous.size) % len(CATEGORIES)
    ]
    ground_truth = GroundTruth(
        video_ids=tuple(f"{c}{i:07d}_x264" for i, c in enumerate(categories.tolist())),
        categories=tuple(categories.tolist()),
        offsets=offsets,
        labels=labels,
        source=f"synthetic scale benchmark ({videos:,} videos, seed {seed})",
        conventions={"frame_counts": "synthetic", "snippets": f"{SNIPPET}-frame, repeated"},
    )
    del labels
    scores = snippet_scores(ground_truth, anomalous, rng)
    model = ModelScores("model", scores, source="synthetic float32 snippet scores, ×16")
    return ground_truth, model


def snippet_scores(
    ground_truth: Any, anomalous: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """float32 frame scores: one score per 16-frame snippet, repeated over its frames."""
    lengths = np.diff(ground_truth.offsets)
    per_video = -(-lengths // SNIPPET)
    first_snippet = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(per_video, out=first_snippet[1:])
    snippets = int(first_snippet[-1])
    video = np.repeat(np.arange(lengths.size, dtype=np.int32), per_video)
    within = np.arange(snippets, dtype=np.int64) - first_snippet[:-1][video]
    starts = ground_truth.offsets[:-1][video] + within * SNIPPET
    del within
    size = np.minimum(SNIPPET, ground_truth.offsets[1:][video] - starts).astype(np.int8)
    hits = np.add.reduceat(ground_truth.labels.view(np.uint8), starts, dtype=np.int32)
    del starts
    is_anomalous = np.zeros(lengths.size, dtype=np.float32)
    is_anomalous[anomalous] = 1.0
    video_noise = rng.standard_normal(lengths.size, dtype=np.float32)
    logit = rng.standard_normal(snippets, dtype=np.float32)
    logit += (1.5 * is_anomalous + 0.8 * video_noise)[video] - 1.0
    logit += 2.0 * hits / size
    del video, hits
    np.negative(logit, out=logit)
    np.exp(logit, out=logit)
    logit += 1.0
    np.reciprocal(logit, out=logit)
    return np.repeat(logit, size)


def _reset_peak() -> bool:
    """Reset this process's peak resident memory to its current one (Linux ``clear_refs``),
    so that ``ru_maxrss`` after the audit is the audit's peak — with the inputs it holds —
    rather than the input builder's or the plan's; False where the kernel does not allow it.

    The memory they freed is first handed back to the system (glibc ``malloc_trim``): kept in
    the allocator, the audit would reuse it unseen, and the process would hold it all the same.
    """
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):  # not glibc: what it kept is counted
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
    except OSError:
        return False
    return True


# --- one run, in its own process ------------------------------------------------------------


def _child(run: ScaleRun) -> dict[str, Any]:
    """Build the inputs; make the dry run's plan of the audit (which loads the compiled
    kernels); reset the peak; run the audit (on a local cluster for a cluster run); report."""
    from vadscene.audit.compute.engine import run_audit

    start = time.perf_counter()
    ground_truth, model = build_inputs(run.videos, run.frames)
    report: dict[str, Any] = {
        "frames": ground_truth.n_frames,
        "anomalous_videos": len(ground_truth.segments) - ground_truth.segments.count(()),
        "build_seconds": time.perf_counter() - start,
        "dtype": str(model.scores.dtype),
    }
    if run.cluster:
        return report | _cluster_audit(run, ground_truth, model)
    report["plan"] = _plan(ground_truth, model, run.bootstrap)
    report["peak_reset"] = _reset_peak()
    report["baseline_mb"] = _peak_mb()
    start = time.perf_counter()
    run_audit(ground_truth, [model], n_bootstrap=run.bootstrap, seed=0)
    report["seconds"] = time.perf_counter() - start
    report["peak_mb"] = _peak_mb()
    start = time.perf_counter()
    np.argsort(model.scores)
    report["argsort_seconds"] = time.perf_counter() - start
    return report


def _plan(ground_truth: Any, model: Any, bootstrap: int, client: Any = None) -> dict[str, Any]:
    """What ``vadscene audit --dry-run`` says of this run: its time without the first run's
    kernel loading (the plan loads them, so the audit after it runs warm), the engine's
    memory beyond the inputs, and where it fits."""
    from vadscene.audit.plan import ModelShape, plan_shapes

    shape = ModelShape("model", "synthetic", "in memory", str(model.scores.dtype), SNIPPET)
    plan = plan_shapes(ground_truth, [shape], bootstrap=bootstrap, client=client)
    assert plan.calibration is not None
    first = plan.calibration.coefficients["t_first"]
    seconds = plan.seconds if client is None else plan.fits[-1].seconds
    return {
        "engine_mb": (plan.memory_bytes - plan.input_bytes) / 2**20,
        "seconds": seconds - first if seconds else None,
        "kernels_seconds": first,
        "fit": plan.fits[-1].reason,
    }


def _cluster_audit(run: ScaleRun, ground_truth: Any, model: Any) -> dict[str, Any]:
    """The audit on a LocalCluster of separate worker processes, with the task stream's
    cost per kind of task and the workers' peak memory."""
    from distributed import Client, LocalCluster, get_task_stream

    from vadscene.audit.compute.engine import run_audit

    with (
        LocalCluster(
            n_workers=WORKERS,
            threads_per_worker=1,
            processes=True,
            memory_limit=WORKER_MEMORY,
            dashboard_address=None,
        ) as cluster,
        Client(cluster) as client,
    ):
        plan = _plan(ground_truth, model, run.bootstrap, client)
        peak_reset = _reset_peak()
        baseline = _peak_mb()
        with get_task_stream(client) as stream:
            start = time.perf_counter()
            run_audit(ground_truth, [model], n_bootstrap=run.bootstrap, seed=0, client=client)
            seconds = time.perf_counter() - start
        workers_peak = client.run(_peak_mb)
        tasks: dict[str, list[float]] = defaultdict(list)
        for task in stream.data:
            compute = [s for s in task.get("startstops", ()) if s.get("action") == "compute"]
            if compute:
                name = str(task["key"]).split("-")[0].strip("('\"")
                tasks[name].append(sum(s["stop"] - s["start"] for s in compute))
    return {
        "plan": plan,
        "peak_reset": peak_reset,
        "baseline_mb": baseline,
        "seconds": seconds,
        "peak_mb": _peak_mb(),
        "workers_peak_mb": max(workers_peak.values()),
        "tasks": {name: (len(times), float(np.mean(times))) for name, times in tasks.items()},
    }


def _reporting_child(run: ScaleRun, connection: Any) -> None:
    try:
        connection.send(_child(run))
    except BaseException as exc:  # sent back as the run's result: a size that cannot run
        connection.send({"error": f"{type(exc).__name__}: {exc}"})
        raise


def run_in_child(run: ScaleRun) -> dict[str, Any]:
    """:func:`_child` in a fresh spawn process — not a pool's daemon, which could not start
    the local cluster's worker processes."""
    context = mp.get_context("spawn")
    receiving, sending = context.Pipe(duplex=False)
    process = context.Process(target=_reporting_child, args=(run, sending))
    process.start()
    sending.close()
    try:
        report: dict[str, Any] = receiving.recv()
    except EOFError:  # killed without a word: the kernel's OOM killer, most likely
        report = {"error": "the child died without a result"}
    process.join()
    if process.exitcode and "error" not in report:
        report = {"error": f"the child exited with code {process.exitcode}"}
    return report


# --- report -------------------------------------------------------------------------------


def extrapolation(run: ScaleRun, report: dict[str, Any], workers: int) -> list[str]:
    """An estimate of 10⁶ videos of :data:`EXTRAPOLATED_FRAMES` frames on ``workers``
    workers from the cluster run's task costs: a task's cost scaled by the frames it sweeps
    (×(F_target/F), the sort's by F log F), the tasks spread over the workers."""
    scale = EXTRAPOLATED_FRAMES / run.frames * (1_000_000 / run.videos)
    runs_now = report["frames"] / SNIPPET
    runs_then = runs_now * scale
    sort_scale = scale * math.log2(runs_then) / math.log2(max(runs_now, 2))
    total = 0.0
    lines = []
    for name, (count, mean) in sorted(report["tasks"].items()):
        factor = sort_scale if "pair" in name or "count" in name else scale
        total += count * mean * factor
        lines.append(f"    {name}: {count} tasks, {mean:.3f} s each (×{factor:,.0f} at scale)")
    lines.append(
        f"  estimate: 10⁶ videos × {EXTRAPOLATED_FRAMES:,} frames, B = {run.bootstrap}: about "
        f"{total / workers / 3600:.1f} h of task time on {workers} workers "
        f"({total / 3600:.1f} worker-hours; an estimate from the task costs above, linear in "
        "the frames per task, not a measurement)"
    )
    return lines


def bench_scale(quick: bool) -> int:
    """Run the three sizes, print their figures and the targets; 0 (a missed target is not
    a failure)."""
    runs = QUICK if quick else FULL
    reports: dict[str, dict[str, Any]] = {}
    for run in runs:
        if run.cluster and not _has_distributed():
            log(
                f"{run.label}: skipped (distributed is not installed: pip install 'vadscene[dask]')"
            )
            continue
        log(
            f"scale {run.label}: {run.videos:,} videos of ~{run.frames:,} frames, "
            f"B = {run.bootstrap}"
        )
        reports[run.label] = run_in_child(run)
        log(f"scale {run.label}: {reports[run.label]}")
    print(f"\nScale workload{' (--quick: sizes shrunk, not comparable)' if quick else ''}")
    for run in runs:
        report = reports.get(run.label)
        if report is None:
            continue
        if "error" in report:
            print(f"  {run.label}: {run.videos:,} videos: FAILED ({report['error']})")
            continue
        print(
            f"  {run.label}: {run.videos:,} videos, {report['frames']:,} frames "
            f"({report['dtype']} scores), {report['anomalous_videos']:,} anomalous, "
            f"B = {run.bootstrap}: audit {report['seconds']:.2f} s, peak RSS "
            f"{report['peak_mb']:,.0f} MB (before the audit, inputs built: "
            f"{report['baseline_mb']:,.0f} MB"
            + ("" if report["peak_reset"] else "; peak not reset: includes the build")
            + ")"
        )
        plan = report["plan"]
        growth = report["peak_mb"] - report["baseline_mb"]
        print(
            f"    the dry run's estimate: {plan['seconds'] or math.nan:.2f} s warm (kernels "
            f"loaded in {plan['kernels_seconds']:.2f} s before), the engine "
            f"{plan['engine_mb']:,.0f} MB beyond the inputs; measured ÷ estimated: time "
            f"{report['seconds'] / (plan['seconds'] or math.nan):.2f}, the audit's growth of "
            f"the peak ({growth:,.0f} MB) {growth / plan['engine_mb']:.2f}"
        )
        if run.cluster:
            print(
                f"    {WORKERS} workers × {WORKER_MEMORY}: worker peak RSS "
                f"{report['workers_peak_mb']:,.0f} MB"
            )
            print(f"    the dry run on this cluster: {plan['fit']}")
            for line in extrapolation(run, report, WORKERS):
                print(line)
    print_targets(runs, reports, quick)
    return 0


def print_targets(
    runs: tuple[ScaleRun, ...], reports: dict[str, dict[str, Any]], quick: bool
) -> None:
    small, large, cluster = runs
    targets: list[tuple[str, bool, str]] = []
    first = reports.get(small.label, {})
    if "seconds" in first:
        ratio = first["seconds"] / first["argsort_seconds"]
        targets += [
            (
                f"{small.videos:,} videos: engine ≤ {TARGET_ARGSORT_RATIO:g}× np.argsort of "
                "its frames",
                ratio <= TARGET_ARGSORT_RATIO,
                f"{ratio:.2f}×",
            ),
            (
                f"{small.videos:,} videos: peak RSS ≤ {TARGET_10K_PEAK_MB:,.0f} MB",
                first["peak_mb"] <= TARGET_10K_PEAK_MB,
                f"{first['peak_mb']:,.0f} MB",
            ),
        ]
    second = reports.get(large.label, {})
    targets.append(
        (f"{large.videos:,} videos: runs", "seconds" in second, second.get("error", "ran")[:40])
    )
    if "seconds" in second:
        targets.append(
            (
                f"{large.videos:,} videos: peak RSS ≤ {TARGET_100K_PEAK_MB:,.0f} MB",
                second["peak_mb"] <= TARGET_100K_PEAK_MB,
                f"{second['peak_mb']:,.0f} MB",
            )
        )
        if "seconds" in first:
            exponent = math.log(second["seconds"] / first["seconds"]) / math.log(
                large.videos / small.videos
            )
            targets.append(
                (
                    f"time growth {small.label} → {large.label} ≤ V^{TARGET_GROWTH_EXPONENT:g}",
                    exponent <= TARGET_GROWTH_EXPONENT,
                    f"V^{exponent:.2f}",
                )
            )
    third = reports.get(cluster.label)
    if third is not None:
        targets.append(
            (
                f"{cluster.videos:,} videos on {WORKERS} workers × {WORKER_MEMORY}: runs",
                "seconds" in third,
                third.get("error", "ran")[:40],
            )
        )
    caveat = " (--quick: sizes shrunk, not comparable)" if quick else ""
    cores = f"{os.cpu_count()} CPUs visible, {len(os.sched_getaffinity(0))} usable"
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    print(f"\nTargets{caveat} — {cores}, {memory:.0f} GiB")
    for name, met, value in targets:
        print(f"  [{'met' if met else 'MISSED':>6}]  {name:<60} {value:>12}")


def _has_distributed() -> bool:
    try:
        import distributed  # noqa: F401
    except ImportError:
        return False
    return True
