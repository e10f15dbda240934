"""Per-user values summarised on the server (issue #43): histogram counts add up to the users,
a metric taking few values gets one bar per value, empty and one-user inputs work, box numbers
equal numpy's quantiles, and no chart built from any number of users holds more than 5,000 rows."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dashboard import charts
from dashboard.summaries import DISCRETE_MAX, MAX_CHART_ROWS, bin_of, boxes, few_distinct, histogram, nice_edges, sample


def _frame(values_by_model: dict[str, list[float]]) -> pd.DataFrame:
    return pd.DataFrame([(m, v) for m, vs in values_by_model.items() for v in vs], columns=["model", "value"])


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.sampled_from(["a", "b", "c"]),
                       st.lists(st.one_of(st.floats(-1e6, 1e6), st.just(float("nan"))), max_size=300),
                       min_size=1))
def test_every_finite_value_is_counted_once_per_model(values_by_model):
    binned = histogram(_frame(values_by_model))
    for model, values in values_by_model.items():
        finite = int(np.isfinite(values).sum())
        part = binned[binned["model"] == model]
        assert part["users"].sum() == finite
        assert part["share"].sum() == pytest.approx(1.0 if finite else 0.0)
    assert len(binned) <= 3 * max(DISCRETE_MAX, 20)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6), min_size=2, max_size=200), st.integers(1, 40))
@example([0.0, 5e-324], 2)  # (a subnormal range: the step's logarithm was undefined, a crash)
@example([0.0, 1e-300], 40)
def test_a_value_falls_in_the_bin_a_binary_search_finds(numbers, bins):
    """The bins found by arithmetic are a binary search's, on values drawn at random and on every
    edge itself (where rounding would move a value to the next bin)."""
    numbers = np.array(numbers)
    if numbers.min() == numbers.max():
        return
    edges, _ = nice_edges(float(numbers.min()), float(numbers.max()), bins)
    for probe in (numbers, edges, np.nextafter(edges, np.inf), np.nextafter(edges, -np.inf)):
        expected = np.clip(np.searchsorted(edges, probe, side="right") - 1, 0, len(edges) - 2)
        assert bin_of(probe, edges).tolist() == expected.tolist()


def test_few_distinct_values_are_found_whatever_a_sample_sees():
    rare = np.zeros(1_000_000)
    rare[[3, 500_001]] = [0.5, 1.0]  # (values a spread sample misses: still their own bars)
    assert few_distinct(rare).tolist() == [0.0, 0.5, 1.0]
    many = np.repeat(np.arange(31.0), 10)
    assert few_distinct(many) is None and few_distinct(many[:300]).tolist() == list(range(30))


def test_a_metric_with_few_values_gets_one_bar_per_value():
    precision = [i / 10 for i in range(11)] * 50  # precision@10: 0, 0.1, ..., 1
    binned = histogram(_frame({"m": precision}))
    assert list(binned["bin"]) == ["0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "1"]
    assert (binned["users"] == 50).all() and (binned["from"] == binned["to"]).all()


def test_many_values_get_shared_bins_and_empty_or_single_inputs_work():
    rng = np.random.default_rng(0)
    binned = histogram(_frame({"a": list(rng.random(1000)), "b": list(rng.random(10) + 5)}))
    bars = len(binned) // 2  # (about BINS bars at a round step, each model every bar)
    assert 10 <= bars <= 30 and binned.groupby("model")["users"].sum().to_dict() == {"a": 1000, "b": 10}
    assert binned["bin"].iloc[0] == "0.00–0.25" and binned["from"].iloc[0] == 0  # (round edges, readable labels)
    assert histogram(_frame({"a": []})).empty
    one = histogram(_frame({"a": [0.25]}))
    assert list(one["bin"]) == ["0.25"] and one["users"].tolist() == [1]


def test_box_numbers_are_the_quartiles_and_tukey_whiskers():
    values = [*range(1, 101), 1000]
    box = boxes(_frame({"m": values}), ["model"]).iloc[0]
    q1, median, q3 = np.quantile(values, [0.25, 0.5, 0.75])
    assert (box["q1"], box["median"], box["q3"]) == (q1, median, q3)
    assert box.low == 1 and box.high == 100 and box.maximum == 1000 and box.users == 101


def test_a_sample_is_stated_and_stable():
    frame = pd.DataFrame({"x": range(20_000)})
    shown, total = sample(frame)
    again, _ = sample(frame)
    assert len(shown) == 5_000 and total == 20_000 and shown.equals(again)


@pytest.mark.parametrize("users", [10, 1_000_000])
def test_no_chart_of_any_number_of_users_holds_more_than_5000_rows(users):
    rng = np.random.default_rng(1)
    models = ["a", "b", "c", "d"]
    values = pd.DataFrame({"model": np.repeat(models, users), "value": rng.random(4 * users),
                           "segment": np.tile(["q1", "q2", "q3", "q4"], users)})
    pair = pd.DataFrame({"user": np.arange(users).astype(str), "a": rng.random(users), "b": rng.random(users)})
    built = [charts.distribution(values, "ndcg@10", models), charts.distribution(values, "ndcg@10", models, "segment"),
             charts.scatter(pair, "a", "b", "ndcg")]
    for chart in built:
        spec = json.loads(chart.to_json())  # (Altair refuses more than 5,000 rows here)
        assert all(len(rows) <= MAX_CHART_ROWS for rows in spec.get("datasets", {}).values())


def test_a_text_attribute_with_many_values_keeps_the_largest_and_sums_the_rest():
    frame = pd.DataFrame({"value": [f"v{i}" for i in range(300)] * 2, "group": ["a"] * 300 + ["b"] * 300,
                          "share": [1 / 300] * 600})
    spec = json.loads(charts.bias(frame, "genre", "t").to_json())
    rows = next(iter(spec["datasets"].values()))
    assert len(rows) == 2 * (charts.BIAS_VALUES + 1)
    assert sum(r["share"] for r in rows if r["group"] == "a") == pytest.approx(1.0)


@pytest.mark.parametrize("with_rows", [["a", "b", "c"], ["a", "c"], ["c", "a"]])
def test_coded_model_columns_give_the_bars_and_boxes_of_the_same_names_as_text(with_rows):
    """The pages build their values from :func:`model_column` codes (every model, or some without
    rows, in the page's order or not): the bars and boxes, model by model, are those of the same
    frame with the names as text; the boxes of several models are computed side by side."""
    from dashboard.summaries import model_column

    rng = np.random.default_rng(3)
    columns = {name: rng.normal(loc=index, size=200 + 50 * index) for index, name in enumerate(with_rows)}
    coded = pd.concat([pd.DataFrame({"model": model_column(name, ["a", "b", "c"], len(values)), "value": values})
                       for name, values in columns.items()], ignore_index=True)
    text = coded.assign(model=coded["model"].astype(str))
    order = [name for name in ["a", "b", "c"] if name in columns]  # (codes keep the page's order)
    by_name = {name: part.drop(columns="model").reset_index(drop=True)
               for name, part in histogram(text).groupby("model")}
    for name, part in histogram(coded).groupby("model", sort=False):
        pd.testing.assert_frame_equal(part.drop(columns="model").reset_index(drop=True), by_name[name])
    boxed = boxes(coded, ["model"])
    assert boxed["model"].tolist() == order
    for name, box in boxed.set_index("model").iterrows():
        q1, median, q3 = np.quantile(columns[name], [0.25, 0.5, 0.75])
        assert (box["q1"], box["median"], box["q3"], box["users"]) == (q1, median, q3, len(columns[name]))
    pd.testing.assert_frame_equal(boxed.set_index("model"), boxes(text, ["model"]).set_index("model").loc[order])
