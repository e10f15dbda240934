"""Each list's items and hits in its first k places, as a new K reads them (Lists.listed_at,
Lists.hits_at), equal the count along the cells, for lists with and without empty places."""

from __future__ import annotations

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from metrics_core.inputs.encoded import Lists


def lists_of(items: np.ndarray, hit: np.ndarray) -> Lists:
    return Lists("m", items, hit, None, None, np.ones(len(items), dtype=bool), "rank")


@st.composite
def problems(draw):
    users, width = draw(st.integers(0, 30)), draw(st.integers(1, 12))
    seed, empty = draw(st.integers(0, 2**32 - 1)), draw(st.sampled_from([0.0, 0.05, 0.3, 0.9]))
    rng = np.random.default_rng(seed)
    items = rng.integers(0, 50, (users, width))
    items[rng.random((users, width)) < empty] = -1
    if draw(st.booleans()):  # (shorter lists: empty places at the end only)
        lengths = rng.integers(0, width + 1, users)
        items[np.arange(width) >= lengths[:, None]] = -1
    hit = (items >= 0) & (rng.random((users, width)) < 0.4)
    rows = np.flatnonzero(rng.random(users) < draw(st.sampled_from([0.2, 0.8, 1.0])))
    return items, hit, rows, draw(st.integers(1, width + 3))


@settings(max_examples=200, deadline=None)
@given(problems())
@example((np.array([[3, -1, 4, -1]]), np.array([[True, False, False, False]]), np.array([0]), 3))
def test_items_and_hits_in_the_first_k_places_are_those_counted_along_the_cells(problem):
    items, hit, rows, k = problem
    lists = lists_of(items, hit)
    assert lists.listed_at(1).tolist() == (items[:, :1] >= 0).sum(axis=1).tolist()  # (then k: another K)
    assert lists.listed_at(k).tolist() == (items[:, :k] >= 0).sum(axis=1).tolist()
    assert lists.listed_at(k, rows).tolist() == (items[rows, :k] >= 0).sum(axis=1).tolist()
    assert lists.hits_at(k).tolist() == hit[:, :k].sum(axis=1).tolist()
    assert lists.hits_at(k, rows).tolist() == hit[rows, :k].sum(axis=1).tolist()
    known = lists_of(items, hit)
    assert known.gapless in (True, False)  # (found out, as an evaluation does: gapless lists then read min(length, k))
    assert known.listed_at(k).tolist() == (items[:, :k] >= 0).sum(axis=1).tolist()
    assert known.listed_at(k, rows).tolist() == (items[rows, :k] >= 0).sum(axis=1).tolist()
    assert known.listed_at(k).dtype == np.int64


def test_each_k_is_counted_once_and_the_last_two_are_kept():
    """An evaluation asks its K several times and the pages at one K ask it again: counted once per
    K, the last LISTED_KEPT K kept; a K past the lists is their width."""
    items = np.array([[1, -1, 2, 5], [4, 6, -1, -1]])
    lists = lists_of(items, items >= 0)
    assert lists.listed_at(3).tolist() == [2, 2] and lists.listed_at(3, np.array([0, 1])).tolist() == [2, 2]
    first = lists.__dict__["_listed_at"][3]
    assert lists.listed_at(3) is first, "counted once"
    assert lists.listed_at(9).tolist() == lists.listed_at(4).tolist() == [3, 2]
    assert lists.listed_at(1).tolist() == [1, 1]
    assert sorted(lists.__dict__["_listed_at"]) == [1, 4]
    assert lists.listed_at(2, np.array([1])).tolist() == [2]  # (a few users: counted on their rows)


def test_the_compiled_count_of_the_first_k_places_is_numpys(monkeypatch):
    """Lists with empty places anywhere, int32 and int64 codes, writeable or read-only (mapped): the
    items in the first k places by the compiled pass equal numpy's count, at every k."""
    from tests.compiled import compiled_loops

    rng = np.random.default_rng(7)
    for item_type in (np.int32, np.int64):
        items = rng.integers(0, 50, (200, 9)).astype(item_type)
        items[rng.random(items.shape) < 0.3] = -1
        items.flags.writeable = item_type == np.int32
        for k in range(1, 12):
            compiled_loops(monkeypatch, False)
            by_numpy = lists_of(items, items >= 0).listed_at(k)
            compiled_loops(monkeypatch)
            compiled = lists_of(items, items >= 0).listed_at(k)
            np.testing.assert_array_equal(compiled, by_numpy)
            assert compiled.dtype == np.int64 and compiled.tolist() == (items[:, :k] >= 0).sum(axis=1).tolist()


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["whole lists", "shuffled", "scores only", "rank gaps",
                                                   "duplicates", "short lists"]))
def test_a_build_says_its_lists_are_gapless_only_when_they_are(seed, shape):
    """Whole lists in order and lists placed by score fill their first places unless a duplicate
    was blanked: the build says so (a new K then counts min(length, K) instead of a pass over the
    cells), and never says it of lists that are not."""
    import pandas as pd

    from metrics_core import Dataset

    rng = np.random.default_rng(seed)
    users, width = int(rng.integers(1, 40)), int(rng.integers(1, 9))
    recs = pd.DataFrame({"user_id": np.repeat(np.arange(users), width),
                         "item_id": rng.permuted(np.tile(np.arange(width * 3), (users, 1)), axis=1)[:, :width].ravel(),
                         "rank": np.tile(np.arange(1, width + 1), users), "score": rng.random(users * width)})
    if shape == "shuffled":
        recs = recs.sample(frac=1.0, random_state=seed % 2**31)
    elif shape == "scores only":
        recs = recs.drop(columns="rank").sample(frac=1.0, random_state=seed % 2**31)
    elif shape == "rank gaps":
        recs = recs.assign(rank=recs["rank"] * 2)
    elif shape == "duplicates":
        recs.loc[recs.index[1::5], "item_id"] = recs["item_id"].iloc[0]
    elif shape == "short lists":
        recs = recs[recs["rank"] <= rng.integers(0, width + 1, len(recs))]
    truth = pd.DataFrame({"user_id": np.arange(users), "item_id": rng.integers(0, width * 3, users)})
    if recs.empty:
        return
    lists = Dataset.build(recs, truth).lists["model"]
    if "gapless" in vars(lists):
        assert lists.gapless == Lists.gapless.func(lists), (shape, lists.items)
    if shape in ("whole lists", "scores only"):
        assert vars(lists).get("gapless") is True, "said by the build"


@settings(max_examples=150, deadline=None)
@given(problems(), st.sampled_from(["numpy", "compiled", "gapless known"]))
@example((np.array([[-1, -1, 4, -1], [-1, -1, -1, -1], [2, 3, -1, -1]]), np.zeros((3, 4), bool), np.array([0]), 3),
         "compiled")
def test_each_lists_first_filled_place_tells_who_has_an_item_in_the_first_k_places(problem, path):
    """The users with an item in their first k places (the beyond-accuracy metrics' users at k)
    are those whose first filled place is below k (and below the lists' width, an empty list's),
    found once whatever k, by numpy, by the compiled pass or from the lengths of lists known to
    be gapless."""
    from metrics_core.inputs import encoded

    items, hit, _, k = problem
    lists = lists_of(items, hit)
    if path == "gapless known":
        lists.gapless  # noqa: B018 (found out, as an evaluation does)
    saved = encoded.KERNEL_MIN, encoded.LOAD_MIN
    try:
        encoded.KERNEL_MIN = encoded.LOAD_MIN = 0 if path == "compiled" else 1 << 40
        first = lists.first_places
    finally:
        encoded.KERNEL_MIN, encoded.LOAD_MIN = saved
    filled = items >= 0
    expected = np.where(filled.any(axis=1), np.argmax(filled, axis=1), items.shape[1]) if len(items) else []
    if path != "gapless known" or lists.gapless:
        assert first.tolist() == list(expected)
    for at in (1, k, items.shape[1] + 1):
        assert lists.listed_within(at).tolist() == (lists.listed_at(at) > 0).tolist()
