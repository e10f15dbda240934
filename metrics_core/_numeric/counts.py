"""Grouping and ordering small non-negative integers (each user's count of relevant items, the
ranks of hits) by counting instead of by comparison.

``np.unique(..., return_inverse=True)`` and a stable ``np.argsort`` sort 64-bit values by
comparison, on the thread that sums the curves over users, after the other threads are done.
The same results come from a count of each value, or from numpy's radix sort, which its
stable sort takes for keys of 16 bits or fewer, several times faster. Other values (negative, very
large, not integers) take numpy's own way.
"""

from __future__ import annotations

import numpy as np

COUNTING_LIMIT = 1 << 20  # values below this (or below twice their number) are grouped by a count
RADIX_KEY = np.uint16  # the widest key numpy's stable sort orders by radix


def _small(values: np.ndarray, limit: int) -> bool:
    """Whether ``values`` are integers in ``0 .. limit - 1`` (and not empty)."""
    return len(values) > 0 and values.dtype.kind in "iu" and int(values.min()) >= 0 and int(values.max()) < limit


def distinct_and_groups(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_inverse=True)``: the distinct values, ascending, and the
    place of each value among them (its group).

    >>> distinct_and_groups(np.array([3, 1, 3, 0]))
    (array([0, 1, 3]), array([2, 1, 2, 0]))
    """
    if not _small(values, max(COUNTING_LIMIT, 2 * len(values))):
        distinct, groups = np.unique(values, return_inverse=True)
        return distinct, groups.reshape(-1)
    present = np.bincount(values) > 0
    return np.flatnonzero(present).astype(values.dtype), (np.cumsum(present) - 1)[values]


def stable_order(values: np.ndarray, descending: bool = False) -> np.ndarray:
    """``np.argsort(values, kind="stable")`` (``descending``: of ``-values``): equal values
    keep their order.

    >>> stable_order(np.array([2, 5, 2, 7]), descending=True)
    array([3, 1, 0, 2])
    """
    if not _small(values, int(np.iinfo(RADIX_KEY).max) + 1):
        if descending and values.dtype.kind == "u":  # (-values would wrap around)
            values = values.astype(np.int64)
        return np.argsort(-values if descending else values, kind="stable")
    keys = (int(values.max()) - values if descending else values).astype(RADIX_KEY)
    return np.argsort(keys, kind="stable")
