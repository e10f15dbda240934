"""Layouts that hold for 2 to 8 models (issue #44): every page at 1440 x 900 in a real browser,
with 2, 4 and 8 models (long names among them), has no horizontal overflow of the main block, and
no metric card's name nor any other text is cut (every metric shown). Screenshots of the 8-model
pages are kept."""

from __future__ import annotations

from pathlib import Path

import pytest
from browsing import CHROMIUM, open_view, settle, shot, start_server, stop_server, view_name, views
from large import save_large_workspace

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="no system Chromium")]
PAGES = ["Summary", "Overview", "Users", "Popularity and bias", "Scores", "Cases", "Compare", "History"]
NAMES = ("popular", "item-kNN", "SVD (tuned, 64 factors)", "random", "ALS", "EASE", "two-tower", "LightGCN")
MEASURE = """() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const labels = '[data-testid="stMetricLabel"] div, [data-testid="stMain"] [data-testid="stMarkdownContainer"] p';
  const cut = [...document.querySelectorAll(labels)]
    .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.innerText);  // (an ellipsis: wider than shown)
  return {overflow: main.scrollWidth - main.clientWidth, cut: cut};
}"""


@pytest.mark.parametrize("count", [2, 4, 8])
def test_every_page_holds_its_layout_for_2_to_8_models(browser, tmp_path, count):
    home = tmp_path / "store"
    workspace_id = save_large_workspace(home, NAMES[:count], users=2_000)
    process, url = start_server(home)
    try:
        page = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()
        page.goto(f"{url}/?ws={workspace_id}&every_metric=True")
        settle(page)
        for title, tab in views(PAGES):
            open_view(page, title, tab)
            where = (count, title, tab)
            assert page.get_by_text("Something went wrong").count() == 0, where
            measured = page.evaluate(MEASURE)
            assert measured["overflow"] <= 0, (where, measured)
            assert measured["cut"] == [], (where, measured)
            if title == "Overview":  # (every metric's card, from the link)
                assert page.locator('[data-testid="stMetric"]').count() >= 18
            if count == 8:
                shot(page, view_name("models8", title, tab))
    finally:
        stop_server(process)
