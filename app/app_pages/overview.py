"""Videos: the workspace's videos and how far each annotator has got."""

import altair as alt
import pandas as pd
import streamlit as st
from app_state import current_workspace

from vadscene.release.releases import build_release

workspace = current_workspace()
store = workspace.store
videos = store.videos()
catalogue = workspace.catalogue

st.title(f"{workspace.config.dataset}")
st.caption(
    f"Workspace `{workspace.root}` · catalogue '{catalogue.name}' "
    f"({len(catalogue.factors)} factors) · {len(videos)} videos"
)

annotators = store.annotators()
if annotators:
    rows = []
    for name in annotators:
        progress = store.progress(name)
        rows.append(
            {
                "annotator": name,
                "videos complete": progress.complete,
                "of": progress.videos,
                **progress.decided_by_factor,
            }
        )
    st.subheader("Annotation progress")
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="overview_progress")
else:
    st.info("No decisions yet.")

if videos:
    support = pd.DataFrame(
        [
            {
                "contrast": f"{s.factor} ({s.positive} / {s.negative})",
                "side": side,
                "pole": pole,
                "videos": n,
            }
            for s in build_release(workspace).support
            if s.primary
            for side, pole, n in (
                ("⊕", s.positive, s.n_positive),
                ("⊖", s.negative, s.n_negative),
                ("ambiguous", "ambiguous", s.n_ambiguous),
            )
        ]
    )
    st.subheader("Support per pole so far")
    st.caption("Videos at each pole of every primary contrast, values resolved across annotators.")
    chart = (
        alt.Chart(support)
        .mark_bar()
        .encode(
            y=alt.Y("contrast:N", sort=None, title=None, axis=alt.Axis(labelLimit=320)),
            x=alt.X("videos:Q", stack="zero", axis=alt.Axis(tickMinStep=1)),
            color=alt.Color(
                "side:N",
                scale=alt.Scale(
                    domain=["⊕", "⊖", "ambiguous"], range=["#4c78a8", "#f58518", "#bab0ac"]
                ),
                legend=alt.Legend(title=None, orient="top"),
            ),
            tooltip=["contrast", "pole", "videos"],
        )
    )
    st.altair_chart(chart, width="stretch")

st.subheader("Videos")
table = pd.DataFrame(
    [
        {
            "video": v.video_id,
            "category": v.category,
            "duration (s)": round(v.duration_s, 1),
            "frames": v.num_frames,
            "fps": v.fps,
            "size": f"{v.width}×{v.height}",
            "codec": v.codec,
        }
        for v in videos
    ]
)
st.dataframe(table, hide_index=True, key="overview_videos")

unreadable = store.unreadable_files()
if unreadable:
    st.subheader("Files that could not be registered")
    st.dataframe(pd.DataFrame(unreadable, columns=["file", "reason"]), hide_index=True)
