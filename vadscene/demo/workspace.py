"""The demo workspace: the demo benchmark registered, partly annotated and measured."""

import shutil
from collections.abc import Callable
from pathlib import Path

from vadscene.core.errors import WorkspaceError
from vadscene.demo.benchmark import generate_demo_benchmark
from vadscene.demo.videos import DemoVideo
from vadscene.measure.run import measure_workspace
from vadscene.store.workspace import GroundTruthRef, Workspace

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
