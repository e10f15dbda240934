"""Chart builders: plain functions from frames to Altair charts (testable without a browser).

Every chart has a title, axis titles and tooltips, and each model keeps one colour
everywhere (:func:`model_scale`).
"""

from __future__ import annotations

import altair as alt
import pandas as pd

PALETTE = ["#4C78A8", "#F58518", "#54A24B", "#B279A2", "#E45756", "#72B7B2", "#EECA3B", "#9D755D"]
GROUP_COLORS = ["#4C78A8", "#BAB0AC"]


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


def distribution(values: pd.DataFrame, metric_label: str, models: list[str], by: str | None = None) -> alt.VConcatChart:
    """``values``: columns model, value (and ``by`` for slices). Histogram plus box plot."""
    color = alt.Color("model:N", scale=model_scale(models), title="model")
    hist = alt.Chart(values).mark_bar(opacity=0.75, binSpacing=0).encode(
        x=alt.X("value:Q", bin=alt.Bin(maxbins=30), title=metric_label),
        y=alt.Y("count():Q", stack=None, title="users"),
        color=color,
        tooltip=[alt.Tooltip("model:N"), alt.Tooltip("count():Q", title="users")],
    ).properties(title=f"Per-user {metric_label}", height=240)
    row = alt.Y(f"{by}:N", title=by) if by else alt.Y("model:N", title=None)
    box = alt.Chart(values).mark_boxplot(extent=1.5, size=14).encode(
        x=alt.X("value:Q", title=metric_label), y=row, color=color,
        yOffset="model:N" if by else alt.value(0),
    ).properties(title=f"Spread of {metric_label}" + (f" by {by}" if by else ""), height=alt.Step(28))
    return alt.vconcat(hist, box).resolve_scale(color="shared")


def long_tail(frame: pd.DataFrame, models: list[str]) -> alt.LayerChart:
    """``frame``: columns popularity_rank, training, model, recommended (per item)."""
    bars = alt.Chart(frame.drop_duplicates("popularity_rank")).mark_area(color="#BAB0AC", opacity=0.5).encode(
        x=alt.X("popularity_rank:Q", title="items by training popularity (rank 1 = most popular)"),
        y=alt.Y("training:Q", title="interactions / recommendations"),
        tooltip=[alt.Tooltip("popularity_rank:Q", title="popularity rank"), alt.Tooltip("training:Q")],
    )
    lines = alt.Chart(frame).mark_line(interpolate="step-after", strokeWidth=1.5).encode(
        x="popularity_rank:Q", y="recommended:Q",
        color=alt.Color("model:N", scale=model_scale(models), title="model"),
        tooltip=[alt.Tooltip("model:N"), alt.Tooltip("popularity_rank:Q", title="popularity rank"),
                 alt.Tooltip("recommended:Q", title="times recommended")],
    )
    return (bars + lines).properties(
        title="Long tail: training interactions (grey) and how often each item is recommended", height=320)


def bias(distribution_frame: pd.DataFrame, attribute: str, title: str) -> alt.Chart:
    """``distribution_frame``: columns value, group, share (from metrics_core.bias)."""
    groups = list(dict.fromkeys(distribution_frame["group"]))
    numeric = "bin_start" in distribution_frame.columns and distribution_frame["bin_start"].notna().any()
    order = list(dict.fromkeys(distribution_frame.sort_values("bin_start")["value"])) if numeric else None
    return alt.Chart(distribution_frame).mark_bar().encode(
        x=alt.X("value:N", title=attribute, sort=order if numeric else "-y"),
        xOffset=alt.XOffset("group:N", sort=groups),
        y=alt.Y("share:Q", title="share", axis=alt.Axis(format="%")),
        color=alt.Color("group:N", scale=alt.Scale(domain=groups, range=GROUP_COLORS), title=None),
        tooltip=[alt.Tooltip("value:N", title=attribute), alt.Tooltip("group:N"),
                 alt.Tooltip("share:Q", format=".1%")],
    ).properties(title=title, height=300)


def score_histograms(frame: pd.DataFrame, models: list[str]) -> alt.FacetChart:
    """``frame``: columns model, part, bin_start, bin_end, share (one histogram per model)."""
    return alt.Chart(frame).mark_bar(opacity=0.7, binSpacing=0).encode(
        x=alt.X("bin_start:Q", bin="binned", title="score"),
        x2="bin_end:Q",
        y=alt.Y("share:Q", stack=None, title="share of scores", axis=alt.Axis(format="%")),
        color=alt.Color("part:N", title=None, scale=alt.Scale(range=["#4C78A8", "#BAB0AC"])),
        tooltip=[alt.Tooltip("model:N"), alt.Tooltip("part:N"), alt.Tooltip("bin_start:Q", format=".3g", title="from"),
                 alt.Tooltip("bin_end:Q", format=".3g", title="to"), alt.Tooltip("share:Q", format=".1%")],
    ).properties(height=200, width=260).facet(
        column=alt.Column("model:N", sort=models, title=None)).properties(
        title="Scores in the top K and in the rest of each list").resolve_scale(x="independent")


def scatter(frame: pd.DataFrame, a: str, b: str, metric_label: str) -> alt.LayerChart:
    """``frame``: one row per user with columns ``a`` and ``b`` (the two models' values)."""
    points = alt.Chart(frame).mark_circle(size=40, opacity=0.45, color=PALETTE[0]).encode(
        x=alt.X(f"{a}:Q", title=f"{metric_label}: {a}"),
        y=alt.Y(f"{b}:Q", title=f"{metric_label}: {b}"),
        tooltip=[alt.Tooltip("user:N"), alt.Tooltip(f"{a}:Q", format=".4f"), alt.Tooltip(f"{b}:Q", format=".4f")],
    )
    low = float(min(frame[a].min(), frame[b].min()))
    high = float(max(frame[a].max(), frame[b].max()))
    diagonal = alt.Chart(pd.DataFrame({"x": [low, high], "y": [low, high]})).mark_line(
        strokeDash=[4, 4], color="#888").encode(x="x:Q", y="y:Q")
    return (diagonal + points).properties(
        title=f"Per-user {metric_label}: {b} against {a} (above the line: {b} is better)", height=380)
