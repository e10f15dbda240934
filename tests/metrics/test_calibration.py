"""Calibration (Steck 2018): the reference values, the definition by hand on random data, and
what it needs."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics_core import Columns, Dataset, Settings
from metrics_core.errors import InputError
from tests.compiled import compiled_loops

ITEMS = pd.DataFrame({"item_id": range(20), "title": [f"t{i}" for i in range(20)],
                      "genre": ["A"] * 10 + ["B"] * 5 + ["A|B"] * 3 + ["C"] * 2})


def one_user(history: list[int], listed: list[int], **options) -> float:
    recs = pd.DataFrame({"user_id": 1, "item_id": listed, "rank": range(1, len(listed) + 1)})
    truth = pd.DataFrame({"user_id": [1], "item_id": [listed[0]]})
    train = pd.DataFrame({"user_id": 1, "item_id": history})
    result = Dataset.build(recs, truth, train=train, items=ITEMS).evaluate(settings=Settings(k=10, **options))
    return result.metrics["calibration"]


def test_steck_s_example_history_70_30_and_a_list_of_one_category():
    history = [0, 1, 2, 3, 4, 5, 6, 10, 11, 12]  # 7 A, 3 B
    expected = 0.7 * math.log(0.7 / 0.997) + 0.3 * math.log(0.3 / 0.003)
    assert one_user(history, [0, 1, 2, 3]) == pytest.approx(expected, rel=1e-12)
    assert round(expected, 4) == 1.1340
    assert one_user(history, [0, 1, 2, 3, 4, 5, 6, 10, 11, 12]) == pytest.approx(0.0, abs=1e-15)  # a 70/30 list


def test_the_smoothing_and_multi_labels_and_repeats():
    history = [0, 1, 2, 3, 4, 5, 6, 10, 11, 12]
    expected = 0.7 * math.log(0.7 / (0.9 + 0.1 * 0.7)) + 0.3 * math.log(0.3 / (0.1 * 0.3))
    assert one_user(history, [0, 1], calibration_alpha=0.1) == pytest.approx(expected, rel=1e-12)
    assert one_user(history + history[:3], [0, 1]) == one_user(history, [0, 1])  # (distinct history items)
    # a list of two "A|B" items mixes A and B half and half, as a list of one A and one B does
    assert one_user(history, [15, 16]) == pytest.approx(one_user(history, [0, 10]), rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.lists(st.integers(0, 19), min_size=0, max_size=8),
                          st.lists(st.integers(0, 19), min_size=1, max_size=6, unique=True)), min_size=1, max_size=6),
       st.sampled_from([0.01, 0.2, 1.0]))
def test_equals_the_definition_by_hand(users, alpha):
    shares = {item: {g: 1 / len(genre.split("|")) for g in genre.split("|")}
              for item, genre in zip(ITEMS.item_id, ITEMS.genre, strict=True)}

    def mix(items):
        total = Counter()
        for item in set(items):
            total.update(shares[item])
        return {g: v / len(set(items)) for g, v in total.items()}

    expected = []
    for history, listed in users:
        if history:
            p, q = mix(history), mix(listed[:10])
            expected.append(sum(v * math.log(v / ((1 - alpha) * q.get(g, 0.0) + alpha * v)) for g, v in p.items()))
    recs = pd.DataFrame([(u, item, r + 1) for u, (_, listed) in enumerate(users) for r, item in enumerate(listed)],
                        columns=["user_id", "item_id", "rank"])
    train = pd.DataFrame([(u, item) for u, (history, _) in enumerate(users) for item in history] or [(99, 0)],
                         columns=["user_id", "item_id"])
    truth = recs.groupby("user_id").head(1)[["user_id", "item_id"]]
    result = Dataset.build(recs, truth, train=train, items=ITEMS).evaluate(
        settings=Settings(k=10, calibration_alpha=alpha))
    if expected:
        assert result.metrics["calibration"] == pytest.approx(np.mean(expected), rel=1e-9, abs=1e-12)
        assert (result.per_user["calibration"].dropna() >= -1e-12).all()
    else:
        assert "calibration" in result.skipped


def test_what_calibration_needs():
    recs = pd.DataFrame({"user_id": [1, 1], "item_id": [0, 10], "rank": [1, 2]})
    truth = pd.DataFrame({"user_id": [1], "item_id": [0]})
    train = pd.DataFrame({"user_id": [1, 1], "item_id": [1, 2]})
    without_items = Dataset.build(recs, truth, train=train).evaluate(settings=Settings(k=2))
    assert "item table" in without_items.skipped["calibration"]
    numbers_only = Dataset.build(recs, truth, train=train, items=ITEMS[["item_id"]].assign(year=1990))
    assert "category" in numbers_only.evaluate(settings=Settings(k=2)).skipped["calibration"]
    chosen = Dataset.build(recs, truth, train=train, items=ITEMS.assign(kind=["x", "y"] * 10))
    assert chosen.evaluate(settings=Settings(k=2, category_column="kind")).metrics["calibration"] > 0
    with pytest.raises(InputError, match="has no column 'nope'"):
        chosen.evaluate(settings=Settings(k=2, category_column="nope"))
    with pytest.raises(InputError, match="calibration_alpha"):
        Settings(calibration_alpha=0)
    assert Columns().item == "item_id"


@pytest.mark.parametrize("seed", range(4))
def test_few_and_many_categories_give_the_same_values(seed, monkeypatch):
    """The dense sum position by position (few categories) and the sparse products (many) agree."""
    import scipy.sparse as sp

    from metrics_core.metrics import calibration

    rng = np.random.default_rng(seed)
    n_items, n_users, k = 40, 30, 6
    shares = sp.csr_matrix(rng.random((n_items, 5)) * (rng.random((n_items, 5)) < 0.4))
    shares = sp.diags(1 / np.maximum(np.asarray(shares.sum(axis=1)).ravel(), 1e-300)) @ shares  # rows sum to 1 (or 0)
    shares = sp.csr_matrix(np.vstack([np.eye(5)[rng.integers(0, 5, 10)], shares.toarray()[10:]]))  # (ten: one category)
    top = np.array([np.concatenate([rng.choice(n_items, m, replace=False), -np.ones(k - m, dtype=int)])
                    for m in rng.integers(0, k + 1, n_users)])
    history = calibration.mean_shares(rng.integers(0, n_users, 90), rng.integers(0, n_items, 90), n_users,
                                      sp.csr_matrix(shares)).tocsr()
    rows = np.flatnonzero(rng.random(n_users) < 0.7)  # (some users; then every one)
    for users, cut in ((rows, 4), (np.arange(n_users), k)):
        monkeypatch.undo()
        dense = calibration.list_miscalibration(top, users, cut, history, sp.csr_matrix(shares), 0.05)
        compiled_loops(monkeypatch)
        compiled = calibration.list_miscalibration(top, users, cut, history, sp.csr_matrix(shares), 0.05)
        monkeypatch.setattr(calibration, "DENSE_CATEGORIES", 0)
        sparse = calibration.list_miscalibration(top, users, cut, history, sp.csr_matrix(shares), 0.05)
        np.testing.assert_allclose(dense, sparse, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(compiled, sparse, rtol=1e-12, atol=1e-15)
        assert len(dense) == len(users) and np.isnan(dense).any() and (~np.isnan(dense)).sum() > 5
        every = calibration.list_miscalibration(top, np.arange(n_users), cut, history, sp.csr_matrix(shares), 0.05)
        np.testing.assert_array_equal(sparse, every[users])  # (some users: the rows of every user's values)


@pytest.mark.parametrize("seed", range(3))
def test_the_compiled_history_mix_is_scipys(seed, monkeypatch):
    """Each row's category mix of its items (the history's p(g|u)) by the compiled pass equals
    scipy's products: the same entries (none for a row without an item with a category) and values."""
    import scipy.sparse as sp

    from metrics_core.metrics import calibration

    rng = np.random.default_rng(seed)
    n_items, n_rows = 30, 50
    shares = sp.csr_matrix(rng.random((n_items, 6)) * (rng.random((n_items, 6)) < 0.3))
    shares = sp.diags(1 / np.maximum(np.asarray(shares.sum(axis=1)).ravel(), 1e-300)) @ shares
    shares = sp.csr_matrix(np.vstack([np.eye(6)[rng.integers(0, 6, 8)], shares.toarray()[8:]]))  # (eight: one category)
    dense = rng.random((n_rows, n_items)) * (rng.random((n_rows, n_items)) < 0.15)
    dense[:3] = 0.0  # (rows without items, and with items that have no category)
    dense[3:6] = np.where(np.asarray(shares.sum(axis=1)).ravel() > 0, 0.0, 1.0)
    matrix = sp.csr_matrix(dense)
    compiled_loops(monkeypatch, False)
    by_scipy = calibration.mix_of_rows(matrix, shares)
    compiled_loops(monkeypatch)
    compiled = calibration.mix_of_rows(matrix, shares)
    by_scipy.sort_indices()
    np.testing.assert_array_equal(compiled.indptr, by_scipy.indptr)
    np.testing.assert_array_equal(compiled.indices, by_scipy.indices)
    np.testing.assert_array_equal(compiled.data, by_scipy.data)
    assert (np.diff(compiled.indptr) == 0).any() and (np.diff(compiled.indptr) > 1).any()
