"""`vadscene app` and `make app`: the port is chosen by the person, and a taken one is refused
with one clear line before anything starts."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from vadscene.store.workspace import Workspace

REPO = Path(__file__).resolve().parents[2]
APP = [sys.executable, "-c", "from vadscene.cli import main; main()", "app"]


def test_a_taken_port_is_refused_in_one_line(small_workspace: Workspace) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        try:
            result = subprocess.run(
                [*APP, str(small_workspace.root), "--port", str(port)],
                capture_output=True,
                text=True,
                timeout=60,
            )
        except subprocess.TimeoutExpired as timeout:
            raise AssertionError(f"the app kept running: {timeout.stdout!r}") from None
    assert result.returncode == 1, result
    assert result.stderr.strip().splitlines() == [
        f"error: port {port} on 127.0.0.1 is already in use; serve on another one with "
        f"--port (e.g. vadscene app --port {port + 1}, or make app PORT={port + 1})"
    ]
    assert "serving" not in result.stdout  # Streamlit was never started


def test_an_address_the_machine_does_not_have_is_refused(small_workspace: Workspace) -> None:
    result = subprocess.run(
        [*APP, str(small_workspace.root), "--host", "192.0.2.1", "--port", "8501"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1, result
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error: cannot serve on 192.0.2.1:8501: "), line


@pytest.mark.parametrize(("arguments", "port"), [([], "8501"), (["PORT=8765"], "8765")])
def test_make_app_passes_the_port(arguments: list[str], port: str) -> None:
    result = subprocess.run(
        ["make", "--dry-run", "--always-make", "app", *arguments],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert f"vadscene app demo-workspace --port {port}" in result.stdout
