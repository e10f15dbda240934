"""rankscope: the evaluation studio. Run with ``streamlit run dashboard/app.py``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import streamlit as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dashboard import components, progress, state
from dashboard.cache import limit_heap_arenas
from dashboard.text import plain
from metrics_core import InputError

VIEWS = Path(__file__).resolve().parent / "views"

limit_heap_arenas()
st.set_page_config(page_title="rankscope", page_icon=":material/leaderboard:", layout="wide")
if os.environ.get("RANKSCOPE_DEBUG"):  # error details in the browser only when asked for
    st.set_option("client.showErrorDetails", "full")
pages = {
    "Data": [st.Page(VIEWS / "data.py", title="Data", icon=":material/upload_file:", url_path="data")],
    "Evaluate": [
        st.Page(VIEWS / "summary.py", title="Summary", icon=":material/emoji_events:", default=True),
        st.Page(VIEWS / "overview.py", title="Overview", icon=":material/dashboard:", url_path="overview"),
        st.Page(VIEWS / "users.py", title="Users", icon=":material/group:", url_path="users"),
        st.Page(VIEWS / "popularity.py", title="Popularity and bias", icon=":material/balance:", url_path="popularity"),
        st.Page(VIEWS / "scores.py", title="Scores", icon=":material/scatter_plot:", url_path="scores"),
        st.Page(VIEWS / "cases.py", title="Cases", icon=":material/person_search:", url_path="cases"),
        st.Page(VIEWS / "compare.py", title="Compare", icon=":material/compare_arrows:", url_path="compare"),
        st.Page(VIEWS / "history.py", title="History", icon=":material/history:", url_path="history"),
    ],
}
page = st.navigation(pages)
waiting = st.empty()  # (under load a session's first paint says what it waits for, never an empty page)
if state.STARTED not in st.session_state:
    waiting.caption("Opening the workspace… (the first visit after a restart reads and evaluates it once for "
                    "everyone)")
try:
    state.start()
    state.publish_query_params()  # before the page: a page that stops early still leaves the link right
    for problem in state.link_problems():
        st.warning(plain(problem), icon=":material/link:")
    if not state.missing_workspace():
        components.version_notice(state.store())
    if state.missing_workspace() and page.title not in ("Data", "History"):  # History lists every saved run
        components.missing_workspace(state.missing_workspace(), state.store())
        st.page_link(pages["Data"][0], label="Go to the Data page", icon=":material/upload_file:")
        st.stop()
    if page.title != "Data" and not state.missing_workspace():
        components.sidebar()
    page.run()
    state.publish_query_params()  # and what the page chose (its pickers' first values)
except InputError as error:
    components.show_error(error)
    st.page_link(pages["Data"][0], label="Go to the Data page to fix the input", icon=":material/upload_file:")
except Exception as error:
    components.show_error(error)
finally:
    waiting.empty()
    progress.release_meanwhile()
