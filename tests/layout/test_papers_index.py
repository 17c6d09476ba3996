"""docs/papers.md, the index of the papers' tables, against a real audit of the demo: every
report section, CSV file, column and summary key it names exists in the output of
`vadscene audit` run with every input, and every table captioned in the papers is indexed."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from helpers import copy_demo, write_demo_soft_labels

from vadscene.cli import run

ROOT = Path(__file__).resolve().parents[2]
INDEX = ROOT / "docs" / "papers.md"
PAPERS = ROOT.parent / "shared" / "papers"
PAPER_SECTIONS = {
    "[inside]": "look-inside-each-video.md",
    "[audit]": "auditing-frame-level-auc-scene-bias.md",
    "[definitions]": "definition-blindness-open-world-vad.md",
}

_SECTION = re.compile(r"\*\*§ ([^*]+)\*\*")
_CSV = re.compile(r"`(\w+)\.csv(?::([\w,]+))?`")
_SUMMARY = re.compile(r"`summary:(\w+)`")


@pytest.fixture(scope="module")
def audited(demo_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo audited as the index's commands do, every input given: its report folder."""
    base = tmp_path_factory.mktemp("papers-index")
    demo = copy_demo(demo_template, base / "demo")
    benchmark = demo / "benchmark"
    out = base / "report"
    code = run(
        [
            "audit",
            "--workspace",
            str(demo),
            "--models",
            str(benchmark / "models.json"),
            "--probes",
            str(benchmark / "probes.json"),
            "--soft-labels",
            str(write_demo_soft_labels(demo)),
            "--protocol",
            "scene-bias",
            "--interval-ap",
            "--bootstrap",
            "50",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    return out


def test_every_named_section_file_column_and_key_exists(audited: Path) -> None:
    index = INDEX.read_text(encoding="utf-8")
    sections = set(_SECTION.findall(index))
    files = _CSV.findall(index)
    keys = set(_SUMMARY.findall(index))
    assert sections and files and keys  # the index names outputs in these forms
    headings = set(re.findall(r"^## (.+)$", (audited / "report.md").read_text(), re.MULTILINE))
    assert sections - headings == set()
    missing = []
    for name, columns in files:
        path = audited / f"{name}.csv"
        if not path.is_file():
            missing.append(f"{name}.csv")
            continue
        with path.open(newline="") as handle:
            header = next(csv.reader(handle))
        missing += [f"{name}.csv:{c}" for c in columns.split(",") if c and c not in header]
    assert missing == []
    summary = json.loads((audited / "report.json").read_text())["summary"]
    assert keys - set(summary) == set()


def _indexed_tables(index: str, paper: str) -> set[str]:
    """The table numbers of the rows under ``paper``'s heading ("Tables S7, S8" is two)."""
    start = index.index(f"## {paper}")
    end = index.find("\n## ", start + 1)
    block = index[start : end if end >= 0 else None]
    numbers = set()
    for listed in re.findall(r"^\| Tables? (S?\d+(?:, S?\d+)*)", block, re.MULTILINE):
        numbers |= {n.strip() for n in listed.split(",")}
    return numbers


@pytest.mark.parametrize("paper", sorted(PAPER_SECTIONS))
def test_every_captioned_table_of_the_paper_is_indexed(paper: str) -> None:
    source = PAPERS / PAPER_SECTIONS[paper]
    if not source.is_file():
        pytest.skip(f"{source} is absent")
    captioned = set(re.findall(r"^Table (S?\d+):", source.read_text(), re.MULTILINE))
    assert captioned  # the paper's tables are found
    assert captioned - _indexed_tables(INDEX.read_text(encoding="utf-8"), paper) == set()
