"""Who is served: a per-user metric by user group (activity, or any user attribute), and how far
apart the groups are.

The gap is the largest group mean minus the smallest; the spread is the mean absolute deviation
of the group means around their own mean (every group weighing the same, however many users it
has). Their intervals come from resampling users within each group (a stratified bootstrap: every
group keeps its size), each group's resampled means drawn as :func:`~metrics_core.stats.compare.resampled_means`
draws them (users drawn with replacement up to 100,000 users in the group, the normal limit above).
A group without a value is left out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from metrics_core.errors import input_error
from metrics_core.intervals import LEVEL, mean_interval
from metrics_core.stats.compare import percentile_interval, resampled_means
from metrics_core.stats.segments import UNKNOWN, natural_order


@dataclass(frozen=True)
class Served:
    """``groups``: one row per group (index: the group, in its natural order where it has one):
    ``users``, ``mean`` and its t interval ``low``, ``high``. ``gap`` and ``spread`` with their
    bootstrap intervals (``gap_low`` …), ``level`` and ``resamples``."""

    groups: pd.DataFrame
    gap: float
    gap_low: float
    gap_high: float
    spread: float
    spread_low: float
    spread_high: float
    level: float
    resamples: int

    def sentence(self, metric_label: str) -> str:
        """The gap in words, with its interval."""
        if len(self.groups) < 2:
            return f"Only one group has {metric_label}: there is no gap to measure."
        best, worst = self.groups["mean"].idxmax(), self.groups["mean"].idxmin()
        return (f"{metric_label} is {self.gap:.4f} higher for {best} than for {worst} ({self.level:.0%} interval "
                f"{self.gap_low:.4f} to {self.gap_high:.4f}); the group means lie {self.spread:.4f} from their "
                f"mean on average.")


def served(values: pd.Series, groups: pd.Series, resamples: int = 1000, seed: int = 0,
           level: float = LEVEL) -> Served:
    """How a per-user metric (``values``, indexed by user id; NaN: no value) differs between the
    user ``groups`` (a group per user id; users it does not name are in ``(unknown)``).

    >>> values = pd.Series([0.0, 0.2, 0.5, 0.7], index=[1, 2, 3, 4])
    >>> result = served(values, pd.Series(["a", "a", "b", "b"], index=[1, 2, 3, 4]), resamples=200)
    >>> round(result.gap, 4), round(result.spread, 4), result.groups["users"].tolist()
    (0.5, 0.25, [2, 2])
    """
    if resamples < 1:
        raise input_error("served", f"resamples = {resamples!r}.", "give at least 1 resample, e.g. 1000.")
    present = values.dropna()
    labels = groups.reindex(present.index).fillna(UNKNOWN).astype(str).to_numpy()
    numbers = present.to_numpy(dtype=np.float64)
    names = natural_order(np.unique(labels)) or sorted(np.unique(labels).tolist())
    rows, draws = [], []
    for number, name in enumerate(names):
        mine = numbers[labels == name]
        low, high = mean_interval(mine, level) if len(mine) > 1 else (np.nan, np.nan)
        rows.append({"group": name, "users": len(mine), "mean": float(mine.mean()), "low": low, "high": high})
        draws.append(resampled_means(mine[:, None], resamples, seed + number)[:, 0])
    table = pd.DataFrame(rows, columns=["group", "users", "mean", "low", "high"]).set_index("group")
    if not len(table):
        raise input_error("served", "no user has a value of this metric.", "choose a metric the users have.")
    means = table["mean"].to_numpy()
    resampled = np.column_stack(draws)
    gap_samples = resampled.max(axis=1) - resampled.min(axis=1)
    spread_samples = np.abs(resampled - resampled.mean(axis=1, keepdims=True)).mean(axis=1)
    (gap_low, gap_high), (spread_low, spread_high) = percentile_interval(
        np.column_stack([gap_samples, spread_samples]), level)
    return Served(table, float(means.max() - means.min()), float(gap_low), float(gap_high),
                  float(np.abs(means - means.mean()).mean()), float(spread_low), float(spread_high), level, resamples)
