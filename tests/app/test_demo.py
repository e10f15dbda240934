"""The demo workspace is what the project's own generator makes, and it tells a clear story."""

from __future__ import annotations

import pandas as pd
import pytest

from dashboard.demo import generate
from dashboard.workspace import DATA_DIR, demo_workspace
from metrics_core import Settings


def test_committed_demo_data_is_the_generator_output():
    tables = generate()
    for name, table in tables.items():
        stored = pd.read_csv(DATA_DIR / f"{name}.csv")
        pd.testing.assert_frame_equal(stored, table.reset_index(drop=True), check_dtype=False, rtol=1e-4)


def test_three_models_of_clearly_different_character():
    results = demo_workspace().build().evaluate_all(Settings(k=10))
    popularity, personalised, diverse = (results[m].metrics for m in ("popularity", "personalised", "diverse"))
    assert personalised["ndcg"] > diverse["ndcg"] > popularity["ndcg"]
    assert diverse["diversity"] > personalised["diversity"]
    assert popularity["coverage"] < 0.1 < diverse["coverage"]
    assert popularity["novelty"] < diverse["novelty"]
    assert popularity["personalization"] < personalised["personalization"]


@pytest.mark.parametrize("name", ["items", "users", "train", "ground_truth"])
def test_tables_have_what_the_app_shows(name):
    columns = {"items": {"item_id", "title", "genre", "year", "popularity"},
               "users": {"user_id", "age_group", "country"},
               "train": {"user_id", "item_id", "timestamp"}, "ground_truth": {"user_id", "item_id", "rating"}}
    assert columns[name] <= set(pd.read_csv(DATA_DIR / f"{name}.csv", nrows=5).columns)
