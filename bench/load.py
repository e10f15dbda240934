"""The app under load: N browser sessions at once, each opening a link to the demo workspace's
Overview and switching through Users, Compare and History, as a team opening a shared link does.

Usage: python bench/load.py [--sessions 1 5 20] [--port 8600]
Starts ``streamlit run`` with ``make run``'s settings (a fresh store in a temporary folder) and
the system Chromium (headless; on the same machine, so the browsers' drawing competes with the
server for the cores), then for each N: pages per second over the whole round, the server's CPU
seconds per page, the
slowest page (from the click to the page's content drawn and its script finished), whether
any page showed nothing but an empty frame while it waited, and the server's resident memory
at the end of the round. Prints one JSON line per N.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
PAGES = [("Overview", '[data-testid="stMetric"]'), ("Users", '[data-testid="stVegaLiteChart"]'),
         ("Compare", '[data-testid="stDataFrame"]'), ("History", 'h1:has-text("History")')]
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]


def cpu_seconds(pid: int) -> float:
    """The process's user + system CPU time so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def start_server(port: int, home: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RANKSCOPE_HOME": str(home), "MALLOC_ARENA_MAX": "2"}
    process = subprocess.Popen([sys.executable, "-m", "dashboard.serve", "--server.port", str(port),
                                "--server.address", "127.0.0.1"], cwd=ROOT, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(240):
        try:
            if urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1).read() == b"ok":
                return process
        except OSError:
            time.sleep(0.5)
    process.kill()
    raise SystemExit("streamlit did not start")


async def finished(page, selector: str, timeout: float = 240.0) -> float:
    """Wait for ``selector`` and for the script to stay finished for a second; return the longest
    time the page showed nothing at all (no element: no caption, spinner or content) meanwhile."""
    deadline, quiet_since, empty_since, longest_empty = time.monotonic() + timeout, None, None, 0.0
    while time.monotonic() < deadline:
        state = await page.get_attribute('[data-testid="stApp"]', "data-test-script-state")
        drawn = await page.locator(selector).count() > 0
        shown = await page.locator('[data-testid="stMain"] [data-testid="stElementContainer"]').count()
        now = time.monotonic()
        empty_since = (empty_since or now) if shown == 0 else None
        longest_empty = max(longest_empty, now - empty_since if empty_since else 0.0)
        if drawn and state == "notRunning":
            quiet_since = quiet_since or now
            if now - quiet_since >= 1.0:
                return longest_empty
        else:
            quiet_since = None
        await page.wait_for_timeout(150)
    raise TimeoutError(f"{selector} not drawn within {timeout:.0f} s")


async def session(browser, url: str, times: list[float], empties: list[float]) -> None:
    """Open the demo (a link's first visit), then switch pages with the sidebar, as a reader does."""
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    page.set_default_timeout(240_000)
    for title, selector in PAGES:
        started = time.monotonic()
        if title == "Overview":
            await page.goto(f"{url}/overview", wait_until="commit")  # (a link to it: the app opens on the Summary)
            await page.wait_for_selector('[data-testid="stApp"]')
        else:
            await page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name=title).click()
            await page.wait_for_timeout(300)  # (the new page's script starts)
        empties.append(await finished(page, selector))
        times.append(time.monotonic() - started)
    await context.close()


async def round_of(count: int, url: str, pid: int) -> dict:
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        times: list[float] = []
        empties: list[float] = []
        started, cpu = time.monotonic(), cpu_seconds(pid)
        await asyncio.gather(*(session(browser, url, times, empties) for _ in range(count)))
        elapsed, cpu = time.monotonic() - started, cpu_seconds(pid) - cpu
        await browser.close()
    return {"sessions": count, "pages": len(times), "seconds": round(elapsed, 1),
            "server_cpu_s_per_page": round(cpu / len(times), 2),
            "pages_per_second": round(len(times) / elapsed, 2), "slowest_page_s": round(max(times), 1),
            "median_page_s": round(sorted(times)[len(times) // 2], 1),
            "longest_empty_page_s": round(max(empties), 1),
            "pages_empty_over_2s": sum(empty > 2 for empty in empties), "server_rss_mib": round(rss_mib(pid))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, nargs="+", default=[1, 5, 20])
    parser.add_argument("--port", type=int, default=8600)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="rankscope-load-"))
    server = start_server(args.port, home)
    try:
        print(json.dumps({"server_rss_mib_idle": round(rss_mib(server.pid)), "cores": os.cpu_count()}), flush=True)
        for count in args.sessions:
            print(json.dumps(asyncio.run(round_of(count, f"http://127.0.0.1:{args.port}", server.pid))), flush=True)
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()
