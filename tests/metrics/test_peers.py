"""Agreement with ranx and pytrec_eval on generated data (runs without ../shared).

Where the definitions agree the numbers must be equal; the presets make them agree:
trec_eval and ranx divide AP by R and order lists by score (trec_eval breaks ties by
document id, descending, and does not cut RR at K).
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from dashboard.demo import generate
from metrics_core import Columns, evaluate
from tests.metrics.test_movielens import COMPARED, _as_trec, judged_qrels

GRADED = Columns(relevance="rating", threshold=4)


def QRELS(tables) -> dict:  # noqa: N802 (a constant's way of reading)
    """Every ground-truth row as qrels: a rating from 4 is its grade (relevant, its NDCG gain), a
    lower one 0 (judged non-relevant: trec_eval's NDCG would take any positive grade as a gain)."""
    return judged_qrels(tables["ground_truth"])


@pytest.fixture(scope="module")
def demo():
    tables = generate(n_users=400, n_items=300, seed=11)
    return tables, tables["ground_truth"][tables["ground_truth"].rating >= 4]


@pytest.mark.parametrize("model", ["recs_popularity", "recs_personalised", "recs_diverse"])
def test_trec_eval_preset(demo, model):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    tables, _relevant = demo
    per_query = pytrec_eval.RelevanceEvaluator(QRELS(tables), set(COMPARED.values())).evaluate(
        _as_trec(tables[model], "score"))
    listed = set(tables[model].user_id.astype(str))
    ours = evaluate(tables[model], tables["ground_truth"], k=10, columns=GRADED, preset="trec_eval")
    # trec_eval averages over the users in both files, a user judged without a relevant item as 0
    assert len(per_query) == ours.users["evaluated"] and set(per_query) <= listed
    for name, measure in COMPARED.items():
        theirs = sum(v[measure] for v in per_query.values()) / len(per_query)
        assert ours.metrics[name] == pytest.approx(theirs, abs=1e-12), name


@pytest.mark.parametrize("model", ["recs_popularity", "recs_personalised", "recs_diverse"])
def test_judged_only_equals_trec_evals_condensed_lists(demo, model):
    """``judged_only`` is trec_eval's -J (pytrec_eval's judged_docs_only_flag): every item without a
    ground-truth row leaves the list and the rest move up, for the measures at K and over the
    whole list alike; on these lists it changes the numbers."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    tables, _relevant = demo
    measures = {**COMPARED, "r_precision": "Rprec", "set_recall": "set_recall", "utility": "utility"}
    per_query = pytrec_eval.RelevanceEvaluator(QRELS(tables), {*measures.values(), "bpref"},
                                               judged_docs_only_flag=True).evaluate(_as_trec(tables[model], "score"))
    ours = evaluate(tables[model], tables["ground_truth"], k=10, columns=GRADED, preset="trec_eval", judged_only=True)
    whole = evaluate(tables[model], tables["ground_truth"], k=10, columns=GRADED, preset="trec_eval")
    assert len(per_query) == ours.users["evaluated"]
    for name, measure in measures.items():
        theirs = sum(v[measure] for v in per_query.values()) / len(per_query)
        assert ours.metrics[name] == pytest.approx(theirs, abs=1e-12), name
    longest = int(tables[model].groupby("user_id").size().max())  # (trec_eval's bpref reads the whole list)
    bpref = evaluate(tables[model], tables["ground_truth"], k=longest, columns=GRADED, preset="trec_eval",
                     judged_only=True).metrics["bpref"]
    assert bpref == pytest.approx(sum(v["bpref"] for v in per_query.values()) / len(per_query), abs=1e-12)
    assert ours.metrics["precision"] > whole.metrics["precision"]
    assert set(ours.per_user["judged"].dropna()) == {0.0, 1.0}  # every item left is judged (0: none is)


@pytest.mark.parametrize("model", ["recs_popularity", "recs_personalised"])
def test_ranx_preset(demo, model):
    ranx = pytest.importorskip("ranx")
    tables, relevant = demo
    names = {"precision": "precision@10", "recall": "recall@10", "ndcg": "ndcg@10", "map": "map@10",
             "mrr": "mrr@10", "hit_rate": "hit_rate@10", "dcg": "dcg@10"}
    theirs = ranx.evaluate(ranx.Qrels(_as_trec(relevant, "rating", int)), ranx.Run(_as_trec(tables[model], "score")),
                           list(names.values()), make_comparable=True)
    ours = evaluate(tables[model], tables["ground_truth"], k=10, columns=GRADED, preset="ranx")
    for name, measure in names.items():
        assert ours.metrics[name] == pytest.approx(theirs[measure], abs=1e-12), name


def test_where_definitions_differ_the_difference_is_the_documented_one(demo):
    """Default AP divides by min(K, R) <= R, so it is never below trec_eval's map_cut."""
    tables, _ = demo
    frame = pd.DataFrame(tables["recs_personalised"])
    ours = evaluate(frame, tables["ground_truth"], k=10, columns=GRADED, order="score", tie_break="item_desc")
    trec = evaluate(frame, tables["ground_truth"], k=10, columns=GRADED, preset="trec_eval")
    assert ours.metrics["map"] >= trec.metrics["map"]
    # the same hits; trec_eval also averages the users judged without a relevant item, as 0
    assert ours.metrics["precision"] * ours.users["evaluated"] == pytest.approx(
        trec.metrics["precision"] * trec.users["evaluated"], abs=1e-9)
    assert trec.users["evaluated"] > ours.users["evaluated"]


@pytest.mark.parametrize("model", ["recs_popularity", "recs_personalised"])
def test_whole_list_measures_equal_trec_eval(demo, model):
    """R-precision, the set measures and utility look at the whole list, as trec_eval does."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    tables, _relevant = demo
    measures = {"r_precision": "Rprec", "set_precision": "set_P", "set_recall": "set_recall", "set_map": "set_map",
                "utility": "utility"}
    per_query = pytrec_eval.RelevanceEvaluator(QRELS(tables), set(measures.values())).evaluate(
        _as_trec(tables[model], "score"))
    ours = evaluate(tables[model], tables["ground_truth"], k=5, columns=GRADED, preset="trec_eval")
    for name, measure in measures.items():
        theirs = sum(v[measure] for v in per_query.values()) / len(per_query)
        assert ours.metrics[name] == pytest.approx(theirs, abs=1e-12), name


@pytest.mark.parametrize("persistence", [0.5, 0.8, 0.95])
def test_rbp_and_r_precision_equal_ranx(demo, persistence):
    """ranx weighs an RBP hit by its raw grade (the ranx preset's ``rbp_gain="grade"``); with the
    grades made 1, its RBP is Moffat and Zobel's, rankscope's default."""
    ranx = pytest.importorskip("ranx")
    tables, relevant = demo
    recs = tables["recs_personalised"]
    longest = int(recs.groupby("user_id").size().max())  # ranx reads the whole run
    name = f"rbp.{str(persistence)[2:]}"
    run = ranx.Run(_as_trec(recs, "score"))
    graded = ranx.evaluate(ranx.Qrels(_as_trec(relevant, "rating", int)), run, [name, "r-precision"],
                           make_comparable=True)
    binary = ranx.evaluate(ranx.Qrels(_as_trec(relevant.assign(rating=1), "rating", int)), run, name,
                           make_comparable=True)
    ours = evaluate(recs, tables["ground_truth"], k=longest, columns=GRADED, preset="ranx", rbp_p=persistence)
    assert ours.metrics["rbp"] == pytest.approx(graded[name], abs=1e-12)
    assert ours.metrics["r_precision"] == pytest.approx(graded["r-precision"], abs=1e-12)
    moffat = evaluate(recs, tables["ground_truth"], k=longest, columns=GRADED, rbp_p=persistence,
                      preset="ranx", rbp_gain="binary")
    assert moffat.metrics["rbp"] == pytest.approx(binary, abs=1e-12)


def test_gm_map_and_ndcg_over_all_relevant_equal_trec_eval(demo):
    """trec_eval's gm_map (a geometric mean of AP with ε = 1e-5) and its ndcg on a run holding
    only the top K, whose ideal list keeps every relevant item."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    tables, _relevant = demo
    recs = tables["recs_personalised"]
    top3 = recs.sort_values(["user_id", "score"], ascending=[True, False]).groupby("user_id").head(3)
    per_query = pytrec_eval.RelevanceEvaluator(QRELS(tables), {"gm_map", "ndcg"}).evaluate(
        _as_trec(top3, "score"))
    ours = evaluate(top3, tables["ground_truth"], k=3, columns=GRADED, preset="trec_eval", ndcg_ideal="all_relevant")
    logs = [v["gm_map"] for v in per_query.values()]  # trec_eval keeps log(max(AP, 1e-5)) per query
    assert ours.metrics["gm_map"] == pytest.approx(math.exp(sum(logs) / len(logs)), rel=1e-9)
    ndcg = sum(v["ndcg"] for v in per_query.values()) / len(per_query)
    assert ours.metrics["ndcg"] == pytest.approx(ndcg, abs=1e-12)


@pytest.mark.parametrize("model", ["recs_popularity", "recs_personalised"])
@pytest.mark.parametrize("measure, name", [("bpref", "bpref"), ("infAP", "infap")])
def test_judged_measures_equal_trec_eval(demo, model, measure, name):
    """Grades below the threshold are judged non-relevant; trec_eval reads the whole list."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    tables, _ = demo
    recs = tables[model]
    evaluator = pytrec_eval.RelevanceEvaluator(QRELS(tables), {measure})
    per_query = evaluator.evaluate(_as_trec(recs, "score"))
    ours = evaluate(recs, tables["ground_truth"], k=int(recs.groupby("user_id").size().max()), columns=GRADED,
                    preset="trec_eval")
    theirs = list(per_query.values())  # (the same users: both averaged over users in both files)
    assert len(theirs) == ours.users["evaluated"]
    assert ours.metrics[name] == pytest.approx(sum(v[measure] for v in theirs) / len(theirs), abs=1e-12)


@pytest.mark.parametrize("model", ["recs_popularity", "recs_diverse"])
def test_interpolated_precision_equals_trec_eval(demo, model):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    tables, _relevant = demo
    recs = tables[model]
    per_query = pytrec_eval.RelevanceEvaluator(QRELS(tables), {"iprec_at_recall", "11pt_avg"}).evaluate(
        _as_trec(recs, "score"))
    ours = evaluate(recs, tables["ground_truth"], k=int(recs.groupby("user_id").size().max()), columns=GRADED,
                    preset="trec_eval_9")  # (pytrec_eval ships trec_eval 9's recall levels)
    for measure in [f"iprec_at_recall_{level / 10:.2f}" for level in range(11)] + ["11pt_avg"]:
        theirs = sum(v[measure] for v in per_query.values()) / len(per_query)
        assert ours.metrics[measure] == pytest.approx(theirs, abs=1e-12), measure


@pytest.mark.parametrize("seed", range(3))
def test_lrap_equals_scikit_learns_label_ranking_average_precision(seed):
    """Every label of a sample listed with its score (scores rounded so that many tie), K the
    number of labels: each user's LRAP is scikit-learn's for that sample, in any order of the
    rows; samples without a relevant label are left out (scikit-learn gives them 1)."""
    import numpy as np

    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(seed)
    n_samples, n_labels = 60, 9
    y_true = rng.random((n_samples, n_labels)) < 0.3
    y_score = np.round(rng.random((n_samples, n_labels)), 1)
    recs = pd.DataFrame({"user_id": np.repeat(np.arange(n_samples), n_labels),
                         "item_id": np.tile(np.arange(n_labels), n_samples), "score": y_score.reshape(-1)})
    truth = pd.DataFrame({"user_id": np.nonzero(y_true)[0], "item_id": np.nonzero(y_true)[1]})
    per_user = evaluate(recs.sample(frac=1.0, random_state=seed), truth, k=n_labels).per_user
    ours = per_user.loc[per_user["evaluated"], "lrap"]
    for sample in ours.index:
        theirs = sklearn_metrics.label_ranking_average_precision_score(y_true[[sample]], y_score[[sample]])
        assert ours[sample] == pytest.approx(theirs, abs=1e-12), sample
    assert len(ours) == int(y_true.any(axis=1).sum())


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("k", [3, 9])
def test_tie_averaged_dcg_and_ndcg_equal_scikit_learns(seed, k):
    """``dcg_ties="average"`` is scikit-learn's dcg_score and ndcg_score (ignore_ties=False): every
    label of a sample listed with its score, scores rounded so that many tie, graded labels; per
    user, and NDCG's curve at k equals the evaluation at k."""
    import numpy as np

    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(seed)
    n_samples, n_labels = 50, 9
    y_true = rng.integers(0, 4, (n_samples, n_labels)) * (rng.random((n_samples, n_labels)) < 0.4)
    y_score = np.round(rng.random((n_samples, n_labels)), 1)
    recs = pd.DataFrame({"user_id": np.repeat(np.arange(n_samples), n_labels),
                         "item_id": np.tile(np.arange(n_labels), n_samples), "score": y_score.reshape(-1)})
    users, items = np.nonzero(y_true)
    truth = pd.DataFrame({"user_id": users, "item_id": items, "grade": y_true[users, items]})
    columns = Columns(relevance="grade", threshold=1)
    result = evaluate(recs.sample(frac=1.0, random_state=seed), truth, k=k, columns=columns, dcg_ties="average")
    per_user = result.per_user[result.per_user["evaluated"]]
    for sample in per_user.index:
        truth_row, score_row = y_true[[sample]], y_score[[sample]]
        assert per_user.loc[sample, "dcg"] == pytest.approx(
            sklearn_metrics.dcg_score(truth_row, score_row, k=k), abs=1e-12), sample
        assert per_user.loc[sample, "ndcg"] == pytest.approx(
            sklearn_metrics.ndcg_score(truth_row, score_row, k=k), abs=1e-12), sample
    at_1 = evaluate(recs, truth, k=1, columns=columns, dcg_ties="average").metrics["ndcg"]
    assert result.curves.loc[1, "ndcg"] == pytest.approx(at_1, abs=1e-12)
    assert at_1 != pytest.approx(evaluate(recs, truth, k=1, columns=columns).metrics["ndcg"])  # the ties count
