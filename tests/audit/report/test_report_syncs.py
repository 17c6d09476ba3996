"""A report is made durable with one sync per file and one per folder, in the order that keeps
it atomic across a power cut: every file and folder of the new report (its LaTeX tables
included) before the rename that makes it visible, the folder holding it once after; nothing
is synced twice.

The syncs are observed, not mocked: ``os.fsync`` is wrapped to note which file or folder each
call was given (by inode, which a rename keeps) and whether the report was in place yet.
"""

from __future__ import annotations

import errno
import os
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from helpers import synthetic_benchmark

from vadscene.audit import run_audit
from vadscene.audit.compute.result import AuditResult
from vadscene.audit.io.scores import ModelScores
from vadscene.audit.report.writer import write_report
from vadscene.core.errors import OutputError

Sync = tuple[int, int | None]
"""(inode synced, inode of the folder at the report's path at that moment, if any)."""


def _scored(n_videos: int = 12) -> AuditResult:
    scores = np.random.default_rng(3).random(n_videos * 4)
    return run_audit(
        synthetic_benchmark(n_videos),
        [ModelScores(name="m", scores=scores, source="synthetic")],
        n_bootstrap=0,
    )


def _observe_syncs(monkeypatch: pytest.MonkeyPatch, out: Path) -> list[Sync]:
    syncs: list[Sync] = []
    real = os.fsync

    def observed(descriptor: int) -> None:
        syncs.append((os.fstat(descriptor).st_ino, out.stat().st_ino if out.exists() else None))
        real(descriptor)

    monkeypatch.setattr(os, "fsync", observed)
    return syncs


def _inodes(out: Path) -> tuple[set[int], set[int]]:
    """(inodes of the report's files, of its folders, the report folder included)."""
    entries = [out, *out.rglob("*")]
    files = {p.stat().st_ino for p in entries if p.is_file()}
    folders = {p.stat().st_ino for p in entries if p.is_dir()}
    return files, folders


@pytest.mark.parametrize("earlier_report", [False, True], ids=["new folder", "over a report"])
def test_each_file_and_folder_is_synced_once_before_the_rename_and_the_parent_once_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, earlier_report: bool
) -> None:
    out = tmp_path / "report"
    result = _scored()
    if earlier_report:
        write_report(result, out)
    syncs = _observe_syncs(monkeypatch, out)

    written = write_report(result, out, latex=True)

    files, folders = _inodes(out)
    assert len(files) == len(written) > 5  # report.json, tables, figures, Markdown, HTML
    assert {p.name for p in [out, *out.rglob("*")] if p.is_dir()} == {"report", "figures", "latex"}
    parent = tmp_path.stat().st_ino
    counts = Counter(inode for inode, _ in syncs)
    assert counts == Counter([*files, *folders, parent])  # each once, nothing else
    new = out.stat().st_ino
    before_rename = {inode for inode, at_out in syncs if at_out != new}
    assert before_rename == files | folders  # the new report is durable before it shows
    assert [inode for inode, at_out in syncs if at_out == new] == [parent]


def test_a_disk_that_fails_a_sync_leaves_the_previous_report_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Space is often claimed only when data is synced (delayed allocation), so the error of
    a full disk can first appear there: it must stop the swap, not follow it."""
    out = tmp_path / "report"
    write_report(_scored(), out)
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}

    def disk_full(descriptor: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(OutputError, match="the disk is full"):
        write_report(_scored(15), out)

    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert [p.name for p in tmp_path.iterdir()] == ["report"]  # staging folder removed
