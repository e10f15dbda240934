"""Feature-based metrics: intra-list diversity / similarity and serendipity.

Both use unit item vectors, so cos(i, j) = x_i · x_j, and two identities that avoid any
items x items matrix:

* Σ_{i<j} cos(i, j) = (‖Σ_i x_i‖² − n) / 2 for n unit vectors, so the mean pairwise
  similarity of a list is (‖S‖² − n) / (n(n − 1)) in O(n·d);
* mean_{h∈H} cos(i, h) = x_i · m_u, with m_u the mean of the user's history vectors.
"""

from __future__ import annotations

import numpy as np

from metrics_core.inputs.features import ItemVectors

CHUNK_VALUES = 1 << 22


def intra_list_similarity(top: np.ndarray, vectors: ItemVectors) -> tuple[np.ndarray, int]:
    """Per user: mean cosine similarity over the n(n−1)/2 pairs of recommended items that
    have a vector; NaN when fewer than two do. Also returns how many recommendations had no
    vector. Diversity (ILD) is 1 − this (cosine distance), within [0, 2].
    """
    usable = (top >= 0) & vectors.has_vector[np.where(top >= 0, top, 0)]
    n = usable.sum(axis=1).astype(np.float64)
    squared = np.empty(len(top))
    rows = max(1, CHUNK_VALUES // max(1, top.shape[1] * vectors.dimensions))
    for start in range(0, len(top), rows):
        block = np.where(usable[start:start + rows], top[start:start + rows], 0)
        summed = np.einsum("ukd,uk->ud", vectors.unit[block], usable[start:start + rows].astype(np.float64))
        squared[start:start + rows] = np.einsum("ud,ud->u", summed, summed)
    pairs = n * (n - 1)
    similarity = np.divide(squared - n, pairs, out=np.full(len(top), np.nan), where=n >= 2)
    return np.clip(similarity, -1.0, 1.0), int(((top >= 0) & ~usable).sum())


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


def serendipity(top: np.ndarray, hit_top: np.ndarray, rows: np.ndarray, vectors: ItemVectors,
                history_mean: np.ndarray, history_count: np.ndarray) -> np.ndarray:
    """Per user with ≥1 relevant recommended item (with a vector) and ≥1 training item (with
    a vector): mean over those relevant items i of (1 − mean_{h∈H} cos(i, h)); else NaN.

    ``rows`` are the user codes of ``top``'s rows (to find their history).
    """
    listed = top >= 0
    relevant = hit_top & listed & vectors.has_vector[np.where(listed, top, 0)]
    user_row, position = np.nonzero(relevant)
    items = top[user_row, position]
    unexpected = 1.0 - np.einsum("nd,nd->n", vectors.unit[items], history_mean[rows[user_row]])
    total = np.bincount(user_row, weights=unexpected, minlength=len(top))
    n = np.bincount(user_row, minlength=len(top))
    ok = (n > 0) & (history_count[rows] > 0)
    return np.divide(total, n, out=np.full(len(top), np.nan), where=ok)
