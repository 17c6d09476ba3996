"""The examples in the package's docstrings run, and every module imports cleanly.

Each ``>>>`` example in a ``vadscene`` docstring is a doctest, run here module by module with
the module's own globals (so an example may use ``np`` where the module imports numpy).
Importing a module must not fail and must do nothing else: no output, no files.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import subprocess
import sys

import pytest

import vadscene

MODULES = sorted(
    {"vadscene"} | {name for _, name, _ in pkgutil.walk_packages(vadscene.__path__, "vadscene.")}
)


def _examples(name: str) -> list[doctest.DocTest]:
    module = importlib.import_module(name)
    return [test for test in doctest.DocTestFinder().find(module, name) if test.examples]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_pass(name: str) -> None:
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report: list[str] = []
    for test in _examples(name):
        runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)


def test_docstring_examples_are_found() -> None:
    # the module walk and the finder, checked on the example known to exist
    names = {test.name for test in _examples("vadscene.audit.compute.pairs")}
    assert "vadscene.audit.compute.pairs.pair_counts" in names


def test_importing_every_module_prints_and_writes_nothing(tmp_path) -> None:
    code = f"import importlib\nfor name in {MODULES!r}:\n    importlib.import_module(name)\n"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert list(tmp_path.iterdir()) == []
