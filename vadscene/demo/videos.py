"""The synthetic clips of the demo benchmark: the fixed design and how it is rendered.

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

Durations and anomalous intervals are in :data:`DEMO_VIDEOS` below; Fighting001, Fighting002
and Shooting001 have two intervals.  How each pole is planted in the pixels:

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

The seed drives textures, palettes, walkers, shake and cut times; the design table above
(ids, categories, durations, intervals, factors) is fixed. Videos are encoded single-threaded
and without x264's macroblock tree, which makes them byte-identical for one seed on one
machine (not necessarily across FFmpeg builds or CPUs).
"""

import itertools
from dataclasses import dataclass, field
from pathlib import Path

import av
import cv2
import numpy as np

WIDTH = 320
HEIGHT = 240
FPS = 30

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
class DemoVideo:
    """One synthetic video and what was planted in it (the ground truth for audits)."""

    video_id: str
    category: str
    num_frames: int
    fps: float
    anomalous_intervals: tuple[tuple[int, int], ...]
    planted: dict[str, str] = field(hash=False)


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
DEMO_VIDEOS: tuple[DemoVideo, ...] = (
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


def _smooth_texture(rng: np.random.Generator, h: int, w: int, cell: int) -> np.ndarray:
    """Unit-scale noise, smooth over ``cell`` pixels: surfaces look like worn concrete, not flat."""
    coarse = rng.standard_normal((h // cell + 2, w // cell + 2)).astype(np.float32)
    return cv2.resize(coarse, (w, h), interpolation=cv2.INTER_CUBIC)


def _finish(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Add texture (smooth + fine grain) so sharp footage has real high-frequency content."""
    h, w = img.shape[:2]
    img += 12.0 * _smooth_texture(rng, h, w, 16)[..., None]
    img += rng.normal(0.0, 4.0, (h, w, 1)).astype(np.float32)
    return img.clip(0, 255).astype(np.uint8)


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
    light, dark = np.array(_FLOORS[(offset + view) % len(_FLOORS)], np.float32)
    tile = int(rng.integers(14, 24))
    yy, xx = np.mgrid[0 : h - wall_bottom, 0:w]
    checker = ((yy // tile + xx // tile) % 2).astype(bool)
    img[wall_bottom:] = np.where(checker[..., None], dark, light)
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
            cv2.add(canvas, np.full_like(canvas, glow), dst=canvas)
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


def write_demo_video(video: DemoVideo, path: Path, rng: np.random.Generator) -> None:
    """Render ``video`` with its planted poles and events and encode it as H.264 at ``path``.

    ``rng`` drives everything random in the clip (cut times, scenes, shake, walkers, flames),
    drawn in a fixed order, so one stream gives one clip.
    """
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
            span = clock[t]
            for scene in scenes:
                scene.step("walk" if span is None else behaviour, rng)
            event = None if span is None else (behaviour, *span)
            rgb = _render_frame(video, scenes[live[t]], t, shake[t], event, rng)
            frame = av.VideoFrame.from_ndarray(rgb, format="rgb24")
            frame.pts = t
            container.mux(stream.encode(frame))
        container.mux(stream.encode())
