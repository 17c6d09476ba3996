"""Review: every video × factor at a glance, filters, agreement between annotators, and
adjudication (a consensus value recorded with source ``consensus``)."""

import math

import pandas as pd
import streamlit as st
from app_state import current_workspace

from vadscene.catalogue import AMBIGUOUS
from vadscene.errors import VadsceneError
from vadscene.review import FILTERS, agreement, filter_review, review_table

workspace = current_workspace()
store = workspace.store
st.title("Review")
reviewer = st.sidebar.text_input(
    "Annotator",
    value=st.query_params.get("annotator", ""),
    key="review_annotator",
    help="Adjudications are recorded under this name.",
).strip()


@st.cache_data(max_entries=4, show_spinner="Building the review table…")
def _views(root: str, revision: tuple) -> tuple:
    """The table and agreement for one store revision; reruns (filters, clicks) reuse them."""
    return review_table(workspace), agreement(store)


table, agreements = _views(str(workspace.root), store.revision())
chosen = st.pills(
    "Show videos that are",
    list(FILTERS),
    format_func=FILTERS.get,
    selection_mode="multi",
    key="review_filters",
)
shown = filter_review(table, chosen or [])
link = "annotator=" + reviewer + "&" if reviewer else ""
shown = shown.assign(open=[f"/?{link}video={v}" for v in shown["video"]])
st.caption(f"{len(shown)} of {len(table)} videos")
st.dataframe(
    shown,
    hide_index=True,
    key="review_table",
    column_order=["open", "video", "category", *workspace.catalogue.keys, *FILTERS, "annotators"],
    column_config={"open": st.column_config.LinkColumn("Annotate", display_text="open")},
)

st.subheader("Agreement between annotators")
rows = [
    {
        "factor": a.factor,
        "statistic": a.statistic.replace("_", " "),
        "kappa": a.kappa_text,
        "observed agreement": (
            "—" if math.isnan(a.observed_agreement) else f"{a.observed_agreement:.3f}"
        ),
        "videos": a.videos,
        "annotators": ", ".join(a.annotators),
    }
    for a in agreements
]
st.dataframe(pd.DataFrame(rows), hide_index=True, key="review_agreement")
st.caption(
    "Cohen's κ for two annotators, Fleiss' κ for more, over the videos all of them "
    "rated; 'ambiguous' counts as a category."
)

st.subheader("Adjudicate")
disputed = table[table["disagree"]]["video"].tolist()
if not disputed:
    st.info("No disagreement between annotators.")
    st.stop()
if not reviewer:
    st.info("Enter your name in the sidebar to adjudicate.")
    st.stop()
video_id = st.selectbox("Video with a disagreement", disputed, key="review_video")
decisions = [
    d
    for d in store.current_decisions(video_id=video_id)
    if d.value is not None and d.source in ("manual", "override")
]
factors_in_dispute = sorted(
    {d.factor for d in decisions if len({e.value for e in decisions if e.factor == d.factor}) > 1}
)
for factor_key in factors_in_dispute:
    factor = workspace.catalogue.factor(factor_key)
    votes = ", ".join(f"{d.annotator}: {d.value}" for d in decisions if d.factor == factor_key)
    left, right = st.columns([3, 1])
    value = left.selectbox(
        f"{factor.name} — {votes}",
        [*factor.values, AMBIGUOUS],
        key=f"review_value_{video_id}_{factor_key}",
    )
    if right.button("Record consensus", key=f"review_record_{video_id}_{factor_key}"):
        try:
            store.record_decision(
                video_id, factor_key, value, annotator=reviewer, source="consensus"
            )
        except VadsceneError as exc:
            st.error(str(exc))
        else:
            st.toast(f"Consensus for {factor_key}: {value}")
