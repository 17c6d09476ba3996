"""The video routes of the Annotate page served by a real uvicorn server on a free localhost
port, spoken to with ``http.client`` so that request paths reach the server byte for byte (no
client normalises or re-quotes them); and the whole app, ``vadscene app``, as a process."""

from __future__ import annotations

import http.client
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import uvicorn
from starlette.applications import Starlette

from vadscene.annotate.serving import video_routes


@dataclass
class Reply:
    """One HTTP response: status, headers (names lower-cased) and body."""

    status: int
    headers: dict[str, str]
    body: bytes


@dataclass
class Server:
    """A running server on a localhost port."""

    port: int

    def get(self, path: str, headers: dict[str, str] | None = None, method: str = "GET") -> Reply:
        """Send ``path`` exactly as given (percent escapes, dots and all)."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            connection.request(method, path, headers=headers or {})
            response = connection.getresponse()
            body = response.read()
            return Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, body)
        finally:
            connection.close()


@contextmanager
def serving(workspace_root: Path, allowed_origins: Sequence[str] = ()) -> Iterator[Server]:
    """Serve ``video_routes(workspace_root, allowed_origins=…)`` with uvicorn in a background
    thread.

    The socket is bound here, to port 0, and handed to uvicorn: no race for a free port.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    app = Starlette(routes=video_routes(workspace_root, allowed_origins=allowed_origins))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)
    try:
        yield Server(sock.getsockname()[1])
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


@contextmanager
def app_process(root: Path, log: Path, *options: str) -> Iterator[int]:
    """``vadscene app ROOT OPTIONS…`` on a free port, its output in ``log``; yields the port
    once the app answers its health check, and stops it after."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-c", "from vadscene.cli import main; main()", "app", str(root)]
    command += ["--port", str(port), *options]
    with log.open("wb") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if Server(port).get("/_stcore/health").status == 200:
                    break
            except OSError:
                pass
            assert process.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.3)
        yield port
    finally:
        process.terminate()
        process.wait(timeout=20)
