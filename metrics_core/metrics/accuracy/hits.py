"""The hit cells a pass reads: one entry per relevant item in its users' first ``width``
positions, flat, ordered by user then rank, with what the metrics weigh each hit by (its rank,
its place among its user's hits, its grade's gain, its bpref and infAP terms)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from metrics_core.metrics.accuracy.cutoffs import user_rows
from metrics_core.metrics.accuracy.ideal import gain

if TYPE_CHECKING:
    from metrics_core.inputs.encoded import Lists, Truth
    from metrics_core.settings import Settings

INFAP_EPSILON = 1e-5  # trec_eval's smoothing of the precision among judged items above


@dataclass
class Hits:
    """The hit cells of a pass's users (rows 0 .. ``n_rows`` - 1) in their first ``width``
    positions: ``row`` and ``position`` (0-based) of each, ascending by row then position;
    ``cell`` and ``row_start``, flat indices of the hit and of its row's first cell in the layout
    that ``marked`` uses; ``R`` and ``N``, each row's relevant and judged non-relevant counts.

    ``top_grade`` is the ground truth's highest relevant grade.

    ``grades()`` gives the grade at each hit (None: the lists carry hits only) and ``marked()``
    the flat cells, ascending, of the judged non-relevant items and of the pooled but unjudged
    ones (None: none) in the same layout as ``cell``; both are read on first use.
    """

    row: np.ndarray
    position: np.ndarray
    n_rows: int
    width: int
    settings: Settings
    R: np.ndarray
    cell: np.ndarray
    row_start: np.ndarray
    grades: Callable[[], np.ndarray | None]
    marked: Callable[[], tuple[np.ndarray, np.ndarray | None]]
    N: np.ndarray | None = None
    top_grade: float = 1.0

    @classmethod
    def of_rows(cls, lists: Lists, truth: Truth, rows: np.ndarray, width: int, settings: Settings,
                local: bool = True) -> Hits:
        """The hit cells of users ``rows`` (ascending codes) in their first ``width`` positions,
        read from the lists' hit cells (computed once per model). ``local``: judged cells are
        read from the users' first ``width`` positions only (few, at K); else from the whole
        lists (no gathered copy of them)."""
        n_users, positions = lists.hit.shape
        user, position = lists.hit_coordinates
        evaluated = np.zeros(n_users, dtype=bool)
        evaluated[rows] = True
        keep = evaluated[user] & (position < width)
        user, position, global_cell = user[keep], position[keep], lists.hit_cells[keep]
        row_of = np.zeros(n_users, dtype=np.intp)
        row_of[rows] = np.arange(len(rows))
        row = row_of[user]

        def marked() -> tuple[np.ndarray, np.ndarray | None]:
            pooled = lists.pooled_cells(truth)
            if not local:
                return (np.flatnonzero(lists.judged_cells(truth).reshape(-1)),
                        None if pooled is None else np.flatnonzero(pooled.reshape(-1)))
            at = user_rows(rows)
            return (np.flatnonzero(lists.judged_cells(truth)[at, :width].reshape(-1)),
                    None if pooled is None else np.flatnonzero(pooled[at, :width].reshape(-1)))

        cell, row_start = (row * width + position, row * width) if local else (global_cell, user * positions)
        return cls(row, position, len(rows), width, settings, truth.relevant_count[rows].astype(np.float64),
                   cell, row_start, lambda: None if lists.grade is None else lists.grade.reshape(-1)[global_cell],
                   marked, truth.judged_count[rows].astype(np.float64) if truth.judges else None, truth.top_grade)

    @classmethod
    def of_block(cls, hit: np.ndarray, settings: Settings, R: np.ndarray, grade: np.ndarray | None,
                 judged: np.ndarray | None = None, pooled: np.ndarray | None = None,
                 N: np.ndarray | None = None, top_grade: float = 1.0) -> Hits:
        """The hit cells of a users x width block ``hit``, with its grades, judged non-relevant
        and pooled cells as blocks of the same shape."""
        cell = np.flatnonzero(hit.reshape(-1))
        width = hit.shape[1]
        row, position = np.divmod(cell, width)
        return cls(row, position, hit.shape[0], width, settings, R, cell, row * width,
                   lambda: None if grade is None else grade.reshape(-1)[cell],
                   lambda: (np.flatnonzero(judged.reshape(-1)),
                            None if pooled is None else np.flatnonzero(pooled.reshape(-1))), N, top_grade)

    @cached_property
    def rank(self) -> np.ndarray:
        """i: each hit's rank (1-based)."""
        return self.position + 1.0

    @cached_property
    def nth(self) -> np.ndarray:
        """j: each hit is the j-th hit of its row (1-based)."""
        return place_among_hits(self.row)

    @cached_property
    def gain(self) -> np.ndarray:
        """Each hit's gain (:func:`~metrics_core.metrics.accuracy.ideal.gain`); 1 when the
        lists carry no grades (every grade is equal) or the gain is binary."""
        grades = self.grades() if self.settings.gain != "binary" else None
        return np.ones(len(self.row)) if grades is None else gain(grades.astype(np.float64), self.settings.gain)

    @cached_property
    def judged(self) -> dict[str, np.ndarray]:
        """Each hit's bpref and infAP terms (:func:`judged_terms`)."""
        judged, pooled = self.marked()
        return judged_terms(judged, self.cell, self.row_start, self.nth - 1.0, self.R[self.row], self.N[self.row],
                            self.position, pooled)

    @cached_property
    def first_rank(self) -> np.ndarray:
        """The rank of each row's first hit within the width, inf when it has none.

        >>> first_rank_of(np.array([0, 0, 2]), np.array([3, 5, 0]), 3)
        array([ 4., inf,  1.])
        """
        return first_rank_of(self.row, self.position, self.n_rows)

    def per_row(self, weights: np.ndarray | None) -> np.ndarray:
        """Σ of ``weights`` (None: 1) over each row's hits, rows x 1."""
        return np.bincount(self.row, weights=weights, minlength=self.n_rows).astype(np.float64)[:, None]

    def by_position(self, weights: np.ndarray | None) -> np.ndarray:
        """``weights`` (None: 1) placed at each hit's cell of a rows x width array of zeros."""
        out = np.zeros((self.n_rows, self.width))
        out[self.row, self.position] = 1.0 if weights is None else weights
        return out


def place_among_hits(row: np.ndarray) -> np.ndarray:
    """j for each hit cell, the j-th hit of its row (1-based), from the cells' rows in
    ascending order.

    >>> place_among_hits(np.array([0, 0, 2, 2, 2]))
    array([1., 2., 1., 2., 3.])
    """
    start = np.flatnonzero(np.diff(row, prepend=-1))
    return np.arange(len(row)) - np.repeat(start, np.diff(np.append(start, len(row)))) + 1.0


def first_rank_of(row: np.ndarray, position: np.ndarray, n_rows: int) -> np.ndarray:
    """The rank of each row's first hit, inf when it has none, from the hit cells' rows
    (ascending) and positions (ascending within a row)."""
    first = np.full(n_rows, np.inf)
    start = np.flatnonzero(np.diff(row, prepend=-1))
    first[row[start]] = position[start] + 1.0
    return first


def whole_list_first_rank(lists: Lists, rows: np.ndarray) -> np.ndarray:
    """The rank of the first hit anywhere in the lists of users ``rows``, inf when none."""
    row, _, position, _ = hits_of_users(lists, rows)
    return first_rank_of(row, position, len(rows))


def hits_of_users(lists: Lists, rows: np.ndarray, width: int | None = None) -> tuple[np.ndarray, ...]:
    """The hit cells of users ``rows`` (ascending codes) at positions below ``width`` (None: the
    whole list), from the lists' hit cells (computed once per model): each one's place in
    ``rows``, its user code and position (ascending by user, then position), and which of
    :attr:`Lists.hit_cells` they are (a mask)."""
    user, position = lists.hit_coordinates
    row_of = np.full(lists.hit.shape[0], -1, dtype=np.intp)
    row_of[rows] = np.arange(len(rows))
    keep = row_of[user] >= 0 if width is None else (row_of[user] >= 0) & (position < width)
    return row_of[user[keep]], user[keep], position[keep], keep


def judged_terms(judged: np.ndarray, cell: np.ndarray, row_start: np.ndarray, above_relevant: np.ndarray,
                 R: np.ndarray, N: np.ndarray, position: np.ndarray,
                 pooled: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Each hit's bpref and infAP term, the hit at flat cell ``cell`` of a row that begins at
    ``row_start``, rank i = ``position + 1``, with a = ``above_relevant`` relevant items above it;
    ``judged``: the flat cells of judged non-relevant items, ascending, n of them above the hit;
    ``pooled``: the flat cells of pooled but unjudged items (a negative grade in qrels,
    trec_eval's -1), ascending, u of them above the hit; ``R`` and ``N``: its user's relevant and
    judged non-relevant counts; ε = 1e-5:

    - bpref: 1 - min(n, R) / min(R, N) (1 when n = 0), trec_eval's ``bpref``;
    - infAP (Yilmaz and Aslam, trec_eval's ``infAP``): 1/i + ((a + n + u)/i)·(a + ε)/(a + n + 2ε).
      Items outside the ground truth are outside the pool: they lower the share of pooled
      items above, (a + n + u)/(i - 1), for which the precision among the judged ones stands in.

    >>> terms = judged_terms(np.array([0]), np.array([1, 2]), np.array([0, 0]), np.array([0.0, 1.0]),
    ...                      np.array([2.0, 2.0]), np.array([4.0, 4.0]), np.array([1, 2]))
    >>> terms["bpref"], terms["infap"].round(4)
    (array([0.5, 0.5]), array([0.5   , 0.6667]))
    """
    n = (np.searchsorted(judged, cell) - np.searchsorted(judged, row_start)).astype(np.float64)
    above_judged = above_relevant + n
    above_pooled = above_judged if pooled is None else \
        above_judged + (np.searchsorted(pooled, cell) - np.searchsorted(pooled, row_start))
    share = (above_relevant + INFAP_EPSILON) / (above_judged + 2 * INFAP_EPSILON)
    return {"bpref": 1.0 - np.minimum(n, R) / np.maximum(np.minimum(R, N), 1.0),
            "infap": (1.0 + above_pooled * share) / (position + 1.0)}


def tie_ends(scores: np.ndarray | None, user: np.ndarray, position: np.ndarray, k: int) -> np.ndarray:
    """The last position (below ``k``) of the run of equal scores each cell (``user``,
    ``position``) is in: its own position without scores or without a tie. One step per tied
    position, over the cells still tied, never over users.

    >>> tie_ends(np.array([[3.0, 2.0, 2.0, 2.0, 1.0]]), np.array([0, 0]), np.array([0, 1]), 3)
    array([0, 2])
    """
    last = position.copy()
    if scores is None:
        return last
    tied = np.arange(len(last))
    while len(tied):
        step = last[tied] + 1
        more = step < k
        tied, step = tied[more], step[more]
        same = scores[user[tied], step] == scores[user[tied], step - 1]
        tied = tied[same]
        last[tied] += 1
    return last


def tie_starts(scores: np.ndarray, user: np.ndarray, position: np.ndarray) -> np.ndarray:
    """The first position of the run of equal scores each cell (``user``, ``position``) is in
    (as :func:`tie_ends`, towards the top of the list).

    >>> tie_starts(np.array([[3.0, 2.0, 2.0, 2.0, 1.0]]), np.array([0, 0]), np.array([0, 3]))
    array([0, 1])
    """
    first = position.copy()
    tied = np.arange(len(first))
    while len(tied):
        tied = tied[first[tied] > 0]
        step = first[tied] - 1
        tied = tied[scores[user[tied], step] == scores[user[tied], step + 1]]
        first[tied] -= 1
    return first


def tie_spread(lists: Lists, rows: np.ndarray, width: int, settings: Settings, R: np.ndarray) -> Hits:
    """DCG's hits with tied scores averaged (scikit-learn's ``dcg_score``, ``ignore_ties=False``):
    each run of equal scores holding a relevant item anywhere in the list gives every one of its
    positions the mean gain of the run's items, Σ gains / run length, so that

        DCG@k = Σ_{i≤k} discount(i) · (mean gain of the run at rank i)

    for every k. Returned as the hit cells of users ``rows`` within ``width``: one per position of
    such a run, its ``gain`` that mean (before DCG's uniform gain, as :attr:`Hits.gain`). Runs
    are found along each hit's row in steps over the tied cells, never over users."""
    row_of_hit, user, position, keep = hits_of_users(lists, rows)
    grades = None if lists.grade is None or settings.gain == "binary" else \
        lists.grade.reshape(-1)[lists.hit_cells[keep]].astype(np.float64)
    gains = np.ones(len(user)) if grades is None else gain(grades, settings.gain)
    first = tie_starts(lists.scores, user, position)
    last = tie_ends(lists.scores, user, position, lists.positions)
    run, where = np.unique(user * np.int64(lists.positions) + first, return_index=True)
    mean = np.bincount(np.searchsorted(run, user * np.int64(lists.positions) + first), weights=gains,
                       minlength=len(run)) / (last[where] - first[where] + 1)
    start, stop = first[where], np.minimum(last[where] + 1, width)
    length = np.maximum(stop - start, 0)
    offsets = np.arange(length.sum()) - np.repeat(np.cumsum(length) - length, length)
    row = np.repeat(row_of_hit[where], length)
    spread_position = np.repeat(start, length) + offsets
    spread = Hits(row, spread_position, len(rows), width, settings, R, row * width + spread_position, row * width,
                  lambda: None, lambda: (np.zeros(0, dtype=np.intp), None))
    spread.__dict__["gain"] = np.repeat(mean, length)  # (the cached property, given)
    return spread
