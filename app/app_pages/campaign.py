"""Campaign (leads only): per-annotator progress, time and pace, agreement so far, the overview
as CSV; annotator management (add with a personal link, new link, rename, merge, revoke, role)
and assignment with overlap, previewed before it is applied."""

from collections.abc import Callable
from functools import partial
from urllib.parse import urlsplit

import pandas as pd
import streamlit as st
from app_state import current_workspace
from identity import current_user, require_lead

from vadscene.annotate.assignment import replan
from vadscene.annotate.campaign import (
    ANNOTATOR_COLUMNS,
    FACTOR_COLUMNS,
    SITTING_GAP,
    access_link,
    annotator_rows,
    campaign_overview,
    factor_rows,
    overview_csv,
    progress_chart,
)
from vadscene.core.errors import VadsceneError
from vadscene.store.team import ROLES, Role

workspace = current_workspace()
store = workspace.store
user = current_user()
require_lead(user, "manage the campaign")
st.title("Campaign")

overview = campaign_overview(store)
registry = store.annotator_registry()
active = [a.annotator_id for a in registry if a.active]
by = user.annotator


def _notice(section: str) -> None:
    """The outcome of the last action of ``section``, shown once (it survives the rerun that
    refreshes the page after a write)."""
    notice = st.session_state.pop(f"campaign_notice_{section}", None)
    if notice is None:
        return
    text, link = notice
    st.success(text)
    if link is not None:
        st.code(link, language=None)
        st.caption(
            "Shown once: the server keeps only a hash of it. Send it to them privately; "
            "opening it logs them in."
            + ("" if user.team else " It works while the app runs with `--team`.")
        )
        if "<host>" in link:
            st.caption(
                "This browser did not say which address it reached the app at: replace "
                "`<host>:<port>` with the one your team uses (`vadscene app WORKSPACE --team "
                "--host …`, or your reverse proxy's)."
            )


def _done(section: str, text: str, link: str | None = None) -> None:
    st.session_state[f"campaign_notice_{section}"] = (text, link)
    if section == "annotators":
        st.session_state["campaign_team_changed"] = True
    st.rerun()


def _link(secret: str) -> str:
    """The personal link, on the address this browser reached the app at (behind a reverse
    proxy: the proxy's), or a template naming where the host goes."""
    url = st.context.url or ""
    parts = urlsplit(url)
    if parts.scheme and parts.netloc:
        return access_link(f"{parts.scheme}://{parts.netloc}", secret)
    host = st.context.headers.get("host") if st.context.headers else None
    if host:
        return access_link(f"http://{host}", secret)
    return access_link("http://<host>:<port>", secret)


# --- the overview ---------------------------------------------------------------------------
days_left = overview.days_left
left, middle, right = st.columns(3)
left.metric("Videos", overview.videos)
middle.metric(
    "Assigned videos complete",
    f"{sum(a.complete for a in overview.annotators)} of "
    f"{sum(a.assigned for a in overview.annotators)}",
)
right.metric("Working days left", "n/a" if days_left is None else f"{days_left:.1f}")
st.dataframe(
    pd.DataFrame(annotator_rows(overview), columns=list(ANNOTATOR_COLUMNS)),
    hide_index=True,
    key="campaign_annotators",
)
st.caption(
    "Time on a video: each gap since the annotator's previous decision, up to "
    f"{SITTING_GAP.seconds // 60} min (a longer gap is a break). Pace: videos completed per "
    "working day over their latest working days. Days left: assigned videos not complete ÷ "
    "pace."
)
chart = progress_chart(overview)
if chart is not None:
    st.altair_chart(chart, key="campaign_progress")
st.subheader("Agreement so far")
st.dataframe(
    pd.DataFrame(factor_rows(overview), columns=list(FACTOR_COLUMNS)),
    hide_index=True,
    key="campaign_agreement",
)
st.download_button(
    "Download the overview (CSV)",
    overview_csv(overview),
    file_name=f"{workspace.root.name}-campaign.csv",
    mime="text/csv",
    key="campaign_csv",
)

# --- annotators -----------------------------------------------------------------------------
st.header("Annotators")
_notice("annotators")
add, link, rename, merge, revoke, role = st.tabs(
    ["Add", "New link", "Rename", "Merge", "Revoke", "Role"]
)


def _attempt(action: Callable[[], tuple[str, str | None]]) -> None:
    """Run a store action; its refusal (which writes nothing) is shown here, its success on
    the refreshed page."""
    try:
        text, shown_link = action()
    except VadsceneError as exc:
        st.error(str(exc))
    else:
        _done("annotators", text, shown_link)


def _chosen(name: str | None) -> str:
    if name is None:
        raise VadsceneError("choose an annotator first")
    return name


def _add(name: str, role: Role, email: str) -> tuple[str, str | None]:
    entry = store.register_annotator(name, role=role, email=email or None, by=by)
    secret = store.issue_access_link(entry.annotator_id, by=by)
    return f"Added {entry.annotator_id} ({entry.role}). Their personal link:", _link(secret)


def _new_link(name: str | None) -> tuple[str, str | None]:
    secret = store.issue_access_link(_chosen(name), by=by)
    return f"A new personal link for {name}:", _link(secret)


def _rename(old: str | None, new: str) -> tuple[str, str | None]:
    entry = store.rename_annotator(_chosen(old), new, by=by)
    return f"Renamed {old} to {entry.annotator_id}; their work follows.", None


def _merge(source: str | None, into: str | None) -> tuple[str, str | None]:
    entry = store.merge_annotators(_chosen(source), _chosen(into), by=by)
    return f"Merged {source} into {entry.annotator_id}; their work counts as one.", None


def _revoke(name: str | None) -> tuple[str, str | None]:
    entry = store.revoke_annotator(_chosen(name), by=by)
    return f"Revoked {entry.annotator_id}: their links and sessions no longer work.", None


def _set_role(name: str | None, role: Role) -> tuple[str, str | None]:
    entry = store.set_annotator_role(_chosen(name), role, by=by)
    return f"{entry.annotator_id} is now {entry.role}.", None


registered = [a.annotator_id for a in registry]
with add, st.form("campaign_add", clear_on_submit=True):
    name = st.text_input("Name", key="campaign_add_name")
    new_role = st.radio("Role", ROLES, horizontal=True, key="campaign_add_role")
    email = st.text_input(
        "E-mail (optional)",
        key="campaign_add_email",
        help="The address your identity provider reports for them (OpenID Connect login).",
    )
    if st.form_submit_button("Add annotator", type="primary", key="campaign_add_submit"):
        _attempt(partial(_add, name, new_role, email))
with link, st.form("campaign_link"):
    who = st.selectbox("Annotator", active, index=None, key="campaign_link_who")
    st.caption("Earlier links of theirs keep working; revoke them to stop those.")
    if st.form_submit_button("Issue a new link", key="campaign_link_submit"):
        _attempt(partial(_new_link, who))
with rename, st.form("campaign_rename", clear_on_submit=True):
    old = st.selectbox("Annotator", registered, index=None, key="campaign_rename_old")
    new = st.text_input("New name", key="campaign_rename_new")
    if st.form_submit_button("Rename", key="campaign_rename_submit"):
        _attempt(partial(_rename, old, new))
with merge, st.form("campaign_merge"):
    source = st.selectbox(
        "Merge",
        [a.annotator for a in overview.annotators],
        index=None,
        key="campaign_merge_source",
        help="A duplicate or a typo: registered, or a name found only in the decisions.",
    )
    target = st.selectbox("into", active, index=None, key="campaign_merge_into")
    if st.form_submit_button("Merge", key="campaign_merge_submit"):
        _attempt(partial(_merge, source, target))
with revoke, st.form("campaign_revoke"):
    gone = st.selectbox("Annotator", active, index=None, key="campaign_revoke_who")
    st.caption("Their links and sessions stop working on their next request; their work stays.")
    if st.form_submit_button("Revoke", key="campaign_revoke_submit"):
        _attempt(partial(_revoke, gone))
with role, st.form("campaign_role"):
    whose = st.selectbox("Annotator", registered, index=None, key="campaign_role_who")
    chosen_role = st.radio("Role", ROLES, horizontal=True, key="campaign_role_role")
    if st.form_submit_button("Set role", key="campaign_role_submit"):
        _attempt(partial(_set_role, whose, chosen_role))


# --- assignment -----------------------------------------------------------------------------
@st.fragment
def _assignment() -> None:
    """The plan's widgets rerun only this part while the lead tries settings (the overview
    above reads the whole log); applying reruns the page."""
    if st.session_state.pop("campaign_team_changed", False):
        # Set, not deleted: the browser keeps showing a deleted widget value. Without this a
        # renamed, merged or revoked name would drop out of the chosen team unseen.
        st.session_state["campaign_plan_annotators"] = active
    team = st.multiselect("Annotators", active, default=active, key="campaign_plan_annotators")
    columns = st.columns(3)
    overlap = int(
        columns[0].number_input(
            "Annotators per video", min_value=1, value=min(2, len(active)), key="campaign_overlap"
        )
    )
    seed = int(columns[1].number_input("Seed", value=0, step=1, key="campaign_seed"))
    stratify = columns[2].checkbox("Stratify by category", value=True, key="campaign_stratify")
    try:
        planned = replan(store, team, overlap, stratify=stratify, seed=seed)
    except VadsceneError as exc:
        st.error(str(exc))
        return
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "annotator": row.annotator,
                    "assigned": row.assigned,
                    "started": row.started,
                    "added": row.added,
                    "withdrawn": row.withdrawn,
                    **row.by_category,
                }
                for row in planned.annotators
            ]
        ),
        hide_index=True,
        key="campaign_plan",
    )
    st.caption(
        f"The plan: each video to {overlap} of the chosen annotators, "
        f"{len(planned.changes)} changes to the current assignments. Videos a chosen annotator "
        "has started stay theirs; anyone left out loses their assignments (never their decisions)."
    )
    if st.button("Apply", type="primary", disabled=not planned.changes, key="campaign_apply"):
        try:
            logged = store.record_assignments(planned.changes, by=by)
        except VadsceneError as exc:
            st.error(str(exc))
        else:
            _done("assignment", f"Applied: {logged} assignment changes logged.")


st.header("Assignment")
_notice("assignment")
if active:
    _assignment()
else:
    st.info("Add annotators first: only registered annotators can be assigned videos.")
