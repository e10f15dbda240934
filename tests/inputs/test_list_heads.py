"""The first places of wide, large lists are read from a copy made row after row (Lists.top): the
same items as the lists' own first places at every k, and the same numbers everywhere they are
read (every metric of an evaluation, the overlap of two models, the items' counts of the pages)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics_core import Columns, Dataset, Settings
from metrics_core.inputs import encoded
from metrics_core.inputs.encoded import Lists
from metrics_core.stats import overlap


@settings(max_examples=120, deadline=None)
@given(st.integers(0, 30), st.integers(1, 9), st.integers(1, 5), st.integers(0, 2**32 - 1), st.booleans())
def test_the_first_k_places_are_the_lists_own_whether_copied_or_not(users, width, head, seed, copy):
    """Lists in memory read their own rows, unless the copies were made (as before keeping a
    dataset); either way the first k places, their items and their scores are the lists' own."""
    rng = np.random.default_rng(seed)
    items = rng.integers(0, 40, (users, width)).astype(np.int32)
    items[rng.random((users, width)) < 0.2] = -1
    scores = np.where(items >= 0, rng.random((users, width)), np.nan)
    saved = encoded.HEAD_PLACES, encoded.HEAD_MIN
    try:
        encoded.HEAD_PLACES, encoded.HEAD_MIN = head, 0
        lists = Lists("m", items, items >= 0, None, scores, np.ones(users, bool), "rank")
        if copy:
            lists.copy_first_places()
        for k in range(1, width + 3):
            top = lists.top(k)
            np.testing.assert_array_equal(top, items[:, :k])
            assert lists.listed_at(k).tolist() == (items[:, :k] >= 0).sum(axis=1).tolist()
            places = lists.score_places(k)
            assert places.flags.c_contiguous and places.shape[1] >= min(k, width)
            np.testing.assert_array_equal(places[:, :k], scores[:, :k])
        copied = {name for name in ("_head", "_score_head") if name in lists.__dict__}
    finally:
        encoded.HEAD_PLACES, encoded.HEAD_MIN = saved
    assert copied == ({"_head", "_score_head"} if copy and width > head else set())  # (not wider: as they are)
    for name in copied:
        assert not lists.__dict__[name].flags.writeable
    lists.drop_first_places()
    assert not {"_head", "_score_head"} & set(lists.__dict__)


@pytest.fixture(scope="module")
def demo():
    from dashboard.demo import generate

    tables = generate(n_users=300, n_items=200, seed=5)
    models = {name.removeprefix("recs_"): frame for name, frame in tables.items() if name.startswith("recs_")}
    return Dataset.build(models, tables["ground_truth"], train=tables["train"], items=tables["items"],
                         users=tables["users"], columns=Columns(relevance="rating", threshold=4,
                                                                 timestamp="timestamp"))


@pytest.mark.parametrize("k", [1, 5, 8])
def test_every_number_read_from_the_copied_first_places_is_the_same(demo, k, monkeypatch):
    """An evaluation of every model (accuracy and beyond-accuracy metrics, score entropy
    included, per user and on average), the overlap matrix and one pair's overlap, and the items'
    counts in the top K are the same from the copies as from the lists (a K past the copies reads
    the lists)."""
    def numbers() -> tuple:
        fresh = {name: Lists(**{f: getattr(lists, f) for f in ("name", "items", "hit", "grade", "scores",
                                                                 "listed", "ordered_by", "notes")})
                 for name, lists in demo.lists.items()}  # (no copy or count made by an earlier call)
        demo.lists.update(fresh)
        for lists in fresh.values():
            if encoded.HEAD_MIN == 0:  # (the copies, as a kept dataset has them)
                lists.copy_first_places()
        demo.__dict__.pop("_recommended_counts", None)
        evaluations = demo.evaluate_all(Settings(k=k, category_column="genre"), curves=False)
        first, second = demo.models[:2]
        return ({name: (e.metrics, e.per_user) for name, e in evaluations.items()},
                overlap.matrix(demo, k), overlap.per_user(demo, first, second, k, "rbo"),
                {name: demo.recommended_counts(demo.lists[name], k) for name in demo.models},
                [{"_head", "_score_head"} <= set(lists.__dict__) for lists in demo.lists.values()])

    plain = numbers()
    monkeypatch.setattr(encoded, "HEAD_PLACES", 6)
    monkeypatch.setattr(encoded, "HEAD_MIN", 0)
    copied = numbers()
    assert plain[-1] == [False] * 3 and copied[-1] == [True] * 3  # (K = 8, past the copies: the lists)
    for name, (metrics, per_user) in plain[0].items():
        assert copied[0][name][0] == metrics, name
        pd.testing.assert_frame_equal(copied[0][name][1], per_user)
    pd.testing.assert_frame_equal(copied[1], plain[1])
    pd.testing.assert_series_equal(copied[2], plain[2])
    for name, counts in plain[3].items():
        np.testing.assert_array_equal(copied[3][name], counts)
