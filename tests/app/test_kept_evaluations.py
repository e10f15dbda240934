"""A saved workspace opened again (a restarted server: an empty cache) shows its Summary from the
evaluation kept in the store, without evaluating, and reads its tables meanwhile for the pages
that need them; the numbers are those of a fresh evaluation (issue #43)."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
from driving import assert_clean, start

from dashboard.workspace import Workspace
from metrics_core import Columns, Dataset
from metrics_core.metrics import scores
from metrics_core.metrics.scores import SCORE_BINS
from metrics_core.store import Store


def saved_workspace(home) -> str:
    rng = np.random.default_rng(3)
    store = Store(home)
    users = np.repeat(np.arange(300), 8)
    models = {name: store.put_table(f"{name}.csv", pd.DataFrame({
        "user_id": users, "item_id": rng.integers(0, 60, len(users)), "score": rng.random(len(users))})
        .drop_duplicates(["user_id", "item_id"]).to_csv(index=False).encode(), "recommendations") for name in "ab"}
    truth = pd.DataFrame({"user_id": np.repeat(np.arange(300), 3), "item_id": rng.integers(0, 60, 900),
                          "rating": rng.integers(1, 6, 900)}).drop_duplicates(["user_id", "item_id"])
    saved = store.save_workspace("kept", models, store.put_table("truth.csv", truth.to_csv(index=False).encode(),
                                                                 "ground truth"),
                                 columns=Columns(relevance="rating", threshold=4))
    return saved.id


def test_a_saved_workspace_reopens_from_its_kept_evaluation(tmp_path, monkeypatch):
    monkeypatch.setenv("RANKSCOPE_HOME", str(tmp_path))
    from dashboard import state

    state._store.clear()
    state.CACHE.clear()
    workspace_id = saved_workspace(tmp_path)
    first = start(page=None, ws=workspace_id)
    assert_clean(first)
    deadline = time.monotonic() + 30
    while not list((tmp_path / "results").glob("*.json")) and time.monotonic() < deadline:
        time.sleep(0.1)  # (kept on a worker thread once evaluated)
    assert len(list((tmp_path / "results").glob("*.json"))) == 1
    summary = [m.value for m in first.markdown]

    state.CACHE.clear()  # a restarted server
    evaluated = []
    evaluate_all = Dataset.evaluate_all
    monkeypatch.setattr(Dataset, "evaluate_all", lambda *args, **kwargs: evaluated.append(1) or
                        evaluate_all(*args, **kwargs))
    again = start(page=None, ws=workspace_id)
    assert_clean(again)
    assert evaluated == [] and [m.value for m in again.markdown] == summary
    assert again.dataframe[0].value.equals(first.dataframe[0].value)
    asked = []
    dataset = state.dataset
    monkeypatch.setattr(state, "dataset", lambda: asked.append(1) or dataset())
    for page in ("views/overview.py", "views/summary.py", "views/overview.py"):  # (neither needs the tables)
        again.switch_page(page).run()
        assert_clean(again)
    assert asked == []
    reads = []
    build = Workspace.build
    monkeypatch.setattr(Workspace, "build", lambda *args, **kwargs: reads.append(1) or build(*args, **kwargs))
    state.CACHE.clear()
    again.switch_page("views/overview.py").run()  # (a restart with the Overview open)
    assert_clean(again)
    time.sleep(0.5)
    assert asked == [] and reads == [1]  # (read on a worker thread, started after the kept evaluation was read)
    again.switch_page("views/popularity.py").run()  # (needs the tables: read meanwhile, or now)
    assert_clean(again)
    again.switch_page("views/overview.py").run()
    assert_clean(again)
    assert evaluated == []


def test_a_reopened_workspace_maps_its_kept_encoded_tables_instead_of_reading_them(tmp_path, monkeypatch):
    """A large saved workspace (here any size) keeps its encoded dataset after its first open; a
    restarted server opening any page that needs the tables maps it: no table is read again, and
    the pages show what they showed."""
    monkeypatch.setenv("RANKSCOPE_HOME", str(tmp_path))
    from dashboard import state
    from metrics_core.inputs import encoded as lists_module
    from metrics_core.store import encoded

    monkeypatch.setattr(encoded, "KEEP_MIN_CELLS", 0)
    monkeypatch.setattr(lists_module, "HEAD_MIN", 0)  # (the copies of the first places, as at 1M users)
    monkeypatch.setattr(lists_module, "HEAD_PLACES", 3)
    state._store.clear()
    state.CACHE.clear()
    workspace_id = saved_workspace(tmp_path)
    first = start(page="views/popularity.py", ws=workspace_id)
    assert_clean(first)
    deadline = time.monotonic() + 30
    while not list((tmp_path / "encoded").glob("*/manifest.json")) and time.monotonic() < deadline:
        time.sleep(0.1)  # (kept on a worker thread once read)
    assert len(list((tmp_path / "encoded").glob("*/manifest.json"))) == 1
    shown = [m.value for m in first.markdown], [frame.value for frame in first.dataframe]
    held = next(value for key, value in state.CACHE._entries.items() if key.startswith("data:"))[0]
    while any("_head" in vars(lists) for lists in held.lists.values()) and time.monotonic() < deadline:
        time.sleep(0.05)  # (the copies of the first places are let go once kept: 1 GB at 1M users x 4 in memory)
    assert not any({"_head", "_score_head"} & set(vars(lists)) for lists in held.lists.values())

    state.CACHE.clear()  # a restarted server
    reads, counts = [], []
    build = Workspace.build
    monkeypatch.setattr(Workspace, "build", lambda *args, **kwargs: reads.append(1) or build(*args, **kwargs))
    count = scores.place_histograms
    monkeypatch.setattr(scores, "place_histograms", lambda *args, **kwargs: counts.append(1) or count(*args, **kwargs))
    again = start(page="views/popularity.py", ws=workspace_id)
    assert_clean(again)
    assert reads == []
    data = next(value for key, value in state.CACHE._entries.items() if key.startswith("data:"))[0]
    assert all((SCORE_BINS, None) in lists.__dict__["_score_places"] for lists in data.lists.values())
    assert all({"_head", "_score_head"} <= set(vars(lists)) for lists in data.lists.values())  # (kept, mapped)
    assert data.scores_to_count() == []  # (each model's scores counted before the dataset was kept, kept with it)
    assert [m.value for m in again.markdown] == shown[0]
    assert all(a.equals(b) for a, b in zip((frame.value for frame in again.dataframe), shown[1], strict=True))
    for page in ("views/users.py", "views/scores.py", "views/cases.py", "views/compare.py"):
        again.switch_page(page).run()
        assert_clean(again)
    assert reads == [] and counts == []
