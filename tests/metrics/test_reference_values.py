"""The reference values of docs/metrics.md, asserted exactly (to the printed precision)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from metrics_core import Columns, Dataset, Settings, evaluate


def test_seed003_accuracy(three_users):
    recs, truth, _ = three_users
    m = evaluate(recs, truth, k=3).metrics
    assert m["precision"] == pytest.approx(4 / 9)
    assert m["recall"] == pytest.approx(8 / 9)
    assert m["fbeta_of_means"] == pytest.approx(16 / 27)
    assert m["fbeta"] == pytest.approx(5 / 9)
    c = 1 / math.log2(3)
    assert m["ndcg"] == pytest.approx((c + 1 + (c + 0.5) / (1 + c + 0.5)) / 3)
    assert m["ndcg"] == pytest.approx(0.7205, abs=1e-4)  # printed truncated
    assert m["map"] == pytest.approx((1 / 2 + 1 + (1 / 2 + 2 / 3) / 3) / 3)
    assert m["map"] == pytest.approx(0.6296, abs=1e-4)
    assert m["mrr"] == pytest.approx(2 / 3)
    assert m["hit_rate"] == 1.0


# Schröder et al.: 10 recommended items, 3 relevant among 10 candidates, K = 4.
SCHRODER = [
    # relevant at, P@4, R@4, F1@4, MCC@4, AUC, LAUC@4, AP
    ((1, 2, 3), .750, 1.000, .857, .802, 1.000, 1.000, 1.000),
    ((1, 2, 4), .750, 1.000, .857, .802, .952, .952, .917),
    ((1, 2, 5), .500, .667, .571, .356, .905, .786, .867),
    ((1, 3, 5), .500, .667, .571, .356, .857, .738, .756),
    ((1, 3, 10), .500, .667, .571, .356, .619, .738, .656),
    ((1, 4, 5), .500, .667, .571, .356, .810, .690, .700),
    ((1, 4, 10), .500, .667, .571, .356, .571, .690, .600),
    ((1, 5, 6), .250, .333, .286, -.089, .714, .524, .633),
    ((1, 5, 10), .250, .333, .286, -.089, .524, .524, .567),
    ((1, 9, 10), .250, .333, .286, -.089, .333, .524, .507),
    ((2, 5, 6), .250, .333, .286, -.089, .667, .476, .467),
    ((3, 5, 6), .250, .333, .286, -.089, .619, .429, .411),
    ((4, 5, 6), .250, .333, .286, -.089, .571, .381, .383),
    ((5, 6, 7), .000, .000, .000, -.535, .429, .214, .321),
    ((8, 9, 10), .000, .000, .000, -.535, .000, .214, .216),
]


@pytest.fixture(scope="module")
def schroder():
    recs = pd.DataFrame([(u, f"d{r}", r) for u in range(len(SCHRODER)) for r in range(1, 11)],
                        columns=["user_id", "item_id", "rank"])
    truth = pd.DataFrame([(u, f"d{r}") for u, row in enumerate(SCHRODER) for r in row[0]],
                         columns=["user_id", "item_id"])
    dataset = Dataset.build(recs, truth)
    at4 = dataset.evaluate(settings=Settings(k=4, candidates=10)).per_user
    full = dataset.evaluate(settings=Settings(k=10, candidates=10, ap_denominator="relevant")).per_user
    return at4, full


@pytest.mark.parametrize("user", range(len(SCHRODER)))
def test_schroder_table(schroder, user):
    at4, full = schroder
    _, p, r, f1, mcc, auc, lauc, ap = SCHRODER[user]
    got = at4.loc[user]
    assert got["precision"] == pytest.approx(p, abs=5e-4)
    assert got["recall"] == pytest.approx(r, abs=5e-4)
    assert got["fbeta"] == pytest.approx(f1, abs=5e-4)
    assert got["mcc"] == pytest.approx(mcc, abs=5e-4)
    assert got["lauc"] == pytest.approx(lauc, abs=5e-4)
    assert full.loc[user, "lauc"] == pytest.approx(auc, abs=5e-4)
    assert full.loc[user, "ap"] == pytest.approx(ap, abs=5e-4)


def test_lauc_same_for_mirrored_lists():
    """The ten-item example's question: LAUC@4 is the same for 1,0,0,1 and 0,1,1,0."""
    recs = pd.DataFrame([(u, f"d{r}", r) for u in (0, 1) for r in range(1, 11)],
                        columns=["user_id", "item_id", "rank"])
    truth = pd.DataFrame([(0, "d1"), (0, "d4"), (0, "d9"), (1, "d2"), (1, "d3"), (1, "d9")],
                         columns=["user_id", "item_id"])
    lauc = Dataset.build(recs, truth).evaluate(settings=Settings(k=4, candidates=10)).per_user["lauc"]
    assert lauc.loc[0] == pytest.approx(lauc.loc[1])


@pytest.mark.parametrize(("preset", "levels", "average"), [
    # trec_eval 10: a level r is reached with lround(r·R) hits (at least one): 0.4 of 3 needs 1
    ("trec_eval", [1, 1, 1, 1, 1, .6, .6, .6, .6, .6, .6], 8.6 / 11),
    # trec_eval 9 and pytrec_eval: ⌊r·R + 0.9⌋ hits: 0.4 of 3 needs 2
    ("trec_eval_9", [1, 1, 1, 1, .6, .6, .6, .6, .6, .6, .6], 8.2 / 11),
])
def test_interpolated_precision_by_trec_eval_10_and_9(preset, levels, average):
    """One user, 3 relevant items at ranks 1, 4 and 5 (precisions 1, 2/4, 3/5), traced by hand
    through trec_eval 10's m_iprec_at_recall.c and trec_eval 9's rule."""
    recs = pd.DataFrame({"user_id": 1, "item_id": [10, 11, 12, 13, 14], "score": [5.0, 4, 3, 2, 1]})
    truth = pd.DataFrame({"user_id": 1, "item_id": [10, 13, 14]})
    m = evaluate(recs, truth, k=5, preset=preset).metrics
    assert [m[f"iprec_at_recall_{level / 10:.2f}"] for level in range(11)] == pytest.approx(levels, abs=1e-15)
    assert m["11pt_avg"] == pytest.approx(average, abs=1e-15)
    default = evaluate(recs, truth, k=5).metrics  # rankscope's default is trec_eval 10's rule
    assert default["iprec_at_recall_0.40"] == 1.0


def test_a_recall_level_on_a_half_rounds_as_c_rounds_the_double():
    """Halves round away from 0 (0.7 · 5 = 3.5 needs 4 hits), on r·R as a double, as trec_eval
    computes it: 0.7 · 45 is 31.499999999999996, so 31 hits reach it (⌊31.5 + 0.9⌋ = 32 in
    trec_eval 9)."""
    from metrics_core.metrics.accuracy import hits_for_recall_levels

    assert 0.7 * 5 == 3.5 and 0.7 * 45 < 31.5
    assert hits_for_recall_levels([5])[7, 0] == 4 and hits_for_recall_levels([3])[5, 0] == 2
    assert hits_for_recall_levels([45])[7, 0] == 31 and hits_for_recall_levels([45], "add_0.9")[7, 0] == 32


def test_r_precision_cut_at_k_counts_the_first_min_k_r_items():
    """Relevant items at ranks 1, 4 and 5 of 3 (R = 3): the first min(K, R) items hold 1 hit. At
    K = 5: 1/3 (R-precision itself, 1/3; relative precision, 3/3); at K = 2: 1/2 (precision@2);
    a second user with R = 1, its one relevant item at rank 2: 0 at every K (the first item is
    not it), where relative precision at K = 2 is 1."""
    recs = pd.DataFrame({"user_id": [1] * 5 + [2] * 3, "item_id": [10, 11, 12, 13, 14, 20, 21, 22],
                         "rank": [1, 2, 3, 4, 5, 1, 2, 3]})
    truth = pd.DataFrame({"user_id": [1, 1, 1, 2], "item_id": [10, 13, 14, 21]})
    at_5 = evaluate(recs, truth, k=5).per_user
    assert at_5["r_precision_at_k"].tolist() == pytest.approx([1 / 3, 0.0], abs=1e-15)
    assert at_5["r_precision"].tolist() == pytest.approx([1 / 3, 0.0], abs=1e-15)
    assert at_5["relative_precision"].tolist() == pytest.approx([1.0, 1.0], abs=1e-15)
    at_2 = evaluate(recs, truth, k=2)
    assert at_2.per_user["r_precision_at_k"].tolist() == pytest.approx([0.5, 0.0], abs=1e-15)
    assert at_2.metrics["r_precision_at_k"] == pytest.approx(0.25, abs=1e-15)
    assert at_2.curves["r_precision_at_k"].tolist() == pytest.approx([0.5, 0.25, 1 / 6, 1 / 6, 1 / 6], abs=1e-15)


def test_tie_averaged_dcg_gives_a_run_of_equal_scores_its_mean_gain():
    """Scores 0.9, 0.5, 0.5, 0.5, 0.1; grade 2 at the 3rd item, grade 1 at the 5th. In the list's
    order DCG@3 = 2 / log2 4 = 1. Averaged (scikit-learn), ranks 2-4 share the mean gain 2/3:
    DCG@3 = (2/3)·(1/log2 3 + 1/log2 4) = 0.75395, DCG@2 = (2/3) / log2 3 = 0.42062 (the relevant
    item at rank 3 counts at K = 2), DCG@5 = (2/3)·(1/log2 3 + 1/2 + 1/log2 5) + 1/log2 6 = 1.42792."""
    recs = pd.DataFrame({"user_id": 1, "item_id": list("abcde"), "score": [0.9, 0.5, 0.5, 0.5, 0.1]})
    truth = pd.DataFrame({"user_id": 1, "item_id": ["c", "e"], "grade": [2, 1]})
    columns = Columns(relevance="grade", threshold=1)

    def dcg(k, **options):
        return evaluate(recs, truth, k=k, columns=columns, **options).metrics["dcg"]

    assert dcg(3) == pytest.approx(1.0, abs=1e-15)
    assert dcg(3, dcg_ties="average") == pytest.approx(2 / 3 * (1 / math.log2(3) + 0.5), abs=1e-15)
    assert round(dcg(3, dcg_ties="average"), 5) == 0.75395
    assert round(dcg(2, dcg_ties="average"), 5) == 0.42062 and dcg(2) == 0.0
    assert round(dcg(5, dcg_ties="average"), 5) == 1.42792
    ranks_only = recs.drop(columns="score").assign(rank=[1, 2, 3, 4, 5])  # no scores: no ties
    assert evaluate(ranks_only, truth, k=3, columns=columns, dcg_ties="average").metrics["dcg"] == pytest.approx(1.0)


def test_expected_exposure_against_the_ideal_policy_by_hand():
    """γ = 0.5, K = 3, relevant, irrelevant, relevant, and a third relevant item not listed (R = 3).
    Exposure 1, 0.5, 0.25; the ideal policy spreads the first three ranks over the 3 relevant
    items: e* = (1 − 0.5³) / (3·0.5) = 0.58333. EE-D = 1 + 0.25 + 0.0625 = 1.3125; EE-R =
    e*·(1 + 0.25) = 0.72917; EE-L = (1 − e*)² + 0.5² + (0.25 − e*)² + e*² = 0.875. One relevant
    item listed first alone: e* = 1, EE-L = 0."""
    recs = pd.DataFrame({"user_id": [1, 1, 1, 2], "item_id": ["a", "x", "b", "c"], "rank": [1, 2, 3, 1]})
    truth = pd.DataFrame({"user_id": [1, 1, 1, 2], "item_id": ["a", "b", "z", "c"]})
    result = evaluate(recs, truth, k=3).per_user
    assert result.loc[1, "ee_disparity"] == pytest.approx(1.3125, abs=1e-15)
    assert result.loc[1, "ee_relevance"] == pytest.approx(0.875 / 1.5 * 1.25, abs=1e-15)
    assert round(result.loc[1, "ee_relevance"], 5) == 0.72917
    assert result.loc[1, "ee_loss"] == pytest.approx(0.875, abs=1e-12)
    alone = evaluate(recs[recs.user_id == 2], truth[truth.user_id == 2], k=1).per_user
    assert alone.loc[2, "ee_loss"] == pytest.approx(0.0, abs=1e-15)
    patient = evaluate(recs, truth, k=3, ee_patience=0.8).per_user  # e* = (1 − 0.8³) / (3·0.2) = 0.81333
    assert patient.loc[1, "ee_relevance"] == pytest.approx((1 - 0.8 ** 3) / 0.6 * (1 + 0.64), abs=1e-12)


def test_lrap_counts_a_tie_as_ranked_above():
    """Scores 0.9, 0.5, 0.5, 0.1 for a, b, c, d; b and d relevant (R = 2), K = 4. AP over R reads
    the order: (1/2 + 2/4) / 2 = 0.5. LRAP counts c, tied with b, above it: (1/3 + 2/4) / 2 =
    0.41667. At K = 2, d is not in the top K and adds 0, and b's tie with c (at position 3) is
    outside it: (1/2) / 2 = 0.25. Without scores there are no ties: AP over R."""
    recs = pd.DataFrame({"user_id": 1, "item_id": ["a", "b", "c", "d"], "score": [0.9, 0.5, 0.5, 0.1]})
    truth = pd.DataFrame({"user_id": 1, "item_id": ["b", "d"]})
    at_4 = evaluate(recs, truth, k=4, ap_denominator="relevant").metrics
    assert at_4["map"] == pytest.approx(0.5, abs=1e-15)
    assert at_4["lrap"] == pytest.approx(5 / 12, abs=1e-15) and round(at_4["lrap"], 5) == 0.41667
    assert evaluate(recs, truth, k=2).metrics["lrap"] == pytest.approx(0.25, abs=1e-15)
    ranked = recs.drop(columns="score").assign(rank=[1, 2, 3, 4])
    assert evaluate(ranked, truth, k=4).metrics["lrap"] == pytest.approx(0.5, abs=1e-15)


def test_judged_only_condenses_each_list_to_its_judged_items():
    """A list a, x, b, y, c with a and c relevant, b judged non-relevant (grade 0), x and y without
    a row, K = 3. Whole list: P@3 = 1/3, RR 1, NDCG@3 = 1 / (1 + 1/log2 3)
    = 0.6131. Judged only (trec_eval's -J), the list is a, b, c: P@3 = 2/3, NDCG@3 = (1 + 1/2) /
    (1 + 1/log2 3) = 0.9197, Judged@3 = 1; the user's R and judged counts do not change."""
    recs = pd.DataFrame({"user_id": 1, "item_id": ["a", "x", "b", "y", "c"], "rank": [1, 2, 3, 4, 5]})
    truth = pd.DataFrame({"user_id": 1, "item_id": ["a", "b", "c"], "grade": [1, 0, 1]})
    columns = Columns(relevance="grade", threshold=1)
    whole = evaluate(recs, truth, k=3, columns=columns).metrics
    judged = evaluate(recs, truth, k=3, columns=columns, judged_only=True).metrics
    idcg = 1 + 1 / math.log2(3)
    assert whole["precision"] == pytest.approx(1 / 3) and whole["ndcg"] == pytest.approx(1 / idcg, abs=1e-15)
    assert judged["precision"] == pytest.approx(2 / 3) and judged["ndcg"] == pytest.approx(1.5 / idcg, abs=1e-15)
    assert round(judged["ndcg"], 4) == 0.9197 and judged["judged"] == 1.0 and whole["judged"] == pytest.approx(2 / 3)
    assert judged["recall"] == 1.0 and judged["mrr"] == 1.0


def test_graded_rbp_scales_grades_by_the_highest_and_ranx_takes_them_raw():
    """Grades 3 and 1 at ranks 1 and 3 (rank 2 not relevant), the ground truth's highest grade 3,
    p = 0.5: binary 0.5·(1 + 0.25) = 0.625; scaled 0.5·(3/3 + 0.25·1/3) = 0.54167; raw grades
    0.5·(3 + 0.25) = 1.625; scaled by a maximum grade of 2: 0.5·(2/2 + 0.25·1/2) = 0.5625."""
    recs = pd.DataFrame({"user_id": [1, 1, 1, 2], "item_id": [10, 11, 12, 20], "rank": [1, 2, 3, 1]})
    truth = pd.DataFrame({"user_id": [1, 1, 2], "item_id": [10, 12, 21], "grade": [3, 1, 2]})
    columns = Columns(relevance="grade", threshold=1)

    def rbp(**options):
        return evaluate(recs, truth, k=3, columns=columns, rbp_p=0.5, **options).per_user.loc[1, "rbp"]

    assert rbp() == pytest.approx(0.625, abs=1e-15)
    assert rbp(rbp_gain="scaled") == pytest.approx(0.5 * (1 + 0.25 / 3), abs=1e-15)
    assert round(rbp(rbp_gain="scaled"), 5) == 0.54167
    assert rbp(rbp_gain="grade") == pytest.approx(1.625, abs=1e-15)
    assert rbp(rbp_gain="scaled", rbp_max_grade=2) == pytest.approx(0.5625, abs=1e-15)
    assert rbp(preset="ranx") == pytest.approx(1.625, abs=1e-15)
    equal = truth.assign(grade=2)  # every grade the highest: scaled RBP is the binary one, raw twice it
    assert evaluate(recs, equal, k=3, columns=columns, rbp_p=0.5, rbp_gain="scaled").per_user.loc[1, "rbp"] == 0.625
    assert evaluate(recs, equal, k=3, columns=columns, rbp_p=0.5, rbp_gain="grade").per_user.loc[1, "rbp"] == 1.25


def test_dcg_in_another_log_base_is_scikit_learns_and_leaves_ndcg_alone():
    """DCG with natural logarithms equals scikit-learn's dcg_score(log_base=e) (and Microsoft
    Recommenders' default discount); it is log2(e) times DCG in base 2, and NDCG is unchanged.
    By hand: grades 3 and 1 at ranks 1 and 3, K = 3: 3/ln 2 + 1/ln 4 = 4.3281 + 0.7213 = 5.0494."""
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    import numpy as np

    recs = pd.DataFrame({"user_id": 1, "item_id": [10, 11, 12, 13], "score": [4.0, 3, 2, 1]})
    truth = pd.DataFrame({"user_id": 1, "item_id": [10, 12, 13], "grade": [3, 1, 2]})
    columns = Columns(relevance="grade", threshold=1)
    base_e = evaluate(recs, truth, k=3, columns=columns, dcg_log_base=math.e).metrics
    base_2 = evaluate(recs, truth, k=3, columns=columns).metrics
    assert base_e["dcg"] == pytest.approx(3 / math.log(2) + 1 / math.log(4), abs=1e-12)
    assert round(base_e["dcg"], 4) == 5.0494
    assert base_e["dcg"] == pytest.approx(sklearn_metrics.dcg_score(
        np.array([[3, 0, 1, 2]]), np.array([[4.0, 3, 2, 1]]), k=3, log_base=math.e), abs=1e-12)
    assert base_e["dcg"] == pytest.approx(base_2["dcg"] * math.log2(math.e), abs=1e-12)
    assert base_e["ndcg"] == base_2["ndcg"]


def test_mcc_and_accuracy_count_empty_places_as_false_positives_as_rectools_does():
    """R = 2 of 10 candidates (N⁻ = 8); a list of 3 items, 1 relevant, at K = 5. Listed: TP 1,
    FP 2, FN 1, TN 6: MCC = (6 − 2) / √(3·2·8·7) = 0.21822, accuracy 7/10. RecTools' K − hits:
    FP 4, TN 4: MCC = (4 − 4) / √(5·2·8·5) = 0, accuracy 5/10 (the rectools preset's choice)."""
    recs = pd.DataFrame({"user_id": 1, "item_id": [10, 11, 12], "rank": [1, 2, 3]})
    truth = pd.DataFrame({"user_id": 1, "item_id": [11, 99]})
    listed = evaluate(recs, truth, k=5, candidates=10).metrics
    rectools = evaluate(recs, truth, k=5, candidates=10, false_positives="k").metrics
    assert listed["mcc"] == pytest.approx(4 / math.sqrt(3 * 2 * 8 * 7), abs=1e-15)
    assert round(listed["mcc"], 5) == 0.21822 and listed["accuracy"] == pytest.approx(0.7, abs=1e-15)
    assert rectools["mcc"] == pytest.approx(0.0, abs=1e-15) and rectools["accuracy"] == pytest.approx(0.5, abs=1e-15)
    assert rectools["fall_out"] == listed["fall_out"] and rectools["lauc"] == listed["lauc"]
    preset = evaluate(recs, truth, k=5, candidates=10, preset="rectools").metrics
    assert preset["mcc"] == rectools["mcc"] and preset["accuracy"] == rectools["accuracy"]


@pytest.mark.filterwarnings("error")
def test_true_negatives_never_go_below_0_when_empty_places_outnumber_the_irrelevant_candidates():
    """R = 2 of 4 candidates (N⁻ = 2), a list of 3 with 1 hit, K = 10. RecTools' K − hits: FP 9,
    FN 1, and N⁻ − FP = −7, which RecTools keeps (its TN, catalog − K − FN, goes below 0 the same
    way: MCC outside [−1, 1] or NaN, accuracy below 0); here TN is 0: MCC (0 − 9) / √(10·2·9·1),
    accuracy (1 + 0) / 4, no warning. Listed: FP 2, TN 0: MCC −2 / √(3·2·2·1), accuracy 1/4."""
    recs = pd.DataFrame({"user_id": 1, "item_id": [10, 11, 12], "rank": [1, 2, 3]})
    truth = pd.DataFrame({"user_id": 1, "item_id": [11, 99]})
    rectools = evaluate(recs, truth, k=10, candidates=4, false_positives="k").metrics
    assert rectools["mcc"] == pytest.approx(-9 / math.sqrt(10 * 2 * 9 * 1), abs=1e-15)
    assert rectools["accuracy"] == pytest.approx(0.25, abs=1e-15)
    listed = evaluate(recs, truth, k=10, candidates=4).metrics
    assert listed["mcc"] == pytest.approx(-2 / math.sqrt(3 * 2 * 2 * 1), abs=1e-15)
    assert listed["accuracy"] == pytest.approx(0.25, abs=1e-15)


def test_lenskit_discount_weighs_the_first_two_ranks_alike():
    """Relevant items at ranks 2 and 3 of R = 2, K = 3. 1/log2(i + 1): DCG = 0.63093 + 0.5,
    IDCG = 1 + 0.63093, NDCG = 0.69343. LensKit's 1/log2(max(i, 2)): DCG = 1 + 0.63093,
    IDCG = 1 + 1, NDCG = 0.81546 (and NDCG at R: the first 2 ranks hold 1 relevant item, 1 / 2)."""
    recs = pd.DataFrame({"user_id": 1, "item_id": [10, 11, 12], "rank": [1, 2, 3]})
    truth = pd.DataFrame({"user_id": 1, "item_id": [11, 12]})
    default = evaluate(recs, truth, k=3).metrics
    lenskit = evaluate(recs, truth, k=3, dcg_discount="lenskit").metrics
    assert round(default["ndcg"], 5) == 0.69343 and round(lenskit["ndcg"], 5) == 0.81546
    assert lenskit["dcg"] == pytest.approx(1 + 1 / math.log2(3), abs=1e-15)
    assert lenskit["ndcg"] == pytest.approx((1 + 1 / math.log2(3)) / 2, abs=1e-15)
    assert lenskit["ndcg_at_r"] == pytest.approx(0.5, abs=1e-15)
    assert default["ndcg_at_r"] == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)), abs=1e-15)
    assert lenskit["precision"] == default["precision"]


def test_utility_is_relevant_minus_other_items_of_the_whole_list():
    """trec_eval's utility at its default weights: user 1 lists 4 items, 2 relevant (one judged
    non-relevant, one unjudged): 2 − 2 = 0 (pytrec_eval gives 0.0); user 2 lists 5, 3 relevant:
    3 − 2 = 1; whatever K (K = 2 here); the mean is 0.5."""
    recs = pd.DataFrame({"user_id": [1] * 4 + [2] * 5, "item_id": [1, 2, 4, 3, 5, 6, 7, 8, 9],
                         "rank": [1, 2, 3, 4, 1, 2, 3, 4, 5]})
    truth = pd.DataFrame({"user_id": [1, 1, 1, 1, 2, 2, 2], "item_id": [1, 2, 3, 9, 5, 7, 9],
                          "grade": [1, 0, 2, 1, 1, 1, 1]})
    result = evaluate(recs, truth, k=2, columns=Columns(relevance="grade", threshold=1))
    assert result.per_user["utility"].tolist() == [0.0, 1.0]
    assert result.metrics["utility"] == 0.5


@pytest.mark.parametrize("ranks", [[1, 2, 3, 4, 5, 6], [1, 3, 4, 7, 8, 9]])  # (the second with rank gaps)
def test_partial_auc_reads_the_list_to_its_kth_irrelevant_item(ranks):
    """A list relevant, no, no, relevant, no, relevant of R = 4 (one relevant item not listed).
    K = 2: only the first relevant item is above fewer than 2 irrelevant ones: pAUC = 2 / (4·2) =
    0.25, pAP = 2 / (2·2) = 0.5. K = 3: 3 + 1 + 0 over 4·3: pAUC 1/3, pAP 4/9. Empty places from
    rank gaps are not irrelevant items."""
    recs = pd.DataFrame({"user_id": 1, "item_id": [1, 2, 3, 4, 5, 6], "rank": ranks})
    truth = pd.DataFrame({"user_id": 1, "item_id": [1, 4, 6, 9]})
    at_2, at_3 = (evaluate(recs, truth, k=k).metrics for k in (2, 3))
    assert at_2["pauc"] == pytest.approx(0.25, abs=1e-15) and at_2["pap"] == pytest.approx(0.5, abs=1e-15)
    assert at_3["pauc"] == pytest.approx(1 / 3, abs=1e-15) and at_3["pap"] == pytest.approx(4 / 9, abs=1e-15)


def test_judged_at_k_counts_every_ground_truth_row_in_the_top_k():
    """ir_measures' Judged@k: relevant a, judged non-relevant b, c and d without a row, relevant e.
    At K = 4: a, b of 4 = 0.5; at K = 10, over the 5 listed: 3/5 (ir_measures divides by the run's
    length when it is shorter than k). A qrels file's pooled but unjudged items (grade −1) count
    too (the cross-check's pooled cases)."""
    recs = pd.DataFrame({"user_id": 1, "item_id": [1, 2, 3, 4, 5], "rank": [1, 2, 3, 4, 5]})
    truth = pd.DataFrame({"user_id": 1, "item_id": [1, 2, 5], "grade": [2, 0, 1]})
    columns = Columns(relevance="grade", threshold=1)
    assert evaluate(recs, truth, k=4, columns=columns).metrics["judged"] == pytest.approx(0.5, abs=1e-15)
    assert evaluate(recs, truth, k=10, columns=columns).metrics["judged"] == pytest.approx(0.6, abs=1e-15)
