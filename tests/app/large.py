"""A workspace of the size people bring, for the scale tests (AppTest and browser)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd

from metrics_core import Columns, Dataset, Settings
from metrics_core.store import Store, save_run

USERS, ITEMS, LENGTH = 20_000, 2_000, 20
MODELS = ("popular", "knn", "svd", "random")


def _parquet(frame: pd.DataFrame) -> bytes:
    out = io.BytesIO()
    frame.to_parquet(out, index=False)
    return out.getvalue()


def save_large_workspace(home: Path, names: tuple[str, ...] = MODELS, users: int = USERS) -> str:
    """A saved workspace in the store at ``home``: ``users`` users (20,000 by default) x one model
    per name (4 by default) x top 20 (scores), a graded ground truth, 10 training rows per user,
    item features (a genre, a number) and user features (a country). Returns its id."""
    rng = np.random.default_rng(0)
    store = Store(home)
    cells, train_rows = users * LENGTH, users * 10
    popularity = rng.zipf(1.3, cells) % ITEMS
    user_of_cell = np.repeat(np.arange(users), LENGTH)
    models = {}
    for i, name in enumerate(names):
        items = (popularity + i * 7 + rng.integers(0, 50 * i + 1, cells)) % ITEMS
        frame = pd.DataFrame({"user_id": user_of_cell, "item_id": items, "score": rng.random(cells)})
        frame = frame.drop_duplicates(["user_id", "item_id"])
        models[name] = store.put_table(f"{name}.parquet", _parquet(frame), "recommendations")
    truth = pd.DataFrame({"user_id": np.repeat(np.arange(users), 3), "item_id": rng.integers(0, ITEMS, users * 3),
                          "rating": rng.integers(1, 6, users * 3)}).drop_duplicates(["user_id", "item_id"])
    train = pd.DataFrame({"user_id": rng.integers(0, users, train_rows), "item_id": popularity[:train_rows]})
    items = pd.DataFrame({"item_id": np.arange(ITEMS), "genre": rng.choice(["drama", "comedy", "news", "kids"], ITEMS),
                          "length": rng.random(ITEMS)})
    people = pd.DataFrame({"user_id": np.arange(users), "country": rng.choice(["fr", "de", "it"], users)})
    saved = store.save_workspace(
        "large", models, store.put_table("truth.parquet", _parquet(truth), "ground truth"),
        columns=Columns(relevance="rating", threshold=4),
        train=store.put_table("train.parquet", _parquet(train), "training interactions"),
        items=store.put_table("items.parquet", _parquet(items), "item features"),
        users=store.put_table("users.parquet", _parquet(people), "user features"), feature_columns=("genre",),
        user_count=users)
    return saved.id




def record_runs(home: Path, workspace_id: str, count: int = 2) -> None:
    """``count`` runs of the saved workspace at K = 10 (made alike: the History page compares the
    newest two by default), as `rankscope evaluate --save` records one each night."""
    store = Store(home)
    saved = store.workspace(workspace_id)
    results = Dataset.from_recipe(saved).evaluate_all(Settings(k=10), curves=False)
    for night in range(count):
        save_run(store, saved, results, note=f"night {night + 1}")
