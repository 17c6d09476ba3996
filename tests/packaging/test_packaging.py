"""The package is the product: it imports no test tool, and its declared dependencies are
exactly what it imports."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import vadscene

ROOT = Path(__file__).resolve().parents[2]
TEST_TOOLS = ("hypothesis", "pytest", "_pytest", "sklearn", "playwright")
# (jsonschema is not among them: altair, a runtime dependency, imports it.)

IMPORT_EVERYTHING = """
import pkgutil, importlib, sys
import vadscene
for module in pkgutil.walk_packages(vadscene.__path__, "vadscene."):
    importlib.import_module(module.name)
print(",".join(sorted(name for name in {tools!r} if name in sys.modules)))
"""


def test_importing_every_module_loads_no_test_tool() -> None:
    result = subprocess.run(
        [sys.executable, "-c", IMPORT_EVERYTHING.format(tools=TEST_TOOLS)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""  # the names of test tools that were imported


# Distribution name of each top-level module the package may import.
DISTRIBUTIONS = {
    "numpy": "numpy",
    "pandas": "pandas",
    "pyarrow": "pyarrow",
    "pydantic": "pydantic",
    "yaml": "pyyaml",
    "cv2": "opencv-python-headless",
    "av": "av",
    "numba": "numba",
    "decord": "decord",
    "threadpoolctl": "threadpoolctl",
    "streamlit": "streamlit",
    "starlette": "starlette",
    "altair": "altair",
    "vl_convert": "vl-convert-python",
    "typer": "typer",
    "rich": "rich",
    "distributed": "distributed",
}


def _third_party_imports() -> set[str]:
    """Top-level names of the non-standard-library modules imported by vadscene/ and app/."""
    names: set[str] = set()
    for folder in ("vadscene", "app"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names |= {alias.name.split(".")[0] for alias in node.names}
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names.add(node.module.split(".")[0])
    local = {"vadscene", "app_state", "identity", "components", "app_pages", "server"}
    return names - set(sys.stdlib_module_names) - local


def _requirement_name(requirement: str) -> str:
    for separator in "<>=!~[; ":
        requirement = requirement.split(separator)[0]
    return requirement.lower()


def test_declared_dependencies_are_what_the_package_imports() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    runtime = {_requirement_name(r) for r in project["dependencies"]}
    extras = project["optional-dependencies"]
    dask = {_requirement_name(r) for r in extras["dask"]}
    svg = {_requirement_name(r) for r in extras["svg"]}
    imported = _third_party_imports()
    assert imported <= DISTRIBUTIONS.keys(), f"unmapped imports: {imported - DISTRIBUTIONS.keys()}"
    needed = {DISTRIBUTIONS[name] for name in imported}
    # Imported but optional: distributed (vadscene[dask]) and vl-convert-python (vadscene[svg]).
    assert runtime == needed - {"distributed", "vl-convert-python"}
    assert dask == {"distributed"}
    assert svg == {"vl-convert-python"}
    assert "hypothesis" not in runtime and "pytest" not in runtime


def test_the_wheel_ships_no_test_harness() -> None:
    assert not (ROOT / "vadscene" / "reliability.py").exists()
    assert "reliability" not in {p.stem for p in Path(vadscene.__file__).parent.glob("*.py")}
