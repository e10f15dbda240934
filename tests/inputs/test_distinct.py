"""Distinct integers and membership by sorting (numpy 2.3+ hashes, far slower with many distinct
values) give exactly numpy's arrays, for any integers, repeated or not, empty or not."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from metrics_core._numeric.distinct import distinct, member_of

INTEGERS = st.sampled_from([np.int8, np.int32, np.int64, np.uint32]).flatmap(
    lambda dtype: hnp.arrays(dtype, st.integers(0, 300), elements=st.integers(0, 40) if dtype != np.int8 else
                             st.integers(-5, 5)))


@settings(max_examples=200, deadline=None)
@given(INTEGERS, INTEGERS)
def test_the_same_arrays_as_numpy(values, candidates):
    assert distinct(values).tolist() == np.unique(values).tolist()
    assert distinct(values).dtype == values.dtype
    assert member_of(values, distinct(candidates)).tolist() == np.isin(values, candidates).tolist()
    assert member_of(values, np.unique(candidates)).tolist() == np.isin(values, candidates).tolist()


def test_many_distinct_values_at_the_sizes_of_a_large_ground_truth():
    rng = np.random.default_rng(0)
    keys = rng.integers(0, 1 << 45, 300_000)
    table = distinct(keys[::2])
    np.testing.assert_array_equal(distinct(keys), np.unique(keys))
    np.testing.assert_array_equal(member_of(keys, table), np.isin(keys, keys[::2]))
