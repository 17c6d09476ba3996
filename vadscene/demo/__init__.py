"""Deterministic synthetic VAD benchmark with planted scene factors.

Why this exists: every other part of vadscene (labelling, publishing, score audits) needs a
benchmark to run on, and real ones (UCF-Crime, XD-Violence) are tens of gigabytes behind
licence forms.  This package writes a tiny benchmark in the UCF-Crime layout whose scene
factors and model behaviours are *known*, so a user can check that the tool recovers what
was planted before trusting it on real data, and so tests need no external files.

* :mod:`vadscene.demo.videos`: the fixed design (twelve videos, six factors, a Plackett-Burman
  plan) and the renderer that plants it in the pixels of each clip.
* :mod:`vadscene.demo.benchmark`: the benchmark on disk (ground truth, planted model scores,
  definition scores and features, the ``demo.json`` manifest) and reading it back.
* :mod:`vadscene.demo.workspace`: the benchmark as a workspace with demo annotations and
  measured auto factors (``vadscene demo``).

Same seed, same files: see each module for what the seed drives.
"""

from vadscene.demo.benchmark import (
    DEMO_DEFINITION_MODELS,
    DEMO_DEFINITIONS,
    DEMO_FEATURE_DIM,
    DEMO_MODELS,
    DEMO_QUERIES,
    DEMO_SNIPPET_FRAMES,
    MANIFEST_FORMAT,
    DemoBenchmark,
    DemoModel,
    generate_demo_benchmark,
    load_demo_manifest,
)
from vadscene.demo.videos import DEMO_VIDEOS, FPS, HEIGHT, WIDTH, DemoVideo
from vadscene.demo.workspace import (
    DEMO_ANNOTATED_FACTORS,
    DEMO_LEFT_FOR_YOU,
    DEMO_SECOND_OPINIONS,
    build_demo_workspace,
)

__all__ = [
    "DEMO_ANNOTATED_FACTORS",
    "DEMO_DEFINITIONS",
    "DEMO_DEFINITION_MODELS",
    "DEMO_FEATURE_DIM",
    "DEMO_LEFT_FOR_YOU",
    "DEMO_MODELS",
    "DEMO_QUERIES",
    "DEMO_SECOND_OPINIONS",
    "DEMO_SNIPPET_FRAMES",
    "DEMO_VIDEOS",
    "FPS",
    "HEIGHT",
    "MANIFEST_FORMAT",
    "WIDTH",
    "DemoBenchmark",
    "DemoModel",
    "DemoVideo",
    "build_demo_workspace",
    "generate_demo_benchmark",
    "load_demo_manifest",
]
