"""Beyond-accuracy metrics: the three-user reference values of docs/metrics.md, hand-made cases, and a slow
per-user, per-pair implementation the fast code must match."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from metrics_core import Dataset, InputError, Settings, evaluate
from metrics_core.metrics import popularity
from tests.compiled import compiled_loops


def items_table(vectors: dict) -> pd.DataFrame:
    rows = [{"item_id": i, **{f"f{j}": v for j, v in enumerate(vec)}} for i, vec in vectors.items()]
    return pd.DataFrame(rows)


def test_seed003_catalog_metrics(three_users):
    recs, truth, train = three_users
    over_train = evaluate(recs, truth, k=3, train=train).metrics
    # training items are 0..70 step 10: the 8-item catalog
    assert over_train["coverage"] == pytest.approx(6 / 8)
    assert over_train["gini"] == pytest.approx(3 / 7)
    test_items = pd.DataFrame({"item_id": [0, 20, 40, 60, 70]})
    over_test = evaluate(recs, truth, k=3, items=test_items).metrics
    assert over_test["coverage"] == pytest.approx(4 / 5)
    assert over_test["gini"] == pytest.approx(10 / 28)
    p = np.array([1, 2, 2, 2]) / 7
    assert over_test["entropy"] == pytest.approx(-np.sum(p * np.log(p)))
    assert over_test["entropy"] == pytest.approx(1.352, abs=5e-4)
    assert over_test["entropy_normalised"] == pytest.approx(over_test["entropy"] / math.log(5))
    assert over_test["aggregate_diversity"] == 6


def test_personalization_identical_and_disjoint_lists():
    truth = pd.DataFrame({"user_id": [1, 2], "item_id": ["a", "a"]})
    same = pd.DataFrame({"user_id": [1, 1, 2, 2], "item_id": ["a", "b", "a", "b"], "rank": [1, 2, 1, 2]})
    apart = pd.DataFrame({"user_id": [1, 1, 2, 2], "item_id": ["a", "b", "c", "d"], "rank": [1, 2, 1, 2]})
    assert evaluate(same, truth, k=2).metrics["personalization"] == 0.0
    assert evaluate(apart, truth, k=2).metrics["personalization"] == 1.0
    # lists shorter than K: overlap is still divided by K
    short = pd.DataFrame({"user_id": [1, 2], "item_id": ["a", "a"], "rank": [1, 1]})
    assert evaluate(short, truth, k=4).metrics["personalization"] == pytest.approx(1 - 1 / 4)


def test_single_user_skips_personalization():
    result = evaluate(pd.DataFrame({"user_id": [1], "item_id": ["a"], "rank": [1]}),
                      pd.DataFrame({"user_id": [1], "item_id": ["a"]}), k=3)
    assert "personalization" in result.skipped


def test_diversity_by_hand_including_items_without_features():
    vectors = {"a": (1, 0), "b": (0, 1), "c": (1, 1)}  # d has no features
    recs = pd.DataFrame({"user_id": [1, 1, 1, 1, 2, 2], "item_id": ["a", "b", "c", "d", "a", "d"],
                         "rank": [1, 2, 3, 4, 1, 2]})
    truth = pd.DataFrame({"user_id": [1], "item_id": ["a"]})
    result = evaluate(recs, truth, k=4, items=items_table(vectors))
    s = 1 / math.sqrt(2)
    mean_cos = (0 + s + s) / 3  # pairs ab, ac, bc
    assert result.per_user.loc[1, "intra_list_similarity"] == pytest.approx(mean_cos)
    assert result.per_user.loc[1, "diversity"] == pytest.approx(1 - mean_cos)
    assert np.isnan(result.per_user.loc[2, "diversity"])  # one featured item only
    assert result.metrics["diversity"] == pytest.approx(1 - mean_cos)
    assert result.left_out["recommendations_without_features"] == 2
    assert result.left_out["users_with_fewer_than_two_featured_items"] == 1


def test_a_one_item_list_is_left_out_or_as_lenskit_similar_to_itself():
    """User 2's list has one featured item (d has none): no pair, so no diversity by default;
    LensKit's ILS gives such a list 1, so diversity 0. A list of two keeps its pair's value
    and a list of no featured item stays out either way."""
    vectors = {"a": (1, 0), "b": (0, 1), "c": (1, 1)}
    recs = pd.DataFrame({"user_id": [1, 1, 2, 2, 3], "item_id": ["a", "b", "c", "d", "d"], "rank": [1, 2, 1, 2, 1]})
    truth = pd.DataFrame({"user_id": [1, 2, 3], "item_id": ["a", "c", "d"]})
    default = evaluate(recs, truth, k=2, items=items_table(vectors))
    lenskit = evaluate(recs, truth, k=2, items=items_table(vectors), one_item_lists="self")
    assert np.isnan(default.per_user.loc[2, "intra_list_similarity"]) and np.isnan(default.per_user.loc[2, "diversity"])
    assert lenskit.per_user.loc[2, "intra_list_similarity"] == 1.0 and lenskit.per_user.loc[2, "diversity"] == 0.0
    for result in (default, lenskit):
        assert result.per_user.loc[1, "intra_list_similarity"] == 0.0 and result.per_user.loc[1, "diversity"] == 1.0
        assert np.isnan(result.per_user.loc[3, "diversity"])
    assert default.metrics["diversity"] == 1.0 and lenskit.metrics["diversity"] == 0.5
    assert default.left_out["users_with_fewer_than_two_featured_items"] == 2
    assert lenskit.left_out["users_with_fewer_than_two_featured_items"] == 1


def test_opposite_items_have_diversity_two():
    recs = pd.DataFrame({"user_id": [1, 1], "item_id": ["a", "b"], "rank": [1, 2]})
    result = evaluate(recs, pd.DataFrame({"user_id": [1], "item_id": ["a"]}), k=2,
                      items=items_table({"a": (1, 0), "b": (-1, 0)}))
    assert result.metrics["diversity"] == pytest.approx(2.0)


def test_novelty_arp_and_serendipity_by_hand():
    train = pd.DataFrame({"user_id": [1, 1, 2, 3], "item_id": ["a", "b", "a", "a"]})
    recs = pd.DataFrame({"user_id": [1, 1, 2, 2], "item_id": ["c", "a", "b", "z"], "rank": [1, 2, 1, 2]})
    truth = pd.DataFrame({"user_id": [1, 2], "item_id": ["c", "b"]})
    items = items_table({"a": (1, 0), "b": (0, 1), "c": (1, 1), "z": (1, 0)})
    result = evaluate(recs, truth, k=2, train=train, items=items)
    u = result.per_user
    # 3 training users; a: 3 users, b: 1 user; c and z unknown to training
    assert u.loc[1, "novelty"] == pytest.approx(-math.log2(3 / 3))
    assert u.loc[2, "novelty"] == pytest.approx(-math.log2(1 / 3))
    assert result.left_out["recommendations_unknown_to_training"] == 2
    assert u.loc[1, "arp"] == pytest.approx((0 + 3) / 2)
    assert u.loc[2, "arp"] == pytest.approx((1 + 0) / 2)
    assert result.metrics["arp_normalised"] == pytest.approx(result.metrics["arp"] / 3)
    # user 1: relevant c=(1,1)/√2 against history {a=(1,0), b=(0,1)}: mean cos = 1/√2
    assert u.loc[1, "serendipity"] == pytest.approx(1 - 1 / math.sqrt(2))
    # user 2: relevant b against history {a}: cos 0
    assert u.loc[2, "serendipity"] == pytest.approx(1.0)


def test_user_without_history_has_no_serendipity():
    train = pd.DataFrame({"user_id": [1], "item_id": ["a"]})
    recs = pd.DataFrame({"user_id": [1, 2], "item_id": ["b", "b"], "rank": [1, 1]})
    truth = pd.DataFrame({"user_id": [1, 2], "item_id": ["b", "b"]})
    result = evaluate(recs, truth, k=1, train=train, items=items_table({"a": (1, 0), "b": (1, 1)}))
    assert np.isnan(result.per_user.loc[2, "serendipity"])
    assert result.left_out["users_without_history"] == 1


def test_score_entropy_per_user():
    recs = pd.DataFrame({"user_id": [1, 1, 2, 2], "item_id": ["a", "b", "a", "b"], "score": [1.0, 1.0, 10.0, 0.0]})
    result = evaluate(recs, pd.DataFrame({"user_id": [1], "item_id": ["a"]}), k=2)
    assert result.per_user.loc[1, "score_entropy"] == pytest.approx(math.log(2))
    p = np.exp([10.0, 0.0]) / np.exp([10.0, 0.0]).sum()
    assert result.per_user.loc[2, "score_entropy"] == pytest.approx(-np.sum(p * np.log(p)))
    # unlike a pooled softmax, doubling the users does not change it
    twice = pd.concat([recs, recs.assign(user_id=recs.user_id + 10)])
    again = evaluate(twice, pd.DataFrame({"user_id": [1], "item_id": ["a"]}), k=2)
    assert again.metrics["score_entropy"] == pytest.approx(result.metrics["score_entropy"])


@pytest.mark.parametrize(("k", "every_user", "score_type"), [(4, True, np.float64), (6, False, np.float32),
                                                              (9, False, np.float64)])
def test_score_entropy_compiled_and_numpy_equal_a_user_by_user_reading(k, every_user, score_type, monkeypatch):
    """The compiled pass (large inputs) and numpy's blocks (small ones) give, user by user, the
    entropy of a softmax over the user's top-K scores read one at a time: empty cells anywhere,
    users without a score, ties, spreads that overflow exp unshifted, float32 scores, a subset
    of users, K below and above the scores kept."""
    from metrics_core.metrics import scores as scores_module

    rng = np.random.default_rng(k)
    cells = (rng.normal(size=(300, 8)) * rng.choice([1.0, 1e3], size=(300, 1))).astype(score_type)
    cells[rng.random(cells.shape) < 0.3] = np.nan
    cells[:5] = np.nan  # users without a score
    cells[5:10] = 2.5  # ties: ln K
    rows = np.arange(300) if every_user else np.flatnonzero((rng.random(300) < 0.7) | (np.arange(300) < 10))

    def by_hand(user: int) -> float:
        present = [float(value) for value in cells[user, :k] if not np.isnan(value)]
        if not present:
            return math.nan
        peak = max(present)
        weights = [math.exp(value - peak) for value in present]
        p = [w / sum(weights) for w in weights]
        return max(0.0, -sum(q * math.log(q) for q in p if q > 0))

    expected = np.array([by_hand(user) for user in rows])
    by_numpy = scores_module.score_entropy(cells, None if every_user else rows, k)
    compiled_loops(monkeypatch)
    compiled = scores_module.score_entropy(cells, None if every_user else rows, k)
    for found in (by_numpy, compiled):
        np.testing.assert_array_equal(np.isnan(found), np.isnan(expected))
        np.testing.assert_allclose(found, expected, rtol=1e-12, atol=1e-12)
    assert np.isnan(expected).sum() >= 5 and np.isclose(expected, math.log(min(k, 8))).any()


def test_categorical_and_embedding_features():
    items = pd.DataFrame({"item_id": ["a", "b", "c"], "genre": ["x", "x", "y"],
                          "emb": [[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]]})
    recs = pd.DataFrame({"user_id": [1, 1, 1], "item_id": ["a", "b", "c"], "rank": [1, 2, 3]})
    truth = pd.DataFrame({"user_id": [1], "item_id": ["a"]})
    by_genre = evaluate(recs, truth, k=3, items=items, feature_columns=["genre"])
    assert by_genre.metrics["intra_list_similarity"] == pytest.approx(1 / 3)  # only a-b share a genre
    by_embedding = evaluate(recs, truth, k=3, items=items, embedding_column="emb")
    assert by_embedding.metrics["intra_list_similarity"] == pytest.approx(1 / 3)  # only a-c align


def test_bad_item_features_are_clear_errors():
    recs = pd.DataFrame({"user_id": [1], "item_id": ["a"], "rank": [1]})
    truth = pd.DataFrame({"user_id": [1], "item_id": ["a"]})
    mixed = pd.DataFrame({"item_id": ["a", "b"], "size": ["3", "big"]})
    with pytest.raises(InputError, match="mixes numbers and text") as e:
        evaluate(recs, truth, items=mixed, feature_columns=["size"])
    assert "row 1" in str(e.value)
    uneven = pd.DataFrame({"item_id": ["a", "b", "c"], "emb": [[1.0, 2.0], [1.0, 2.0], [1.0]]})
    with pytest.raises(InputError, match="uneven lengths") as e:
        evaluate(recs, truth, items=uneven, embedding_column="emb")
    assert "row 2" in str(e.value)


def slow_beyond(lists: dict, vectors: dict, history: dict, relevant: dict, one_item_lists: str = "leave_out"):
    """Per pair, per user, by the definitions (``self``: one featured item's similarity is 1)."""
    def cos(a, b):
        return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))

    out = {}
    for user, items in lists.items():
        featured = [i for i in items if i in vectors]
        pairs = list(itertools.combinations(featured, 2))
        ils = np.mean([cos(vectors[a], vectors[b]) for a, b in pairs]) if pairs else \
            1.0 if len(featured) == 1 and one_item_lists == "self" else np.nan
        hist = [h for h in history.get(user, []) if h in vectors]
        hits = [i for i in featured if i in relevant.get(user, set())]
        ser = np.mean([1 - np.mean([cos(vectors[i], vectors[h]) for h in hist]) for i in hits]) \
            if hits and hist else np.nan
        out[user] = (ils, ser)
    return out


@pytest.mark.parametrize("seed, one_item_lists", [(0, "leave_out"), (1, "self"), (2, "leave_out"), (3, "self")])
def test_fast_equals_slow_pairwise(seed, one_item_lists):
    rng = np.random.default_rng(seed)
    n_items, n_users, k = 25, 30, 6
    vectors = {i: rng.normal(size=4) for i in range(n_items) if rng.random() > 0.15}
    rows, lists = [], {}
    for user in range(n_users):
        items = list(rng.choice(n_items, size=int(rng.integers(1, 9)), replace=False))
        lists[user] = items[:k]
        rows += [(user, int(i), r + 1) for r, i in enumerate(items)]
    history = {u: list(rng.choice(n_items, size=int(rng.integers(0, 6)), replace=False)) for u in range(n_users)}
    relevant = {u: set(rng.choice(n_items, size=5, replace=False).tolist()) for u in range(n_users)}
    train = pd.DataFrame([(u, int(i)) for u, items in history.items() for i in items], columns=["user_id", "item_id"])
    truth = pd.DataFrame([(u, int(i)) for u, items in relevant.items() for i in items], columns=["user_id", "item_id"])
    items = items_table(vectors)
    result = Dataset.build(pd.DataFrame(rows, columns=["user_id", "item_id", "rank"]), truth, train=train,
                           items=items).evaluate(settings=Settings(k=k, one_item_lists=one_item_lists))
    want = slow_beyond(lists, vectors, history, relevant, one_item_lists)
    for user, (ils, ser) in want.items():
        np.testing.assert_allclose(result.per_user.loc[user, "intra_list_similarity"], ils, atol=1e-12)
        np.testing.assert_allclose(result.per_user.loc[user, "serendipity"], ser, atol=1e-12)
    # personalization against all pairs of users
    overlaps = [len(set(lists[a]) & set(lists[b])) / k for a, b in itertools.combinations(range(n_users), 2)]
    assert result.metrics["personalization"] == pytest.approx(1 - np.mean(overlaps))


def test_accuracy_only_evaluation_lists_every_beyond_metric_as_skipped(three_users):
    recs, truth, train = three_users
    dataset = Dataset.build(recs, truth, train=train)
    full = dataset.evaluate(settings=Settings(k=3))
    only = dataset.evaluate(settings=Settings(k=3), beyond=False)
    assert {m: only.metrics[m] for m in only.metrics} == {m: full.metrics[m] for m in only.metrics}
    assert "coverage" in full.metrics and "coverage" not in only.metrics
    assert only.skipped["coverage"] == "not requested (beyond=False)"


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("unknown", ["leave_out", "one_user"])
def test_novelty_and_its_unknown_recommendations_are_the_same_on_the_compiled_loops(seed, unknown, monkeypatch):
    """Novelty per user at K and the recommendations of items unknown to training, counted in
    the same compiled pass (prefix_kernels.cell_means_at_k), equal numpy's gathers; so does ARP."""
    rng = np.random.default_rng(seed)
    top = rng.integers(0, 30, (40, 7))
    top[rng.random(top.shape) < 0.2] = -1
    users_of = np.where(rng.random(30) < 0.3, 0, rng.integers(1, 50, 30))  # (a third of the items unknown)
    by_numpy = popularity.novelty(top[:, :5], users_of, 60, unknown)
    arp_numpy = popularity.average_recommendation_popularity(top[:, :5], users_of, "leave_out")
    compiled_loops(monkeypatch)
    compiled = popularity.novelty(top[:, :5], users_of, 60, unknown)
    assert compiled[1] == by_numpy[1] == int(((top[:, :5] >= 0) & (users_of[top[:, :5]] == 0)).sum()) > 0
    np.testing.assert_array_equal(compiled[0], by_numpy[0])
    np.testing.assert_array_equal(popularity.average_recommendation_popularity(top[:, :5], users_of, "leave_out"),
                                  arp_numpy)
