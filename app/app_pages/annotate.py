"""Annotate: watch a video and decide its scene factors.

The surface (components/annotate.js) owns what is on screen and turns every key and click into
an event; :func:`vadscene.annotate.session.handle_events` commits each once, in the callback that
runs
before the surface's fragment, so the fragment then sends the surface what the store holds and
which events are confirmed. No Streamlit widget here writes a decision."""

import streamlit as st
from app_state import current_workspace
from components.annotate import annotate_surface, sent_state
from components.ledger import Ledger
from components.remember import ANNOTATOR_KEY, remembered_annotator
from identity import current_user

from vadscene.annotate.serving import LOGOUT_PATH
from vadscene.annotate.session import (
    AnnotatorQueue,
    FactorState,
    QueueStatus,
    factor_states,
    handle_events,
)
from vadscene.annotate.urls import filmstrip_url, video_url
from vadscene.core.catalogue import AMBIGUOUS, Factor
from vadscene.core.errors import StoreError
from vadscene.core.records import AUTO_ANNOTATOR
from vadscene.measure.run import STATISTIC_NAMES, describe_measurement
from vadscene.video.thumbnails import filmstrip_frames

SURFACE = "annotate_surface"

workspace = current_workspace()
store = workspace.store
videos = store.video_ids()
if not videos:
    st.info("This workspace has no videos yet: `vadscene scan WORKSPACE`.")
    st.stop()


# --- who: the login in team mode; else the URL, or a dialog of the registered annotators --------
user = current_user()


@st.dialog("Who is annotating?")
def choose_annotator(current: str) -> None:
    """Pick a registered annotator, or add a new one on purpose — in a dialog, gone once
    chosen, so no box on the annotating page can take a hotkey and rename the annotator. In
    team mode the login alone says who annotates; the dialog only says how to change it."""
    if user.team:
        st.write(
            f"You are logged in as **{current}**: everything you do here is recorded as "
            f"{current}. To annotate as someone else, log out and open their personal link."
        )
        st.link_button("Log out", LOGOUT_PATH)
        return
    registered = [entry for entry in store.annotator_registry() if entry.active]
    if registered:
        ids = [entry.annotator_id for entry in registered]
        shown = {entry.annotator_id: entry.display_name for entry in registered}
        with st.form("annotate_pick", border=False):
            picked = st.selectbox(
                "Registered annotators",
                ids,
                index=ids.index(current) if current in ids else 0,
                format_func=shown.__getitem__,
            )
            if st.form_submit_button("Start annotating", type="primary"):
                st.query_params["annotator"] = picked
                st.rerun()
    with st.form("annotate_who", border=False):
        st.caption(
            "Not in the list? Add yourself as a new annotator."
            if registered
            else "No annotator is registered yet: add yourself."
        )
        name = st.text_input("Your name", help="Your decisions are recorded under it.")
        added = st.form_submit_button(
            "Add new annotator", type="secondary" if registered else "primary"
        )
    if added:
        try:
            entry = store.register_annotator(name)
        except StoreError as exc:
            st.error(str(exc))
        else:
            st.query_params["annotator"] = entry.annotator_id
            st.rerun()


if user.team:
    annotator = user.annotator or ""
    asked = st.query_params.get("annotator", "").strip()
    if asked and store.resolve_annotator(asked) != annotator:
        st.warning(
            f"This address names annotator '{asked}', but you are logged in as '{annotator}': "
            f"everything you do here is recorded as {annotator}."
        )
    if asked:
        del st.query_params["annotator"]
else:
    annotator = user.annotator or ""  # resolved: another spelling of a registered name is it
    if annotator == AUTO_ANNOTATOR:
        annotator = ""
        st.error(f"'{AUTO_ANNOTATOR}' is reserved for measured decisions; pick another name.")
    if not annotator:
        # The surface stores the name in this browser once annotating starts; without one in
        # the URL the stored name is read back (a page load with a name mounts no reader).
        remembered = remembered_annotator(key="annotate_remember")
        if remembered and remembered != AUTO_ANNOTATOR:
            st.query_params["annotator"] = remembered
            st.rerun()
        st.title("Annotate")
        st.info("Choose your name to start; this browser will remember it.")
        if st.button("Choose annotator", type="primary"):
            choose_annotator("")
        elif "annotate_asked" not in st.session_state:
            st.session_state.annotate_asked = True
            choose_annotator("")
        st.stop()


# One per (session, annotator): undo is checked against this annotator's log.
ledger: Ledger = st.session_state.setdefault(f"annotate_ledger:{annotator}", Ledger())


def _handle_events() -> None:
    """Commit what the surface sent, each event once (vadscene.annotate.session.handle_events),
    before the surface's fragment runs — so this very run shows the store with them and
    confirms them.

    Streamlit may abort a callback at any ``st.*`` call when a newer rerun request arrives
    (keys typed faster than the page runs). So every ``st.*`` call happens before the first
    commit, and the acknowledgement goes into a plain object: an abort can then never lose the
    record of a committed event, which would have it committed again. The lock keeps a
    stopping run's callback and the next one from handling the same events at once."""
    events = sent_state(SURFACE, "events")
    with ledger.lock:
        outcomes, ledger.last = handle_events(store, annotator, events, last=ledger.last)
    ledger.record(outcomes)


@st.cache_resource
def _latest_queues(root: str) -> dict[str, AnnotatorQueue]:
    """The latest queue of each annotator, shared by the server's sessions: a page load
    refreshes it (the videos changed since, by anyone) instead of reading the whole store.
    Each AnnotatorQueue is immutable; an older one put back by a slower session only costs the
    next session a longer refresh."""
    return {}


index = {video: i for i, video in enumerate(videos)}


def _queue() -> AnnotatorQueue:
    """This annotator's queue, kept per session and refreshed, not rebuilt: a key changes one
    video's status. A new session (a page load) starts from the server's latest queue of this
    annotator."""
    held = st.session_state.get("annotate_queue")
    if held is None or held.annotator != annotator:
        held = _latest_queues(str(workspace.root)).get(annotator)
    if held is None:
        held = AnnotatorQueue.build(store, annotator)
    held = held.refresh(store, videos)
    st.session_state.annotate_queue = held
    _latest_queues(str(workspace.root))[annotator] = held
    return held


def _on_screen(held: AnnotatorQueue) -> str:
    """The video on screen. The surface says so when it switches by itself ("view"); until
    then it shows the one this session sent it first, which came from the URL or else the
    queue's next incomplete one. (Telling Python of the video it just sent would cost every
    page load a second run while the video's first frame is decoding.)"""
    video_id = sent_state(SURFACE, "view")
    if video_id not in index:
        video_id = st.session_state.get("annotate_video")
    if video_id not in index:
        video_id = st.query_params.get("video")
    if video_id not in index:
        video_id = held.next_incomplete() or videos[0]
    st.session_state.annotate_video = video_id
    return video_id


def _around(video_id: str, queue: list[tuple[str, QueueStatus]]) -> set[str]:
    """The video on screen and those n, p and i lead to, so the surface can switch without
    waiting."""
    order = [v for v, _ in queue]  # n and p follow the queue (assigned videos first)
    position = order.index(video_id)
    around = {video_id, order[(position + 1) % len(order)], order[(position - 1) % len(order)]}
    later = [v for v, s in queue[position + 1 :] + queue[:position] if s == "incomplete"]
    around.update(later[:1])
    return around


# Auto factor → the threshold rule in force and its thresholds (none before it is applied).
# A comment, not a docstring: Streamlit's magic draws a bare string on the page.
Rules = dict[str, tuple[str, tuple[float, ...]]]


def _rules() -> Rules:
    applied = {
        factor: (rule, tuple(limits)) for factor, _s, rule, limits, _at in store.thresholds()
    }
    return {
        f.key: applied.get(f.key, (f.auto.rule, ()))
        for f in workspace.catalogue.factors
        if f.auto is not None
    }


def _measured(state: FactorState, rules: Rules) -> str | None:
    """What an auto factor's pole comes from, said beside its chips: the statistic by name
    ("resolution" is measured sharpness, not pixels), its value and the rule's thresholds."""
    auto = state.factor.auto
    if auto is None or state.measured is None:
        return None
    rule, thresholds = rules[state.factor.key]
    return describe_measurement(auto.statistic, state.measured, rule, thresholds)


def _view(video: str, rules: Rules) -> dict:
    info = store.video(video)
    states = factor_states(store, video, annotator)
    mark = store.marks(video_id=video).get((video, annotator), {"flag": False, "note": None})
    return {
        "src": video_url(video),
        "filmstrip": filmstrip_url(video),
        "strip": filmstrip_frames(info.num_frames),
        "fps": info.fps,
        "frames": info.num_frames,
        "category": info.category,
        "values": {s.factor.key: s.value for s in states},
        "auto": {s.factor.key: s.auto_value for s in states},
        "measured": {s.factor.key: _measured(s, rules) for s in states},
        "flag": bool(mark["flag"]),
        "note": mark["note"] or "",
    }


def _factors(rules: Rules) -> list[dict]:
    """The catalogue as the surface shows it; a measured factor with its rule and thresholds."""

    def rule(factor: Factor) -> str | None:
        if factor.auto is None:
            return None
        name, limits = rules[factor.key]
        shown = ", ".join(f"{t:.4g}" for t in limits) or "not applied yet"
        return f"auto: {STATISTIC_NAMES[factor.auto.statistic]}, {name} threshold {shown}"

    return [
        {
            "key": f.key,
            "name": f.name,
            "values": list(f.values),
            "source": f.source,
            "criterion": f.criterion,
            "rule": rule(f),
        }
        for f in workspace.catalogue.factors
    ]


def _support(held: AnnotatorQueue) -> list:
    """Your answers so far: per manual factor, how many videos have each value."""
    counts: dict[tuple[str, str], int] = {}
    for values in held.values.values():
        for factor_key, value in values.items():
            counts[(factor_key, value)] = counts.get((factor_key, value), 0) + 1
    return [
        [f.name, [[v, counts.get((f.key, v), 0)] for v in [*f.values, AMBIGUOUS]]]
        for f in workspace.catalogue.factors
        if f.source == "manual"
    ]


@st.fragment
def _annotate() -> None:
    """The surface and what it is sent. A fragment: a key or a switch of video reruns only this,
    not the app's navigation and the rest of the page."""
    held = _queue()
    queue = held.queue
    video_id = _on_screen(held)
    last = ledger.last
    rules = _rules()
    switch = annotate_surface(
        data={
            "annotator": annotator,
            "video": video_id,
            "head": store.last_decision_id(annotator),
            "ack": {"page": last.page, "seq": last.seq} if last else None,
            "failure": ledger.failure,
            "notices": ledger.notices,
            "queue": queue,
            "support": _support(held),
            "remember_as": ANNOTATOR_KEY,
            "factors": _factors(rules),
            "videos": {video: _view(video, rules) for video in sorted(_around(video_id, queue))},
        },
        key=SURFACE,
        on_events=_handle_events,
    )
    if switch:
        # The dialog belongs to the whole page, not to this fragment.
        st.session_state.annotate_switch = True
        st.rerun(scope="app")


if st.session_state.pop("annotate_switch", False):
    choose_annotator(annotator)
_annotate()
