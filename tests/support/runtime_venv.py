"""A virtual environment holding vadscene's runtime dependencies and nothing else.

Built offline from the distributions installed here: a venv without system site-packages,
whose site-packages links exactly the distributions that the ``[project] dependencies`` of
pyproject.toml require, transitively (markers evaluated, extras not followed). Whatever a
command needs beyond them — a test tool, the optional ``distributed`` — is simply absent, so a
command that works there works after ``pip install vadscene``.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name


def runtime_closure(requirements: list[str]) -> dict[str, metadata.Distribution]:
    """Installed distributions the requirements need, transitively (no extras)."""
    found: dict[str, metadata.Distribution] = {}
    pending = [Requirement(text) for text in requirements]
    while pending:
        requirement = pending.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        name = canonicalize_name(requirement.name)
        if name in found:
            continue
        distribution = metadata.distribution(requirement.name)  # missing: PackageNotFoundError
        found[name] = distribution
        pending += [Requirement(text) for text in distribution.requires or []]
    return found


def top_level_entries(distribution: metadata.Distribution) -> set[Path]:
    """The site-packages entries (packages, modules, .libs, dist-info) a distribution owns."""
    root = Path(distribution.locate_file(""))
    entries = set()
    for file in distribution.files or []:
        first = Path(file).parts[0]
        if first not in {"..", "__pycache__"} and (root / first).exists():
            entries.add(root / first)
    return entries


def build_runtime_venv(repo: Path, target: Path) -> Path:
    """A venv at ``target`` with the runtime closure and vadscene (from ``repo``, like an
    editable install, with its console script); returns its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(target)], check=True)
    python = target / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    project = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    for distribution in runtime_closure(project["dependencies"]).values():
        for entry in top_level_entries(distribution):
            link = site / entry.name
            if not link.exists():
                link.symlink_to(entry)
    (site / "vadscene-dev.pth").write_text(f"{repo}\n", encoding="utf-8")
    script = target / "bin" / "vadscene"
    # As pip writes console scripts: measure's spawned workers import this file as their main
    # module, so it must not run the command again when imported.
    script.write_text(
        f"#!{python}\nimport sys\nfrom vadscene.cli import main\n"
        "if __name__ == '__main__':\n    sys.exit(main())\n",
        encoding="utf-8",
    )
    script.chmod(0o755)
    return python
