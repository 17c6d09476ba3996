"""The Disputes surface: the video of the case on screen, its votes and notes, and the keys
that pick, confirm, skip and undo (disputes.js) — the only way the page records a consensus."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import streamlit as st

_HERE = Path(__file__).parent
_SURFACE = st.components.v2.component(
    "vadscene_disputes",
    js=(_HERE / "disputes.js").read_text(encoding="utf-8"),
    css=(_HERE / "disputes.css").read_text(encoding="utf-8"),
    # In the page's DOM, not a shadow root: the page-wide key handler must see that a key was
    # typed into a text box (a shadow root retargets the event to its host element).
    isolate_styles=False,
)


def disputes_surface(*, data: dict, key: str, on_events: Callable[[], None]) -> None:
    """Mount the surface. ``data`` is the case on screen and what the store holds (see the
    Disputes page); the surface sends state ``events``, handled by ``on_events`` before the
    next run."""
    _SURFACE(data=data, key=key, on_events_change=on_events, height="content")
