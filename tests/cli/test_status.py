"""`vadscene status`: a box-drawn table on a terminal, plain aligned text when piped, and
`--json`, each against counts taken from the store independently of the command."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import ABUSE
from pseudo_terminal import ANSI, in_a_terminal

from vadscene.cli import run
from vadscene.store.workspace import Workspace

BOX = re.compile(r"[│┃━─┏┓┗┛┡┩└┘┌┐╇╋┼├┤]")


def _expected(workspace: Workspace) -> dict[str, dict[str, Any]]:
    """Per annotator, from the current decisions: videos decided per manual factor, and
    videos with every manual factor decided."""
    manual = [f.key for f in workspace.catalogue.factors if f.source == "manual"]
    decided: dict[str, dict[str, set[str]]] = {}
    for d in workspace.store.current_decisions():
        if d.value is not None and d.factor in manual and d.source != "auto":
            decided.setdefault(d.annotator, {}).setdefault(d.factor, set()).add(d.video_id)
    expected = {}
    for name, by_factor in decided.items():
        videos = set.union(*by_factor.values())
        expected[name] = {
            "decided": {key: len(by_factor.get(key, ())) for key in manual},
            "videos_complete": sum(
                1 for v in videos if all(v in by_factor.get(k, ()) for k in manual)
            ),
        }
    return expected


@pytest.fixture
def team(annotated: Workspace) -> Workspace:
    """The annotated workspace, plus dora, who decided every manual factor of one video."""
    for factor in annotated.catalogue.factors:
        if factor.source == "manual":
            annotated.store.record_decision(ABUSE, factor.key, factor.values[0], annotator="dora")
    return annotated


def _rows(lines: list[str]) -> dict[str, list[str]]:
    return {cells[0]: cells[1:] for cells in (re.split(r"\s{2,}", line.strip()) for line in lines)}


def test_piped_status_is_a_plain_aligned_table(team: Workspace) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "vadscene", "status", str(team.root)],
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")},
    )
    assert (result.returncode, result.stderr) == (0, "")
    text = result.stdout
    assert not BOX.search(text) and not ANSI.search(text)
    header, *table = text.splitlines()
    store = team.store
    assert header == (
        f"{team.config.dataset} at {team.root}: {len(store.video_ids())} videos, catalogue "
        f"'{team.catalogue.name}' ({len(team.catalogue.factors)} factors)"
    )
    expected = _expected(team)
    names = sorted(expected)
    assert len(names) == 4  # ana, ben, carla, dora: one table
    assert re.split(r"\s{2,}", table[0].strip()) == ["videos decided", *names]
    rows = _rows(table[1:])
    videos = len(store.video_ids())
    assert rows.pop("videos complete") == [
        f"{expected[n]['videos_complete']}/{videos}" for n in names
    ]
    assert rows == {
        key: [str(expected[n]["decided"][key]) for n in names]
        for key in expected["dora"]["decided"]
    }
    # aligned: every cell of a column ends in the same place (numbers right-aligned)
    ends = {tuple(m.end() for m in re.finditer(r"\S+(?=\s{2,}|$)", line)) for line in table}
    assert len({e[-len(names) :] for e in ends}) == 1


def test_status_in_a_terminal_is_box_drawn(team: Workspace) -> None:
    shown = in_a_terminal(["status", str(team.root)])
    table = [line for line in shown.splitlines() if BOX.search(line)]
    assert table and all(len(line) <= 100 for line in table)
    expected = _expected(team)
    cells = {
        c[0]: c[1:]
        for c in ([x.strip() for x in BOX.split(line)[1:-1]] for line in table)
        if c and c[0]
    }
    names = sorted(expected)
    assert cells["videos decided"] == names
    assert cells["color"] == [str(expected[n]["decided"]["color"]) for n in names]


def test_status_json_gives_the_store_counts(
    team: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run(["status", str(team.root), "--json"])
    captured = capsys.readouterr()
    assert (code, captured.err) == (0, "")
    document = json.loads(captured.out)
    store = team.store
    manual = [f.key for f in team.catalogue.factors if f.source == "manual"]
    assert document == {
        "workspace": str(team.root),
        "dataset": team.config.dataset,
        "videos": len(store.video_ids()),
        "catalogue": {"name": team.catalogue.name, "factors": len(team.catalogue.factors)},
        "manual_factors": manual,
        "annotators": [
            {"name": name, **counts} for name, counts in sorted(_expected(team).items())
        ],
        "unreadable": [],
    }


def test_status_json_lists_unreadable_files(
    small_workspace: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = Path(small_workspace.video_root or "") / "Broken001_x264.mp4"
    broken.write_bytes(b"not a video")
    small_workspace.scan()
    assert run(["status", str(small_workspace.root), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["annotators"] == []
    assert [Path(u["path"]).name for u in document["unreadable"]] == [broken.name]
    assert all(u["reason"] for u in document["unreadable"])
