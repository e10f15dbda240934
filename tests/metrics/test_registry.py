"""Properties every metric of the registry must have, checked over the registry itself: a
metric added there is tested here without a new test."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metrics_core import Columns, Dataset, InputError, Settings
from metrics_core.metrics.registry import AGGREGATES, METRICS, REGISTRY, smooth_of_means
from metrics_core.stats.compare import compare


def dataset(seed: int, n_users: int = 25, n_items: int = 30) -> Dataset:
    """Lists of uneven length with scores, graded truth, training data, item features and genres."""
    rng = np.random.default_rng(seed)
    recs, truth, train = [], [], []
    for user in range(n_users):
        items = rng.choice(n_items, size=int(rng.integers(1, 9)), replace=False)
        recs += [(user, int(item), float(score)) for item, score in zip(items, rng.random(len(items)), strict=True)]
        truth += [(user, int(item), int(rng.integers(0, 4))) for item in rng.choice(n_items, int(rng.integers(0, 5)),
                                                                                     replace=False)]
        train += [(user, int(item)) for item in rng.choice(n_items, int(rng.integers(1, 6)), replace=False)]
    items = pd.DataFrame({"item_id": range(n_items), "f1": rng.random(n_items), "f2": rng.random(n_items),
                          "genre": rng.choice(["drama", "comedy", "drama|war"], n_items)})
    models = {name: pd.DataFrame(recs, columns=["user_id", "item_id", "score"]).sample(frac=1, random_state=i)
              .assign(score=lambda f, i=i: f["score"] + i * 0.01) for i, name in enumerate(("A", "B"))}
    return Dataset.build(models, pd.DataFrame(truth, columns=["user_id", "item_id", "grade"]),
                         train=pd.DataFrame(train, columns=["user_id", "item_id"]), items=items,
                         columns=Columns(relevance="grade", threshold=1))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), k=st.integers(1, 12), fbeta=st.sampled_from(["per_user", "of_means"]))
def test_every_registered_metric_is_computed_bounded_and_the_mean_of_its_per_user_column(seed, k, fbeta):
    result = dataset(seed).evaluate("A", Settings(k=k, fbeta=fbeta))
    assert set(result.metrics) | set(result.skipped) == set(METRICS)  # each one computed or skipped with a reason
    assert set(result.metrics) <= set(METRICS)
    for name, value in result.metrics.items():
        metric = METRICS[name]
        low, high = metric.bounds
        assert low is None or value >= low - 1e-12, (name, value)
        assert high is None or value <= high + 1e-12, (name, value)
        if metric.of is not None:  # a summary of another metric's per-user values
            source = result.per_user.loc[result.per_user["evaluated"], METRICS[metric.of].per_user]
            assert value == pytest.approx(AGGREGATES[metric.aggregate](source.to_numpy()), rel=1e-12), name
        column = metric.per_user
        if column is None or (name == "fbeta" and fbeta == "of_means"):
            continue
        values = result.per_user[column]
        if metric.family == "accuracy":
            values = values[result.per_user["evaluated"]]
        assert value == pytest.approx(values.dropna().mean(), abs=1e-12), name
    for name in (m.name for m in REGISTRY if m.curve and m.name in result.metrics):
        assert result.curves.loc[k, name] == pytest.approx(result.metrics[name], abs=1e-12), name


def test_each_metric_with_an_interval_can_be_compared_and_the_others_are_refused():
    results = dataset(3).evaluate_all(Settings(k=5))
    for metric in REGISTRY:
        if metric.interval and (metric.per_user or metric.name in smooth_of_means()):
            comparison = compare(results, "A", [metric.name], resamples=50)
            assert len(comparison.intervals) == 2, metric.name
        else:
            with pytest.raises(InputError, match="cannot be compared"):
                compare(results, "A", [metric.name], resamples=50)


def test_registry_entries_are_consistent():
    columns = [m.per_user for m in REGISTRY if m.per_user]
    assert len(columns) == len(set(columns)), "one per-user column per metric"
    for metric in REGISTRY:
        assert metric.label and metric.formula, metric.name
        assert metric.family in ("accuracy", "beyond", "catalog")
        assert not (metric.family == "catalog" and metric.interval), f"{metric.name}: catalog metrics have no interval"
        assert not metric.curve or metric.family == "accuracy", metric.name
        assert not (metric.whole_list and metric.curve), f"{metric.name}: a whole-list metric has no curve over k"


def test_models_evaluated_together_on_threads_equal_each_evaluated_alone():
    """``evaluate_all`` runs the models on threads: the same numbers, per-user rows and curves,
    and the models in their order."""
    data = dataset(5)
    together = data.evaluate_all(Settings(k=4))
    assert list(together) == data.models
    for name in data.models:
        alone = dataset(5).evaluate(name, Settings(k=4))
        assert together[name].metrics == pytest.approx(alone.metrics, nan_ok=True)
        pd.testing.assert_frame_equal(together[name].per_user, alone.per_user)
        pd.testing.assert_frame_equal(together[name].curves, alone.curves)


def test_the_docs_metric_tables_are_the_registry_s():
    """docs/metrics.md's tables are generated from the registry: a metric added or changed there
    appears in the docs (run ``python -m metrics_core.metrics.docs``), or this fails."""
    from metrics_core.metrics import docs

    text = docs.PAGE.read_text(encoding="utf-8")
    assert docs.rewritten(text) == text, "run: python -m metrics_core.metrics.docs"
    for metric in REGISTRY:
        assert f"| `{metric.name}` |" in text
