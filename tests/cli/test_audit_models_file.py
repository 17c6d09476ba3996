"""`vadscene audit` with a models file: a snippet repeat given in ``models.json`` or as the
``--scores`` suffix gives the same report, and a snippet-level model without one is refused."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import SNIPPET

from vadscene.cli import run


def test_models_json_snippet_repeat_and_the_cli_suffix(snippet_demo: Path, tmp_path: Path) -> None:
    models = tmp_path / "models.json"
    benchmark = snippet_demo / "benchmark"
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
