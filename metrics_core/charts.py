"""The chart builders the app's pages, the report and a result's ``chart()`` share: plain functions from
frames to Altair charts. Each model keeps one colour everywhere (:func:`model_scale`)."""

from __future__ import annotations

import altair as alt
import pandas as pd

PALETTE = ["#4C78A8", "#F58518", "#54A24B", "#B279A2", "#E45756", "#72B7B2", "#EECA3B", "#9D755D"]


def model_scale(models: list[str]) -> alt.Scale:
    """One colour per model, the same on every page (order of the workspace's models)."""
    return alt.Scale(domain=list(models), range=[PALETTE[i % len(PALETTE)] for i in range(len(models))])


def metric_curves(curves: pd.DataFrame, metric_label: str, k: int, models: list[str]) -> alt.Chart:
    """``curves``: columns model, k, value. Lines per model with a rule at the chosen K."""
    base = alt.Chart(curves).encode(
        x=alt.X("k:Q", title="cut-off k"),
        y=alt.Y("value:Q", title=metric_label),
        color=alt.Color("model:N", scale=model_scale(models), title="model"),
        tooltip=[alt.Tooltip("model:N"), alt.Tooltip("k:Q"), alt.Tooltip("value:Q", format=".4f", title=metric_label)],
    )
    rule = alt.Chart(pd.DataFrame({"k": [k]})).mark_rule(strokeDash=[4, 4], color="#888").encode(x="k:Q")
    return (base.mark_line(point=alt.OverlayMarkDef(size=18)) + rule).properties(
        title=f"{metric_label} at every cut-off (dashed: K = {k})", height=320)


def points(frame: pd.DataFrame, metric_label: str, models: list[str]) -> alt.Chart:
    """``frame``: columns model, value. A point per model on an axis from 0, for a value with no
    interval (a metric over the catalog, not a mean over users)."""
    color = alt.Color("model:N", scale=model_scale(models), title="model", legend=None)
    return alt.Chart(frame).mark_point(filled=True, size=80).encode(
        x=alt.X("value:Q", title=metric_label, scale=alt.Scale(zero=True)), y=alt.Y("model:N", sort=models, title=None),
        color=color, tooltip=[alt.Tooltip("model:N"), alt.Tooltip("value:Q", format=".4f")],
    ).properties(title=f"{metric_label} (a value over the catalog: no interval)", height=alt.Step(34))


def intervals(frame: pd.DataFrame, metric_label: str, models: list[str], level: float = 0.95,
              method: str = "bootstrap interval") -> alt.LayerChart:
    """``frame``: columns model, value, ci_low, ci_high. A point per model with its interval
    (``method`` names it in the axis title)."""
    color = alt.Color("model:N", scale=model_scale(models), title="model", legend=None)
    y = alt.Y("model:N", sort=models, title=None)
    bars = alt.Chart(frame).mark_errorbar(ticks=True, thickness=2).encode(
        x=alt.X("ci_low:Q", title=f"{metric_label} ({level:.0%} {method})", scale=alt.Scale(zero=False)),
        x2="ci_high:Q", y=y, color=color,
    )
    points = alt.Chart(frame).mark_point(filled=True, size=80).encode(
        x=alt.X("value:Q", title=f"{metric_label} ({level:.0%} {method})"), y=y, color=color,
        tooltip=[alt.Tooltip("model:N"), alt.Tooltip("value:Q", format=".4f"),
                 alt.Tooltip("ci_low:Q", format=".4f", title="low"),
                 alt.Tooltip("ci_high:Q", format=".4f", title="high")],
    )
    return (bars + points).properties(title=f"{metric_label} with confidence intervals", height=alt.Step(34))
