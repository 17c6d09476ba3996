"""The store under load: annotators keep writing while releases are imported and exported.

Three writer processes (the durability writer, :mod:`support.durability_writer` run as a script)
record decisions for 30 s while one process imports two 20,000-decision releases over and over
through the CLI and another exports through the CLI. No caller may see ``database is locked``
(or any error), every acknowledged decision must be in the log, every imported decision must be
there, and every export must be a valid release.
"""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from helpers import video_info
from support.durability_writer import Writer

from vadscene.core.records import FactorDecision
from vadscene.release.releases import (
    build_release,
    read_release,
    workspace_from_release,
    write_release,
)
from vadscene.store.database import Decision
from vadscene.store.workspace import Workspace

DURATION_S = 30.0
VIDEOS = [f"Video{i:05d}_x264" for i in range(2000)]
WRITER_VIDEOS = VIDEOS[:6]

LOOP = """
import sys, time
from vadscene.cli import run
deadline = time.monotonic() + float(sys.argv[1])
commands = [arg.split("|") for arg in sys.argv[2:]]
rounds = 0
while time.monotonic() < deadline:
    for command in commands:
        code = run(command)
        print("exit", code, flush=True)
        if code:
            sys.exit(code)
    rounds += 1
print("rounds", rounds, flush=True)
"""


def _decide_everything(workspace: Workspace, annotator: str, start: datetime) -> None:
    """One decision by ``annotator`` on every manual factor of every video."""
    manual = [f for f in workspace.catalogue.factors if f.source == "manual"]
    rows = [
        (
            video_id,
            factor.key,
            FactorDecision(
                annotator=annotator,
                value=factor.values[(v + f) % len(factor.values)],
                source="manual",
                decided_at=start + timedelta(seconds=v, microseconds=f),
            ),
        )
        for v, video_id in enumerate(VIDEOS)
        for f, factor in enumerate(manual)
    ]
    workspace.store.import_rows(videos=[], decisions=rows, marks=[], measurements=[], thresholds=[])


@pytest.mark.slow
def test_writers_import_and_export_at_once_lose_nothing_and_never_see_a_lock(
    tmp_path: Path,
) -> None:
    with Workspace.create(tmp_path / "source", video_root=None, dataset="load") as source:
        source.store.register_videos(video_info(v, category="Video") for v in VIDEOS)
        write_release(build_release(source), tmp_path / "videos.json")
        _decide_everything(source, "imp", datetime(2026, 1, 1, tzinfo=UTC))
        write_release(build_release(source), tmp_path / "r1.json")
        _decide_everything(source, "imq", datetime(2026, 2, 1, tzinfo=UTC))
        write_release(build_release(source), tmp_path / "r2.json")
        imported = {
            (d.video_id, d.factor, d.annotator, d.value, d.decided_at)
            for d in source.store.decision_log()
        }
    root = tmp_path / "ws"
    workspace_from_release(read_release(tmp_path / "videos.json"), root).close()

    def loop(*commands: list[str]) -> subprocess.Popen:
        return subprocess.Popen(
            [sys.executable, "-c", LOOP, str(DURATION_S), *("|".join(c) for c in commands)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    writers = [
        Writer(
            root,
            name,
            WRITER_VIDEOS,
            "--duration",
            str(DURATION_S),
            "--seed",
            str(seed),
            "--min-interval",
            "0.01",
            "--max-interval",
            "0.05",
        )
        for seed, name in enumerate(("ana", "ben", "carla"))
    ]
    importer = loop(
        ["import", str(root), str(tmp_path / "r1.json")],
        ["import", str(root), str(tmp_path / "r2.json")],
    )
    (tmp_path / "out").mkdir()
    exporter = loop(["export", str(root), "--out", str(tmp_path / "out" / "e.json")])

    outputs = {}
    for name, process in (("import", importer), ("export", exporter)):
        stdout, stderr = process.communicate(timeout=DURATION_S + 600)
        outputs[name] = (process.returncode, stdout, stderr)
    for writer in writers:
        writer.finish(timeout=DURATION_S + 600)

    for name, (code, stdout, stderr) in outputs.items():
        assert "locked" not in stdout + stderr, (name, stderr[-2000:])
        assert code == 0, (name, stdout[-2000:], stderr[-2000:])
        assert "rounds" in stdout
    for writer in writers:
        assert "locked" not in writer.stderr()
        assert writer.process.returncode == 0, writer.stderr()
        assert len(writer.acks) > 10

    with Workspace.open(root) as workspace:
        store = workspace.store
        log = {d.decision_id: d for d in store.decision_log()}
        for writer in writers:
            for ack in writer.acks:
                decision: Decision = log[ack["id"]]
                assert (decision.annotator, decision.decided_at) == (writer.annotator, ack["at"])
        held = {(d.video_id, d.factor, d.annotator, d.value, d.decided_at) for d in log.values()}
        assert imported <= held
        # imported twice or more, yet each imported decision is in the log once
        assert len(held) == len(log)
        assert store.integrity_check() == "ok"
    assert read_release(tmp_path / "out" / "e.json").annotators
