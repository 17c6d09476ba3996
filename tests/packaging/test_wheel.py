"""The wheel is the product: built with `python -m build`, installed into a fresh venv (next to
the runtime dependencies, nothing else), it carries the catalogues, the app and the report's
script bundle, and its `vadscene` command builds the demo and serves the app."""

from __future__ import annotations

import email.parser
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from support.runtime_venv import runtime_closure, top_level_entries

import vadscene

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    # Without build isolation: the backend (hatchling, in the dev extra) is installed here, so
    # the build needs no network.
    command = [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out)]
    result = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=600, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    (built,) = out.glob("*.whl")
    assert built.name == f"vadscene-{vadscene.__version__}-py3-none-any.whl"
    return built


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv holding the runtime dependencies (linked from here, as in
    :mod:`support.runtime_venv`) and the wheel, installed by pip; returns its ``bin``."""
    venv = tmp_path_factory.mktemp("wheel-venv") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    for distribution in runtime_closure(_wheel_requirements(wheel)).values():
        for entry in top_level_entries(distribution):
            if not (site / entry.name).exists():
                (site / entry.name).symlink_to(entry)
    install = [sys.executable, "-m", "pip", "--python", str(python), "install"]
    result = subprocess.run(
        [*install, "--no-deps", "--no-index", str(wheel)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return venv / "bin"


def _metadata(wheel: Path) -> email.message.Message:
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        return email.parser.Parser().parsestr(archive.read(name).decode())


def _wheel_requirements(wheel: Path) -> list[str]:
    """The wheel's own requirements, from its METADATA (extras' are left out by the closure)."""
    return _metadata(wheel).get_all("Requires-Dist") or []


def test_the_wheel_carries_the_catalogues_the_app_and_the_bundle(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    catalogues = {p.name for p in (ROOT / "annotations" / "catalogues").glob("*.yaml")}
    assert catalogues and {f"vadscene/catalogues/{c}" for c in catalogues} <= names
    app = {str(p.relative_to(ROOT)) for p in (ROOT / "app").rglob("*") if p.is_file()}
    app = {a for a in app if "__pycache__" not in a}
    assert app and {f"vadscene/{a}" for a in app} <= names
    report = "vadscene/audit/report/"
    assert {f"{report}vega-bundle.js", f"{report}vega-bundle-licenses.txt"} <= names
    assert not [n for n in names if n.startswith(("tests/", "app/", "bench/", "annotations/"))]
    metadata = _metadata(wheel)
    required = {Requirement(r).name: Requirement(r) for r in metadata.get_all("Requires-Dist")}
    decord = required["decord"].marker
    assert decord is not None and not decord.evaluate({"platform_machine": "arm64", "extra": ""})
    assert {"dask", "team", "svg", "dev"} <= set(metadata.get_all("Provides-Extra"))
    vl_convert = required["vl-convert-python"].marker
    assert vl_convert is not None and not vl_convert.evaluate({"extra": ""})


def _run(bin_dir: Path, *args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    # Run outside the checkout, so that nothing imports the source tree instead of the wheel.
    return subprocess.run(
        [str(bin_dir / "vadscene"), *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=600,
        check=False,
    )


def test_the_installed_wheel_runs_demo_and_app(installed: Path, tmp_path: Path) -> None:
    where = subprocess.run(
        [
            str(installed / "python"),
            "-c",
            "import vadscene; from vadscene.core import paths; "
            "print(vadscene.__file__); print(paths.default_catalogue_path()); "
            "print(paths.app_server_script())",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
    ).stdout.split()
    site = installed.parent / "lib"
    assert all(Path(p).is_relative_to(site) for p in where), where

    version = _run(installed, "--version", cwd=tmp_path)
    assert version.returncode == 0 and vadscene.__version__ in version.stdout, version

    demo = _run(installed, "demo", tmp_path / "demo", cwd=tmp_path)
    assert demo.returncode == 0, demo.stderr
    assert "demo workspace" in demo.stdout and "12 videos" in demo.stdout

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = tmp_path / "app.log"
    command = [str(installed / "vadscene"), "app", str(tmp_path / "demo"), "--port", str(port)]
    with log.open("wb") as sink:
        server = subprocess.Popen(command, stdout=sink, stderr=sink, cwd=tmp_path)
    try:
        assert _first_answer(f"http://127.0.0.1:{port}/", server) == 200, log.read_text()
    finally:
        server.terminate()
        server.wait(timeout=10)


def _first_answer(url: str, server: subprocess.Popen[bytes], wait: float = 90) -> int | None:
    """The status of the first answer to GET ``url``; None if the server exits or does not
    answer within ``wait`` seconds."""
    deadline = time.monotonic() + wait
    while server.poll() is None and time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                return int(response.status)
        except OSError:
            time.sleep(0.3)
    return None
