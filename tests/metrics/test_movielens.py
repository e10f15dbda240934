"""Real data: the four MovieLens 100k lists (internal, skipped when ../shared is absent), and
agreement with ranx and pytrec_eval (the ``peers`` extra, skipped when not installed)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from metrics_core import Columns, Dataset, Settings, evaluate
from tests.reference import ordered_lists, relevant_grades, user_metrics

MODELS = ("popular", "itemknn", "puresvd", "random")
GRADED = Columns(relevance="rating", threshold=4)
COMPARED = {"precision": "P_10", "recall": "recall_10", "ndcg": "ndcg_cut_10", "map": "map_cut_10", "mrr": "recip_rank"}


@pytest.fixture(scope="module")
def data():
    from tests.conftest import MOVIELENS_RECS

    if not MOVIELENS_RECS.is_dir():
        pytest.skip("internal MovieLens data (../shared/datasets) is not available")
    recs = {m: pd.read_csv(MOVIELENS_RECS / f"recs_{m}.csv") for m in MODELS}
    test = pd.read_csv(MOVIELENS_RECS / "test.csv")
    train = pd.read_csv(MOVIELENS_RECS / "train.csv")
    return recs, test, train


def test_four_models_rank_as_expected(data):
    recs, test, train = data
    dataset = Dataset.build(recs, test, train=train, columns=GRADED)
    results = dataset.evaluate_all(Settings(k=10))
    ndcg = {m: r.metrics["ndcg"] for m, r in results.items()}
    assert ndcg["puresvd"] > ndcg["popular"] > ndcg["random"]
    assert ndcg["itemknn"] > ndcg["random"]
    for result in results.values():
        assert result.users == {"evaluated": 908, "without_relevant": 35, "without_recommendations": 0}
        assert 0.5 < result.metrics["lauc"] < 1.0 or result.model == "random"


def test_matches_the_slow_definitions_on_itemknn(data):
    recs, test, _ = data
    frame = recs["itemknn"]
    result = evaluate(frame, test, k=20, columns=GRADED, gain="exponential")
    result.per_user = result.per_user[result.per_user["evaluated"]]
    lists = ordered_lists(list(frame[["user_id", "item_id", "rank", "score"]].itertuples(index=False, name=None)))
    grades = relevant_grades(test[["user_id", "item_id", "rating"]].itertuples(index=False, name=None), 4)
    for metric in ("precision", "recall", "fbeta", "ap", "ar", "ndcg", "rr"):
        want = [user_metrics(lists[u], grades[u], 20, gain="exponential")[metric] for u in result.per_user.index]
        np.testing.assert_allclose(result.per_user[metric], want, atol=1e-12, err_msg=metric)


def judged_qrels(truth: pd.DataFrame, threshold: int = 4) -> dict:
    """Every ground-truth row as qrels: a rating from ``threshold`` is its grade (relevant, its NDCG
    gain), a lower one 0 (judged non-relevant; trec_eval's NDCG would take any positive grade as a
    gain, whatever its relevance level)."""
    return _as_trec(truth.assign(rating=truth["rating"].where(truth["rating"] >= threshold, 0)), "rating", int)


def _as_trec(frame: pd.DataFrame, value: str, kind=float) -> dict:
    out: dict = {}
    for user, item, v in frame[["user_id", "item_id", value]].itertuples(index=False):
        out.setdefault(str(user), {})[str(item)] = kind(v)
    return out


@pytest.mark.parametrize("model", MODELS)
def test_trec_eval_preset_equals_pytrec_eval(data, model):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    recs, test, _ = data
    evaluator = pytrec_eval.RelevanceEvaluator(judged_qrels(test), set(COMPARED.values()))
    per_query = evaluator.evaluate(_as_trec(recs[model], "score"))
    ours = evaluate(recs[model], test, k=10, columns=GRADED, preset="trec_eval")
    # trec_eval averages over the users in both files, those judged without a relevant item as 0
    assert len(per_query) == ours.users["evaluated"]
    for name, measure in COMPARED.items():
        theirs = np.mean([values[measure] for values in per_query.values()])
        assert ours.metrics[name] == pytest.approx(theirs, abs=1e-12), name


@pytest.mark.parametrize("model", MODELS)
def test_ranx_preset_equals_ranx(data, model):
    ranx = pytest.importorskip("ranx")
    recs, test, _ = data
    relevant = test[test.rating >= 4]
    qrels = ranx.Qrels(_as_trec(relevant, "rating", int))
    run = ranx.Run(_as_trec(recs[model], "score"))
    names = {"precision": "precision@10", "recall": "recall@10", "ndcg": "ndcg@10", "map": "map@10",
             "mrr": "mrr@10", "hit_rate": "hit_rate@10"}
    theirs = ranx.evaluate(qrels, run, list(names.values()), make_comparable=True)
    ours = evaluate(recs[model], test, k=10, columns=GRADED, preset="ranx")
    for name, measure in names.items():
        assert ours.metrics[name] == pytest.approx(theirs[measure], abs=1e-12), name


def test_default_differs_from_trec_eval_only_where_the_definitions_do(data):
    """Default AP divides by min(K, R), trec_eval's map_cut by R: ours is never lower."""
    recs, test, _ = data
    default = evaluate(recs["puresvd"], test, k=10, columns=GRADED, order="score", tie_break="item_desc")
    trec = evaluate(recs["puresvd"], test, k=10, columns=GRADED, preset="trec_eval")
    assert default.metrics["map"] >= trec.metrics["map"]
    # the same NDCG per user; trec_eval also averages the users judged without a relevant item, as 0
    assert default.metrics["ndcg"] * default.users["evaluated"] == pytest.approx(
        trec.metrics["ndcg"] * trec.users["evaluated"], abs=1e-9)
    assert default.metrics["mrr"] * default.users["evaluated"] <= trec.metrics["mrr"] * trec.users["evaluated"]


def test_beyond_accuracy_on_movielens(data):
    from tests.conftest import MOVIELENS_RECS

    recs, test, train = data
    items = pd.read_csv(MOVIELENS_RECS / "items.csv")
    users = pd.read_csv(MOVIELENS_RECS / "users.csv")
    genres = [c for c in items.columns if c not in ("item_id", "title", "release_year", "genre")]
    dataset = Dataset.build(recs, test, train=train, items=items, users=users, columns=GRADED,
                            feature_columns=genres)
    results = dataset.evaluate_all(Settings(k=10))
    popular, random = results["popular"].metrics, results["random"].metrics
    assert popular["novelty"] < random["novelty"]
    assert popular["arp"] > random["arp"]
    assert popular["coverage"] < random["coverage"]
    assert popular["gini"] > random["gini"]
    assert popular["personalization"] < random["personalization"]
    for result in results.values():
        assert 0 <= result.metrics["diversity"] <= 2
        assert 0 <= result.metrics["serendipity"] <= 2
    bias = dataset.item_bias("popular", "genre", k=10)
    assert 0 < bias.statistic <= 1
    ages = dataset.user_bias("age")
    assert ages.divergence == "ks" and 0 <= ages.p_value <= 1
    (case,) = dataset.cases([1], k=10, item_columns=["title"])
    assert len(case.recommendations) == 40 and case.history["title"].notna().all()
