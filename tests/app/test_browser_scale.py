"""Every page in a real browser on a workspace of the size people bring (issue #43): 20,000
users x 4 models with training, item and user features, opened from its link; every page
visited at three K (changed twice with the sidebar's slider), no error shown, every chart's
download works and holds at most 5,000 rows (the pages summarise per-user values on the
server), every other download (tables, the report, the numbers) gives a file; the first open
says what it is doing."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from browsing import CHROMIUM, open_view, settle, shot, start_server, stop_server, view_name, views
from large import record_runs, save_large_workspace

from dashboard.state import COMPARE_TABS
from dashboard.summaries import MAX_CHART_ROWS

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="no system Chromium")]
PAGES = ["Summary", "Overview", "Users", "Popularity and bias", "Scores", "Cases", "Compare", "History"]


SEEN_WORDS = """
window.__said = [];
new MutationObserver(() => {
  for (const alert of document.querySelectorAll('[data-testid="stAlert"]')) {
    const text = alert.innerText;
    if (text && !window.__said.includes(text)) window.__said.push(text);
  }
}).observe(document, {subtree: true, childList: true, characterData: true});
"""


def downloaded_chart_rows(page) -> list[int]:
    """Click every "Download chart" button of the page; the rows of each chart's data."""
    rows = []
    buttons = page.get_by_role("button", name="Download chart (Vega-Lite JSON)")
    for i in range(buttons.count()):
        with page.expect_download(timeout=60_000) as download:
            buttons.nth(i).click()
        spec = json.loads(Path(download.value.path()).read_text())
        rows += [len(values) for values in spec.get("datasets", {}).values()]
        inline = spec.get("data", {})
        if isinstance(inline, dict) and "values" in inline:
            rows.append(len(inline["values"]))
    return rows


def downloaded_files(page) -> list[str]:
    """Click every download button of the page that is not a chart's; the names of the files,
    each checked to hold something."""
    names = []
    buttons = page.locator('[data-testid="stDownloadButton"] button').filter(
        has_not_text="Download chart (Vega-Lite JSON)")
    for i in range(buttons.count()):
        with page.expect_download(timeout=120_000) as download:
            buttons.nth(i).click()
        assert Path(download.value.path()).stat().st_size > 0, download.value.suggested_filename
        names.append(download.value.suggested_filename)
    return names


def move_k(page, steps: int) -> None:
    """Move the sidebar's K slider by ``steps``, one arrow key on its thumb at a time, each waited
    for until the link names the next K: on a loaded machine a key pressed while the page reruns
    can be lost (the full suite once moved 10 by -4 to 7, then not at all), so a lost one is
    pressed again."""
    thumb = page.locator('[data-testid="stSidebar"] [data-testid="stSlider"] input[type="range"]').first
    target = int(k_in_link(page)) + steps
    deadline = time.monotonic() + 180
    while int(k_in_link(page)) != target and time.monotonic() < deadline:
        before = k_in_link(page)
        thumb.focus()
        thumb.press("ArrowRight" if int(before) < target else "ArrowLeft")
        waited = time.monotonic() + 15
        while k_in_link(page) == before and time.monotonic() < waited:
            page.wait_for_timeout(250)
        settle(page, quiet=0.5)
    assert int(k_in_link(page)) == target, (k_in_link(page), target)
    settle(page)


def k_in_link(page) -> str:
    """The K the page's link names (10, the default, when it names none)."""
    found = re.search(r"[?&]k=(\d+)", page.url)
    return found[1] if found else "10"


def test_every_page_at_20000_users_and_4_models_draws_and_downloads_within_5000_rows(browser, tmp_path):
    home = tmp_path / "store"
    workspace_id = save_large_workspace(home)
    record_runs(home, workspace_id)  # (History compares two runs of this size)
    process, url = start_server(home)
    try:
        page = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True).new_page()
        page.add_init_script(SEEN_WORDS)  # (what the first open says can come and go within a second)
        page.goto(f"{url}/?ws={workspace_id}")
        settle(page)
        said = page.evaluate("window.__said")
        # the first open says what it is doing while it reads, joins and evaluates (never a blank page)
        assert any(re.search(r"Reading and checking|Ordering the lists|Evaluating 4 models", text) for text in said), \
            said
        assert any("rankscope workspaces prepare " + workspace_id in text for text in said), \
            "the first evaluation of a saved workspace says how to make it ahead of time"
        charts, seen_k, files = 0, [], []
        for steps in (0, -4, -2):  # K = 10, then lower, then lower again: every page at each
            if steps:
                page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name="Overview").click()
                settle(page)
                move_k(page, steps)
            seen_k.append(k_in_link(page))
            for title, tab in views(PAGES):
                if steps == -4 and tab not in (None, COMPARE_TABS[0]):  # (Compare's other tabs: at two K of three)
                    continue
                open_view(page, title, tab)
                where = (title, tab)
                assert page.get_by_text("Something went wrong").count() == 0, where
                assert page.locator('[data-testid="stException"]').count() == 0, where
                rows = downloaded_chart_rows(page)
                assert all(n <= MAX_CHART_ROWS for n in rows), (where, rows)
                charts += len(rows)
                if title == "History":  # (the newest two runs compared, model by model, in words)
                    assert page.get_by_text(re.compile(r"night 2 · popular .* night 1 · popular on ndcg")).count(), \
                        "two runs of 20,000 users compared"
                if steps == 0:
                    files += downloaded_files(page)
                    shot(page, view_name("scale", title, tab))
                elif steps == -2 and title in ("Compare", "Users"):  # (a K read from the curves: evaluated on a click)
                    files += downloaded_files(page)
        assert charts >= 10, "the pages drew their charts"
        for name in ("rankscope-report.html", "rankscope-numbers.json", "rankscope-numbers.csv"):
            assert files.count(name) == 2, files  # (at K = 10, and at a K read from the curves)
        assert len(files) >= 8, files
        assert len(set(seen_k)) == 3, f"K was changed twice: {seen_k}"
    finally:
        stop_server(process)
