"""Deterministic synthetic VAD benchmark with planted scene factors.

Why this exists: every other part of vadscene (labelling, publishing, score audits) needs a
benchmark to run on, and real ones (UCF-Crime, XD-Violence) are tens of gigabytes behind
licence forms.  This module writes a tiny benchmark in the UCF-Crime layout whose scene
factors and model behaviours are *known*, so a user can check that the tool recovers what
was planted before trusting it on real data, and so tests need no external files.

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

Planted design
--------------
The twelve videos follow the first seven columns of a 12-run Plackett-Burman design: the
anomaly flag and the six factors are each split 6/6 and every pair of them appears in all
four pole combinations exactly three times.  Hence no factor is confounded with another
factor or with the anomaly, and a model that keys on one factor cannot be mistaken for one
that keys on another.

=======================  ==========  =========  ==========  ======  ===========  =======  =====
video_id                 category    color      resolution  motion  continuity   setting  crowd
=======================  ==========  =========  ==========  ======  ===========  =======  =====
Robbery001_x264          Robbery     grayscale  high        high    multi-view   indoor   few
Fighting001_x264         Fighting    color      low         high    single-view  indoor   many
Explosion001_x264        Explosion   color      high        low     multi-view   outdoor  many
Arson001_x264            Arson       grayscale  high        low     single-view  indoor   few
Fighting002_x264         Fighting    grayscale  low         low     single-view  outdoor  many
Shooting001_x264         Shooting    color      low         high    multi-view   outdoor  few
Normal_Videos_001_x264   Normal      grayscale  low         low     multi-view   indoor   many
Normal_Videos_002_x264   Normal      grayscale  high        high    multi-view   outdoor  many
Normal_Videos_003_x264   Normal      color      low         low     multi-view   indoor   few
Normal_Videos_004_x264   Normal      color      high        high    single-view  indoor   many
Normal_Videos_005_x264   Normal      grayscale  low         high    single-view  outdoor  few
Normal_Videos_006_x264   Normal      color      high        low     single-view  outdoor  few
=======================  ==========  =========  ==========  ======  ===========  =======  =====

Durations and anomalous intervals are in ``_DESIGN`` below; Fighting001, Fighting002 and
Shooting001 have two intervals.  How each pole is planted in the pixels:

* grayscale: the rendered RGB frame is replaced by its luma in all three channels (R=G=B).
* low resolution: the whole frame (overlay included) is Gaussian-blurred with sigma 3.
* high motion: hand-held camera shake of a few pixels per frame and fast walkers; low-motion
  videos have a static camera and slow walkers.
* multi-view: 2-3 distinct synthetic cameras with hard cuts every 2-3.5 s.
* indoor: wall, ceiling lights, shelves and tiled floor; outdoor: sky, buildings, road.
* crowd: 3 people ("few") or 14 ("many"), drawn as body ellipse plus head.

Anomalous intervals show a visible event in whichever camera is live: Fighting and Robbery
pull up to four people into a violently jittering brawl; Shooting adds muzzle flashes while
people flee the shooter; Arson adds flickering fire and smoke and people flee; Explosion adds
an expanding blast with a brightness flash, then fire, and people flee.  Outside the
intervals people walk normally again.

The seed drives textures, palettes, walkers, shake, cut times and model-score noise; the
design table above (ids, categories, durations, intervals, factors) is fixed.  Scores are
computed from this metadata and ``numpy.random.Generator`` streams only (never from decoded
pixels), so same seed -> byte-identical text, JSON and ``.npy`` files.  Videos are encoded
single-threaded and without x264's macroblock tree, which makes them byte-identical on one
machine too (not necessarily across FFmpeg builds or CPUs).
"""

import itertools
import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import av
import cv2
import numpy as np

from vadscene.core.errors import VadsceneError, WorkspaceError
from vadscene.measure.run import measure_workspace
from vadscene.store.workspace import GroundTruthRef, Workspace

WIDTH = 320
HEIGHT = 240
FPS = 30
MANIFEST_FORMAT = "vadscene-demo/1"

_MARGIN = 10  # background is rendered this much larger on each side so camera shake can crop
_SHARP_SIGMA = 3.0  # Gaussian blur sigma that plants "low resolution"
_CROWD_SIZE = {"few": 3, "many": 14}
_WALK_SPEED = {"low": (0.15, 0.6), "high": (2.5, 4.5)}  # px/frame
_SHAKE_STEP = 1.5  # px, std of the per-frame camera jolt for high-motion videos
_FLEE_SPEED = 6.0
_DATE = "2024-05-17"
# mbtree reads uninitialised memory in this x264 build, which made encodes differ from run to
# run even single-threaded; without it the same frames always give the same bytes.
_X264_OPTIONS = {"crf": "23", "preset": "veryfast", "x264-params": "mbtree=0"}


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
class DemoVideo:
    """One synthetic video and what was planted in it (the ground truth for audits)."""

    video_id: str
    category: str
    num_frames: int
    fps: float
    anomalous_intervals: tuple[tuple[int, int], ...]
    planted: dict[str, str] = field(hash=False)


@dataclass(frozen=True)
class DemoBenchmark:
    """Where a generated demo benchmark lives and what it contains."""

    root: Path
    videos: tuple[DemoVideo, ...]
    models: tuple[DemoModel, ...]
    video_dir: Path
    ground_truth_path: Path
    scores_dir: Path


def _video(
    video_id: str,
    category: str,
    seconds: int,
    intervals: tuple[tuple[int, int], ...],
    poles: tuple[str, str, str, str, str, str],
) -> DemoVideo:
    keys = ("color", "resolution", "motion", "continuity", "setting", "crowd")
    planted = dict(zip(keys, poles, strict=True))
    return DemoVideo(video_id, category, seconds * FPS, float(FPS), intervals, planted)


# Poles in order: color, resolution, motion, continuity, setting, crowd (see module docstring).
# fmt: off
_DESIGN: tuple[DemoVideo, ...] = (
    _video("Robbery001_x264", "Robbery", 10, ((120, 210),),
           ("grayscale", "high", "high", "multi-view", "indoor", "few")),
    _video("Fighting001_x264", "Fighting", 9, ((60, 140), (190, 240)),
           ("color", "low", "high", "single-view", "indoor", "many")),
    _video("Explosion001_x264", "Explosion", 12, ((150, 240),),
           ("color", "high", "low", "multi-view", "outdoor", "many")),
    _video("Arson001_x264", "Arson", 8, ((90, 200),),
           ("grayscale", "high", "low", "single-view", "indoor", "few")),
    _video("Fighting002_x264", "Fighting", 7, ((40, 100), (140, 180)),
           ("grayscale", "low", "low", "single-view", "outdoor", "many")),
    _video("Shooting001_x264", "Shooting", 10, ((75, 120), (200, 255)),
           ("color", "low", "high", "multi-view", "outdoor", "few")),
    _video("Normal_Videos_001_x264", "Normal", 9, (),
           ("grayscale", "low", "low", "multi-view", "indoor", "many")),
    _video("Normal_Videos_002_x264", "Normal", 10, (),
           ("grayscale", "high", "high", "multi-view", "outdoor", "many")),
    _video("Normal_Videos_003_x264", "Normal", 8, (),
           ("color", "low", "low", "multi-view", "indoor", "few")),
    _video("Normal_Videos_004_x264", "Normal", 6, (),
           ("color", "high", "high", "single-view", "indoor", "many")),
    _video("Normal_Videos_005_x264", "Normal", 5, (),
           ("grayscale", "low", "high", "single-view", "outdoor", "few")),
    _video("Normal_Videos_006_x264", "Normal", 7, (),
           ("color", "high", "low", "single-view", "outdoor", "few")),
)
# fmt: on

# Palettes (RGB).  Each camera of a multi-view video takes a different entry so cuts are stark.
_SKIES = ((110, 160, 225), (160, 190, 215), (215, 170, 130), (85, 115, 170))
_BUILDINGS = ((150, 75, 60), (170, 170, 165), (205, 185, 150), (90, 100, 125), (120, 145, 110))
_GROUNDS = ((110, 110, 115), (95, 125, 75), (150, 135, 115))
_WALLS = ((220, 205, 165), (165, 205, 180), (175, 195, 225), (225, 175, 165))
_FLOORS = (
    ((205, 205, 200), (150, 150, 155)),
    ((175, 125, 80), (135, 95, 60)),
    ((95, 115, 150), (65, 80, 110)),
)
_EVENT_BEHAVIOUR = {
    "Fighting": "brawl",
    "Robbery": "brawl",
    "Shooting": "shoot",
    "Arson": "fire",
    "Explosion": "blast",
}
_BRAWL_OFFSETS = np.array([[-12.0, 0.0], [12.0, 2.0], [0.0, -5.0], [4.0, 6.0]])  # px from centre
_BLAST_FRAMES = 15  # Explosion: blast flash, then fire for the rest of the interval
# Per camera: height fraction of the horizon / wall bottom, and exposure gain.  Cameras must
# differ in layout and brightness, not just palette, so cuts stay stark in grayscale and blur.
_VIEW_EDGE = (0.26, 0.50, 0.38)
_VIEW_GAIN = (1.0, 0.72, 1.15)

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


def _smooth_texture(rng: np.random.Generator, h: int, w: int, cell: int) -> np.ndarray:
    """Unit-scale noise, smooth over ``cell`` pixels: surfaces look like worn concrete, not flat."""
    coarse = rng.standard_normal((h // cell + 2, w // cell + 2)).astype(np.float32)
    return cv2.resize(coarse, (w, h), interpolation=cv2.INTER_CUBIC)


def _finish(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Add texture (smooth + fine grain) so sharp footage has real high-frequency content."""
    h, w = img.shape[:2]
    img += 12.0 * _smooth_texture(rng, h, w, 16)[..., None]
    img += rng.normal(0.0, 4.0, (h, w, 1)).astype(np.float32)
    return np.clip(img, 0, 255).astype(np.uint8)


def _outdoor_background(
    rng: np.random.Generator, view: int, h: int, w: int
) -> tuple[np.ndarray, int]:
    """Sky, a row of windowed buildings, pavement and a road; returns image and horizon row."""
    offset = int(rng.integers(0, 12))
    horizon = int(h * (_VIEW_EDGE[view] + rng.uniform(0.0, 0.04)))
    img = np.empty((h, w, 3), np.float32)
    sky = np.array(_SKIES[(offset + view) % len(_SKIES)], np.float32)
    img[:horizon] = sky * np.linspace(1.12, 0.88, horizon, dtype=np.float32)[:, None, None]
    img[horizon:] = _GROUNDS[(offset + view) % len(_GROUNDS)]
    x = int(rng.integers(-20, 0))
    while x < w:
        bw, bh = int(rng.integers(28, 70)), int(rng.integers(horizon // 3, horizon - 3))
        colour = np.array(_BUILDINGS[int(rng.integers(len(_BUILDINGS)))]) * rng.uniform(0.85, 1.1)
        cv2.rectangle(img, (x, horizon - bh), (x + bw - 3, horizon), colour.tolist(), -1)
        for wy in range(horizon - bh + 5, horizon - 9, 10):
            for wx in range(x + 4, x + bw - 9, 9):
                lit = (240, 220, 140) if rng.random() < 0.3 else (colour * 0.45).tolist()
                cv2.rectangle(img, (wx, wy), (wx + 4, wy + 5), lit, -1)
        x += bw + int(rng.integers(0, 12))
    # Pavement with slab joints just below the buildings, then a road with a dashed centre line.
    depth = h - horizon
    kerb, road_top, road_bottom = horizon + depth // 5, horizon + depth // 2, h - depth // 6
    img[horizon:kerb] = img[horizon:kerb] * 1.25
    for sx in range(int(rng.integers(0, 14)), w, 14):
        cv2.line(img, (sx, horizon), (sx, kerb), (70, 70, 70), 1)
    img[road_top:road_bottom] = (72, 72, 78)
    lane = (road_top + road_bottom) // 2
    for dx in range(int(rng.integers(0, 30)), w, 30):
        cv2.rectangle(img, (dx, lane - 1), (dx + 15, lane + 1), (235, 235, 225), -1)
    return _finish(img, rng), horizon


def _indoor_background(
    rng: np.random.Generator, view: int, h: int, w: int
) -> tuple[np.ndarray, int]:
    """Wall, ceiling lights, stocked shelves, tiled floor; returns image and wall-bottom row."""
    offset = int(rng.integers(0, 12))
    wall_bottom = int(h * (_VIEW_EDGE[view] + 0.08 + rng.uniform(0.0, 0.04)))
    img = np.empty((h, w, 3), np.float32)
    wall = np.array(_WALLS[(offset + view) % len(_WALLS)], np.float32)
    img[:wall_bottom] = wall
    ceiling = int(0.12 * h)
    img[:ceiling] = wall * 0.6
    for lx in range(int(rng.integers(5, 40)), w, 70):
        cv2.rectangle(img, (lx, 4), (lx + 34, ceiling - 5), (250, 250, 238), -1)
    light, dark = _FLOORS[(offset + view) % len(_FLOORS)]
    tile = int(rng.integers(14, 24))
    yy, xx = np.mgrid[0 : h - wall_bottom, 0:w]
    checker = ((yy // tile + xx // tile) % 2).astype(bool)
    img[wall_bottom:] = np.where(checker[..., None], np.float32(dark), np.float32(light))
    img[wall_bottom:][(yy % tile == 0) | (xx % tile == 0)] = (60, 60, 60)
    x = int(rng.integers(0, 25))
    while x < w - 30:
        uw = int(rng.integers(40, 80))
        top = ceiling + int(rng.integers(5, 20))
        cv2.rectangle(img, (x, top), (x + uw, wall_bottom + 4), (85, 65, 45), -1)
        boards = np.linspace(top + 3, wall_bottom, 4).astype(int)
        for upper, lower in itertools.pairwise(boards):
            px = x + 3
            while px < x + uw - 6:
                pw = int(rng.integers(3, 8))
                colour = rng.integers(40, 250, 3).tolist()
                cv2.rectangle(
                    img, (px, upper + int(rng.integers(1, 5))), (px + pw, lower - 3), colour, -1
                )
                px += pw + 2
        x += uw + int(rng.integers(15, 45))
    return _finish(img, rng), wall_bottom


@dataclass
class _Scene:
    """One synthetic camera: a static background and the people walking in front of it."""

    camera: int
    background: np.ndarray  # (HEIGHT + 2*_MARGIN, WIDTH + 2*_MARGIN, 3) uint8 RGB
    floor: tuple[float, float]  # y-range (canvas rows) where feet may be
    event_centre: np.ndarray  # (2,) canvas x, y where fire/blast/brawl happen
    pos: np.ndarray  # (N, 2) float feet positions x, y
    walk: np.ndarray  # (N, 2) px/frame of normal walking
    clothes: list[tuple[int, int, int]]
    skin: list[tuple[int, int, int]]

    def step(self, behaviour: str, rng: np.random.Generator) -> None:
        """Advance people by one frame: normal walking, or the event's abnormal motion."""
        w = self.background.shape[1]
        lo = np.array([8.0, self.floor[0]])
        hi = np.array([w - 8.0, self.floor[1]])
        walkers = np.ones(len(self.pos), bool)
        if behaviour == "brawl":
            k = min(len(_BRAWL_OFFSETS), len(self.pos))
            pull = np.clip(self.event_centre + _BRAWL_OFFSETS[:k] - self.pos[:k], -6.0, 6.0)
            self.pos[:k] += pull + rng.normal(0.0, 6.0, (k, 2))
            walkers[:k] = False
        elif behaviour in ("shoot", "fire", "blast"):
            centre = self.pos[0] if behaviour == "shoot" else self.event_centre
            away = self.pos - centre
            away /= np.linalg.norm(away, axis=1, keepdims=True) + 1e-6
            fleeing = slice(1, None) if behaviour == "shoot" else slice(None)
            self.pos[fleeing] += _FLEE_SPEED * away[fleeing]
            self.pos[fleeing] += rng.normal(0.0, 1.0, self.pos[fleeing].shape)
            walkers[:] = False
        self.pos[walkers] += self.walk[walkers]
        # Walkers bounce off the borders of the walkable area; everyone stays inside it.
        self.walk[walkers[:, None] & ((self.pos < lo) | (self.pos > hi))] *= -1.0
        np.clip(self.pos, lo, hi, out=self.pos)

    def draw(self, canvas: np.ndarray) -> None:
        """Draw people back to front, scaled by depth so the floor reads as a ground plane."""
        top, bottom = self.floor
        for i in np.argsort(self.pos[:, 1], kind="stable"):
            x, y = self.pos[i]
            s = 0.8 + 0.9 * (y - top) / (bottom - top)
            body_h, body_w, head = 26 * s, 7 * s, max(3, round(4 * s))
            cx = round(x)
            cv2.ellipse(
                canvas,
                (cx, round(y - body_h / 2)),
                (round(body_w), round(body_h / 2)),
                0,
                0,
                360,
                self.clothes[i],
                -1,
            )
            cv2.circle(canvas, (cx, round(y - body_h - head + 2)), head, self.skin[i], -1)


def _make_scene(rng: np.random.Generator, video: DemoVideo, view: int) -> _Scene:
    h, w = HEIGHT + 2 * _MARGIN, WIDTH + 2 * _MARGIN
    if video.planted["setting"] == "indoor":
        background, edge = _indoor_background(rng, view, h, w)
    else:
        background, edge = _outdoor_background(rng, view, h, w)
    background = cv2.convertScaleAbs(background, alpha=_VIEW_GAIN[view])
    floor = (float(edge + 18), float(h - _MARGIN - 4))
    n = _CROWD_SIZE[video.planted["crowd"]]
    pos = np.column_stack([rng.uniform(15, w - 15, n), rng.uniform(*floor, n)])
    speed = rng.uniform(*_WALK_SPEED[video.planted["motion"]], n)
    angle = rng.uniform(0.0, 2 * np.pi, n)
    walk = np.column_stack([speed * np.cos(angle), 0.4 * speed * np.sin(angle)])
    centre = np.array([rng.uniform(0.3, 0.7) * w, rng.uniform(floor[0] + 5, floor[1] - 10)])
    return _Scene(
        camera=int(rng.integers(1, 17)) * 3 + view,  # distinct camera numbers within a video
        background=background,
        floor=floor,
        event_centre=centre,
        pos=pos,
        walk=walk,
        clothes=[tuple(c) for c in rng.integers(25, 235, (n, 3)).tolist()],
        skin=[tuple(c) for c in rng.integers(90, 220, (n, 1)).repeat(3, 1).tolist()],
    )


def _draw_fire(
    canvas: np.ndarray, centre: np.ndarray, growth: float, rng: np.random.Generator
) -> None:
    """Flickering flames under a smoke plume; the flicker makes fire obvious frame to frame."""
    cx, cy = round(centre[0]), round(centre[1])
    r = 8 + 24 * growth
    cv2.ellipse(
        canvas, (cx, round(cy - 1.8 * r)), (round(1.5 * r), round(r)), 0, 0, 360, (55, 55, 55), -1
    )
    for _ in range(6):
        ox, oy = rng.normal(0.0, 0.35 * r, 2)
        rr = r * rng.uniform(0.4, 0.9)
        colour = (255, int(rng.integers(80, 210)), int(rng.integers(0, 60)))
        cv2.ellipse(
            canvas,
            (round(cx + ox), round(cy - 0.8 * rr + oy)),
            (round(0.6 * rr), round(rr)),
            0,
            0,
            360,
            colour,
            -1,
        )


def _draw_event(
    canvas: np.ndarray, behaviour: str, scene: _Scene, k: int, length: int, rng: np.random.Generator
) -> None:
    """Draw the flash part of an event ``k`` frames into an interval of ``length`` frames."""
    if behaviour == "fire":
        _draw_fire(canvas, scene.event_centre, k / length, rng)
    elif behaviour == "blast":
        if k < _BLAST_FRAMES:
            phase = k / _BLAST_FRAMES
            glow = round(120 * (1 - phase))
            cv2.add(canvas, (glow, glow, glow, 0), dst=canvas)
            centre = (round(scene.event_centre[0]), round(scene.event_centre[1]))
            radius = round(12 + 95 * phase)
            cv2.circle(canvas, centre, radius, (255, 250, 215), -1)
            cv2.circle(canvas, centre, round(radius * 1.25), (255, 180, 70), 7)
        else:
            _draw_fire(canvas, scene.event_centre, 1.0, rng)
    elif behaviour == "shoot" and k % 5 < 2:
        x, y = scene.pos[0]
        muzzle = (round(x + 12), round(y - 24))
        cv2.circle(canvas, muzzle, 10, (255, 245, 190), -1)
        for dx, dy in ((20, 0), (13, 13), (13, -13)):
            cv2.line(canvas, muzzle, (muzzle[0] + dx, muzzle[1] + dy), (255, 255, 230), 2)


def _camera_schedule(rng: np.random.Generator, video: DemoVideo) -> np.ndarray:
    """Live camera per frame: all 0 for single-view, hard cuts every 2-3.5 s otherwise."""
    live = np.zeros(video.num_frames, np.int64)
    if video.planted["continuity"] == "single-view":
        return live
    views = int(rng.integers(2, 4))
    t, view = 0, 0
    while t < video.num_frames:
        length = int(rng.integers(2 * FPS, 7 * FPS // 2 + 1))
        live[t : t + length] = view
        t, view = t + length, (view + 1) % views
    return live


def _shake_path(rng: np.random.Generator, video: DemoVideo) -> np.ndarray:
    """Per-frame crop offset (dy, dx): a jittery AR(1) hand-held shake, or a static camera."""
    path = np.zeros((video.num_frames, 2), np.int64)
    if video.planted["motion"] == "low":
        return path
    jolts = rng.normal(0.0, _SHAKE_STEP, (video.num_frames, 2))
    current = np.zeros(2)
    for t, jolt in enumerate(jolts):
        current = np.clip(0.5 * current + jolt, -_MARGIN, _MARGIN)
        path[t] = np.rint(current)
    return path


def _event_clock(video: DemoVideo) -> list[tuple[int, int] | None]:
    """Per frame: (frames since the event started, event length), or None outside events."""
    clock: list[tuple[int, int] | None] = [None] * video.num_frames
    for start, end in video.anomalous_intervals:
        clock[start:end] = [(k, end - start) for k in range(end - start)]
    return clock


def _render_frame(
    video: DemoVideo,
    scene: _Scene,
    t: int,
    shake: np.ndarray,
    event: tuple[str, int, int] | None,
    rng: np.random.Generator,
) -> np.ndarray:
    canvas = scene.background.copy()
    scene.draw(canvas)
    if event is not None:
        behaviour, k, length = event
        _draw_event(canvas, behaviour, scene, k, length, rng)
    dy, dx = int(shake[0]) + _MARGIN, int(shake[1]) + _MARGIN
    frame = np.ascontiguousarray(canvas[dy : dy + HEIGHT, dx : dx + WIDTH])
    seconds = 5 * 60 + t // FPS
    stamp = f"CAM {scene.camera:02d}  {_DATE} 14:{seconds // 60:02d}:{seconds % 60:02d}"
    for colour, thickness in (((0, 0, 0), 3), ((255, 255, 255), 1)):
        cv2.putText(
            frame, stamp, (6, 14), cv2.FONT_HERSHEY_SIMPLEX, 0.38, colour, thickness, cv2.LINE_AA
        )
    # Degradations go last so they apply to everything a real camera would have degraded.
    if video.planted["resolution"] == "low":
        frame = cv2.GaussianBlur(frame, (0, 0), _SHARP_SIGMA)
    if video.planted["color"] == "grayscale":
        luma = cv2.cvtColor(frame, cv2.COLOR_RGB2GRAY)
        frame = cv2.merge((luma, luma, luma))
    return frame


def _write_video(video: DemoVideo, path: Path, rng: np.random.Generator) -> None:
    live = _camera_schedule(rng, video)
    scenes = [_make_scene(rng, video, view) for view in range(int(live.max()) + 1)]
    shake = _shake_path(rng, video)
    behaviour = _EVENT_BEHAVIOUR.get(video.category, "walk")
    clock = _event_clock(video)
    # movflags=+faststart puts the index first so browsers can start playback before download.
    with av.open(str(path), "w", container_options={"movflags": "+faststart"}) as container:
        stream = container.add_stream("libx264", rate=FPS)
        stream.width, stream.height, stream.pix_fmt = WIDTH, HEIGHT, "yuv420p"
        stream.options = dict(_X264_OPTIONS)
        stream.codec_context.thread_count = 1  # threaded x264 output depends on scheduling
        for t in range(video.num_frames):
            for scene in scenes:
                scene.step("walk" if clock[t] is None else behaviour, rng)
            event = None if clock[t] is None else (behaviour, *clock[t])
            rgb = _render_frame(video, scenes[live[t]], t, shake[t], event, rng)
            frame = av.VideoFrame.from_ndarray(rgb, format="rgb24")
            frame.pts = t
            container.mux(stream.encode(frame))
        container.mux(stream.encode())


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
    share = np.add.reduceat(_anomaly_mask(video), starts) / np.diff(np.r_[starts, video.num_frames])
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
        for v_index, video in enumerate(_DESIGN):
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
    ground_truth_path.write_text("".join(_ground_truth_line(v) for v in _DESIGN))
    (root / "frame_counts.txt").write_text(
        "".join(f"{v.video_id} {v.num_frames}\n" for v in _DESIGN)
    )
    for m_index, model in enumerate(DEMO_MODELS):
        for v_index, video in enumerate(_DESIGN):
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

    for v_index, video in enumerate(_DESIGN):
        _write_video(
            video, video_dir / f"{video.video_id}.mp4", _rng(seed, _STREAM_PIXELS, v_index)
        )
        if progress is not None:
            progress(v_index + 1, len(_DESIGN))

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
        "videos": [_video_record(v) for v in _DESIGN],
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


DEMO_ANNOTATED_FACTORS = ("color", "continuity", "setting", "crowd")
DEMO_LEFT_FOR_YOU = ("Normal_Videos_005_x264", "Normal_Videos_006_x264", "Shooting001_x264")
DEMO_SECOND_OPINIONS: tuple[tuple[str, str, str], ...] = (
    # A second annotator re-labels a few videos; one disagreement to adjudicate.
    ("Robbery001_x264", "color", "grayscale"),
    ("Fighting001_x264", "color", "color"),
    ("Explosion001_x264", "continuity", "single-view"),
    ("Normal_Videos_001_x264", "color", "grayscale"),
)


def _demo_decisions(videos: tuple[DemoVideo, ...]) -> list[tuple[str, str, str, str]]:
    """(annotator, video, factor, value): 'demo-ana' labelled the planted manual factors of
    all but three videos (left for whoever tries the app); 'demo-ben' gave second opinions."""
    decisions = [
        ("demo-ana", video.video_id, factor, video.planted[factor])
        for video in videos
        if video.video_id not in DEMO_LEFT_FOR_YOU
        for factor in DEMO_ANNOTATED_FACTORS
    ]
    decisions += [("demo-ben", *opinion) for opinion in DEMO_SECOND_OPINIONS]
    return decisions


def build_demo_workspace(
    root: Path | str, *, seed: int = 0, progress: Callable[[int, int], None] | None = None
) -> Workspace:
    """Generate the demo benchmark and make it a workspace at ``root`` with demo annotations
    and measured auto factors.

    The benchmark lives inside the workspace (``benchmark/``), so the folder can be moved. It
    is built under a temporary sibling folder and renamed into place at the end: an
    interrupted build never leaves a half-made workspace behind.
    """
    root = Path(root)
    if root.exists() and any(root.iterdir()):
        raise WorkspaceError(f"{root} exists and is not empty; choose a new folder for the demo")
    partial = root.with_name(f".{root.name}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    benchmark = generate_demo_benchmark(partial / "benchmark", seed=seed, progress=progress)
    with Workspace.create(
        partial,
        video_root=benchmark.video_dir,
        dataset="vadscene-demo",
        ground_truth=GroundTruthRef(path=str(benchmark.ground_truth_path), format="ucf-crime"),
    ) as workspace:
        report = workspace.scan()
        if report.unreadable or report.registered != len(benchmark.videos):
            raise WorkspaceError(f"demo videos failed to register: {report.unreadable}")
        for annotator, video_id, factor, value in _demo_decisions(benchmark.videos):
            workspace.store.record_decision(video_id, factor, value, annotator=annotator)
        workspace.store.set_mark(
            "Explosion001_x264", "note", "cut or zoom at 4 s?", annotator="demo-ana"
        )
        workspace.store.set_mark("Explosion001_x264", "flag", True, annotator="demo-ana")
        measure_workspace(workspace, workers=1)  # auto poles for resolution and motion
    if root.exists():
        root.rmdir()
    partial.rename(root)
    return Workspace.open(root)
