"""Remember the annotator's name in this browser (localStorage), so opening the app again
fills it in — per browser, never shared between annotators through the workspace."""

from __future__ import annotations

import streamlit as st

_JS = """
export default function (component) {
  const { data, setTriggerValue } = component;
  const KEY = "vadscene.annotator";
  if (data.name) {
    window.localStorage.setItem(KEY, data.name);
  } else {
    const stored = window.localStorage.getItem(KEY);
    if (stored) setTriggerValue("stored", stored);
  }
}
"""
_REMEMBER = st.components.v2.component("vadscene_remember_annotator", js=_JS)


def remembered_annotator(name: str, *, key: str) -> str | None:
    """Store ``name`` in the browser; with no name, return the one stored there (if any)."""
    return _REMEMBER(data={"name": name}, key=key, on_stored_change=lambda: None).stored
