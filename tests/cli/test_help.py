"""Every command's help, rendered: each option's help text and metavar, and the example, as
declared; `-h` wherever `--help` works; `python -m vadscene` is the same command."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer

from vadscene import __version__
from vadscene.cli import app, run


def _commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """(path, command) of the root and of every command and group under it, as declared."""
    yield path, command
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from _commands(sub, (*path, name))


DECLARED = list(_commands(typer.main.get_command(app)))
"""The tree as declared in the source (built anew: nothing :func:`vadscene.cli.run` does to
lay its help out is applied to it)."""


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _help(capsys: pytest.CaptureFixture[str], path: tuple[str, ...], flag: str = "--help") -> str:
    code = run([*path, flag])
    captured = capsys.readouterr()
    assert (code, captured.err) == (0, ""), captured.err
    return captured.out


@pytest.mark.parametrize("columns", [60, 80, 120])
@pytest.mark.parametrize(
    ("path", "command"), DECLARED, ids=[" ".join(p) or "vadscene" for p, _ in DECLARED]
)
def test_help_shows_every_option_its_metavar_and_the_example_as_declared(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    columns: int,
    path: tuple[str, ...],
    command: Any,
) -> None:
    """Nothing is taken for markup ("vadscene[dask]", "NAME=PATH[@FAMILY][:K]"), broken at a
    hyphen or boxed in; flags show no metavar; the example is one line, ready to copy."""
    monkeypatch.setenv("COLUMNS", str(columns))
    shown = _help(capsys, path)
    flat = _flat(shown)
    context = typer.Context(command, info_name="vadscene")
    assert _flat((command.help or "").split("\f")[0]) in flat
    for param in command.params:
        if param.help:
            assert _flat(param.help) in flat, (param.name, param.help)
        if not isinstance(param, typer.core.TyperOption):
            continue
        record = param.get_help_record(context)
        assert record is not None
        names = record[0]  # "--out <path>", "--latex", "--scores NAME=PATH[@FAMILY][:K]"
        assert re.search(rf"^ +{re.escape(names)}( |$)", shown, re.MULTILINE), names
        if param.metavar:
            assert f"{param.opts[0]} {param.metavar}" == names
        if param.is_flag:
            assert "<" not in names, names
    assert not re.search(r"[│╭╮╰╯─┃]", shown)
    assert "<bool>" not in shown
    if command.epilog:
        example = command.epilog
        assert example.startswith("Example: vadscene")
        assert f"  {example}" in shown.splitlines(), "the example is not one line as declared"


@pytest.mark.parametrize(
    "path", [p for p, _ in DECLARED], ids=[" ".join(p) or "vadscene" for p, _ in DECLARED]
)
def test_h_is_accepted_wherever_help_is(
    capsys: pytest.CaptureFixture[str], path: tuple[str, ...]
) -> None:
    assert _help(capsys, path, "-h") == _help(capsys, path, "--help")


def test_python_m_vadscene_is_the_vadscene_command() -> None:
    script = Path(sys.executable).with_name("vadscene")
    env = {**os.environ, "COLUMNS": "80"}
    shown = {}
    for args in (["--version"], ["--help"], ["status", "-h"]):
        module = subprocess.run(
            [sys.executable, "-m", "vadscene", *args], capture_output=True, text=True, env=env
        )
        console = subprocess.run([script, *args], capture_output=True, text=True, env=env)
        assert (module.returncode, module.stderr) == (0, "")
        assert module.stdout == console.stdout
        shown[args[-1]] = module.stdout
    assert shown["--version"] == f"vadscene {__version__}\n"
    assert shown["--help"].startswith("Usage: vadscene [OPTIONS] COMMAND [ARGS]...")
    assert shown["-h"].startswith("Usage: vadscene status [OPTIONS]")


@pytest.mark.parametrize("path", [(), ("annotators",)], ids=["vadscene", "annotators"])
def test_a_group_without_a_command_shows_its_help(
    capsys: pytest.CaptureFixture[str], path: tuple[str, ...]
) -> None:
    assert run(list(path)) == 2
    captured = capsys.readouterr()
    assert captured.err == ""
    assert captured.out.rstrip("\n") == _help(capsys, path).rstrip("\n")
