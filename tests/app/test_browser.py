"""The app in a real browser: Playwright drives the system Chromium against `streamlit run`.

Uploads files, maps columns, reads the overview and compare pages, checks the numbers shown
against metrics_core, downloads a table, and saves a screenshot of every page to
tests/artifacts/. Skipped when /usr/bin/chromium is not installed (``.ci/run`` installs it).
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from browsing import CHROMIUM, cards, click_and_wait, free_port, settle, shot, start_server, stop_server, upload_files

from dashboard.glossary import fmt, label
from metrics_core import Columns, evaluate_models

pytestmark = [pytest.mark.browser, pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="no system Chromium")]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    process, url = start_server(tmp_path_factory.mktemp("store"))
    yield url
    stop_server(process)


def test_upload_map_overview_and_compare(server, browser, tmp_path):
    from dashboard.demo import generate

    tables = generate(n_users=300, n_items=200, seed=3)
    files = {}
    for name in ("recs_popularity", "recs_personalised", "ground_truth"):
        frame = tables[name]
        if name != "ground_truth":  # other column names, mapped in the app
            frame = frame.rename(columns={"user_id": "customer", "item_id": "product", "rank": "position"})
        else:
            frame = frame.rename(columns={"user_id": "customer", "item_id": "product"})
        files[name] = tmp_path / f"{name}.csv"
        frame.to_csv(files[name], index=False)

    page = browser.new_page(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    page.goto(f"{server}/data")
    settle(page)
    upload_files(page, [files["recs_popularity"], files["recs_personalised"]], files["ground_truth"])
    # the mapping is pre-filled from the column names; set the relevance threshold to 4
    threshold = page.get_by_label("Relevant when the grade is at least", exact=True)
    threshold.fill("4")
    threshold.press("Enter")
    settle(page)
    shot(page, "1_data_mapping")
    click_and_wait(page, "Check, save and evaluate", "Saved and loaded 2 model(s)")
    assert page.get_by_text("Saved and loaded 2 model(s)").count() == 1
    shot(page, "2_data_loaded")

    page.get_by_role("link", name="See the overview").click()
    settle(page)
    shot(page, "3_overview")
    expected = evaluate_models(
        {"recs_popularity": pd.read_csv(files["recs_popularity"]), "recs_personalised":
         pd.read_csv(files["recs_personalised"])}, pd.read_csv(files["ground_truth"]), k=10,
        columns=Columns(user="customer", item="product", rank="position", relevance="rating", threshold=4))
    shown = cards(page)
    model = "recs_personalised"
    for name in ("precision", "recall", "ndcg", "map", "mrr", "hit_rate", "personalization"):
        assert shown[label(name, 10)] == fmt(name, expected[model].metrics[name]), name

    page.get_by_role("link", name="Compare").click()
    settle(page)
    shot(page, "4_compare")
    table = page.locator('[data-testid="stDataFrame"]').first
    assert table.is_visible()
    with page.expect_download(timeout=90_000) as download:
        page.get_by_role("button", name="Download models (CSV)").click()
    saved = pd.read_csv(download.value.path(), index_col="model")
    assert saved.loc[model, label("ndcg", 10)] == pytest.approx(expected[model].metrics["ndcg"])
    page.get_by_role("tab", name="Is the difference real?").click()
    settle(page)
    assert page.get_by_text("recs_personalised beats recs_popularity on ndcg@10").count() == 1
    page.get_by_role("tab", name="Export").click()
    settle(page)
    with page.expect_download(timeout=90_000) as download:
        page.get_by_role("button", name="HTML report (works offline)").click()
    report = Path(download.value.path()).read_text(encoding="utf-8")
    assert "vegaEmbed" in report and "<script src=" not in report

    page.goto(f"{server}/users")
    settle(page)
    worst = page.locator('[data-testid="stPageLink"] a').filter(has_text="user ").first
    chosen = re.search(r"user (\S+):", worst.inner_text()).group(1)
    worst.click()
    settle(page)
    assert f"case_user={chosen}" in page.url
    picker = page.locator('[data-testid="stMain"] [data-testid="stSelectbox"] input').first
    assert picker.input_value() == chosen
    shot(page, "9_case_from_users")

    for path, name in (("users", "5_users"), ("popularity", "6_popularity"), ("scores", "7_scores"),
                       ("cases", "8_cases")):
        page.goto(f"{server}/{path}")
        settle(page)
        assert page.locator('[data-testid="stException"]').count() == 0
        shot(page, name)


def test_data_page_reads_a_semicolon_file_and_warns_about_ids(server, browser, tmp_path):
    """A European-style CSV (';' and decimal commas) is read and the page says how; ids padded
    with zeros on one side only get a warning that names the cause."""
    recs = tmp_path / "padded_model.csv"
    rows = [f"{u};{i:04d};0,{9 - i}\n" for u in range(1, 6) for i in range(1, 5)] + ["5;sku-9;0,1\n"]
    recs.write_text("user_id;item_id;score\n" + "".join(rows))  # with text in the column, "0001" stays text
    truth = tmp_path / "truth.csv"
    truth.write_text("user_id,item_id\n" + "".join(f"{u},{u % 4 + 1}\n" for u in range(1, 6)))
    page = browser.new_page(viewport={"width": 1400, "height": 1700})  # tall: the report below the form shows
    page.goto(f"{server}/data")
    settle(page)
    upload_files(page, [recs], truth)
    assert page.get_by_text("read with ';' between columns and a decimal comma").count() == 1
    page.get_by_role("button", name="Check, save and evaluate").click()
    settle(page)
    shot(page, "10_data_semicolon_and_padded_ids")
    assert page.locator('[data-testid="stException"]').count() == 0
    assert page.get_by_text("Likely cause: leading zeros", exact=False).count() == 1


def test_a_saved_workspace_survives_reload_second_browser_and_restart(browser, tmp_path):
    """Upload and save; then the same numbers after a reload, in a second browser context with the
    link, and from the link after the server restarts (same store, same port)."""
    from dashboard.demo import generate

    tables = generate(n_users=200, n_items=150, seed=5)
    recs, truth = tmp_path / "ranker.csv", tmp_path / "truth.csv"
    tables["recs_personalised"].to_csv(recs, index=False)
    tables["ground_truth"].to_csv(truth, index=False)
    home, port = tmp_path / "store", free_port()
    process, url = start_server(home, port)
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{url}/data")
        settle(page)
        upload_files(page, [recs], truth)
        assert page.get_by_text("What was uploaded").count() == 1
        page.get_by_text("What was uploaded").scroll_into_view_if_needed()
        shot(page, "10b_upload_summary")
        page.get_by_role("textbox", name="Save as workspace").fill("weekly ranker")
        page.get_by_role("textbox", name="Save as workspace").press("Enter")
        settle(page)
        click_and_wait(page, "Check, save and evaluate", "Saved and loaded 1 model(s)")
        assert page.get_by_text("Saved and loaded 1 model(s)").count() == 1
        page.get_by_role("link", name="See the overview").click()
        settle(page)
        link = page.url
        assert re.search(r"[?&]ws=[0-9a-f]{12}", link), link
        first = cards(page)
        assert first and first[label("ndcg", 10)] != "–"
        shot(page, "11_saved_workspace_overview")
        page.reload()
        settle(page)
        assert cards(page) == first, "a reload reopens the same workspace"
        other = browser.new_context(viewport={"width": 1400, "height": 1000})
        colleague = other.new_page()
        colleague.goto(link)
        settle(colleague)
        assert cards(colleague) == first, "a colleague's browser opens the same numbers"
        other.close()
    finally:
        stop_server(process)
    process, url = start_server(home, port)
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(link)
        settle(page)
        assert cards(page) == first, "the link still works after a restart"
        assert page.get_by_text("weekly ranker").count() >= 1
        page.goto(f"{url}/history?{link.split('?', 1)[1]}")
        settle(page)
        click_and_wait(page, "Record run", "Recorded run")
        assert page.get_by_text("Recorded run").count() == 1
        shot(page, "12_history")
        from metrics_core.store import Store

        workspace_id = re.search(r"ws=([0-9a-f]{12})", link).group(1)
        Store(home).delete_workspace(workspace_id)
        page.goto(link)
        settle(page)
        assert page.get_by_text("was moved to the trash").count() == 1  # (restorable: its link says so)
        shot(page, "13_trashed_link")
        Store(home).purge_trash(older_than_days=0)
        page.goto(link)
        settle(page)
        assert page.get_by_text(f"The workspace in this link ({workspace_id}) is not in the store").count() == 1
        assert page.locator('[data-testid="stMetric"]').count() == 0, "no other workspace's numbers"
        shot(page, "13_missing_workspace")
    finally:
        stop_server(process)
