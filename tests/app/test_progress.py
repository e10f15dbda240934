"""Long work shown in words (dashboard/progress.py): run once per key whichever sessions ask,
its current step readable while it runs, its errors raised to every asker, its value cached."""

from __future__ import annotations

import re
import threading

import pytest

from dashboard import progress
from dashboard.cache import BoundedCache
from metrics_core.errors import input_error


def cache() -> BoundedCache:
    return BoundedCache(1 << 30, ttl=600)


def test_two_sessions_asking_for_the_same_work_share_one_run_and_see_its_steps():
    store, release, said = cache(), threading.Event(), threading.Event()
    calls = []

    def work(say):
        calls.append(1)
        say("Ordering the lists of 'b' (2 of 4)…")
        said.set()
        release.wait(10)
        return "value"

    answers = []
    askers = [threading.Thread(target=lambda: answers.append(progress.cached(store, "k", "Reading…", work)))
              for _ in range(2)]
    askers[0].start()
    assert said.wait(10)
    askers[1].start()
    assert progress._RUNNING["k"].words == "Ordering the lists of 'b' (2 of 4)…"
    release.set()
    for asker in askers:
        asker.join(10)
    assert answers == ["value", "value"] and calls == [1]
    assert "k" not in progress._RUNNING and "k" in store
    assert progress.cached(store, "k", "Reading…", lambda say: pytest.fail("computed again")) == "value"


def test_an_error_reaches_the_asker_and_the_next_ask_runs_the_work_again():
    store, calls = cache(), []

    def failing(say):
        calls.append(1)
        raise input_error("recommendations", "no rows.", "upload a file with rows.")

    for _ in range(2):
        with pytest.raises(Exception, match="no rows"):
            progress.cached(store, "bad", "Reading…", failing)
    assert calls == [1, 1] and "bad" not in progress._RUNNING and "bad" not in store


def test_the_library_says_each_step_of_reading_and_evaluating(tmp_path):
    """The words the app shows come from the library's own steps, in order, naming the models."""
    import pandas as pd

    from metrics_core import Dataset

    recs = {name: pd.DataFrame({"user_id": [1, 1, 2], "item_id": [1, 2, 1], "rank": [1, 2, 1]}) for name in "ab"}
    truth = pd.DataFrame({"user_id": [1, 2], "item_id": [2, 1]})
    train = pd.DataFrame({"user_id": [1, 2], "item_id": [3, 3]})
    steps = []
    data = Dataset.build(recs, truth, train=train, progress=steps.append)
    data.evaluate_all(progress=steps.append)
    assert steps[0].startswith("Reading and checking recommendations 'a' (1 of 2)")
    assert any(step.startswith("Ordering the lists of 'b' (2 of 2)") for step in steps)
    assert "Reading training interactions…" in steps
    assert steps[-2].startswith("Evaluating 2 models at K = 10: every metric, per user, at every k")
    assert re.fullmatch(r"Evaluating 2 models at K = 10: 1 of 2 done \(last: '[ab]'\)…", steps[-1])
