"""The fast array code must equal the slow per-user definitions on messy random data."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from metrics_core import Columns, Dataset, Settings
from metrics_core.metrics.accuracy import passes
from metrics_core.metrics.registry import REGISTRY
from tests.reference import judged_nonrelevant, ordered_lists, relevant_grades, user_metrics


def messy_data(seed: int, n_users: int = 40, n_items: int = 30, use_rank: bool = True):
    """Lists with short lengths, rank gaps, duplicate items, tied scores; graded truth."""
    rng = np.random.default_rng(seed)
    rows = []
    for user in range(n_users):
        length = int(rng.integers(0, 12))
        items = rng.integers(0, n_items, length)
        if use_rank:
            ranks = np.sort(rng.choice(np.arange(1, 16), size=length, replace=False))
            rng.shuffle(ranks)
            rows += [(user, int(i), int(r), 0.0) for i, r in zip(items, ranks, strict=True)]
        else:
            scores = rng.integers(0, 4, length) / 4  # many ties
            rows += [(user, int(i), 0, float(s)) for i, s in zip(items, scores, strict=True)]
    order = rng.permutation(len(rows))
    rows = [rows[i] for i in order]
    truth_rows = []
    for user in range(n_users + 5):  # a few users with truth and no list
        for item in rng.choice(n_items, size=int(rng.integers(0, 6)), replace=False):
            truth_rows.append((user, int(item), int(rng.integers(0, 4))))
    truth_rows += truth_rows[:3]  # duplicate truth rows
    return rows, truth_rows


# every accuracy metric with a curve, by its per-user column (the slow definitions' key)
REGISTRY_BY_NAME = {m.name: m for m in REGISTRY}
CURVES = {m.name: m.per_user for m in REGISTRY if m.family == "accuracy" and m.curve and m.per_user}


def test_every_accuracy_entry_of_the_registry_has_a_slow_definition():
    """A metric added to the registry is checked against a slow definition in tests/reference.py,
    or this fails naming it: every per-user accuracy column, and every curve, is cross-checked."""
    slow = user_metrics([1, 2, None, 3], {2: 1.0, 5: 2.0}, 3, candidates=10, judged={1})
    missing = [m.name for m in REGISTRY if m.family == "accuracy" and m.per_user and m.per_user not in slow]
    assert missing == [], f"give these a slow definition in tests/reference.py: {missing}"
    assert set(CURVES) >= {"precision", "ndcg", "lauc", "bpref"}  # (the derivation finds the curves)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("use_rank", [True, False])
@pytest.mark.parametrize("candidates", [40, 6, None])  # 6: fewer than a list's places; None: no LAUC/MCC
def test_fast_equals_slow_on_random_data(seed, use_rank, candidates):
    rows, truth_rows = messy_data(seed, use_rank=use_rank)
    recs = pd.DataFrame(rows, columns=["user_id", "item_id", "rank", "score"])
    recs = recs.drop(columns=["score"] if use_rank else ["rank"])
    truth = pd.DataFrame(truth_rows, columns=["user_id", "item_id", "grade"])
    dataset = Dataset.build(recs, truth, columns=Columns(relevance="grade", threshold=1))
    lists, list_scores = ordered_lists(rows, use_rank, with_scores=True)
    grades = relevant_grades(truth_rows, threshold=1)
    judged = judged_nonrelevant(truth_rows, threshold=1)
    rng = np.random.default_rng(seed)
    for k in (1, 3, 10, 17):
        options = {
            "beta": float(rng.choice([0.5, 1.0, 2.0])),
            "ap_denominator": str(rng.choice(["min_k_relevant", "relevant", "hits", "k"])),
            "gain": [{1.0: 3.0, 2.0: 9.0}, "linear", "exponential", "binary",
                     {1.0: 3.0, 2.0: 9.0, 3.0: 4.5}][rng.integers(0, 5)],  # (the last falls: trec_eval allows it)
            "precision_denominator": str(rng.choice(["k", "list", "min_k_relevant"])),
            "rbp_p": float(rng.choice([0.5, 0.8, 0.95])),
            "ndcg_ideal": str(rng.choice(["cut_at_k", "all_relevant", "k_relevant"])),
            "rr_cutoff": bool(rng.integers(0, 2)),
            "recall_levels": str(rng.choice(["round", "add_0.9"])),
            "dcg_log_base": float(rng.choice([2.0, math.e, 10.0])),
            "false_positives": str(rng.choice(["listed", "k"])),
            "dcg_discount": str(rng.choice(["log2", "lenskit"])),
            "rbp_gain": str(rng.choice(["binary", "scaled", "grade"])),
            "rbp_max_grade": [None, 2.0][rng.integers(0, 2)],
            "dcg_ties": str(rng.choice(["order", "average"])),
            "ee_patience": float(rng.choice([0.5, 0.8])),
        }
        judged_only = bool(rng.integers(0, 2))  # trec_eval's -J: each list condensed to its judged items
        kept = {u: [i is not None and (not judged_only or i in grades.get(u, {}) or i in judged.get(u, set()))
                    for i in items] for u, items in lists.items()}
        seen = {u: [i for i, keep in zip(items, kept[u], strict=True) if keep or not judged_only]
                for u, items in lists.items()}
        scored = {u: None if use_rank else [s for s, keep in zip(list_scores[u], kept[u], strict=True)
                                            if keep or not judged_only] for u in lists}
        users = [u for u in grades if grades[u]]
        top_grade = max(g for u in users for g in grades[u].values())
        expected = {u: user_metrics(seen.get(u, []), grades[u], k, candidates=candidates, judged=judged.get(u, set()),
                                    top_grade=top_grade, scores=scored.get(u), **options) for u in users}
        for curves in (False, True):  # (False, without candidates: at K alone from the hit cells)
            result = dataset.evaluate(settings=Settings(k=k, candidates=candidates, judged_only=judged_only, **options),
                                      curves=curves)
            result.per_user = result.per_user[result.per_user["evaluated"]]
            assert sorted(result.per_user.index) == sorted(users)
            for metric in expected[users[0]]:
                want = np.array([expected[u][metric] for u in result.per_user.index])
                np.testing.assert_allclose(result.per_user[metric].to_numpy(), want, atol=1e-12,
                                           err_msg=f"{metric} at k={k} {options} curves={curves}")
        # the curve at every k equals the mean of the per-user definitions at that k
        for kk in (1, k // 2 + 1, k, int(result.curves.index[-1])):  # the last: the longest list, or K beyond it
            slow = [user_metrics(seen.get(u, []), grades[u], kk, candidates=candidates, judged=judged.get(u, set()),
                                 top_grade=top_grade, scores=scored.get(u), **options) for u in users]
            for curve, metric in CURVES.items():
                if "candidates" in REGISTRY_BY_NAME[curve].needs and candidates is None:
                    assert curve not in result.curves.columns
                    continue
                want = np.mean([values[metric] for values in slow])
                assert result.curves.loc[kk, curve] == pytest.approx(want, abs=1e-12), (curve, kk)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("candidates", [40, None])  # None: at K alone from the hit cells
@pytest.mark.parametrize("relevance", ["grade", None])  # grade: graded, with judged non-relevant items
def test_without_curves_the_values_at_k_are_the_same(seed, candidates, relevance):
    rows, truth_rows = messy_data(seed)
    recs = pd.DataFrame(rows, columns=["user_id", "item_id", "rank", "score"]).drop(columns=["score"])
    truth = pd.DataFrame(truth_rows, columns=["user_id", "item_id", "grade"])
    dataset = Dataset.build(recs, truth if relevance else truth.drop(columns=["grade"]),
                            columns=Columns(relevance=relevance, threshold=1))
    rng = np.random.default_rng(seed)
    for k in (1, 4, 20):
        settings = Settings(k=k, candidates=candidates, rr_cutoff=bool(rng.integers(0, 2)),
                            gain=str(rng.choice(["linear", "exponential", "binary"])),
                            ndcg_ideal=str(rng.choice(["cut_at_k", "all_relevant", "k_relevant"])),
                            ap_denominator=str(rng.choice(["min_k_relevant", "relevant", "k"])),
                            precision_denominator=str(rng.choice(["k", "min_k_relevant"])),
                            users_without_relevant=str(rng.choice(["zero", "exclude"])))
        full = dataset.evaluate(settings=settings)
        short = dataset.evaluate(settings=settings, curves=False)
        assert short.metrics == pytest.approx(full.metrics, rel=1e-12, abs=1e-15)
        pd.testing.assert_frame_equal(short.per_user, full.per_user, check_exact=False, rtol=1e-12, atol=1e-15)
        assert list(short.curves.index) == [k]
        pd.testing.assert_series_equal(short.curves.loc[k], full.curves.loc[k], rtol=1e-12)


def both_paths(dataset: Dataset, settings: Settings, monkeypatch):
    """The accuracy results from the hit cells (the default path) and from the per-user path."""
    from_hits = dataset.evaluate(settings=settings, beyond=False)
    with monkeypatch.context() as patched:
        patched.setattr(passes, "totals_follow_from_hits", lambda *_: False)
        per_user = dataset.evaluate(settings=settings, beyond=False)
    return from_hits, per_user


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("gain", ["linear", "binary", {1.0: 3.0, 2.0: 9.0}, {1.0: 3.0, 2.0: 9.0, 3.0: 4.5}])
@pytest.mark.parametrize("ndcg_ideal", ["cut_at_k", "all_relevant", "k_relevant"])
def test_curves_from_hit_cells_equal_the_per_user_curves(seed, gain, ndcg_ideal, monkeypatch):
    """Every k's sums read from the hit cells (the default path) equal the sums of the per-user
    values at every k (the path that candidates, list precision or AP over hits take)."""
    rows, truth_rows = messy_data(seed, n_users=60)
    recs = pd.DataFrame(rows, columns=["user_id", "item_id", "rank", "score"]).drop(columns=["score"])
    dataset = Dataset.build(recs, pd.DataFrame(truth_rows, columns=["user_id", "item_id", "grade"]),
                            columns=Columns(relevance="grade", threshold=1))
    rng = np.random.default_rng(seed)
    for k in (1, 5, 40):
        settings = Settings(k=k, gain=gain, ndcg_ideal=ndcg_ideal, beta=float(rng.choice([0.5, 2.0])),
                            ap_denominator=str(rng.choice(["min_k_relevant", "relevant", "k"])),
                            precision_denominator=str(rng.choice(["k", "min_k_relevant"])),
                            rr_cutoff=bool(rng.integers(0, 2)),
                            users_without_relevant=str(rng.choice(["zero", "exclude"])))
        assert passes.totals_follow_from_hits(settings, None)
        from_hits, per_user = both_paths(dataset, settings, monkeypatch)
        assert list(from_hits.curves.columns) == list(per_user.curves.columns)
        pd.testing.assert_frame_equal(from_hits.curves, per_user.curves, rtol=1e-12, atol=1e-14)
        pd.testing.assert_frame_equal(from_hits.per_user, per_user.per_user, rtol=1e-12, atol=1e-14)


def test_graded_ndcg_curves_keep_every_users_digits(monkeypatch):
    """Users whose gains are a million times apart: each user's running IDCG and DCG are its own
    sums, so the curves from the hit cells equal the per-user path's to the last digits (a
    running sum over all users less each one's start is off by about 1e-7 here)."""
    rng = np.random.default_rng(7)
    n_users, length = 400, 30
    recs = pd.DataFrame({"user_id": np.repeat(np.arange(n_users), length),
                         "item_id": np.concatenate([rng.choice(200, length, replace=False) for _ in range(n_users)]),
                         "rank": np.tile(np.arange(1, length + 1), n_users)})
    truth = recs.sample(frac=0.5, random_state=1).assign(
        grade=lambda t: np.where(t["user_id"] % 2 == 0, 1, 3) + rng.integers(0, 2, len(t)))
    dataset = Dataset.build(recs, truth[["user_id", "item_id", "grade"]], columns=Columns(relevance="grade"))
    settings = Settings(k=10, gain={1.0: 1e-3, 2.0: 2e-3, 3.0: 1e6, 4.0: 3e6})
    from_hits, per_user = both_paths(dataset, settings, monkeypatch)
    np.testing.assert_allclose(from_hits.curves["ndcg"], per_user.curves["ndcg"], rtol=1e-14)


def test_graded_ndcg_curves_with_users_far_more_relevant_items_than_ranks(monkeypatch):
    """Users with hundreds of relevant items and lists of 12: the curves from the hit cells
    equal the per-user path's (their IDCG is never needed past the deepest reported k)."""
    rng = np.random.default_rng(11)
    n_users, length = 50, 12
    recs = pd.DataFrame({"user_id": np.repeat(np.arange(n_users), length),
                         "item_id": np.concatenate([rng.choice(2000, length, replace=False) for _ in range(n_users)]),
                         "rank": np.tile(np.arange(1, length + 1), n_users)})
    listed = recs.sample(frac=0.4, random_state=2)[["user_id", "item_id"]]
    deep = pd.DataFrame({"user_id": np.repeat([0, 1, 2], [600, 300, 20]),
                         "item_id": np.concatenate([np.arange(3000, 3000 + n) for n in (600, 300, 20)])})
    truth = pd.concat([listed, deep]).drop_duplicates(["user_id", "item_id"])
    truth["grade"] = rng.integers(1, 4, len(truth))
    dataset = Dataset.build(recs, truth, columns=Columns(relevance="grade"))
    for k in (5, 12, 400):
        settings = Settings(k=k, gain="exponential")
        from_hits, per_user = both_paths(dataset, settings, monkeypatch)
        pd.testing.assert_frame_equal(from_hits.curves, per_user.curves, rtol=1e-12, atol=1e-14)
        pd.testing.assert_frame_equal(from_hits.per_user, per_user.per_user, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("gain", ["linear", "exponential", ((1.0, 3.0), (2.0, 9.0), (4.0, 4.5))])
@pytest.mark.parametrize("seed", range(3))
def test_the_compiled_ideal_dcg_is_the_rank_by_rank_sum(seed, gain, monkeypatch):
    """IDCG at a few ranks deep of graded truth (users with fewer relevant items than the depth,
    and more; none), by the compiled pass and by numpy's sum rank by rank: the same values."""
    from metrics_core.metrics.accuracy import ideal
    from tests.compiled import compiled_loops

    rows, truth_rows = messy_data(seed)
    truth = Dataset.build(pd.DataFrame(rows, columns=["user_id", "item_id", "rank", "score"]).drop(columns="score"),
                          pd.DataFrame(truth_rows, columns=["user_id", "item_id", "grade"]),
                          columns=Columns(relevance="grade", threshold=1)).truth
    part = np.arange(len(truth.relevant_count))[::-1].copy()[: len(truth.relevant_count) - 3]
    for depth in (1, 3, 7):
        compiled_loops(monkeypatch, False)
        by_numpy = ideal.ideal_dcg_at(truth, part, depth, gain)
        compiled_loops(monkeypatch)
        compiled = ideal.ideal_dcg_at(truth, part, depth, gain)
        np.testing.assert_array_equal(compiled, by_numpy)
        assert (by_numpy == 0).any() and (by_numpy > 1).any()
