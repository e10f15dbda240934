"""Item and user bias, score distributions and recommendation cases."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import jensenshannon
from scipy.stats import ks_2samp

from metrics_core import Dataset, InputError


@pytest.fixture
def small():
    recs = pd.DataFrame({"user_id": [1, 1, 2, 2], "item_id": ["a", "b", "a", "c"], "rank": [1, 2, 1, 2],
                         "score": [0.9, 0.5, 0.8, 0.1]})
    truth = pd.DataFrame({"user_id": [1, 2, 2], "item_id": ["b", "d", "c"], "g": [2, 1, 3]})
    train = pd.DataFrame({"user_id": [1, 1, 2, 3, 3], "item_id": ["c", "d", "a", "a", "b"],
                          "timestamp": [10, 30, 20, 5, 6]})
    items = pd.DataFrame({"item_id": ["a", "b", "c", "d"], "genre": ["x", "y", "y", "y"],
                          "year": [1990, 2000, 2010, 2020], "title": ["A", "B", "C", "D"]})
    users = pd.DataFrame({"user_id": [1, 2, 3], "gender": ["F", "M", "M"], "age": [20, 30, 40]})
    from metrics_core import Columns

    return Dataset.build({"m": recs}, truth, train=train, items=items, users=users,
                         columns=Columns(relevance="g", threshold=1), feature_columns=["year"])


def test_item_bias_categorical_uses_jensen_shannon(small):
    report = small.item_bias("m", "genre", k=2)
    served = np.array([2, 2]) / 4  # a twice (x), b and c (y)
    catalog = np.array([1, 3]) / 4  # training items a, b, c, d once each
    assert report.kind == "categorical"
    assert report.statistic == pytest.approx(jensenshannon(served, catalog, base=2))
    shares = report.distribution.pivot(index="value", columns="group", values="share")
    assert shares.loc["x", "recommendations"] == pytest.approx(0.5)
    assert shares.loc["x", "catalog"] == pytest.approx(0.25)


def test_item_bias_numeric_uses_ks(small):
    report = small.item_bias("m", "year", k=2)
    expected = ks_2samp([1990, 2000, 1990, 2010], [1990, 2000, 2010, 2020])
    assert report.kind == "numeric" and report.divergence == "ks"
    assert report.statistic == pytest.approx(expected.statistic)
    assert report.p_value == pytest.approx(expected.pvalue)
    totals = report.distribution.groupby("group")["share"].sum()
    assert totals.to_dict() == pytest.approx({"recommendations": 1.0, "catalog": 1.0})


def test_user_bias(small):
    report = small.user_bias("gender")
    shares = report.distribution.pivot(index="value", columns="group", values="share")
    assert shares.loc["F", "evaluated users"] == pytest.approx(0.5)
    assert shares.loc["F", "training users"] == pytest.approx(1 / 3)
    with pytest.raises(InputError, match="no column 'height'"):
        small.user_bias("height")


def test_score_distribution(small):
    hist = small.score_distribution("m", k=1, bins=4)
    assert hist.query("part == 'top 1'")["count"].sum() == 2
    assert hist.query("part == 'rest'")["count"].sum() == 2


def test_cases_show_history_lists_and_misses(small):
    (case,) = small.cases([2], k=2, history=5, item_columns=["title"])
    assert list(case.history["item_id"]) == ["a"]
    assert list(case.recommendations["item_id"]) == ["a", "c"]
    assert list(case.recommendations["relevant"]) == [False, True]
    assert case.recommendations.loc[1, "grade"] == 3
    assert list(case.recommendations["title"]) == ["A", "C"]
    assert list(case.missed["item_id"]) == ["d"]
    (first,) = small.cases([1], k=2)
    assert list(first.history["item_id"]) == ["d", "c"]  # newest first, by timestamp


def test_cases_sample_is_reproducible(small):
    a = [c.user for c in small.cases(sample=1, seed=3)]
    b = [c.user for c in small.cases(sample=1, seed=3)]
    assert a == b


def test_cases_unknown_user(small):
    with pytest.raises(InputError, match="unknown user"):
        small.cases([99])
