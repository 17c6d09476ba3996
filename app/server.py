"""ASGI entry (`streamlit run app/server.py`): the Streamlit app plus the video route that
streams the workspace's registered videos with HTTP Range support."""

import os

import streamlit as st

from vadscene.serving import video_routes

app = st.App("streamlit_app.py", routes=video_routes(os.environ["VADSCENE_WORKSPACE"]))
