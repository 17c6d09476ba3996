"""With only the runtime dependencies (no dev extra, no Dask) vadscene builds the demo,
measures it, audits it and serves the app."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from browser import chromium_page, served_app
from support.runtime_venv import build_runtime_venv

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.slow, pytest.mark.browser]


@pytest.fixture(scope="module")
def runtime_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_runtime_venv(ROOT, tmp_path_factory.mktemp("runtime") / "venv")


def _vadscene(python: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    command = [str(python.parent / "vadscene"), *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, check=False, timeout=600)


@pytest.mark.parametrize(
    "module", ["hypothesis", "pytest", "playwright", "sklearn", "distributed", "vl_convert"]
)
def test_the_runtime_venv_really_lacks_the_extras(runtime_python: Path, module: str) -> None:
    result = subprocess.run(
        [str(runtime_python), "-c", f"import {module}"], capture_output=True, text=True
    )
    assert result.returncode == 1 and "ModuleNotFoundError" in result.stderr


def test_demo_measure_audit_and_app_run_on_the_runtime_dependencies(
    runtime_python: Path, tmp_path: Path
) -> None:
    workspace = tmp_path / "demo"
    demo = _vadscene(runtime_python, "demo", workspace)
    assert demo.returncode == 0, demo.stderr
    assert "demo workspace" in demo.stdout and "12 videos" in demo.stdout

    # The demo comes measured: measure a fresh workspace over its videos.
    fresh = tmp_path / "fresh"
    initialised = _vadscene(runtime_python, "init", fresh, "--videos", workspace / "benchmark")
    assert initialised.returncode == 0, initialised.stderr
    no_dask = _vadscene(runtime_python, "measure", fresh, "--scheduler", "tcp://127.0.0.1:1")
    assert no_dask.returncode == 1
    assert "pip install 'vadscene[dask]'" in no_dask.stderr and "Traceback" not in no_dask.stderr
    measured = _vadscene(runtime_python, "measure", fresh, "--workers", "2")
    assert measured.returncode == 0, measured.stderr
    assert "measured 12 videos" in measured.stdout

    report = tmp_path / "report"
    models = workspace / "benchmark" / "models.json"
    audit_args = ("--workspace", workspace, "--models", models, "--out", report)
    audited = _vadscene(runtime_python, "audit", *audit_args, "--bootstrap", "20")
    assert audited.returncode == 0, audited.stderr
    assert "micro AUROC" in audited.stdout and any(report.iterdir())
    # The page draws its figures with the bundle vadscene ships; SVG files need vadscene[svg].
    assert "window.vegaEmbed=" in (report / "report.html").read_text(encoding="utf-8")
    svg_args = ("--workspace", workspace, "--models", models, "--out", tmp_path / "svg")
    no_svg = _vadscene(runtime_python, "audit", *svg_args, "--bootstrap", "20", "--svg")
    assert no_svg.returncode == 1 and "Traceback" not in no_svg.stderr
    assert "--svg needs vl-convert: pip install 'vadscene[svg]'" in no_svg.stderr
    assert not (tmp_path / "svg").exists()

    log = tmp_path / "server.log"
    with served_app(workspace, log, python=runtime_python) as url, chromium_page() as page:
        page.goto(f"{url}/?annotator=runtime&video=Arson001_x264")
        page.locator("video:not([hidden])").wait_for(timeout=60_000)
