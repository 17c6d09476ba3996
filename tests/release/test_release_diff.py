"""A release as DataFrames and CSV, and `vadscene diff` between two releases (issue 11,
item 5; CSV formula injection, issue 14)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pandas as pd
import pytest
from helpers import ABUSE, ARSON, NORMAL, ROAD

from vadscene.cli import run
from vadscene.release.releases import (
    build_release,
    diff_releases,
    pole_support,
    read_release,
    release_csv,
    to_dataframe,
    write_release,
)
from vadscene.release.tables import read_label_table
from vadscene.store.workspace import Workspace


def test_diff_of_a_release_with_itself_is_empty(annotated: Workspace) -> None:
    release = build_release(annotated)
    diff = diff_releases(release, release)
    assert diff.empty and diff.summary() == "no differences"


def test_diff_lists_exactly_one_edit(annotated: Workspace) -> None:
    before = build_release(annotated)
    # ana had said "few" on ABUSE's crowd, alone: her change is the edit.
    annotated.store.record_decision(ABUSE, "crowd", "many", annotator="ana")
    after = build_release(annotated)
    diff = diff_releases(before, after)
    assert diff.videos.empty and not diff.catalogue_changed
    assert diff.decisions.to_dict("records") == [
        {
            "video_id": ABUSE,
            "factor": "crowd",
            "annotator": "ana",
            "old_value": "few",
            "new_value": "many",
            "old_source": "manual",
            "new_source": "manual",
        }
    ]
    assert diff.values.to_dict("records") == [
        {
            "video_id": ABUSE,
            "factor": "crowd",
            "old_value": "few",
            "new_value": "many",
            "old_resolution": "single",
            "new_resolution": "single",
        }
    ]
    changed = {(r.count, r.delta) for r in diff.support.itertuples()}
    assert changed == {("n_positive", -1), ("n_negative", 1)}  # crowd: few ⊕, many ⊖
    assert set(diff.support["factor"]) == {"crowd"}


def test_diff_cli_shows_added_videos_and_the_edit(
    annotated: Workspace, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    release = build_release(annotated)
    videos = tuple(v for v in release.videos if v.video_id != ROAD)
    trimmed = release.model_copy(
        update={"videos": videos, "support": pole_support(release.catalogue, videos)}
    )
    write_release(trimmed, old)
    write_release(release, new)
    assert run(["diff", str(old), str(new)]) == 0
    out = capsys.readouterr().out
    assert "1 videos added" in out and ROAD in out
    assert run(["diff", str(new), str(new)]) == 0
    assert "no differences" in capsys.readouterr().out


def test_to_dataframe_long_and_wide(annotated: Workspace) -> None:
    release = build_release(annotated)
    long = to_dataframe(release)
    keys = release.catalogue.keys
    assert len(long) == len(release.videos) * len(keys)
    cell = long.set_index(["video_id", "factor"])
    assert cell.loc[(ARSON, "color"), "resolution"] == "disagreement"
    assert pd.isna(cell.loc[(ARSON, "color"), "value"])
    assert cell.loc[(NORMAL, "setting"), "value"] == "ambiguous"
    assert cell.loc[(ROAD, "crowd"), "resolution"] == "unlabelled"
    wide = to_dataframe(release, form="wide").set_index("video_id")
    assert wide.loc[NORMAL, "crowd"] == "many"
    assert wide.loc[ABUSE, "measurement:sharpness"] == 80.0
    with pytest.raises(ValueError, match="'long' or 'wide'"):
        to_dataframe(release, form="tall")


def test_csv_tells_unlabelled_ambiguous_and_disagreement_apart(annotated: Workspace) -> None:
    release = build_release(annotated)
    rows = {r["video_id"]: r for r in csv.DictReader(io.StringIO(release_csv(release)))}
    assert (rows[ARSON]["color"], rows[ARSON]["resolution:color"]) == ("", "disagreement")
    assert (rows[ROAD]["color"], rows[ROAD]["resolution:color"]) == ("", "unlabelled")
    assert (rows[NORMAL]["setting"], rows[NORMAL]["resolution:setting"]) == (
        "ambiguous",
        "single",
    )
    assert rows[NORMAL]["resolution:crowd"] == "consensus"
    assert float(rows[ROAD]["measurement:sharpness"]) == 10.0


def test_csv_cells_cannot_run_as_spreadsheet_formulas(tmp_path: Path) -> None:
    from vadscene.core.cells import spreadsheet_safe as _escape

    for cell in ('=HYPERLINK("http://x")', "+1", "-1+2", "@SUM(A1)", "\tx"):
        assert _escape(cell) == "'" + cell
    assert _escape("Abuse028_x264") == "Abuse028_x264" and _escape(-1.5) == -1.5


def test_export_csv_escapes_formulas_and_reads_back_the_release(
    annotated: Workspace, tmp_path: Path
) -> None:
    """A video named like a formula is written as text, and the export CSV read back as a
    label table gives the release's values, that name included."""
    release = build_release(annotated)
    hostile = "=HYPERLINK(1)"
    release = release.model_copy(
        update={
            "videos": tuple(
                v.model_copy(update={"video_id": hostile}) if v.video_id == ARSON else v
                for v in release.videos
            )
        }
    )
    path = tmp_path / "r.csv"
    path.write_text(release_csv(release), encoding="utf-8")
    assert '\n"\'=HYPERLINK(1)",' in path.read_text(encoding="utf-8")  # quoted text
    values = read_label_table(path, release.catalogue)
    expected = {
        key: {
            v.video_id: v.factors[key].value
            for v in release.videos
            if key in v.factors and v.factors[key].value is not None
        }
        for key in release.catalogue.keys
    }
    assert values == expected
    assert values["resolution"][hostile] == "high"


def test_export_creates_missing_parent_folders(
    annotated: Workspace, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "releases" / "v1" / "ucf.json"
    table = tmp_path / "tables" / "ucf.csv"
    root = annotated.root
    annotated.close()
    assert run(["export", str(root), "--out", str(out), "--csv", str(table)]) == 0
    assert read_release(out).videos and table.is_file()
    assert (out.parent / "release-v2.schema.json").is_file()


def test_export_help_is_accurate(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["export", "--help"]) == 0
    text = capsys.readouterr().out
    assert "--consensus" not in text and "no-consensus" not in text
    assert "--annotator" in text
