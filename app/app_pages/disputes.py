"""Disputes: a lead settles the annotators' disagreements one at a time, by keyboard.

The surface (components/disputes.js) turns every key into an event;
:func:`vadscene.annotate.disputes.handle_dispute_events` applies each once, as the logged-in
lead, in the callback that runs before the surface's fragment, so the fragment then shows the
next case and confirms the event. No Streamlit widget here writes a decision."""

from dataclasses import dataclass, field

import streamlit as st
from app_state import current_workspace
from components.annotate import sent_state
from components.disputes import disputes_surface
from components.ledger import Ledger
from identity import current_user, require_lead

from vadscene.annotate.disputes import Cursor, DisputeCase, DisputeQueue, handle_dispute_events
from vadscene.annotate.urls import video_url
from vadscene.core.records import AUTO_ANNOTATOR

SURFACE = "disputes_surface"

workspace = current_workspace()
store = workspace.store
user = current_user()
require_lead(user, "adjudicate")
st.title("Disputes")

lead = (user.annotator or "").strip()
if lead == AUTO_ANNOTATOR:
    st.error(f"'{AUTO_ANNOTATOR}' is reserved for measured decisions; pick another name.")
    lead = ""
if not lead:
    # Local mode only: in team mode the login names the lead. A name box on the page while
    # adjudicating could take a key, so it is asked for once, before the queue is shown.
    with st.form("disputes_who", border=False):
        name = st.text_input("Your name", help="Consensus decisions are recorded under it.")
        if st.form_submit_button("Start adjudicating", type="primary") and name.strip():
            st.query_params["annotator"] = name.strip()
            st.rerun()
    st.stop()


@dataclass
class DisputesLedger(Ledger):
    """The surface's :class:`~components.ledger.Ledger`, and where the lead is in the queue."""

    cursor: Cursor = field(default_factory=Cursor)


ledger: DisputesLedger = st.session_state.setdefault(f"disputes_ledger:{lead}", DisputesLedger())


def _handle_events() -> None:
    """Apply what the surface sent, each event once, before the fragment runs. As on the
    Annotate page, every ``st.*`` call comes before the first write and the outcome goes
    into a plain object, so an aborted callback never loses the record of a written event."""
    events = sent_state(SURFACE, "events")
    with ledger.lock:
        outcomes, ledger.last, ledger.cursor = handle_dispute_events(
            store, lead, events, last=ledger.last, cursor=ledger.cursor
        )
    ledger.record(outcomes)


@st.cache_resource
def _latest_queue(root: str) -> dict[str, DisputeQueue]:
    """The latest queue, shared by the server's sessions: a run refreshes it (re-reading the
    videos changed since) instead of reading the whole store."""
    return {}


def _queue() -> DisputeQueue:
    shared = _latest_queue(str(workspace.root))
    held = shared.get("queue")
    held = DisputeQueue.build(store) if held is None else held.refresh(store)
    shared["queue"] = held
    return held


def _case(case: DisputeCase) -> dict:
    factor = workspace.catalogue.factor(case.factor)
    return {
        "video": case.video,
        "category": case.category,
        "factor": case.factor,
        "name": factor.name,
        "criterion": factor.criterion,
        "choices": list(case.choices),
        "votes": [list(vote) for vote in case.votes],
        "notes": [list(note) for note in case.notes],
        "src": video_url(case.video),
    }


@st.fragment
def _disputes() -> None:
    """The surface and what it is sent; a key reruns only this fragment."""
    queue = _queue()
    case = queue.current(ledger.cursor)
    if case is not None:
        # Stay on the case shown while it is open, whatever is added around it meanwhile.
        ledger.cursor = Cursor(case.key)
    waiting = queue.open
    last = ledger.last
    disputes_surface(
        data={
            "lead": lead,
            "head": store.last_decision_id(lead),
            "ack": {"page": last.page, "seq": last.seq} if last else None,
            "failure": ledger.failure,
            "notices": ledger.notices,
            "case": _case(case) if case is not None else None,
            "position": waiting.index(case) + 1 if case is not None else 0,
            "open": len(waiting),
            "settled": len(queue.cases) - len(waiting),
        },
        key=SURFACE,
        on_events=_handle_events,
    )


st.caption(
    "One disagreement at a time: each consensus is recorded under your name, and u undoes it "
    "like any decision. Settled ones stay findable on the Review page (Annotators disagree)."
)
_disputes()
