"""Helpers of the browser tests: a real ``streamlit run`` server on the app, and waiting for
and reading its pages in Playwright (the system Chromium)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(home: Path, port: int | None = None, session_ttl: int | None = 2,
                 **env: str) -> tuple[subprocess.Popen, str]:
    """``streamlit run`` on the app, as ``make run`` starts it (``python -m dashboard.serve``), with
    its run store at ``home``; returns the process and URL.
    ``session_ttl``: seconds a disconnected session is kept (None: the app's configured default,
    as ``make run`` has it)."""
    port = port or free_port()
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "RANKSCOPE_HOME": str(home), "MALLOC_ARENA_MAX": "2",
                   **env}  # as make run starts it
    ttl = ["--server.disconnectedSessionTTL", str(session_ttl)] if session_ttl is not None else []
    process = subprocess.Popen(
        [sys.executable, "-m", "dashboard.serve", "--server.port", str(port),
         "--server.headless", "true", "--server.address", "127.0.0.1", *ttl],
        cwd=ROOT, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    wait_until_serving(url, process)
    return process, url


def wait_until_serving(url: str, process: subprocess.Popen, tries: int = 120) -> None:
    """Wait for the server's health check (half a second between tries); kill it and fail the
    test when it never answers."""
    for _ in range(tries):
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=1).read() == b"ok":
                return
        except OSError:
            time.sleep(0.5)
    process.kill()
    pytest.fail(f"the app at {url} did not start")


def summary_in_chromium(url: str, timeout_ms: int = 60_000) -> int:
    """Open ``url`` in the system Chromium, wait for the Summary's verdict on NDCG@10 and check
    that no exception is shown; return how many Deploy buttons the toolbar has."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        page.goto(url)
        settle(page)
        page.get_by_text("is best on NDCG@10").first.wait_for(timeout=timeout_ms)
        assert page.locator('[data-testid="stException"]').count() == 0
        deploy = page.locator('[data-testid="stToolbarActions"] >> text=Deploy').count()
        browser.close()
    return deploy


def stop_server(process: subprocess.Popen) -> None:
    process.terminate()
    process.wait(10)


def settle(page, quiet: float = 1.5) -> None:
    """Wait until the script has finished running and has stayed finished for ``quiet``
    seconds, so the page has drawn: a run can start another (a page that sets its query
    parameters reruns), and on a loaded machine the second can start well after the first ends."""
    page.wait_for_selector('[data-testid="stApp"]', timeout=60_000)
    page.wait_for_timeout(500)
    deadline, finished_at = time.time() + 90, None
    while time.time() < deadline:
        if page.get_attribute('[data-testid="stApp"]', "data-test-script-state") != "notRunning":
            finished_at = None
        elif finished_at is None:
            finished_at = time.time()
        elif time.time() - finished_at >= quiet:
            return
        page.wait_for_timeout(200)


def views(pages: list[str]) -> list[tuple[str, str | None]]:
    """(page title, Compare tab or None) of every view a browser test opens: each page, and each
    of the Compare page's tabs (only the open one is drawn)."""
    from dashboard.state import COMPARE_TABS

    return [(title, tab) for title in pages for tab in (COMPARE_TABS if title == "Compare" else [None])]


def open_view(page, title: str, tab: str | None) -> None:
    """Open page ``title`` from the sidebar (when it is not open: another of Compare's tabs),
    then its ``tab``, and wait until it has drawn."""
    from dashboard.state import COMPARE_TABS

    if tab in (None, COMPARE_TABS[0]):
        page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name=title).click()
    if tab is not None:
        page.get_by_role("tab", name=tab).click()
    settle(page)


def view_name(prefix: str, title: str, tab: str | None) -> str:
    """A screenshot's name for a view: ``prefix_page`` and, for Compare's tabs, the tab's number."""
    from dashboard.state import COMPARE_TABS

    return f"{prefix}_{title.split()[0].lower()}" + (f"_{COMPARE_TABS.index(tab)}" if tab else "")


def click_and_wait(page, button: str, text: str, timeout_ms: int = 180_000) -> None:
    """Click the button named ``button`` and wait until ``text`` shows, then settle: on a loaded
    machine the click's rerun can start after ``settle`` alone has seen a quiet page and returned."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.get_by_role("button", name=button).click()
    try:
        page.get_by_text(text).first.wait_for(timeout=timeout_ms)
    except PlaywrightTimeout:
        shot(page, f"failed_{button.replace(' ', '_').replace(',', '')}")
        shown = page.locator('[data-testid="stMain"]').inner_text()[:3000]
        pytest.fail(f"after clicking {button!r}, {text!r} never showed; the page shows:\n{shown}")
    settle(page)


def shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def cards(page) -> dict[str, str]:
    out = {}
    for metric in page.locator('[data-testid="stMetric"]').all():
        name = metric.locator('[data-testid="stMetricLabel"]').inner_text().strip()
        out[name] = metric.locator('[data-testid="stMetricValue"]').inner_text().strip()
    return out


def upload_files(page, recs: list[Path], truth: Path) -> None:
    """The Data page's uploaders of recommendations and ground truth, on the demo workspace (a
    saved workspace adds an uploader above them)."""
    section = page.locator('[data-testid="stFileUploader"]')
    section.nth(0).locator("input[type=file]").set_input_files([str(p) for p in recs])
    settle(page)
    section.nth(1).locator("input[type=file]").set_input_files(str(truth))
    settle(page)
