"""The order of Arrow text arrays by code point, sorted on two threads when large."""

from __future__ import annotations

import numpy as np

from metrics_core._numeric.parallel import THREADS, map_threads

SPLIT_SORT_MIN = 1 << 17  # texts from which they are sorted in two halves on threads


def increasing(array) -> bool:
    """Whether each text of the Arrow text array ``array`` comes after the one before it (by code
    point): sorted, each text once."""
    import pyarrow.compute as pc

    return len(array) < 2 or bool(pc.all(pc.less(array.slice(0, len(array) - 1), array.slice(1))).as_py())


def sort_order(array) -> np.ndarray:
    """The indices that sort the Arrow text array ``array`` (by code point, ties in their order),
    as ``pyarrow.compute.array_sort_indices``. From :data:`SPLIT_SORT_MIN` texts the array is
    split by a pivot (the median of an even sample) into the texts below it and the rest, each
    sorted on its own thread (Arrow's sort runs on one). Equal texts fall on one side, in their
    order, so the result is the same."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(array)
    if n < max(SPLIT_SORT_MIN, 2) or THREADS < 2:
        return pc.array_sort_indices(array).to_numpy()
    sample = array.take(pa.array(np.linspace(0, n - 1, 1023).astype(np.int64)))
    pivot = sample.take(pc.array_sort_indices(sample))[len(sample) // 2]
    below = pc.less(array, pivot).to_numpy(zero_copy_only=False)
    sides = [np.flatnonzero(below), np.flatnonzero(~below)]
    if not all(len(side) for side in sides):
        return pc.array_sort_indices(array).to_numpy()
    return np.concatenate(map_threads(lambda rows: rows[pc.array_sort_indices(array.take(rows)).to_numpy()], sides))
