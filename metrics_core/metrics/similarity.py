"""Similarity-based metrics: intra-list diversity / similarity and serendipity.

Cosine similarity (of item features, or of the items' training-user sets for
``cooccurrence``) uses unit vectors, so cos(i, j) = x_i · x_j, and two identities that avoid
any items x items matrix:

* Σ_{i<j} cos(i, j) = (‖Σ_i x_i‖² − n) / 2 for n unit vectors, so the similarity summed over
  a list's pairs costs O(n·d);
* mean_{h∈H} cos(i, h) = x_i · m_u, with m_u the mean of the user's history vectors.

Hamming distance (the number of feature columns whose values differ) is counted from the
equal pairs: Σ_{i<j} d(i, j) = C·n(n − 1)/2 − Σ_columns (pairs with equal values), and
equal pairs in a column are counted on each list sorted by that column's value codes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from metrics_core.inputs.features import ItemVectors

if TYPE_CHECKING:
    import scipy.sparse as sp

CHUNK_VALUES = 1 << 22


@dataclass
class PairSums:
    """Per user: ``total`` = Σ over the n(n−1)/2 pairs of the list's usable items of a pair
    value (a similarity, or a distance when ``is_distance``); ``n`` = usable items."""

    total: np.ndarray
    n: np.ndarray
    is_distance: bool = False

    @property
    def pairs(self) -> np.ndarray:
        return self.n * (self.n - 1) / 2

    def mean(self) -> np.ndarray:
        """The mean over pairs; NaN with fewer than two usable items."""
        return np.divide(self.total, self.pairs, out=np.full(len(self.n), np.nan), where=self.n >= 2)

    def distance_sum(self) -> np.ndarray:
        """Σ over pairs of the distance (1 − similarity for a similarity)."""
        return self.total if self.is_distance else self.pairs - self.total


def usable_cells(top: np.ndarray, has_vector: np.ndarray) -> np.ndarray:
    return (top >= 0) & has_vector[np.where(top >= 0, top, 0)]


def cosine_pair_sums(top: np.ndarray, vectors: ItemVectors) -> PairSums:
    """Σ_{i<j} cos(i, j) over the list's items with a vector, as (‖S‖² − n) / 2."""
    usable = usable_cells(top, vectors.has_vector)
    n = usable.sum(axis=1).astype(np.float64)
    squared = np.empty(len(top))
    rows = max(1, CHUNK_VALUES // max(1, top.shape[1] * vectors.dimensions))
    for start in range(0, len(top), rows):
        block = np.where(usable[start:start + rows], top[start:start + rows], 0)
        summed = np.einsum("ukd,uk->ud", vectors.unit[block], usable[start:start + rows].astype(np.float64))
        squared[start:start + rows] = np.einsum("ud,ud->u", summed, summed)
    return PairSums((squared - n) / 2, n)


def sparse_cosine_pair_sums(top: np.ndarray, unit: sp.csr_matrix) -> PairSums:
    """Σ_{i<j} cos(i, j) for items with sparse unit vectors ``unit`` (items x d), rows of
    zeros for items without one; every listed item counts in n (an item without a vector is
    unlike every other: similarity 0). Lists are taken a block at a time: the cost grows with
    the number of non-zeros of each list's summed vector."""
    import scipy.sparse as sp

    listed = top >= 0
    n = listed.sum(axis=1).astype(np.float64)
    known = np.asarray(unit.multiply(unit).sum(axis=1)).ravel() > 0
    squared = np.empty(len(top))
    rows = max(1, (1 << 16) // max(1, top.shape[1]))
    for start in range(0, len(top), rows):
        block, cells = top[start:start + rows], listed[start:start + rows]
        row, position = np.nonzero(cells)
        incidence = sp.csr_matrix((np.ones(len(row)), (row, block[row, position])), shape=(len(block), unit.shape[0]))
        summed = incidence @ unit
        squared[start:start + rows] = np.asarray(summed.multiply(summed).sum(axis=1)).ravel()
    n_known = (listed & known[np.where(listed, top, 0)]).sum(axis=1)
    return PairSums((squared - n_known) / 2, n)


def matrix_pair_sums(top: np.ndarray, item_similarity: sp.csr_matrix) -> PairSums:
    """Σ_{i<j} sim(i, j) read from an items x items similarity matrix (an item without entries
    is unlike every other: similarity 0), every listed item counting in n, as
    :func:`sparse_cosine_pair_sums` gives it from the unit vectors whose products the matrix
    holds. Each list's K(K−1)/2 pairs are looked up, a block of lists at a time."""
    listed = top >= 0
    first, second = np.triu_indices(top.shape[1], 1)
    total = np.zeros(len(top))
    rows = max(1, (1 << 20) // max(1, len(first)))
    for start in range(0, len(top), rows):
        left, right = top[start:start + rows, first], top[start:start + rows, second]
        row, pair = np.nonzero((left >= 0) & (right >= 0))
        values = np.asarray(item_similarity[left[row, pair], right[row, pair]]).ravel()
        total[start:start + rows] = np.bincount(row, weights=values, minlength=len(left))
    return PairSums(total, listed.sum(axis=1).astype(np.float64))


def hamming_pair_sums(top: np.ndarray, value_codes: np.ndarray, has_vector: np.ndarray) -> PairSums:
    """Σ_{i<j} (number of feature columns where i and j differ) over the list's items with
    features. ``value_codes`` is items x columns of value codes."""
    usable = usable_cells(top, has_vector)
    n = usable.sum(axis=1).astype(np.float64)
    placeholder = -1 - np.arange(top.shape[1])  # distinct per position: never equal to anything
    equal = np.zeros(len(top))
    for column in range(value_codes.shape[1]):
        codes = np.where(usable, value_codes[np.where(usable, top, 0), column], placeholder)
        codes.sort(axis=1)
        position = np.arange(codes.shape[1])
        starts = np.ones(codes.shape, dtype=bool)
        starts[:, 1:] = codes[:, 1:] != codes[:, :-1]
        run_start = np.maximum.accumulate(np.where(starts, position, 0), axis=1)
        equal += (position - run_start).sum(axis=1)  # each item pairs with the equal ones sorted before it
    return PairSums(value_codes.shape[1] * n * (n - 1) / 2 - equal, n, is_distance=True)


def mean_history_vectors(user: np.ndarray, item: np.ndarray, n_users: int, vectors: ItemVectors):
    """m_u = mean of the unit vectors of the user's (distinct) training items that have one,
    and the number of such items per user."""
    import scipy.sparse as sp  # on use: only training data with item features needs it

    keep = vectors.has_vector[item]
    matrix = sp.csr_matrix((np.ones(int(keep.sum())), (user[keep], item[keep])),
                           shape=(n_users, len(vectors.has_vector)))
    matrix.data[:] = 1.0  # duplicates were summed: a history item counts once
    counts = np.asarray(matrix.getnnz(axis=1))
    summed = matrix @ vectors.unit
    return np.divide(summed, counts[:, None], out=np.zeros_like(summed), where=counts[:, None] > 0), counts


def serendipity(top: np.ndarray, hit_top: np.ndarray, rows: np.ndarray, usable: np.ndarray, similarity_to_history,
                history_count: np.ndarray, over: str = "relevant") -> np.ndarray:
    """Per user with ≥1 training item: the unexpectedness 1 − mean_{h∈H} sim(i, h) of the
    relevant recommended items i, averaged over those items (``over="relevant"``; NaN without
    one) or over every usable item of the top K, irrelevant ones counting 0 (``over="list"``).

    ``rows`` are the user codes of ``top``'s rows (to find their history); ``usable`` marks the
    cells that can be compared; ``similarity_to_history(user_row, item)`` gives
    mean_{h∈H} sim(item, h) for the user of each row.
    """
    relevant = hit_top & usable
    user_row, position = np.nonzero(relevant)
    unexpected = 1.0 - similarity_to_history(user_row, top[user_row, position])
    total = np.bincount(user_row, weights=unexpected, minlength=len(top))
    n = np.bincount(user_row, minlength=len(top)) if over == "relevant" else usable.sum(axis=1)
    ok = (n > 0) & (history_count[rows] > 0)
    return np.divide(total, n, out=np.full(len(top), np.nan), where=ok)


def feature_history_similarity(rows: np.ndarray, vectors: ItemVectors, history_mean: np.ndarray):
    """mean_{h∈H} cos(i, h) = x_i · m_u, for serendipity."""
    return lambda user_row, items: np.einsum("nd,nd->n", vectors.unit[items], history_mean[rows[user_row]])


def cooccurrence_history_similarity(rows: np.ndarray, history: sp.csr_matrix, item_similarity: sp.csr_matrix):
    """mean_{h∈H} sim(i, h) from an items x items similarity matrix: the user's row of
    ``history`` (users x items, each row summing to 1) times the similarity matrix, taken at
    the needed items, a block of users at a time."""

    def similarity(user_row: np.ndarray, items: np.ndarray) -> np.ndarray:
        out = np.empty(len(user_row))
        block = max(1, (1 << 22) // max(1, item_similarity.shape[0]))
        order = np.argsort(user_row, kind="stable")
        bounds = np.searchsorted(user_row[order], np.arange(0, len(rows) + block, block))
        for first, start, stop in zip(range(0, len(rows), block), bounds[:-1], bounds[1:], strict=False):
            picked = order[start:stop]
            if len(picked):
                dense = (history[rows[first:first + block]] @ item_similarity).toarray()
                out[picked] = dense[user_row[picked] - first, items[picked]]
        return out

    return similarity
