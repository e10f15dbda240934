"""The Poisson bootstrap of the Spark engine: its weights are Poisson(1), a function of the user,
the resample and the seed only; partial sums add up; its intervals cover as a 95% interval
should and agree with the in-memory (multinomial) bootstrap."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from metrics_core.stats import poisson_bootstrap as pb
from metrics_core.stats.compare import bootstrap_means

MASK = (1 << 64) - 1


def slow_mix(x: int) -> int:
    """splitmix64's finaliser on Python integers."""
    x = (x + 0x9E3779B97F4A7C15) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def slow_weight(key: int, resample: int, seed: int) -> int:
    """One weight, the obvious way: the resample's stream, the user's hash, then the Poisson(1)
    quantile at the middle of the hash's slice of [0, 1)."""
    stream = slow_mix((seed * 0x9E3779B97F4A7C15 + resample) & MASK)
    top = slow_mix(key ^ stream) >> 48
    return int(stats.poisson.ppf((top + 0.5) / 65536, 1.0))


def test_weights_equal_the_obvious_computation():
    keys = pb.user_keys(["u1", "u2", 7, "7", "é"])
    assert keys[2] == keys[3]  # ids are read as text
    weights = pb.poisson_weights(keys, 3, 5, seed=11)
    expected = [[slow_weight(int(key), b, 11) for key in keys] for b in range(3, 8)]
    np.testing.assert_array_equal(weights, expected)


def test_weights_are_poisson_one_and_independent():
    weights = pb.poisson_weights(pb.user_keys(np.arange(20_000)), 0, 50, seed=0)
    counts = np.bincount(weights.astype(int).ravel(), minlength=8)
    expected = stats.poisson.pmf(np.arange(8), 1.0)
    expected[-1] += stats.poisson.sf(7, 1.0)
    counts[7] = counts[7:].sum()
    assert stats.chisquare(counts[:8], expected * weights.size).pvalue > 1e-3
    correlations = np.corrcoef(weights)[np.triu_indices(50, 1)]  # between resamples
    assert np.abs(correlations).max() < 0.04  # 4.5 standard errors of 1/sqrt(20000)
    assert abs(np.corrcoef(weights[:, :-1].ravel(), weights[:, 1:].ravel())[0, 1]) < 0.01  # neighbouring users


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 60), st.lists(st.integers(0, 59), min_size=1, max_size=5), st.integers(0, 2**32))
def test_partial_sums_add_up_to_the_whole(users, cuts, seed):
    """However the users are split (and in whatever order), the sums are the same."""
    rng = np.random.default_rng(seed)
    values = rng.random((users, 3))
    present = rng.random((users, 3)) < 0.8
    keys = pb.user_keys(rng.permutation(users * 3)[:users])
    whole = pb.weighted_sums(values, present, keys, 17, seed)
    order = rng.permutation(users)
    parts = [pb.weighted_sums(values[p], present[p], keys[p], 17, seed)
             for p in np.split(order, sorted({c % users for c in cuts}))]
    for i in range(2):
        np.testing.assert_allclose(sum(part[i] for part in parts), whole[i], atol=1e-9)


def test_intervals_cover_the_mean_as_a_95_percent_interval():
    rng = np.random.default_rng(3)
    covered = 0
    for trial in range(300):
        values = rng.exponential(1.0, (400, 1))  # skewed, true mean 1
        keys = pb.user_keys(np.arange(400) + 400 * trial)
        (low, high), = pb.intervals(*pb.weighted_sums(values, np.ones_like(values, bool), keys, 200, trial))
        covered += low <= 1.0 <= high
    assert 0.91 <= covered / 300 <= 0.98


def test_intervals_agree_with_the_in_memory_bootstrap():
    values = np.random.default_rng(5).random((5_000, 2))
    values[::3, 1] = np.nan  # a metric some users have no value of
    present = ~np.isnan(values)
    poisson = pb.intervals(*pb.weighted_sums(values, present, pb.user_keys(np.arange(5_000)), 1_000, 0))
    multinomial = bootstrap_means(values, 1_000, 0)
    width = multinomial[:, 1] - multinomial[:, 0]
    np.testing.assert_allclose(poisson, multinomial, atol=0.1 * width.max())
    assert (poisson[:, 0] < np.nanmean(values, axis=0)).all() and (np.nanmean(values, axis=0) < poisson[:, 1]).all()


def test_a_metric_without_values_has_no_interval():
    values = np.array([[1.0, np.nan], [0.0, np.nan]])
    bounds = pb.intervals(*pb.weighted_sums(values, ~np.isnan(values), pb.user_keys([1, 2]), 50, 0))
    assert np.isnan(bounds[1]).all() and bounds[0, 0] <= bounds[0, 1]
    assert pb.intervals(np.zeros((0, 1)), np.zeros((0, 1))) == pytest.approx(np.full((1, 2), np.nan), nan_ok=True)
