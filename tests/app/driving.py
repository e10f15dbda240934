"""Helpers of the AppTest tests: the app started headless, as a user opens it (optionally from
a link's query parameters), and the check that a page shows no error."""

from __future__ import annotations

import re
from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")


def start(page: str | None = "views/overview.py", **query) -> AppTest:
    """The app after its first run, from a link with ``query``, on ``page`` (the Overview, which
    most tests read; None: the default page, the Summary)."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update(query)
    if page is not None:
        at.switch_page(page)
    at.run()
    return at


def open_tab(at: AppTest, name: str) -> AppTest:
    """The Compare page's tab ``name`` opened (as a click on it does: only the open tab runs)."""
    at.session_state["compare_tab"] = name
    at.run()
    assert_clean(at)
    return at


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def shown(markdown: str) -> str:
    """Markdown source as the reader sees its text (the app escapes user-provided text:
    ``first\\, renamed`` reads ``first, renamed``)."""
    return re.sub(r"\\(.)", r"\1", markdown)
