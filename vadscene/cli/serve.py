"""The ``app`` command: serve the annotation app (Streamlit) for a workspace."""

from __future__ import annotations

import errno
import importlib.util
import json
import os
import secrets
import socket
import sys
import tempfile
import tomllib
from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit

import typer

from vadscene.cli.console import out
from vadscene.cli.workspace import demo

commands = typer.Typer()


def _check_port_free(host: str, port: int) -> None:
    """Raise one clear :class:`VadsceneError` when the app could not listen on host:port.

    Binds the way the server will (SO_REUSEADDR, so a port a stopped server left in
    TIME_WAIT is free): only a live listener — another app, another Streamlit — is refused.
    """
    from vadscene.core.errors import VadsceneError

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


OIDC_KEYS = {
    "server_metadata_url": "--oidc-metadata-url",
    "client_id": "--oidc-client-id",
    "client_secret": "--oidc-client-secret",
}
"""What Streamlit's OpenID Connect login needs (the keys of its ``[auth]`` secrets), and the
option giving each."""


def _oidc_settings(given: dict[str, str | None], secrets_file: Path | None) -> dict[str, str]:
    """The provider settings from the options, over those of ``--oidc-secrets`` (a TOML file
    holding them, top-level or in an ``[auth]`` table as in Streamlit's ``secrets.toml``); {}
    when none is given. One clear error for a file that cannot be read or a key missing."""
    from vadscene.core.errors import VadsceneError

    settings: dict[str, str] = {}
    if secrets_file is not None:
        try:
            data = tomllib.loads(secrets_file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise VadsceneError(f"--oidc-secrets {secrets_file}: cannot be read ({exc})") from None
        section = data.get("auth", data)
        for key in OIDC_KEYS:
            if key in section:
                if not isinstance(section[key], str):
                    raise VadsceneError(f"--oidc-secrets {secrets_file}: {key} must be text")
                settings[key] = section[key]
    settings.update({key: value for key, value in given.items() if value})
    if not settings:
        return {}
    missing = [f"{option} ({key})" for key, option in OIDC_KEYS.items() if key not in settings]
    if missing:
        raise VadsceneError(
            "OpenID Connect login needs the provider's metadata URL, client id and client "
            f"secret; missing: {', '.join(missing)}"
        )
    if importlib.util.find_spec("authlib") is None:
        raise VadsceneError("OpenID Connect login needs Authlib: pip install 'streamlit[auth]'")
    return settings


def _public_url(public_url: str | None, host: str, port: int, scheme: str) -> str:
    """The address browsers open, without a trailing slash."""
    from vadscene.core.errors import VadsceneError

    if public_url is None:
        shown = "localhost" if host in ("0.0.0.0", "::") else host
        return f"{scheme}://{shown}:{port}"
    parsed = urlsplit(public_url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise VadsceneError(
            f"--public-url {public_url}: expected the address browsers open, "
            "e.g. https://annotate.lab.org"
        )
    return public_url.rstrip("/")


def _check_tls(cert: Path | None, key: Path | None) -> None:
    from vadscene.core.errors import VadsceneError

    if (cert is None) != (key is None):
        given, needed = (
            ("--ssl-cert-file", "--ssl-key-file")
            if key is None
            else (
                "--ssl-key-file",
                "--ssl-cert-file",
            )
        )
        raise VadsceneError(f"{given} needs {needed} too (the certificate and its private key)")
    for option, path in (("--ssl-cert-file", cert), ("--ssl-key-file", key)):
        if path is not None and not path.is_file():
            raise VadsceneError(f"{option} {path}: no such file")


def _check_team(workspace: Path) -> None:
    """Team mode lets in registered annotators only: refuse to start without one."""
    from vadscene.core.errors import VadsceneError
    from vadscene.store.workspace import Workspace

    with Workspace.open(workspace) as opened:
        active = [entry for entry in opened.store.annotator_registry() if entry.active]
    if not active:
        raise VadsceneError(
            f"team mode lets in registered annotators only, and {workspace} has none; "
            f"add one first: vadscene annotators add {workspace} NAME"
        )


def _login_file(settings: dict[str, str], redirect_uri: str, cookie_secret: str) -> str:
    """A private file (in a folder only this user can open) holding what the server process
    needs for the OpenID Connect login; the server deletes it once read, and nothing of it is
    written into the workspace."""
    folder = tempfile.mkdtemp(prefix="vadscene-login-")
    path = Path(folder) / "auth.json"
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        json.dump(
            {
                "auth": {**settings, "redirect_uri": redirect_uri, "cookie_secret": cookie_secret},
                "provider_name": urlsplit(settings["server_metadata_url"]).hostname or "OIDC",
            },
            file,
        )
    return str(path)


@commands.command(
    name="app", epilog="Example: vadscene app ucf-ws --port 8501 (a lab's server: add --team)"
)
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
            metavar="HOST",
            help="A further host name browsers may reach the app by (repeatable); only "
            "127.0.0.1, localhost, the --host address and these are answered.",
        ),
    ] = None,
    allow_origin: Annotated[
        list[str] | None,
        typer.Option(
            metavar="ORIGIN",
            help="A web origin (scheme://host:port) whose pages may play the videos and "
            "filmstrips, e.g. Label Studio's http://localhost:8080 (repeatable; local mode "
            "only: a player of another origin sends no login cookie).",
            show_default=False,
        ),
    ] = None,
    team: Annotated[
        bool,
        typer.Option(
            "--team",
            help="Team mode: no page, websocket, video or download answers without a login "
            "(a personal link from `vadscene annotators add`, or --oidc-…); each annotator "
            "writes only as themselves.",
        ),
    ] = False,
    ssl_cert_file: Annotated[
        Path | None, typer.Option(help="TLS certificate (PEM) to serve HTTPS with.")
    ] = None,
    ssl_key_file: Annotated[
        Path | None, typer.Option(help="The private key (PEM) of --ssl-cert-file.")
    ] = None,
    public_url: Annotated[
        str | None,
        typer.Option(
            help="The address browsers open (e.g. https://annotate.lab.org behind a reverse "
            "proxy); OpenID Connect sends them back to it."
        ),
    ] = None,
    oidc_metadata_url: Annotated[
        str | None,
        typer.Option(
            help="Team mode: log in through this OpenID Connect provider "
            "(its .well-known/openid-configuration URL)."
        ),
    ] = None,
    oidc_client_id: Annotated[
        str | None, typer.Option(help="The app's client id at the provider.")
    ] = None,
    oidc_client_secret: Annotated[
        str | None,
        typer.Option(help="The app's client secret (visible to `ps`: prefer --oidc-secrets)."),
    ] = None,
    oidc_secrets: Annotated[
        Path | None,
        typer.Option(
            help="A TOML file with server_metadata_url, client_id and client_secret "
            "(top-level or under [auth], as in Streamlit's secrets.toml)."
        ),
    ] = None,
) -> None:
    """Start the annotation app in the browser."""
    from vadscene.annotate.serving import (
        ALLOWED_HOSTS_VARIABLE,
        ALLOWED_ORIGINS_VARIABLE,
        AUTH_FILE_VARIABLE,
        TEAM_MODE_VARIABLE,
        parse_origin,
    )
    from vadscene.core.errors import VadsceneError
    from vadscene.core.paths import app_server_script, default_demo_workspace
    from vadscene.store.workspace import Workspace

    oidc = _oidc_settings(
        {
            "server_metadata_url": oidc_metadata_url,
            "client_id": oidc_client_id,
            "client_secret": oidc_client_secret,
        },
        oidc_secrets,
    )
    if oidc and not team:
        raise VadsceneError("OpenID Connect login (--oidc-…) is a way into team mode: add --team")
    origins = list(dict.fromkeys(parse_origin(o, "--allow-origin") for o in allow_origin or []))
    if origins and team:
        # A page of another origin plays video in CORS mode without cookies (Label Studio's
        # player does), so under the session gate every such request would be refused.
        raise VadsceneError(
            "--allow-origin works in local mode only: a player on another origin (Label "
            "Studio's) fetches videos without the session cookie, and in team mode nothing "
            "answers without a session; serve Label Studio's videos from a local-mode app "
            "(vadscene app WORKSPACE --allow-origin ORIGIN on an address only Label Studio's "
            "users reach) or drop --allow-origin"
        )
    _check_tls(ssl_cert_file, ssl_key_file)
    scheme = "https" if ssl_cert_file is not None else "http"
    if oidc and public_url is None and host in ("0.0.0.0", "::"):
        raise VadsceneError(
            f"with --host {host}, OpenID Connect login needs --public-url: the address "
            "browsers open, which the provider sends them back to"
        )
    address = _public_url(public_url, host, port, scheme)
    _check_port_free(host, port)  # before a demo build: a taken port is known at once
    if workspace is None:
        workspace = default_demo_workspace()
        if not (workspace / "vadscene.yaml").exists():
            out.print(f"building the demo workspace at {workspace} …")
            demo(workspace)
    Workspace.open(workspace).close()
    if team:
        _check_team(workspace)
    names = [*(allow_host or []), *([host] if host not in ("0.0.0.0", "::") else [])]
    if public_url is not None:
        names.append(urlsplit(address).hostname or "")
    env = {
        **os.environ,
        "VADSCENE_WORKSPACE": str(Path(workspace).resolve()),
        ALLOWED_HOSTS_VARIABLE: ",".join(names),
        ALLOWED_ORIGINS_VARIABLE: ",".join(origins),
    }
    env.pop(TEAM_MODE_VARIABLE, None)  # only --team turns the gate on, never the shell
    env.pop(AUTH_FILE_VARIABLE, None)
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
    if ssl_cert_file is not None and ssl_key_file is not None:
        settings["server.sslCertFile"] = str(ssl_cert_file.resolve())
        settings["server.sslKeyFile"] = str(ssl_key_file.resolve())
    if team:
        env[TEAM_MODE_VARIABLE] = "1"
        # Signs Streamlit's cookies (the OpenID Connect identity among them): new per start,
        # and in the environment, which other users cannot read, not on the command line.
        cookie_secret = secrets.token_urlsafe(32)
        env["STREAMLIT_SERVER_COOKIE_SECRET"] = cookie_secret
        if oidc:
            env[AUTH_FILE_VARIABLE] = _login_file(oidc, f"{address}/oauth2callback", cookie_secret)
    elif host not in ("127.0.0.1", "localhost", "::1"):
        out.print(
            f"local mode on {host}: whoever reaches the app can annotate as anyone; "
            "add --team for a login on every route"
        )
    command = [sys.executable, "-m", "streamlit", "run", str(app_server_script())]
    command += [part for key, value in settings.items() for part in (f"--{key}", str(value))]
    out.print(f"serving {workspace} at {address}")
    if origins:
        out.print(f"videos and filmstrips also play in pages of: {', '.join(origins)}")
    if team:
        out.print(
            "team mode: every page, video and websocket needs a login — each annotator's "
            "personal link (`vadscene annotators add` prints it)"
            + (", or the OpenID Connect login" if oidc else "")
        )
    sys.stdout.flush()
    # Become the Streamlit server (same process id): stopping `vadscene app` stops the server,
    # with no orphaned child left holding the port.
    os.execve(sys.executable, command, env)
