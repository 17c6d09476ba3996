"""`pip install vadscene` (with the dask, team and svg extras) finds a wheel for every
distribution it needs on Linux x86_64, Linux aarch64 and macOS arm64 — or the requirement's
environment marker leaves it out there.

pip resolves for another platform (``--platform``) but evaluates environment markers for the
machine it runs on, so the closure is walked here: each requirement's marker is evaluated for
the target, pip picks the newest release the requirement admits that has a wheel for the
target's tags (``pip install --dry-run --report --no-deps``: metadata only, no wheel is
downloaded), and the requirements in that release's metadata are walked next. The index is
PyPI itself, whatever this machine's pip configuration adds.

Targets: CPython 3.11 on glibc 2.28 or later (Debian 10, Ubuntu 20.04, RHEL 8: the
``manylinux_2_28`` … ``manylinux1`` tags) for both Linux machines — av, pyarrow and
opencv-python-headless ship ``manylinux_2_28`` wheels only — and macOS 14 or later on Apple
silicon (``macosx_14_0_arm64`` … ``macosx_11_0_arm64`` and ``universal2``): av 18 has no wheel for
an older macOS.
"""

from __future__ import annotations

import json
import os
import ssl
import subprocess
import sys
import tomllib
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
PYPI = "https://pypi.org/simple"
EXTRAS = ("dask", "team", "svg")

pytestmark = pytest.mark.slow


def _manylinux(arch: str) -> list[str]:
    """The tags a glibc 2.28 machine accepts, newest first (and the legacy aliases)."""
    tags = [f"manylinux_2_{minor}_{arch}" for minor in range(28, 4, -1)]
    return [*tags, f"manylinux2014_{arch}", f"manylinux2010_{arch}", f"manylinux1_{arch}"]


def _macos_arm64() -> list[str]:
    versions = [f"{major}_0" for major in range(14, 10, -1)]
    universal = [f"10_{minor}" for minor in range(16, 8, -1)]
    return [
        *(f"macosx_{v}_arm64" for v in versions),
        *(f"macosx_{v}_universal2" for v in [*versions, *universal]),
    ]


def _environment(sys_platform: str, system: str, machine: str) -> dict[str, str]:
    """PEP 508 marker variables of CPython 3.11 on the target."""
    return {
        "implementation_name": "cpython",
        "implementation_version": "3.11.0",
        "os_name": "posix",
        "platform_machine": machine,
        "platform_python_implementation": "CPython",
        "platform_release": "",
        "platform_system": system,
        "platform_version": "",
        "python_full_version": "3.11.0",
        "python_version": "3.11",
        "sys_platform": sys_platform,
    }


@dataclass(frozen=True)
class Target:
    environment: dict[str, str]
    platforms: list[str]


TARGETS = {
    "linux-x86_64": Target(_environment("linux", "Linux", "x86_64"), _manylinux("x86_64")),
    "linux-aarch64": Target(_environment("linux", "Linux", "aarch64"), _manylinux("aarch64")),
    "macos-arm64": Target(_environment("darwin", "Darwin", "arm64"), _macos_arm64()),
}

# Left out by vadscene's own markers: decord has wheels for Linux x86_64 and Windows only, and
# the filmstrips read with PyAV without it.
EXCLUDED = {"linux-x86_64": set(), "linux-aarch64": {"decord"}, "macos-arm64": {"decord"}}


def _require_pypi() -> None:
    """Skip when PyPI cannot be reached — or fail, where VADSCENE_REQUIRE_NETWORK=1 (CI)."""
    context = ssl.create_default_context(cafile=os.environ.get("PIP_CERT") or None)
    try:
        urllib.request.urlopen(f"{PYPI}/pip/", timeout=20, context=context).close()
    except OSError as exc:
        message = f"PyPI ({PYPI}) is unreachable: {exc}"
        if os.environ.get("VADSCENE_REQUIRE_NETWORK") == "1":
            pytest.fail(f"{message}, but VADSCENE_REQUIRE_NETWORK=1 requires it")
        pytest.skip(message)


def _project_requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project.get("optional-dependencies", {})
    texts = [*project["dependencies"], *(r for e in EXTRAS for r in extras.get(e, []))]
    return [Requirement(text) for text in texts]


@dataclass
class Wanted:
    """What the walk wants of one distribution so far."""

    specifier: SpecifierSet
    extras: set[str]
    needed_by: str

    def requirement(self, name: str) -> str:
        extras = f"[{','.join(sorted(self.extras))}]" if self.extras else ""
        return f"{name}{extras}{self.specifier}"


def _pip_resolve(target: Target, requirements: list[str], scratch: Path) -> tuple[dict, str]:
    """pip's choice (report entries by name) for ``requirements`` on ``target``, each on its
    own (``--no-deps``), and pip's error output when it found none for one of them."""
    report = scratch / "report.json"
    report.unlink(missing_ok=True)
    command = [
        sys.executable, "-m", "pip", "install", "--dry-run", "--quiet", "--report", str(report),
        "--no-deps", "--ignore-installed", "--only-binary=:all:", "--target", str(scratch / "t"),
        "--python-version", "3.11", "--implementation", "cp",
        "--abi", "cp311", "--abi", "abi3", "--abi", "none", "--index-url", PYPI,
        *(f"--platform={tag}" for tag in target.platforms), *requirements,
    ]  # fmt: skip
    environment = {
        k: v for k, v in os.environ.items() if not k.startswith("PIP_") or k == "PIP_CERT"
    } | {"PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    result = subprocess.run(
        command, capture_output=True, text=True, env=environment, timeout=600, check=False
    )
    if result.returncode != 0:
        return {}, result.stderr
    entries = json.loads(report.read_text(encoding="utf-8"))["install"]
    return {canonicalize_name(e["metadata"]["name"]): e for e in entries}, ""


def _walk(target: Target, scratch: Path) -> tuple[dict[str, str], set[str], dict[str, str]]:
    """(wheel file by distribution, top-level requirements left out by their markers, pip's
    error by requirement that has no wheel for the target)."""
    wanted: dict[str, Wanted] = {}
    excluded: set[str] = set()

    def want(requirement: Requirement, needed_by: str) -> None:
        name = canonicalize_name(requirement.name)
        if name in wanted:
            wanted[name].specifier &= requirement.specifier
            wanted[name].extras |= requirement.extras
        else:
            wanted[name] = Wanted(requirement.specifier, set(requirement.extras), needed_by)

    for requirement in _project_requirements():
        marker = requirement.marker
        if marker is None or marker.evaluate(target.environment | {"extra": ""}):
            want(requirement, "vadscene")
        else:
            excluded.add(canonicalize_name(requirement.name))

    chosen: dict[str, dict] = {}
    asked: dict[str, str] = {}  # name → the requirement text pip last resolved
    missing: dict[str, str] = {}
    while True:
        batch = {
            n: w.requirement(n)
            for n, w in wanted.items()
            if n not in missing and asked.get(n) != w.requirement(n)
        }
        if not batch:
            break
        found, error = _pip_resolve(target, list(batch.values()), scratch)
        if error:  # one at a time, to name every requirement without a wheel
            found = {}
            for name, text in batch.items():
                single, error = _pip_resolve(target, [text], scratch)
                if error:
                    missing[name] = f"{text} (needed by {wanted[name].needed_by}): {error.strip()}"
                found |= single
        asked |= batch
        for name, entry in found.items():
            chosen[name] = entry
            metadata = entry["metadata"]
            for text in metadata.get("requires_dist") or []:
                requirement = Requirement(text)
                extras = {"", *wanted[name].extras}
                marker = requirement.marker
                if marker is None or any(
                    marker.evaluate(target.environment | {"extra": e}) for e in extras
                ):
                    want(requirement, f"{metadata['name']} {metadata['version']}")
    wheels = {n: e["download_info"]["url"].rsplit("/", 1)[-1] for n, e in chosen.items()}
    return wheels, excluded, missing


@pytest.mark.parametrize("platform", TARGETS)
def test_every_dependency_has_a_wheel_for_the_platform(platform: str, tmp_path: Path) -> None:
    _require_pypi()
    wheels, excluded, missing = _walk(TARGETS[platform], tmp_path)
    assert not missing, f"no wheel for {platform}:\n" + "\n".join(missing.values())
    assert excluded == EXCLUDED[platform]
    # The walk really reached the heavy, compiled parts of the stack, with wheels for the target.
    for name in ("numpy", "pyarrow", "opencv-python-headless", "av", "numba", "llvmlite"):
        assert name in wheels, sorted(wheels)
    compiled = [wheels[n] for n in ("numpy", "av", "numba")]
    machine = {"linux-x86_64": "x86_64", "linux-aarch64": "aarch64", "macos-arm64": "arm64"}
    assert all(machine[platform] in w or "universal2" in w for w in compiled), compiled
    assert ("decord" in wheels) == (platform == "linux-x86_64")
