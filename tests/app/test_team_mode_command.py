"""`vadscene app --team`: what it refuses before anything starts (one line each, nothing
started), and TLS passed through to Streamlit — a real HTTPS server whose session cookie is
``Secure``."""

from __future__ import annotations

import http.client
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from vadscene.annotate.serving import SESSION_COOKIE, login_path
from vadscene.cli import run
from vadscene.store.workspace import Workspace

APP = [sys.executable, "-c", "from vadscene.cli import main; main()", "app"]


def _refusal(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code = run(["app", *args])
    captured = capsys.readouterr()
    assert code == 1, captured
    assert "serving" not in captured.out  # Streamlit was never started
    [line] = captured.err.strip().splitlines()
    return line


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_team_mode_without_a_registered_annotator_is_refused(
    capsys: pytest.CaptureFixture[str], small_workspace: Workspace
) -> None:
    root = str(small_workspace.root)
    small_workspace.store.record_decision("Abuse001_x264", "color", "color", annotator="ana")
    line = _refusal(capsys, root, "--team", "--port", str(_free_port()))
    assert line == (
        f"error: team mode lets in registered annotators only, and {root} has none; "
        f"add one first: vadscene annotators add {root} NAME"
    )
    small_workspace.store.register_annotator("Gone")
    small_workspace.store.revoke_annotator("gone")
    assert "has none" in _refusal(capsys, root, "--team", "--port", str(_free_port()))


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (
            ["--ssl-cert-file", "cert.pem"],
            "error: --ssl-cert-file needs --ssl-key-file too (the certificate and its private key)",
        ),
        (
            ["--ssl-cert-file", "nowhere.pem", "--ssl-key-file", "nowhere.key"],
            "error: --ssl-cert-file nowhere.pem: no such file",
        ),
        (
            ["--oidc-client-id", "x", "--oidc-client-secret", "y", "--oidc-metadata-url", "u"],
            "error: OpenID Connect login (--oidc-…) is a way into team mode: add --team",
        ),
        (
            ["--team", "--oidc-client-id", "x"],
            "error: OpenID Connect login needs the provider's metadata URL, client id and client "
            "secret; missing: --oidc-metadata-url (server_metadata_url), --oidc-client-secret "
            "(client_secret)",
        ),
        (
            [
                "--team",
                "--host",
                "0.0.0.0",
                "--oidc-client-id",
                "x",
                "--oidc-client-secret",
                "y",
                "--oidc-metadata-url",
                "https://id.lab.org/.well-known/openid-configuration",
            ],
            "error: with --host 0.0.0.0, OpenID Connect login needs --public-url: the address "
            "browsers open, which the provider sends them back to",
        ),
        (
            ["--team", "--public-url", "annotate.lab.org"],
            "error: --public-url annotate.lab.org: expected the address browsers open, "
            "e.g. https://annotate.lab.org",
        ),
    ],
)
def test_settings_that_cannot_work_are_refused_in_one_line(
    capsys: pytest.CaptureFixture[str],
    small_workspace: Workspace,
    arguments: list[str],
    expected: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cert.pem").write_text("not used")
    small_workspace.store.register_annotator("Ana")
    port = str(_free_port())
    assert _refusal(capsys, str(small_workspace.root), "--port", port, *arguments) == expected


def test_an_unreadable_oidc_secrets_file_is_refused(
    capsys: pytest.CaptureFixture[str], small_workspace: Workspace, tmp_path: Path
) -> None:
    broken = tmp_path / "oidc.toml"
    broken.write_text("[auth\nclient_id = 1")
    line = _refusal(capsys, str(small_workspace.root), "--team", "--oidc-secrets", str(broken))
    assert line.startswith(f"error: --oidc-secrets {broken}: cannot be read (")


# --- TLS, for real ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


@contextmanager
def _serving(command: list[str], port: int, log_path: Path) -> Iterator[ssl.SSLContext]:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    with log_path.open("wb") as log:
        server = subprocess.Popen(command, stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"the app did not start: {log_path.read_text()[-2000:]}")
                time.sleep(0.3)
        yield context
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_tls_is_passed_through_and_the_session_cookie_is_secure(
    small_workspace: Workspace, certificate: tuple[Path, Path], tmp_path: Path
) -> None:
    cert, key = certificate
    small_workspace.store.register_annotator("Ana")
    secret = small_workspace.store.issue_access_link("ana")
    port = _free_port()
    command = [*APP, str(small_workspace.root), "--team", "--port", str(port)]
    command += ["--ssl-cert-file", str(cert), "--ssl-key-file", str(key)]
    with _serving(command, port, tmp_path / "server.log") as context:
        connection = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=5)
        connection.request("GET", login_path(secret))
        reply = connection.getresponse()
        cookie = reply.getheader("set-cookie") or ""
        connection.close()
        assert reply.status == 303
        assert cookie.startswith(f"{SESSION_COOKIE}=")
        assert "; Secure" in cookie and "; HttpOnly" in cookie and "SameSite=lax" in cookie
        # Plain HTTP on the same port gets no answer.
        plain = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        with pytest.raises((http.client.HTTPException, OSError)):
            plain.request("GET", "/")
            plain.getresponse()
        plain.close()
    assert (
        f"serving {small_workspace.root} at https://127.0.0.1:{port}"
        in (tmp_path / "server.log").read_text()
    )
