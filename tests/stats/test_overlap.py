"""List overlap between models: Jaccard@K and rank-biased overlap against the definitions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics_core import Dataset
from metrics_core.stats.overlap import jaccard, matrix, per_user, rank_biased_overlap


def slow_rbo(a: list, b: list, p: float) -> float:
    k = len(a)
    agreement = [len({x for x in a[:d] if x >= 0} & {x for x in b[:d] if x >= 0}) / d for d in range(1, k + 1)]
    return agreement[-1] * p**k + (1 - p) / p * sum(agreement[d - 1] * p**d for d in range(1, k + 1))


def lists(draw, users: int, width: int) -> np.ndarray:
    rows = []
    for _ in range(users):
        items = draw(st.lists(st.integers(0, 15), max_size=width, unique=True))
        rows.append(items + [-1] * (width - len(items)))
    return np.array(rows, dtype=np.int64).reshape(users, width)


@settings(max_examples=60, deadline=None)
@given(st.data(), st.integers(1, 6), st.integers(1, 8), st.sampled_from([0.5, 0.9, 0.98]))
def test_overlaps_equal_their_definitions(data, users, width, p):
    a, b = lists(data.draw, users, width), lists(data.draw, users, width)
    fast_j, fast_r = jaccard(a, b), rank_biased_overlap(a, b, p)
    for u in range(users):
        left, right = {x for x in a[u] if x >= 0}, {x for x in b[u] if x >= 0}
        if not left and not right:
            assert np.isnan(fast_j[u]) and np.isnan(fast_r[u])
            continue
        assert fast_j[u] == pytest.approx(len(left & right) / len(left | right))
        assert fast_r[u] == pytest.approx(slow_rbo(list(a[u]), list(b[u]), p), abs=1e-12)
    np.testing.assert_allclose(fast_r, rank_biased_overlap(b, a, p), equal_nan=True)  # symmetric
    full = (a >= 0).all(axis=1)  # identical full lists overlap completely
    assert np.allclose(rank_biased_overlap(a[full], a[full], p), 1.0)


def test_matrix_and_per_user_from_a_dataset():
    recs = pd.DataFrame({"user_id": [1, 1, 2, 2], "item_id": [10, 11, 12, 13], "rank": [1, 2, 1, 2]})
    other = pd.DataFrame({"user_id": [1, 1, 2, 2], "item_id": [11, 10, 14, 15], "rank": [1, 2, 1, 2]})
    data = Dataset.build({"A": recs, "B": other, "C": recs}, pd.DataFrame({"user_id": [1], "item_id": [10]}))
    table = matrix(data, k=2)
    assert table.loc["A", "C"] == 1.0 and table.loc["A", "B"] == pytest.approx((1.0 + 0.0) / 2)
    assert table.loc["B", "A"] == table.loc["A", "B"]
    assert per_user(data, "A", "B", 2).to_dict() == {1: 1.0, 2: 0.0}
    assert per_user(data, "A", "B", 2, "rbo", p=0.5).loc[1] == pytest.approx(0.5)
