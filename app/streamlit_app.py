"""vadscene app — router only: pages live in app_pages/, logic in the vadscene package."""

import streamlit as st

st.set_page_config(page_title="vadscene", page_icon="🎞️", layout="wide")
st.navigation([st.Page("app_pages/overview.py", title="Videos", icon="🎞️", default=True)]).run()
