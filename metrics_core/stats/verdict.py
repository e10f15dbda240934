"""Which model wins on a metric, in plain words, with one method for the interval and the call.

For a metric that is a mean of per-user values, the models are compared over the users that
every model has a value for (paired: accuracy metrics over the evaluated users). The leader is the
model with the best mean there (the highest, or the lowest for a metric where lower is better).
Against each other model, the per-user differences d_u = leader − other have mean Δ and the
paired t interval

    Δ ± t(n − 1, (1 + level) / 2) · sd(d) / √n

and the difference is called **real** when that interval excludes 0, which is exactly when the
paired t-test's two-sided p is below 1 − level: the interval and the call can never disagree
(the Compare page's Wilcoxon test and percentile bootstrap answer other questions, and say so).
Otherwise the two models have **no detectable difference**.

Edge cases: one model, or a metric where neither direction is better (ARP, score entropy): no
leader, and the sentence says why. Fewer than two paired users: no interval, "too few users".
Every user differing by the same amount (sd = 0): the interval is that amount, real unless 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from metrics_core.intervals import LEVEL, mean_interval
from metrics_core.metrics import registry
from metrics_core.result import Evaluation
from metrics_core.stats.compare import paired_arrays

SUMMARY_METRICS = ("ndcg", "recall", "precision", "map", "coverage", "novelty")  # what a stakeholder reads first
LEAD_METRIC = SUMMARY_METRICS[0]  # the one the report's curves, cases and headline verdict follow


@dataclass(frozen=True)
class Difference:
    """The leader against one other model: Δ = leader − other over ``users`` paired users, its
    interval, and whether the interval excludes 0."""

    other: str
    delta: float
    low: float
    high: float
    users: int

    @property
    def real(self) -> bool:
        return bool(self.low > 0 or self.high < 0)


@dataclass(frozen=True)
class Verdict:
    """The call on one metric at K: the leader (None when there is none to name, ``reason`` says
    why), its difference from every other model, and the mean of every model over the paired users."""

    metric: str
    label: str
    k: int
    level: float
    leader: str | None
    differences: tuple[Difference, ...]
    means: dict[str, float]
    users: int
    reason: str = ""

    def sentence(self) -> str:
        """The call in plain words, naming the method ("svd is best on NDCG@10: +0.0081 over
        popular (95% CI +0.0030 to +0.0131), a real difference; …")."""
        if self.leader is None:
            return self.reason
        lower = registry.METRICS[self.metric].higher_is_better is False
        def span(d: Difference) -> str:
            return f"{self.level:.0%} CI {d.low:+.4f} to {d.high:+.4f}"

        parts = [f"{d.delta:+.4f} over {d.other} ({span(d)}), a real difference" for d in self.differences if d.real]
        unclear = [f"{d.other} ({d.delta:+.4f}, {span(d)})" for d in self.differences if not d.real]
        if unclear:
            listed = unclear[0] if len(unclear) == 1 else ", ".join(unclear[:-1]) + " or " + unclear[-1]
            parts.append(f"no detectable difference from {listed}")
        head = f"{self.leader} is best on {self.label}" if all(d.real for d in self.differences) else \
            f"{self.leader} has the {'lowest' if lower else 'highest'} {self.label}"
        return (f"{head}{' (lower is better)' if lower else ''}: {'; '.join(parts)}. Paired t intervals over the "
                f"{self.users:,} users every model has a value for.")


def verdict(results: dict[str, Evaluation], metric: str, level: float = LEVEL) -> Verdict:
    """The leader on ``metric`` and its difference from every other model (see the module)."""
    models = list(results)
    k = next(iter(results.values())).k
    summary = registry.METRICS[metric]
    label = registry.label(metric, k)
    if summary.higher_is_better is None:
        return Verdict(metric, label, k, level, None, (), {}, 0,
                       f"Neither a higher nor a lower {label} is better, so no model is called best on it.")
    paired = paired_arrays(results, metric, models)
    users = len(paired[models[0]])
    means = {model: float(paired[model].mean()) if users else float("nan") for model in models}
    if len(models) < 2:
        return Verdict(metric, label, k, level, None, (), means, users,
                       f"Only {models[0]} is loaded: there is no other model to compare on {label}.")
    if users < 2:
        return Verdict(metric, label, k, level, None, (), means, users,
                       f"Too few users have {label} in every model ({users}) to tell the models apart.")
    sign = 1.0 if summary.higher_is_better else -1.0
    leader = max(models, key=lambda model: sign * means[model])
    differences = tuple(_difference(paired[leader], paired[other], other, level)
                        for other in sorted((m for m in models if m != leader), key=lambda m: -sign * means[m]))
    return Verdict(metric, label, k, level, leader, differences, means, users)


def _difference(leader: np.ndarray, other: np.ndarray, name: str, level: float) -> Difference:
    d = np.subtract(leader, other, dtype=np.float64)
    low, high = mean_interval(d, level)
    return Difference(name, float(d.mean()), low, high, len(d))


def half_width(result: Evaluation, metric: str, level: float = LEVEL) -> float | None:
    """The half-width of the t interval of ``result``'s mean of ``metric`` over its users (the
    evaluated users for accuracy metrics, users with a value otherwise); None for a metric that is
    not a mean of per-user values, or with fewer than two users."""
    column = registry.per_user_columns().get(metric)
    if column is None or column not in result.per_user.columns:
        return None
    low, high = mean_interval(paired_arrays({result.model: result}, metric, [result.model])[result.model], level)
    return None if np.isnan(low) else (high - low) / 2
