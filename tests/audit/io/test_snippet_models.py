"""A frame-level and a snippet-level model in one audit: the snippet scores are repeated to
frames and cut to each video's length."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from helpers import SNIPPET

from vadscene.audit import run_audit
from vadscene.audit.io.scores import ModelSpec
from vadscene.audit.io.sources import gather_inputs


def _expected_snippet_frames(demo: Path, video_ids: tuple[str, ...]) -> np.ndarray:
    """Each snippet score repeated 16 times and cut to the video's frame count (by hand)."""
    counts = dict(
        line.split() for line in (demo / "benchmark" / "frame_counts.txt").read_text().splitlines()
    )
    parts = []
    for video in video_ids:
        snippet_scores = np.load(
            demo / "benchmark" / "scores" / "localizer_snippets" / f"{video}.npy"
        )
        frames = [snippet_scores[f // SNIPPET] for f in range(int(counts[video]))]
        parts.append(np.array(frames))
    return np.concatenate(parts)


def test_frame_and_snippet_models_in_one_run(snippet_demo: Path) -> None:
    scores = snippet_demo / "benchmark" / "scores"
    truth, models, _ = gather_inputs(
        ground_truth=snippet_demo / "benchmark" / "ground_truth.txt",
        frame_counts=snippet_demo / "benchmark" / "frame_counts.txt",
        models=[
            ModelSpec("frames", scores / "localizer"),
            ModelSpec("snippets", scores / "localizer_snippets", "demo", SNIPPET),
        ],
    )
    frame_model, snippet_model = models
    assert np.array_equal(
        frame_model.scores,
        np.concatenate([np.load(scores / "localizer" / f"{v}.npy") for v in truth.video_ids]),
    )
    assert np.array_equal(
        snippet_model.scores, _expected_snippet_frames(snippet_demo, truth.video_ids)
    )
    assert any("snippet_repeat=16" in note for note in snippet_model.notes)
    assert run_audit(truth, models, n_bootstrap=0).models == ("frames", "snippets")
