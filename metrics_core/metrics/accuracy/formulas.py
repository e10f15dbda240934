"""Each accuracy metric's formula, as the pieces its registry entry's kernel is made of
(:mod:`~metrics_core.metrics.accuracy.kernels`).

Notation (per user): ``rel(i)`` = 1 when the item at rank i is relevant, ``H[k]`` = hits in
the top k, ``F[k]`` = items in the top k, ``R`` = relevant items in the ground truth (all of
them, recommended or not), ``j`` = a hit's place among its user's hits. A metric at k is a
factor of k and the user times a sum of a weight over the hits at ranks ≤ k (``HitSum``), plus
what the first hit's rank gives (``FirstHit``):

- Precision@k = H[k] / D: weight 1, factor 1/D, D = k, F[k] (Evidently) or min(k, R);
- Recall@k = H[k] / R; Relative precision@k = H[k] / min(k, R);
- F-beta@k = (1 + b²)·P·Rc / (b²·P + Rc) = (1 + b²)·H[k] / (b²·R + D) (P = H/D, Rc = H/R);
- AP@k = Σ_{i≤k} P(i)·rel(i) / D': weight j/i, D' = min(k, R) (default), R (trec_eval, ranx),
  H[k], or k (RecTools' divide_by_k); every choice keeps AP within [0, 1];
- AR@k = Σ_{i≤k} Recall(i)·rel(i) / H[k] = (H[k] + 1) / 2R once there is a hit: H[k]/2R plus
  1/2R from the first hit;
- DCG@k = Σ_{i≤k} g(grade_i) / log2(i + 1); NDCG@k = DCG@k / IDCG@k;
- RBP@k = (1 - p)·Σ_{i≤k} rel(i)·p^(i-1), p the persistence;
- bpref@k, infAP@k = (1/R)·Σ of each hit's term (:func:`~.hits.judged_terms`);
- HitRate@k = 1 once the first hit is within k; RR@k = 1 / rank of the first hit within k
  (anywhere in the list with ``rr_cutoff=False``, trec_eval's ``recip_rank``).

Divisions by zero give 0.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from metrics_core.metrics.accuracy.cutoffs import inverse, ratio

if TYPE_CHECKING:
    from metrics_core.metrics.accuracy.hits import Hits
    from metrics_core.metrics.accuracy.kernels import CandidateCounts, Scaled
    from metrics_core.settings import Settings

# weights per hit (None: 1)


def one(hits: Hits) -> None:
    """Every hit weighs 1: the sum is H[k]."""
    return None


def precision_at_hit(hits: Hits) -> np.ndarray:
    """P(i) at each hit: j / i, AP's weight."""
    return hits.nth / hits.rank


def within_relevant_count(hits: Hits) -> np.ndarray:
    """1 for a hit at a rank ≤ its user's R, else 0: the hits R-precision counts.

    >>> from types import SimpleNamespace
    >>> hits = SimpleNamespace(rank=np.array([1.0, 4.0, 2.0]), R=np.array([3, 1]), row=np.array([0, 0, 1]))
    >>> within_relevant_count(hits)
    array([1., 0., 0.])
    """
    return (hits.rank <= hits.R[hits.row]).astype(np.float64)


def rbp_weight(hits: Hits) -> np.ndarray:
    """(1 - p)·p^(i-1)·r_i, RBP's weight of the hit at rank i, r_i its gain (:func:`rbp_relevance`).

    >>> from types import SimpleNamespace
    >>> settings = SimpleNamespace(rbp_p=0.5, rbp_gain="binary")
    >>> rbp_weight(SimpleNamespace(rank=np.array([1.0, 3.0]), settings=settings))
    array([0.5  , 0.125])
    """
    p = hits.settings.rbp_p
    return (1.0 - p) * p ** (hits.rank - 1.0) * rbp_relevance(hits)


def rbp_relevance(hits: Hits) -> np.ndarray | float:
    """r_i of each hit in RBP: 1 (``binary``), min(grade, G) / G with G the ``rbp_max_grade``
    or else the ground truth's highest relevant grade (``scaled``), or the grade (``grade``).
    Lists without grades hold only the highest grade.

    >>> from types import SimpleNamespace
    >>> hits = SimpleNamespace(grades=lambda: np.array([1, 4]), top_grade=4.0,
    ...                        settings=SimpleNamespace(rbp_gain="scaled", rbp_max_grade=None))
    >>> rbp_relevance(hits)
    array([0.25, 1.  ])
    """
    kind = hits.settings.rbp_gain
    if kind == "binary":
        return 1.0
    grades = hits.grades()
    grades = np.float64(hits.top_grade) if grades is None else grades.astype(np.float64)
    if kind == "grade":
        return grades
    top = hits.settings.rbp_max_grade or hits.top_grade
    return np.minimum(grades, top) / top


def bpref_term(hits: Hits) -> np.ndarray:
    return hits.judged["bpref"]


def infap_term(hits: Hits) -> np.ndarray:
    return hits.judged["infap"]


# factors of k and the user


def unit(scaled: Scaled) -> float:
    return 1.0


def precision_denominator(scaled: Scaled) -> np.ndarray:
    """D, precision's denominator, as ``precision_denominator`` says: k, F[k] or min(k, R)."""
    chosen = scaled.settings.precision_denominator
    if chosen == "k":
        return scaled.k
    return scaled.F if chosen == "list" else np.minimum(scaled.k, scaled.R)


def per_precision_denominator(scaled: Scaled) -> np.ndarray:
    """1 / D (0 when D = 0)."""
    return 1.0 / scaled.k if scaled.settings.precision_denominator == "k" else inverse(precision_denominator(scaled))


def per_relevant(scaled: Scaled) -> np.ndarray:
    """1 / R (0 when R = 0)."""
    return inverse(scaled.R)


def per_twice_relevant(scaled: Scaled) -> np.ndarray:
    """1 / 2R (0 when R = 0)."""
    return 0.5 * inverse(scaled.R)


def per_best_possible(scaled: Scaled) -> np.ndarray:
    """1 / min(k, R): relative precision, the share of the best possible precision reached."""
    return inverse(np.minimum(scaled.k, scaled.R))


def fbeta_factor(scaled: Scaled) -> np.ndarray:
    """(1 + b²) / (b²·R + D)."""
    b2 = scaled.settings.beta ** 2
    return ratio(1.0 + b2, b2 * scaled.R + precision_denominator(scaled))


def per_ap_denominator(scaled: Scaled) -> np.ndarray:
    """1 / D', AP's denominator as ``ap_denominator`` says: min(k, R) (never below 1: the sum is
    0 when R = 0), R, H[k] or k."""
    chosen = scaled.settings.ap_denominator
    if chosen == "k":
        return 1.0 / scaled.k
    if chosen == "min_k_relevant":
        return 1.0 / np.minimum(scaled.k, np.maximum(scaled.R, 1.0))
    return inverse(scaled.R if chosen == "relevant" else scaled.H)


def dcg_factor(scaled: Scaled) -> float:
    """The gain of every relevant item when the lists carry hits only (all grades equal), else 1,
    times log2(b) for DCG's logarithm in base b (1 / log_b(x) = log2(b) / log2(x))."""
    return scaled.uniform_gain * math.log2(scaled.settings.dcg_log_base)


def per_ideal_dcg(scaled: Scaled) -> np.ndarray:
    """1 / IDCG@k (0 when IDCG = 0)."""
    return inverse(scaled.ideal())


# the first hit's rank


def first_hit_counts(first: np.ndarray, R: np.ndarray) -> np.ndarray:
    """1: the user has a hit."""
    return np.ones(len(first))


def reciprocal_rank(first: np.ndarray, R: np.ndarray) -> np.ndarray:
    """1 / rank of the first hit (0 without one)."""
    return inverse(first)


def half_per_relevant(first: np.ndarray, R: np.ndarray) -> np.ndarray:
    """1 / 2R: AR's second term once there is a hit."""
    return 0.5 * inverse(R)


def whole_list_unless_cut(settings: Settings) -> bool:
    """RR looks past K unless ``rr_cutoff``."""
    return not settings.rr_cutoff


# over the candidates


def negatives(candidates: np.ndarray, R: np.ndarray, listed_total: np.ndarray, hits_total: np.ndarray) -> np.ndarray:
    """Irrelevant candidates: candidates - R, never fewer than the irrelevant items listed."""
    return np.maximum(candidates - R, listed_total - hits_total).astype(np.float64)


def lauc(c: CandidateCounts) -> np.ndarray:
    """Limited AUC@k: the ROC curve up to rank k, then a straight line to (1, 1).

    With fpr = (F - H) / N⁻ and tpr = H / R at k: LAUC = Σ over irrelevant listed items i ≤ k
    of tpr(i) / N⁻ + (1 - fpr)·(tpr + 1) / 2, where N⁻ = candidates - R. With no irrelevant
    candidate every order is perfect and LAUC = 1. (The hits so far are counts: weighed and
    summed as integers, exactly, as :func:`~metrics_core.metrics.accuracy.cutoffs.running_sum`
    sums whole numbers.)
    """
    tpr_sum = c.cut.prefix((c.filled & ~c.hit) * c.H_all.astype(np.int32)) / np.maximum(c.R, 1)[:, None]
    tpr = ratio(c.H, c.R[:, None])
    neg = c.n_negative[:, None]
    area = ratio(tpr_sum, neg) + (1.0 - ratio(c.F - c.H, neg)) * (tpr + 1.0) / 2.0
    return np.where(neg > 0, area, 1.0)


def predicted(c: CandidateCounts) -> np.ndarray:
    """The items counted as predicted relevant at each k: those listed in the top k (F), or k
    itself with ``false_positives="k"`` (RecTools: empty places count as false positives)."""
    if c.settings.false_positives == "k":
        return np.broadcast_to(c.cut.k[None, :].astype(np.float64), c.F.shape)
    return c.F


def true_negatives(c: CandidateCounts, false_positives: np.ndarray) -> np.ndarray:
    """TN at each k: the irrelevant candidates left out of the top k, N⁻ - FP, and never below 0.

    Listed false positives are irrelevant candidates, so N⁻ - FP >= 0 already. RecTools' K - hits
    (``false_positives="k"``) also counts empty places, which are no candidates, and where they
    outnumber the user's irrelevant candidates N⁻ - FP would go below 0 (RecTools' own TN,
    catalog - K - FN, does), taking MCC outside [-1, 1] and accuracy below 0: TN is 0 there (the
    choice is written down in docs/metrics.md)."""
    return np.maximum(c.n_negative[:, None] - false_positives, 0)


def mcc(c: CandidateCounts) -> np.ndarray:
    """Matthews correlation of recommended (top k) vs relevant, over the user's candidates.

    TP = H, FP = predicted - H (:func:`predicted`), FN = R - H, TN (:func:`true_negatives`);
    (TP·TN - FP·FN) / sqrt(product of the four margins), 0 when a margin is empty.
    """
    tp, fp = c.H, predicted(c) - c.H
    fn = c.R[:, None] - c.H
    tn = true_negatives(c, fp)
    margins = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
    return ratio(tp * tn - fp * fn, np.sqrt(margins.astype(np.float64, copy=False)))


def fall_out(c: CandidateCounts) -> np.ndarray:
    """Fall-out@k = irrelevant items in the top k / irrelevant candidates (0 without any)."""
    return ratio(c.F - c.H, c.n_negative[:, None])


def classification_accuracy(c: CandidateCounts) -> np.ndarray:
    """Accuracy@k over the candidates (RecTools): (TP + TN) / (R + N⁻), with TP = H[k] and
    TN (:func:`true_negatives`) of FP = predicted[k] - H[k] (:func:`predicted`): top-k items are
    predicted relevant, the other candidates not."""
    return ratio(c.H + true_negatives(c, predicted(c) - c.H), (c.R + c.n_negative)[:, None])


# of the means


def fbeta_of_means(mean_precision: np.ndarray, mean_recall: np.ndarray, beta: float) -> np.ndarray:
    """F-beta of the averaged precision and recall (Evidently's overall F), 0 when both are 0.

    >>> float(fbeta_of_means(np.array(0.5), np.array(0.25), 1.0))
    0.3333333333333333
    """
    b2 = beta * beta
    return ratio((1 + b2) * mean_precision * mean_recall, b2 * mean_precision + mean_recall)
