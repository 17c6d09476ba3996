"""`vadscene audit --dry-run`: the plan's memory against a real run's, its output, its refusals.

The memory check runs the real audit (``prepare(request).run()``, what ``vadscene audit`` runs
before writing the report) in a fresh child process and compares the plan's estimate with the
child's peak resident memory (``VmHWM``) minus its resident memory before the inputs are read.
The baseline is taken after one warm-up audit of a tiny benchmark, so it holds the interpreter,
the imported modules and the loaded compiled kernels: fixed costs of any run that the
engine's analytic model does not claim to count, while reading the inputs and auditing them
— what grows with the shape — are measured. Before the baseline, the memory the warm-up freed
is handed back to the system and the peak is reset to it (Linux ``clear_refs``), so neither
the warm-up's peak nor the allocator's settings (a Dask nanny leaves ``MALLOC_TRIM_THRESHOLD_``
in its parent's environment) can hide the audit's growth.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from vadscene.audit.plan import calibration_subsample, plan_audit
from vadscene.audit.request import AuditRequest, AuditRequestError
from vadscene.benchmark.frames import GroundTruth
from vadscene.cli import run

SNIPPET = 16


def write_benchmark(
    folder: Path,
    videos: int,
    frames: int,
    *,
    anomalous_share: float = 0.1,
    models: int = 1,
    seed: int = 0,
) -> tuple[Path, list[Path], dict[str, int]]:
    """A UR-DMU-style annotation (``name frames category start end``) and per-video float32
    snippet-score folders; returns them with the counts known from the construction."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True)
    lengths = rng.integers(frames // 2, frames * 3 // 2, size=videos)
    anomalous = set(rng.choice(videos, max(1, round(videos * anomalous_share)), replace=False))
    lines, anomalous_frames, ids = [], 0, []
    for i, length in enumerate(lengths.tolist()):
        if i in anomalous:
            start = int(rng.integers(0, length // 2))
            end = start + max(1, length // 4)
            lines.append(f"Abuse{i:05d}_x264 {length} Abuse {start} {end}")
            anomalous_frames += end - start
            ids.append(f"Abuse{i:05d}_x264")
        else:
            lines.append(f"Normal{i:05d}_x264 {length} Normal -1 -1")
            ids.append(f"Normal{i:05d}_x264")
    annotation = folder / "annotation.txt"
    annotation.write_text("\n".join(lines) + "\n")
    score_folders = []
    for m in range(models):
        scores = folder / f"model{m}"
        scores.mkdir()
        for video, length in zip(ids, lengths.tolist(), strict=True):
            snippets = -(-length // SNIPPET)
            np.save(scores / f"{video}.npy", rng.random(snippets, dtype=np.float32))
        score_folders.append(scores)
    counts = {
        "videos": videos,
        "frames": int(lengths.sum()),
        "anomalous_videos": len(anomalous),
        "anomalous_frames": anomalous_frames,
    }
    return annotation, score_folders, counts


def request_of(
    annotation: Path, score_folders: list[Path], bootstrap: int, out: Path | None = None
) -> AuditRequest:
    from vadscene.audit.io.scores import ModelSpec

    return AuditRequest(
        ground_truth=annotation,
        scores=tuple(ModelSpec(f"m{i}", path) for i, path in enumerate(score_folders)),
        snippet_repeat=SNIPPET,
        bootstrap=bootstrap,
        out=out,
    )


_CHILD = """
import ctypes, gc, json, sys
from pathlib import Path
from vadscene.audit.io.scores import ModelSpec
from vadscene.audit.request import AuditRequest, prepare

def request(annotation, folders, bootstrap):
    return AuditRequest(
        ground_truth=Path(annotation),
        scores=tuple(ModelSpec(f"m{i}", Path(p)) for i, p in enumerate(folders)),
        snippet_repeat=16,
        bootstrap=bootstrap,
    )

def status(field):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1]) * 1024  # kB

tiny, main = json.loads(sys.argv[1])
prepare(request(*tiny)).run()  # warm-up: imports, compiled kernels
gc.collect()
ctypes.CDLL("libc.so.6").malloc_trim(0)  # what the warm-up freed goes back to the system
Path("/proc/self/clear_refs").write_text("5")  # the peak back to the current resident memory
baseline = status("VmRSS:")
prepare(request(*main)).run()
print(json.dumps({"baseline": baseline, "peak": status("VmHWM:")}))
"""


def measured_peak(tiny: tuple, main: tuple) -> int:
    """Peak bytes of the child's audit of ``main`` above its baseline (module docstring)."""
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps([tiny, main])],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    return int(figures["peak"] - figures["baseline"])


@pytest.mark.parametrize(
    ("videos", "frames", "models", "bootstrap"),
    [
        (4_000, 300, 1, 200),  # many short videos: the video-sized terms
        (80, 40_000, 2, 100),  # few long videos: the frame-sized terms
    ],
)
def test_memory_estimate_is_within_two_times_the_measured_peak(
    tmp_path: Path, videos: int, frames: int, models: int, bootstrap: int
) -> None:
    tiny_gt, tiny_scores, _ = write_benchmark(tmp_path / "tiny", 12, 100, anomalous_share=0.3)
    annotation, folders, _ = write_benchmark(tmp_path / "main", videos, frames, models=models)
    plan = plan_audit(request_of(annotation, folders, bootstrap), calibrate=False)
    measured = measured_peak(
        (str(tiny_gt), [str(p) for p in tiny_scores], 10),
        (str(annotation), [str(p) for p in folders], bootstrap),
    )
    assert measured > 0
    ratio = plan.memory_bytes / measured
    assert 0.5 <= ratio <= 2.0, (
        f"estimate {plan.memory_bytes / 2**20:.0f} MiB vs measured {measured / 2**20:.0f} MiB"
    )


def test_dry_run_prints_the_plan_and_writes_no_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    annotation, folders, counts = write_benchmark(tmp_path / "bench", 200, 400, models=2)
    out = tmp_path / "report"
    arguments = ["audit", "--gt", str(annotation), "--snippet-repeat", "16", "--bootstrap", "50"]
    arguments += [f"--scores=m{i}={p}" for i, p in enumerate(folders)]
    assert run([*arguments, "--out", str(out), "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert not out.exists()
    assert (
        f"shape: {counts['videos']:,} videos, {counts['frames']:,} frames, "
        f"{counts['anomalous_videos']:,} anomalous videos "
        f"({counts['anomalous_frames']:,} anomalous frames)" in printed
    )
    assert "m0 (npy folder, float32, snippet ×16)" in printed
    assert "memory: about" in printed and "time: about" in printed
    assert "fits this machine" in printed
    assert "nothing was audited and no report was written" in printed

    assert run([*arguments, "--out", str(out), "--dry-run", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert not out.exists()
    shape = plan["shape"]
    assert {k: shape[k] for k in counts} == counts
    assert shape["bootstrap"] == 50 and [m["dtype"] for m in shape["models"]] == ["float32"] * 2
    assert plan["memory_bytes"] > 0 and plan["seconds"] > 0
    assert plan["fits"][0]["where"] == "this machine" and plan["fits"][0]["fits"] is True


def _refusal(arguments: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = run(arguments)
    return code, capsys.readouterr().err.strip()


@pytest.mark.parametrize(
    "breakage",
    ["missing_scores", "video_without_scores", "negative_bootstrap", "no_anomalous_frame"],
)
def test_bad_inputs_are_refused_as_the_run_refuses_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], breakage: str
) -> None:
    annotation, folders, _ = write_benchmark(tmp_path / "bench", 30, 200)
    bootstrap = "20"
    if breakage == "missing_scores":
        folders = [tmp_path / "absent"]
    elif breakage == "video_without_scores":
        next(folders[0].glob("Normal*.npy")).unlink()
    elif breakage == "negative_bootstrap":
        bootstrap = "-3"
    else:
        lines = annotation.read_text().splitlines()
        annotation.write_text(
            "\n".join(" ".join([*line.split()[:3], "-1", "-1"]) for line in lines) + "\n"
        )
    out = tmp_path / "report"
    arguments = ["audit", "--gt", str(annotation), "--snippet-repeat", "16"]
    arguments += ["--bootstrap", bootstrap, "--out", str(out), f"--scores=m={folders[0]}"]
    real = _refusal(arguments, capsys)
    dry = _refusal([*arguments, "--dry-run"], capsys)
    assert real[0] != 0 and real[1]
    assert dry == real
    assert not out.exists()


def test_calibration_subsample_keeps_the_strata_shares() -> None:
    rng = np.random.default_rng(3)
    categories = ["Normal"] * 600 + ["Abuse"] * 300 + ["Arson"] * 100
    lengths = rng.integers(5, 40, size=len(categories))
    labels = np.zeros(int(lengths.sum()), dtype=bool)
    offsets = np.r_[0, np.cumsum(lengths)]
    for i, category in enumerate(categories):
        if category != "Normal" and i % 2 == 0:  # half of each anomaly category is anomalous
            labels[offsets[i]] = True
    truth = GroundTruth(
        video_ids=tuple(f"{c}{i:04d}" for i, c in enumerate(categories)),
        categories=tuple(categories),
        offsets=offsets,
        labels=labels,
        source="strata",
    )
    subsample = calibration_subsample(truth, 100, np.random.default_rng(0))
    # expected by hand: 10 % of each (category, anomalous) stratum of 600 / 150 / 150 / 50 / 50
    picked = {}
    for video, category in zip(subsample.video_ids, subsample.categories, strict=True):
        i = truth.video_ids.index(video)
        key = (category, bool(labels[offsets[i] : offsets[i + 1]].any()))
        picked[key] = picked.get(key, 0) + 1
        assert np.array_equal(subsample.labels_of(video), truth.labels_of(video))
    assert picked == {
        ("Normal", False): 60,
        ("Abuse", True): 15,
        ("Abuse", False): 15,
        ("Arson", True): 5,
        ("Arson", False): 5,
    }
    assert list(subsample.video_ids) == sorted(subsample.video_ids, key=truth.video_ids.index)


def test_replicate_memory_bounds_the_blocks_not_the_numbers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from vadscene.audit.compute.budget import DEFAULT_REPLICATE_MEMORY

    annotation, folders, _ = write_benchmark(tmp_path / "bench", 300, 200, models=2)
    arguments = ["audit", "--gt", str(annotation), "--snippet-repeat", "16", "--bootstrap", "600"]
    arguments += [f"--scores=m{i}={p}" for i, p in enumerate(folders)]
    reports = {}
    for memory in (None, "1"):
        option = [] if memory is None else ["--replicate-memory", memory]
        out = tmp_path / f"report-{memory}"
        assert run([*arguments, *option, "--out", str(out), "--json"]) == 0
        capsys.readouterr()
        reports[memory] = json.loads((out / "report.json").read_text())
        assert run([*arguments, *option, "--out", str(out), "--dry-run", "--json"]) == 0
        reports[f"plan {memory}"] = json.loads(capsys.readouterr().out)
    # 1 MiB holds the draws of 1 MiB / (8 arrays × 8 bytes × 300 videos) = 54 replicates: 12
    # blocks (two in flight) instead of one of 600, and the same tables to the last bit
    default, small = (
        {k: v for k, v in reports[m].items() if k != "conventions"} for m in (None, "1")
    )
    assert default == small and default["metrics"]
    assert reports["plan 1"]["memory_bytes"] < reports["plan None"]["memory_bytes"]
    # the help's default is the engine's
    assert run(["audit", "--help"]) == 0
    assert f"(default {DEFAULT_REPLICATE_MEMORY // 2**20})" in " ".join(
        capsys.readouterr().out.split()
    )

    code, message = _refusal([*arguments, "--replicate-memory", "0"], capsys)
    assert code == 2 and "--replicate-memory" in message
    with pytest.raises(AuditRequestError, match="replicate_memory 0: expected a number of bytes"):
        AuditRequest(ground_truth=annotation, replicate_memory=0)
