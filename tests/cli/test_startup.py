"""Start-up: `vadscene --help` and `vadscene status WS` load none of the heavy modules (the
commands that need them import them), and the vocabularies the help lists without importing
the library are the library's. bench/cli_startup_bench.py times it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import get_args

import pytest

from vadscene.benchmark.ground_truth import GROUND_TRUTH_FORMATS
from vadscene.cli import options
from vadscene.core.catalogue import THRESHOLD_RULES
from vadscene.store.team import ROLES
from vadscene.store.workspace import CategoryRule, Workspace

HEAVY = {
    "numpy",
    "pandas",
    "pyarrow",
    "altair",
    "numba",
    "cv2",
    "streamlit",
    "decord",
    "av",
    "vl_convert",
    "scipy",
}
"""Modules that cost tens to hundreds of milliseconds to import, each."""


def _imported(*args: str) -> set[str]:
    """The top-level modules `python -m vadscene ARGS` imported (from ``-X importtime``)."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "vadscene", *args],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    names = re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s*([\w.]+)$", result.stderr, re.M)
    assert "vadscene.cli" in names  # the parse saw the imports
    return {name.split(".")[0] for name in names}


def test_help_imports_no_heavy_module() -> None:
    assert _imported("--help") & HEAVY == set()
    assert _imported("export", "--help") & HEAVY == set()


def test_status_imports_no_heavy_module(small_workspace: Workspace) -> None:
    assert _imported("status", str(small_workspace.root)) & HEAVY == set()
    assert _imported("status", str(small_workspace.root), "--json") & HEAVY == set()


def test_deferred_imports_still_give_one_line_failures(tmp_path: Path) -> None:
    """A command imports the library when it runs, and the failure path what it needs: a
    missing release is one line on stderr and exit code 1, in a fresh process."""
    result = subprocess.run(
        [sys.executable, "-m", "vadscene", "validate", str(tmp_path / "none.json")],
        capture_output=True,
        text=True,
    )
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr.strip() == f"{tmp_path / 'none.json'}: release file not found"


@pytest.mark.parametrize(
    ("spelled", "library"),
    [
        (options.GROUND_TRUTH_FORMATS, GROUND_TRUTH_FORMATS),
        (options.THRESHOLD_RULES, THRESHOLD_RULES),
        (options.ROLES, ROLES),
        (options.CATEGORY_RULES, get_args(CategoryRule)),
    ],
)
def test_the_help_vocabularies_are_the_library_s(
    spelled: tuple[str, ...], library: tuple[str, ...]
) -> None:
    assert spelled == library
