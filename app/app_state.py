"""Helpers every page uses: the open workspace, cached per server process."""

from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

from vadscene.core.errors import VadsceneError
from vadscene.store.workspace import Workspace


@st.cache_resource
def _open(root: str) -> Workspace:
    return Workspace.open(Path(root))


def current_workspace() -> Workspace:
    """The workspace named by VADSCENE_WORKSPACE; stops the page with a clear message if none."""
    root = os.environ.get("VADSCENE_WORKSPACE")
    if not root:
        st.error("No workspace: start the app with `vadscene app WORKSPACE` (or `make app`).")
        st.stop()
    try:
        return _open(root)
    except VadsceneError as exc:
        st.error(str(exc))
        st.stop()
