"""The t interval of a mean: the interval the Summary page, the verdict, a notebook's table and the
report show beside a mean over users (one method everywhere, so an interval and a call never
disagree)."""

from __future__ import annotations

import numpy as np

LEVEL = 0.95


def mean_interval(values: np.ndarray, level: float = LEVEL) -> tuple[float, float]:
    """The t interval of the mean of ``values`` (NaN bounds with fewer than two): the interval the
    Summary page shows beside each model's value, by the method of its verdict."""
    from scipy import stats

    values = np.asarray(values, dtype=np.float64)
    n = len(values)
    if n < 2:
        return float("nan"), float("nan")
    half = float(stats.t.ppf((1 + level) / 2, n - 1) * values.std(ddof=1) / np.sqrt(n))
    return float(values.mean() - half), float(values.mean() + half)
