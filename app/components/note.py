"""The per-video note box (a textarea that saves while the annotator types), see note.js."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import streamlit as st

_HERE = Path(__file__).parent
_NOTE = st.components.v2.component(
    "vadscene_note",
    js=(_HERE / "note.js").read_text(encoding="utf-8"),
    css=(_HERE / "note.css").read_text(encoding="utf-8"),
    # In the page's DOM, not a shadow root: the player's page-wide key handler and Streamlit's
    # shortcuts leave keys typed in a textarea alone, which a shadow root would hide from them.
    isolate_styles=False,
)


def typed_note(key: str) -> dict | None:
    """The last save the box sent, ``{video, annotator, text, id, seq}`` — for the on_change
    callback, which runs before the page, so the page then shows the note as stored."""
    value = st.session_state.get(key)
    note = value.get("note") if isinstance(value, dict) else None
    return note if isinstance(note, dict) else None


def note_box(
    *,
    video: str,
    annotator: str,
    note: str | None,
    ack: dict | None,
    key: str,
    on_change: Callable[[], None],
) -> dict | None:
    """Mount the note box for ``video``, showing the stored ``note`` (None: no note).

    Every save the box sends names its video and annotator; ``on_change`` runs once per save,
    before the page (read it with :func:`typed_note`). ``ack`` is ``{id, seq}`` of the last save
    handled, so the box can drop its draft even when a newer note was stored since. Returns the
    last save sent."""
    result = _NOTE(
        data={"video": video, "annotator": annotator, "note": note or "", "ack": ack},
        key=key,
        on_note_change=on_change,
    )
    return result.note
