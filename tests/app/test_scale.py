"""Every page on a workspace of the size people bring (issue #43): 20,000 users x 4 models with
training interactions, item and user features, opened from its link; every page drawn, K
changed twice, no error, and no chart sending more than 5,000 rows to the browser (the pages
summarise per-user values on the server)."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from driving import start
from streamlit.testing.v1 import AppTest

from dashboard.summaries import MAX_CHART_ROWS
from metrics_core import Columns
from metrics_core.store import Store

USERS, ITEMS, LENGTH = 20_000, 2_000, 20
MODELS = ("popular", "knn", "svd", "random")
PAGES = ["views/overview.py", "views/users.py", "views/popularity.py", "views/scores.py", "views/cases.py",
         "views/compare.py", "views/history.py", "views/data.py"]


def _parquet(frame: pd.DataFrame) -> bytes:
    out = io.BytesIO()
    frame.to_parquet(out, index=False)
    return out.getvalue()


@pytest.fixture(scope="module")
def large_workspace(tmp_path_factory) -> str:
    rng = np.random.default_rng(0)
    home = tmp_path_factory.mktemp("large_store")
    store = Store(home)
    popularity = rng.zipf(1.3, USERS * LENGTH) % ITEMS
    users = np.repeat(np.arange(USERS), LENGTH)
    models = {}
    for i, name in enumerate(MODELS):
        items = (popularity[:USERS * LENGTH] + i * 7 + rng.integers(0, 50 * i + 1, USERS * LENGTH)) % ITEMS
        frame = pd.DataFrame({"user_id": users, "item_id": items, "score": rng.random(USERS * LENGTH)})
        frame = frame.drop_duplicates(["user_id", "item_id"])
        models[name] = store.put_table(f"{name}.parquet", _parquet(frame), "recommendations")
    truth = pd.DataFrame({"user_id": np.repeat(np.arange(USERS), 3), "item_id": rng.integers(0, ITEMS, USERS * 3),
                          "rating": rng.integers(1, 6, USERS * 3)}).drop_duplicates(["user_id", "item_id"])
    train = pd.DataFrame({"user_id": rng.integers(0, USERS, 200_000), "item_id": popularity[:200_000]})
    items = pd.DataFrame({"item_id": np.arange(ITEMS), "genre": rng.choice(["drama", "comedy", "news", "kids"], ITEMS),
                          "length": rng.random(ITEMS)})
    people = pd.DataFrame({"user_id": np.arange(USERS), "country": rng.choice(["fr", "de", "it"], USERS)})
    saved = store.save_workspace(
        "large", models, store.put_table("truth.parquet", _parquet(truth), "ground truth"),
        columns=Columns(relevance="rating", threshold=4),
        train=store.put_table("train.parquet", _parquet(train), "training interactions"),
        items=store.put_table("items.parquet", _parquet(items), "item features"),
        users=store.put_table("users.parquet", _parquet(people), "user features"), feature_columns=("genre",),
        user_count=USERS)
    return str(home), saved.id


def chart_rows(at: AppTest) -> list[int]:
    """The rows of every chart's data on the page (Arrow datasets and inline values)."""
    counts = []
    for chart in [*at.get("arrow_vega_lite_chart"), *at.get("vega_lite_chart")]:
        for dataset in chart.proto.datasets:
            counts.append(pa.ipc.open_stream(dataset.data.data).read_all().num_rows)
        inline = json.loads(chart.proto.spec or "{}").get("data", {})
        if isinstance(inline, dict) and "values" in inline:
            counts.append(len(inline["values"]))
    return counts


def test_every_page_at_20000_users_and_4_models_sends_summaries_not_users(large_workspace, monkeypatch):
    home, workspace_id = large_workspace
    monkeypatch.setenv("RANKSCOPE_HOME", home)
    from dashboard import state

    state._store.clear()
    at = start(ws=workspace_id)
    for k in (10, 5, 20):
        at.switch_page("views/overview.py").run()
        at.slider(key="k").set_value(k).run()
        for page in PAGES:
            at.switch_page(page).run()
            assert not at.exception, (page, [e.value for e in at.exception])
            assert not at.error, (page, [e.value for e in at.error])
            rows = chart_rows(at)
            assert all(n <= MAX_CHART_ROWS for n in rows), (page, k, rows)
    at.switch_page("views/users.py").run()
    assert chart_rows(at), "the Users page draws its charts"
