"""Intervals of a mean over users: the t interval the Summary page, the verdict, a notebook's table
and the report show beside a mean (one method everywhere, so an interval and a call never
disagree), and the normal interval a run keeps, which the Spark engine computes from each
metric's sum and sum of squares."""

from __future__ import annotations

import numpy as np

LEVEL = 0.95
Z_95 = 1.959963984540054


def mean_interval(values: np.ndarray, level: float = LEVEL) -> tuple[float, float]:
    """The t interval of the mean of ``values`` (NaN bounds with fewer than two): the interval the
    Summary page shows beside each model's value, by the method of its verdict."""
    from scipy import stats

    values = np.asarray(values, dtype=np.float64)
    n = len(values)
    if n < 2:
        return float("nan"), float("nan")
    mean = float(values.mean())
    half = float(stats.t.ppf((1 + level) / 2, n - 1) * values.std(ddof=1, mean=mean) / np.sqrt(n))
    return mean - half, mean + half


def sd_of_sums(n, total, squares) -> np.ndarray:
    """The sample standard deviation of values known by their count ``n``, sum ``total`` and sum
    of squares, element by element: √(max(Σx² − (Σx)²/n, 0) / (n − 1)) (the maximum keeps rounding
    from a negative spread), NaN where n < 2: the SD a t or normal interval needs, at every k of a
    curve or from a Spark engine's partitions' sums.

    >>> sd_of_sums(np.array([3, 1]), np.array([6.0, 2.0]), np.array([14.0, 4.0])).tolist()
    [1.0, nan]
    """
    n, total, squares = np.broadcast_arrays(np.asarray(n, dtype=np.float64), total, squares)
    spread = np.maximum(squares - np.divide(total ** 2, n, out=np.zeros(n.shape), where=n > 0), 0.0)
    return np.sqrt(np.divide(spread, n - 1, out=np.full(n.shape, np.nan), where=n > 1))


def normal_interval(mean: float, sd: float, n: int, level: float = 0.95) -> tuple[float, float]:
    """mean ± z·sd/√n, the normal interval of a mean of ``n`` values (z = 1.96 at 95%)."""
    if level == 0.95:
        z = Z_95
    else:
        from scipy import stats

        z = float(stats.norm.ppf((1 + level) / 2))
    half = z * sd / np.sqrt(n)
    return float(mean - half), float(mean + half)
