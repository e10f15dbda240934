"""One model's aggregates at another K, read from an evaluation's curves instead of evaluated.

An evaluation with curves (``curves=True``, and ``beyond_curves=True`` for the beyond-accuracy
metrics) holds every accuracy metric with a curve and the covered beyond-accuracy metrics at
every k; the metrics over the whole list are the same at every K. :func:`read_at` gathers them
at a new K: no per-user table, so no per-user chart or paired test, but the numbers of the
Overview's cards, each with its users and a t interval where it is a mean of per-user values.
What it cannot read (``missing``: the accuracy metrics at K without a curve, the beyond-accuracy
metrics :mod:`metrics_core.metrics.beyond_curves` does not cover) needs an evaluation at K.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import pandas as pd

from metrics_core.cutoff_notes import notes_at
from metrics_core.errors import Note
from metrics_core.intervals import LEVEL
from metrics_core.metrics import registry
from metrics_core.result import Evaluation
from metrics_core.settings import Settings


@dataclass
class AtK:
    """The aggregates of ``model`` at ``settings.k`` read from another K's evaluation.

    metrics: name -> value, as the evaluation at this K gives it (to rounding).
    users, skipped, left_out: as the evaluation they were read from gives them (they do not
        depend on K), except the users with recommendations, read at this K.
    warnings: the notes at this K (:meth:`metrics_core.Dataset.warnings_at`).
    curves: the accuracy curves (the same at every K).
    missing: the evaluation's metrics that cannot be read at this K.
    """

    model: str
    settings: Settings
    metrics: dict[str, float]
    users: dict[str, int]
    curves: pd.DataFrame
    warnings: list[Note] | None = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    left_out: dict[str, int] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    metric_users: dict[str, int] = field(default_factory=dict)
    sd: dict[str, float] = field(default_factory=dict)

    @property
    def k(self) -> int:
        return self.settings.k

    def users_of(self, name: str) -> int:
        """The users behind ``name``: the evaluated users for accuracy metrics, those with a value
        for the other means of per-user values, else those with recommendations."""
        if registry.METRICS[name].family == "accuracy":
            return self.users["evaluated"]
        return self.metric_users.get(name, self.left_out.get("users_with_recommendations", 0))

    def interval(self, name: str, level: float = LEVEL) -> tuple[float, float] | None:
        """The t interval of a mean of per-user values (None for other metrics, or under two users)."""
        from scipy import stats

        n, sd = self.metric_users.get(name, 0), self.sd.get(name, math.nan)
        if n < 2 or math.isnan(sd):
            return None
        half = float(stats.t.ppf(0.5 + level / 2, n - 1)) * sd / math.sqrt(n)
        return self.metrics[name] - half, self.metrics[name] + half


def read_at(evaluation: Evaluation, k: int, warnings: list[Note] | None = None) -> AtK:
    """``evaluation``'s model at K = ``k``, read from its curves. ``warnings``: the notes at ``k``
    (:meth:`metrics_core.Dataset.warnings_at`); None: made from the counts the curves keep
    (:func:`metrics_core.cutoff_notes.notes_at`), and None in the result when they cannot be."""
    metrics: dict[str, float] = {}
    metric_users: dict[str, int] = {}
    sd: dict[str, float] = {}
    curves = evaluation.curves
    covered: set[str] = set()
    beyond: dict[str, float] = {}
    if evaluation.beyond_curves is not None and k in evaluation.beyond_curves.values.index:
        beyond, metric_users, sd = evaluation.beyond_curves.at(k)
        covered = set(evaluation.beyond_curves.values.columns)
    skipped = dict(evaluation.skipped)
    for name in evaluation.metrics:
        metric = registry.METRICS[name]
        if metric.family != "accuracy":
            if name in beyond:
                metrics[name] = beyond[name]
            elif name in covered:
                skipped[name] = f"has no value at K = {k} (no user has what it needs)"
        elif metric.whole_list:
            metrics[name] = evaluation.metrics[name]
        elif name in curves.columns and k in curves.index and not math.isnan(curves.at[k, name]):
            metrics[name] = float(curves.at[k, name])
        elif name in beyond:  # (expected exposure: beside the accuracy curves)
            metrics[name] = beyond[name]
    missing = [name for name in evaluation.metrics if name not in metrics and name not in skipped]
    if warnings is None and evaluation.beyond_curves is not None and evaluation.beyond_curves.notes is not None:
        warnings = notes_at(evaluation.warnings, evaluation.beyond_curves.notes, k, evaluation.encoding.tie_break)
    left_out = dict(evaluation.left_out)
    if evaluation.beyond_curves is not None and k in evaluation.beyond_curves.listed.index:
        left_out["users_with_recommendations"] = int(evaluation.beyond_curves.listed.loc[k])
    return AtK(evaluation.model, replace(evaluation.settings, k=k), metrics, dict(evaluation.users), curves,
               warnings, skipped, left_out, missing, metric_users, sd)


def filled(read: AtK, evaluated: Evaluation) -> AtK:
    """``read`` with what it misses taken from ``evaluated``, an evaluation at the same settings of
    those metrics alone (:meth:`metrics_core.Dataset.metrics_at` with ``read.missing``): their
    values, their users and SDs for the t intervals, the reasons of any skipped at this K."""
    columns = registry.per_user_columns()
    metrics, metric_users, sd = dict(read.metrics), dict(read.metric_users), dict(read.sd)
    for name, value in evaluated.metrics.items():
        metrics[name] = value
        values = evaluated.values_of(columns.get(name), name)
        if values is not None:
            metric_users[name] = len(values)
            sd[name] = float(values.std(ddof=1)) if len(values) > 1 else math.nan
    ordered = {name: metrics[name] for name in registry.names() if name in metrics}  # (registry order)
    return replace(read, metrics=ordered, skipped={**read.skipped, **evaluated.skipped},
                   missing=[name for name in read.missing if name not in metrics and name not in evaluated.skipped],
                   metric_users=metric_users, sd=sd)
