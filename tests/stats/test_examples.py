"""The report's best and worst cases: the users where the leader gains most and loses most over
the runner-up (one model: its highest and lowest values), ties broken by relevant items then user
order, checked against a slow sort over every user."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics_core import Settings
from metrics_core.result import Evaluation
from metrics_core.stats.examples import telling_users


def results(relevant: np.ndarray, **models: np.ndarray) -> dict[str, Evaluation]:
    """Evaluations with per-user ``ndcg`` and ``fall_out`` = the given values, every user evaluated."""
    out = {}
    for model, values in models.items():
        per_user = pd.DataFrame({"ndcg": values, "fall_out": values, "relevant": relevant, "evaluated": True},
                                index=pd.RangeIndex(len(values), name="user_id"))
        metrics = {"ndcg": float(np.mean(values)), "fall_out": float(np.mean(values))}
        out[model] = Evaluation(model, Settings(k=10), metrics, per_user, pd.DataFrame(), {"evaluated": len(values)})
    return out


def slow_picks(gain: list[float], relevant: list[int], n: int) -> tuple[list[int], list[int]]:
    users = range(len(gain))
    best = sorted((u for u in users if gain[u] > 0), key=lambda u: (-gain[u], -relevant[u], u))[:n]
    worst = sorted((u for u in users if gain[u] < 0), key=lambda u: (gain[u], -relevant[u], u))[:n]
    return best, worst


def test_two_models_show_where_the_leader_gains_and_loses_most():
    relevant = np.array([1, 5, 2, 3, 1, 4])
    found = telling_users(results(relevant, a=np.array([0.9, 0.5, 0.5, 0.1, 0.2, 0.6]),
                                  b=np.array([0.1, 0.1, 0.1, 0.1, 0.6, 0.7])), "ndcg", n=2)
    assert found.models == ("a", "b") and found.leader == "a" and found.runner_up == "b"
    assert found.best == (0, 1)  # +0.8, then +0.4 with 5 relevant items before user 2's +0.4 with 2
    assert found.worst == (4, 5)  # -0.4, -0.1; user 3 (no difference) is neither
    assert list(found.values.columns) == ["a", "b"] and list(found.values.index) == [0, 1, 4, 5]


def test_the_runner_up_is_the_second_best_mean():
    relevant = np.ones(4, dtype=int)
    found = telling_users(results(relevant, low=np.zeros(4), top=np.array([1.0, 1, 1, 0]),
                                  second=np.array([0.5, 0.5, 0.5, 0.5])), "ndcg", n=3)
    assert found.models == ("top", "second") and found.best == (0, 1, 2) and found.worst == (3,)


def test_a_leader_that_never_loses_has_no_worst_cases():
    found = telling_users(results(np.ones(3, dtype=int), a=np.array([0.5, 0.6, 0.7]), b=np.array([0.5, 0.5, 0.5])))
    assert found.best == (2, 1) and found.worst == ()


def test_where_lower_is_better_the_leader_gains_by_being_lower():
    found = telling_users(results(np.ones(3, dtype=int), a=np.array([0.1, 0.1, 0.9]), b=np.array([0.5, 0.5, 0.5])),
                          "fall_out", n=1)
    assert found.leader == "a" and found.best == (0,) and found.worst == (2,)


def test_one_model_shows_its_highest_and_lowest_users_once_each():
    found = telling_users(results(np.array([1, 3, 2]), only=np.array([0.5, 0.0, 0.0])), "ndcg", n=2)
    assert found.models == ("only",) and found.best == (0, 1) and found.worst == (2,)


def test_a_metric_without_a_better_direction_or_per_user_values_has_no_examples():
    two = results(np.ones(3, dtype=int), a=np.ones(3), b=np.zeros(3))
    assert telling_users(two, "arp") is None and telling_users(two, "coverage") is None


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4), st.integers(1, 3)), min_size=2, max_size=40),
       st.integers(1, 5))
def test_the_picks_equal_a_slow_sort_over_every_user(rows, n):
    a = np.array([r[0] for r in rows]) / 4
    b = np.array([r[1] for r in rows]) / 4
    relevant = np.array([r[2] for r in rows])
    found = telling_users(results(relevant, a=a, b=b), "ndcg", n)
    if found is None:  # equal means: the verdict names no leader only when there are fewer than two users
        raise AssertionError("two models with two users always have a leader")
    leader = found.leader
    gain = (a - b if leader == "a" else b - a).tolist()
    assert (list(found.best), list(found.worst)) == slow_picks(gain, relevant.tolist(), n)


def test_the_report_names_items_by_a_title_or_else_the_first_text_column():
    """An item table without a title column names items by its first text column (pandas 3 reads
    text as its own string type, not object), and by id when it has none."""
    from types import SimpleNamespace

    from metrics_core.report.cases import _item_column

    def of(table):
        return _item_column(SimpleNamespace(item_table=table, columns=SimpleNamespace(item="item_id")))

    assert of(pd.DataFrame({"item_id": ["a"], "year": [1999], "name": pd.Series(["A"], dtype="string")})) == "name"
    assert of(pd.DataFrame({"item_id": ["a"], "name": ["A"], "title": ["T"]})) == "title"
    assert of(pd.DataFrame({"item_id": [1], "year": [1999]})) is None and of(None) is None
