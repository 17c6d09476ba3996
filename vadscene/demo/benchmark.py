"""The demo benchmark on disk: ground truth, planted model scores, probe inputs, manifest.

Layout written under ``root``::

    videos/<video_id>.mp4          H.264 (yuv420p, +faststart), 320x240, 30 fps, 5-12 s
    ground_truth.txt               UCF-Crime temporal annotation format (see below)
    frame_counts.txt               "<video_id> <num_frames>" per line
    scores/<model>/<video_id>.npy  float32, one score in [0, 1] per frame
    models.json                    [{name, family, behaviour, path}] (path relative to root)
    definition_scores/<model>/     <video_id>.npy float32 (frames × definitions) +
                                   definitions.txt: the model scored once per definition
    features/<model>/<video_id>.npy float32 (16-frame snippets × 32) pre-classifier features
    queries.json                   the D@5 queries [{definition, classes}]
    probes.json                    {definition_scores, features, queries, feature_snippet_frames}
    demo.json                      manifest read back by :func:`load_demo_manifest`

``ground_truth.txt`` has one line per video, ``<video_id>.mp4  <Category>  s1  e1  s2  e2``,
with -1 for a missing interval (normal videos: ``Normal  -1  -1  -1  -1``).  Numbers are frame
indices; **ends are exclusive here** (``s <= frame < e``), the same convention as
:attr:`DemoVideo.anomalous_intervals`.

Scores are computed from the design's metadata (:mod:`vadscene.demo.videos`) and
``numpy.random.Generator`` streams only (never from decoded pixels), so the same seed gives
byte-identical text, JSON and ``.npy`` files.
"""

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vadscene.core.errors import VadsceneError
from vadscene.demo.videos import DEMO_VIDEOS, HEIGHT, WIDTH, DemoVideo, write_demo_video

MANIFEST_FORMAT = "vadscene-demo/1"


@dataclass(frozen=True)
class DemoModel:
    """A fake detector whose score behaviour is planted, so audits have a known answer."""

    name: str
    family: str
    behaviour: str


DEMO_MODELS: tuple[DemoModel, ...] = (
    DemoModel(
        "grayscale_keyed",
        "demo-cnn",
        "Scene-biased: scores grayscale footage ~0.65 and colour footage ~0.2 regardless of "
        "content, plus only a weak (+0.12) response on anomalous frames.",
    ),
    DemoModel(
        "localizer",
        "demo-cnn",
        "Localizes events well within a video (+0.45 on anomalous frames, smoothed edges) but "
        "adds a random per-video offset in [0, 0.45], so scores do not compare across videos.",
    ),
    DemoModel(
        "video_constant",
        "demo-vlm",
        "One constant score per video: ~0.65 for anomalous videos and ~0.3 for normal ones, "
        "with per-video noise (sd 0.1); no temporal localization at all.",
    ),
    DemoModel(
        "random_baseline",
        "demo-vlm",
        "Smooth random noise around 0.5, unrelated to scene or anomaly.",
    ),
)


@dataclass(frozen=True)
class DemoBenchmark:
    """Where a generated demo benchmark lives and what it contains."""

    root: Path
    videos: tuple[DemoVideo, ...]
    models: tuple[DemoModel, ...]
    video_dir: Path
    ground_truth_path: Path
    scores_dir: Path


# Independent RNG streams, keyed so that adding a video or a model never shifts another stream.
_STREAM_PIXELS = 0
_STREAM_SCORES = 1
_STREAM_DEFINITIONS = 2
_STREAM_FEATURES = 3

DEMO_DEFINITIONS: dict[str, tuple[str, ...]] = {
    "Arson": ("Arson",),
    "Explosion": ("Explosion",),
    "Fighting": ("Fighting",),
    "Robbery": ("Robbery",),
    "Shooting": ("Shooting",),
    "violence": ("Fighting", "Robbery", "Shooting"),
    "fire": ("Arson", "Explosion"),
}
"""Definition → the anomaly classes it names: one per class (DC-Disc, DC-DetΔ) and two
broader ones queried by D@5."""
DEMO_QUERIES = ("violence", "fire", "Fighting", "Robbery", "Explosion")
DEMO_DEFINITION_MODELS: dict[str, str] = {
    "localizer": "follows the definition: +0.45 on events of the named classes, +0.1 on others",
    "video_constant": "definition-blind: the same scores for every definition",
}
"""Models that also ship definition scores and features, and how their scores follow the
definition."""
DEMO_SNIPPET_FRAMES = 16
DEMO_FEATURE_DIM = 32


def _rng(seed: int, *keys: int) -> np.random.Generator:
    return np.random.default_rng([seed, *keys])


def _smooth_noise(rng: np.random.Generator, n: int, sigma: float) -> np.ndarray:
    """Unit-variance noise correlated over ~``sigma`` frames, like real per-frame score curves."""
    radius = int(3 * sigma)
    x = np.arange(-radius, radius + 1)
    kernel = np.exp(-0.5 * (x / sigma) ** 2)
    kernel /= np.sqrt((kernel**2).sum())
    return np.convolve(rng.standard_normal(n + 2 * radius), kernel, mode="valid")


def _anomaly_mask(video: DemoVideo) -> np.ndarray:
    mask = np.zeros(video.num_frames)
    for start, end in video.anomalous_intervals:
        mask[start:end] = 1.0
    return mask


def _model_scores(model: DemoModel, video: DemoVideo, rng: np.random.Generator) -> np.ndarray:
    """Scores implementing each model's ``behaviour`` text from metadata and noise only."""
    n = video.num_frames
    anomalous = _anomaly_mask(video)
    match model.name:
        case "grayscale_keyed":
            base = 0.65 if video.planted["color"] == "grayscale" else 0.2
            scores = base + 0.12 * anomalous + 0.04 * _smooth_noise(rng, n, 15)
        case "localizer":
            radius = 18
            ramp = np.exp(-0.5 * (np.arange(-radius, radius + 1) / 6) ** 2)
            soft = np.convolve(np.pad(anomalous, radius, mode="edge"), ramp / ramp.sum(), "valid")
            offset = rng.uniform(0.0, 0.45)
            scores = offset + 0.45 * soft + 0.03 * _smooth_noise(rng, n, 10)
        case "video_constant":
            level = 0.65 if video.anomalous_intervals else 0.3
            scores = np.full(n, np.clip(level + 0.1 * rng.standard_normal(), 0.02, 0.98))
        case "random_baseline":
            scores = 0.5 + 0.18 * _smooth_noise(rng, n, 20)
        case _:
            raise ValueError(f"no planted behaviour for demo model {model.name!r}")
    return np.clip(scores, 0.0, 1.0).astype(np.float32)


def _definition_scores(name: str, video: DemoVideo, rng: np.random.Generator) -> np.ndarray:
    """(frames × definitions) scores: ``localizer`` raises only the events its definition
    names; ``video_constant`` repeats one score for every definition."""
    n = video.num_frames
    if name == "video_constant":
        level = 0.65 if video.anomalous_intervals else 0.3
        constant = np.clip(level + 0.1 * rng.standard_normal(), 0.02, 0.98)
        return np.full((n, len(DEMO_DEFINITIONS)), constant, dtype=np.float32)
    radius = 18
    ramp = np.exp(-0.5 * (np.arange(-radius, radius + 1) / 6) ** 2)
    soft = np.convolve(
        np.pad(_anomaly_mask(video), radius, mode="edge"), ramp / ramp.sum(), "valid"
    )
    offset = rng.uniform(0.0, 0.2)
    columns = [
        offset
        + (0.45 if video.category in classes else 0.1) * soft
        + 0.03 * _smooth_noise(rng, n, 10)
        for classes in DEMO_DEFINITIONS.values()
    ]
    return np.clip(np.column_stack(columns), 0.0, 1.0).astype(np.float32)


def _features(name: str, video: DemoVideo, rng: np.random.Generator) -> np.ndarray:
    """Per-snippet features: a shared anomaly direction scaled by the snippet's anomalous
    share (strong for ``localizer``; ``video_constant`` only sees whether the video holds an
    anomaly), a per-video scene offset and noise."""
    starts = np.arange(0, video.num_frames, DEMO_SNIPPET_FRAMES)
    share: np.ndarray = np.add.reduceat(_anomaly_mask(video), starts) / np.diff(
        np.r_[starts, video.num_frames]
    )
    direction = np.zeros(DEMO_FEATURE_DIM)
    direction[0] = 1.0
    if name == "video_constant":
        share = np.full(starts.size, float(bool(video.anomalous_intervals)))
    scene = rng.normal(0.0, 0.6, DEMO_FEATURE_DIM)
    noise = rng.normal(0.0, 0.5, (starts.size, DEMO_FEATURE_DIM))
    return (1.0 + 2.0 * share[:, None] * direction + scene + noise).astype(np.float32)


def _write_probe_inputs(root: Path, seed: int) -> None:
    """Definition scores, features, queries and the probes.json that lists them."""
    definition_entries, feature_entries = [], []
    for m_index, name in enumerate(DEMO_DEFINITION_MODELS):
        family = next(m.family for m in DEMO_MODELS if m.name == name)
        definitions_dir = root / "definition_scores" / name
        features_dir = root / "features" / name
        definitions_dir.mkdir(parents=True, exist_ok=True)
        features_dir.mkdir(parents=True, exist_ok=True)
        (definitions_dir / "definitions.txt").write_text("\n".join(DEMO_DEFINITIONS) + "\n")
        for v_index, video in enumerate(DEMO_VIDEOS):
            np.save(
                definitions_dir / f"{video.video_id}.npy",
                _definition_scores(name, video, _rng(seed, _STREAM_DEFINITIONS, m_index, v_index)),
            )
            np.save(
                features_dir / f"{video.video_id}.npy",
                _features(name, video, _rng(seed, _STREAM_FEATURES, m_index, v_index)),
            )
        definition_entries.append(
            {"name": name, "family": family, "path": f"definition_scores/{name}"}
        )
        feature_entries.append({"name": name, "family": family, "path": f"features/{name}"})
    queries = [{"definition": d, "classes": list(DEMO_DEFINITIONS[d])} for d in DEMO_QUERIES]
    (root / "queries.json").write_text(_dumps(queries))
    probes = {
        "definition_scores": definition_entries,
        "features": feature_entries,
        "queries": "queries.json",
        "feature_snippet_frames": DEMO_SNIPPET_FRAMES,
    }
    (root / "probes.json").write_text(_dumps(probes))


def _video_record(video: DemoVideo) -> dict[str, object]:
    return {
        "video_id": video.video_id,
        "category": video.category,
        "num_frames": video.num_frames,
        "fps": video.fps,
        "anomalous_intervals": [list(interval) for interval in video.anomalous_intervals],
        "planted": dict(video.planted),
        "path": f"videos/{video.video_id}.mp4",
    }


def _ground_truth_line(video: DemoVideo) -> str:
    bounds = [b for interval in video.anomalous_intervals for b in interval]
    bounds += [-1] * (4 - len(bounds))
    return "  ".join([f"{video.video_id}.mp4", video.category, *map(str, bounds)]) + "\n"


def _dumps(obj: object) -> str:
    return json.dumps(obj, indent=2, sort_keys=True) + "\n"


def generate_demo_benchmark(
    root: Path,
    *,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> DemoBenchmark:
    """Write the demo benchmark under ``root`` (created if missing; own files overwritten).

    ``progress(done, total)`` is called after each video so a CLI can show a bar; videos
    dominate the run time.  The manifest ``demo.json`` is written last, so its presence means
    a complete benchmark.
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise VadsceneError(f"the demo seed must be an integer ≥ 0, got {seed!r}")
    root = Path(root)
    video_dir, scores_dir = root / "videos", root / "scores"
    video_dir.mkdir(parents=True, exist_ok=True)
    for model in DEMO_MODELS:
        (scores_dir / model.name).mkdir(parents=True, exist_ok=True)

    ground_truth_path = root / "ground_truth.txt"
    ground_truth_path.write_text("".join(_ground_truth_line(v) for v in DEMO_VIDEOS))
    (root / "frame_counts.txt").write_text(
        "".join(f"{v.video_id} {v.num_frames}\n" for v in DEMO_VIDEOS)
    )
    for m_index, model in enumerate(DEMO_MODELS):
        for v_index, video in enumerate(DEMO_VIDEOS):
            rng = _rng(seed, _STREAM_SCORES, m_index, v_index)
            np.save(
                scores_dir / model.name / f"{video.video_id}.npy", _model_scores(model, video, rng)
            )
    model_records = [
        {"name": m.name, "family": m.family, "behaviour": m.behaviour, "path": f"scores/{m.name}"}
        for m in DEMO_MODELS
    ]
    (root / "models.json").write_text(_dumps(model_records))
    _write_probe_inputs(root, seed)

    for v_index, video in enumerate(DEMO_VIDEOS):
        write_demo_video(
            video, video_dir / f"{video.video_id}.mp4", _rng(seed, _STREAM_PIXELS, v_index)
        )
        if progress is not None:
            progress(v_index + 1, len(DEMO_VIDEOS))

    manifest = {
        "format": MANIFEST_FORMAT,
        "seed": seed,
        "width": WIDTH,
        "height": HEIGHT,
        "video_dir": "videos",
        "ground_truth": "ground_truth.txt",
        "frame_counts": "frame_counts.txt",
        "scores_dir": "scores",
        "models": model_records,
        "videos": [_video_record(v) for v in DEMO_VIDEOS],
    }
    (root / "demo.json").write_text(_dumps(manifest))
    return load_demo_manifest(root)


def load_demo_manifest(root: Path) -> DemoBenchmark:
    """Read back a benchmark written by :func:`generate_demo_benchmark` from ``root/demo.json``."""
    root = Path(root)
    path = root / "demo.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: generate the demo benchmark first")
    manifest = json.loads(path.read_text())
    if manifest.get("format") != MANIFEST_FORMAT:
        raise ValueError(f"{path} is not a {MANIFEST_FORMAT} manifest")
    videos = tuple(
        DemoVideo(
            video_id=v["video_id"],
            category=v["category"],
            num_frames=int(v["num_frames"]),
            fps=float(v["fps"]),
            anomalous_intervals=tuple((int(s), int(e)) for s, e in v["anomalous_intervals"]),
            planted=dict(v["planted"]),
        )
        for v in manifest["videos"]
    )
    models = tuple(DemoModel(m["name"], m["family"], m["behaviour"]) for m in manifest["models"])
    return DemoBenchmark(
        root=root,
        videos=videos,
        models=models,
        video_dir=root / manifest["video_dir"],
        ground_truth_path=root / manifest["ground_truth"],
        scores_dir=root / manifest["scores_dir"],
    )
