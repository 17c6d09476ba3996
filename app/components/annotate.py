"""The Annotate surface: player, filmstrip, factor panel, note, flag and queue as one component
(annotate.js), the only thing on the page a person changes decisions through."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import streamlit as st

_HERE = Path(__file__).parent
_SURFACE = st.components.v2.component(
    "vadscene_annotate",
    js=(_HERE / "annotate.js").read_text(encoding="utf-8"),
    css=(_HERE / "annotate.css").read_text(encoding="utf-8"),
    # In the page's DOM, not a shadow root: the page-wide key handler must see that a key was
    # typed into the note box (a shadow root retargets the event to its host element).
    isolate_styles=False,
)


def sent_state(key: str, name: str) -> object:
    """The last value the surface sent as state ``name`` (None before it sent any) — for the
    callbacks, which run before the page."""
    value = st.session_state.get(key)
    try:
        return value.get(name) if value is not None else None
    except AttributeError:
        return None


def annotate_surface(*, data: dict, key: str, on_events: Callable[[], None]) -> bool:
    """Mount the surface. ``data`` is what the store holds (see the Annotate page); the
    surface sends state ``events`` (handled by ``on_events`` before the next run)
    and ``view`` (the video on screen). True on the run after its "switch annotator" button
    was pressed."""
    result = _SURFACE(
        data=data,
        key=key,
        on_events_change=on_events,
        on_view_change=lambda: None,
        on_switch_change=lambda: None,
        height="content",
    )
    return bool(result.switch)
