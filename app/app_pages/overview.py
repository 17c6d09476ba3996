"""Videos: the workspace's videos and how far each annotator has got."""

import pandas as pd
import streamlit as st
from app_state import current_workspace

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
