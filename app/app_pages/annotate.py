"""Annotate: watch a video and decide its scene factors — every decision is committed to the
store before the page confirms it."""

import streamlit as st
from app_state import current_workspace
from components.note import note_box, typed_note
from components.player import KEY_HELP, video_player
from components.remember import remembered_annotator

from vadscene.annotation import (
    factor_states,
    incomplete_videos,
    key_event_ack,
    new_key_events,
    next_incomplete,
    value_for_number,
)
from vadscene.catalogue import AMBIGUOUS
from vadscene.errors import VadsceneError
from vadscene.serving import video_url

workspace = current_workspace()
store = workspace.store
videos = store.video_ids()
if not videos:
    st.info("This workspace has no videos yet: `vadscene scan WORKSPACE`.")
    st.stop()

# --- who and which video: both live in the URL, so a reload or a shared link keeps them -------
st.session_state.setdefault("annotate_annotator", st.query_params.get("annotator", ""))
stored = remembered_annotator(st.session_state.annotate_annotator.strip(), key="annotate_remember")
if stored and not st.session_state.annotate_annotator.strip():
    st.session_state.annotate_annotator = stored
annotator = st.sidebar.text_input(
    "Annotator", key="annotate_annotator", help="Your name; decisions are recorded under it."
).strip()
if not annotator:
    st.title("Annotate")
    st.info("Enter your name in the sidebar to start; this browser will remember it.")
    st.stop()
if annotator == "auto":
    st.sidebar.error("'auto' is reserved for measured decisions; pick another name.")
    st.stop()
st.query_params["annotator"] = annotator
video_id = st.query_params.get("video")
if video_id not in videos:
    video_id = next_incomplete(store, annotator, None) or videos[0]
st.query_params["video"] = video_id
factors = list(workspace.catalogue.factors)
factor_keys = [factor.key for factor in factors]


def _go(target: str | None) -> None:
    if target is not None:
        st.query_params["video"] = target
        st.rerun()


def _decide(video: str, factor_key: str, value: str | None, *, by_key: bool = False) -> None:
    """Record a decision unless the store already holds that value for this annotator.

    Recording nothing new matters: a key can be pressed again or resent after a server restart,
    and the browser can echo a value the page has just set under the widget's previous key,
    which Streamlit reports as a change.
    """
    current = {d.factor: d for d in store.current_decisions(video_id=video, annotator=annotator)}
    stored = current.get(factor_key)
    if value == (stored.value if stored else None):
        if by_key:  # the annotator pressed it: confirm, as for a new decision
            _toast_saved(factor_key, value, stored is not None and stored.source == "override")
        return
    try:
        decision = store.record_decision(video, factor_key, value, annotator=annotator)
    except VadsceneError as exc:
        st.error(str(exc))
        return
    _toast_saved(factor_key, value, decision.source == "override")


def _toast_saved(factor_key: str, value: str | None, override: bool) -> None:
    shown = value if value is not None else "cleared"
    st.toast(
        f"Saved {factor_key} = {shown}" + (" (override)" if override else ""),
        icon=":material/check:",
    )


def _handle_key(event: dict) -> str | None:
    """Apply one key event to the video and factor that were on screen when it was pressed;
    returns the video to show next, if the key navigates."""
    video = event.get("video")
    if video not in videos:
        return None
    action, where = event.get("action"), videos.index(video)
    if action in ("value", "ambiguous") and event.get("factor") in factor_keys:
        factor = workspace.catalogue.factor(event["factor"])
        number = event.get("number")
        if action == "ambiguous":
            value = AMBIGUOUS
        else:
            value = value_for_number(factor, number) if isinstance(number, int) else None
        if value is not None:
            _decide(video, factor.key, value, by_key=True)
    elif action == "next_video":
        return videos[(where + 1) % len(videos)]
    elif action == "previous_video":
        return videos[(where - 1) % len(videos)]
    elif action == "next_incomplete":
        target = next_incomplete(store, annotator, video)
        if target is None:
            st.toast("Every video is complete.")
        return target
    elif action == "undo":
        undone = store.undo_last(annotator)
        st.toast(f"Undid {undone.factor} on {undone.video_id}" if undone else "Nothing to undo")
        return undone.video_id if undone is not None else None
    elif action == "flag":
        flagged = bool(store.marks(video_id=video).get((video, annotator), {}).get("flag"))
        store.set_mark(video, "flag", not flagged, annotator=annotator)
        st.toast("Flagged" if not flagged else "Unflagged")
    return None


def _on_radio(factor_key: str, widget_key: str) -> None:
    _decide(video_id, factor_key, st.session_state[widget_key])


# --- player and keyboard -------------------------------------------------------------------
info = store.video(video_id)
position = videos.index(video_id)
st.subheader(f"{video_id}  ·  {info.category}")
watch, decide = st.columns([3, 2], gap="large")
with watch:
    acked = st.session_state.get("annotate_acked")
    events, focused = video_player(
        src=video_url(video_id),
        video=video_id,
        fps=info.fps,
        frames=info.num_frames,
        factors=factor_keys,
        acked=acked,
        key="annotate_player",
    )
focus = factor_keys.index(focused) if focused in factor_keys else 0
target = None
for event in new_key_events(events, acked):
    st.session_state.annotate_acked = key_event_ack(event)
    target = _handle_key(event) or target
if target is not None and target != video_id:
    _go(target)

# --- factor panel: widgets show what the store holds ----------------------------------------
states = factor_states(store, video_id, annotator)
rules = {factor: (rule, limits) for factor, _s, rule, limits, _at in store.thresholds()}
panel = decide.container(height=620)
for index, state in enumerate(states):
    factor = state.factor
    options = [*factor.values, AMBIGUOUS]
    widget_key = f"annotate_{video_id}_{factor.key}_{state.revision}"  # see FactorState
    shown = state.value if state.value is not None else state.auto_value
    st.session_state[widget_key] = shown
    marker = "▶ " if index == focus else ""
    label = f"{marker}{factor.name}" + (" (measured)" if factor.source == "auto" else "")
    panel.radio(
        label,
        options,
        key=widget_key,
        horizontal=True,
        help=factor.criterion,
        format_func=lambda v, o=options: f"{o.index(v) + 1} {v}",
        on_change=_on_radio,
        args=(factor.key, widget_key),
    )
    if factor.source == "auto":
        measured = f"{state.measured:.4g}" if state.measured is not None else "not measured"
        origin = "your override" if state.value is not None else "auto"
        rule, limits = rules.get(factor.key, (factor.auto.rule, ()))
        limits_text = ", ".join(f"{t:.4g}" for t in limits) or "not applied yet"
        panel.caption(
            f"{factor.auto.statistic} {measured} · {rule} threshold {limits_text} · "
            f"auto pole {state.auto_value or '—'} · showing {origin}"
        )

marks = store.marks(video_id=video_id).get((video_id, annotator), {"flag": False, "note": None})
# Keyed by the stored value, like the factor widgets (see FactorState): a stale browser value
# of the flag cannot undo a change made since, and an echo of the new one records nothing.
flag_key = f"annotate_flag_{video_id}_{int(bool(marks['flag']))}"
st.session_state[flag_key] = bool(marks["flag"])


def _on_flag(widget_key: str) -> None:
    flagged = bool(store.marks(video_id=video_id).get((video_id, annotator), {}).get("flag"))
    if st.session_state[widget_key] != flagged:  # not an echo of the stored value (see _decide)
        store.set_mark(video_id, "flag", st.session_state[widget_key], annotator=annotator)


watch.toggle("Flag for review (f)", key=flag_key, on_change=_on_flag, args=(flag_key,))

NOTE_KEY = "annotate_note"


def _save_note() -> None:
    """The note box sent a save (see note.js): store it under the video and annotator it names —
    those on screen when it was typed — unless the store already holds that text. Runs as the
    box's callback, before the page, so the page shows the note as stored and the box can drop
    its draft; a save is handled once, so a stale one cannot undo a change made since."""
    typed = typed_note(NOTE_KEY)
    if typed is None:
        return
    video, name, text = typed.get("video"), typed.get("annotator"), typed.get("text")
    if video not in videos or not isinstance(name, str) or not isinstance(text, str):
        return
    current = store.marks(video_id=video).get((video, name), {}).get("note")
    if text != (current or ""):
        try:
            store.set_mark(video, "note", text, annotator=name)  # "" clears the note
        except VadsceneError as exc:
            st.error(str(exc))
            return
    st.session_state.annotate_note_ack = {"id": typed.get("id"), "seq": typed.get("seq")}


with watch:
    note_box(
        video=video_id,
        annotator=annotator,
        note=marks["note"],
        ack=st.session_state.get("annotate_note_ack"),
        key=NOTE_KEY,
        on_change=_save_note,
    )

# --- navigation, progress, keys ---------------------------------------------------------------
left, middle, right = st.sidebar.columns(3)
if left.button("◀ Prev", key="annotate_prev"):
    _go(videos[(position - 1) % len(videos)])
if middle.button("Next ▶", key="annotate_next"):
    _go(videos[(position + 1) % len(videos)])
if right.button("Undo", key="annotate_undo"):
    store.undo_last(annotator)
    st.rerun()
remaining = incomplete_videos(store, annotator)
st.sidebar.progress(
    (len(videos) - len(remaining)) / len(videos),
    text=f"{len(videos) - len(remaining)} of {len(videos)} videos complete",
)
st.sidebar.caption(f"Video {position + 1} of {len(videos)}")
with st.sidebar.expander("Your support so far"):
    counts: dict[tuple[str, str], int] = {}
    for (_video, factor_key), value in store.current_values(annotator).items():
        counts[(factor_key, value)] = counts.get((factor_key, value), 0) + 1
    st.markdown(
        "\n".join(
            f"- **{f.key}**: "
            + ", ".join(f"{v} {counts.get((f.key, v), 0)}" for v in [*f.values, AMBIGUOUS])
            for f in factors
            if f.source == "manual"
        )
    )
with st.sidebar.expander("Keyboard", expanded=True):
    st.markdown("\n".join(f"- `{keys}` {what}" for keys, what in KEY_HELP))
