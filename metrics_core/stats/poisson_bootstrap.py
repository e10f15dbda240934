"""The Poisson bootstrap: intervals of per-user means that can be computed one partition at a time.

The ordinary bootstrap draws n users with replacement, which needs every user in one place. The
Poisson bootstrap instead gives each user, in each resample b, an independent weight
w_ub ~ Poisson(1) (the limit of the multinomial counts as n grows), so a resample's mean is

    mean_b = Σ_u w_ub · v_u / Σ_u w_ub · [v_u present]

and both sums add up over partitions. The weight of a user depends only on a hash of the user's
id, the resample and the seed (never on the partition, the row order or the thread), so the same
data and seed give the same intervals however Spark splits it. The interval is the percentile
interval of mean_b over the resamples, as :func:`metrics_core.stats.compare.bootstrap_means`.

Edge cases: a metric with no present value in a resample has a NaN mean there, left out of the
percentiles; a metric with none in any resample has a NaN interval.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from metrics_core.inputs.jit import numba
from metrics_core.stats.compare import percentile_interval

GOLDEN, MIX_1, MIX_2 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
QUANTILE_BITS = 16
# Poisson(1)'s quantile at the middle of each of 2^16 equal slices of [0, 1): a weight is the
# entry the top 16 bits of its hash pick, so each P(W = w) is within 2^-16 of Poisson(1)'s.
SLICES = 1 << QUANTILE_BITS
POISSON_QUANTILES = stats.poisson.ppf((np.arange(SLICES) + 0.5) / SLICES, 1.0).astype(np.uint8)
TOP = np.uint64(64 - QUANTILE_BITS)  # the shift that keeps a hash's top QUANTILE_BITS bits
BATCH_CELLS = 4_000_000  # users x resamples drawn at once


def user_keys(ids) -> np.ndarray:
    """A stable 64-bit hash of each user id, read as text (so 7 and "7" are one user, as in the
    per-user tables of the Spark engine)."""
    return pd.util.hash_array(np.asarray(pd.Index(ids).astype(str), dtype=object))


def poisson_weights(keys: np.ndarray, first: int, count: int, seed: int) -> np.ndarray:
    """Resamples ``first`` to ``first + count - 1``: a (count x users) array of Poisson(1)
    weights, each a function of the user's key, the resample and the seed only."""
    keys = np.ascontiguousarray(keys, dtype=np.uint64)
    return _weight_rows(keys, np.uint64(seed), first, np.empty((count, len(keys))))


@numba.njit(cache=True, nogil=True)
def _weight_rows(keys, seed, first, out):
    """``out[b, u]``: the weight of user ``u`` in resample ``first + b``, Poisson(1)'s quantile
    at the top bits of mix(key ^ stream), the resample's stream being mix(seed·golden + resample).
    One pass (numpy needs a temporary array for each step of the mix)."""
    for b in range(out.shape[0]):
        stream = _mix(seed * GOLDEN + np.uint64(first + b))
        for u in range(keys.shape[0]):
            out[b, u] = POISSON_QUANTILES[_mix(keys[u] ^ stream) >> TOP]
    return out


def weighted_sums(values: np.ndarray, present: np.ndarray, keys: np.ndarray, resamples: int,
                  seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Σ_u w_ub · v_u and Σ_u w_ub over the present cells of each column of ``values``
    (users x columns), for every resample b: two (resamples x columns) arrays."""
    filled = np.where(present, values, 0.0)
    mask = present.astype(np.float64)
    sums = np.zeros((resamples, values.shape[1]))
    counts = np.zeros((resamples, values.shape[1]))
    batch = max(1, BATCH_CELLS // max(1, len(keys)))
    for first in range(0, resamples, batch):
        weights = poisson_weights(keys, first, min(batch, resamples - first), seed)
        sums[first:first + len(weights)] = weights @ filled
        counts[first:first + len(weights)] = weights @ mask
    return sums, counts


def intervals(sums: np.ndarray, counts: np.ndarray, level: float = 0.95) -> np.ndarray:
    """The percentile interval of each column's resampled means, from the sums over all
    partitions (columns x 2)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums / np.where(counts > 0, counts, 1.0), np.nan)
    bounds = np.full((means.shape[1], 2), np.nan)
    some = ~np.isnan(means).all(axis=0)
    if some.any():
        bounds[some] = percentile_interval(means[:, some], level)
    return bounds


@numba.njit(cache=True, nogil=True)
def _mix(x):
    """splitmix64's finaliser: a bijection of 64-bit integers whose outputs look independent."""
    x += GOLDEN
    x = (x ^ (x >> np.uint64(30))) * MIX_1
    x = (x ^ (x >> np.uint64(27))) * MIX_2
    return x ^ (x >> np.uint64(31))


def compile_all() -> None:
    """Compile (or load from numba's cache) the weights' loop (``make`` does it at install)."""
    poisson_weights(np.zeros(1, np.uint64), 0, 1, 0)
