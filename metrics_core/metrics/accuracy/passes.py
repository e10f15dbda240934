"""The accuracy passes: every accuracy entry of the registry, read from its kernel
(:mod:`~metrics_core.metrics.accuracy.kernels`), over the users of one evaluation, at K
and, with curves, summed over users at every k = 1 .. the longest list.

Three passes compute the same values:

- :func:`at_k_from_hit_cells`: each user's value at K from the hit cells in its top K (few), one
  ``np.bincount`` per weight, with no users x K array;
- :func:`totals_from_hit_cells`: the sums over users at every k from the hit cells, users with
  the same R summed together (a factor depends on k and R only);
- :func:`per_user_pass`: each user's value at every reported k, in chunks of users, for the
  settings whose factors are a user's own running sums (a candidate count, precision over the
  list's length, AP over the hits: :func:`totals_follow_from_hits` is False).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from metrics_core._numeric.counts import distinct_and_groups
from metrics_core._numeric.parallel import THREADS, chunks, map_chunks
from metrics_core._numeric.sums import column_sums, row_sums
from metrics_core.inputs.encoded import Lists, Truth
from metrics_core.metrics import registry
from metrics_core.metrics.accuracy.cutoffs import Cutoffs, running_sum, user_rows
from metrics_core.metrics.accuracy.formulas import negatives
from metrics_core.metrics.accuracy.hits import Hits, first_rank_of, tie_spread, whole_list_first_rank
from metrics_core.metrics.accuracy.ideal import ideal_dcg, uniform_gain
from metrics_core.metrics.accuracy.kernels import (
    CandidateCounts,
    FirstHit,
    HitSum,
    OfWholeList,
    OverCandidates,
    Scaled,
    Totals,
)
from metrics_core.settings import Settings

CHUNK_CELLS = 1 << 18


@dataclass
class AccuracyPass:
    """Per-user values at the chosen K (``at_k``, by per-user column, registry order), the sum
    over users of every metric with a curve at each reported cut-off ``k`` (``sums``), and each
    user's hits and items listed in the top K."""

    k: np.ndarray
    at_k: dict[str, np.ndarray]
    sums: dict[str, np.ndarray]
    hits_at_k: np.ndarray
    items_at_k: np.ndarray


@dataclass
class PartResult:
    """One part of the users: per-user values at K, sums over its users at every reported k,
    and each user's hits and items listed in the top K."""

    at_k: dict[str, np.ndarray]
    sums: dict[str, np.ndarray]
    hits: np.ndarray
    listed: np.ndarray


def totals_follow_from_hits(settings: Settings, candidates: np.ndarray | None) -> bool:
    """Whether every factor is a function of k and R (and the weights of the hits alone), so that
    the passes from the hit cells compute every metric: true unless candidates are given (LAUC,
    MCC, fall-out and accuracy weigh the irrelevant cells: with ``candidates=None`` the answer
    is for the other metrics, which :func:`accuracy_pass` then reads from the hit cells while
    the general pass computes those four alone), precision divides by the list's length or AP by
    the hits (a user's own running sums)."""
    return candidates is None and settings.precision_denominator != "list" and settings.ap_denominator != "hits"


def accuracy_pass(lists: Lists, truth: Truth, rows: np.ndarray, settings: Settings,
                  candidates: np.ndarray | None, curves: bool = True, threads: int = THREADS,
                  only: set[str] | None = None) -> AccuracyPass:
    """Every accuracy metric the inputs allow (those needing candidates only with them, those
    needing judged non-relevant items only with some) at K for users ``rows``, and with
    ``curves`` their sums over users at k = 1 .. the longest list, and at K; ``only``: those of
    these per-user columns alone (hits and list lengths at K whatever it holds). Memory follows the
    longest list, never K: a K beyond every list costs what the longest list costs."""
    entries = registry.accuracy_entries(with_candidates=candidates is not None, with_judgements=truth.judges)
    entries = entries if only is None else [m for m in entries if m.per_user in only]
    cut = Cutoffs.for_pass(lists.positions, settings.k, curves)
    if not len(rows):
        empty = np.zeros(0)
        return AccuracyPass(cut.k, {m.per_user: empty for m in entries},
                            {m.per_user: np.zeros(len(cut.k)) for m in entries if m.curve}, empty, empty)
    if not entries:  # (hits and items listed at K alone, as the app's pages of other metrics ask: no hit cells)
        return AccuracyPass(cut.k, {}, {}, lists.hits_at(settings.k, rows), lists.listed_at(settings.k, rows))
    if totals_follow_from_hits(settings, None):  # (the metrics over candidates aside: below)
        from_hits = [m for m in entries if not isinstance(m.kernel, OverCandidates)]
        part = at_k_from_hit_cells(lists, truth, rows, settings, from_hits)
        sums = totals_from_hit_cells(lists, truth, rows, cut, settings, from_hits) if curves else part.sums
        at_k, hits, listed = part.at_k, part.hits, part.listed
        over_candidates = [m for m in entries if isinstance(m.kernel, OverCandidates)]
        if over_candidates:  # (they weigh the irrelevant cells: the general pass, for them alone)
            more_at_k, more_sums, _, _ = per_user_pass(lists, truth, rows, settings, candidates, cut,
                                                       over_candidates, threads)
            at_k.update(more_at_k)
            sums = {m.per_user: ({**sums, **more_sums})[m.per_user] for m in entries
                    if m.per_user in sums or m.per_user in more_sums}
    else:
        at_k, sums, hits, listed = per_user_pass(lists, truth, rows, settings, candidates, cut, entries, threads)
    for compute in dict.fromkeys(m.kernel.compute for m in entries if isinstance(m.kernel, OfWholeList)):
        at_k.update(compute(lists, truth, rows, settings))
    return AccuracyPass(cut.k, {m.per_user: at_k[m.per_user] for m in entries}, sums, hits, listed)


def _terms(entries: list[registry.Metric], curves_only: bool = False) -> list[registry.Metric]:
    """The entries whose kernel is a tuple of terms (of those with a curve)."""
    return [m for m in entries if isinstance(m.kernel, tuple) and (m.curve or not curves_only)]


class _Cells:
    """The hit cells a term reads: the relevant cells ``hits``, or, for a term with ``ties`` when
    the settings average tied scores and the lists have scores, DCG's cells with tied scores
    averaged (:func:`~metrics_core.metrics.accuracy.hits.tie_spread`, made once on first use)."""

    def __init__(self, hits: Hits, lists: Lists, rows: np.ndarray, settings: Settings):
        self.hits = hits
        self._spread = None
        self._make = None if settings.dcg_ties != "average" or lists.scores is None else \
            (lambda: tie_spread(lists, rows, hits.width, settings, hits.R))

    def of(self, term) -> Hits:
        if self._make is None or not getattr(term, "ties", False):
            return self.hits
        if self._spread is None:
            self._spread = self._make()
        return self._spread


def _memo(compute: Callable, cells: _Cells) -> Callable:
    """``compute(weight, hits)`` once per term's weight function and hit cells (two metrics
    weighing the same cells alike share it)."""
    done: dict = {}

    def cached(term):
        read = cells.of(term)
        key = (term.weight, read is cells.hits)
        if key not in done:
            done[key] = compute(term.weight, read)
        return done[key]

    return cached


def _first_ranks(lists: Lists, rows: np.ndarray, hits: Hits, entries: list[registry.Metric],
                 settings: Settings) -> np.ndarray:
    """Each row's first hit rank: within the hits' width, or anywhere in the list when a term
    looks past K (the same answer to "is it within k" for every k the pass reports)."""
    anywhere = any(isinstance(term, FirstHit) and term.anywhere(settings)
                   for m in _terms(entries) for term in m.kernel)
    return whole_list_first_rank(lists, rows) if anywhere and hits.width < lists.positions else hits.first_rank


def _first_hit_values(term: FirstHit, first: np.ndarray, R: np.ndarray, k: np.ndarray,
                      settings: Settings) -> np.ndarray:
    """A :class:`FirstHit` term at each reported k (rows x cut-offs)."""
    value = term.weight(first, R)
    if term.anywhere(settings):
        return np.repeat(value[:, None], len(k), axis=1)
    return np.where(k[None, :] >= first[:, None], value[:, None], 0.0)


def at_k_from_hit_cells(lists: Lists, truth: Truth, rows: np.ndarray, settings: Settings,
                        entries: list[registry.Metric]) -> PartResult:
    """Every accuracy metric at K alone for users ``rows``, from the hit cells in their top K
    (when :func:`totals_follow_from_hits`), with no users x K array but the items listed.

    A user's :class:`HitSum` is its factor at K times one ``np.bincount`` of the weights over
    its hits; a :class:`FirstHit` reads the rank of its first hit. The same values as
    :func:`per_user_pass` at K, summed in another order (within a few ulps)."""
    width = min(settings.k, lists.positions)
    hits = Hits.of_rows(lists, truth, rows, width, settings, local=True)
    k = np.array([float(settings.k)])
    H = hits.per_row(None)
    scaled = Scaled(k[None, :], hits.R[:, None], settings, _dcg_gain(lists, truth, settings), H=H,
                    ideal=lambda: ideal_dcg(truth, rows, Cutoffs(width, k), settings.gain, settings.ndcg_ideal,
                                            settings.dcg_discount))
    first = _first_ranks(lists, rows, hits, entries, settings)
    weighted = _memo(lambda weight, cells: cells.per_row(weight(cells)), _Cells(hits, lists, rows, settings))
    values = {m.per_user: _sum_of_terms(m.kernel, scaled, weighted, first, hits.R, k, settings)
              for m in _terms(entries)}
    listed = lists.listed_at(width, rows)
    return PartResult({name: value[:, 0].astype(np.float64, copy=False) for name, value in values.items()},
                      {m.per_user: column_sums(values[m.per_user]) for m in _terms(entries, curves_only=True)},
                      H[:, 0].astype(np.int64), listed)


def _sum_of_terms(kernel: tuple, scaled: Scaled, weighted: Callable, first: np.ndarray, R: np.ndarray,
                  k: np.ndarray, settings: Settings) -> np.ndarray:
    """An entry's terms added up, per row at each reported k (rows x cut-offs)."""
    total = None
    for term in kernel:
        value = term.scale(scaled) * weighted(term) if isinstance(term, HitSum) else \
            _first_hit_values(term, first, R, k, settings)
        total = value if total is None else total + value
    return total


def _dcg_gain(lists: Lists, truth: Truth, settings: Settings) -> float:
    """DCG's factor: the gain of every relevant item when the lists carry hits only, else 1."""
    return uniform_gain(truth, settings.gain) if lists.grade is None else 1.0


def totals_from_hit_cells(lists: Lists, truth: Truth, rows: np.ndarray, cut: Cutoffs, settings: Settings,
                          entries: list[registry.Metric]) -> dict[str, np.ndarray]:
    """Sums over users ``rows`` of every accuracy metric with a curve at each reported k, from
    the hit cells alone, with no users x k array (when :func:`totals_follow_from_hits`).

    A :class:`HitSum`'s factor depends on k and R only, so users with the same R are summed
    together: a histogram of the weights by hit rank per distinct R, a running sum along k,
    times the factor of each R (or the term's own ``totals``). A :class:`FirstHit` adds its
    weights over the users whose first hit is at a rank ≤ k."""
    hits = Hits.of_rows(lists, truth, rows, cut.width, settings, local=False)
    R_rows = truth.relevant_count[rows]
    distinct_R, group_of_row = distinct_and_groups(R_rows)

    def totals_of(cells: Hits) -> Totals:
        by_group_and_rank = group_of_row[cells.row] * cut.width + cells.position

        def running_by_relevant(weights: np.ndarray | None) -> np.ndarray:
            """Σ over each R's users of ``weights`` of their hits at ranks <= k: (distinct R) x k."""
            by_rank = np.bincount(by_group_and_rank, weights=weights, minlength=len(distinct_R) * cut.width)
            return np.cumsum(by_rank.reshape(len(distinct_R), cut.width), axis=1)[:, cut.columns]

        return Totals(lists, truth, rows, cut, settings, cells, distinct_R, running_by_relevant)

    cells = _Cells(hits, lists, rows, settings)
    totals = {}

    def totals_for(read: Hits) -> Totals:
        if id(read) not in totals:
            totals[id(read)] = totals_of(read)
        return totals[id(read)]

    weighted = _memo(lambda weight, read: totals_for(read).running_by_relevant(weight(read)), cells)
    scaled = Scaled(cut.k[None, :], distinct_R.astype(np.float64)[:, None], settings, _dcg_gain(lists, truth, settings))
    first = _first_ranks(lists, rows, hits, entries, settings)
    R_of_row = R_rows.astype(np.float64)
    sums = {}
    for metric in _terms(entries, curves_only=True):
        total = np.zeros(len(cut.k))
        for term in metric.kernel:
            if isinstance(term, HitSum) and term.totals:
                total += term.totals(totals_for(cells.of(term)))
            elif isinstance(term, HitSum):
                total += (term.scale(scaled) * weighted(term)).sum(axis=0)
            elif term.anywhere(settings):
                total += term.weight(first, R_of_row).sum()
            else:
                total += _by_first_hit(first, term.weight(first, R_of_row), cut)
        sums[metric.per_user] = total
    return sums


def _by_first_hit(first: np.ndarray, weights: np.ndarray, cut: Cutoffs) -> np.ndarray:
    """Σ of ``weights`` over the users whose first hit is at rank <= k, for each reported k.

    >>> _by_first_hit(np.array([1.0, 3.0, np.inf]), np.array([1.0, 2.0, 4.0]), Cutoffs.up_to(3))
    array([1., 1., 3.])
    """
    rank = np.where(first <= cut.width, first, 0).astype(np.intp)  # 0: no hit within the width
    per_rank = np.bincount(rank, weights=weights, minlength=cut.width + 1)[1:]
    return cut.at(np.cumsum(per_rank)[None, :])[0]


def per_user_pass(lists: Lists, truth: Truth, rows: np.ndarray, settings: Settings, candidates: np.ndarray | None,
                  cut: Cutoffs, entries: list[registry.Metric], threads: int = THREADS):
    """Every metric at every reported k per user, in chunks of users (bounded memory) on
    ``threads`` threads (numpy releases the GIL in the array work): ``(at_k, sums, hits,
    listed)``, the chunks' per-user arrays joined and their sums added."""
    def run(start: int, stop: int) -> PartResult:
        part = rows[start:stop]
        return _chunk(lists, truth, part, settings, None if candidates is None else candidates[part], cut, entries)

    results = map_chunks(run, chunks(len(rows), max(1, CHUNK_CELLS // cut.width)), threads)
    at_k = {name: _joined([r.at_k[name] for r in results]) for name in results[0].at_k}
    sums = {name: np.sum([r.sums[name] for r in results], axis=0) for name in results[0].sums}
    return at_k, sums, _joined([r.hits for r in results]), _joined([r.listed for r in results])


def _joined(parts: list[np.ndarray]) -> np.ndarray:
    """The chunks' arrays one after the other (one chunk's own array: no copy)."""
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _chunk(lists: Lists, truth: Truth, part: np.ndarray, settings: Settings, candidates: np.ndarray | None,
           cut: Cutoffs, entries: list[registry.Metric]) -> PartResult:
    """Per-user values at every reported k for one chunk of users: a :class:`HitSum` is its
    factor times a running sum of its weights placed at the hits' cells; a :class:`FirstHit`
    reads the first hit's rank; an :class:`OverCandidates` its formula over the counts."""
    width = cut.width
    cells = user_rows(part)  # (the lists' rows of these users: views when they are consecutive)
    anywhere = any(isinstance(term, FirstHit) and term.anywhere(settings) for m in _terms(entries) for term in m.kernel)
    full_hit = lists.hit[cells] if anywhere else None  # (RR anywhere looks past the cut-off)
    hit = np.ascontiguousarray(lists.hit[cells, :width] if full_hit is None else full_hit[:, :width])
    filled = lists.items[cells, :width] >= 0
    R = truth.relevant_count[part].astype(np.float64)
    H_all = running_sum(hit)  # at every position: LAUC weighs each position by it
    H = cut.at(H_all)
    F = cut.prefix(filled) if settings.precision_denominator == "list" or candidates is not None else None
    judged = pooled = N = None
    if truth.judges:
        judged = lists.judged_cells(truth)[cells, :width]
        pooled = lists.pooled_cells(truth)
        pooled = None if pooled is None else pooled[cells, :width]
        N = truth.judged_count[part].astype(np.float64)
    hits = Hits.of_block(hit, settings, R, None if lists.grade is None else lists.grade[cells, :width], judged,
                         pooled, N, truth.top_grade)
    scaled = Scaled(cut.k[None, :], R[:, None], settings, _dcg_gain(lists, truth, settings), H=H, F=F,
                    ideal=lambda: ideal_dcg(truth, part, cut, settings.gain, settings.ndcg_ideal,
                                            settings.dcg_discount))
    first = hits.first_rank if full_hit is None else \
        first_rank_of(*np.divmod(np.flatnonzero(full_hit.reshape(-1)), full_hit.shape[1]), len(part))

    def weighted_at(weights: np.ndarray | None, read: Hits) -> np.ndarray:
        return H if weights is None else cut.prefix(read.by_position(weights))

    weighted = _memo(lambda weight, read: weighted_at(weight(read), read), _Cells(hits, lists, part, settings))
    every_k = {m.per_user: _sum_of_terms(m.kernel, scaled, weighted, first, R, cut.k, settings)
               for m in _terms(entries)}
    if candidates is not None:
        n_negative = negatives(candidates, R, lists.lengths[part], lists.hit_counts[part])  # (whole lists)
        counts = CandidateCounts(hit, filled, H_all, H, F, R, n_negative, cut, settings)
        every_k.update({m.per_user: m.kernel.formula(counts) for m in entries if isinstance(m.kernel, OverCandidates)})
    column = cut.column_of(settings.k)
    listed = F[:, column].copy() if F is not None else row_sums(filled[:, :settings.k])
    return PartResult({name: value[:, column].astype(np.float64) for name, value in every_k.items()},
                      {m.per_user: column_sums(every_k[m.per_user]) for m in entries
                       if m.curve and m.per_user in every_k},
                      H[:, column].copy(), listed)
