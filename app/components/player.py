"""The video player component (HTML5 video + the page's keyboard map), see player.js."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

_HERE = Path(__file__).parent
_PLAYER = st.components.v2.component(
    "vadscene_player",
    js=(_HERE / "player.js").read_text(encoding="utf-8"),
    css=(_HERE / "player.css").read_text(encoding="utf-8"),
)

KEY_HELP = [
    ("space", "play / pause"),
    ("[ ]", "slower / faster (0.25×–4×, remembered)"),
    (", .", "previous / next frame"),
    ("← →", "back / forward 5 s"),
    ("r", "restart"),
    ("↑ ↓ (k j)", "previous / next factor"),
    ("1–9", "pick the focused factor's value by number"),
    ("a", "ambiguous"),
    ("n p", "next / previous video"),
    ("i", "next incomplete video"),
    ("u", "undo your last decision"),
    ("f", "flag / unflag the video"),
]


def video_player(*, src: str, fps: float, frames: int, key: str) -> dict | None:
    """Mount the player; returns the key the annotator pressed on this run, if any."""
    result = _PLAYER(
        data={"src": src, "fps": fps, "frames": frames}, key=key, on_key_change=lambda: None
    )
    return result.key
