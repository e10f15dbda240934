"""List overlap between models: Jaccard@K and rank-biased overlap against the definitions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics_core import Dataset
from metrics_core.stats.overlap import jaccard, matrix, per_user, rank_biased_overlap
from tests.compiled import compiled_loops


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


@st.composite
def workspaces(draw):
    """2 to 5 models' lists of up to 6 items over 40 items for some users (some without a list,
    some lists with empty places), and a K."""
    seed, models, users = draw(st.integers(0, 2**32 - 1)), draw(st.integers(2, 5)), draw(st.integers(1, 25))
    rng = np.random.default_rng(seed)
    tables = {}
    for m in range(models):
        rows = [(u, item, rank) for u in range(users) if rng.random() < 0.85
                for rank, item in enumerate(rng.choice(40, rng.integers(1, 7), replace=False), start=1)
                if rng.random() < 0.9]
        tables[f"m{m}"] = pd.DataFrame(rows or [(0, 1, 1)], columns=["user_id", "item_id", "rank"])
    truth = pd.DataFrame({"user_id": np.arange(users), "item_id": rng.integers(0, 40, users)})
    return Dataset.build(tables, truth), draw(st.integers(1, 8))


@settings(max_examples=60, deadline=None)
@given(workspaces())
def test_the_matrix_in_one_compiled_pass_equals_its_pairs(problem):
    """Every pair's mean Jaccard counted in one pass over each user's lists of all the models
    (shared_pair_counts) equals the pair's own per-user Jaccard's mean."""
    data, k = problem
    with pytest.MonkeyPatch.context() as monkeypatch:
        compiled_loops(monkeypatch)
        table = matrix(data, k)
    for first in data.models:
        for second in data.models:
            expected = 1.0 if first == second else per_user(data, first, second, k).mean()
            assert table.loc[first, second] == pytest.approx(expected, abs=1e-12, nan_ok=True), (first, second)


@settings(max_examples=40, deadline=None)
@given(workspaces(), st.booleans())
def test_one_pairs_jaccard_read_from_every_pairs_shared_items_is_its_own(problem, compiled):
    """The Compare page counts every pair's shared items once (shared_at: one compiled pass, or
    pair by pair) and reads the matrix and the chosen pair's per-user Jaccard from them: the same
    values as the pair's own count, in either order of the two models."""
    from metrics_core.stats.overlap import shared_at

    data, k = problem
    with pytest.MonkeyPatch.context() as monkeypatch:
        compiled_loops(monkeypatch, on=compiled)
        shared = shared_at(data, k)
    for first in data.models:
        for second in data.models:
            if first != second:
                pd.testing.assert_series_equal(per_user(data, first, second, k, shared=shared),
                                               per_user(data, first, second, k))
    pd.testing.assert_frame_equal(matrix(data, k, shared=shared), matrix(data, k))
