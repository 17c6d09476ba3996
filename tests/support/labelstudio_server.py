"""A real Label Studio server on loopback, for the slow round-trip tests.

Label Studio pins older numpy, OpenCV and pyarrow than vadscene, so it lives in a venv of its
own: ``.venv-labelstudio`` at the checkout's root (``make test`` builds it from
``tests/support/labelstudio-requirements.txt``), or the executable named by
``VADSCENE_LABEL_STUDIO``. Tests skip where it is absent, except when
``VADSCENE_REQUIRE_LABELSTUDIO=1`` (CI), where that is a failure.

The server is spoken to through its REST API with ``urllib`` and the legacy token scheme
(``Authorization: Token …``), which ``LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN`` turns on for the
organisation made at first start.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXECUTABLE_VARIABLE = "VADSCENE_LABEL_STUDIO"
REQUIRE_VARIABLE = "VADSCENE_REQUIRE_LABELSTUDIO"
DEFAULT_EXECUTABLE = ROOT / ".venv-labelstudio" / "bin" / "label-studio"

OWNER = "owner@vadscene.test"
"""The account the server creates at first start (the organisation's owner), whose token
the tests use."""
PASSWORD = "round-trip-password"
"""The owner's password, for a browser logging in."""
TOKEN = "vadscene-round-trip-token-0123456789"
START_TIMEOUT_S = 240
"""The first start applies every migration to an empty database."""


def label_studio_executable() -> Path:
    """The ``label-studio`` executable; skip (fail under ``VADSCENE_REQUIRE_LABELSTUDIO=1``)
    when there is none."""
    path = Path(os.environ.get(EXECUTABLE_VARIABLE) or DEFAULT_EXECUTABLE)
    if not os.access(path, os.X_OK):
        message = (
            f"Label Studio not found at {path} (make .venv-labelstudio/.installed, or set "
            f"{EXECUTABLE_VARIABLE})"
        )
        if os.environ.get(REQUIRE_VARIABLE) == "1":
            pytest.fail(f"{message}, and {REQUIRE_VARIABLE}=1 requires it")
        pytest.skip(message)
    return path


class LabelStudioAPIError(AssertionError):
    """The server answered an API call with an error status; the message holds its body."""

    def __init__(self, method: str, path: str, status: int, body: str) -> None:
        super().__init__(f"{method} {path}: {status} {body[:2000]}")
        self.status = status
        self.body = body


@dataclass(frozen=True)
class LabelStudio:
    """A running server: its address and the owner's token."""

    url: str
    port: int

    def request(self, method: str, path: str, body: Any = None) -> bytes:
        """The raw body of an API call; :class:`LabelStudioAPIError` for an error status."""
        request = urllib.request.Request(
            self.url + path,
            method=method,
            data=None if body is None else json.dumps(body).encode("utf-8"),
            headers={"Authorization": f"Token {TOKEN}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return bytes(response.read())
        except urllib.error.HTTPError as exc:
            raise LabelStudioAPIError(
                method, path, exc.code, exc.read().decode("utf-8", "replace")
            ) from None

    def api(self, method: str, path: str, body: Any = None) -> Any:
        """An API call's JSON answer."""
        raw = self.request(method, path, body)
        return json.loads(raw) if raw else None

    def add_user(self, email: str) -> int:
        """A new member of the organisation with this e-mail; its user id."""
        user = self.api("POST", "/api/users/", {"email": email, "username": email.split("@")[0]})
        return int(user["id"])


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def label_studio_server(data_dir: Path, log_path: Path) -> Iterator[LabelStudio]:
    """``label-studio start`` on a free loopback port with its data in ``data_dir``; yields
    once ``/health`` answers, and stops the server's whole process group afterwards."""
    executable = label_studio_executable()
    port = _free_port()
    env = {
        **os.environ,
        "LABEL_STUDIO_BASE_DATA_DIR": str(data_dir),
        "LABEL_STUDIO_USERNAME": OWNER,
        "LABEL_STUDIO_PASSWORD": PASSWORD,
        "LABEL_STUDIO_USER_TOKEN": TOKEN,
        "LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN": "true",
    }
    command = [
        str(executable),
        "start",
        "--no-browser",
        "--internal-host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    with log_path.open("wb") as log:
        server = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"Label Studio did not start: {log_path.read_text()[-3000:]}")
                time.sleep(0.5)
        yield LabelStudio(url, port)
    finally:
        _stop(server)


def _stop(server: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the server's process group (the server and any process it started), then,
    after a grace period, SIGKILL to whatever of the group is left."""
    with suppress(ProcessLookupError, subprocess.TimeoutExpired):
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=20)
    with suppress(ProcessLookupError):
        os.killpg(server.pid, signal.SIGKILL)
    server.wait(timeout=10)
