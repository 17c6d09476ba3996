"""The controlled two-event splice set of the selection probe DC-SelΔ
(docs/metrics.md, "Definition-conditioned probes"; [definitions] App. A.2).

Each splice is V = N0 ⊕ A ⊕ N1 ⊕ B ⊕ N2: two real anomaly spans A (class a) and B (class b ≠ a)
between three normal context segments. Spans are the maximal runs of frames holding exactly
one class, cut to whole feature steps; spans shorter than ``min_steps`` steps are dropped and
longer ones centre-cropped to ``max_steps``. For every ordered class pair (a, b) ``pairs``
source-span pairs are drawn (seeded; without replacement when the two classes offer that
many, else with replacement, so every ordered pair has ``pairs``) and each is built in
both orders (A first, then B first) with the same three contexts, drawn from the normal
videos. A model scored on the splices under definitions a and b gives DC-SelΔ through the
splices' events table (:func:`vadscene.audit.io.definitions.load_events`).

Written: the spliced videos (PyAV, H.264, deterministic encoder settings) or per-snippet
features, the ground truth (UCF-Crime text format, ends exclusive) with its frame counts, the
events table and the plan (where every segment came from).
"""

from __future__ import annotations

import csv
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import av
import cv2
import numpy as np

from vadscene.audit.io.definitions import FrameClasses
from vadscene.benchmark.frames import AuditInputError, GroundTruth
from vadscene.benchmark.readers import load_npy
from vadscene.benchmark.video_lists import video_id_from_entry

SEED = 7
_ENCODER = {"crf": "23", "preset": "veryfast", "x264-params": "mbtree=0", "threads": "1"}
"""Single-threaded, no macroblock tree: the same frames always give the same bytes."""


@dataclass(frozen=True)
class Segment:
    video: str
    start: int  # source frame, inclusive
    end: int  # source frame, exclusive
    role: str  # N0, N1, N2 (normal context), A (target class), B (competitor class)
    klass: str | None  # the span's class (None for normal context)


@dataclass(frozen=True)
class Splice:
    splice_id: str
    target: str  # class a of the ordered pair
    competitor: str  # class b
    order: str  # "AB": the target's span first; "BA": the competitor's first
    segments: tuple[Segment, ...]  # in splice order N0, first span, N1, second span, N2

    @property
    def frames(self) -> int:
        return sum(s.end - s.start for s in self.segments)

    def events(self) -> list[tuple[int, int, str]]:
        """(start, end, class) of the two spans in splice frames."""
        out, position = [], 0
        for segment in self.segments:
            length = segment.end - segment.start
            if segment.klass is not None:
                out.append((position, position + length, segment.klass))
            position += length
        return out


def single_class_spans(
    ground_truth: GroundTruth,
    classes: FrameClasses,
    *,
    step_frames: int,
    min_steps: int,
    max_steps: int,
) -> dict[str, list[tuple[str, int, int]]]:
    """Class → spans (video, start, end): maximal runs of frames whose class set is one class,
    shrunk to whole steps of the video's step grid, at least ``min_steps`` steps, centre-
    cropped to ``max_steps`` steps."""
    singles = {i: next(iter(s)) for i, s in enumerate(classes.class_sets) if len(s) == 1}
    spans: dict[str, list[tuple[str, int, int]]] = {c: [] for c in classes.classes}
    for v, video in enumerate(ground_truth.video_ids):
        codes = classes.codes[ground_truth.offsets[v] : ground_truth.offsets[v + 1]]
        change = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1], True])
        for start, end in itertools.pairwise(change):
            code = int(codes[start])
            if code not in singles:
                continue
            first = -(-int(start) // step_frames) * step_frames
            last = int(end) // step_frames * step_frames
            steps = (last - first) // step_frames
            if steps < min_steps:
                continue
            if steps > max_steps:
                first += (steps - max_steps) // 2 * step_frames
                last = first + max_steps * step_frames
            spans[singles[code]].append((video, first, last))
    return spans


def plan_splices(
    ground_truth: GroundTruth,
    classes: FrameClasses,
    *,
    seed: int = SEED,
    pairs: int = 20,
    step_frames: int = 16,
    min_steps: int = 5,
    max_steps: int = 32,
    context_steps: int = 8,
) -> list[Splice]:
    """The splice set ([definitions] App. A.2): ``pairs`` span pairs per ordered class pair,
    both orders, contexts from the normal videos; same arguments → the same plan."""
    if min(pairs, step_frames, min_steps, max_steps, context_steps) < 1 or min_steps > max_steps:
        raise AuditInputError(
            "splices: pairs, step frames, min/max steps and context steps must be ≥ 1 and "
            f"min steps ≤ max steps (got {pairs}, {step_frames}, {min_steps}, {max_steps}, "
            f"{context_steps})"
        )
    spans = single_class_spans(
        ground_truth, classes, step_frames=step_frames, min_steps=min_steps, max_steps=max_steps
    )
    usable = [c for c in classes.classes if spans[c]]
    context = context_steps * step_frames
    counts = ground_truth.frame_counts
    normal = [
        (video, int(counts[v]))
        for v, video in enumerate(ground_truth.video_ids)
        if not ground_truth.labels[ground_truth.offsets[v] : ground_truth.offsets[v + 1]].any()
        and counts[v] >= context
    ]
    if len(usable) < 2:
        raise AuditInputError(
            f"{classes.source}: splices need spans of at least two classes of ≥ {min_steps} "
            f"steps of {step_frames} frames; found {usable or 'none'}"
        )
    if not normal:
        raise AuditInputError(
            f"{ground_truth.source}: splices need a normal video of at least {context} frames "
            "for the context segments; there is none"
        )
    rng = np.random.default_rng(seed)
    plan = []
    for a in usable:
        for b in usable:
            if a == b:
                continue
            product = len(spans[a]) * len(spans[b])
            # Distinct pairs where there are enough, so every ordered pair gets `pairs`.
            chosen = rng.choice(product, size=pairs, replace=product < pairs)
            for k, index in enumerate(chosen):
                span_a = spans[a][index // len(spans[b])]
                span_b = spans[b][index % len(spans[b])]
                contexts = []
                for role in ("N0", "N1", "N2"):
                    video, length = normal[int(rng.integers(len(normal)))]
                    start = int(rng.integers(0, (length - context) // step_frames + 1))
                    contexts.append(
                        Segment(
                            video, start * step_frames, start * step_frames + context, role, None
                        )
                    )
                target = Segment(span_a[0], span_a[1], span_a[2], "A", a)
                competitor = Segment(span_b[0], span_b[1], span_b[2], "B", b)
                for order, (first, second) in (
                    ("AB", (target, competitor)),
                    ("BA", (competitor, target)),
                ):
                    plan.append(
                        Splice(
                            f"splice_{_slug(a)}__{_slug(b)}_{k:02d}_{order}",
                            a,
                            b,
                            order,
                            (contexts[0], first, contexts[1], second, contexts[2]),
                        )
                    )
    return plan


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-") or "class"


def write_plan_files(plan: list[Splice], out_dir: Path, *, step_frames: int) -> dict[str, Path]:
    """Ground truth (UCF-Crime text, ends exclusive), frame counts, events table, plan."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {
        "ground_truth": out_dir / "ground_truth.txt",
        "frame_counts": out_dir / "frame_counts.txt",
        "events": out_dir / "events.csv",
        "plan": out_dir / "splices.csv",
    }
    truth_lines, count_lines = [], []
    with (
        paths["events"].open("w", newline="", encoding="utf-8") as events_file,
        paths["plan"].open("w", newline="", encoding="utf-8") as plan_file,
    ):
        events = csv.writer(events_file, lineterminator="\n")
        events.writerow(["video", "start", "end", "class"])
        sources = csv.writer(plan_file, lineterminator="\n")
        sources.writerow(
            ["video", "target", "competitor", "order", "role", "source", "start", "end"]
        )
        for splice in plan:
            spans = splice.events()
            bounds = " ".join(f"{s} {e}" for s, e, _ in spans)
            truth_lines.append(f"{splice.splice_id}.mp4 Splice {bounds}\n")
            count_lines.append(f"{splice.splice_id} {splice.frames}\n")
            events.writerows([splice.splice_id, s, e, c] for s, e, c in spans)
            sources.writerows(
                [
                    *(splice.splice_id, splice.target, splice.competitor, splice.order),
                    *(seg.role, seg.video, seg.start, seg.end),
                ]
                for seg in splice.segments
            )
    paths["ground_truth"].write_text("".join(truth_lines), encoding="utf-8")
    paths["frame_counts"].write_text("".join(count_lines), encoding="utf-8")
    (out_dir / "README.txt").write_text(
        f"{len(plan)} splices N0 + A + N1 + B + N2 (feature steps of {step_frames} frames).\n"
        "ground_truth.txt: UCF-Crime format, frame intervals, end exclusive.\n"
        "events.csv: the two spans' classes, for vadscene audit --events.\n",
        encoding="utf-8",
    )
    return paths


def write_splice_videos(
    plan: list[Splice],
    video_files: dict[str, Path],
    out_dir: Path,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> list[Path]:
    """Encode every splice from its source videos' frames (H.264, yuv420p). The size and frame
    rate are the first splice's first source's (even size); other sources are resized."""
    missing = sorted({s.video for p in plan for s in p.segments} - set(video_files))
    if missing:
        raise AuditInputError(
            f"splices: no video file for {len(missing)} source videos: {', '.join(missing[:10])}"
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    first = video_files[plan[0].segments[0].video]
    with av.open(str(first)) as container:
        stream = container.streams.video[0]
        width, height = stream.codec_context.width // 2 * 2, stream.codec_context.height // 2 * 2
        rate = stream.average_rate or 30
    written = []
    for done, splice in enumerate(plan, start=1):
        path = out_dir / f"{splice.splice_id}.mp4"
        with av.open(str(path), "w") as container:
            stream = container.add_stream("libx264", rate=rate, options=_ENCODER)
            stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
            for segment in splice.segments:
                for image in _frames(video_files[segment.video], segment, (width, height)):
                    frame = av.VideoFrame.from_ndarray(image, format="rgb24")
                    container.mux(stream.encode(frame.reformat(format="yuv420p")))
            container.mux(stream.encode())
        written.append(path)
        if progress is not None:
            progress(done, len(plan))
    return written


def _frames(path: Path, segment: Segment, size: tuple[int, int]) -> list[np.ndarray]:
    """Frames [start, end) of a video as RGB arrays of ``size``.

    Seeks to the keyframe before ``start`` and numbers frames by their timestamps at the
    stream's average rate (constant-rate footage, as the benchmarks' videos are), so a span
    deep in a long video is not decoded from the beginning; without usable timestamps, or
    when the seek lands past ``start``, it decodes from the first frame and counts.
    """
    try:
        images = _frames_after_seek(path, segment, size)
        if images is None:
            images = _frames_counted(path, segment, size)
    except (av.FFmpegError, OSError) as exc:
        raise AuditInputError(f"{path}: video {segment.video}: cannot decode ({exc})") from None
    if len(images) != segment.end - segment.start:
        raise AuditInputError(
            f"{path}: video {segment.video}: frames {segment.start}..{segment.end - 1} were "
            f"asked for but the video decodes {segment.start + len(images)} frames"
        )
    return images


def _rgb(frame: av.VideoFrame, size: tuple[int, int]) -> np.ndarray:
    image: np.ndarray = frame.to_ndarray(format="rgb24")
    if image.shape[1::-1] != size:
        image = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    return image


def _frames_after_seek(
    path: Path, segment: Segment, size: tuple[int, int]
) -> list[np.ndarray] | None:
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        rate, base = stream.average_rate, stream.time_base
        if not rate or not base:
            return None
        origin = stream.start_time or 0
        container.seek(origin + int(segment.start / rate / base), stream=stream, backward=True)
        images: list[np.ndarray] = []
        for frame in container.decode(stream):
            if frame.pts is None:
                return None
            index = round(float((frame.pts - origin) * base * rate))
            if not images and index > segment.start:
                return None  # the seek overshot: count from the start instead
            if index >= segment.end:
                break
            if index >= segment.start:
                images.append(_rgb(frame, size))
        return images


def _frames_counted(path: Path, segment: Segment, size: tuple[int, int]) -> list[np.ndarray]:
    images: list[np.ndarray] = []
    with av.open(str(path)) as container:
        for index, frame in enumerate(container.decode(video=0)):
            if index >= segment.end:
                break
            if index >= segment.start:
                images.append(_rgb(frame, size))
    return images


def write_splice_features(
    plan: list[Splice], features_dir: Path, out_dir: Path, *, step_frames: int
) -> list[Path]:
    """The same splices at the feature level: rows [start/step, end/step) of each source's
    (snippets × d) features, concatenated; one ``.npy`` per splice."""
    files = {video_id_from_entry(f.name): f for f in sorted(Path(features_dir).glob("*.npy"))}
    out_dir.mkdir(parents=True, exist_ok=True)
    cache: dict[str, np.ndarray] = {}
    written = []
    for splice in plan:
        rows = []
        for segment in splice.segments:
            if segment.video not in files:
                raise AuditInputError(
                    f"{features_dir}: video {segment.video}: no feature file for this source"
                )
            if segment.video not in cache:
                cache[segment.video] = load_npy(files[segment.video])
            features = cache[segment.video]
            first, last = segment.start // step_frames, segment.end // step_frames
            if features.ndim != 2 or features.shape[0] < last:
                raise AuditInputError(
                    f"{files[segment.video]}: video {segment.video}: expected (snippets, d) "
                    f"features with at least {last} snippets, got shape {features.shape}"
                )
            rows.append(features[first:last])
        path = out_dir / f"{splice.splice_id}.npy"
        np.save(path, np.concatenate(rows))
        written.append(path)
    return written
