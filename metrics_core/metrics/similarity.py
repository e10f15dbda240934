"""Similarity-based metrics: intra-list diversity / similarity and serendipity.

Cosine similarity of item features uses unit vectors, so cos(i, j) = x_i · x_j, and two
identities that avoid any items x items matrix:

* Σ_{i<j} cos(i, j) = (‖Σ_i x_i‖² − n) / 2 for n unit vectors, so the similarity summed over
  a list's pairs costs O(n·d);
* mean_{h∈H} cos(i, h) = x_i · m_u, with m_u the mean of the user's history vectors.

The co-occurrence similarity (the cosine of the items' training-user sets) is an items x items
sparse matrix, made once (in memory from the training rows, on Spark from the whole table's
pairs): each list's pairs and each (user, item)'s history entries are looked up in it
(:func:`matrix_entries`), several times faster than the sums of the items' sparse unit vectors,
the formula above, which an item bought by many users makes long.

Hamming distance (the number of feature columns whose values differ) is counted from the
equal pairs: Σ_{i<j} d(i, j) = C·n(n − 1)/2 − Σ_columns (pairs with equal values), and
equal pairs in a column are counted on each list sorted by that column's value codes.
"""

from __future__ import annotations

import itertools
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
    """The cells of ``top`` (-1 empty) whose item has features (-1 reads the False appended last)."""
    return np.append(has_vector, False)[top]


def cosine_pair_sums(top: np.ndarray, vectors: ItemVectors, usable: np.ndarray | None = None) -> PairSums:
    """Σ_{i<j} cos(i, j) over the list's items with a vector, as (‖S‖² − n) / 2 (``usable``: the
    cells whose item has a vector, when known); from KERNEL_MIN cells, one compiled pass adding
    each item's inner product with the sum of those before it (the same to rounding)."""
    from metrics_core.inputs.encoded import compiled_for

    if compiled_for(top.size):  # (one compiled pass over the rows: 0.2 s per model at 1M users x 10)
        from metrics_core.metrics.prefix_kernels import cosine_at_last_place

        return PairSums(*cosine_at_last_place(top, vectors.unit, vectors.has_vector))
    usable = usable_cells(top, vectors.has_vector) if usable is None else usable
    n = usable.sum(axis=1).astype(np.float64)
    squared = np.empty(len(top))
    rows = max(1, CHUNK_VALUES // max(1, top.shape[1] * vectors.dimensions))
    for start in range(0, len(top), rows):
        block = np.where(usable[start:start + rows], top[start:start + rows], 0)
        summed = np.einsum("ukd,uk->ud", vectors.unit[block], usable[start:start + rows].astype(np.float64))
        squared[start:start + rows] = np.einsum("ud,ud->u", summed, summed)
    return PairSums((squared - n) / 2, n)


LOOKUP_KERNEL_MIN = 1 << 18  # look-ups from which sparse_entries (numba) finds them, faster than scipy's take
LOOKUP_BLOCK = 1 << 22  # look-ups made at once (their arrays: about 100 MB)


def matrix_entries(matrix: sp.csr_matrix, rows: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """``matrix[rows, columns]`` as a flat array (0 where the matrix has no entry). From
    :data:`LOOKUP_KERNEL_MIN` look-ups a compiled binary search of each row's sorted columns
    (:func:`~metrics_core.inputs.kernels.sparse_entries`, on a few threads) finds them; below, scipy's
    indexing (the tests check that both give the same values). A matrix whose indices are not
    sorted is searched in a sorted copy (the co-occurrence matrices are sorted when made, once:
    sorting in place here could race with another model's thread reading the same matrix)."""
    if not len(rows):  # (scipy's indexing gives no flat array for none)
        return np.zeros(0)
    if len(rows) < LOOKUP_KERNEL_MIN:
        return np.asarray(matrix[rows, columns], dtype=np.float64).ravel()
    from metrics_core._numeric.parallel import map_chunks, thread_shares
    from metrics_core.inputs.kernels import read_only_view, sparse_entries

    if not matrix.has_sorted_indices:
        matrix = matrix.sorted_indices()
    rows, columns = np.asarray(rows, dtype=np.int64), np.asarray(columns, dtype=np.int64)
    data = np.asarray(matrix.data, dtype=np.float64)
    out = np.empty(len(rows))
    indptr, indices = read_only_view(matrix.indptr), read_only_view(matrix.indices)  # (mapped from disk or not)
    map_chunks(lambda start, stop: sparse_entries(indptr, indices, data, rows, columns, out, start, stop),
               thread_shares(len(rows)))
    return out


def matrix_pair_sums(top: np.ndarray, item_similarity: sp.csr_matrix) -> PairSums:
    """Σ_{i<j} sim(i, j) read from an items x items similarity matrix (an item without entries
    is unlike every other: similarity 0), every listed item counting in n. Each list's
    K(K−1)/2 pairs are looked up (:func:`matrix_entries`), a block of lists at a time."""
    listed = top >= 0
    first, second = np.triu_indices(top.shape[1], 1)
    total = np.zeros(len(top))
    rows = max(1, LOOKUP_BLOCK // max(1, len(first)))
    for start in range(0, len(top), rows):
        left, right = top[start:start + rows, first], top[start:start + rows, second]
        row, pair = np.nonzero((left >= 0) & (right >= 0))
        values = matrix_entries(item_similarity, left[row, pair], right[row, pair])
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
    """mean_{h∈H} sim(i, h) = Σ_h w_h·sim(h, i) from an items x items similarity matrix, with
    ``history`` users x items (each user's distinct training items, weights w = 1/|H| summing to
    1): for each (user row, item) asked, the |H| entries sim(h, i) are looked up
    (:func:`matrix_entries`), :data:`LOOKUP_BLOCK` look-ups at a time or so. (The cost follows the pairs
    asked, not the users, as dense rows of history x similarity for every block of users holding
    one did not.)"""

    def similarity(user_row: np.ndarray, items: np.ndarray) -> np.ndarray:
        users = rows[user_row]
        starts = history.indptr[users].astype(np.int64)
        lengths = history.indptr[users + 1] - starts
        offsets = np.cumsum(lengths) - lengths  # where each pair's look-ups begin among all of them
        total = int(offsets[-1] + lengths[-1]) if len(users) else 0
        bounds = [0, *np.searchsorted(offsets, np.arange(LOOKUP_BLOCK, total, LOOKUP_BLOCK)), len(users)]
        out = np.zeros(len(users))
        for first, stop in itertools.pairwise(bounds):
            if first == stop:
                continue
            pair = np.repeat(np.arange(first, stop), lengths[first:stop])
            at = starts[pair] + np.arange(len(pair)) - (offsets[pair] - offsets[first])  # history entries
            values = history.data[at] * matrix_entries(item_similarity, history.indices[at], items[pair])
            out[first:stop] = np.bincount(pair - first, weights=values, minlength=stop - first)
        return out

    return similarity
