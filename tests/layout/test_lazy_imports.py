"""A process imports only what its run uses: the command line loads no library for its help,
numba is imported by the first kernel call (:mod:`vadscene.core.kernels`), Dask by a run on a
cluster, so an audit loads them only when it computes or is sent to a cluster; its report's
figures are Vega-Lite specs written without altair, which only the app's other pages draw with.

Each check runs a fresh interpreter and reads its ``sys.modules`` at the end.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from helpers import copy_demo

HEAVY = ("numba", "llvmlite", "altair", "vl_convert", "pandas", "scipy", "numpy")
"""Packages that each take a noticeable share of a short run's time to import."""

LOADED_WHEN_USED = ("numba", "llvmlite", "altair", "dask", "distributed")
"""The compiler (a kernel's first call), the charts of the app's annotation pages, the cluster
client (``--scheduler``)."""


def _run(code: str) -> dict[str, object]:
    """Run ``code`` in a fresh interpreter; it leaves its findings in ``found`` (a dict), to
    which the names in ``sys.modules`` at its end are added as ``"modules"``."""
    script = (
        "found = {}\n"
        + textwrap.dedent(code)
        + "\nimport json, sys\nprint('\\n' + json.dumps({**found, 'modules': sorted(sys.modules)}))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    found: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return found


def _loaded(found: dict[str, object], packages: tuple[str, ...]) -> list[str]:
    modules = found["modules"]
    assert isinstance(modules, list)
    return [package for package in packages if package in modules]


def test_the_command_line_and_its_help_load_no_library() -> None:
    found = _run(
        """
        from vadscene.cli import run
        found["code"] = run(["audit", "--help"])
        """
    )
    assert found["code"] == 0
    assert _loaded(found, HEAVY) == []


def test_the_modules_of_kernels_and_charts_load_neither_the_compiler_nor_altair() -> None:
    found = _run(
        """
        import vadscene.audit.compute.definition_kernels
        import vadscene.audit.compute.engine
        import vadscene.audit.compute.metrics
        import vadscene.audit.compute.pairs
        import vadscene.audit.compute.scene
        import vadscene.audit.report.figures
        import vadscene.audit.report.latex
        import vadscene.audit.report.writer
        import vadscene.audit.request
        import vadscene.measure.kernel
        import vadscene.measure.statistics
        """
    )
    assert _loaded(found, LOADED_WHEN_USED) == []


def test_the_demo_audit_and_its_whole_report_load_no_altair_and_numba_only_to_compute(
    demo_template: Path, tmp_path: Path
) -> None:
    demo = copy_demo(demo_template, tmp_path / "demo")
    arguments = [
        "audit",
        "--workspace",
        str(demo),
        "--models",
        str(demo / "benchmark" / "models.json"),
        "--bootstrap",
        "20",
        "--out",
        str(tmp_path / "report"),
    ]
    found = _run(
        f"""
        import sys
        from vadscene.audit import request
        from vadscene.cli import run

        computed = request.PreparedAudit.run

        def run_and_look(self, *args, **kwargs):
            found["before the audit"] = [p for p in ("numba", "altair") if p in sys.modules]
            result = computed(self, *args, **kwargs)
            found["after the audit"] = [p for p in ("numba", "altair") if p in sys.modules]
            return result

        request.PreparedAudit.run = run_and_look
        found["code"] = run({arguments!r})
        """
    )
    assert found["code"] == 0
    assert found["before the audit"] == []
    assert found["after the audit"] == ["numba"]  # the kernels ran
    assert _loaded(found, ("numba", "altair")) == ["numba"]  # the report's figures need no altair
    report = tmp_path / "report"
    assert (report / "report.html").is_file() and (report / "report.md").is_file()
    assert list((report / "figures").glob("*.vl.json"))


def test_a_kernel_compiles_on_its_first_call_with_the_kernels_it_calls(tmp_path: Path) -> None:
    """numba can only call its own compiled functions, so a kernel calling another by name
    gets that one compiled first; until the first call numba is not even imported."""
    (tmp_path / "two_kernels.py").write_text(
        textwrap.dedent(
            """
            from vadscene.core.kernels import compiled

            @compiled()
            def square(x):
                return x * x

            @compiled()
            def sum_of_squares(values):
                total = 0.0
                for value in values:
                    total += square(value)
                return total
            """
        ),
        encoding="utf-8",
    )
    found = _run(
        f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import numpy as np
        import two_kernels

        found["before"] = "numba" in sys.modules
        found["sum"] = two_kernels.sum_of_squares(np.array([1.0, 2.0, 3.0]))
        found["nogil"] = two_kernels.sum_of_squares.targetoptions["nogil"]  # the dispatcher's
        found["square"] = two_kernels.square(4)
        """
    )
    assert found["before"] is False
    assert found["sum"] == 1 + 4 + 9
    assert found["square"] == 16
    assert found["nogil"] is True
    assert list((tmp_path / "__pycache__").glob("two_kernels.sum_of_squares-*.nbi"))  # cached
    assert _loaded(found, ("numba",)) == ["numba"]


def test_a_kernel_cannot_drop_the_cache_or_keep_the_gil() -> None:
    from vadscene.core.kernels import compiled

    for option in ("cache", "nogil"):
        try:
            compiled(**{option: False})
        except ValueError as error:
            assert option in str(error)
        else:
            raise AssertionError(f"{option}=False was accepted")
