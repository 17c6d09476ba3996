"""Researcher ergonomics of the audit (issue 11, item 5): a frame-level and a snippet-level
model in one run, and paper-ready LaTeX tables."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers import copy_demo

from vadscene.audit import run_audit
from vadscene.audit.io.scores import ModelSpec
from vadscene.audit.io.sources import gather_inputs
from vadscene.cli import run

SNIPPET = 16


@pytest.fixture(scope="module")
def demo(demo_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo workspace plus a snippet-level copy of its localizer's scores (the mean of
    each 16 frames, the last snippet possibly short)."""
    root = copy_demo(demo_template, tmp_path_factory.mktemp("ergonomics") / "demo")
    snippets = root / "benchmark" / "scores" / "localizer_snippets"
    snippets.mkdir()
    for file in sorted((root / "benchmark" / "scores" / "localizer").glob("*.npy")):
        frames = np.load(file)
        starts = np.arange(0, frames.size, SNIPPET)
        np.save(
            snippets / file.name, np.add.reduceat(frames, starts) / np.diff([*starts, frames.size])
        )
    return root


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


def test_frame_and_snippet_models_in_one_run(demo: Path) -> None:
    scores = demo / "benchmark" / "scores"
    truth, models, _ = gather_inputs(
        ground_truth=demo / "benchmark" / "ground_truth.txt",
        frame_counts=demo / "benchmark" / "frame_counts.txt",
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
    assert np.array_equal(snippet_model.scores, _expected_snippet_frames(demo, truth.video_ids))
    assert any("snippet_repeat=16" in note for note in snippet_model.notes)
    assert run_audit(truth, models, n_bootstrap=0).models == ("frames", "snippets")


def test_models_json_snippet_repeat_and_the_cli_suffix(demo: Path, tmp_path: Path) -> None:
    models = tmp_path / "models.json"
    benchmark = demo / "benchmark"
    models.write_text(
        json.dumps(
            [
                {"name": "frames", "path": str(benchmark / "scores" / "localizer")},
                {
                    "name": "snippets",
                    "path": str(benchmark / "scores" / "localizer_snippets"),
                    "snippet_repeat": SNIPPET,
                },
            ]
        ),
        encoding="utf-8",
    )
    common = [
        "audit",
        "--gt",
        str(benchmark / "ground_truth.txt"),
        "--frame-counts",
        str(benchmark / "frame_counts.txt"),
        "--bootstrap",
        "0",
    ]
    assert run([*common, "--models", str(models), "--out", str(tmp_path / "a")]) == 0
    suffix = [
        "--scores",
        f"frames={benchmark / 'scores' / 'localizer'}",
        "--scores",
        f"snippets={benchmark / 'scores' / 'localizer_snippets'}@demo:{SNIPPET}",
    ]
    assert run([*common, *suffix, "--out", str(tmp_path / "b")]) == 0
    first = json.loads((tmp_path / "a" / "report.json").read_text(encoding="utf-8"))
    second = json.loads((tmp_path / "b" / "report.json").read_text(encoding="utf-8"))
    assert first["metrics"] == [
        {**row, "family": None} for row in second["metrics"]
    ]  # same numbers, the family aside
    # Without its own :16, a snippet-level model is refused, naming the video.
    assert (
        run(
            [
                *common,
                "--scores",
                f"s={benchmark / 'scores' / 'localizer_snippets'}",
                "--out",
                str(tmp_path / "c"),
            ]
        )
        == 1
    )


def test_models_json_rejects_a_non_integer_snippet_repeat(tmp_path: Path) -> None:
    from vadscene.audit.io.sources import read_model_list
    from vadscene.benchmark.frames import AuditInputError

    path = tmp_path / "models.json"
    path.write_text(json.dumps([{"name": "m", "path": "s", "snippet_repeat": "16"}]))
    with pytest.raises(
        AuditInputError, match="model 1: snippet_repeat must be an integer, got a str"
    ):
        read_model_list(path)


def test_latex_tables_are_booktabs_with_the_report_numbers(demo: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    code = run(
        [
            "audit",
            "--workspace",
            str(demo),
            "--models",
            str(demo / "benchmark" / "models.json"),
            "--bootstrap",
            "20",
            "--latex",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    assert {p.name for p in (out / "latex").iterdir()} == {
        "metrics.tex",
        "bias.tex",
        "resolved.tex",
    }
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    metrics = (out / "latex" / "metrics.tex").read_text(encoding="utf-8")
    for rule in ("\\toprule", "\\midrule", "\\bottomrule", "\\begin{tabular}{lcccccc}"):
        assert rule in metrics
    micro = next(
        r
        for r in report["metrics"]
        if r["model"] == "grayscale_keyed" and r["granularity"] == "micro"
    )
    row = next(line for line in metrics.splitlines() if line.startswith("grayscale\\_keyed & "))
    expected = (
        f"{100 * micro['value']:.2f} [{100 * micro['ci_low']:.2f}, {100 * micro['ci_high']:.2f}]"
    )
    assert row.split(" & ")[1] == expected
    bias = (out / "latex" / "bias.tex").read_text(encoding="utf-8")
    assert (
        "bias-AUC (Normal only)" in bias and "color: color vs grayscale & grayscale\\_keyed" in bias
    )
    resolved = (out / "latex" / "resolved.tex").read_text(encoding="utf-8")
    assert "Granularity & all & demo-cnn & demo-vlm \\\\" in resolved


def test_latex_escapes_special_characters() -> None:
    from vadscene.audit.report.latex import escape

    assert escape("a_b & 50% #1 {x} $y ~z ^w \\") == (
        "a\\_b \\& 50\\% \\#1 \\{x\\} \\$y "
        "\\textasciitilde{}z \\textasciicircum{}w \\textbackslash{}"
    )
