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


def video_player(
    *,
    src: str,
    video: str,
    fps: float,
    frames: int,
    factors: list[str],
    acked: dict | None,
    key: str,
) -> tuple[list[dict], str | None]:
    """Mount the player; returns the key events pressed so far and the focused factor key.

    The events are every key not yet covered by ``acked`` (see player.js), so the caller must
    handle each (page, seq) once: :func:`vadscene.annotation.new_key_events`.
    """
    result = _PLAYER(
        data={
            "src": src,
            "video": video,
            "fps": fps,
            "frames": frames,
            "factors": factors,
            "acked": acked,
        },
        key=key,
        on_events_change=lambda: None,
        on_focus_change=lambda: None,
    )
    return list(result.events or []), result.focus
