"""`export --csv` and `--parquet`: ids that look like numbers or missing values ("007", "01",
"1e5", "nan") come back as the same text, read with the stdlib csv module, with the pandas call
the help documents, and from Parquet; progress of building, writing, reading and importing a
release, through the library and on a terminal."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from pseudo_terminal import in_a_terminal

from vadscene.cli import run
from vadscene.core.records import Release
from vadscene.release.releases import (
    build_release,
    pole_support,
    read_release,
    workspace_from_release,
    write_release,
)
from vadscene.store.workspace import Workspace

NUMBER_LIKE = ("007", "01", "1e5", "nan")
"""Sorted, as a release's videos are."""


def _renamed(release: Release, ids: list[str]) -> Release:
    """``release`` with its videos renamed (cycling through them for more ids than it has)."""
    videos = tuple(
        release.videos[i % len(release.videos)].model_copy(update={"video_id": video_id})
        for i, video_id in enumerate(ids)
    )
    return release.model_copy(
        update={"videos": videos, "support": pole_support(release.catalogue, videos)}
    )


@pytest.fixture
def number_like(annotated: Workspace, tmp_path: Path) -> Path:
    """A workspace whose four videos are called 007, 01, 1e5 and nan."""
    with workspace_from_release(
        _renamed(build_release(annotated), list(NUMBER_LIKE)), tmp_path / "renamed"
    ) as ws:
        return ws.root


def _export(root: Path, folder: Path) -> tuple[Path, Path]:
    csv_file, parquet_file = folder / "t.csv", folder / "t.parquet"
    args = ["export", str(root), "--out", str(folder / "r.json"), "--csv", str(csv_file)]
    assert run([*args, "--parquet", str(parquet_file)]) == 0
    return csv_file, parquet_file


def test_ids_survive_the_csv_as_text(number_like: Path, tmp_path: Path) -> None:
    csv_file, _ = _export(number_like, tmp_path)
    text = csv_file.read_text(encoding="utf-8")
    assert text.startswith('"video_id","category","split","num_frames","fps",')
    assert [line.split(",")[0] for line in text.splitlines()[1:]] == [f'"{i}"' for i in NUMBER_LIKE]
    with csv_file.open(encoding="utf-8", newline="") as handle:
        assert [row["video_id"] for row in csv.DictReader(handle)] == list(NUMBER_LIKE)
    documented = pd.read_csv(
        csv_file, dtype={"video_id": str}, keep_default_na=False, na_values=[""]
    )
    assert documented["video_id"].tolist() == list(NUMBER_LIKE)
    # Why the help names that call: pandas infers types whatever the quotes.
    assert pd.read_csv(csv_file)["video_id"].tolist()[:2] == [7.0, 1.0]


def test_parquet_is_the_csv_table_with_text_ids_and_numbers(
    number_like: Path, tmp_path: Path
) -> None:
    csv_file, parquet_file = _export(number_like, tmp_path)
    table = pd.read_parquet(parquet_file)
    assert table["video_id"].tolist() == list(NUMBER_LIKE)
    assert table["num_frames"].dtype == "int64" and table["fps"].dtype == "float64"
    assert table["measurement:sharpness"].dtype == "float64"
    documented = pd.read_csv(
        csv_file, dtype={"video_id": str}, keep_default_na=False, na_values=[""]
    )
    assert list(table.columns) == list(documented.columns)
    pd.testing.assert_frame_equal(
        table.astype(object).where(table.notna(), None),
        documented.astype(object).where(documented.notna(), None),
    )
    release = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert table["num_frames"].tolist() == [v["num_frames"] for v in release["videos"]]
    sharpness = [v["measurements"]["sharpness"]["value"] for v in release["videos"]]
    assert table["measurement:sharpness"].tolist() == sharpness


def _recorder() -> tuple[list[tuple[int, int]], Callable[[int, int], None]]:
    calls: list[tuple[int, int]] = []
    return calls, lambda done, total: calls.append((done, total))


def _rises_to_its_total(calls: list[tuple[int, int]], total: int) -> None:
    assert calls and {t for _, t in calls} == {total}
    done = [d for d, _ in calls]
    assert done == sorted(done) and done[0] == 0 and done[-1] == total


def test_progress_of_a_release_built_written_read_and_imported(
    annotated: Workspace, tmp_path: Path
) -> None:
    videos = 450
    big = _renamed(build_release(annotated), [f"Video{i:04d}_x264" for i in range(videos)])
    calls, record = _recorder()
    workspace = workspace_from_release(big, tmp_path / "big", progress=record)
    _rises_to_its_total(calls, calls[-1][1])  # what it counts is the store's to say
    assert len(calls) > 2  # a call per transaction, not only the ends
    with workspace:
        calls, record = _recorder()
        release = build_release(workspace, progress=record)
        _rises_to_its_total(calls, videos)
        assert len(calls) > 100  # about 200 steps, not one per video nor only the ends
    calls, record = _recorder()
    write_release(
        release,
        tmp_path / "r.json",
        csv_path=tmp_path / "r.csv",
        parquet_path=tmp_path / "r.parquet",
        progress=record,
    )
    assert calls == [(0, 5), (1, 5), (2, 5), (3, 5), (4, 5), (5, 5)]  # 4 files, then written
    calls, record = _recorder()
    assert len(read_release(tmp_path / "r.json", progress=record).videos) == videos
    _rises_to_its_total(calls, videos)
    assert len(calls) > 100


def test_export_and_import_draw_progress_bars_on_a_terminal(
    annotated: Workspace, tmp_path: Path
) -> None:
    release = tmp_path / "r.json"
    shown = in_a_terminal(["export", str(annotated.root), "--out", str(release)])
    assert "Building" in shown and "Writing files" in shown
    shown = in_a_terminal(["import", str(tmp_path / "new"), str(release)])
    assert "Reading r.json" in shown and "Importing" in shown
