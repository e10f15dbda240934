"""What an evaluation returns: aggregates, per-user values, curves, user counts, warnings.

:class:`Result` is the contract both engines keep (the memory engine's :class:`Evaluation`, the
Spark engine's :class:`~metrics_core.engines.spark.engine.SparkEvaluation`): the same names, the
same meaning, and the same JSON from :meth:`Result.to_dict`."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import pandas as pd

from metrics_core.errors import Note, input_error
from metrics_core.intervals import LEVEL, mean_interval
from metrics_core.jsonable import plain
from metrics_core.metrics import registry
from metrics_core.settings import Encoding, Settings

if TYPE_CHECKING:
    import numpy as np

    from metrics_core.metrics.beyond_curves import BeyondCurves


class Result(Protocol):
    """One model evaluated at one K, by either engine.

    settings: what it was evaluated at (``k`` is ``settings.k``).
    metrics: aggregate name -> value, in registry order.
    per_user: the per-user values (a pandas DataFrame in memory, a Spark DataFrame on Spark).
    curves: index k, one column per accuracy metric with a curve (None: not asked for).
    users: counts of evaluated users and of users left out or scored 0.
    warnings: problems with one sensible reading, each with a count, in the same order.
    skipped: metric -> why it could not be computed.
    """

    settings: Settings
    metrics: dict[str, float]
    per_user: object
    curves: pd.DataFrame | None
    users: dict[str, int]
    warnings: list[Note]
    skipped: dict[str, str]

    @property
    def k(self) -> int: ...

    def to_dict(self) -> dict: ...


@dataclass(repr=False)
class Evaluation:
    """One model evaluated at one K.

    metrics: aggregate name -> value (``map`` is the mean of per-user ``ap``, etc.).
    per_user: one row per averaged user (index: user id) with every per-user metric at K,
        plus ``relevant`` (R), ``hits`` (h(K)), ``listed`` (items in the top K) and
        ``evaluated`` (counted in the accuracy averages; accuracy columns are NaN otherwise).
    curves: index k = 1 .. max(K, longest list) (only k = K when evaluated with curves=False),
        one column per aggregate metric.
    users: counts of evaluated users and of users left out or scored 0, and why.
    warnings: problems with one sensible reading, each with a count.
    skipped: metric -> why it could not be computed.
    left_out: what beyond-accuracy metrics could not use, and how much of it.
    encoding: how the lists were ordered when the data was encoded.
    beyond_curves: the beyond-accuracy metrics at every k whose form allows it (None: not asked
        for; :mod:`metrics_core.metrics.beyond_curves`).
    """

    model: str
    settings: Settings
    metrics: dict[str, float]
    per_user: pd.DataFrame
    curves: pd.DataFrame
    users: dict[str, int]
    warnings: list[Note] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    left_out: dict[str, int] = field(default_factory=dict)
    encoding: Encoding = field(default_factory=Encoding)
    beyond_curves: BeyondCurves | None = None

    def __post_init__(self) -> None:
        self.metrics = registry.MetricValues(self.metrics)  # (a renamed metric's old name still reads)

    @property
    def k(self) -> int:
        return self.settings.k

    @property
    def share_without_hit(self) -> float:
        """Share of the evaluated users with no relevant item in the top K (1 - hit rate)."""
        return share_without_hit_in(self.per_user)

    def users_of(self, name: str) -> int:
        """The users behind metric ``name``: the evaluated users for accuracy metrics, those with a
        value for the other means of per-user values, else those with recommendations."""
        metric = registry.METRICS[name]
        if metric.family == "accuracy":
            return self.users["evaluated"]
        if metric.per_user and metric.per_user in self.per_user:
            return int(self.per_user[metric.per_user].notna().sum())
        return self.left_out.get("users_with_recommendations", 0)

    def to_frame(self, level: float = LEVEL) -> pd.DataFrame:
        """One row per metric (index: its key): its ``label`` at K, ``value``, the t interval of
        the mean over its users (``low``, ``high``: NaN for a metric that is not a mean of per-user
        values, such as coverage, or with fewer than two users) and ``users`` (the users behind it:
        the evaluated users for accuracy metrics, those with a value otherwise)."""
        columns = registry.per_user_columns()
        rows = []
        for name, value in self.metrics.items():
            values = self.values_of(columns.get(name), name)
            low, high = mean_interval(values, level) if values is not None else (float("nan"), float("nan"))
            rows.append({"metric": name, "label": registry.label(name, self.k), "value": value, "low": low,
                         "high": high, "users": len(values) if values is not None else None})
        return pd.DataFrame(rows).set_index("metric").astype({"users": "Int64"})

    def values_of(self, column: str | None, name: str) -> np.ndarray | None:
        """The values behind metric ``name`` from its per-user ``column`` (None: it has none): the
        evaluated users' for an accuracy metric, without the missing ones."""
        if column is None or column not in self.per_user.columns:
            return None
        values = self.per_user[column]
        if registry.METRICS[name].family == "accuracy":
            values = values[self.per_user["evaluated"].to_numpy(dtype=bool)]
        return values.dropna().to_numpy(dtype=float)

    def __repr__(self) -> str:
        """Plain text: the model, K, its users and its headline metrics (the per-user table and
        the curves are attributes: ``per_user``, ``curves``, ``to_frame()``)."""
        shown = ", ".join(f"{name}={self.metrics[name]:.4f}" for name in registry.ESSENTIAL if name in self.metrics)
        return (f"Evaluation(model={self.model!r}, k={self.k}, evaluated={self.users.get('evaluated', 0):,}, "
                f"{shown}, warnings={len(self.warnings)})")

    def _repr_html_(self) -> str:
        """HTML for a notebook: the headline metrics with their 95% intervals, then every metric
        (folded), the warnings and what was skipped; every name shown as text."""
        frame = self.to_frame()
        headline = [name for name in registry.ESSENTIAL if name in frame.index]

        def table(names: list[str]) -> str:
            cells = "".join(
                f"<tr><th style='text-align:left'>{html.escape(str(row.label))}</th><td>{number_text(row.value)}</td>"
                f"<td>{interval_text(row.low, row.high)}</td><td>{_count(row.users)}</td></tr>"
                for row in frame.loc[names].itertuples())
            return ("<table><thead><tr><th>metric</th><th>value</th><th>95% interval (t)</th><th>users</th></tr>"
                    f"</thead><tbody>{cells}</tbody></table>")

        notes = "".join(f"<li>{html.escape(note.message)}</li>" for note in self.warnings)
        skipped = "".join(f"<li>{html.escape(name)}: {html.escape(why)}</li>" for name, why in self.skipped.items())
        return (f"<div><p><b>{html.escape(self.model)}</b> at K = {self.k} · "
                f"{self.users.get('evaluated', 0):,} users evaluated</p>{table(headline)}"
                f"<details><summary>Every metric ({len(frame)})</summary>{table(list(frame.index))}</details>"
                + (f"<p>Warnings</p><ul>{notes}</ul>" if notes else "")
                + (f"<p>Skipped</p><ul>{skipped}</ul>" if skipped else "") + "</div>")

    def chart(self, kind: str = "curves", metric: str = "ndcg"):
        """The app's chart of ``metric`` as an Altair chart (``pip install 'rankscope[report]'``):
        ``"curves"``, its value at every cut-off with K marked (the Overview's chart; needs the
        curves of an evaluation with ``curves=True``); ``"interval"``, its mean with the t interval
        over users (the Summary's)."""
        charts = shared_charts()
        metric = registry.current_name(metric)
        if metric not in self.metrics and metric not in self.curves:
            raise input_error("chart", f"no metric {metric!r} in this evaluation.",
                              f"choose one of: {', '.join(self.metrics)}.")
        label = registry.METRICS[metric].label if metric in registry.METRICS else metric
        if kind == "curves":
            if metric not in self.curves.columns:
                raise input_error("chart", f"{metric} has no curve here.",
                                  "choose a metric with a curve (ndcg, recall, ...), evaluated with curves=True.")
            frame = self.curves[[metric]].rename(columns={metric: "value"}).assign(model=self.model).reset_index()
            return charts.metric_curves(frame, label, self.k, [self.model])
        if kind == "interval":
            row = self.to_frame().loc[metric]
            frame = pd.DataFrame({"model": [self.model], "value": [row["value"]], "ci_low": [row["low"]],
                                  "ci_high": [row["high"]]})
            return charts.intervals(frame, registry.label(metric, self.k), [self.model], LEVEL, "t interval")
        raise input_error("chart", f"no chart named {kind!r}.", 'choose "curves" or "interval".')

    def to_dict(self) -> dict:
        """The JSON shape of the command line: metrics, users, warnings, skipped."""
        out = {
            "metrics": plain(self.metrics),
            "users": dict(self.users),
            "warnings": [note.message for note in self.warnings],
        }
        if self.skipped:
            out["skipped"] = dict(self.skipped)
        if self.left_out:
            out["left_out"] = dict(self.left_out)
        return out


def shared_charts():
    """The chart builders the app and the report share (Altair: the report extra)."""
    try:
        from metrics_core import charts
    except ImportError:
        raise input_error("chart", "charts need Altair.", "pip install 'rankscope[report]'.") from None
    return charts


def number_text(value) -> str:
    """A metric's value as the notebook's tables show it (– when there is none)."""
    return "–" if value is None or pd.isna(value) else f"{value:.4f}"


def _count(users) -> str:
    return "" if users is None or pd.isna(users) else f"{int(users):,}"


def interval_text(low, high) -> str:
    """An interval as the notebook's tables show it (empty when there is none)."""
    return "" if pd.isna(low) else f"{low:.4f} to {high:.4f}"


def share_without_hit_in(per_user: pd.DataFrame) -> float:
    """Share of the evaluated users of a per-user table (its ``evaluated`` and ``hits`` columns)
    with no relevant item in the top K: 1 - hit rate, 0 without an evaluated user."""
    evaluated = per_user.loc[per_user["evaluated"].to_numpy(dtype=bool), "hits"]
    return float((evaluated == 0).mean()) if len(evaluated) else 0.0
