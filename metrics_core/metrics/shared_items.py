"""Which items two models' top lists share, user by user, with no loop over users: one sorted
array of ``user * n + item`` keys for one side and ``searchsorted`` for the other."""

from __future__ import annotations

import numpy as np


def shared_items(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(user row, position in a, position in b)`` of every item both lists of a row hold.

    ``a`` and ``b`` are users x positions item codes over the same user rows (-1 empty), items
    unique within a list.

    >>> shared_items(np.array([[1, 2, 3], [4, -1, -1]]), np.array([[3, 2, 9], [-1, -1, -1]]))
    (array([0, 0]), array([1, 2]), array([1, 0]))
    """
    width_a, width_b = a.shape[1], b.shape[1]
    top = int(max(a.max(initial=-1), b.max(initial=-1))) + 2
    cells_b = np.flatnonzero(b.reshape(-1) >= 0)
    keys_b = cells_b // width_b * top + b.reshape(-1)[cells_b]
    order = np.argsort(keys_b, kind="stable")
    keys_b, cells_b = keys_b[order], cells_b[order]
    cells_a = np.flatnonzero(a.reshape(-1) >= 0)
    keys_a = cells_a // width_a * top + a.reshape(-1)[cells_a]
    where = np.searchsorted(keys_b, keys_a).clip(0, max(len(keys_b) - 1, 0))
    found = (keys_b[where] == keys_a) if len(keys_b) else np.zeros(len(keys_a), dtype=bool)
    return cells_a[found] // width_a, cells_a[found] % width_a, cells_b[where[found]] % width_b
