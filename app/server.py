"""ASGI entry (`streamlit run app/server.py`): the Streamlit app plus the video route that
streams the workspace's registered videos with HTTP Range support (with CORS for the origins
``vadscene app --allow-origin`` names), behind a Host check — and, in team mode
(``vadscene app --team``), behind the session gate, with Streamlit's own OpenID Connect login
as a second way in when the lab configured one."""

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

import streamlit as st

from vadscene.annotate.serving import (
    AUTH_FILE_VARIABLE,
    TEAM_MODE_VARIABLE,
    ProviderLogin,
    allowed_hosts,
    allowed_origins,
    host_check,
    session_gate,
    video_routes,
)

PROVIDER = "default"
"""Streamlit's name for the provider of a flat ``[auth]`` section, the one `vadscene app`
writes."""

IDENTITY_MAX_AGE_DAYS = 10 / (24 * 60)
"""The identity cookie Streamlit's callback sets is read by the gate on the very next request;
an older one (a copy kept, a replay) proves nothing."""


def _login_settings() -> dict[str, Any] | None:
    """What `vadscene app` left in a private file for the OpenID Connect login — Streamlit's
    ``auth`` secrets and the provider's name for the button — deleted once read: the client
    secret and the cookie secret then live in this process only."""
    path = os.environ.pop(AUTH_FILE_VARIABLE, None)
    if not path:
        return None
    file = Path(path)
    settings: dict[str, Any] = json.loads(file.read_text(encoding="utf-8"))
    file.unlink()
    file.parent.rmdir()
    return settings


def _verified_email(cookies: Mapping[str, str]) -> str | None:
    """The e-mail of the identity in Streamlit's ``_streamlit_user`` cookie, checked the way
    Streamlit checks it (its cookie secret, its chunking) but younger than
    :data:`IDENTITY_MAX_AGE_DAYS`; None for a missing, forged, expired or e-mail-less one, and
    for one whose provider says the address is not verified."""
    from streamlit.auth_util import get_cookie_with_chunks
    from streamlit.web.server.server_util import get_cookie_secret
    from streamlit.web.server.starlette.starlette_app_utils import decode_signed_value
    from streamlit.web.server.starlette.starlette_server_config import USER_COOKIE_NAME

    secret = get_cookie_secret()

    def one(name: str) -> bytes | None:
        value = cookies.get(name)
        if value is None:
            return None
        return decode_signed_value(
            secret, name, value.encode("latin-1"), max_age_days=IDENTITY_MAX_AGE_DAYS
        )

    raw = get_cookie_with_chunks(one, USER_COOKIE_NAME)
    if raw is None:
        return None
    try:
        user = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(user, dict) or not user.get("is_logged_in"):
        return None
    email = user.get("email")
    if user.get("email_verified") is False or not isinstance(email, str) or not email:
        return None
    return email


def _start_url() -> str:
    """Where ``st.login()`` would send the browser: Streamlit's login route with a signed,
    short-lived provider token."""
    from streamlit.auth_util import encode_provider_token

    return f"/auth/login?provider={quote(encode_provider_token(PROVIDER), safe='')}"


def _middleware(root: str, login: Mapping[str, Any] | None) -> list:
    middleware = [host_check(allowed_hosts())]  # only this machine's names and --allow-host ones
    if os.environ.get(TEAM_MODE_VARIABLE) == "1":
        provider = None
        if login is not None:
            provider = ProviderLogin(
                name=str(login["provider_name"]),
                paths=frozenset({"/auth/login", "/auth/logout", "/oauth2callback"}),
                cookie_prefix="_streamlit_user",
                start_url=_start_url,
                verified_email=_verified_email,
            )
        middleware.append(session_gate(root, provider))
    return middleware


_root = os.environ["VADSCENE_WORKSPACE"]
_login = _login_settings()

app = st.App(
    "streamlit_app.py",
    routes=video_routes(_root, allowed_origins=allowed_origins()),
    middleware=_middleware(_root, _login),
    secrets={"auth": _login["auth"]} if _login else None,
)
