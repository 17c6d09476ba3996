"""Who is using the app, and what they may do.

Local mode (``vadscene app``, bound to this machine): whoever sits at it is trusted; the
annotator is the one chosen on the Annotate page (``?annotator=``), and they may do what a
lead does. Team mode (``vadscene app --team``): the identity comes from the login session only
— the server's gate has checked the session cookie before any page runs — never from the URL,
a form or the browser's storage.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal

import streamlit as st

from vadscene.annotate.serving import SESSION_COOKIE, TEAM_MODE_VARIABLE


@dataclass(frozen=True)
class User:
    """The person behind this browser session."""

    annotator: str | None
    """Their annotator id (None in local mode before one is chosen)."""
    role: Literal["annotator", "lead"]
    team: bool
    """True in team mode: ``annotator`` is the logged-in one and cannot be changed here."""

    @property
    def is_lead(self) -> bool:
        return self.role == "lead"


def team_mode() -> bool:
    return os.environ.get(TEAM_MODE_VARIABLE) == "1"


def current_user() -> User:
    """This session's user (see the module docstring)."""
    from app_state import current_workspace

    if not team_mode():
        chosen = st.query_params.get("annotator", "").strip()
        # Another spelling or a former name of a registered annotator is that annotator.
        resolved = current_workspace().store.resolve_annotator(chosen) if chosen else None
        return User(annotator=resolved, role="lead", team=False)
    token = st.context.cookies.get(SESSION_COOKIE)
    entry = current_workspace().store.session_annotator(token) if token else None
    if entry is None:  # the gate lets no request through without a session: a race with revoke
        st.error("Your session has ended (logged out or revoked); open your personal link again.")
        st.stop()
    return User(annotator=entry.annotator_id, role=entry.role, team=True)


def require_lead(user: User, what: str) -> None:
    """Stop the page with a message unless ``user`` is a lead."""
    if not user.is_lead:
        st.error(f"Only a lead can {what}; you are logged in as {user.annotator} (annotator).")
        st.stop()
