"""vadscene app — router only: pages live in app_pages/, logic in the vadscene package."""

from pathlib import Path

import streamlit as st

# A local icon: a Material icon as page icon is fetched from Google's servers by the browser.
FAVICON = str(Path(__file__).parent / "assets" / "favicon.png")
st.set_page_config(page_title="vadscene", page_icon=FAVICON, layout="wide")
st.navigation(
    [
        st.Page("app_pages/annotate.py", title="Annotate", icon=":material/edit:", default=True),
        st.Page("app_pages/review.py", title="Review", icon=":material/table_view:"),
        st.Page("app_pages/disputes.py", title="Disputes", icon=":material/gavel:"),
        st.Page("app_pages/campaign.py", title="Campaign", icon=":material/groups:"),
        st.Page("app_pages/overview.py", title="Videos", icon=":material/movie:"),
        st.Page("app_pages/measure.py", title="Measure", icon=":material/straighten:"),
        st.Page("app_pages/audit.py", title="Audit", icon=":material/query_stats:"),
        st.Page("app_pages/export.py", title="Export", icon=":material/download:"),
    ]
).run()
