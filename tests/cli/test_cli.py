"""The command line: help texts, the documented demo → export → validate path, errors."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
import typer
from helpers import copy_demo
from pseudo_terminal import in_a_terminal

from vadscene.cli import app, run
from vadscene.core.errors import WorkspaceError


def _cli(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = run([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _flat(text: str) -> str:
    """Help text without rich's box drawing and wrapping."""
    return re.sub(r"\s+", " ", re.sub(r"[│╭╮╰╯─]", " ", text))


COMMANDS = sorted(typer.main.get_command(app).commands)  # every group's, as served


def test_every_command_is_listed() -> None:
    assert (
        sorted(
            [
                "init",
                "scan",
                "status",
                "demo",
                "export",
                "diff",
                "validate",
                "import",
                "audit",
                "app",
                "measure",
                "thresholds",
                "proxies",
                "splices",
                "labelstudio-export",
                "labelstudio-import",
                "annotators",
                "assign",
            ]
        )
        == COMMANDS
    )


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help_ending_in_an_example(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    code, out, _ = _cli(capsys, command, "--help")
    assert code == 0
    help_text = _flat(out)
    assert f"Example: vadscene {command}" in help_text
    assert help_text.rstrip().endswith(help_text[help_text.index("Example:") :].rstrip())


def test_demo_export_validate(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, demo_build: tuple[Path, int, str]
) -> None:
    """The acceptance path: demo → export (JSON + CSV) → validate, schema beside the release.

    `vadscene demo` itself ran once for the session (the ``demo_build`` fixture)."""
    template, code, output = demo_build
    assert code == 0 and f"demo workspace {template}: 12 videos" in output
    workspace = copy_demo(template, tmp_path / "w")
    release, table = tmp_path / "r.json", tmp_path / "r.csv"
    code, out, _ = _cli(capsys, "export", workspace, "--out", release, "--csv", table)
    assert code == 0, out
    assert (tmp_path / "release-v2.schema.json").is_file()
    code, out, _ = _cli(capsys, "validate", release)
    assert (code, out.startswith(f"OK: {release}")) == (0, True)
    data = json.loads(release.read_text())
    assert len(data["videos"]) == len(table.read_text().splitlines()) - 1 == 12

    code, out, _ = _cli(capsys, "import", tmp_path / "copy", release)
    assert code == 0 and "created" in out
    code, out, _ = _cli(capsys, "status", workspace)
    assert code == 0 and "12 videos" in out


def test_validate_reports_errors_with_exit_code_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"schema_version": 1, "dataset": "x"}))
    code, out, err = _cli(capsys, "validate", bad)
    assert code == 1 and "OK" not in out
    assert "$.created_at: Field required" in err and "$.videos: Field required" in err


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["init", "{tmp}/ws", "--videos", "{tmp}/none"], "video folder"),
        (["init", "{tmp}/ws", "--videos", "{tmp}", "--gt-format", "xml"], "unknown --gt-format"),
        (["scan", "{tmp}/nothing"], "not a vadscene workspace"),
        (["export", "{tmp}/nothing", "--out", "{tmp}/r.json"], "not a vadscene workspace"),
        (["validate", "{tmp}/none.json"], "release file not found"),
        (["import", "{tmp}/ws", "{tmp}/none.json"], "release file not found"),
    ],
)
def test_bad_input_is_one_clear_message_and_exit_code_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str], fragment: str
) -> None:
    code, _, err = _cli(capsys, *(a.format(tmp=tmp_path) for a in args))
    assert code == 1
    assert fragment in err
    assert "Traceback" not in err


def test_a_missing_dask_extra_names_the_extra(
    capsys: pytest.CaptureFixture[str], small_workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`distributed` is the optional extra vadscene[dask]; without it --scheduler says so."""
    monkeypatch.setitem(sys.modules, "distributed", None)  # what `import` sees when absent
    code, _, err = _cli(
        capsys, "measure", small_workspace.root, "--scheduler", "tcp://127.0.0.1:8786"
    )
    assert code == 1
    assert err.strip().splitlines() == [
        "error: --scheduler tcp://127.0.0.1:8786: running on a Dask cluster needs the optional "
        "package 'distributed'; install it with: pip install 'vadscene[dask]'"
    ]
    assert small_workspace.store.measurements() == {}


@pytest.mark.parametrize(
    ("args", "exit_code"),
    [(["export", "{tmp}/nothing", "--out", "{tmp}/r.json"], 1), (["export", "{tmp}"], 2)],
)
def test_every_failure_is_exactly_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str], exit_code: int
) -> None:
    code, out, err = _cli(capsys, *(a.format(tmp=tmp_path) for a in args))
    assert (code, out) == (exit_code, "")
    assert len(err.strip().splitlines()) == 1 and err.startswith("error: ")


def test_debug_lets_the_error_and_its_traceback_through(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError, match="not a vadscene workspace"):
        run(["--debug", "export", str(tmp_path / "nothing"), "--out", str(tmp_path / "r.json")])
    assert run(["export", str(tmp_path / "nothing"), "--out", str(tmp_path / "r.json")]) == 1


def _status_at_80_columns(root: Path) -> list[str]:
    """`status` as a terminal 80 columns wide shows it."""
    return in_a_terminal(["status", str(root)], columns=80).splitlines()


def test_status_is_readable_at_80_columns_and_prints_names_verbatim(small_workspace) -> None:
    store = small_workspace.store
    video = store.video_ids()[0]
    store.record_decision(video, "color", "grayscale", annotator="[/]")  # rich markup, as text
    store.record_decision(video, "color", "color", annotator="[bold]ana")
    store.record_decision(video, "crowd", "few", annotator="[bold]ana")
    lines = _status_at_80_columns(small_workspace.root)
    table = [line for line in lines if "│" in line or "┃" in line]
    assert table and all(len(line) <= 80 for line in table)
    text = "\n".join(lines)
    assert "…" not in text  # no column squeezed to an ellipsis
    assert "[/]" in text and "[bold]ana" in text
    # Every manual factor is a row, with each annotator's count of decided videos.
    rows = {
        cells[0]: cells[1:]
        for cells in (
            [c.strip() for c in line.split("│")[1:-1]] for line in table if line.startswith("│")
        )
    }
    assert rows["color"] == ["1", "1"] and rows["crowd"] == ["0", "1"]
    assert rows["videos complete"] == ["0/4", "0/4"]


def test_status_without_annotators_says_so_instead_of_an_empty_table(small_workspace) -> None:
    lines = _status_at_80_columns(small_workspace.root)
    assert lines[-1] == "no annotator has recorded a decision yet"
    assert not any("annotator" in line and "│" in line for line in lines)
