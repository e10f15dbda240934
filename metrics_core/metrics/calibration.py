"""Calibration (Steck, "Calibrated recommendations", RecSys 2018): how far the mix of item
categories in a user's list is from the mix in the user's history.

With p(g|i) each item's share of category g (an item with several categories, "Drama|War",
splits its weight equally), the history's mix is p(g|u) = mean of p(g|i) over the user's
distinct training items, the list's is q(g|u) = mean of p(g|i) over the items of its top K
(items without a category are left out of both), and

    C_KL(p, q) = Σ_g p(g|u) · log(p(g|u) / q̃(g|u)),   q̃ = (1 − α)·q + α·p,

natural log, 0·log 0 = 0; α (0.01 by default) keeps the divergence finite when the list has
none of a category the history has. 0 when the list mixes categories as the history does; it
grows as they part (history 70/30, list 100/0, α = 0.01: 1.1340). Per user, for users with a
categorised history and a categorised item in the top K (NaN otherwise); averaged over them.

Everything is a sparse product: users x items (history or top K) times items x categories,
then the divergence over the history's non-zero categories only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from metrics_core.inputs.encoded import compiled_for
from metrics_core.metrics.bias import labels_of

if TYPE_CHECKING:
    import scipy.sparse as sp

DENSE_CATEGORIES = 64  # up to this many categories, a top K's mix is summed position by position in dense rows


def category_column(table: pd.DataFrame, item_column: str) -> str | None:
    """The item table's first text column whose values repeat (no more distinct labels than half
    its rows, labels split by ``|``): a genre, not a title. None when there is none.

    >>> category_column(pd.DataFrame({"item_id": [1, 2, 3, 4], "title": list("abcd"),
    ...                               "genre": ["Drama|War", "Drama", "War", "Drama"]}), "item_id")
    'genre'
    """
    for column in table.columns:
        values = table[column]
        if column == item_column or pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
            continue
        labels = labels_of(values.dropna())
        if len(labels) and labels.nunique() * 2 <= len(table):
            return column
    return None


@dataclass(frozen=True)
class Categories:
    """Item categories from an item-table column: ``shares``, items x categories p(g|i);
    ``names``, the categories (columns of ``shares``); ``history``, users x categories, each
    user's history mix (None without training data)."""

    column: str
    shares: sp.csr_matrix
    names: list[str]
    history: sp.csr_matrix | None = None


def category_shares(values: pd.Series, codes: np.ndarray, n_items: int) -> tuple[sp.csr_matrix, list[str]]:
    """Items x categories p(g|i) from an item-table column (``values``, one per table row, the
    row's item code in ``codes``), and the categories' names: a text value is one category, or
    several split by ``|``, each with an equal share; a missing or empty value is no category.
    An item listed twice keeps its first row.

    >>> shares, names = category_shares(pd.Series(["Drama|War", "Comedy", None]), np.array([0, 2, 1]), 3)
    >>> shares.toarray().round(2).tolist(), names
    ([[0.0, 0.5, 0.5], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0]], ['Comedy', 'Drama', 'War'])
    """
    import scipy.sparse as sp  # (on use: an evaluation without categories does not pay for its import)

    first = ~pd.Series(codes).duplicated().to_numpy()
    labels = labels_of(pd.Series(values.to_numpy(dtype=object)[first], index=codes[first]).dropna())
    labels = labels[labels.str.strip() != ""].str.strip()  # (the item table's row's item code is the index)
    items = labels.index.to_numpy()
    per_item = np.bincount(items, minlength=n_items)
    category, names = pd.factorize(labels.to_numpy(dtype=object), sort=True)
    return (sp.csr_matrix((1.0 / per_item[items], (items, category)), shape=(n_items, max(len(names), 1))),
            [str(name) for name in names])


def mean_shares(rows: np.ndarray, items: np.ndarray, n_rows: int, shares: sp.csr_matrix) -> sp.csr_matrix:
    """Rows x categories: the mean of ``shares`` over each row's distinct items (pairs ``rows``,
    ``items``; items without a category left out), 0 for a row with none."""
    import scipy.sparse as sp

    return mix_of_rows(sp.csr_matrix((np.ones(len(rows)), (rows, items)), shape=(n_rows, shares.shape[0])), shares)


def mix_of_rows(matrix: sp.csr_matrix, shares: sp.csr_matrix) -> sp.csr_matrix:
    """Rows x categories: the mean of ``shares`` over the items of each row of a rows x items
    ``matrix`` (its entries, each once however large: training counts), items without a
    category left out, 0 for a row with none (no entry). From :data:`~metrics_core.inputs.encoded.KERNEL_MIN`
    entries and few categories (:data:`DENSE_CATEGORIES`), by one compiled pass over the rows
    (:func:`_compiled_mix_of_rows`: 0.3 s instead of 1 s for the 28M training rows of 1M users, most
    of it scipy's arrays of ones and products)."""
    import scipy.sparse as sp

    if shares.shape[1] <= DENSE_CATEGORIES and compiled_for(matrix.nnz):
        return _compiled_mix_of_rows(matrix.tocsr(), shares)
    has = (np.asarray(shares.sum(axis=1)).ravel() > 0).astype(np.float64)
    present = sp.csr_matrix((np.ones(len(matrix.data)), matrix.indices, matrix.indptr), shape=matrix.shape)
    totals = present @ shares
    counts = present @ has
    return (sp.diags(np.divide(1.0, counts, out=np.zeros(len(counts)), where=counts > 0)) @ totals).tocsr()


def _compiled_mix_of_rows(matrix: sp.csr_matrix, shares: sp.csr_matrix) -> sp.csr_matrix:
    """:func:`mix_of_rows` by :func:`~metrics_core.inputs.kernels.mix_rows` on a few threads: each
    row's categories counted first (the result's row pointers), then its mix written; the same
    entries, in category order, and the same values (sums in the row's item order, times 1 / items)."""
    import scipy.sparse as sp

    from metrics_core._numeric.parallel import map_chunks, thread_shares
    from metrics_core.inputs.kernels import mix_rows, share_kinds

    dense = shares.toarray()
    kinds = share_kinds(dense)
    n_rows = matrix.shape[0]
    indptr, indices = matrix.indptr, matrix.indices
    sizes = np.zeros(n_rows + 1, dtype=np.int64)
    bounds = thread_shares(n_rows)
    map_chunks(lambda start, stop: mix_rows(indptr, indices, dense, kinds, sizes[1:], sizes, np.empty(0, np.int32),
                                            np.empty(0), True, start, stop), bounds)
    out_indptr = np.cumsum(sizes)
    out_indices, out_data = np.empty(out_indptr[-1], dtype=np.int32), np.empty(out_indptr[-1])
    map_chunks(lambda start, stop: mix_rows(indptr, indices, dense, kinds, sizes[1:], out_indptr, out_indices, out_data,
                                            False, start, stop), bounds)
    return sp.csr_matrix((out_data, out_indices, out_indptr), shape=(n_rows, shares.shape[1]))


def miscalibration(history: sp.csr_matrix, listed: sp.csr_matrix, alpha: float) -> np.ndarray:
    """C_KL of each row (rows x categories ``history`` = p, ``listed`` = q): NaN where either
    mix is empty.

    >>> import scipy.sparse as sp
    >>> p = sp.csr_matrix([[0.7, 0.3]]); q = sp.csr_matrix([[1.0, 0.0]])
    >>> miscalibration(p, q, 0.01).round(4).tolist(), miscalibration(p, p, 0.01).tolist()
    ([1.134], [0.0])
    """
    p = history.tocoo()
    q = listed.tocsr()
    q.sort_indices()
    q_rows = np.repeat(np.arange(q.shape[0]), np.diff(q.indptr))
    width = q.shape[1]
    q_keys = q_rows.astype(np.int64) * width + q.indices
    p_keys = p.row.astype(np.int64) * width + p.col
    q_at_p = np.zeros(len(p_keys))
    if len(q_keys):
        at = np.minimum(np.searchsorted(q_keys, p_keys), len(q_keys) - 1)
        found = q_keys[at] == p_keys
        q_at_p[found] = q.data[at[found]]
    smoothed = (1.0 - alpha) * q_at_p + alpha * p.data
    terms = p.data * np.log(p.data / smoothed)
    value = np.bincount(p.row, weights=terms, minlength=history.shape[0]).astype(np.float64)  # (int when empty)
    empty = (np.diff(history.tocsr().indptr) == 0) | (np.diff(q.indptr) == 0)
    value[empty] = np.nan
    return value


def list_miscalibration(items: np.ndarray, rows: np.ndarray, k: int, history: sp.csr_matrix,
                        shares: sp.csr_matrix, alpha: float) -> np.ndarray:
    """C_KL of the top K of users ``rows`` (``items``: users x positions item codes, -1 empty;
    items unique within a row) against their history mixes (rows ``rows`` of ``history``, a mix per
    user): with few categories (:data:`DENSE_CATEGORIES`) the list's mix is summed one list
    position at a time over dense rows of categories, else by :func:`mean_shares` and
    :func:`miscalibration` (the same values)."""
    every_user = len(rows) == len(items)  # (rows ascend and are distinct: then they are every user, in order)
    if shares.shape[1] > DENSE_CATEGORIES:
        top = items[:, :k] if every_user else items[rows, :k]
        row, position = np.nonzero(top >= 0)
        return miscalibration(history if every_user else history[rows], mean_shares(
            row, top[row, position], len(top), shares), alpha)
    dense = shares.toarray()
    if compiled_for(len(rows) * min(k, items.shape[1])):
        return _compiled_list_miscalibration(items, rows, k, history, dense, alpha)
    has = dense.sum(axis=1) > 0
    top = items[rows, :k]
    mix, counted = np.zeros((len(top), dense.shape[1])), np.zeros(len(top))
    for column in top.T:
        usable = column >= 0
        usable[usable] = has[column[usable]]
        mix += dense[np.where(usable, column, 0)] * usable[:, None]
        counted += usable
    q = mix / np.maximum(counted, 1)[:, None]
    p = history[rows].toarray()
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * np.log(p / ((1.0 - alpha) * q + alpha * p)), 0.0)
    value = terms.sum(axis=1)
    value[(counted == 0) | ~(p > 0).any(axis=1)] = np.nan
    return value


def _compiled_list_miscalibration(items: np.ndarray, rows: np.ndarray, k: int, history: sp.csr_matrix,
                                  dense: np.ndarray, alpha: float) -> np.ndarray:
    """:func:`list_miscalibration` in one compiled pass over the rows, on a few threads
    (:func:`~metrics_core.inputs.kernels.miscalibration_rows`: numpy's position-by-position sums
    made K passes over users x categories, 0.33 s at 1M users x K = 5), reading each user's first K
    places and history row where they are (copying the top K of 1M users x K = 35 took 0.24 s)."""
    from metrics_core._numeric.parallel import map_chunks, thread_shares
    from metrics_core.inputs.kernels import miscalibration_rows, read_only_c, share_kinds

    history = history.tocsr()
    items = read_only_c(items)
    rows = np.asarray(rows, dtype=np.int64)
    data = np.asarray(history.data, dtype=np.float64)
    out = np.empty(len(rows))
    width = min(k, items.shape[1])
    kinds = share_kinds(dense)
    map_chunks(lambda start, stop: miscalibration_rows(items, rows, width, dense, kinds, history.indptr,
                                                       history.indices, data, float(alpha), out, start, stop),
               thread_shares(len(rows)))
    return out
