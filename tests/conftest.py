"""Shared fixtures: small frames, and the internal MovieLens data when ../shared is present."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "datasets"
MOVIELENS_RECS = SHARED / "movielens-100k-recs-peruser"


def frame(rows, columns=("user_id", "item_id", "rank")) -> pd.DataFrame:
    return pd.DataFrame(list(rows), columns=list(columns))


@pytest.fixture
def three_users():
    """The three-user reference example of docs/metrics.md: K = 3, an 8-item catalog."""
    recs = frame([(u, i, r + 1) for u, items in {0: [30, 60, 50], 1: [40, 60, 70], 2: [40, 70, 0]}.items()
                  for r, i in enumerate(items)])
    truth = frame([(0, 60), (1, 40), (2, 0), (2, 20), (2, 70)], ("user_id", "item_id"))
    train = frame([(0, i) for i in (0, 10, 40, 70)] + [(1, i) for i in (10, 20, 30)]
                  + [(2, i) for i in (30, 50, 60)], ("user_id", "item_id"))
    return recs, truth, train


@pytest.fixture
def movielens():
    if not MOVIELENS_RECS.is_dir():
        pytest.skip("internal MovieLens data (../shared/datasets) is not available")
    return MOVIELENS_RECS


@pytest.fixture(autouse=True)
def _own_store(tmp_path_factory, monkeypatch):
    """Every test gets a fresh run store (RANKSCOPE_HOME), never the repository's .rankscope."""
    monkeypatch.setenv("RANKSCOPE_HOME", str(tmp_path_factory.mktemp("store")))


@pytest.fixture(scope="module")
def browser():
    """Headless system Chromium for the browser tests (tests/app/browsing.py has the helpers)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                  "--no-first-run", "--disable-sync", "--disable-quic"])
        yield instance
        instance.close()
