"""ASGI entry (`streamlit run app/server.py`): the Streamlit app plus the video route that
streams the workspace's registered videos with HTTP Range support, behind a Host check."""

import os

import streamlit as st

from vadscene.annotate.serving import allowed_hosts, host_check, video_routes

app = st.App(
    "streamlit_app.py",
    routes=video_routes(os.environ["VADSCENE_WORKSPACE"]),
    middleware=[host_check(allowed_hosts())],  # only this machine's names and --allow-host ones
)
