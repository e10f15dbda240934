"""Gains, discounts and the ideal DCG that NDCG divides by, and NDCG's sums over users at every
k from the hit cells (its factor, 1 / IDCG, is a user's own when grades differ)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import numpy as np

from metrics_core._numeric.counts import stable_order
from metrics_core.inputs.encoded import compiled_for
from metrics_core.metrics.accuracy.cutoffs import Cutoffs, ratio

if TYPE_CHECKING:
    from metrics_core.inputs.encoded import Truth
    from metrics_core.metrics.accuracy.hits import Hits
    from metrics_core.metrics.accuracy.kernels import Totals

RANK_BY_RANK_DEPTH = 32  # IDCG no deeper than this is summed rank by rank (see ideal_dcg_at)


def discount(n: int, kind: str = "log2") -> np.ndarray:
    """The weight of each rank i = 1 .. n in DCG: 1 / log2(i + 1) (``log2``), or LensKit's
    1 / log2(max(i, 2)) (``lenskit``: the first two ranks weigh 1).

    >>> discount(3).round(4).tolist(), discount(3, "lenskit").round(4).tolist()
    ([1.0, 0.6309, 0.5], [1.0, 1.0, 0.6309])
    """
    if kind == "lenskit":
        return 1.0 / np.log2(np.maximum(np.arange(1, n + 1), 2))
    return 1.0 / np.log2(np.arange(2, n + 2))


def gain(grades: np.ndarray, kind) -> np.ndarray:
    """The NDCG gain of relevant grades: the grade (``linear``), 2^grade - 1 (``exponential``),
    1 (``binary``), or custom ((grade, gain), ...) pairs, a grade not among them keeping its
    own value (trec_eval's rule).

    >>> gain(np.array([1.0, 2.0, 3.0]), ((1.0, 3.0), (2.0, 9.0)))
    array([3., 9., 3.])
    """
    if kind == "binary":
        return np.ones_like(grades)
    if kind == "linear":
        return grades
    if kind == "exponential":
        return np.exp2(grades) - 1.0
    mapped_grades, mapped_gains = (np.array(column, dtype=np.float64) for column in zip(*kind, strict=True))
    at = np.clip(np.searchsorted(mapped_grades, grades), 0, len(mapped_grades) - 1)
    return np.where(mapped_grades[at] == grades, mapped_gains[at], grades)


def ranked_grades(truth: Truth, kind) -> np.ndarray:
    """The ground truth's grades with each user's in the order an ideal list takes them: highest
    gain first. The truth keeps each user's grades highest first, which is that order for every
    named gain and for custom gains that do not fall as grades rise; custom gains that do fall
    (trec_eval's ``ndcg`` accepts ``1=3,2=9,4=4.5``; a grade not listed keeps its own value, so
    ``1=3,2=9`` falls at grade 3) reorder each user's grades by gain, ties in the truth's order,
    once per gain, kept with the truth.

    >>> from types import SimpleNamespace
    >>> truth = SimpleNamespace(grade=np.array([4.0, 2.0, 1.0, 4.0]), user=np.array([0, 0, 0, 1]), derived={})
    >>> ranked_grades(truth, ((1.0, 3.0), (2.0, 9.0), (4.0, 4.5))).tolist()
    [2.0, 4.0, 1.0, 4.0]
    """
    if isinstance(kind, str):
        return truth.grade
    key = ("ranked_grades", kind)
    if key not in truth.derived:
        gains = gain(truth.grade.astype(np.float64), kind)
        same_user = truth.user[1:] == truth.user[:-1]
        if np.all(gains[1:][same_user] <= gains[:-1][same_user]):  # (a grade not listed keeps its value)
            truth.derived[key] = truth.grade
        else:
            truth.derived[key] = truth.grade[np.lexsort((-gains, truth.user))]  # (stable: ties keep their order)
    return truth.derived[key]


def uniform_gain(truth: Truth, kind) -> float:
    """The gain of every relevant item when all grades are equal (the lists then carry hits
    only, no grades): NDCG does not depend on it, DCG is scaled by it."""
    return float(gain(truth.grade[:1].astype(np.float64), kind)[0]) if len(truth.grade) else 1.0


def discounted_gain(hits: Hits) -> np.ndarray:
    """Each hit's gain times its rank's discount (1 / log2(rank + 1) by default): its term of DCG."""
    return hits.gain * discount(hits.width, hits.settings.dcg_discount)[hits.position]


def dcg(gains: np.ndarray, cut: Cutoffs, discount_kind: str = "log2") -> np.ndarray:
    """DCG@k = Σ_{i≤k} g(grade_i) · discount(i), from position-wise gains."""
    return cut.prefix(gains * discount(gains.shape[1], discount_kind))


def ideal_dcg(truth: Truth, part: np.ndarray, cut: Cutoffs, kind, ideal: str = "cut_at_k",
              discount_kind: str = "log2") -> np.ndarray:
    """IDCG@k for each reported k, as ``ideal`` says:

    - ``cut_at_k`` (default): the DCG of the user's min(k, R) highest grades;
    - ``all_relevant``: the DCG of all R grades whatever k (trec_eval's ``ndcg`` on a run
      that holds only the top k);
    - ``k_relevant``: an ideal list of k relevant items, each with the user's highest gain
      (RecTools' NDCG, which has binary relevance: Σ_{i≤k} 1 / log2(i + 1)).

    ``discount_kind``: each rank's weight (:func:`discount`).
    """
    if ideal == "all_relevant":
        full = ideal_dcg_at_relevant(truth, kind, discount_kind)[part]
        return np.repeat(full[:, None], len(cut.k), axis=1)
    if ideal == "k_relevant":
        R = truth.relevant_count[part]
        top = np.where(R > 0, 1.0, 0.0) if not truth.graded or kind == "binary" else \
            np.where(R > 0, gain(ranked_grades(truth, kind)[np.minimum(truth.starts[part], len(truth.grade) - 1)],
                                 kind), 0.0)
        return top[:, None] * cumulative_discount(cut.k.astype(np.int64), discount_kind)[None, :]
    return _ideal_dcg_cut(truth, part, cut, kind, discount_kind)


def cumulative_discount(k: np.ndarray, kind: str = "log2", block: int = 1 << 20) -> np.ndarray:
    """Σ_{i≤k} discount(i) for each k (1 / log2(i + 1) by default), in blocks (k may be far
    beyond any list).

    >>> cumulative_discount(np.array([1, 3])).round(4), cumulative_discount(np.array([1, 3]), "lenskit").round(4)
    (array([1.    , 2.1309]), array([1.    , 2.6309]))
    """
    out, total, done = np.empty(len(k)), 0.0, 0
    for j, depth in enumerate(k):
        while done < depth:
            stop = min(depth, done + block)
            ranks = np.arange(done + 1, stop + 1)
            total += float(np.sum(1.0 / np.log2(np.maximum(ranks, 2) if kind == "lenskit" else ranks + 1)))
            done = stop
        out[j] = total
    return out


def _ideal_dcg_cut(truth: Truth, part: np.ndarray, cut: Cutoffs, kind, discount_kind: str = "log2") -> np.ndarray:
    """IDCG@k for each reported k: the DCG of the user's min(k, R) highest grades.

    With equal grades this is the cumulative discount at min(k, R), a gather; otherwise the
    user's sorted grades (the truth is stored in that order) are placed in a users x width
    array and summed, and a k beyond the width sums the user's grades directly.
    """
    R = truth.relevant_count[part]
    k = cut.k.astype(np.int64)
    deepest = int(min(k[-1], R.max(initial=0)))
    if not truth.graded or kind == "binary":
        cumulative = np.concatenate([[0.0], np.cumsum(discount(deepest, discount_kind))])
        return cumulative[np.minimum(k[None, :], R[:, None])]
    if len(k) == 1 and k[0] <= cut.width:  # (at K alone: no users x width array; every model reads the same)
        return ideal_dcg_at_k(truth, int(k[0]), kind, discount_kind)[part][:, None]
    out = np.empty((len(part), len(k)))
    inside = k <= cut.width
    shown = np.minimum(R, cut.width)
    ideal = np.zeros((len(part), cut.width))
    row, place, grade = sorted_gains(truth, part, shown, kind)
    ideal[row, place] = grade
    out[:, inside] = dcg(ideal, Cutoffs.up_to(cut.width), discount_kind)[:, k[inside] - 1]
    disc = discount(deepest, discount_kind)
    for j in np.flatnonzero(~inside):
        row, place, grade = sorted_gains(truth, part, np.minimum(R, k[j]), kind)
        out[:, j] = np.bincount(row, weights=grade * disc[place], minlength=len(part))
    return out


def sorted_gains(truth: Truth, part: np.ndarray, shown: np.ndarray, kind):
    """``(row, place, gain)`` of the ``shown[u]`` highest grades of each user ``part[u]``."""
    row = np.repeat(np.arange(len(part)), shown)
    place = np.arange(shown.sum()) - np.repeat(np.cumsum(shown) - shown, shown)
    return row, place, gain(ranked_grades(truth, kind)[np.repeat(truth.starts[part], shown) + place], kind)


def ideal_dcg_at_relevant(truth: Truth, kind, discount_kind: str = "log2") -> np.ndarray:
    """IDCG@R of every user, the DCG of all its grades: made once per gain and discount and kept
    with the ground truth (:attr:`Truth.derived`), since every evaluation of every model and K
    asks for it."""
    key = ("ideal_dcg_at_relevant", "binary" if not truth.graded else kind, discount_kind)
    if key not in truth.derived:  # (two threads may both make it: the same values)
        truth.derived[key] = ideal_dcg_at(truth, np.arange(len(truth.relevant_count)), truth.relevant_count, kind,
                                          discount_kind)
    return truth.derived[key]


KEPT_K = 4  # the IDCG@K of this many K are kept with the ground truth (8 MB each at 1M users)
_KEEPING = threading.Lock()


def ideal_dcg_at_k(truth: Truth, k: int, kind, discount_kind: str = "log2") -> np.ndarray:
    """IDCG@k of every user, made once per k, gain and discount and kept with the ground truth
    (:attr:`Truth.derived`) for the last :data:`KEPT_K` k: every model evaluated at a K reads the
    same (75 ms per model at 1M graded users, K = 9, before)."""
    with _KEEPING:
        kept = truth.derived.setdefault(("ideal_dcg_at_k", kind, discount_kind), {})
        if k not in kept:
            kept[k] = ideal_dcg_at(truth, np.arange(len(truth.relevant_count)), k, kind, discount_kind)
            while len(kept) > KEPT_K:
                kept.pop(next(iter(kept)))
        return kept[k]


def ideal_dcg_at(truth: Truth, part: np.ndarray, depth: np.ndarray | int, kind,
                 discount_kind: str = "log2") -> np.ndarray:
    """IDCG of each user at its own depth: the DCG of its ``depth[u]`` highest grades.

    Graded, its gains over log2(i + 2) are added in rank order, as :func:`dcg` adds a row: a
    few ranks deep (K, as a rule), rank by rank over every user, each rank's grades read at
    ascending places of the ground truth; deeper (R), user by user, from each user's grades
    laid out in a row."""
    shown = np.minimum(truth.relevant_count[part], depth)
    deepest = int(shown.max(initial=0))
    disc = discount(deepest, discount_kind)
    if not truth.graded or kind == "binary":
        return np.concatenate([[0.0], np.cumsum(disc)])[shown]
    if deepest <= RANK_BY_RANK_DEPTH and compiled_for(len(part) * deepest):
        return _compiled_ideal(truth, part, shown, kind, disc)
    if deepest <= RANK_BY_RANK_DEPTH:
        starts, ideal, ranked = truth.starts[part], np.zeros(len(part)), ranked_grades(truth, kind)
        for i in range(deepest):
            deeper = i < shown  # (the users counting an i-th grade)
            grades = ranked[np.where(deeper, starts + i, 0)].astype(np.float64)
            ideal += np.where(deeper, gain(grades, kind) * disc[i], 0.0)
        return ideal
    row, place, grade = sorted_gains(truth, part, shown, kind)
    return np.bincount(row, weights=grade * disc[place], minlength=len(part))


def _compiled_ideal(truth: Truth, part: np.ndarray, shown: np.ndarray, kind, disc: np.ndarray) -> np.ndarray:
    """:func:`ideal_dcg_at` a few ranks deep by one compiled pass over the users
    (:func:`~metrics_core.inputs.kernels.ideal_rows`): each user's gains times the discounts, added
    in rank order as the rank-by-rank sum adds them (the same values), from the grades' gains made
    once per gain and kept with the truth (25 passes over 1M users took 0.1-0.3 s at K = 25)."""
    from metrics_core._numeric.parallel import map_chunks, thread_shares
    from metrics_core.inputs.kernels import ideal_rows

    key = ("gains", kind)
    if key not in truth.derived:  # (two threads may both make it: the same values)
        truth.derived[key] = gain(ranked_grades(truth, kind).astype(np.float64), kind)
    gains = truth.derived[key]
    starts, depth = truth.starts[part].astype(np.int64), shown.astype(np.int64)
    out = np.empty(len(part))
    map_chunks(lambda start, stop: ideal_rows(starts, depth, gains, disc, out, start, stop), thread_shares(len(part)))
    return out


def ndcg_totals(t: Totals) -> np.ndarray:
    """Σ over users of NDCG@k = DCG@k / IDCG@k at each reported k, from the hit cells.

    With equal gains IDCG depends on k and R only: the R groups' DCG over their IDCG. With
    graded gains, IDCG is the user's own: ``all_relevant`` and ``k_relevant`` make it a
    constant or a constant times Σ_{i≤k} 1/log2(i + 1), so each hit is weighed by the user's
    constant; ``cut_at_k`` (the default) grows with k up to R and is constant beyond, so
    users are split at k = R: for k >= R each hit is weighed by 1 / IDCG(R) (summed per R
    group, counted from k = R on), for k < R the ratio is taken cell by cell over the first
    R - 1 ranks of each user (as many cells as relevant items, not as list cells).
    """
    truth, rows, cut, settings, hits = t.truth, t.rows, t.cut, t.settings, t.hits
    weight = discounted_gain(hits)
    if not truth.graded or settings.gain == "binary":
        representatives = rows[np.unique(np.searchsorted(t.distinct_relevant, truth.relevant_count[rows]),
                                         return_index=True)[1]]
        ideal = ideal_dcg(truth, representatives, cut, settings.gain, settings.ndcg_ideal, settings.dcg_discount)
        return ratio(t.running_by_relevant(weight), ideal).sum(axis=0)
    k = cut.k
    if settings.ndcg_ideal != "cut_at_k":  # IDCG@k = the user's IDCG@1 (k_relevant: times Σ_{i≤k} 1/log2(i + 1))
        at_one = ideal_dcg(truth, rows, Cutoffs(cut.width, k[:1]), settings.gain, settings.ndcg_ideal,
                           settings.dcg_discount)[:, 0]
        weighed = np.cumsum(np.bincount(hits.position, weights=ratio(weight, at_one[hits.row]),
                                        minlength=cut.width))[cut.columns]
        return weighed if settings.ndcg_ideal == "all_relevant" else \
            weighed / cumulative_discount(k.astype(np.int64), settings.dcg_discount)
    ideal_at_R, below_R = _ndcg_below_relevant(truth, rows, cut, hits.row, hits.position, weight, settings.gain,
                                               settings.dcg_discount)
    # k >= R: DCG@k / IDCG(R), per R group, each k counting the groups with R <= k
    beyond_R = t.running_by_relevant(ratio(weight, ideal_at_R[hits.row]))
    return (beyond_R * (t.distinct_relevant[:, None] <= k[None, :])).sum(axis=0) + below_R


def _ndcg_below_relevant(truth: Truth, rows: np.ndarray, cut: Cutoffs, row, position,
                         weight, kind, discount_kind: str = "log2") -> tuple[np.ndarray, np.ndarray]:
    """Each row's IDCG at min(R, the largest reported k), which is IDCG(R) for every user the
    k >= R part counts; and Σ over users with R > k of DCG@k / IDCG@k at each reported k
    (graded ``cut_at_k``); ``weight`` is each hit cell's gain / log2(rank + 1), ``row`` its
    user's place in ``rows``.

    Rank by rank (j = 0 .. the largest reported k, or the largest R when smaller: a loop whose
    length never depends on how many relevant items a user has), over users ``rows`` ordered
    by R, largest first, so that the users with R > j are the first n_j: each grows its IDCG
    by its (j + 1)-th highest grade's gain / log2(j + 2), and its DCG by its hit at rank
    j + 1, if any. A user's running sums are therefore its own values added in rank order, as
    ``np.cumsum`` of its row adds them (a running sum over all users less each one's start
    would round a user's values to the scale of all the users before it). The loop runs over
    ranks, never over users.
    """
    R = truth.relevant_count[rows]
    order = stable_order(R, descending=True)
    R_sorted = R[order]
    deepest = min(int(R_sorted[0]) if len(R_sorted) else 0, int(cut.k[-1]))  # no k reads a deeper rank
    users_deeper = np.searchsorted(-R_sorted, -np.arange(deepest + 1), side="left")  # n_j: users with R > j
    first_grade = truth.starts[rows][order]
    disc = discount(max(deepest, 1), discount_kind)
    place_of_row = np.empty(len(rows), dtype=np.intp)
    place_of_row[order] = np.arange(len(rows))
    hit_place = place_of_row[row]
    by_rank = stable_order(position)
    hits_at = np.searchsorted(position[by_rank], np.arange(cut.width + 1))  # rank j's hits: by_rank[hits_at[j]:..]
    reported = {int(k) - 1: column for column, k in enumerate(cut.k)}
    ideal, dcg_so_far, below = np.zeros(len(rows)), np.zeros(len(rows)), np.zeros(len(cut.k))
    ranked = ranked_grades(truth, kind)
    for j in range(deepest):
        n = users_deeper[j]
        ideal[:n] += gain(ranked[first_grade[:n] + j].astype(np.float64), kind) * disc[j]
        if j < cut.width:
            at = by_rank[hits_at[j]:hits_at[j + 1]]
            inside = hit_place[at] < n
            dcg_so_far[hit_place[at[inside]]] += weight[at[inside]]
        if j in reported:  # k = j + 1: the users with R > k
            shown = users_deeper[j + 1]
            below[reported[j]] = ratio(dcg_so_far[:shown], ideal[:shown]).sum()
    ideal_at_R = np.zeros(len(rows))
    ideal_at_R[order] = ideal
    return ideal_at_R, below
