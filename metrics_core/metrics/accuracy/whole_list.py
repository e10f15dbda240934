"""Accuracy metrics over the whole list, whatever K, as trec_eval computes them: R-precision,
NDCG at R, the set metrics; and interpolated precision at the 11 recall levels over the top K."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from metrics_core._numeric.distinct import distinct
from metrics_core.metrics.accuracy.cutoffs import ratio, user_rows
from metrics_core.metrics.accuracy.hits import hits_of_users, place_among_hits, tie_ends
from metrics_core.metrics.accuracy.ideal import discount, gain, ideal_dcg_at_relevant

if TYPE_CHECKING:
    from metrics_core.inputs.encoded import Lists, Truth
    from metrics_core.settings import Settings

RECALL_LEVELS = tuple(f"iprec_at_recall_{level / 10:.2f}" for level in range(11))


def whole_list(lists: Lists, truth: Truth, rows: np.ndarray, settings: Settings) -> dict[str, np.ndarray]:
    """Per-user metrics over the whole list, whatever K, for users ``rows``:

    R-precision = h(R) / R (hits among the first R items); NDCG at R = DCG@R / IDCG@R;
    set precision = all hits / items listed; set recall = all hits / R; set MAP = set
    precision x set recall (trec_eval's num_rel_ret² / (num_ret · num_rel)); utility = all hits −
    the other items listed (trec_eval's ``utility`` at its default weights 1, −1, 0, 0).

    Read from the list's hit cells (few) and per-user lengths, both computed once per model.
    """
    n_users, width = lists.hit.shape
    user, position = lists.hit_coordinates
    R = truth.relevant_count
    within = position < R[user]
    grades = None if lists.grade is None or settings.gain == "binary" else \
        lists.grade.reshape(-1)[lists.hit_cells].astype(np.float64)
    gains = np.ones(len(user)) if grades is None else gain(grades, settings.gain)
    weights = (gains * discount(width, settings.dcg_discount)[position])[within]
    dcg_at_R = np.bincount(user[within], weights=weights, minlength=n_users)
    hits_at_R = np.bincount(user[within], minlength=n_users)[rows].astype(np.float64)
    hits = lists.hit_counts[rows]  # (every hit of the whole list: counted once per model)
    R_rows = R[rows].astype(np.float64)
    set_precision, set_recall = ratio(hits, lists.lengths[rows]), ratio(hits, R_rows)
    return {
        "r_precision": ratio(hits_at_R, R_rows),
        "ndcg_at_r": ratio(dcg_at_R[rows], ideal_dcg_at_relevant(truth, settings.gain, settings.dcg_discount)[rows]),
        "set_precision": set_precision,
        "set_recall": set_recall,
        "set_map": set_precision * set_recall,
        "utility": 2.0 * hits - lists.lengths[rows],
    }


def interpolated_precision(lists: Lists, truth: Truth, rows: np.ndarray, settings: Settings) -> dict[str, np.ndarray]:
    """Interpolated precision at the 11 recall levels 0, 0.1, .., 1 over the top K, and their
    mean ``11pt_avg`` (trec_eval's ``iprec_at_recall`` and ``11pt_avg``): see
    :func:`precision_at_recall_levels`."""
    values = precision_at_recall_levels(lists, truth, rows, settings.k, np.arange(11) / 10, settings.recall_levels)
    out = dict(zip(RECALL_LEVELS, values, strict=True))
    out["11pt_avg"] = values.mean(axis=0)
    return out


def interpolated_precision_curves(lists: Lists, truth: Truth, rows: np.ndarray,
                                  settings: Settings) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """:func:`interpolated_precision`'s means over users ``rows`` at every k = 1 .. the longest
    list, each equal to the mean at K = k, and the sample standard deviation of ``11pt_avg`` per
    user at every k (for a t interval). Read from the hit cells in one compiled pass
    (:func:`~metrics_core.metrics.prefix_kernels.recall_level_curves`): a user's values change
    only at its hits. NaN without users."""
    from metrics_core._numeric.parallel import map_chunks, thread_shares
    from metrics_core.intervals import sd_of_sums
    from metrics_core.metrics.prefix_kernels import recall_level_curves

    width, n, levels = lists.positions, len(rows), np.arange(11) / 10
    if n == 0:
        return dict.fromkeys((*RECALL_LEVELS, "11pt_avg"), np.full(width, np.nan)), np.full(width, np.nan)
    row, _, position, _ = hits_of_users(lists, rows)
    start = np.searchsorted(row, np.arange(n + 1))
    need = np.ascontiguousarray(hits_for_recall_levels(truth.relevant_count[rows], settings.recall_levels, levels),
                                dtype=np.int64)

    def one(first: int, stop: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        out = np.zeros((len(levels), width)), np.zeros(width), np.zeros(width)
        recall_level_curves(start, position, need, *out, first, stop)
        return out

    parts = map_chunks(one, thread_shares(n))
    at_levels, sums, squares = (np.cumsum(sum(part[i] for part in parts), axis=-1) for i in range(3))
    values = dict(zip(RECALL_LEVELS, at_levels / n, strict=True))
    values["11pt_avg"] = sums / n
    return values, sd_of_sums(n, sums, squares)


def precision_at_recall_levels(lists: Lists, truth: Truth, rows: np.ndarray, k: int, levels: np.ndarray,
                               rule: str = "round") -> np.ndarray:
    """Interpolated precision at any recall ``levels`` (levels x users ``rows``) over the top K.

    At level r: the highest precision at any rank where the level counts as reached, 0 when
    the top K never reaches it. r is reached once the hits number (at least one, see
    :func:`hits_for_recall_levels`) ``round(r·R)`` as trec_eval 10 counts them, or ⌊r·R + 0.9⌋
    as trec_eval 9 and pytrec_eval do (``rule="add_0.9"``). Precision peaks at hits, so this is
    the largest j / rank_j over the user's j-th hits from that count on; read from the hit
    cells, one segment maximum per user and level.
    """
    n_users = lists.hit.shape[0]
    user, position = lists.hit_coordinates
    inside = position < k
    user, position = user[inside], position[inside]
    start = np.searchsorted(user, np.arange(n_users))  # each user's first hit (hit cells are sorted)
    hits = np.bincount(user, minlength=n_users)
    nth = place_among_hits(user)  # j: the j-th hit of its user
    precision = np.append(nth / (position + 1.0), 0.0)  # a trailing 0 keeps the last segment's end in range
    with_hits = np.flatnonzero(hits[rows] > 0)  # the others score 0 at every level
    R, first_hit, hits_of = (array[rows[with_hits]] for array in (truth.relevant_count, start, hits))
    need = hits_for_recall_levels(R, rule, levels)  # levels x users
    reachable = need <= hits_of
    # one segment [first, end) per reachable (level, user); within a level users ascend, so the
    # gaps between segments stay short (reduceat reduces each gap too)
    bounds = np.column_stack([(first_hit + need - 1)[reachable],
                              np.broadcast_to(first_hit + hits_of, need.shape)[reachable]]).reshape(-1)
    found = np.zeros(need.shape)
    if len(bounds):
        found[reachable] = np.maximum.reduceat(precision, bounds)[::2]
    values = np.zeros((len(levels), len(rows)))
    values[:, with_hits] = found
    return values


def hits_for_recall_levels(R: np.ndarray, rule: str = "round", levels: np.ndarray | None = None) -> np.ndarray:
    """The hits that reach each recall level r (rows; default 0, 0.1, .., 1) for users with R
    relevant items (columns), at least one: ``round`` is trec_eval 10's lround(r·R) (halves away from 0,
    on r·R as a double: 0.7·5 = 3.5 needs 4, 0.7·45 = 31.499999999999996 needs 31), ``add_0.9``
    trec_eval 9's and pytrec_eval's ⌊r·R + 0.9⌋ (0.4 of 3 relevant items needs 2, not 1).

    >>> hits_for_recall_levels(np.array([3, 5]))[[0, 4, 7], :].tolist()
    [[1, 1], [1, 2], [2, 4]]
    >>> hits_for_recall_levels(np.array([3, 5]), "add_0.9")[[0, 4, 7], :].tolist()
    [[1, 1], [2, 2], [2, 4]]
    """
    levels = np.arange(11) / 10 if levels is None else np.asarray(levels, dtype=np.float64)
    share = levels[:, None] * np.asarray(R, dtype=np.float64)
    if rule == "add_0.9":
        need = np.floor(share + 0.9)
    else:
        whole = np.floor(share)
        need = whole + (share - whole >= 0.5)
    return np.maximum(need.astype(np.int64), 1)


def partial_auc(lists: Lists, truth: Truth, rows: np.ndarray, settings: Settings) -> dict[str, np.ndarray]:
    """RecTools' partial AUC metrics at K for users ``rows``, reading each list past K until its
    K-th irrelevant item: with FP(r) the irrelevant items listed above relevant item r,

    pAUC@K = Σ over relevant r listed with FP(r) < K of (K − FP(r)) / (R·K): the area under the ROC
    curve up to its K-th false positive, relevant items not listed counting nothing;
    pAP@K = the same over the first K relevant items listed only, / (min(R, K)·K).

    Both 1 when every relevant item is listed above any irrelevant one (pAP: the first K of them),
    0 when R = 0. Read from the hit cells: FP(r) = items listed above r − hits above r."""
    k = settings.k
    user, position = lists.hit_coordinates
    nth = place_among_hits(user) - 1.0  # hits above
    false_above = _listed_before(lists, user, position) - nth
    area = np.where(false_above < k, k - false_above, 0.0)
    n_users = lists.hit.shape[0]
    R = truth.relevant_count[rows].astype(np.float64)
    pauc = np.bincount(user, weights=area, minlength=n_users)[rows]
    pap = np.bincount(user, weights=np.where(nth < k, area, 0.0), minlength=n_users)[rows]
    return {"pauc": ratio(pauc, R * k), "pap": ratio(pap, np.minimum(R, k) * k)}


def _listed_before(lists: Lists, user: np.ndarray, position: np.ndarray) -> np.ndarray:
    """Items listed before each cell (``user``, ``position``): its position, less the empty cells
    before it in lists with gaps (rank gaps leave them)."""
    before = position.astype(np.float64)
    if lists.gapless:
        return before
    gapped = distinct(user)
    empty_before = np.cumsum(lists.items[gapped] < 0, axis=1) - (lists.items[gapped] < 0)
    return before - empty_before[np.searchsorted(gapped, user), position]


def judged_share(lists: Lists, truth: Truth, rows: np.ndarray, settings: Settings) -> dict[str, np.ndarray]:
    """Judged@K for users ``rows`` (ir_measures' ``Judged@k``): the share of the items in the top K
    that the ground truth has a row for, relevant, judged non-relevant or in the pool unjudged (a
    negative grade), over the items listed in the top K; 0 for an empty top K."""
    k = min(settings.k, lists.positions)
    judged = lists.hit[rows, :k].copy()
    if truth.judges:
        judged |= lists.judged_cells(truth)[rows, :k]
    pooled = lists.pooled_cells(truth)
    if pooled is not None:
        judged |= pooled[rows, :k]
    listed = (lists.items[rows, :k] >= 0).sum(axis=1).astype(np.float64)
    return {"judged": ratio(judged.sum(axis=1).astype(np.float64), listed)}



def label_ranking_ap(lists: Lists, truth: Truth, rows: np.ndarray, settings: Settings) -> dict[str, np.ndarray]:
    """Label ranking average precision over the top K for users ``rows`` (scikit-learn's
    ``label_ranking_average_precision_score`` with the list's scores as the labels' scores):

        LRAP = (1/R)·Σ over relevant items j in the top K of |{relevant i in the top K: s_i ≥ s_j}|
               / |{i in the top K: s_i ≥ s_j}|

    Items tied with j count as ranked above it (the pessimistic reading of a tie). Relevant items
    not in the top K add 0, so with every candidate listed and K covering them it is
    scikit-learn's value; without scores (ranks only) there are no ties and it is AP over R at K.
    0 when R = 0 (scikit-learn gives 1 to a sample without a relevant label). Ties are the runs of
    equal scores along the list's order (all of them when lists are ordered by score).
    """
    k = min(settings.k, lists.positions)
    row, user, position, _ = hits_of_users(lists, rows, k)
    last = tie_ends(lists.scores, user, position, k)
    width = lists.positions
    cells = user * width + position  # (ascending: by user, then position)
    above = np.searchsorted(cells, user * width + last, side="right") - np.searchsorted(cells, user * width)
    terms = above / (_listed_before(lists, user, last) + 1.0)
    total = np.bincount(row, weights=terms, minlength=len(rows))
    return {"lrap": ratio(total, truth.relevant_count[rows].astype(np.float64))}



def expected_exposure(lists: Lists, truth: Truth, rows: np.ndarray, settings: Settings) -> dict[str, np.ndarray]:
    """Expected exposure over the top K (Diaz et al., CIKM 2020; TREC Fair Ranking) for users
    ``rows``, with the RBP browsing model: the item at rank i gets exposure ε_i = γ^(i−1),
    γ = ``ee_patience``. The target ε* is the ideal policy's: the R relevant items share the
    first min(R, K) ranks at random, each expecting e* = (1 − γ^min(R, K)) / (R·(1 − γ)); an
    irrelevant item's target is 0 (the catalog shares the rest, each a vanishing part).

        EE-D (disparity) = ‖ε‖² = Σ over listed ranks i ≤ K of γ^(2(i−1))
        EE-R (relevance) = ε·ε* = e* · Σ over relevant items at rank i ≤ K of γ^(i−1)
        EE-L (loss)      = ‖ε − ε*‖² = EE-D − 2·EE-R + R·e*²

    One list is a deterministic policy: its expected exposure is its exposure. EE-L is 0 for a
    single relevant item listed first. A user without a relevant item (averaged only with
    ``users_without_relevant="zero"``) has e* = 0, EE-R = 0 and EE-L = EE-D, the exposure given
    to irrelevant items.
    """
    k = min(settings.k, lists.positions)
    patience = settings.ee_patience
    weight = patience ** np.arange(k, dtype=np.float64)
    if lists.gapless:  # the first min(length, K) ranks are filled: a prefix sum of γ^(2(i−1))
        filled = np.minimum(lists.lengths[rows], k).astype(np.intp)
        disparity = np.concatenate([[0.0], np.cumsum(weight * weight)])[filled]
    else:
        disparity = np.where(lists.items[user_rows(rows), :k] >= 0, weight * weight, 0.0).sum(axis=1)
    row, _, position, _ = hits_of_users(lists, rows, k)
    R = truth.relevant_count[rows].astype(np.float64)
    shared = np.minimum(R, settings.k)
    target = ratio(1.0 - patience ** shared, R * (1.0 - patience))
    relevance = target * np.bincount(row, weights=weight[position], minlength=len(rows))
    return {"ee_disparity": disparity, "ee_relevance": relevance,
            "ee_loss": np.maximum(disparity - 2.0 * relevance + R * target * target, 0.0)}


def expected_exposure_curves(lists: Lists, truth: Truth, rows: np.ndarray, settings: Settings) -> dict[str, np.ndarray]:
    """:func:`expected_exposure`'s three means over users ``rows`` at every k = 1 .. the longest
    list, each equal to the mean at K = k: EE-D and EE-R are sums over places, place j's terms
    counted once over the users (EE-R's target e* depends on R and k, so the hits' weights are
    summed per relevant count R and place first); EE-L's mean is EE-D − 2·EE-R + mean of R·e*².
    NaN without users."""
    width, patience, n = lists.positions, settings.ee_patience, len(rows)
    if n == 0:
        return dict.fromkeys(("ee_disparity", "ee_relevance", "ee_loss"), np.full(width, np.nan))
    weight = patience ** np.arange(width, dtype=np.float64)
    if lists.gapless:  # (place j is filled for the lists longer than j)
        listed_at = n - np.cumsum(np.bincount(np.minimum(lists.lengths[rows], width).astype(np.intp),
                                              minlength=width + 1))[:width]
    else:
        listed_at = (lists.items[user_rows(rows)] >= 0).sum(axis=0)
    disparity = np.cumsum(weight * weight * listed_at)
    row, _, position, _ = hits_of_users(lists, rows)
    relevant, at_row = np.unique(truth.relevant_count[rows].astype(np.float64), return_inverse=True)
    by_count = np.bincount(at_row[row] * width + position, weights=weight[position],
                           minlength=len(relevant) * width).reshape(len(relevant), width).cumsum(axis=1)
    k = np.arange(1, width + 1, dtype=np.float64)
    target = ratio(1.0 - patience ** np.minimum(relevant[:, None], k), relevant[:, None] * (1.0 - patience))
    relevance = (target * by_count).sum(axis=0)
    users_of_count = np.bincount(at_row, minlength=len(relevant)).astype(np.float64)
    squared_target = ((users_of_count * relevant)[:, None] * target * target).sum(axis=0)
    return {"ee_disparity": disparity / n, "ee_relevance": relevance / n,
            "ee_loss": (disparity - 2.0 * relevance + squared_target) / n}
