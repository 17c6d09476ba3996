"""Export: download the release (JSON, CSV, schema), its validation result and support."""

import json

import pandas as pd
import streamlit as st
from app_state import current_workspace
from identity import current_user, require_lead

from vadscene.core.errors import VadsceneError
from vadscene.release.releases import (
    SCHEMA_FILE_NAME,
    build_release,
    parse_release,
    release_csv,
    release_json,
    release_json_schema,
)

workspace = current_workspace()
require_lead(current_user(), "export releases")
st.title("Export")
annotators = workspace.store.annotators()
mode = st.radio(
    "Values from",
    ["all annotators (consensus)", "one annotator"],
    key="export_mode",
    horizontal=True,
)
annotator = None
if mode == "one annotator":
    if not annotators:
        st.info("No annotator has made a decision yet.")
        st.stop()
    annotator = st.selectbox("Annotator", annotators, key="export_annotator")

try:
    release = build_release(workspace, annotator=annotator)
    text = release_json(release)
    parse_release(json.loads(text))  # the same validation `vadscene validate` runs
except VadsceneError as exc:
    st.error(str(exc))
    st.stop()
st.success(
    f"Valid release: {len(release.videos)} videos, schema version "
    f"{release.schema_version}, annotators: {', '.join(release.annotators) or 'none'}"
)

stem = f"{workspace.config.dataset}-{release.created_at:%Y%m%d-%H%M%S}"
columns = st.columns(3)
columns[0].download_button(
    "Release JSON", text, f"{stem}.json", "application/json", key="export_json"
)
columns[1].download_button("CSV", release_csv(release), f"{stem}.csv", "text/csv", key="export_csv")
columns[2].download_button(
    "JSON Schema",
    json.dumps(release_json_schema(), indent=2),
    SCHEMA_FILE_NAME,
    "application/json",
    key="export_schema",
)

st.subheader("Support per pole")
st.dataframe(pd.DataFrame([s.model_dump() for s in release.support]), hide_index=True)
