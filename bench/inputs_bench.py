"""Audit inputs at scale (issue 25): reading scores and ground truth against the raw read of
the same bytes, measured in the same run.

    python bench/inputs_bench.py [--quick]

- **UCF-shaped ``.npy`` folder**: 290 videos, 1,111,808 frames, float32 scores per 16-frame
  snippet (≈ 70 k), one file per video, as feature-based models save them. ``load_scores``
  (``snippet_repeat=16``: every file read, checked, aligned and repeated to the frames) ÷
  ``open(...).read()`` of every file, both after a first warming read, best of the repeats.
  Goal ≤ 2×.
- **10k-video table**: 10,000 videos (35 M frames; 3.5 M with ``--quick``), columns
  ``video, frame, score`` (float32) as Parquet (pyarrow's defaults: dictionary-encoded video
  names, Snappy) and as an uncompressed Arrow IPC file; ``load_scores`` ÷ the raw read of the
  file, and the same for a ground-truth table ``video, frame, label, category`` through
  ``load_ground_truth``.
- **Peak memory** of loading the float32 Parquet score table, in a fresh process: the rise of
  its peak RSS over the RSS before the load (the peak is reset first, so building the ground
  truth does not count, nor does a first read of a 2-row table, which maps pyarrow's
  libraries and starts its pools — printed apart), against the file's size and the loaded
  float32 scores' size.

No goal for the tables' ratios: decoding Parquet is work a raw read does not do; they are
printed so that a change in them is seen.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from vadscene.audit.io.scores import load_scores
from vadscene.benchmark.frames import GroundTruth
from vadscene.benchmark.ground_truth import load_ground_truth

SEED = 25
SNIPPET = 16
UCF_VIDEOS, UCF_FRAMES = 290, 1_111_808
TABLE_VIDEOS, TABLE_FRAMES_PER_VIDEO = 10_000, 3_500
TARGET_FOLDER_RATIO = 2.0


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def lengths(n_videos: int, total: int, low: int, high: int, rng: np.random.Generator) -> np.ndarray:
    """Log-normal video lengths clipped to [low, high], rescaled to sum to ``total``."""
    raw = rng.lognormal(0.0, 1.0, size=n_videos)
    scale_low, scale_high = 1e-6, 1e7
    scale = scale_high
    for _ in range(100):  # bisection on the scale: the clipping makes the sum non-linear
        scale = (scale_low + scale_high) / 2
        below = np.clip(raw * scale, low, high).sum() < total
        scale_low, scale_high = (scale, scale_high) if below else (scale_low, scale)
    frames = np.round(np.clip(raw * scale, low, high)).astype(np.int64)
    frames[np.argmax(frames)] += total - frames.sum()
    return frames


def ground_truth(ids: list[str], frames: np.ndarray) -> GroundTruth:
    offsets = np.concatenate([[0], np.cumsum(frames)])
    return GroundTruth(
        tuple(ids), ("Normal",) * len(ids), offsets, np.zeros(offsets[-1], bool), "bench"
    )


def raw_read(files: list[Path]) -> None:
    for file in files:
        with open(file, "rb") as handle:
            handle.read()


def best(function: Callable[[], object], repeats: int) -> float:
    """The fastest of ``repeats`` calls of ``function`` after one warming call (seconds)."""
    function()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def bench_folder(folder: Path, repeats: int) -> str:
    rng = np.random.default_rng(SEED)
    frames = lengths(UCF_VIDEOS, UCF_FRAMES, 300, 30_000, rng)
    ids = [f"Normal_Videos_{i:03d}_x264" for i in range(UCF_VIDEOS)]
    snippets = -(-frames // SNIPPET)
    for video, m in zip(ids, snippets.tolist(), strict=True):
        np.save(folder / f"{video}.npy", rng.random(m).astype(np.float32))
    gt = ground_truth(ids, frames)
    files = sorted(folder.glob("*.npy"))
    size = sum(file.stat().st_size for file in files)
    raw = best(lambda: raw_read(files), repeats)
    load = best(lambda: load_scores(folder, gt, name="m", snippet_repeat=SNIPPET), repeats)
    ratio = load / raw
    verdict = "met" if ratio <= TARGET_FOLDER_RATIO else "MISSED"
    return (
        f"UCF-shaped .npy folder ({len(files)} files, {int(snippets.sum()):,} float32 snippet "
        f"scores, {size / 2**20:.1f} MiB, {gt.n_frames:,} frames): load_scores "
        f"{load * 1e3:.2f} ms ÷ raw read {raw * 1e3:.2f} ms = {ratio:.2f}× "
        f"(goal ≤ {TARGET_FOLDER_RATIO:g}×: {verdict})"
    )


def write_tables(folder: Path, frames_per_video: int) -> dict[str, Path]:
    """The 10k-video score and label tables (Parquet, Arrow IPC) and the frame counts."""
    rng = np.random.default_rng(SEED)
    frames = lengths(TABLE_VIDEOS, TABLE_VIDEOS * frames_per_video, 30, 30 * frames_per_video, rng)
    ids = [f"Video{i:05d}_x264" for i in range(TABLE_VIDEOS)]
    video = pa.DictionaryArray.from_arrays(
        np.repeat(np.arange(TABLE_VIDEOS, dtype=np.int32), frames), pa.array(ids)
    )
    starts = np.repeat(np.cumsum(frames) - frames, frames)
    frame = (np.arange(int(frames.sum())) - starts).astype(np.int32)
    scores = pa.table(
        {
            "video": video,
            "frame": frame,
            "score": rng.random(frame.size, dtype=np.float32),
        }
    )
    # 3 % of the videos anomalous, each in its middle third
    anomalous = rng.random(TABLE_VIDEOS) < 0.03
    third = np.repeat(frames // 3, frames)
    labels = np.repeat(anomalous, frames) & (frame >= third) & (frame < 2 * third)
    category = pa.DictionaryArray.from_arrays(
        np.repeat(anomalous.astype(np.int32), frames), pa.array(["Normal", "Fight"])
    )
    truth = pa.table({"video": video, "frame": frame, "label": labels, "category": category})
    paths = {
        "scores.parquet": folder / "scores.parquet",
        "scores.arrow": folder / "scores.arrow",
        "labels.parquet": folder / "labels.parquet",
        "counts": folder / "counts.npy",
    }
    pq.write_table(scores, paths["scores.parquet"])
    with (
        pa.OSFile(str(paths["scores.arrow"]), "wb") as sink,
        pa.ipc.new_file(sink, scores.schema) as writer,
    ):
        writer.write_table(scores)
    pq.write_table(truth, paths["labels.parquet"])
    np.save(paths["counts"], frames)
    return paths


def table_ids() -> list[str]:
    return [f"Video{i:05d}_x264" for i in range(TABLE_VIDEOS)]


def bench_tables(paths: dict[str, Path], repeats: int) -> list[str]:
    gt = ground_truth(table_ids(), np.load(paths["counts"]))
    lines = []
    for name in ("scores.parquet", "scores.arrow", "labels.parquet"):
        path = paths[name]
        raw = best(partial(raw_read, [path]), repeats)
        if name.startswith("labels"):
            load = best(partial(load_ground_truth, path), repeats)
            what = "load_ground_truth"
        else:
            load = best(partial(load_scores, path, gt, name="m"), repeats)
            what = "load_scores"
        lines.append(
            f"{name} ({TABLE_VIDEOS:,} videos, {gt.n_frames:,} rows, "
            f"{path.stat().st_size / 2**20:.0f} MiB): {what} {load:.3f} s ÷ raw read "
            f"{raw:.3f} s = {load / raw:.1f}×"
        )
    return lines


_PEAK_CHILD = """
import json, sys
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from pathlib import Path
sys.path.insert(0, {bench!r})
from inputs_bench import ground_truth, table_ids
from vadscene.audit.io.scores import load_scores

def rss(field):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1]) * 1024
    raise RuntimeError(field)

def reset_peak():
    try:
        Path("/proc/self/clear_refs").write_text("5")  # the peak RSS back to the current RSS
        return True
    except OSError:
        return False

small = Path({folder!r}) / "small.parquet"
pq.write_table(pa.table({{"video": ["a", "a"], "frame": [0, 1], "score": [0.5, 0.25]}}), small)
tiny = ground_truth(["a"], np.array([2]))
gt = ground_truth(table_ids(), np.load({counts!r}))
reset = reset_peak()
before = rss("VmRSS:")
load_scores(small, tiny, name="m")  # the first read: libraries' pages, thread pools
first = rss("VmHWM:") - before
reset = reset_peak() and reset
before = rss("VmRSS:")
scores = load_scores(Path({table!r}), gt, name="m")
print(json.dumps({{"rise": rss("VmHWM:") - before, "reset": reset, "first": first,
                  "result": scores.scores.nbytes, "dtype": str(scores.scores.dtype)}}))
"""


def bench_peak(paths: dict[str, Path]) -> str:
    code = _PEAK_CHILD.format(
        bench=str(Path(__file__).parent),
        folder=str(paths["counts"].parent),
        counts=str(paths["counts"]),
        table=str(paths["scores.parquet"]),
    )
    result = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    )
    peak = json.loads(result.stdout)
    size = paths["scores.parquet"].stat().st_size
    note = "" if peak["reset"] else " (peak not reset: it includes building the ground truth)"
    return (
        f"peak memory of loading scores.parquet: +{peak['rise'] / 2**20:.0f} MiB = "
        f"{peak['rise'] / size:.1f}× the file ({size / 2**20:.0f} MiB), "
        f"{peak['rise'] / peak['result']:.1f}× the loaded {peak['dtype']} scores "
        f"({peak['result'] / 2**20:.0f} MiB){note}; not counted: the first table read of "
        f"the process (+{peak['first'] / 2**20:.0f} MiB of library pages and pools, "
        "measured on a 2-row table)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tables of 350 frames per video")
    args = parser.parse_args(argv)
    repeats = 50 if args.quick else 200
    frames_per_video = TABLE_FRAMES_PER_VIDEO // (10 if args.quick else 1)
    with tempfile.TemporaryDirectory(prefix="inputs-bench-") as folder:
        root = Path(folder)
        (root / "ucf").mkdir()
        log("UCF-shaped .npy folder")
        lines = [bench_folder(root / "ucf", repeats)]
        log(f"writing the {TABLE_VIDEOS:,}-video tables")
        paths = write_tables(root, frames_per_video)
        log("reading the tables")
        lines += bench_tables(paths, 3)
        log("peak memory, in a fresh process")
        lines.append(bench_peak(paths))
    print(f"\nAudit inputs ({os.cpu_count()} cores{', --quick' if args.quick else ''}):")
    for line in lines:
        print(f"- {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
