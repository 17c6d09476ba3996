"""The ``app`` command: serve the annotation app (Streamlit) for a workspace."""

from __future__ import annotations

import errno
import os
import socket
import sys
from pathlib import Path
from typing import Annotated

import typer

from vadscene.cli.console import out
from vadscene.cli.workspace import demo
from vadscene.core.errors import VadsceneError
from vadscene.store.workspace import Workspace

commands = typer.Typer()


def _check_port_free(host: str, port: int) -> None:
    """Raise one clear :class:`VadsceneError` when the app could not listen on host:port.

    Binds the way the server will (SO_REUSEADDR, so a port a stopped server left in
    TIME_WAIT is free): only a live listener — another app, another Streamlit — is refused.
    """
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise VadsceneError(
                f"port {port} on {host} is already in use; serve on another one with "
                f"--port (e.g. vadscene app --port {port + 1}, or make app PORT={port + 1})"
            ) from None
        reason = exc.strerror or str(exc)
        raise VadsceneError(f"cannot serve on {host}:{port}: {reason}") from None


@commands.command(name="app", epilog="Example: vadscene app ucf-ws --port 8501")
def app_(
    workspace: Annotated[
        Path | None, typer.Argument(help="Workspace (default: the demo workspace).")
    ] = None,
    port: Annotated[int, typer.Option(help="Port to serve on.")] = 8501,
    host: Annotated[
        str, typer.Option(help="Address to bind; 127.0.0.1 keeps the app on this machine.")
    ] = "127.0.0.1",
    allow_host: Annotated[
        list[str] | None,
        typer.Option(
            help="A further host name browsers may reach the app by (repeatable); only "
            "127.0.0.1, localhost, the --host address and these are answered."
        ),
    ] = None,
) -> None:
    """Start the annotation app in the browser."""
    from vadscene.annotate.serving import ALLOWED_HOSTS_VARIABLE
    from vadscene.core.paths import app_server_script, default_demo_workspace

    _check_port_free(host, port)  # before a demo build: a taken port is known at once
    if workspace is None:
        workspace = default_demo_workspace()
        if not (workspace / "vadscene.yaml").exists():
            out.print(f"building the demo workspace at {workspace} …")
            demo(workspace)
    Workspace.open(workspace).close()
    names = [*(allow_host or []), *([host] if host not in ("0.0.0.0", "::") else [])]
    env = {
        **os.environ,
        "VADSCENE_WORKSPACE": str(Path(workspace).resolve()),
        ALLOWED_HOSTS_VARIABLE: ",".join(names),
    }
    settings = {
        "server.address": host,
        "server.port": port,
        "server.headless": "true",
        "browser.gatherUsageStats": "false",
        "client.toolbarMode": "minimal",
        # Streamlit forces a full garbage collection after every run: with the app's imports
        # that costs each key on the Annotate page CPU time, holding the GIL while the
        # confirmation waits to be sent. Python's own collector still runs as it always does.
        "runner.postScriptGC": "false",
        # Streamlit's source watcher (a developer's reload-on-save) walks every imported
        # module's path after each session's first run, on the server's event loop: with the
        # app's imports that holds every page load's surface back.
        "server.fileWatcherType": "none",
    }
    command = [sys.executable, "-m", "streamlit", "run", str(app_server_script())]
    command += [part for key, value in settings.items() for part in (f"--{key}", str(value))]
    out.print(f"serving {workspace} at http://{host}:{port}")
    sys.stdout.flush()
    # Become the Streamlit server (same process id): stopping `vadscene app` stops the server,
    # with no orphaned child left holding the port.
    os.execve(sys.executable, command, env)
