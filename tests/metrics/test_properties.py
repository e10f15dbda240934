"""Properties that must hold for any input (hypothesis)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from metrics_core import Columns, Dataset, Settings, evaluate
from metrics_core.metrics.registry import METRICS as REGISTERED

METRICS = ["precision", "recall", "fbeta", "ap", "ar", "ndcg", "hit", "rr", "lauc"]


@st.composite
def problems(draw):
    n_users = draw(st.integers(1, 8))
    n_items = draw(st.integers(1, 12))
    recs, truth = [], []
    for user in range(n_users):
        items = draw(st.lists(st.integers(0, n_items - 1), max_size=8, unique=True))
        recs += [(user, item, rank + 1) for rank, item in enumerate(items)]
        relevant = draw(st.lists(st.integers(0, n_items - 1), min_size=1, max_size=5, unique=True))
        truth += [(user, item, draw(st.integers(1, 3))) for item in relevant]
    if not recs:
        recs = [(0, 0, 1)]
    k = draw(st.integers(1, 10))
    return (pd.DataFrame(recs, columns=["user_id", "item_id", "rank"]),
            pd.DataFrame(truth, columns=["user_id", "item_id", "grade"]), k)


GRADED = Columns(relevance="grade", threshold=1)


@settings(max_examples=60, deadline=None)
@given(problems(), st.sampled_from(["min_k_relevant", "relevant", "hits"]), st.sampled_from(["linear", "exponential"]))
def test_every_metric_is_within_bounds(problem, denominator, gain):
    recs, truth, k = problem
    result = evaluate(recs, truth, k=k, columns=GRADED, ap_denominator=denominator, gain=gain, candidates=20)
    values = result.per_user
    for metric in METRICS:
        assert values[metric].between(0, 1 + 1e-12).all(), metric
    assert values["mcc"].between(-1 - 1e-12, 1 + 1e-12).all()
    for name, curve in result.curves.items():  # every k, within the registry's bounds
        low, high = REGISTERED[name].bounds
        assert curve.between(-np.inf if low is None else low - 1e-12, np.inf if high is None else high + 1e-12).all()


@pytest.mark.filterwarnings("error")
@settings(max_examples=60, deadline=None)
@given(problems(), st.integers(1, 12), st.sampled_from(["listed", "k"]))
def test_the_candidate_metrics_stay_defined_whatever_the_candidate_count(problem, candidates, false_positives):
    """Candidate counts below the lists' lengths or the relevant items, and RecTools' K − hits
    false positives, which count empty places that are no candidates: MCC stays within [-1, 1],
    accuracy, fall-out and LAUC within [0, 1], at every k, and nothing warns."""
    recs, truth, k = problem
    result = evaluate(recs, truth, k=k, columns=GRADED, candidates=candidates, false_positives=false_positives)
    assert result.per_user["mcc"].between(-1 - 1e-12, 1 + 1e-12).all()
    for name in ("accuracy", "fall_out", "lauc"):
        assert result.per_user[name].between(0, 1 + 1e-12).all(), name
    for name, low in (("mcc", -1), ("accuracy", 0), ("fall_out", 0), ("lauc", 0)):
        assert result.curves[name].between(low - 1e-12, 1 + 1e-12).all(), name


@settings(max_examples=40, deadline=None)
@given(problems())
def test_perfect_ranking_scores_one(problem):
    _, truth, k = problem
    ideal = truth.sort_values(["user_id", "grade"], ascending=[True, False]).copy()
    ideal["rank"] = ideal.groupby("user_id").cumcount() + 1
    result = evaluate(ideal[["user_id", "item_id", "rank"]], truth, k=k, columns=GRADED)
    per_user = result.per_user
    assert np.allclose(per_user["ndcg"], 1.0)
    assert np.allclose(per_user["ap"], 1.0)
    assert np.allclose(per_user["rr"], 1.0)
    full = per_user["relevant"] <= k
    assert np.allclose(per_user.loc[full, "recall"], 1.0)
    assert np.allclose(per_user.loc[~full, "precision"], 1.0)


@settings(max_examples=40, deadline=None)
@given(problems(), st.randoms(use_true_random=False))
def test_permuting_rows_and_renaming_users_changes_nothing(problem, random):
    recs, truth, k = problem
    base = evaluate(recs, truth, k=k, columns=GRADED)
    shuffled = recs.sample(frac=1, random_state=random.randint(0, 2**31))
    truth_shuffled = truth.sample(frac=1, random_state=random.randint(0, 2**31))
    rename = {u: f"user-{random.randint(0, 10**9)}-{u}" for u in truth["user_id"].unique()}
    rename.update({u: rename.get(u, f"x{u}") for u in recs["user_id"].unique()})
    moved = evaluate(shuffled.assign(user_id=shuffled["user_id"].map(rename)),
                     truth_shuffled.assign(user_id=truth_shuffled["user_id"].map(rename)), k=k, columns=GRADED)
    for name, value in base.metrics.items():
        assert moved.metrics[name] == __import__("pytest").approx(value, abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(problems())
def test_more_hits_never_lower_recall_or_hit_rate(problem):
    recs, truth, k = problem
    before = evaluate(recs, truth, k=k, columns=GRADED).per_user
    relevant = set(map(tuple, truth[["user_id", "item_id"]].to_numpy()))
    spare = {u: [i for (uu, i) in relevant if uu == u] for u in truth["user_id"].unique()}
    better = recs.copy()
    for index, row in better.iterrows():
        if (row.user_id, row.item_id) not in relevant:
            listed = set(better.loc[better.user_id == row.user_id, "item_id"])
            unused = [i for i in spare.get(row.user_id, []) if i not in listed]
            if unused:
                better.loc[index, "item_id"] = unused[0]
                break
    after = evaluate(better, truth, k=k, columns=GRADED).per_user
    assert (after["recall"] >= before["recall"] - 1e-12).all()
    assert (after["hit"] >= before["hit"]).all()


@settings(max_examples=40, deadline=None)
@given(problems())
def test_cumulative_metrics_are_monotone_in_k(problem):
    recs, truth, k = problem
    curves = Dataset.build(recs, truth, columns=GRADED).evaluate(settings=Settings(k=k)).curves
    for metric in ("recall", "hit_rate", "mrr"):
        assert (np.diff(curves[metric].to_numpy()) >= -1e-12).all(), metric


@settings(max_examples=40, deadline=None)
@given(problems(), st.integers(1, 12), st.sampled_from([None, 20]), st.sampled_from([1, 2]))
def test_the_curves_do_not_depend_on_k(problem, other_k, candidates, threshold):
    """The metric@k curves (k = 1 .. the longest list, and K) are the same whichever K is evaluated:
    the app evaluates a new K at K alone and keeps the curves it has. With candidates (LAUC, MCC)
    and judged rows below the threshold (bpref, infAP) too."""
    recs, truth, k = problem
    assume((truth.grade >= threshold).any())  # (else no user has a relevant item: refused)
    data = Dataset.build(recs, truth, columns=Columns(relevance="grade", threshold=threshold))
    first, second = (data.evaluate(settings=Settings(k=at, candidates=candidates)).curves for at in (k, other_k))
    common = first.index.intersection(second.index)
    assert set(range(1, recs.groupby("user_id").size().max() + 1)) <= set(common)  # (every k of the lists)
    pd.testing.assert_frame_equal(first.loc[common], second.loc[common], rtol=1e-12)
