"""The package's folders are the stages of the data flow, and imports run only down that flow.

``vadscene/`` holds one folder per stage, in this order (README, "Layout"):

    core → benchmark → video → store → measure → annotate → release → audit → demo → cli

and inside ``audit/``: io → compute → report. A module may import its own stage and earlier
ones, never a later one, and no two modules may import each other, directly or through others.
The imports are read from the source (every ``import`` statement, those inside functions
included), so a deferred import is held to the same rule.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "vadscene"
STAGES = ("core", "benchmark", "video", "store", "measure", "annotate", "release", "audit")
STAGES += ("demo", "cli", "__main__")  # vadscene/__main__.py: `python -m vadscene`
AUDIT_STAGES = ("io", "compute", "report")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(path: Path, known: set[str]) -> set[str]:
    """The vadscene modules ``path`` imports (``from pkg import module`` names the module)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            raise AssertionError(f"{path}: relative import; vadscene imports by absolute name")
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("vadscene"):
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                found.add(submodule if submodule in known else str(node.module))
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("vadscene"))
    return found


def import_graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports_of(path, set(known)) - {name} for name, path in known.items()}


def stage_rank(module: str) -> tuple[int, ...] | None:
    """Where ``module`` stands in the flow; None for the package's face (``vadscene``).

    A module directly in ``audit/`` (its face, and what combines io, compute and report) ranks
    after all three sub-stages.
    """
    parts = module.split(".")
    if len(parts) < 2:
        return None
    rank: tuple[int, ...] = (STAGES.index(parts[1]),)
    if parts[1] == "audit":
        inner = parts[2] if len(parts) > 2 and parts[2] in AUDIT_STAGES else None
        rank += (AUDIT_STAGES.index(inner) if inner else len(AUDIT_STAGES),)
    return rank


def test_every_module_belongs_to_a_stage() -> None:
    strays = [name for name in modules() if name != "vadscene" and name.split(".")[1] not in STAGES]
    assert strays == [], f"modules outside the stage folders {STAGES}: {strays}"
    audit_strays = [
        name
        for name in modules()
        if name.startswith("vadscene.audit.")
        and name.count(".") > 2
        and name.split(".")[2] not in AUDIT_STAGES
    ]
    assert audit_strays == []


def test_no_stage_imports_a_later_one() -> None:
    backwards = []
    for module, imported in sorted(import_graph().items()):
        for target in sorted(imported):
            mine, theirs = stage_rank(module), stage_rank(target)
            if mine is not None and theirs is not None and theirs > mine:
                backwards.append(f"{module} → {target}")
    assert backwards == [], "imports against the flow:\n" + "\n".join(backwards)


def test_the_package_face_imports_no_stage() -> None:
    assert import_graph()["vadscene"] == set()


def test_no_import_cycles() -> None:
    graph = import_graph()
    cycles: list[list[str]] = []
    state: dict[str, str] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = "open"
        for target in sorted(graph.get(node, ())):
            # Importing a submodule runs its parent package first: that edge is not a cycle.
            if node.startswith(target + "."):
                continue
            if state.get(target) == "open":
                cycles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target, [*path, target])
        state[node] = "done"

    for start in sorted(graph):
        if start not in state:
            visit(start, [start])
    assert cycles == [], "import cycles:\n" + "\n".join(" → ".join(c) for c in cycles)


@pytest.mark.parametrize(
    ("module", "target"),
    [
        ("vadscene.video.proxies", "vadscene.store.workspace"),
        ("vadscene.audit.io.sources", "vadscene.audit.compute.scene"),
        ("vadscene.core.records", "vadscene.release.releases"),
    ],
)
def test_the_rule_sees_a_backward_import(module: str, target: str) -> None:
    """The check can fail: each of these imports would run against the flow."""
    mine, theirs = stage_rank(module), stage_rank(target)
    assert mine is not None and theirs is not None and theirs > mine
