"""Review: every video × factor at a glance, filters, agreement between annotators, and
adjudication (a consensus value recorded with source ``consensus``) — by a lead, under the name
the login or the URL gives (:mod:`identity`); the Disputes page does the same by keyboard."""

import math
from functools import partial

import pandas as pd
import streamlit as st
from app_state import current_workspace
from identity import current_user

from vadscene.annotate.consensus import Dispute, adjudicate, disputes
from vadscene.annotate.review import (
    FILTERS,
    agreement,
    annotate_url,
    auto_agreement,
    filter_review,
    kappa_heatmap,
    review_table,
)
from vadscene.core.catalogue import AMBIGUOUS
from vadscene.core.errors import VadsceneError

workspace = current_workspace()
store = workspace.store
user = current_user()
st.title("Review")
if user.team:
    reviewer = user.annotator or ""
    st.sidebar.markdown(f"Logged in as **{reviewer}** ({user.role})")
else:
    reviewer = st.sidebar.text_input(
        "Annotator",
        value=user.annotator or "",
        key="review_annotator",
        help="Adjudications are recorded under this name.",
    ).strip()


@st.cache_data(max_entries=4, show_spinner="Building the review table…")
def _views(root: str, revision: tuple) -> tuple:
    """The table and agreement for one store state; reruns (filters, clicks) reuse them."""
    decisions = store.current_decisions()  # one read for all three views
    return (
        review_table(workspace, decisions=decisions),
        agreement(store, decisions=decisions, restrict_to=store.assignments()),
        auto_agreement(store, decisions=decisions),
    )


def _share(value: float) -> str:
    return "—" if math.isnan(value) else f"{value:.3f}"


def _with_voters(dispute: Dispute, value: str) -> str:
    """A consensus choice as the selectbox shows it: the value, and who voted for it."""
    voters = dispute.voters(value)
    return f"{value} — voted by {', '.join(voters)}" if voters else value


# renames, merges and assignments change names and the planned overlap, not the revision
table, agreements, auto_agreements = _views(
    str(workspace.root), (*store.revision(), *store.team_revision())
)
chosen = st.pills(
    "Show videos that are",
    list(FILTERS),
    format_func=FILTERS.__getitem__,
    selection_mode="multi",
    key="review_filters",
)
shown = filter_review(table, chosen or [])
shown = shown.assign(open=[annotate_url(v, reviewer) for v in shown["video"]])
st.caption(f"{len(shown)} of {len(table)} videos")
factor_help = (
    "The value a release publishes; for a disagreement nobody has settled, each value and its "
    "number of votes, the most voted first (the Disputes page shows who voted what)."
)
st.dataframe(
    shown,
    hide_index=True,
    key="review_table",
    column_order=["open", "video", "category", *workspace.catalogue.keys, *FILTERS, "annotators"],
    column_config={
        "open": st.column_config.LinkColumn("Annotate", display_text="open"),
        **{key: st.column_config.TextColumn(help=factor_help) for key in workspace.catalogue.keys},
    },
)

st.subheader("Agreement between annotators")
rows = [
    {
        "factor": a.factor,
        "statistic": a.statistic.replace("_", " "),
        "kappa": a.kappa_text,
        "observed agreement": _share(a.observed_agreement),
        "videos rated by all": a.videos,
        "annotators": ", ".join(a.annotators),
    }
    for a in agreements
]
st.dataframe(pd.DataFrame(rows), hide_index=True, key="review_agreement")
st.caption(
    "All annotators together: Cohen's κ for two, Fleiss' κ for more, over the videos all of "
    "them rated; 'ambiguous' counts as a category."
)
pairs = [
    {
        "factor": a.factor,
        "annotators": f"{p.first} – {p.second}",
        "kappa": p.kappa_text,
        "observed agreement": _share(p.observed_agreement),
        "videos rated by both": p.videos,
    }
    for a in agreements
    for p in a.pairs
]
heatmap = kappa_heatmap(agreements)
if heatmap is not None:
    st.altair_chart(heatmap, width="content", key="review_kappa_heatmap")
    with st.expander("Pairwise κ as a table"):
        st.dataframe(pd.DataFrame(pairs), hide_index=True, key="review_pairs")
if auto_agreements:
    st.markdown("**Annotators against the measured (auto) poles**")
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "factor": r.factor,
                    "annotator": r.annotator,
                    "kept the pole": f"{r.agreed} of {r.videos}",
                    "share": _share(r.observed_agreement),
                    "kappa vs pole": _share(r.kappa),
                }
                for r in auto_agreements
            ]
        ),
        hide_index=True,
        key="review_auto_agreement",
    )
    st.caption(
        "A person's value on a measured factor (an override, or the pole taken as their own) "
        "against the current auto pole, over the videos they decided — often the ones whose "
        "pole looked wrong, so this is no accuracy of the measurement."
    )

st.subheader("Adjudicate")
disputed = table[table["disagree"]]["video"].tolist()
if not disputed:
    st.info("No disagreement between annotators.")
    st.stop()
if not user.is_lead:
    st.info(f"Only a lead can adjudicate; you are logged in as {reviewer} (annotator).")
    st.stop()
st.page_link(
    "app_pages/disputes.py", label="Settle them one by one, by keyboard", icon=":material/keyboard:"
)
if not reviewer:
    st.info("Enter your name in the sidebar to adjudicate.")
    st.stop()
video_id = st.selectbox("Video with a disagreement", disputed, key="review_video")
current = store.current_decisions(video_id=video_id)
for (_, factor_key), dispute in sorted(disputes(current).items()):
    factor = workspace.catalogue.factor(factor_key)
    left, right = st.columns([3, 1], vertical_alignment="bottom")
    # No default: a value is recorded only after a person picks one and presses the button.
    value = left.selectbox(
        f"{factor.name} — {dispute.text}",
        [*factor.values, AMBIGUOUS],
        index=None,
        placeholder="Choose the consensus value…",
        format_func=partial(_with_voters, dispute),
        key=f"review_value_{video_id}_{factor_key}",
    )
    if any(d.factor == factor_key and d.source == "consensus" for d in current):
        settled = table.loc[table["video"] == video_id, factor_key].item()
        left.caption(f"Consensus so far: {settled}")
    if (
        right.button(
            "Record consensus",
            key=f"review_record_{video_id}_{factor_key}",
            disabled=value is None,
        )
        and value is not None
    ):
        try:
            adjudicate(store, video_id, factor_key, value, annotator=reviewer)
        except VadsceneError as exc:
            st.error(str(exc))
        else:
            st.toast(f"Consensus for {factor_key}: {value}")
