"""Accuracy metrics at every cut-off k = 1 .. K_max in one pass over a users x positions array.

Notation (per user): ``hit[i]`` = 1 when the item at rank i is relevant, ``H[k]`` = hits in
the top k, ``F[k]`` = items in the top k, ``R`` = relevant items in the ground truth (all of
them, recommended or not). Each function takes arrays of shape (users, K_max) for one chunk
of users and returns the metric at every k, per user. Divisions by zero give 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from metrics_core.counts import distinct_and_groups, stable_order
from metrics_core.inputs.encoded import Lists, Truth
from metrics_core.metrics.registry import accuracy_kernels
from metrics_core.parallel import THREADS, chunks, map_chunks
from metrics_core.settings import Settings
from metrics_core.sums import column_sums, row_sums

COLUMN_LOOP_WIDTH = 256
CHUNK_CELLS = 1 << 18


def running_sum(values: np.ndarray) -> np.ndarray:
    """Cumulative sum along each row, as float64: the same additions in the same order as
    ``np.cumsum(values, axis=1)``, done one column at a time over all rows (numpy's row-wise
    cumsum pays a loop per row; this loop is over list positions, up to 256 of them).

    >>> running_sum(np.array([[1, 0, 2], [0, 1, 1]]))
    array([[1., 1., 3.],
           [0., 1., 2.]])
    """
    rows, width = values.shape
    if width > COLUMN_LOOP_WIDTH:
        return np.cumsum(values, axis=1, dtype=np.float64)
    out = np.empty((rows, width))
    if width:
        out[:, 0] = values[:, 0]
    for column in range(1, width):
        np.add(out[:, column - 1], values[:, column], out=out[:, column])
    return out


@dataclass(frozen=True)
class Cutoffs:
    """The cut-offs ``k`` a pass reports (ascending), over position-wise arrays ``width`` wide.

    The arrays are never wider than the longest list: a cut-off beyond it reads the last
    position (nothing changes past the end of a list but the value of k itself, which the
    metrics that depend on it receive). :meth:`prefix` and :meth:`at` turn position-wise
    arrays into one column per reported k, so reporting only K costs one sum per user
    instead of a running sum.
    """

    width: int
    k: np.ndarray

    @classmethod
    def up_to(cls, width: int) -> Cutoffs:
        """Every k = 1 .. ``width``."""
        return cls(width, np.arange(1, width + 1, dtype=np.float64))

    @classmethod
    def for_pass(cls, positions: int, cutoff: int, curves: bool) -> Cutoffs:
        """Every k up to the longest list (``positions``) and K = ``cutoff`` (``curves``), or K
        alone; arrays at most ``positions`` wide whatever K.

        >>> Cutoffs.for_pass(3, 100_000_000, curves=True).k
        array([1.e+00, 2.e+00, 3.e+00, 1.e+08])
        >>> Cutoffs.for_pass(3, 100_000_000, curves=False).width
        3
        """
        if not curves:
            return cls(min(cutoff, positions), np.array([float(cutoff)]))
        every = cls.up_to(positions)
        return every if cutoff <= positions else cls(positions, np.append(every.k, float(cutoff)))

    @property
    def every(self) -> bool:
        """Whether the reported cut-offs are exactly 1 .. width (one per position)."""
        return len(self.k) == self.width and self.k[-1] == self.width

    @property
    def positions(self) -> np.ndarray:
        """Ranks 1 .. width."""
        return np.arange(1, self.width + 1, dtype=np.float64)

    @property
    def columns(self) -> np.ndarray:
        """The position (0-based) each reported k reads: k - 1, or the last one beyond the width."""
        return (np.minimum(self.k, self.width) - 1).astype(np.intp)

    def column_of(self, cutoff: int) -> int:
        """Where ``cutoff`` is among the reported cut-offs."""
        return int(np.searchsorted(self.k, cutoff))

    def prefix(self, values: np.ndarray) -> np.ndarray:
        """Σ_{i≤k} values[:, i] for each reported k.

        >>> Cutoffs(3, np.array([3.0])).prefix(np.array([[1, 0, 2]]))
        array([[3.]])
        """
        if self.every:
            return running_sum(values)
        if len(self.k) == 1 and self.k[0] >= self.width:
            return row_sums(values)[:, None]
        return running_sum(values)[:, self.columns]

    def at(self, values: np.ndarray) -> np.ndarray:
        """values[:, k - 1] for each reported k (the last position for k beyond the width)."""
        return values if self.every else values[:, self.columns]


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    numerator, denominator = np.broadcast_arrays(numerator, denominator)
    return np.divide(numerator, denominator, out=np.zeros(numerator.shape), where=denominator > 0)


def precision(H: np.ndarray, k: np.ndarray, F: np.ndarray | None, denominator: str = "k",
              R: np.ndarray | None = None) -> np.ndarray:
    """Precision@k = H[k] / k; with ``denominator="list"``, H[k] / F[k] (Evidently); with
    ``"min_k_relevant"``, H[k] / min(k, R) (RecTools' R-precision, 0 when R = 0).

    >>> precision(np.array([[1, 1, 2]]), np.arange(1, 4), np.array([[1, 2, 3]])).round(3)
    array([[1.   , 0.5  , 0.667]])
    """
    if denominator == "k":
        return H / k
    if denominator == "list":
        return _ratio(H, F)
    return relative_precision(H, k, R)


def relative_precision(H: np.ndarray, k: np.ndarray, R: np.ndarray) -> np.ndarray:
    """Precision@k / min(1, R / k) = H[k] / min(k, R): the share of the best possible
    precision reached (1 when every slot that could hold a relevant item does; 0 when R = 0).

    >>> relative_precision(np.array([[1.0, 1.0, 2.0]]), np.arange(1.0, 4.0), np.array([2.0]))
    array([[1. , 0.5, 1. ]])
    """
    return _ratio(H, np.minimum(k[None, :], R[:, None]))


def rank_biased_precision(hit: np.ndarray, cut: Cutoffs, persistence: float) -> np.ndarray:
    """RBP@k = (1 - p)·Σ_{i≤k} rel(i)·p^(i-1), p the persistence (the chance a reader goes on
    to the next item); binary relevance.

    >>> rank_biased_precision(np.array([[True, False, True]]), Cutoffs.up_to(3), 0.5)
    array([[0.5  , 0.5  , 0.625]])
    """
    return cut.prefix(hit * _rbp_weights(cut.width, persistence))


def _rbp_weights(width: int, persistence: float) -> np.ndarray:
    return (1.0 - persistence) * persistence ** np.arange(width, dtype=np.float64)


def _hits_of(lists: Lists, rows: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(user, position, cell)`` of the hit cells of users ``rows`` in the first ``depth`` positions."""
    user, position = lists.hit_coordinates
    evaluated = np.zeros(lists.hit.shape[0], dtype=bool)
    evaluated[rows] = True
    keep = evaluated[user] & (position < depth)
    return user[keep], position[keep], lists.hit_cells[keep]


def _place_among_hits(row: np.ndarray) -> np.ndarray:
    """j for each hit cell, the j-th hit of its row (1-based), from the cells' rows in
    ascending order.

    >>> _place_among_hits(np.array([0, 0, 2, 2, 2]))
    array([1., 2., 1., 2., 3.])
    """
    start = np.flatnonzero(np.diff(row, prepend=-1))
    return np.arange(len(row)) - np.repeat(start, np.diff(np.append(start, len(row)))) + 1.0


def _first_hit_rank(row: np.ndarray, position: np.ndarray, n_rows: int) -> np.ndarray:
    """The rank of each row's first hit, inf when it has none, from the hit cells' rows
    (ascending) and positions (ascending within a row).

    >>> _first_hit_rank(np.array([0, 0, 2]), np.array([3, 5, 0]), 3)
    array([ 4., inf,  1.])
    """
    first = np.full(n_rows, np.inf)
    start = np.flatnonzero(np.diff(row, prepend=-1))
    first[row[start]] = position[start] + 1.0
    return first


def _hit_gains(lists: Lists, cell: np.ndarray, kind) -> np.ndarray:
    """The gain of the grade at each flat hit cell ``cell``; 1 when the lists carry no grades
    (every grade is equal) or the gain is binary."""
    if lists.grade is None or kind == "binary":
        return np.ones(len(cell))
    return _gain(lists.grade.reshape(-1)[cell].astype(np.float64), kind)


def rbp_from_hits(hits: tuple[np.ndarray, np.ndarray, np.ndarray], cut: Cutoffs, persistence: float) -> np.ndarray:
    """Σ over users of RBP at each reported k, from the users' hit cells (``_hits_of``; a hit's
    weight depends on its rank only): no users x k array."""
    _, position, _ = hits
    by_rank = np.bincount(position, weights=_rbp_weights(cut.width, persistence)[position], minlength=cut.width)
    return np.cumsum(by_rank)[cut.columns]


def dcg_from_hits(lists: Lists, truth: Truth, hits: tuple[np.ndarray, np.ndarray, np.ndarray], cut: Cutoffs,
                  gain) -> np.ndarray:
    """Σ over users of DCG at each reported k, from the users' hit cells (``_hits_of``)."""
    _, position, cell = hits
    gains = _hit_gains(lists, cell, gain) * (uniform_gain(truth, gain) if lists.grade is None else 1.0)
    by_rank = np.bincount(position, weights=gains * discount(cut.width)[position], minlength=cut.width)
    return np.cumsum(by_rank)[cut.columns]


def bpref(hit: np.ndarray, judged: np.ndarray, R: np.ndarray, N: np.ndarray, cut: Cutoffs) -> np.ndarray:
    """bpref@k = (1/R)·Σ over relevant items r in the top k of (1 - min(n_r, R) / min(R, N)),
    n_r the judged non-relevant items ranked above r (a term is 1 when n_r = 0), N the user's
    judged non-relevant items; unjudged items count for nothing (trec_eval's ``bpref``).

    >>> bpref(np.array([[False, True, True]]), np.array([[True, False, False]]), np.array([2.0]),
    ...       np.array([4.0]), Cutoffs.up_to(3))
    array([[0.  , 0.25, 0.5 ]])
    """
    above = running_sum(judged) - judged  # judged non-relevant items before each position
    scale = np.maximum(np.minimum(R, N), 1.0)[:, None]
    terms = np.where(hit, 1.0 - np.minimum(above, R[:, None]) / scale, 0.0)
    return cut.prefix(terms) * _inverse(R)[:, None]


INFAP_EPSILON = 1e-5  # trec_eval's smoothing of the precision among judged items above


def infap(hit: np.ndarray, judged: np.ndarray, R: np.ndarray, cut: Cutoffs,
          pooled: np.ndarray | None = None) -> np.ndarray:
    """infAP@k (trec_eval's ``infAP``, Yilmaz and Aslam) = (1/R)·Σ over relevant items r in the
    top k, at rank i, of 1/i + ((a + n + u)/i)·(a + ε)/(a + n + 2ε), with a the relevant, n the
    judged non-relevant and u the pooled but unjudged items ranked above r (``pooled``: a
    negative grade in qrels, trec_eval's -1), and ε = 1e-5. Items outside the ground truth are
    outside the pool: they lower the share of pooled items above r, (a + n + u)/(i - 1), for
    which the precision among the judged ones stands in. The first rank's term is 1. 0 when R = 0.

    >>> infap(np.array([[False, True, True]]), np.array([[True, False, False]]), np.array([2.0]),
    ...       Cutoffs.up_to(3)).round(4)
    array([[0.    , 0.25  , 0.5833]])
    >>> infap(np.array([[False, True, False, True]]), np.array([[False, False, True, False]]), np.array([2.0]),
    ...       Cutoffs.up_to(4), pooled=np.array([[True, False, False, False]])).round(4).tolist()
    [[0.0, 0.375, 0.375, 0.6875]]
    """
    above_relevant = running_sum(hit) - hit
    above_judged = above_relevant + running_sum(judged) - judged
    above_pooled = above_judged if pooled is None else above_judged + running_sum(pooled) - pooled
    rank = np.arange(1, hit.shape[1] + 1, dtype=np.float64)
    share = (above_relevant + INFAP_EPSILON) / (above_judged + 2 * INFAP_EPSILON)
    terms = np.where(hit, (1.0 + above_pooled * share) / rank, 0.0)
    return cut.prefix(terms) * _inverse(R)[:, None]


def judged_at_k(hits: np.ndarray, judged: np.ndarray, width: int, R: np.ndarray, N: np.ndarray,
                pooled: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """bpref@k and infAP@k for one k (as :func:`bpref` and :func:`infap`, users x 1), from the
    hit cells and the judged non-relevant cells in the top k alone (flat cells ``row · width +
    position`` of a users x ``width`` array, ascending): each hit's term needs the relevant (a)
    and judged non-relevant (n) items ranked above it, counted among its row's few marked
    cells instead of by running sums over the users x width arrays (1M users at K = 10, in one
    call: 771 → 28 ms of CPU). ``pooled``: the flat cells of pooled but unjudged items.

    >>> values = judged_at_k(np.array([1, 2]), np.array([0]), 3, np.array([2.0]), np.array([4.0]))
    >>> values["bpref"], values["infap"].round(4)
    (array([[0.5]]), array([[0.5833]]))
    """
    user, position = np.divmod(hits, width)
    row_start = user * width
    above_relevant = _place_among_hits(user) - 1.0
    terms = judged_terms(judged, hits, row_start, above_relevant, R[user], N[user], position, pooled)
    inverse_R = _inverse(R)
    return {name: (np.bincount(user, weights=term, minlength=len(R)) * inverse_R)[:, None]
            for name, term in terms.items()}


def judged_terms(judged: np.ndarray, cell: np.ndarray, row_start: np.ndarray, above_relevant: np.ndarray,
                 R: np.ndarray, N: np.ndarray, position: np.ndarray,
                 pooled: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Each hit's bpref and infAP term (:func:`bpref`, :func:`infap`), the hit at flat cell
    ``cell`` of a row that begins at ``row_start``, rank ``position + 1``, with
    ``above_relevant`` relevant items above it; ``judged``: the flat cells of judged
    non-relevant items, ascending; ``R`` and ``N``: its user's relevant and judged
    non-relevant counts; ``pooled``: the flat cells of pooled but unjudged items, ascending."""
    n = (np.searchsorted(judged, cell) - np.searchsorted(judged, row_start)).astype(np.float64)
    above_judged = above_relevant + n
    above_pooled = above_judged if pooled is None else \
        above_judged + (np.searchsorted(pooled, cell) - np.searchsorted(pooled, row_start))
    share = (above_relevant + INFAP_EPSILON) / (above_judged + 2 * INFAP_EPSILON)
    return {"bpref": 1.0 - np.minimum(n, R) / np.maximum(np.minimum(R, N), 1.0),
            "infap": (1.0 + above_pooled * share) / (position + 1.0)}


def fall_out(H: np.ndarray, F: np.ndarray, n_negative: np.ndarray) -> np.ndarray:
    """Fall-out@k = irrelevant items in the top k / irrelevant candidates (0 without any)."""
    return _ratio(F - H, n_negative[:, None])


def classification_accuracy(H: np.ndarray, F: np.ndarray, R: np.ndarray, n_negative: np.ndarray) -> np.ndarray:
    """Accuracy@k over the candidates (RecTools): (TP + TN) / (R + N⁻), with TP = H[k] and
    TN = N⁻ - (F[k] - H[k]): top-k items are predicted relevant, the other candidates not."""
    return _ratio(H + n_negative[:, None] - (F - H), (R + n_negative)[:, None])


def recall(H: np.ndarray, R: np.ndarray) -> np.ndarray:
    """Recall@k = H[k] / R, R counting relevant items never recommended (0 when R = 0)."""
    return H * _inverse(R)[:, None]


def _inverse(values: np.ndarray) -> np.ndarray:
    return np.divide(1.0, values, out=np.zeros(len(values)), where=values > 0)


def fbeta(P: np.ndarray, Rc: np.ndarray, beta: float) -> np.ndarray:
    """F-beta@k = (1 + b²)·P·R / (b²·P + R), 0 when P = R = 0."""
    b2 = beta * beta
    return _ratio((1 + b2) * P * Rc, b2 * P + Rc)


def fbeta_from_hits(H: np.ndarray, R: np.ndarray, k: np.ndarray, beta: float) -> np.ndarray:
    """F-beta@k with P = H/k and R' = H/R, simplified: (1 + b²)·H / (b²·R + k)."""
    b2 = beta * beta
    return (1 + b2) * H / (b2 * R[:, None] + k[None, :])


def fbeta_of_means(mean_precision: np.ndarray, mean_recall: np.ndarray, beta: float) -> np.ndarray:
    """F-beta of the averaged precision and recall (Evidently's overall F)."""
    return fbeta(mean_precision, mean_recall, beta)


def average_precision(hit: np.ndarray, H: np.ndarray, R: np.ndarray, cut: Cutoffs, denominator: str) -> np.ndarray:
    """AP@k = Σ_{i≤k} P(i)·hit[i] / D, from position-wise ``hit`` and ``H``.

    D is ``min_k_relevant`` = min(k, R) (default), ``relevant`` = R (trec_eval, ranx),
    ``hits`` = H[k], or ``k`` (RecTools' divide_by_k). Every choice keeps AP within [0, 1].
    """
    return _ap_of_sums(cut.prefix(hit * H / cut.positions), cut.k, R, cut.at(H), denominator)


def _ap_of_sums(numerator: np.ndarray, k: np.ndarray, R: np.ndarray, H: np.ndarray, denominator: str) -> np.ndarray:
    """AP@k from its numerator Σ_{i≤k} P(i)·hit[i] (users x reported k), H[k] and R."""
    if denominator == "k":
        return numerator / k[None, :]
    if denominator == "min_k_relevant":
        return numerator / np.minimum(k[None, :], np.maximum(R, 1)[:, None])  # numerator is 0 when R = 0
    if denominator == "relevant":
        return numerator * _inverse(R)[:, None]
    return _ratio(numerator, H)


def average_recall(H: np.ndarray, R: np.ndarray) -> np.ndarray:
    """AR@k = Σ_{i≤k} Recall(i)·hit[i] / H[k], 0 when H[k] = 0.

    At the j-th hit Recall = j / R, so the sum is H(H+1) / (2R) and AR@k = (H[k] + 1) / (2R).
    """
    return np.where(H > 0, (H + 1.0) * (0.5 * _inverse(R))[:, None], 0.0)


def dcg(gain_at_hits: np.ndarray, cut: Cutoffs) -> np.ndarray:
    """DCG@k = Σ_{i≤k} g(grade_i) / log2(i + 1)."""
    return cut.prefix(gain_at_hits * discount(cut.width))


def ndcg(gains: np.ndarray, ideal_dcg: np.ndarray) -> np.ndarray:
    """NDCG@k = DCG@k / IDCG@k, from DCG and IDCG at each reported k; IDCG is the DCG of all
    the user's grades sorted descending (relevant items never recommended included), cut at k."""
    if ideal_dcg[:, 0].min(initial=1.0) > 0:  # IDCG grows with k: positive everywhere
        return gains / ideal_dcg
    return _ratio(gains, ideal_dcg)


def hit_rate(H: np.ndarray) -> np.ndarray:
    """HitRate@k = 1 when at least one relevant item is in the top k (as booleans)."""
    return H > 0


def first_relevant_rank(full_hit: np.ndarray) -> np.ndarray:
    """Rank of the first relevant item anywhere in each list; inf when there is none."""
    first = np.argmax(full_hit, axis=1)
    return np.where(full_hit[np.arange(len(full_hit)), first], first + 1.0, np.inf)


def reciprocal_rank(first: np.ndarray, k: np.ndarray, cutoff: bool = True) -> np.ndarray:
    """RR@k = 1 / rank of the first relevant item within k, else 0.

    ``cutoff=False`` looks at the whole list whatever k (trec_eval's ``recip_rank``).
    """
    rr = 1.0 / first
    if not cutoff:
        return np.repeat(rr[:, None], len(k), axis=1)
    return np.where(k[None, :] >= first[:, None], rr[:, None], 0.0)


def negatives(candidates: np.ndarray, R: np.ndarray, listed_total: np.ndarray, hits_total: np.ndarray) -> np.ndarray:
    """Irrelevant candidates: candidates - R, never fewer than the irrelevant items listed."""
    return np.maximum(candidates - R, listed_total - hits_total).astype(np.float64)


def lauc(hit: np.ndarray, filled: np.ndarray, H: np.ndarray, F: np.ndarray, R: np.ndarray,
         n_negative: np.ndarray, cut: Cutoffs) -> np.ndarray:
    """Limited AUC@k: the ROC curve up to rank k, then a straight line to (1, 1).

    With fpr = (F - H) / N⁻ and tpr = H / R at k: LAUC = Σ over irrelevant listed items i ≤ k
    of tpr(i) / N⁻ + (1 - fpr)·(tpr + 1) / 2, where N⁻ = candidates - R. With no irrelevant
    candidate every order is perfect and LAUC = 1. ``hit``, ``filled`` and ``H`` are
    position-wise, ``F`` has one column per reported k.
    """
    tpr_sum = cut.prefix((filled & ~hit) * H) / np.maximum(R, 1)[:, None]
    H = cut.at(H)
    tpr = _ratio(H, R[:, None])
    neg = n_negative[:, None]
    area = _ratio(tpr_sum, neg) + (1.0 - _ratio(F - H, neg)) * (tpr + 1.0) / 2.0
    return np.where(neg > 0, area, 1.0)


def mcc(H: np.ndarray, F: np.ndarray, R: np.ndarray, n_negative: np.ndarray) -> np.ndarray:
    """Matthews correlation of recommended (top k) vs relevant, over the user's candidates.

    TP = H, FP = F - H, FN = R - H, TN = N⁻ - FP; (TP·TN - FP·FN) / sqrt(product of the four
    margins), 0 when a margin is empty.
    """
    tp, fp = H, F - H
    fn = R[:, None] - H
    tn = n_negative[:, None] - fp
    margins = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
    return _ratio(tp * tn - fp * fn, np.sqrt(margins.astype(np.float64)))


def discount(n: int) -> np.ndarray:
    """1 / log2(i + 1) for i = 1 .. n."""
    return 1.0 / np.log2(np.arange(2, n + 2))


@dataclass
class AccuracyPass:
    """Per-user values at the chosen K, and the sum over users of every metric at each
    reported cut-off ``k``."""

    k: np.ndarray
    at_k: dict[str, np.ndarray]
    sums: dict[str, np.ndarray]
    hits_at_k: np.ndarray
    items_at_k: np.ndarray


def accuracy_pass(lists: Lists, truth: Truth, rows: np.ndarray, settings: Settings,
                  candidates: np.ndarray | None, curves: bool = True, threads: int = THREADS) -> AccuracyPass:
    """Run every accuracy metric at k = 1 .. the longest list, and at K, over users ``rows``
    (only at K when ``curves`` is False: the same values at K, less work). Memory follows the
    longest list, never K: a K beyond every list costs what the longest list costs.

    When :func:`totals_follow_from_hits` (no candidates, and no ratio of two running sums), the
    per-user values at K and the sums over users at every k are read from the hit cells alone
    (:func:`at_k_from_hit_cells`, :func:`totals_from_hit_cells`). Otherwise users are processed
    in chunks (bounded memory) on ``threads`` threads, every metric at every reported k per
    user; numpy releases the GIL in the array work. LAUC and MCC are computed only when
    ``candidates`` is given.
    """
    from_hits = totals_follow_from_hits(settings, candidates)
    cut = Cutoffs.for_pass(lists.positions, settings.k, curves)

    def run(start: int, stop: int):
        part = rows[start:stop]
        ideal = ideal_dcg(truth, part, cut, settings.gain, settings.ndcg_ideal)
        return _chunk(lists, truth, part, settings, None if candidates is None else candidates[part], cut, ideal)

    if from_hits:
        results = [at_k_from_hit_cells(lists, truth, rows, settings)] if len(rows) else []
    else:
        results = map_chunks(run, chunks(len(rows), max(1, CHUNK_CELLS // cut.width)), threads)
    names = accuracy_kernels(with_candidates=candidates is not None, with_judgements=truth.judges)
    if not results:
        empty = np.zeros(0)
        return AccuracyPass(cut.k, {n: empty for n in names}, {n: np.zeros(len(cut.k)) for n in names}, empty,
                            empty)
    at_k = {n: _joined([r.at_k[n] for r in results]) for n in names if n in results[0].at_k}
    sums = {n: np.sum([r.sums[n] for r in results], axis=0) for n in results[0].sums if n in names}
    at_k.update(whole_list(lists, truth, rows, settings.gain))
    if from_hits and curves:  # (the values at K came from the hit cells; every k's sums do too)
        sums = totals_from_hit_cells(lists, truth, rows, cut, settings)
    hit_cells = _hits_of(lists, rows, cut.width)
    sums["rbp"] = rbp_from_hits(hit_cells, cut, settings.rbp_p)
    sums["dcg"] = dcg_from_hits(lists, truth, hit_cells, cut, settings.gain)
    at_k.update(interpolated_precision(lists, truth, rows, settings.k, settings.recall_levels))
    at_k = {n: at_k[n] for n in names}  # registry order
    hits, listed = (_joined([getattr(r, name) for r in results]) for name in ("hits", "listed"))
    return AccuracyPass(cut.k, at_k, sums, hits, listed)


def _joined(parts: list[np.ndarray]) -> np.ndarray:
    """The chunks' arrays one after the other (one chunk's own array: no copy)."""
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


@dataclass
class ChunkResult:
    """One chunk of users: per-user values at K (``at_k``), sums over its users at every
    reported k (``sums``), and each user's hits and listed items in the top K."""

    at_k: dict[str, np.ndarray]
    sums: dict[str, np.ndarray]
    hits: np.ndarray
    listed: np.ndarray


def _chunk(lists, truth, part, settings, candidates, cut: Cutoffs, ideal_dcg) -> ChunkResult:
    """Per-user values at K and sums over users at every reported k for one chunk of users.

    A metric computed at every reported k goes in ``every_k`` under its registry ``per_user``
    name; the value at K, the sums and the aggregates follow from there.

    Metrics whose total over users follows from the hit counts or the first hit's rank
    (:func:`_totals_from_hits`) never get a users x k array; the others are computed per user
    at every reported k and summed.
    """
    width = cut.width
    cells = user_rows(part)  # (the lists' rows of these users: views when they are consecutive)
    whole_lists = candidates is not None or not settings.rr_cutoff  # these look past the cut-off
    full_hit = lists.hit[cells] if whole_lists else None
    hit = np.ascontiguousarray(lists.hit[cells, :width] if full_hit is None else full_hit[:, :width])  # (read often)
    full_hit = hit if full_hit is None else full_hit
    filled = (lists.items[cells] if candidates is not None else lists.items[cells, :width])[:, :width] >= 0
    R = truth.relevant_count[part].astype(np.float64)
    H_all = running_sum(hit)  # at every position: AP and LAUC weigh each position by it
    H = cut.at(H_all)
    k = cut.k
    column = cut.column_of(settings.k)
    at = slice(column, column + 1)  # the K column, kept two-dimensional
    first = first_relevant_rank(full_hit)
    needs_F = settings.precision_denominator == "list" or candidates is not None
    F = cut.prefix(filled) if needs_F else None
    gains = hit if lists.grade is None or settings.gain == "binary" else \
        _gain(lists.grade[cells, :width].astype(np.float64), settings.gain)
    every_k = {
        "fbeta": _fbeta(H, k, F, R, settings),
        "ap": average_precision(hit, H_all, R, cut, settings.ap_denominator),
    }
    if truth.judges:
        judged = lists.judged_cells(truth)[cells, :width]
        pooled = lists.pooled_cells(truth)
        pooled = None if pooled is None else pooled[cells, :width]
        N = truth.judged_count[part].astype(np.float64)
        if len(k) == 1:  # (at K alone: from the few hit and judged cells)
            every_k.update(judged_at_k(*(np.flatnonzero(marked.reshape(-1)) for marked in (hit, judged)), width, R, N,
                                       None if pooled is None else np.flatnonzero(pooled.reshape(-1))))
        else:
            every_k["bpref"] = bpref(hit, judged, R, N, cut)
            every_k["infap"] = infap(hit, judged, R, cut, pooled)
    gains_so_far = dcg(gains, cut)  # its total over users comes from the hit cells (dcg_from_hits)
    every_k["ndcg"] = ndcg(gains_so_far, ideal_dcg)
    if candidates is not None:
        full_filled = lists.items[cells] >= 0
        n_negative = negatives(candidates, R, full_filled.sum(axis=1), full_hit.sum(axis=1))
        every_k["lauc"] = lauc(hit, filled, H_all, F, R, n_negative, cut)
        every_k["mcc"] = mcc(H, F, R, n_negative)
        every_k["fall_out"] = fall_out(H, F, n_negative)
        every_k["accuracy"] = classification_accuracy(H, F, R, n_negative)
    H_K, K = H[:, at], k[at]
    F_K = F[:, at] if F is not None else None
    at_K = {
        **_of_hit_count(H_K, K, F_K, R, first, settings),
        "dcg": gains_so_far[:, at] * (uniform_gain(truth, settings.gain) if lists.grade is None else 1.0),
        "rbp": (hit[:, :settings.k] @ _rbp_weights(min(settings.k, width), settings.rbp_p))[:, None],
        **{name: value[:, at] for name, value in every_k.items()},
    }
    sums = {name: column_sums(value) for name, value in every_k.items()}
    sums.update(_totals_from_hits(H, F, R, first, cut, settings))
    listed = F[:, column].copy() if F is not None else row_sums(filled[:, :settings.k])
    return ChunkResult(_columns_at_k(at_K), sums, H[:, column].copy(), listed)


def _fbeta(H: np.ndarray, k: np.ndarray, F: np.ndarray | None, R: np.ndarray, settings: Settings) -> np.ndarray:
    """F-beta@k from the hits, the items listed and R, with precision's chosen denominator."""
    if settings.precision_denominator == "k":
        return fbeta_from_hits(H, R, k, settings.beta)
    return fbeta(precision(H, k, F, settings.precision_denominator, R), recall(H, R), settings.beta)


def _of_hit_count(H: np.ndarray, k: np.ndarray, F: np.ndarray | None, R: np.ndarray, first: np.ndarray,
                  settings: Settings) -> dict[str, np.ndarray]:
    """The metrics at k that follow from H[k] (F[k]; R) or the first hit's rank alone."""
    return {
        "precision": precision(H, k, F, settings.precision_denominator, R),
        "recall": recall(H, R),
        "ar": average_recall(H, R),
        "hit": hit_rate(H),
        "rr": reciprocal_rank(first, k, settings.rr_cutoff),
        "relative_precision": relative_precision(H, k, R),
    }


def _columns_at_k(at_K: dict[str, np.ndarray], copy: bool = True) -> dict[str, np.ndarray]:
    """Each metric's users x 1 values at K as a float64 column, in registry order: copies, so
    that no column keeps a wider array alive (``copy=False``: arrays of their own already)."""
    return {name: at_K[name][:, 0].astype(np.float64, copy=copy) for name in accuracy_kernels(True) if name in at_K}


def at_k_from_hit_cells(lists: Lists, truth: Truth, rows: np.ndarray, settings: Settings) -> ChunkResult:
    """Every accuracy metric at K alone for users ``rows``, from the hit cells in their top K
    (when :func:`totals_follow_from_hits`: no candidates, and neither precision nor AP divides
    by a running sum of the list), with no users x K array but the items listed.

    A user's value is a sum over its hits in the top K of each hit's weight (1; j/i for AP's
    j-th hit at rank i; the gain over log2(i + 1); RBP's (1 - p)·p^(i-1); bpref's and infAP's
    terms), one ``np.bincount`` per weight, then its factor of K and R as in
    :func:`totals_from_hit_cells`; RR reads the first hit. The same values as :func:`_chunk`
    at K, summed in another order (within a few ulps). 1M users at K = 10, binary, the whole
    accuracy pass: 0.69 → 0.23-0.27 s of CPU, of which counting the items listed in the top K
    (every list's first K cells) is 0.05-0.14 s.
    """
    n_users, positions = lists.hit.shape
    width = min(settings.k, positions)
    user, position, cell = _hits_of(lists, rows, width)
    row_of = np.zeros(n_users, dtype=np.intp)
    row_of[rows] = np.arange(len(rows))
    row = row_of[user]  # (ascending, as the hit cells)

    def per_user(weights: np.ndarray | None = None) -> np.ndarray:
        """Σ of ``weights`` (1: count) over each user's hits in the top K, users x 1."""
        return np.bincount(row, weights=weights, minlength=len(rows)).astype(np.float64)[:, None]

    R = truth.relevant_count[rows].astype(np.float64)
    k = np.array([float(settings.k)])
    H = per_user()
    nth = _place_among_hits(row)  # j: the j-th hit of its user
    dcg_at_k = per_user(_hit_gains(lists, cell, settings.gain) * discount(width)[position])
    every_k = {
        "fbeta": _fbeta(H, k, None, R, settings),
        "ap": _ap_of_sums(per_user(nth / (position + 1.0)), k, R, H, settings.ap_denominator),
        "ndcg": ndcg(dcg_at_k, ideal_dcg(truth, rows, Cutoffs(width, k), settings.gain, settings.ndcg_ideal)),
    }
    if truth.judges:
        judged = np.flatnonzero(lists.judged_cells(truth)[user_rows(rows), :width].reshape(-1))
        pooled = lists.pooled_cells(truth)
        pooled = None if pooled is None else np.flatnonzero(pooled[user_rows(rows), :width].reshape(-1))
        every_k.update(judged_at_k(row * width + position, judged, width, R,
                                   truth.judged_count[rows].astype(np.float64), pooled))
    if settings.rr_cutoff:
        first = _first_hit_rank(row, position, len(rows))
    else:  # (RR looks past K: the first hit anywhere in the list)
        whole_user, whole_position, _ = _hits_of(lists, rows, positions)
        first = _first_hit_rank(row_of[whole_user], whole_position, len(rows))
    at_K = {
        **_of_hit_count(H, k, None, R, first, settings),
        "dcg": dcg_at_k * (uniform_gain(truth, settings.gain) if lists.grade is None else 1.0),
        "rbp": per_user(_rbp_weights(width, settings.rbp_p)[position]),
        **every_k,
    }
    sums = {name: column_sums(at_K[name]) for name in [*every_k, "precision", "recall", "ar", "hit", "rr"]}
    listed = row_sums(lists.items[user_rows(rows), :width] >= 0, np.int64)
    return ChunkResult(_columns_at_k(at_K, copy=False), sums, H[:, 0].astype(np.int64), listed)


def user_rows(users: np.ndarray) -> slice | np.ndarray:
    """The index of the rows of ``users`` (ascending codes) in a users x positions array: a
    slice when they are consecutive, whose rows are then a view, not a gathered copy (1M users,
    their top 10 cells and hits: 0.07 s against 0.12-0.17 s).

    >>> user_rows(np.array([3, 4, 5])), user_rows(np.array([3, 5]))
    (slice(3, 6, None), array([3, 5]))
    """
    if len(users) and int(users[-1]) - int(users[0]) + 1 == len(users):
        return slice(int(users[0]), int(users[-1]) + 1)
    return users


def whole_list(lists: Lists, truth: Truth, rows: np.ndarray, gain: str) -> dict[str, np.ndarray]:
    """Per-user metrics over the whole list, whatever K (as trec_eval computes them), for users
    ``rows``:

    R-precision = h(R) / R (hits among the first R items); NDCG at R = DCG@R / IDCG@R;
    set precision = all hits / items listed; set recall = all hits / R; set MAP = set
    precision x set recall (trec_eval's num_rel_ret² / (num_ret · num_rel)).

    Read from the list's hit cells (few) and per-user lengths, both computed once per model.
    """
    n_users, width = lists.hit.shape
    user, position = lists.hit_coordinates
    R = truth.relevant_count
    within = position < R[user]
    gains = _hit_gains(lists, lists.hit_cells, gain)
    dcg_at_R = np.bincount(user[within], weights=(gains * discount(width)[position])[within], minlength=n_users)
    hits_at_R = np.bincount(user[within], minlength=n_users)[rows].astype(np.float64)
    hits = np.bincount(user, minlength=n_users)[rows].astype(np.float64)
    R_rows = R[rows].astype(np.float64)
    set_precision, set_recall = _ratio(hits, lists.lengths[rows]), _ratio(hits, R_rows)
    return {
        "r_precision": _ratio(hits_at_R, R_rows),
        "ndcg_rel": _ratio(dcg_at_R[rows], _ideal_dcg_at_relevant(truth, gain)[rows]),
        "set_precision": set_precision,
        "set_recall": set_recall,
        "set_map": set_precision * set_recall,
    }


RECALL_LEVELS = tuple(f"iprec_at_recall_{level / 10:.2f}" for level in range(11))


def interpolated_precision(lists: Lists, truth: Truth, rows: np.ndarray, k: int,
                           rule: str = "round") -> dict[str, np.ndarray]:
    """Interpolated precision at the 11 recall levels 0, 0.1, .., 1 over the top K, and their
    mean ``11pt_avg`` (trec_eval's ``iprec_at_recall`` and ``11pt_avg``).

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
    nth = _place_among_hits(user)  # j: the j-th hit of its user
    precision = np.append(nth / (position + 1.0), 0.0)  # a trailing 0 keeps the last segment's end in range
    with_hits = np.flatnonzero(hits[rows] > 0)  # the others score 0 at every level
    R, first_hit, hits_of = (array[rows[with_hits]] for array in (truth.relevant_count, start, hits))
    need = hits_for_recall_levels(R, rule)  # levels x users
    reachable = need <= hits_of
    # one segment [first, end) per reachable (level, user); within a level users ascend, so the
    # gaps between segments stay short (reduceat reduces each gap too)
    bounds = np.column_stack([(first_hit + need - 1)[reachable],
                              np.broadcast_to(first_hit + hits_of, need.shape)[reachable]]).reshape(-1)
    found = np.zeros(need.shape)
    if len(bounds):
        found[reachable] = np.maximum.reduceat(precision, bounds)[::2]
    values = np.zeros((11, len(rows)))
    values[:, with_hits] = found
    out = dict(zip(RECALL_LEVELS, values, strict=True))
    out["11pt_avg"] = values.mean(axis=0)
    return out


def hits_for_recall_levels(R: np.ndarray, rule: str = "round") -> np.ndarray:
    """The hits that reach each recall level r = 0, 0.1, .., 1 (rows) for users with R relevant
    items (columns), at least one: ``round`` is trec_eval 10's lround(r·R) (halves away from 0,
    on r·R as a double: 0.7·5 = 3.5 needs 4, 0.7·45 = 31.499999999999996 needs 31), ``add_0.9``
    trec_eval 9's and pytrec_eval's ⌊r·R + 0.9⌋ (0.4 of 3 relevant items needs 2, not 1).

    >>> hits_for_recall_levels(np.array([3, 5]))[[0, 4, 7], :].tolist()
    [[1, 1], [1, 2], [2, 4]]
    >>> hits_for_recall_levels(np.array([3, 5]), "add_0.9")[[0, 4, 7], :].tolist()
    [[1, 1], [2, 2], [2, 4]]
    """
    share = (np.arange(11) / 10)[:, None] * np.asarray(R, dtype=np.float64)
    if rule == "add_0.9":
        need = np.floor(share + 0.9)
    else:
        whole = np.floor(share)
        need = whole + (share - whole >= 0.5)
    return np.maximum(need.astype(np.int64), 1)


def _ideal_dcg_at_relevant(truth: Truth, kind: str) -> np.ndarray:
    """IDCG@R of every user, the DCG of all its grades: made once per gain and kept with the
    ground truth (:attr:`Truth.derived`), since every evaluation of every model and K asks for
    it (graded, 1M users: about 0.2 s of CPU each time)."""
    key = ("ideal_dcg_at_relevant", "binary" if not truth.graded else kind)
    if key not in truth.derived:  # (two threads may both make it: the same values)
        truth.derived[key] = _ideal_dcg_at(truth, np.arange(len(truth.relevant_count)), truth.relevant_count, kind)
    return truth.derived[key]


RANK_BY_RANK_DEPTH = 32  # IDCG no deeper than this is summed rank by rank (see _ideal_dcg_at)


def _ideal_dcg_at(truth: Truth, part: np.ndarray, depth: np.ndarray | int, kind: str) -> np.ndarray:
    """IDCG of each user at its own depth: the DCG of its ``depth[u]`` highest grades.

    Graded, its gains over log2(i + 2) are added in rank order, as :func:`dcg` adds a row: a
    few ranks deep (K, as a rule), rank by rank over every user, each rank's grades read at
    ascending places of the ground truth (1M users at K = 10 in one call, exponential gain:
    403 → 227 ms of CPU); deeper (R), user by user, from each user's grades laid out in a row."""
    shown = np.minimum(truth.relevant_count[part], depth)
    deepest = int(shown.max(initial=0))
    disc = discount(deepest)
    if not truth.graded or kind == "binary":
        return np.concatenate([[0.0], np.cumsum(disc)])[shown]
    if deepest <= RANK_BY_RANK_DEPTH:
        starts, ideal = truth.starts[part], np.zeros(len(part))
        for i in range(deepest):
            deeper = i < shown  # (the users counting an i-th grade)
            grades = truth.grade[np.where(deeper, starts + i, 0)].astype(np.float64)
            ideal += np.where(deeper, _gain(grades, kind) * disc[i], 0.0)
        return ideal
    row, place, grade = _sorted_grades(truth, part, shown, kind)
    return np.bincount(row, weights=grade * disc[place], minlength=len(part))


def _totals_from_hits(H: np.ndarray, F: np.ndarray | None, R: np.ndarray, first: np.ndarray, cut: Cutoffs,
                      settings: Settings) -> dict[str, np.ndarray]:
    """Sums over users, at each reported k, of the metrics that follow from H[k] linearly or
    from the rank of the first hit, without a users x k array for each:

    Σ Precision@k = Σ H[k] / k;  Σ Recall@k = Σ H[k] / R;  Σ HitRate@k = #{first <= k};
    Σ RR@k = Σ_{first <= k} 1 / first;  Σ AR@k = (Σ Recall@k + Σ_{first <= k} 1 / R) / 2
    (AR@k = (H[k] + 1) / 2R = H[k] / 2R + 1 / 2R once there is a hit). Precision over the
    list length (Evidently) is not linear in H and is summed user by user.
    """
    inverse_R = _inverse(R)
    recall_sum = np.einsum("ij,i->j", H, inverse_R)
    if settings.precision_denominator == "k":
        precision_sum = column_sums(H) / cut.k
    else:
        precision_sum = column_sums(precision(H, cut.k, F, settings.precision_denominator, R))
    rr = np.divide(1.0, first, out=np.zeros(len(first)), where=np.isfinite(first))
    return {
        "precision": precision_sum,
        "recall": recall_sum,
        "ar": (recall_sum + _by_first_hit(first, inverse_R, cut)) / 2,
        "hit": _by_first_hit(first, np.ones(len(first)), cut),
        "rr": _by_first_hit(first, rr, cut) if settings.rr_cutoff else np.full(len(cut.k), rr.sum()),
    }


def totals_follow_from_hits(settings: Settings, candidates: np.ndarray | None) -> bool:
    """Whether every metric reported at every k has its sum over users at each k from the hit
    cells (:func:`totals_from_hit_cells`): true unless candidates are given (LAUC, MCC, fall-out
    and accuracy weigh the irrelevant cells), precision divides by the list's length or AP by
    the hits (a ratio of two running sums per user)."""
    return candidates is None and settings.precision_denominator != "list" and settings.ap_denominator != "hits"


def totals_from_hit_cells(lists: Lists, truth: Truth, rows: np.ndarray, cut: Cutoffs,
                          settings: Settings) -> dict[str, np.ndarray]:
    """Sums over users ``rows`` of every accuracy metric reported at each k, from the hit
    cells alone, with no users x k array (when :func:`totals_follow_from_hits`).

    Per user, each metric is a sum over the hits in the top k of a weight w (fixed per hit)
    times a factor f(k, R) that depends on k and the user's R only:

    - precision: w = 1, f = 1/k or 1/min(k, R); recall: w = 1, f = 1/R;
    - F-beta: w = 1, f = (1 + b²) / (b²·R + D), D precision's denominator (from F = (1 + b²)·P·Rc
      / (b²·P + Rc) with P = H/D and Rc = H/R);
    - AP: w = j/i for the j-th hit at rank i, f = 1 / (its denominator);
    - bpref and infAP: w = the hit's term (it depends on the items above it only), f = 1/R;
    - NDCG: w = gain / log2(i + 1), f = 1 / IDCG(k) (:func:`_ndcg_totals`).

    Users with the same R are summed together: a histogram of hit ranks per distinct R, a
    running sum along k, then the factor of each R. Hit rate, RR and AR's second term follow
    from the rank of each user's first hit.
    """
    n_users = lists.hit.shape[0]
    user, position, cell = _hits_of(lists, rows, cut.width)
    R_rows = truth.relevant_count[rows]
    distinct_R, group_of_row = distinct_and_groups(R_rows)
    group = np.zeros(n_users, dtype=np.intp)
    group[rows] = group_of_row
    by_group_and_rank = group[user] * cut.width + position

    def running_by_relevant(weights: np.ndarray | None) -> np.ndarray:
        """Σ over each R's users of ``weights`` of their hits at ranks <= k: (distinct R) x k."""
        by_rank = np.bincount(by_group_and_rank, weights=weights, minlength=len(distinct_R) * cut.width)
        return np.cumsum(by_rank.reshape(len(distinct_R), cut.width), axis=1)[:, cut.columns]

    def running(weights: np.ndarray) -> np.ndarray:
        """Σ over all users of ``weights`` of their hits at ranks <= k."""
        return np.cumsum(np.bincount(position, weights=weights, minlength=cut.width))[cut.columns]

    nth = _place_among_hits(user)  # (cells ascend by user, then rank)
    inverse_R = _inverse(truth.relevant_count.astype(np.float64))[user]
    R, k = distinct_R.astype(np.float64)[:, None], cut.k[None, :]
    H = running_by_relevant(None)
    precision_denominator = k if settings.precision_denominator == "k" else np.minimum(k, R)
    ap_denominator = {"k": np.broadcast_to(k, H.shape), "min_k_relevant": np.minimum(k, np.maximum(R, 1.0)),
                      "relevant": np.broadcast_to(R, H.shape)}[settings.ap_denominator]
    b2 = settings.beta * settings.beta
    first = _first_hit_rank(user, position, n_users)[rows]
    recall_sum = running(inverse_R)
    rr = np.divide(1.0, first, out=np.zeros(len(first)), where=np.isfinite(first))
    sums = {
        "precision": _ratio(H, precision_denominator).sum(axis=0),
        "recall": recall_sum,
        "fbeta": _ratio((1 + b2) * H, b2 * R + precision_denominator).sum(axis=0),
        "ap": _ratio(running_by_relevant(nth / (position + 1.0)), ap_denominator).sum(axis=0),
        "ndcg": _ndcg_totals(lists, truth, rows, cut, settings, (user, position, cell),
                             running_by_relevant, distinct_R),
        "ar": (recall_sum + _by_first_hit(first, _inverse(R_rows.astype(np.float64)), cut)) / 2,
        "hit": _by_first_hit(first, np.ones(len(first)), cut),
        "rr": _by_first_hit(first, rr, cut) if settings.rr_cutoff else np.full(len(cut.k), rr.sum()),
    }
    if truth.judges:
        sums.update(_judged_totals(lists, truth, user, position, cell, nth, running, inverse_R))
    return sums


def _judged_totals(lists: Lists, truth: Truth, user, position, cell, nth, running, inverse_R) -> dict[str, np.ndarray]:
    """Σ over users of bpref and infAP at each k: each is (1/R)·Σ over the hits in the top k of
    a term read from the judged non-relevant items (n), relevant items (j - 1) and pooled but
    unjudged items above the hit."""
    pooled = lists.pooled_cells(truth)
    terms = judged_terms(np.flatnonzero(lists.judged_cells(truth).reshape(-1)), cell, user * lists.hit.shape[1],
                         nth - 1.0, truth.relevant_count[user].astype(np.float64),
                         truth.judged_count[user].astype(np.float64), position,
                         None if pooled is None else np.flatnonzero(pooled.reshape(-1)))
    return {name: running(term * inverse_R) for name, term in terms.items()}


def _ndcg_totals(lists: Lists, truth: Truth, rows: np.ndarray, cut: Cutoffs,
                 settings: Settings, hits, running_by_relevant, distinct_R: np.ndarray) -> np.ndarray:
    """Σ over users of NDCG@k = DCG@k / IDCG@k at each reported k, from the hit cells.

    With equal gains IDCG depends on k and R only: the R groups' DCG over their IDCG. With
    graded gains, IDCG is the user's own: ``all_relevant`` and ``k_relevant`` make it a
    constant or a constant times Σ_{i≤k} 1/log2(i + 1), so each hit is weighed by the user's
    constant; ``cut_at_k`` (the default) grows with k up to R and is constant beyond, so
    users are split at k = R: for k >= R each hit is weighed by 1 / IDCG(R) (summed per R
    group, counted from k = R on), for k < R the ratio is taken cell by cell over the first
    R - 1 ranks of each user (as many cells as relevant items, not as list cells).
    """
    user, position, cell = hits
    disc = discount(cut.width)
    if not truth.graded or settings.gain == "binary":
        representatives = rows[np.unique(np.searchsorted(distinct_R, truth.relevant_count[rows]),
                                         return_index=True)[1]]
        ideal = ideal_dcg(truth, representatives, cut, settings.gain, settings.ndcg_ideal)
        return _ratio(running_by_relevant(disc[position]), ideal).sum(axis=0)
    gain = _hit_gains(lists, cell, settings.gain) * disc[position]
    n_users = lists.hit.shape[0]
    k = cut.k
    if settings.ndcg_ideal != "cut_at_k":  # IDCG@k = the user's IDCG@1 (k_relevant: times Σ_{i≤k} 1/log2(i + 1))
        at_one = np.zeros(n_users)
        at_one[rows] = ideal_dcg(truth, rows, Cutoffs(cut.width, k[:1]), settings.gain,
                                 settings.ndcg_ideal)[:, 0]
        weighed = np.cumsum(np.bincount(position, weights=_ratio(gain, at_one[user]),
                                        minlength=cut.width))[cut.columns]
        return weighed if settings.ndcg_ideal == "all_relevant" else weighed / _cumulative_discount(k.astype(np.int64))
    ideal_at_R, below_R = _ndcg_below_relevant(truth, rows, cut, user, position, gain, settings.gain)
    # k >= R: DCG@k / IDCG(R), per R group, each k counting the groups with R <= k
    beyond_R = running_by_relevant(_ratio(gain, ideal_at_R[user]))
    return (beyond_R * (distinct_R[:, None] <= k[None, :])).sum(axis=0) + below_R


def _ndcg_below_relevant(truth: Truth, rows: np.ndarray, cut: Cutoffs, user, position,
                         gain, kind) -> tuple[np.ndarray, np.ndarray]:
    """Each user's IDCG at min(R, the largest reported k), which is IDCG(R) for every user the
    k >= R part counts; and Σ over users with R > k of DCG@k / IDCG@k at each reported k
    (graded ``cut_at_k``); ``gain`` is each hit cell's gain / log2(rank + 1).

    Rank by rank (j = 0 .. the largest reported k, or the largest R when smaller: a loop whose
    length never depends on how many relevant items a user has), over users ``rows`` ordered
    by R, largest first, so that the users with R > j are the first n_j: each grows its IDCG
    by its (j + 1)-th highest grade's gain / log2(j + 2), and its DCG by its hit at rank
    j + 1, if any. A user's running
    sums are therefore its own values added in rank order, as ``np.cumsum`` of its row adds them
    (a running sum over all users less each one's start would round a user's values to the
    scale of all the users before it). The loop runs over ranks, never over users.
    """
    R = truth.relevant_count[rows]
    order = stable_order(R, descending=True)
    R_sorted = R[order]
    deepest = min(int(R_sorted[0]) if len(R_sorted) else 0, int(cut.k[-1]))  # no k reads a deeper rank
    users_deeper = np.searchsorted(-R_sorted, -np.arange(deepest + 1), side="left")  # n_j: users with R > j
    first_grade = truth.starts[rows][order]
    disc = discount(max(deepest, 1))
    place_of_user = np.full(truth.relevant_count.shape[0], -1)
    place_of_user[rows[order]] = np.arange(len(rows))
    hit_place = place_of_user[user]
    by_rank = stable_order(position)
    hits_at = np.searchsorted(position[by_rank], np.arange(cut.width + 1))  # rank j's hits: by_rank[hits_at[j]:..]
    reported = {int(k) - 1: column for column, k in enumerate(cut.k)}
    ideal, dcg, below = np.zeros(len(rows)), np.zeros(len(rows)), np.zeros(len(cut.k))
    for j in range(deepest):
        n = users_deeper[j]
        ideal[:n] += _gain(truth.grade[first_grade[:n] + j].astype(np.float64), kind) * disc[j]
        if j < cut.width:
            at = by_rank[hits_at[j]:hits_at[j + 1]]
            inside = hit_place[at] < n
            dcg[hit_place[at[inside]]] += gain[at[inside]]
        if j in reported:  # k = j + 1: the users with R > k
            shown = users_deeper[j + 1]
            below[reported[j]] = _ratio(dcg[:shown], ideal[:shown]).sum()
    ideal_at_R = np.zeros(truth.relevant_count.shape[0])
    ideal_at_R[rows[order]] = ideal
    return ideal_at_R, below


def _by_first_hit(first: np.ndarray, weights: np.ndarray, cut: Cutoffs) -> np.ndarray:
    """Σ of ``weights`` over the users whose first hit is at rank <= k, for each reported k.

    >>> _by_first_hit(np.array([1.0, 3.0, np.inf]), np.array([1.0, 2.0, 4.0]), Cutoffs.up_to(3))
    array([1., 1., 3.])
    """
    rank = np.where(first <= cut.width, first, 0).astype(np.intp)  # 0: no hit within the width
    per_rank = np.bincount(rank, weights=weights, minlength=cut.width + 1)[1:]
    return cut.at(np.cumsum(per_rank)[None, :])[0]


def _gain(grades: np.ndarray, kind) -> np.ndarray:
    """The NDCG gain of relevant grades: the grade (``linear``), 2^grade - 1 (``exponential``),
    1 (``binary``), or custom ((grade, gain), ...) pairs, a grade not among them keeping its
    own value (trec_eval's rule).

    >>> _gain(np.array([1.0, 2.0, 3.0]), ((1.0, 3.0), (2.0, 9.0)))
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


def uniform_gain(truth: Truth, kind) -> float:
    """The gain of every relevant item when all grades are equal (the lists then carry hits
    only, no grades): NDCG does not depend on it, DCG is scaled by it."""
    return float(_gain(truth.grade[:1].astype(np.float64), kind)[0]) if len(truth.grade) else 1.0


def ideal_dcg(truth: Truth, part: np.ndarray, cut: Cutoffs, kind: str,
              ideal: str = "cut_at_k") -> np.ndarray:
    """IDCG@k for each reported k, as ``ideal`` says:

    - ``cut_at_k`` (default): the DCG of the user's min(k, R) highest grades;
    - ``all_relevant``: the DCG of all R grades whatever k (trec_eval's ``ndcg`` on a run
      that holds only the top k);
    - ``k_relevant``: an ideal list of k relevant items, each with the user's highest gain
      (RecTools' NDCG, which has binary relevance: Σ_{i≤k} 1 / log2(i + 1)).
    """
    if ideal == "all_relevant":
        full = _ideal_dcg_at_relevant(truth, kind)[part]
        return np.repeat(full[:, None], len(cut.k), axis=1)
    if ideal == "k_relevant":
        R = truth.relevant_count[part]
        top = np.where(R > 0, 1.0, 0.0) if not truth.graded or kind == "binary" else \
            np.where(R > 0, _gain(truth.grade[np.minimum(truth.starts[part], len(truth.grade) - 1)], kind), 0.0)
        return top[:, None] * _cumulative_discount(cut.k.astype(np.int64))[None, :]
    return _ideal_dcg_cut(truth, part, cut, kind)


def _cumulative_discount(k: np.ndarray, block: int = 1 << 20) -> np.ndarray:
    """Σ_{i≤k} 1 / log2(i + 1) for each k, in blocks (k may be far beyond any list).

    >>> _cumulative_discount(np.array([1, 3])).round(4)
    array([1.    , 2.1309])
    """
    out, total, done = np.empty(len(k)), 0.0, 0
    for j, depth in enumerate(k):
        while done < depth:
            stop = min(depth, done + block)
            total += float(np.sum(1.0 / np.log2(np.arange(done + 2, stop + 2))))
            done = stop
        out[j] = total
    return out


def _ideal_dcg_cut(truth: Truth, part: np.ndarray, cut: Cutoffs, kind: str) -> np.ndarray:
    """IDCG@k for each reported k: the DCG of the user's min(k, R) highest grades.

    With equal grades this is the cumulative discount at min(k, R), a gather; otherwise the
    user's sorted grades (the truth is stored in that order) are placed in a users x width
    array and summed, and a k beyond the width sums the user's grades directly.
    """
    R = truth.relevant_count[part]
    k = cut.k.astype(np.int64)
    deepest = int(min(k[-1], R.max(initial=0)))
    if not truth.graded or kind == "binary":
        cumulative = np.concatenate([[0.0], np.cumsum(discount(deepest))])
        return cumulative[np.minimum(k[None, :], R[:, None])]
    if len(k) == 1 and k[0] <= cut.width:  # (at K alone: no users x width array)
        return _ideal_dcg_at(truth, part, int(k[0]), kind)[:, None]
    out = np.empty((len(part), len(k)))
    inside = k <= cut.width
    shown = np.minimum(R, cut.width)
    ideal = np.zeros((len(part), cut.width))
    row, place, grade = _sorted_grades(truth, part, shown, kind)
    ideal[row, place] = grade
    out[:, inside] = dcg(ideal, Cutoffs.up_to(cut.width))[:, k[inside] - 1]
    disc = discount(deepest)
    for j in np.flatnonzero(~inside):
        row, place, grade = _sorted_grades(truth, part, np.minimum(R, k[j]), kind)
        out[:, j] = np.bincount(row, weights=grade * disc[place], minlength=len(part))
    return out


def _sorted_grades(truth: Truth, part: np.ndarray, shown: np.ndarray, kind: str):
    """``(row, place, gain)`` of the ``shown[u]`` highest grades of each user ``part[u]``."""
    row = np.repeat(np.arange(len(part)), shown)
    place = np.arange(shown.sum()) - np.repeat(np.cumsum(shown) - shown, shown)
    return row, place, _gain(truth.grade[np.repeat(truth.starts[part], shown) + place], kind)
