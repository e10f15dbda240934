"""Grouping and ordering by counting (``metrics_core._numeric.counts``) give numpy's own results, on
the counting path and on the fallbacks alike."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from metrics_core._numeric.counts import COUNTING_LIMIT, distinct_and_groups, stable_order

INTEGER_TYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


def arrays_of(dtype, low: int, high: int):
    return hnp.arrays(dtype, st.integers(0, 300), elements=st.integers(low, high))


def assert_same_as_numpy(values: np.ndarray) -> None:
    distinct, groups = distinct_and_groups(values)
    expected_distinct, expected_groups = np.unique(values, return_inverse=True)
    np.testing.assert_array_equal(distinct, expected_distinct)
    assert distinct.dtype == values.dtype
    np.testing.assert_array_equal(groups, expected_groups.reshape(-1))
    np.testing.assert_array_equal(stable_order(values), np.argsort(values, kind="stable"))
    signed = values.astype(np.int64) if values.dtype.kind == "u" else values  # (-values of unsigned ones wraps)
    np.testing.assert_array_equal(stable_order(values, descending=True), np.argsort(-signed, kind="stable"))


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(INTEGER_TYPES).flatmap(lambda dtype: arrays_of(dtype, 0, 40)))
def test_small_counts_of_every_integer_type(values):
    assert_same_as_numpy(values)


@settings(max_examples=100, deadline=None)
@given(arrays_of(np.int64, -5, 70_000))  # negatives and values past a 16-bit key: numpy's own way
def test_values_the_counting_path_does_not_take(values):
    assert_same_as_numpy(values)


@settings(max_examples=50, deadline=None)
@given(arrays_of(np.int64, 0, 70_000))
def test_descending_order_keeps_ties_in_their_order(values):
    order = stable_order(values, descending=True)
    ranked = values[order]
    assert (ranked[:-1] >= ranked[1:]).all()
    ties = ranked[:-1] == ranked[1:]
    assert (order[:-1][ties] < order[1:][ties]).all()


@pytest.mark.parametrize("values", [
    np.array([], dtype=np.int64),
    np.array([COUNTING_LIMIT * 4, 0, COUNTING_LIMIT * 4]),  # far above the count's limit for 3 values
    np.array([2**62, 1, 2**62]),
    np.array([3.0, 1.0, 3.0]),  # not integers
])
def test_edges(values):
    assert_same_as_numpy(values)
    if values.dtype.kind == "f":
        np.testing.assert_array_equal(stable_order(values, descending=True), np.argsort(-values, kind="stable"))


def test_a_million_relevant_counts():
    values = np.random.default_rng(0).poisson(6.6, 1_000_000)
    assert_same_as_numpy(values)
