"""A store written by an older vadscene may hold a non-finite threshold (``thresholds …
--value nan`` was once accepted). Export refuses it with one message naming the factor and
the command that fixes it, instead of a pydantic traceback; the store is left unchanged."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest
from support.examples import GOOD, NORMAL, registry_workspace

from vadscene import cli
from vadscene.core.errors import VadsceneError
from vadscene.core.records import Measurement
from vadscene.release.releases import build_release
from vadscene.store.workspace import STORE_NAME, Workspace


def _store_with_threshold(folder: Path, stored: str) -> Path:
    """A measured workspace whose store holds ``stored`` (JSON text) as the thresholds of the
    auto factor 'resolution', written with sqlite3 directly, as an older version left it."""
    root = registry_workspace(folder)
    with Workspace.open(root) as workspace:
        for video, sharpness in ((GOOD, 80.0), (NORMAL, 20.0)):
            workspace.store.record_measurement(
                video,
                "sharpness",
                Measurement(
                    value=sharpness,
                    decoder="opencv",
                    frames_read=25,
                    seconds=0.01,
                    measured_at=datetime(2026, 1, 2, tzinfo=UTC),
                ),
            )
    db = sqlite3.connect(root / STORE_NAME)
    with db:
        db.execute(
            "INSERT INTO thresholds (factor, statistic, rule, thresholds, set_at) "
            "VALUES ('resolution', 'sharpness', 'explicit', ?, '2026-01-01T00:00:00+00:00')",
            (stored,),
        )
    db.close()
    return root


def _store_bytes(root: Path) -> bytes:
    return (root / STORE_NAME).read_bytes()


@pytest.mark.parametrize("stored", ["[NaN]", "[1.0, Infinity]", "[-Infinity]"])
def test_export_refuses_a_stored_non_finite_threshold_naming_factor_and_fix(
    tmp_path: Path, capsys, stored: str
) -> None:
    root = _store_with_threshold(tmp_path, stored)
    before = _store_bytes(root)
    out = tmp_path / "release.json"
    code = cli.run(["export", str(root), "--out", str(out)])
    shown = capsys.readouterr()
    assert code == 1, shown
    assert "Traceback" not in shown.err and "validation error" not in shown.err
    message = " ".join(shown.err.split())
    assert "factor 'resolution'" in message
    assert "not a finite number" in message
    assert f"vadscene thresholds {root} resolution --rule median" in message
    assert not out.exists()
    assert _store_bytes(root) == before


def test_the_suggested_command_repairs_the_store(tmp_path: Path, capsys) -> None:
    root = _store_with_threshold(tmp_path, "[NaN]")
    assert cli.run(["thresholds", str(root), "resolution", "--rule", "median"]) == 0
    out = tmp_path / "release.json"
    assert cli.run(["export", str(root), "--out", str(out)]) == 0, capsys.readouterr()
    (rule,) = json.loads(out.read_text())["thresholds"]
    assert (rule["factor"], rule["rule"], rule["thresholds"]) == ("resolution", "median", [50.0])


def test_build_release_raises_the_same_message(tmp_path: Path) -> None:
    root = _store_with_threshold(tmp_path, "[NaN]")
    with Workspace.open(root, read_only=True) as workspace, pytest.raises(VadsceneError) as info:
        build_release(workspace)
    assert "factor 'resolution'" in str(info.value)
    assert str(root / STORE_NAME) in str(info.value)


def test_a_finite_stored_threshold_still_exports(tmp_path: Path, capsys) -> None:
    root = _store_with_threshold(tmp_path, "[50.5]")
    out = tmp_path / "release.json"
    assert cli.run(["export", str(root), "--out", str(out)]) == 0, capsys.readouterr()
    (rule,) = json.loads(out.read_text())["thresholds"]
    assert (rule["factor"], rule["thresholds"]) == ("resolution", [50.5])
