"""The running sums along list positions that every accuracy pass reads
(:func:`metrics_core.metrics.accuracy.cutoffs.running_sum`): whichever way they are added (one
column at a time, or whole numbers in integers along each row), they equal numpy's float64
cumulative sum, bit for bit, at every width."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics_core.metrics.accuracy.cutoffs import COLUMN_LOOP_WIDTH, COUNT_ROW_WIDTH, running_sum

WIDTHS = [1, 3, COUNT_ROW_WIDTH - 1, COUNT_ROW_WIDTH, 100, COLUMN_LOOP_WIDTH + 1]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("kind", [bool, np.int32, np.int64, np.float64])
def test_every_way_of_adding_equals_numpy_s_cumulative_sum(width, kind):
    rng = np.random.default_rng(width)
    values = (rng.random((500, width)) * 4).astype(kind) if kind is not bool else rng.random((500, width)) < 0.3
    summed = running_sum(values)
    assert summed.dtype == np.float64
    assert np.array_equal(summed, np.cumsum(values.astype(np.float64), axis=1))


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 40), st.integers(0, 120), st.integers(0, 2**20))
def test_counts_and_weighted_counts_are_exact(rows, width, seed):
    """Flags, and flags weighed by the hits so far (as LAUC weighs them), of any shape."""
    rng = np.random.default_rng(seed)
    hit = rng.random((rows, width)) < 0.2
    hits_so_far = running_sum(hit)
    assert np.array_equal(hits_so_far, np.cumsum(hit, axis=1, dtype=np.float64))
    weighed = ~hit * hits_so_far.astype(np.int32)
    assert np.array_equal(running_sum(weighed), np.cumsum(~hit * hits_so_far, axis=1))
