"""Attention Lens — explore the attention of small encoder-decoder Transformers.

Run with ``streamlit run app.py`` (or ``python3 run.py app``). This file only routes: it sets
up the page, draws the shared sidebar (so its choices survive page changes) and runs the page.
"""

from pathlib import Path

import streamlit as st

from app_support.state import render_sidebar, sync_url

st.set_page_config(
    page_title="Attention Lens",
    page_icon=str(Path(__file__).parent / "app_support" / "favicon.png"),
    layout="wide",
    initial_sidebar_state="expanded",
    menu_items={"About": "Attention Lens: every head, every tensor shape, in the browser."},
)

PAGES = {
    "Attention": [
        st.Page("app_pages/single_head.py", title="Single head", icon=":material/grid_on:", default=True),
        st.Page("app_pages/all_heads.py", title="All heads", icon=":material/apps:", url_path="heads"),
        st.Page("app_pages/token_focus.py", title="Token focus", icon=":material/my_location:", url_path="focus"),
        st.Page("app_pages/aggregates.py", title="Mean & rollout", icon=":material/functions:", url_path="aggregates"),
    ],
    "Decoding & comparison": [
        st.Page("app_pages/decoding.py", title="Step-by-step decoding", icon=":material/play_circle:", url_path="decoding"),
        st.Page("app_pages/compare.py", title="Compare two sentences", icon=":material/compare:", url_path="compare"),
    ],
    "Under the hood": [
        st.Page("app_pages/head_stats.py", title="Head statistics", icon=":material/bar_chart:", url_path="stats"),
        st.Page("app_pages/model_page.py", title="The model", icon=":material/memory:", url_path="model"),
    ],
}

page = st.navigation(PAGES)
try:
    render_sidebar(page.url_path)
    page.run()
finally:
    # Also after st.stop() (e.g. empty input): the URL must still hold the view.
    sync_url()
