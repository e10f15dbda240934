"""The HTML report renders offline: headless Chromium with the network cut off draws every
chart, and the file loads no script or style from an http(s) address."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dashboard.workspace import demo_workspace
from metrics_core import Settings
from metrics_core.report.cases import case_study
from metrics_core.report.document import numbers, report_html
from metrics_core.stats.compare import compare
from metrics_core.stats.segments import ACTIVITY, user_segments
from metrics_core.stats.served import gap_sentences, items_by_model

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    dataset = demo_workspace().build()
    results = dataset.evaluate_all(Settings(k=10))
    comparison = compare(results, "popularity", ["ndcg", "recall"], resamples=100)
    path = tmp_path_factory.mktemp("report") / "report.html"
    prints = {"ground truth": "truth.csv · abc", "training interactions": "train.csv · def"}
    path.write_text(report_html(results, comparison, fingerprints=prints, workspace="Films <demo>",
                                cases=case_study(dataset, results),
                                served=items_by_model(dataset, list(results), Settings(k=10)),
                                gaps=gap_sentences(results, "ndcg", user_segments(dataset, ACTIVITY))),
                    encoding="utf-8")
    return path, results, comparison


def test_no_remote_scripts_or_styles(report):
    text = report[0].read_text(encoding="utf-8")
    assert not re.search(r"<script[^>]+src=[\"']?https?:", text, re.I)
    assert not re.search(r"<link[^>]+href=[\"']?https?:", text, re.I)
    assert not re.search(r"@import\s+url\(\s*[\"']?https?:", text, re.I)
    assert "personalised beats popularity on ndcg@10" in text


def test_the_report_reads_verdict_first_and_settings_last(report):
    """A stakeholder reads which model wins first, then the headline metrics, the charts and the
    comparison; every metric by its name (one row each), the notes, and last the input files and
    the settings (issue #44). The title names the workspace (as text) and the date."""
    text = report[0].read_text(encoding="utf-8")
    order = ["Which model wins", "Headline metrics", "Charts", "Against the baseline", "Best and worst cases",
             "Who is served: user groups", "Who is served: popular", "Every metric", "Input files", "Settings"]
    places = [text.index(f"<h2>{heading}") for heading in order]
    assert places == sorted(places), dict(zip(order, places, strict=True))
    assert "<h1>Films &lt;demo&gt; · rankscope report</h1>" in text and "<title>Films &lt;demo&gt;" in text
    assert "personalised is best on NDCG@10: +0.0153 over diverse" in text
    assert "11-point average precision@10" in text and "iprec_at_recall" not in text.split("<h2>Settings")[0]
    assert "train.csv · def" in text and " ± " in text
    groups = text.split("<h2>Who is served: user groups")[1].split("<h2>")[0]
    assert "higher for" in groups and "least active" in groups and groups.count("<li>") == 3
    served = text.split("<h2>Who is served: popular")[1].split("<h2>")[0]
    assert all(group in served for group in ("head", "mid", "tail")) and "%" in served


def test_the_cases_show_the_leader_and_the_runner_up_by_title_with_hits_marked(report):
    """Three users where the leader gains most over the runner-up and three where it loses most,
    each with both top-10 lists by title side by side (relevant items marked) and what each missed."""
    path, results, _ = report
    section = path.read_text(encoding="utf-8").split("<h2>Best and worst cases</h2>")[1].split("<h2>")[0]
    assert "Where personalised gains most over diverse on NDCG@10" in section
    assert section.count("<div class='case'>") == 6 and section.index("Best cases") < section.index("Worst cases")
    assert "<th>personalised</th><th>diverse</th>" in section and "<span class='hit'>The " in section
    first = section.split("<b>User ")[1].split("<")[0]
    values = [results[model].per_user.loc[int(first), "ndcg"] for model in ("personalised", "diverse")]
    assert f"personalised {values[0]:.4f}, diverse {values[1]:.4f}" in section and values[0] > values[1]


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
        # (NDCG at every k, the two compared metrics; miscalibration, exposure disparity and expected
        # exposure loss by model)
        assert page.locator(".chart svg").count() == page.locator(".chart").count() == 6
        assert "Miscalibration@10 by model" in page.content() and "Exposure disparity@10 by model" in page.content()
        assert "EE-L@10 by model" in page.content()
        page.emulate_media(media="print")  # printed to A4 portrait (595 pt, 8 pt margins): nothing sticks out
        page.set_viewport_size({"width": 780, "height": 1100})
        assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
        pdf = page.pdf(format="A4", print_background=True)
        assert pdf.startswith(b"%PDF") and pdf.count(b"/Type /Page") >= 2
        (ARTIFACTS / "report.pdf").write_bytes(pdf)
        assert page.locator(".chart svg path, .chart svg line").count() > 10
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)
        browser.close()
    assert not errors
    assert all(url.startswith("file:") for url in requests), requests
