"""The beyond-accuracy conventions and the metrics added for peer parity: hand-computed cases,
slow pairwise definitions on random data, and properties."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from metrics_core import Dataset, Settings
from metrics_core.inputs.columns import Columns
from tests.compiled import compiled_loops


def small(seed: int, n_users: int = 30, n_items: int = 25, length: int = 6):
    rng = np.random.default_rng(seed)
    rows = []
    for user in range(n_users):
        listed = rng.choice(n_items, rng.integers(1, length + 1), replace=False)
        rows += [(user, int(item), rank + 1, float(length - rank + rng.random() / 2))
                 for rank, item in enumerate(listed)]
    recs = pd.DataFrame(rows, columns=["user_id", "item_id", "rank", "score"])
    truth = recs.sample(frac=0.4, random_state=seed)[["user_id", "item_id"]]
    train = pd.DataFrame({"user_id": rng.integers(0, n_users, 200), "item_id": rng.integers(0, n_items - 3, 200)})
    items = pd.DataFrame({"item_id": np.arange(n_items), "genre": rng.integers(0, 3, n_items),
                          "year": rng.integers(0, 2, n_items)})
    return recs, truth, train.drop_duplicates(), items


def lists_of(recs: pd.DataFrame, k: int) -> dict:
    top = recs[recs["rank"] <= k].sort_values(["user_id", "rank"])
    return top.groupby("user_id")["item_id"].apply(list).to_dict()


@pytest.mark.parametrize("seed", range(4))
def test_hamming_and_cooccurrence_equal_their_pairwise_definitions(seed):
    recs, truth, train, items = small(seed)
    dataset = Dataset.build(recs, truth, train=train, items=items, feature_columns=["genre", "year"])
    k = 4
    features = items.set_index("item_id")[["genre", "year"]]
    users_of = train.groupby("item_id")["user_id"].apply(set).to_dict()
    history = train.groupby("user_id")["item_id"].apply(set).to_dict()
    relevant = truth.groupby("user_id")["item_id"].apply(set).to_dict()

    def cooc(i, j):
        a, b = users_of.get(i, set()), users_of.get(j, set())
        return len(a & b) / math.sqrt(len(a) * len(b)) if a and b else 0.0

    hamming = dataset.evaluate(settings=Settings(k=k, similarity="hamming")).per_user
    co = dataset.evaluate(settings=Settings(k=k, similarity="cooccurrence", serendipity_over="list")).per_user
    for user, listed in lists_of(recs, k).items():
        pairs = list(itertools.combinations(listed, 2))
        distance = [int((features.loc[i] != features.loc[j]).sum()) for i, j in pairs]
        assert hamming.loc[user, "diversity"] == pytest.approx(np.mean(distance) if pairs else 0.0, abs=1e-12)
        if pairs:
            assert co.loc[user, "diversity"] == pytest.approx(1 - np.mean([cooc(i, j) for i, j in pairs]), abs=1e-12)
        if user in history:
            unexpected = [(1 - np.mean([cooc(i, h) for h in history[user]])) * (i in relevant.get(user, set()))
                          for i in listed]
            assert co.loc[user, "serendipity"] == pytest.approx(np.mean(unexpected), abs=1e-12)
        else:
            assert np.isnan(co.loc[user, "serendipity"])


@pytest.mark.parametrize("seed", range(4))
def test_similarity_look_ups_compiled_and_by_scipy_agree(seed, monkeypatch):
    """The co-occurrence similarity's look-ups give the same pair sums and history
    similarities from the compiled binary search (large inputs) as from scipy's indexing
    (small ones), with short lists and items no one trained on (no entries), in blocks of
    look-ups; a list's pair sum equals its pairs' entries added by hand."""
    from metrics_core.metrics import similarity

    recs, truth, train, items = small(seed)
    dataset = Dataset.build(recs, truth, train=train, items=items)
    co = dataset.training.cooccurrence
    top = dataset.lists[dataset.models[0]].items[:, :5]
    assert (top < 0).any() and (dataset.training.users_per_item[top[top >= 0]] == 0).any()
    rows = np.arange(len(top))
    user_row, position = np.nonzero(top >= 0)

    def both():
        to_history = similarity.cooccurrence_history_similarity(rows, co.history, co.item_similarity)
        return similarity.matrix_pair_sums(top, co.item_similarity), to_history(user_row, top[user_row, position])

    by_scipy, history_by_scipy = both()
    monkeypatch.setattr(similarity, "LOOKUP_KERNEL_MIN", 0)
    monkeypatch.setattr(similarity, "LOOKUP_BLOCK", 7)  # (blocks of pairs, some ending inside a user's history)
    compiled, history_compiled = both()
    np.testing.assert_allclose(compiled.total, by_scipy.total, atol=1e-12)
    np.testing.assert_allclose(history_compiled, history_by_scipy, atol=1e-12)
    np.testing.assert_array_equal(compiled.n, (top >= 0).sum(axis=1))
    unsorted = co.item_similarity.copy()  # each row's columns in descending order: searched in a sorted copy
    order = np.lexsort((-unsorted.indices, np.repeat(np.arange(unsorted.shape[0]), np.diff(unsorted.indptr))))
    unsorted.indices, unsorted.data = unsorted.indices[order], unsorted.data[order]
    unsorted.has_sorted_indices = False
    np.testing.assert_allclose(similarity.matrix_pair_sums(top, unsorted).total, by_scipy.total, atol=1e-12)
    assert not unsorted.has_sorted_indices  # (left as it was)
    row = int(np.argmax((top >= 0).sum(axis=1)))
    listed = top[row][top[row] >= 0]
    by_hand = sum(co.item_similarity[i, j] for i, j in itertools.combinations(listed, 2))
    assert compiled.total[row] == pytest.approx(by_hand, abs=1e-12) and len(listed) >= 2
    at = int(np.flatnonzero(co.history_count[user_row] > 1)[-1])  # (rows are the user codes here)
    history = co.history[user_row[at]].toarray().ravel()
    item = top[user_row[at], position[at]]
    expected = sum(history[h] * co.item_similarity[h, item] for h in np.flatnonzero(history))
    assert history_compiled[at] == pytest.approx(expected, abs=1e-12) and expected > 0


def test_evidently_conventions_by_hand():
    recs = pd.DataFrame({"user_id": [1, 1, 1, 2], "item_id": [1, 2, 3, 1], "rank": [1, 2, 3, 1],
                         "score": [2.0, 1.0, 0.0, 5.0]})
    truth = pd.DataFrame({"user_id": [1, 2], "item_id": [1, 1]})
    train = pd.DataFrame({"user_id": [7, 8, 8], "item_id": [1, 1, 2]})  # item 3 unknown to training
    items = pd.DataFrame({"item_id": [1, 2, 3, 4], "x": [1.0, 0.0, 1.0, 0.0], "y": [0.0, 1.0, 1.0, 1.0]})
    dataset = Dataset.build(recs, truth, train=train, items=items)
    default = dataset.evaluate(settings=Settings(k=3))
    evidently = dataset.evaluate(settings=Settings(k=3, preset="evidently"))
    # ARP: user 1's items have 2, 1, 0 training interactions; user 2's 2
    assert default.metrics["arp"] == pytest.approx((1.0 + 2.0) / 2)
    assert evidently.metrics["arp"] == pytest.approx((1.5 + 2.0) / 2)  # item 3 left out
    # Gini: counts over the catalog (1, 2, 3, 4) = 2, 1, 1, 0; over the recommended items = 2, 1, 1
    assert default.metrics["gini"] == pytest.approx((-3 * 0 - 1 * 1 + 1 * 1 + 3 * 2) / 4 / 3)
    assert evidently.metrics["gini"] == pytest.approx((-2 * 1 + 0 * 1 + 2 * 2) / 4 / 2)
    # diversity of user 1: cosine distances 1, 1 − 1/√2, 1 − 1/√2 summed / 3 items; user 2 (one item) 0
    distances = 1 + 2 * (1 - 1 / math.sqrt(2))
    assert default.per_user.loc[1, "diversity"] == pytest.approx(distances / 3)  # / 3 pairs
    assert evidently.metrics["diversity"] == pytest.approx((distances / 3 + 0.0) / 2)
    # one softmax over the scores 2, 1, 0, 5
    p = np.exp([2.0, 1.0, 0.0, 5.0]) / np.exp([2.0, 1.0, 0.0, 5.0]).sum()
    assert evidently.metrics["score_entropy"] == pytest.approx(-(p * np.log(p)).sum())
    assert "score_entropy" not in evidently.per_user.columns


def test_entropy_base_and_arp_normalisation():
    recs, truth, train, items = small(1)
    dataset = Dataset.build(recs, truth, train=train, items=items)
    nats = dataset.evaluate(settings=Settings(k=3))
    bits = dataset.evaluate(settings=Settings(k=3, entropy_base=2, arp_normalisation="interactions"))
    assert bits.metrics["entropy"] == pytest.approx(nats.metrics["entropy"] / math.log(2))
    assert bits.metrics["entropy_normalised"] == pytest.approx(nats.metrics["entropy_normalised"])
    assert bits.metrics["arp_normalised"] == pytest.approx(nats.metrics["arp"] / len(train))


def test_serendipity_against_a_primitive_model_by_hand():
    model = pd.DataFrame({"user_id": [1, 1, 1], "item_id": [10, 20, 30], "rank": [1, 2, 3],
                          "score": [0.9, 0.5, 0.1]})
    primitive = pd.DataFrame({"user_id": [1, 1, 1], "item_id": [20, 10, 40], "rank": [1, 2, 3],
                              "score": [0.8, 0.6, 0.2]})
    truth = pd.DataFrame({"user_id": [1, 1], "item_id": [10, 30]})
    dataset = Dataset.build({"base": primitive, "new": model}, truth)
    by_rank = dataset.evaluate("new", Settings(k=3, primitive_model="base"))
    # rank scale over 3 items: 1, 2/3, 1/3. Item 10: 1 − 2/3; item 30: 1/3 − 0 (not in the primitive's top K)
    assert by_rank.metrics["serendipity_primitive"] == pytest.approx(1 / 3 + 1 / 3)
    assert by_rank.metrics["unexpectedness"] == pytest.approx(1 / 3)  # item 30 only
    by_scores = dataset.evaluate("new", Settings(k=3, primitive_model="base", primitive_scale="minmax"))
    # min-max: new 10 → 1, 30 → 0; base 10 → (0.6 − 0.2)/0.6 = 2/3
    assert by_scores.metrics["serendipity_primitive"] == pytest.approx(1 - 2 / 3)
    itself = dataset.evaluate("base", Settings(k=3, primitive_model="base"))
    assert itself.metrics["serendipity_primitive"] == 0.0 and itself.metrics["unexpectedness"] == 0.0
    alone = Dataset.build({"new": model}, truth).evaluate(settings=Settings(k=3))
    assert "second model" in alone.skipped["unexpectedness"]


@pytest.mark.parametrize("seed", range(3))
def test_primitive_metrics_bounds_and_self_comparison(seed):
    recs, truth, _, _ = small(seed)
    shuffled = recs.assign(item_id=(recs["item_id"] * 7 + seed) % 25)
    dataset = Dataset.build({"a": recs, "b": shuffled}, truth)
    result = dataset.evaluate("b", Settings(k=4, primitive_model="a")).per_user
    result = result[result["evaluated"]]
    assert ((result["unexpectedness"] >= 0) & (result["unexpectedness"] <= 1)).all()
    assert (result["serendipity_primitive"] >= 0).all()
    assert (result["serendipity_primitive"] <= result["hits"] + 1e-12).all()  # at most 1 per hit
    dataset = Dataset.build({"a": recs, "copy of a": recs.copy()}, truth)
    for scale in ("rank", "minmax"):
        itself, copy = (dataset.evaluate(name, Settings(k=4, primitive_model="a", primitive_scale=scale)).per_user
                        for name in ("a", "copy of a"))
        pd.testing.assert_frame_equal(itself, copy)
        assert (itself.loc[itself["evaluated"], ["serendipity_primitive", "unexpectedness"]] == 0).all().all()


def primitive_by_hand(items, other, hit, scores, other_scores, user, k, scale):
    """Serendipity against the primitive model and unexpectedness of one user, as METRICS.md
    words them: each top K scaled within itself, the primitive's score of an item it lacks 0."""
    def scaled(row, values):
        listed = [(position, int(item)) for position, item in enumerate(row[:k]) if item >= 0]
        if scale == "rank":
            return {item: (len(listed) - position) / len(listed) for position, item in listed}
        kept = [float(values[position]) for position, _ in listed]
        low, high = min(kept, default=0.0), max(kept, default=0.0)
        return {item: (float(values[position]) - low) / (high - low) if high > low else 1.0
                for position, item in listed}

    mine, theirs = scaled(items[user], scores[user] if scores is not None else None), \
        scaled(other[user], other_scores[user] if other_scores is not None else None)
    relevant = {int(item) for position, item in enumerate(items[user][:k]) if item >= 0 and hit[user, position]}
    gain = sum(max(value - theirs.get(item, 0.0), 0.0) for item, value in mine.items() if item in relevant)
    unseen = sum(item not in theirs for item in mine) / len(mine) if mine else math.nan
    return gain, unseen


@pytest.mark.parametrize(("k", "other_width", "seed"), [(3, 6, 0), (6, 4, 1), (10, 12, 2), (12, 12, 3)])
@pytest.mark.parametrize("scale", ["rank", "minmax"])
def test_primitive_metrics_compiled_and_numpy_equal_a_user_by_user_reading(k, other_width, seed, scale,
                                                                          monkeypatch):
    """The compiled pass (large inputs) and numpy's steps (small ones) give, user by user, what
    the definition says: lists with empty cells anywhere, tied scores, float32 scores in one
    model, a primitive model with shorter lists, and a subset of users."""
    from metrics_core.inputs.encoded import Lists
    from metrics_core.metrics import primitive

    rng = np.random.default_rng(seed)
    n_users, width, n_items = 200, 10, 30

    def random_lists(name, positions, score_type):
        items = np.array([rng.choice(n_items, positions, replace=False) for _ in range(n_users)], dtype=np.int32)
        items[rng.random(items.shape) < 0.25] = -1
        items[:7] = -1  # users without a list
        scores = np.round(rng.random(items.shape), 1).astype(score_type)  # (rounded: ties)
        scores[items < 0] = np.nan
        return Lists(name, items, rng.random(items.shape) < 0.4, None, scores, (items >= 0).any(axis=1), "rank")

    model, other = random_lists("model", width, np.float64), random_lists("primitive", other_width, np.float32)
    rows = np.flatnonzero(rng.random(n_users) < 0.8)
    hit_top = model.hit[rows, :k]
    expected = np.array([primitive_by_hand(model.items, other.items, model.hit, model.scores, other.scores, user, k,
                                           scale) for user in rows])
    by_numpy = primitive.serendipity_and_unexpectedness(model, other, rows, hit_top, k, scale, n_items)
    compiled_loops(monkeypatch)
    compiled = primitive.serendipity_and_unexpectedness(model, other, rows, hit_top, k, scale, n_items)
    itself = primitive.serendipity_and_unexpectedness(model, model, rows, hit_top, k, scale, n_items)
    for found in (by_numpy, compiled):
        np.testing.assert_allclose(found[0], expected[:, 0], rtol=1e-12, atol=1e-15)
        np.testing.assert_array_equal(np.isnan(found[1]), np.isnan(expected[:, 1]))
        np.testing.assert_allclose(found[1], expected[:, 1], rtol=1e-12)
    assert (itself[0] == 0).all() and (itself[1][~np.isnan(itself[1])] == 0).all()
    assert np.isnan(itself[1]).sum() == np.isnan(expected[:, 1]).sum() > 0


@pytest.mark.parametrize("scale", ["rank", "minmax"])
def test_the_compiled_primitive_pass_sees_the_types_make_compiled(scale, monkeypatch):
    """Read-only lists (whole lists in order are the read columns) and scores kept for the first
    positions of longer lists (a strided view) reach the compiled loop as read-only C arrays,
    the types ``make`` compiles, not a new mix compiled at its first use; the values are the
    same as from writeable, contiguous lists."""
    from metrics_core.inputs import kernels
    from metrics_core.inputs.encoded import Lists
    from metrics_core.metrics import primitive

    rng = np.random.default_rng(5)
    items = np.array([rng.choice(40, 12, replace=False) for _ in range(60)], dtype=np.int32)
    scores = np.sort(rng.random((60, 12)), axis=1)[:, ::-1]
    hit = rng.random(items.shape) < 0.3
    seen, real = [], kernels.primitive_rows

    def spy(*args):
        seen.append([(a.flags.c_contiguous, a.flags.writeable) for a in args[:5] if isinstance(a, np.ndarray)])
        return real(*args)

    monkeypatch.setattr(kernels, "primitive_rows", spy)
    compiled_loops(monkeypatch)
    found = []
    for read_only in (False, True):
        cells = items.copy()
        cells.flags.writeable = not read_only
        model = Lists("m", cells, hit, None, scores[:, :8] if read_only else scores[:, :8].copy(), hit.any(axis=1),
                      "rank")
        other = Lists("p", cells[:, ::-1].copy(), hit, None, scores[:, :8].copy(), hit.any(axis=1), "rank")
        rows = np.arange(60)
        found.append(primitive.serendipity_and_unexpectedness(model, other, rows, hit[:, :5], 5, scale, 40))
    assert len(seen) >= 2 and all(flags == (True, False) for call in seen for flags in call)  # (a call per thread)
    np.testing.assert_array_equal(found[0][0], found[1][0])
    np.testing.assert_array_equal(found[0][1], found[1][1])


def test_dcg_uses_the_grade_when_every_grade_is_equal():
    recs = pd.DataFrame({"user_id": [1, 1], "item_id": [1, 2], "rank": [1, 2]})
    truth = pd.DataFrame({"user_id": [1, 1], "item_id": [1, 2], "grade": [2, 2]})
    dataset = Dataset.build(recs, truth, columns=Columns(relevance="grade"))
    for gain, per_item in (("linear", 2.0), ("exponential", 3.0), ("binary", 1.0), ({2: 7}, 7.0)):
        result = dataset.evaluate(settings=Settings(k=2, gain=gain))
        assert result.metrics["dcg"] == pytest.approx(per_item * (1 + 1 / math.log2(3))), gain
        assert result.curves.loc[2, "dcg"] == pytest.approx(result.metrics["dcg"])
        assert result.metrics["ndcg"] == pytest.approx(1.0)


def test_custom_gains_are_checked():
    from metrics_core.errors import InputError

    assert Settings(gain={2: 9, 1: 3}).gain == ((1.0, 3.0), (2.0, 9.0))
    assert Settings(gain={1: 5, 2: 1}).gain == ((1.0, 5.0), (2.0, 1.0))  # (falling gains are allowed)
    with pytest.raises(InputError, match="grade 1 more than once"):
        Settings(gain=((1, 3), (1, 4)))
    with pytest.raises(InputError, match="finite"):
        Settings(gain={1: float("nan")})


def test_gains_that_fall_as_grades_rise_rank_the_ideal_list_by_gain():
    """trec_eval's ``ndcg.1=3,2=9,4=4.5``: the ideal list takes the user's items by gain (9, 4.5, 3),
    not by grade, on every path (at K, every k, the whole list)."""
    recs = pd.DataFrame({"user_id": [1, 1, 1], "item_id": ["a", "b", "c"], "rank": [1, 2, 3]})
    truth = pd.DataFrame({"user_id": [1, 1, 1], "item_id": ["a", "b", "c"], "grade": [4, 2, 1]})
    dataset = Dataset.build(recs, truth, columns=Columns(relevance="grade"))
    gains = {1: 3, 2: 9, 4: 4.5}
    dcg = 4.5 + 9 / math.log2(3) + 3 / 2
    ideal = 9 + 4.5 / math.log2(3) + 3 / 2
    for curves in (True, False):
        result = dataset.evaluate(settings=Settings(k=3, gain=gains), curves=curves)
        assert result.metrics["dcg"] == pytest.approx(dcg, rel=1e-12)
        assert result.metrics["ndcg"] == pytest.approx(dcg / ideal, rel=1e-12)
        assert result.metrics["ndcg_at_r"] == pytest.approx(dcg / ideal, rel=1e-12)
    at_one = dataset.evaluate(settings=Settings(k=1, gain=gains))
    assert at_one.metrics["ndcg"] == pytest.approx(4.5 / 9, rel=1e-12)
    assert dataset.evaluate(settings=Settings(k=3, gain=gains)).curves.loc[1, "ndcg"] == pytest.approx(4.5 / 9)
