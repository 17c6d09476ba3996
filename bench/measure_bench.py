"""Benchmark: ``vadscene.measure.statistics.measure_video`` against decoding alone, on one core.

What is measured
----------------
A synthetic corpus of H.264 videos shaped like UCF-Crime footage (320×240, 30 fps, yuv420p,
libx264 CRF 23 with B-frames) with varied content: fine and coarse textures, a drawn street
scene, flat walls; Gaussian blur 0-3 px; a static camera, pans, moving objects, hand-held shake
and hard cuts; colour and grayscale; sensor noise; and one clip converted from 7.5 fps by
repeating every frame four times. The full corpus holds 20 clips of 32 s (10.7 min); it is
generated once and cached in the system temp dir (``<tmp>/vadscene-measure-bench/``), never in
the repository.

Everything runs on one core: the process is pinned to one CPU, ``cv2.setNumThreads(1)``, and
every decoder runs single-threaded (PyAV ``thread_count=1``, OpenCV ``CAP_PROP_N_THREADS=1``,
decord ``num_threads=1``). Each method reads every clip start to end; a clip's time is the
best of ``--repeats`` passes (page cache warm), and the methods are interleaved per pass.

* *measure*: ``measure_video`` (exhaustive, the default), and its sampling mode
  ``MeasureParams(stride=4)``.
* *decode-only baselines*: an OpenCV ``grab()`` loop (decodes, converts nothing), an OpenCV
  ``read()`` loop (decode + BGR conversion), and the PyAV demux/decode loop that
  ``measure_video`` runs, taking the luma plane but computing nothing.
* *decoder candidates* (decode to a grayscale frame, the input of the analysis): OpenCV
  ``read()`` + ``cvtColor(BGR2GRAY)``, decord ``get_batch`` of 64 sequential frames +
  ``cvtColor(RGB2GRAY)``, PyAV's luma plane in place.

Reading the output
------------------
Rates are × real time per core (footage seconds / wall seconds) and µs per frame; the overhead
ratio is measure time / decode-only time, against each baseline. For the sampling mode the
Spearman rank correlation of its per-clip statistics with the exhaustive ones is printed (a
sampling mode could only become the default at ρ ≥ 0.99), with the largest relative
difference. Targets: exhaustive ≥ 250× real time per core, overhead ≤ 1.3× decode-only,
judged against the PyAV luma-decode loop (the floor: ``measure_video``'s own decoding with
nothing computed) and, for reference, the OpenCV ``grab()`` and ``read()`` loops. The
*OpenCV analysis (ref.)* method computes the same statistics through the OpenCV reference
path; the fused kernel's speed-up over it is printed, and its results must equal the
kernel's bit for bit. Each target is marked ``met`` / ``MISSED``; a benchmark is not a test,
so the exit code is 0 unless a clip fails to measure, the decoders disagree on a frame count
or the two analyses differ.

Usage: ``python bench/measure_bench.py`` (generates the corpus on first use, ~30 s; then
~70 s), ``python bench/measure_bench.py --quick`` (6 clips of 4 s, one pass: a smoke run
whose numbers are noisier and carry per-clip open costs; targets are marked all the same).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import av
import cv2
import decord
import numpy as np
from scipy.stats import spearmanr

from vadscene.measure import statistics as measure
from vadscene.measure.statistics import MeasureParams, VideoMeasurement, measure_video

WIDTH, HEIGHT, FPS = 320, 240, 30
CORPUS_VERSION = "1"  # bump when the generator changes, so cached corpora are rebuilt
SAMPLING = MeasureParams(stride=4)
TARGET_REALTIME = 250.0
TARGET_OVERHEAD = 1.3
STATISTICS = ("sharpness", "motion", "chroma")


@dataclass(frozen=True)
class Clip:
    """One corpus clip and what was planted in it."""

    name: str
    texture: str  # fine | coarse | street | flat
    blur: float  # Gaussian sigma (px), applied last
    camera: str  # static | pan | objects | shake | cuts | slow-fps
    gray: bool
    noise: float  # std of per-frame sensor noise (grey levels)


def design(count: int) -> list[Clip]:
    """A deterministic mix: every texture, blur, camera and colour mode appears."""
    textures = ("fine", "coarse", "street", "flat")
    blurs = (0.0, 0.8, 1.5, 3.0, 0.0)
    cameras = ("static", "pan", "objects", "shake", "cuts", "slow-fps")
    clips = []
    for i in range(count):
        clips.append(
            Clip(
                name=f"clip{i:02d}.mp4",
                texture=textures[i % len(textures)],
                blur=blurs[i % len(blurs)],
                camera=cameras[i % len(cameras)],
                gray=i % 3 == 2,
                noise=(0.0, 2.0, 5.0)[(i // 2) % 3],
            )
        )
    return clips


def _texture(rng: np.random.Generator, kind: str, h: int, w: int) -> np.ndarray:
    """A colour canvas (uint8 RGB) of the given kind."""
    if kind == "fine":
        img = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        return cv2.GaussianBlur(img, (0, 0), 1.2)
    if kind == "coarse":
        coarse = rng.integers(0, 256, (h // 16 + 2, w // 16 + 2, 3), dtype=np.uint8)
        return cv2.resize(coarse, (w, h), interpolation=cv2.INTER_CUBIC)
    img = np.empty((h, w, 3), np.uint8)
    img[:] = rng.integers(60, 200, 3)
    if kind == "flat":  # a wall with a few posters
        for _ in range(6):
            x, y = int(rng.integers(0, w - 40)), int(rng.integers(0, h - 40))
            colour = rng.integers(0, 256, 3).tolist()
            cv2.rectangle(img, (x, y), (x + 40, y + 50), colour, -1)
        return img
    # street: buildings with windows above a road with lane marks
    horizon = h // 2
    img[horizon:] = (90, 90, 95)
    x = 0
    while x < w:
        bw, bh = int(rng.integers(30, 80)), int(rng.integers(horizon // 3, horizon))
        colour = rng.integers(40, 220, 3).tolist()
        cv2.rectangle(img, (x, horizon - bh), (x + bw - 3, horizon), colour, -1)
        for wy in range(horizon - bh + 5, horizon - 8, 10):
            for wx in range(x + 4, x + bw - 8, 9):
                cv2.rectangle(img, (wx, wy), (wx + 4, wy + 5), (235, 225, 150), -1)
        x += bw
    for dx in range(0, w, 30):
        cv2.rectangle(img, (dx, 3 * h // 4 - 1), (dx + 15, 3 * h // 4 + 1), (240, 240, 230), -1)
    noise = rng.normal(0.0, 6.0, (h, w, 1))
    return np.clip(img + noise, 0, 255).astype(np.uint8)


def write_clip(path: Path, clip: Clip, frames: int, seed: int) -> None:
    """Render and encode one clip (libx264, CRF 23, veryfast: B-frames, CABAC)."""
    rng = np.random.default_rng(seed)
    margin = 200 if clip.camera == "pan" else 16
    canvases = [
        _texture(rng, clip.texture, HEIGHT + 2 * margin, WIDTH + 2 * margin)
        for _ in range(2 if clip.camera == "cuts" else 1)
    ]
    sprites = [
        (rng.uniform(0, WIDTH), rng.uniform(0, HEIGHT), rng.uniform(-4, 4), rng.uniform(-3, 3))
        for _ in range(8 if clip.camera == "objects" else 2)
    ]
    sprite_colours = [rng.integers(0, 256, 3).tolist() for _ in sprites]
    noise_bank = [rng.normal(0.0, clip.noise, (HEIGHT, WIDTH, 1)) for _ in range(7)]
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=FPS)
        stream.width, stream.height, stream.pix_fmt = WIDTH, HEIGHT, "yuv420p"
        stream.options = {"crf": "23", "preset": "veryfast"}
        image = None
        for t in range(frames):
            if clip.camera != "slow-fps" or t % 4 == 0 or image is None:
                canvas = canvases[(t // 90) % len(canvases)]
                if clip.camera == "pan":
                    dx = margin + int(margin * 0.9 * np.sin(t / 60.0))
                    dy = margin + int(margin * 0.5 * np.cos(t / 97.0))
                elif clip.camera == "shake":
                    dx, dy = margin + rng.integers(-6, 7), margin + rng.integers(-6, 7)
                else:
                    dx = dy = margin
                image = np.ascontiguousarray(canvas[dy : dy + HEIGHT, dx : dx + WIDTH])
                for k, (x, y, vx, vy) in enumerate(sprites):
                    cx, cy = int((x + vx * t) % WIDTH), int((y + vy * t) % HEIGHT)
                    cv2.circle(image, (cx, cy), 14, sprite_colours[k], -1)
                if clip.noise:
                    image = np.clip(image + noise_bank[t % 7], 0, 255).astype(np.uint8)
                if clip.blur:
                    image = cv2.GaussianBlur(image, (0, 0), clip.blur)
                if clip.gray:
                    luma = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)
                    image = cv2.merge((luma, luma, luma))
            container.mux(stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")))
        container.mux(stream.encode())


def corpus(quick: bool) -> tuple[Path, list[Clip], int]:
    """The cached corpus (generated on first use): directory, clips, frames per clip."""
    count, seconds = (6, 4) if quick else (20, 32)
    frames = seconds * FPS
    root = Path(tempfile.gettempdir()) / "vadscene-measure-bench"
    folder = root / f"corpus-v{CORPUS_VERSION}-{count}x{seconds}s"
    clips = design(count)
    manifest = folder / "manifest.json"
    if not manifest.exists():  # written last, so an interrupted generation is redone
        folder.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        for i, clip in enumerate(clips):
            print(f"  generating {clip.name} ({i + 1}/{count})", file=sys.stderr, flush=True)
            write_clip(folder / clip.name, clip, frames, seed=i)
        manifest.write_text(json.dumps([c.__dict__ for c in clips], indent=1))
        print(f"  corpus generated in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return folder, clips, frames


# --- the methods: each reads a whole clip and returns the number of frames it delivered ---


def opencv_capture(path: Path) -> cv2.VideoCapture:
    return cv2.VideoCapture(str(path), cv2.CAP_FFMPEG, [cv2.CAP_PROP_N_THREADS, 1])


def opencv_grab(path: Path) -> int:
    capture, frames = opencv_capture(path), 0
    while capture.grab():
        frames += 1
    return frames


def opencv_read(path: Path) -> int:
    capture, frames = opencv_capture(path), 0
    while capture.read()[0]:
        frames += 1
    return frames


def opencv_gray(path: Path) -> int:
    capture, frames = opencv_capture(path), 0
    while True:
        ok, bgr = capture.read()
        if not ok:
            return frames
        cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)
        frames += 1


def decord_gray(path: Path) -> int:
    reader = decord.VideoReader(str(path), num_threads=1)
    total = len(reader)
    for start in range(0, total, 64):
        batch = reader.get_batch(list(range(start, min(total, start + 64)))).asnumpy()
        for rgb in batch:
            cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    return total


def pyav_luma(path: Path) -> int:
    """The decoding loop of ``measure_video`` without the statistics."""
    frames = 0
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        stream.codec_context.thread_count = 1
        for packet in container.demux(stream):
            for frame in packet.decode():
                plane = frame.planes[0]
                rows = np.frombuffer(plane, np.uint8, plane.height * plane.line_size)
                rows.reshape(plane.height, plane.line_size)[:, : plane.width]
                frames += 1
    return frames


def opencv_reference(path: Path) -> tuple[int, float, float, float]:
    """The statistics through the OpenCV reference path (the analysis before the fused
    kernel): frames, then sharpness, motion over every pair, chroma — on the same planes and
    scale as ``measure_video``, so an exact kernel gives identical floats."""
    sharpness, motion, chroma = [], [], []
    previous = None
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        stream.codec_context.thread_count = 1
        for frame in container.decode(stream):
            planes, scale = measure._planes(frame)
            luma = planes[0].view
            if previous is not None:
                motion.append(cv2.norm(luma, previous, cv2.NORM_L1) / luma.size * scale.luma)
            sharpness.append(measure._laplacian_variance(luma) * scale.luma**2)
            offsets = (measure._chroma_offset(c.view, scale.neutral) for c in planes[1:])
            chroma.append(sum(offsets, 0.0) * scale.chroma)
            previous = luma
    return (
        len(sharpness),
        float(np.mean(sharpness)),
        float(np.mean(motion)),
        float(np.mean(chroma)),
    )


def measured(params: MeasureParams) -> Callable[[Path], VideoMeasurement]:
    def run(path: Path) -> VideoMeasurement:
        return measure_video(path, params=params)

    return run


METHODS: dict[str, Callable[[Path], int | VideoMeasurement]] = {
    "measure (exhaustive)": measured(MeasureParams()),
    f"measure (stride {SAMPLING.stride})": measured(SAMPLING),
    "OpenCV grab()": opencv_grab,
    "OpenCV read()": opencv_read,
    "PyAV decode (luma)": pyav_luma,
    "OpenCV read()+gray": opencv_gray,
    "OpenCV analysis (ref.)": opencv_reference,
    "decord batch+gray": decord_gray,
}


def frames_of(result: int | tuple | VideoMeasurement) -> int:
    if isinstance(result, VideoMeasurement):
        return result.frames_read
    return result[0] if isinstance(result, tuple) else result


def pin_to_one_cpu() -> str:
    if not hasattr(os, "sched_setaffinity"):
        return "not pinned (no sched_setaffinity on this platform)"
    cpu = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    return f"pinned to CPU {cpu}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small corpus, one pass")
    parser.add_argument(
        "--repeats", type=int, default=None, help="passes (default 5, against noise; quick 1)"
    )
    args = parser.parse_args()
    repeats = args.repeats or (1 if args.quick else 5)

    cv2.setNumThreads(1)
    pinned = pin_to_one_cpu()
    folder, clips, frames = corpus(args.quick)
    paths = [folder / clip.name for clip in clips]
    footage = len(paths) * frames / FPS
    for path in paths:  # warm the page cache
        path.read_bytes()
    measure_video(paths[0])  # load the fused kernel's compiled code before timing anything

    best = {name: np.full(len(paths), np.inf) for name in METHODS}
    results: dict[str, list[int | VideoMeasurement]] = {name: [] for name in METHODS}
    for rep in range(repeats):
        print(f"  pass {rep + 1}/{repeats}", file=sys.stderr, flush=True)
        for i, path in enumerate(paths):
            for name, method in METHODS.items():
                started = time.perf_counter()
                result = method(path)
                best[name][i] = min(best[name][i], time.perf_counter() - started)
                if rep == 0:
                    results[name].append(result)

    failed = False
    for name, per_clip in results.items():
        counts = [frames_of(r) for r in per_clip]
        if counts != [frames] * len(paths):
            print(f"FRAME COUNT MISMATCH: {name} delivered {counts}, expected {frames} each")
            failed = True

    total = {name: float(times.sum()) for name, times in best.items()}
    n_frames = len(paths) * frames
    print(
        f"corpus: {len(paths)} clips × {frames} frames ({WIDTH}×{HEIGHT}, {FPS} fps, H.264) = "
        f"{footage / 60:.1f} min in {folder}"
    )
    print(f"one core: {pinned}, cv2.setNumThreads(1), single-threaded decoders; best of {repeats}")
    print()
    print(f"{'method':24s} {'wall s':>8s} {'µs/frame':>9s} {'× real time':>12s}")
    for name, seconds in total.items():
        print(
            f"{name:24s} {seconds:8.2f} {seconds / n_frames * 1e6:9.1f} {footage / seconds:12.0f}"
        )

    exhaustive = total["measure (exhaustive)"]
    print()
    print("overhead (measure exhaustive / decode-only):")
    for baseline in ("PyAV decode (luma)", "OpenCV grab()", "OpenCV read()"):
        print(f"  vs {baseline:20s} {exhaustive / total[baseline]:.2f}×")
    print(
        f"fused kernel vs OpenCV reference analysis: "
        f"{total['OpenCV analysis (ref.)'] / exhaustive:.2f}× faster end to end"
    )
    mismatches = [
        clip.name
        for clip, fused, reference in zip(
            clips, results["measure (exhaustive)"], results["OpenCV analysis (ref.)"], strict=True
        )
        if (fused.sharpness, fused.motion, fused.chroma) != reference[1:]
    ]
    print(f"exact: {'yes, every clip bit for bit' if not mismatches else f'NO: {mismatches}'}")
    failed = failed or bool(mismatches)

    sampled_name = f"measure (stride {SAMPLING.stride})"
    print()
    print(
        f"sampling mode stride {SAMPLING.stride}: "
        f"{total['measure (exhaustive)'] / total[sampled_name]:.2f}× the exhaustive speed, "
        f"{total[sampled_name] / total['OpenCV grab()']:.2f}× OpenCV grab()"
    )
    for statistic in STATISTICS:
        full = np.array([getattr(r, statistic) for r in results["measure (exhaustive)"]])
        sampled = np.array([getattr(r, statistic) for r in results[sampled_name]])
        rho = spearmanr(full, sampled).statistic
        worst = float(np.max(np.abs(sampled - full) / np.maximum(np.abs(full), 1e-9)))
        print(f"  {statistic:10s} Spearman ρ = {rho:.4f}   max relative difference {worst:.2e}")

    print()
    print("per clip (exhaustive):")
    for clip, result, seconds in zip(
        clips, results["measure (exhaustive)"], best["measure (exhaustive)"], strict=True
    ):
        assert isinstance(result, VideoMeasurement)
        planted = (
            f"{clip.texture:6s} blur {clip.blur:3.1f} {clip.camera:8s} "
            f"{'gray ' if clip.gray else 'color'} noise {clip.noise:3.1f}"
        )
        print(
            f"  {clip.name} {planted}  sharpness {result.sharpness:8.1f}  motion "
            f"{result.motion:6.2f}  chroma {result.chroma:5.2f}  {frames / FPS / seconds:5.0f}×"
        )

    realtime = footage / exhaustive
    print()
    if args.quick:
        print("targets (--quick: small corpus, one pass; not comparable to a full run):")
    else:
        print("targets:")
    print(
        f"  exhaustive ≥ {TARGET_REALTIME:.0f}× real time per core: {realtime:.0f}× "
        f"{'met' if realtime >= TARGET_REALTIME else 'MISSED'}"
    )
    for baseline in ("PyAV decode (luma)", "OpenCV grab()", "OpenCV read()"):
        overhead = exhaustive / total[baseline]
        print(
            f"  overhead ≤ {TARGET_OVERHEAD}× decode-only ({baseline}): {overhead:.2f}× "
            f"{'met' if overhead <= TARGET_OVERHEAD else 'MISSED'}"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
