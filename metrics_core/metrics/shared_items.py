"""Which items two models' top lists share, user by user, with no loop over users and no
search: each user's two lists side by side, every cell tagged with its column, sorted along the
row; an item both lists hold is then two neighbouring cells with the same item.

A cell's value is ``item << bits | column``, with ``column`` < 2^bits running over ``a``'s
positions then ``b``'s. Sorting a row orders it by item, then column, so a shared item is a
pair of neighbours whose first column is in ``a`` and whose second is in ``b``; empty cells
(item -1) are negative and never pair. The row sort is numpy's (vectorised per row), several
times faster than a ``searchsorted`` of ``user * n + item`` keys.
"""

from __future__ import annotations

import numpy as np


def shared_items(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(user row, position in a, position in b)`` of every item both lists of a row hold,
    ordered by user row, then item.

    ``a`` and ``b`` are users x positions item codes over the same user rows (-1 empty), items
    unique within a list.

    >>> shared_items(np.array([[1, 2, 3], [4, -1, -1]]), np.array([[3, 2, 9], [-1, -1, -1]]))
    (array([0, 0]), array([1, 2]), array([1, 0]))
    """
    width_a, width_b = a.shape[1], b.shape[1]
    bits = max(1, (width_a + width_b - 1).bit_length())
    top = int(max(a.max(initial=-1), b.max(initial=-1)))
    dtype = np.int32 if (top + 1) << bits < 2**31 else np.int64
    tagged = np.concatenate([a, b], axis=1).astype(dtype)
    tagged <<= bits
    tagged |= np.arange(width_a + width_b, dtype=dtype)
    tagged.sort(axis=1)
    item = tagged >> bits
    low = (1 << bits) - 1
    column = tagged & low
    pair = (item[:, 1:] == item[:, :-1]) & (item[:, 1:] >= 0)
    pair &= (column[:, :-1] < width_a) & (column[:, 1:] >= width_a)  # one cell of each list
    user, at = np.nonzero(pair)
    return (user.astype(np.int64, copy=False), column[user, at].astype(np.int64),
            column[user, at + 1].astype(np.int64) - width_a)


def shared_depths(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Users x positions counts: how many items both lists of a row hold whose later position of
    the two is d (column d, from 0; as wide as the wider list). Row sums are the shared items.
    From :data:`~metrics_core.inputs.encoded.KERNEL_MIN` cells one compiled pass per block of rows
    (:func:`~metrics_core.inputs.kernels.shared_depth_rows`: no sort; the tagged row sort took 0.35 s
    per pair of models at 1M users x 10), else from :func:`shared_items`."""
    from metrics_core.inputs.encoded import compiled_for

    n_users, width = len(a), max(a.shape[1], b.shape[1])
    if not compiled_for(a.size + b.size):
        user, in_a, in_b = shared_items(a, b)
        return np.bincount(user * width + np.maximum(in_a, in_b), minlength=n_users * width).reshape(n_users, width)
    from metrics_core._numeric.parallel import map_chunks, thread_shares
    from metrics_core.inputs.kernels import shared_depth_rows

    grows = np.zeros((n_users, width), dtype=np.int64)
    n_items = int(max(a.max(initial=-1), b.max(initial=-1))) + 1
    map_chunks(lambda start, stop: shared_depth_rows(a, b, n_items, True, grows, start, stop), thread_shares(n_users))
    return grows


def shared_counts(a: np.ndarray, b: np.ndarray, n_items: int | None = None) -> np.ndarray:
    """Per row: the items both lists hold (the row sums of :func:`shared_depths`, from
    :data:`~metrics_core.inputs.encoded.KERNEL_MIN` cells one compiled pass that counts them
    without the users x positions table); ``n_items``: more than the largest item code, when
    known (finding it reads both lists).

    >>> shared_counts(np.array([[1, 2, 3], [4, -1, -1]]), np.array([[3, 2, 9], [-1, -1, -1]]))
    array([2, 0])
    """
    from metrics_core.inputs.encoded import compiled_for

    if not compiled_for(a.size + b.size):
        return np.bincount(shared_items(a, b)[0], minlength=len(a))
    from metrics_core._numeric.parallel import map_chunks, thread_shares
    from metrics_core.inputs.kernels import shared_depth_rows

    out = np.zeros((len(a), 1), dtype=np.int64)  # (every shared item in one column: no table of depths)
    n_items = int(max(a.max(initial=-1), b.max(initial=-1))) + 1 if n_items is None else n_items
    map_chunks(lambda start, stop: shared_depth_rows(a, b, n_items, False, out, start, stop), thread_shares(len(a)))
    return out[:, 0]


def positions_in(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """For each cell of ``a`` (users x positions item codes, -1 empty), the position in the
    same row of ``b`` that holds its item, -1 when none does (items unique within a row), by
    :func:`shared_items`.

    >>> positions_in(np.array([[1, 2, 3], [4, -1, -1]]), np.array([[3, 2, 9], [-1, -1, -1]]))
    array([[-1,  1,  0],
           [-1, -1, -1]], dtype=int32)
    """
    out = np.full(a.shape, -1, dtype=np.int32)
    user, position, other = shared_items(a, b)
    out[user, position] = other
    return out


PAIR_BLOCK_ROWS = 1 << 14  # rows whose models' first K places are placed side by side at a time


def shared_pair_counts(tops: list[np.ndarray], n_items: int) -> np.ndarray:
    """Users x pairs: the items two models' top lists (``tops``: users x K item codes each, -1
    empty, the same users) both hold, for every pair (m1, m2), m1 < m2, in reading order (0-1,
    0-2, .., 1-2, ..): one compiled pass over each row of all the models
    (:func:`~metrics_core.inputs.kernels.shared_pair_rows`) on a few threads, instead of one per
    pair (six for four models); the columns equal :func:`shared_counts` of each pair.

    >>> shared_pair_counts([np.array([[1, 2], [3, -1]]), np.array([[2, 1], [4, -1]]), np.array([[2, 5], [3, 4]])], 6)
    array([[2, 1, 1],
           [0, 1, 1]], dtype=int32)
    """
    from metrics_core._numeric.parallel import map_chunks, thread_shares
    from metrics_core.inputs.kernels import shared_pair_rows

    n_users, width = len(tops[0]), max(top.shape[1] for top in tops)
    dtype = np.result_type(*tops)
    shared = np.zeros((n_users, len(tops) * (len(tops) - 1) // 2), dtype=np.int32)

    def rows(start: int, stop: int) -> None:
        for first in range(start, stop, PAIR_BLOCK_ROWS):
            last = min(first + PAIR_BLOCK_ROWS, stop)
            block = np.full((last - first, len(tops) * width), -1, dtype=dtype)
            for model, top in enumerate(tops):
                block[:, model * width:model * width + top.shape[1]] = top[first:last]
            shared_pair_rows(block, width, len(tops), n_items, shared, first)

    map_chunks(rows, thread_shares(n_users))
    return shared
