"""The app in a real browser: Playwright drives the system Chromium against `streamlit run`.

Uploads files, maps columns, reads the overview and compare pages, checks the numbers shown
against metrics_core, downloads a table, and saves a screenshot of every page to
tests/artifacts/. Skipped when /usr/bin/chromium is not installed (``.ci/run`` installs it).
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pandas as pd
import pytest

from dashboard.glossary import fmt, label
from metrics_core import Columns, evaluate_models

CHROMIUM = "/usr/bin/chromium"
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts"
pytestmark = [pytest.mark.browser, pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="no system Chromium")]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "dashboard" / "app.py"), "--server.port", str(port),
         "--server.headless", "true", "--server.address", "127.0.0.1"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(120):
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=1).read() == b"ok":
                break
        except OSError:
            time.sleep(0.5)
    else:
        process.kill()
        pytest.fail("streamlit did not start")
    yield url
    process.terminate()
    process.wait(10)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                  "--no-first-run", "--disable-sync", "--disable-quic"])
        yield instance
        instance.close()


def settle(page) -> None:
    """Wait until the script has finished running and the page has drawn."""
    page.wait_for_selector('[data-testid="stApp"]', timeout=60_000)
    page.wait_for_timeout(500)
    deadline = time.time() + 90
    while time.time() < deadline:
        if page.get_attribute('[data-testid="stApp"]', "data-test-script-state") == "notRunning":
            break
        page.wait_for_timeout(200)
    page.wait_for_timeout(1500)


def shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def cards(page) -> dict[str, str]:
    out = {}
    for metric in page.locator('[data-testid="stMetric"]').all():
        name = metric.locator('[data-testid="stMetricLabel"]').inner_text().strip()
        out[name] = metric.locator('[data-testid="stMetricValue"]').inner_text().strip()
    return out


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
    uploaders = page.locator('[data-testid="stFileUploader"]')
    uploaders.nth(0).locator("input[type=file]").set_input_files([str(files["recs_popularity"]),
                                                                  str(files["recs_personalised"])])
    settle(page)
    uploaders.nth(1).locator("input[type=file]").set_input_files(str(files["ground_truth"]))
    settle(page)
    # the mapping is pre-filled from the column names; set the relevance threshold to 4
    threshold = page.get_by_label("Relevant when the grade is at least")
    threshold.fill("4")
    threshold.press("Enter")
    settle(page)
    shot(page, "1_data_mapping")
    page.get_by_role("button", name="Check and evaluate these files").click()
    settle(page)
    assert page.get_by_text("Loaded 2 model(s)").count() == 1
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
    assert page.get_by_text("recs_personalised beats recs_popularity on ndcg@10").count() == 1
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
    uploaders = page.locator('[data-testid="stFileUploader"]')
    uploaders.nth(0).locator("input[type=file]").set_input_files(str(recs))
    settle(page)
    uploaders.nth(1).locator("input[type=file]").set_input_files(str(truth))
    settle(page)
    assert page.get_by_text("read with ';' between columns and a decimal comma").count() == 1
    page.get_by_role("button", name="Check and evaluate these files").click()
    settle(page)
    shot(page, "10_data_semicolon_and_padded_ids")
    assert page.locator('[data-testid="stException"]').count() == 0
    assert page.get_by_text("Likely cause: leading zeros", exact=False).count() == 1
