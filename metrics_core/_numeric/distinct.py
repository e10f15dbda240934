"""Distinct integers, and membership in a set of them, by sorting instead of hashing.

Since numpy 2.3, ``np.unique`` without its ``return_*`` options hashes its input, and ``np.isin``
hashes its second argument the same way. With many distinct values that is far slower than a
sort on this project's machine: 1.16 s for 1M distinct int64 values where a sort and a
comparison of neighbours take 0.05 s, 8.1 s against 0.39 s for 6M (the judged pairs of a graded
ground truth of 1M users took 13 s of a workspace's first open). These give the same arrays by
sorting; with few distinct values among many (40M training rows of 50,000 items), hashing is the
faster and ``np.unique`` stays the right call. (Small non-negative integers are grouped by a count
instead: :mod:`metrics_core._numeric.counts`.)
"""

from __future__ import annotations

import numpy as np


def distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values of the integer array ``values``, ascending: ``np.unique(values)``.

    >>> distinct(np.array([5, 1, 5, 3, 1])).tolist(), distinct(np.array([], dtype=np.int64)).tolist()
    ([1, 3, 5], [])
    """
    ordered = np.sort(values.ravel())
    if len(ordered) < 2:
        return ordered
    first = np.empty(len(ordered), dtype=bool)
    first[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    return ordered[first]


def member_of(values: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Whether each of ``values`` is in ``table`` (integers, distinct and ascending, as
    :func:`distinct` gives them): ``np.isin(values, table)`` by a binary search per value.

    >>> member_of(np.array([3, 4, 0, 9]), np.array([0, 3, 9])).tolist()
    [True, False, True, True]
    """
    if not len(table):
        return np.zeros(values.shape, dtype=bool)
    at = np.searchsorted(table, values)
    np.minimum(at, len(table) - 1, out=at)
    return table[at] == values
