"""The HTML report renders offline: headless Chromium with the network cut off draws every
chart, and the file loads no script or style from an http(s) address."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dashboard.workspace import demo_workspace
from metrics_core import Settings
from metrics_core.report.document import numbers, report_html
from metrics_core.stats.compare import compare

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    results = demo_workspace().build().evaluate_all(Settings(k=10))
    comparison = compare(results, "popularity", ["ndcg", "recall"], resamples=100)
    path = tmp_path_factory.mktemp("report") / "report.html"
    path.write_text(report_html(results, comparison, fingerprints={"ground truth": "abc"}), encoding="utf-8")
    return path, results, comparison


def test_no_remote_scripts_or_styles(report):
    text = report[0].read_text(encoding="utf-8")
    assert not re.search(r"<script[^>]+src=[\"']?https?:", text, re.I)
    assert not re.search(r"<link[^>]+href=[\"']?https?:", text, re.I)
    assert not re.search(r"@import\s+url\(\s*[\"']?https?:", text, re.I)
    assert "personalised beats popularity on ndcg@10" in text


def test_numbers_hold_every_metric(report):
    _, results, comparison = report
    data = numbers(results, comparison)
    assert data["models"]["diverse"]["metrics"]["ndcg"] == pytest.approx(results["diverse"].metrics["ndcg"])
    assert len(data["comparison"]["rows"]) == 4


@pytest.mark.browser
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="no system Chromium")
def test_charts_render_offline(report):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                             args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        context = browser.new_context(offline=True, viewport={"width": 1200, "height": 900})
        requests = []
        context.on("request", lambda r: requests.append(r.url))
        page = context.new_page()
        errors = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(report[0].as_uri())
        page.wait_for_selector("#chart0 svg", timeout=30_000)
        assert page.locator(".chart svg").count() == page.locator(".chart").count() == 3
        assert page.locator(".chart svg path, .chart svg line").count() > 10
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)
        browser.close()
    assert not errors
    assert all(url.startswith("file:") for url in requests), requests
