"""A report folder is replaced whole: a rewrite leaves only the new report, a failure half way
leaves the previous one whole, a folder of other files is never replaced, and the folders a
killed run left behind are removed by the next."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
import vl_convert
from helpers import synthetic_benchmark

from vadscene.audit import run_audit
from vadscene.audit.io.scores import ModelScores
from vadscene.audit.report.writer import write_report
from vadscene.core.errors import VadsceneError


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def test_a_rewritten_report_folder_holds_only_the_new_report(tmp_path: Path) -> None:
    out = tmp_path / "report"
    scored = run_audit(
        synthetic_benchmark(12),
        [ModelScores(name="m", scores=np.linspace(0, 1, 48), source="synthetic")],
        n_bootstrap=0,
    )
    write_report(scored, out)
    assert "metrics.csv" in _tree(out)
    gt_only = run_audit(synthetic_benchmark(12), n_bootstrap=0)

    written = write_report(gt_only, out)

    assert sorted(_tree(out)) == sorted(written)  # no metrics.csv left from the scored run
    assert [p.name for p in tmp_path.iterdir()] == ["report"]  # no staging folder left


def test_a_report_that_fails_half_way_leaves_the_previous_report_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "report"
    write_report(run_audit(synthetic_benchmark(12), n_bootstrap=0), out)
    before = _tree(out)

    def renderer_fails(spec: dict, **options: object) -> str:
        raise RuntimeError("renderer crashed")

    monkeypatch.setattr(vl_convert, "vegalite_to_svg", renderer_fails)  # after report.json
    with pytest.raises(RuntimeError, match="renderer crashed"):
        write_report(run_audit(synthetic_benchmark(15), n_bootstrap=0), out, svg=True)

    assert _tree(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["report"]


def test_a_report_never_replaces_a_folder_of_other_files(tmp_path: Path) -> None:
    out = tmp_path / "papers"
    out.mkdir()
    (out / "draft.tex").write_text("my paper", encoding="utf-8")

    with pytest.raises(VadsceneError, match=r"draft\.tex") as error:
        write_report(run_audit(synthetic_benchmark(12), n_bootstrap=0), out)

    assert f"{out}: holds files that are not an audit report" in str(error.value)
    assert _tree(out) == {"draft.tex": b"my paper"}


def test_folders_left_by_a_killed_report_run_are_removed_by_the_next(tmp_path: Path) -> None:
    out = tmp_path / "report"
    dead = subprocess.Popen(["true"])  # its process id is no longer running
    dead.wait()
    live = subprocess.Popen(["sleep", "60"])
    try:
        stale = [tmp_path / f".report.{dead.pid}.{tag}" for tag in ("aa.new", "bb.old")]
        running = tmp_path / f".report.{live.pid}.cc.new"  # another run, still writing
        for folder in (*stale, running):
            folder.mkdir()
            (folder / "report.json").write_text("{}")
        write_report(run_audit(synthetic_benchmark(12), n_bootstrap=0), out)
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["report", running.name])
    finally:
        live.kill()
        live.wait()
