"""Read back the annotator's name this browser remembers (localStorage), so opening the app
again without a name in the URL fills it in — per browser, never shared between annotators
through the workspace. The Annotate surface is what stores the name, once annotating starts."""

from __future__ import annotations

import streamlit as st

ANNOTATOR_KEY = "vadscene.annotator"
"""The localStorage key; the Annotate page hands it to the surface, which writes it."""

_JS = f"""
export default function (component) {{
  const stored = window.localStorage.getItem({ANNOTATOR_KEY!r});
  if (stored) component.setTriggerValue("stored", stored);
}}
"""
_REMEMBER = st.components.v2.component("vadscene_remember_annotator", js=_JS)


def remembered_annotator(*, key: str) -> str | None:
    """The name stored in this browser, if any (None on the run before the browser answers)."""
    stored: str | None = _REMEMBER(key=key, on_stored_change=lambda: None).stored
    return stored
