"""Chart builders: plain functions from frames to Altair charts (testable without a browser).

Every chart has a title, axis titles and tooltips, and each model keeps one colour
everywhere (:func:`model_scale`).
"""

from __future__ import annotations

import math

import altair as alt
import pandas as pd

from dashboard.summaries import BINS, boxes, histogram, sample
from metrics_core._numeric.parallel import meanwhile
from metrics_core.charts import PALETTE, intervals, metric_curves, model_scale
from metrics_core.stats.segments import natural_order

__all__ = ["bias", "distribution", "history", "intervals", "long_tail", "metric_curves", "model_scale",
           "overlap_matrix", "scatter", "score_histograms", "segment_deltas"]

GROUP_COLORS = ["#4C78A8", "#BAB0AC"]


SEGMENT = "segment"


def distribution(values: pd.DataFrame, metric_label: str, models: list[str], by: str | None = None,
                 bins: int = BINS) -> alt.VConcatChart:
    """``values``: columns model, value (and ``by`` for slices), one row per user. Side-by-side
    histogram bars (one per value for a metric that takes few values, else shared bins; one colour
    per model) above a box plot per model (and slice), both summarised on the server
    (:mod:`dashboard.summaries`): the chart holds a few hundred rows whatever the number of users.
    Names that come from the data (models, ``by``) are values or titles, never field names:
    Vega-Lite reads "a:b" as a field and its type and "a.b" as a nested field."""
    if by:
        values = values.rename(columns={by: SEGMENT})
    groups = ["model", SEGMENT] if by else ["model"]
    boxed = meanwhile(lambda: boxes(values, groups))  # (beside the histogram: 4M users' boxes and bars
    # took 0.16 s one after the other, 0.1 s side by side)
    color = alt.Color("model:N", scale=model_scale(models), title="model")
    binned = histogram(values, bins)
    order = list(dict.fromkeys(binned["bin"]))
    hist = alt.Chart(binned).mark_bar().encode(
        x=alt.X("bin:N", sort=order, title=metric_label, axis=alt.Axis(labelAngle=-40)),
        xOffset=alt.XOffset("model:N", sort=models),
        y=alt.Y("share:Q", title="share of users", axis=alt.Axis(format="%")),
        color=color,
        tooltip=[alt.Tooltip("model:N"), alt.Tooltip("bin:N", title=metric_label), alt.Tooltip("users:Q"),
                 alt.Tooltip("share:Q", format=".1%")],
    ).properties(title=f"Per-user {metric_label}", height=260)
    summary = boxed.result()
    if by:
        summary[SEGMENT] = summary[SEGMENT].astype(str)
    row = alt.Y(f"{SEGMENT}:N", title=by, sort=natural_order(summary[SEGMENT].unique()) or "ascending") if by else \
        alt.Y("model:N", title=None, sort=models)
    offset = {"yOffset": alt.YOffset("model:N", sort=models)} if by else {}
    tips = [alt.Tooltip("model:N"), *([alt.Tooltip(f"{SEGMENT}:N", title=by)] if by else []),
            *[alt.Tooltip(f"{c}:Q", format=".4g") for c in ("minimum", "low", "q1", "median", "q3", "high",
                                                             "maximum")], alt.Tooltip("users:Q")]
    lowest, highest = float(summary["minimum"].min()), float(summary["maximum"].max())
    x_scale = alt.Scale(domain=[lowest, highest if highest > lowest else lowest + 1.0])  # (the extremes in view)
    base = alt.Chart(summary).encode(y=row, color=color, tooltip=tips, **offset)
    whiskers = base.mark_rule().encode(x=alt.X("low:Q", title=metric_label, scale=x_scale), x2="high:Q")
    box = base.mark_bar(size=12).encode(x=alt.X("q1:Q", title=metric_label, scale=x_scale), x2="q3:Q")
    median = base.mark_tick(color="white", size=12, thickness=2).encode(
        x=alt.X("median:Q", title=metric_label, scale=x_scale))
    beyond = [base.mark_point(size=30).encode(x=alt.X(f"{extreme}:Q", title=metric_label, scale=x_scale))
              .transform_filter(f"datum.{extreme} {side} datum.{whisker}")
              for extreme, side, whisker in (("minimum", "<", "low"), ("maximum", ">", "high"))]
    spread = alt.layer(whiskers, box, median, *beyond).properties(
        title=f"Spread of {metric_label}" + (f" by {by}" if by else "")
        + " (box: quartiles; whiskers: 1.5 IQR; points: the lowest and highest user beyond them)",
        height=alt.Step(36 if by else 24))
    return alt.vconcat(hist, spread).resolve_scale(color="shared")


def long_tail(frame: pd.DataFrame, models: list[str]) -> alt.LayerChart:
    """``frame``: columns bucket (items grouped by training popularity, most popular first),
    training and recommended (mean per item in the bucket), model. The log axis is ticked at 0 and
    every power of ten up to the largest value (its own ticks were 0 and 150)."""
    y_scale = alt.Scale(type="symlog")
    highest = max(float(frame[["training", "recommended"]].max().max()), 1.0)
    ticks = [0, *(10 ** power for power in range(math.ceil(math.log10(highest)) + 1))]  # (0, 1, 10, 100, …)
    y_axis = alt.Axis(values=ticks, format=",d", labelOverlap="greedy")  # ("~s" wrote 100 as "0k"; parity hid 100)
    area = alt.Chart(frame.drop_duplicates("bucket")).mark_area(color="#BAB0AC", opacity=0.45).encode(
        x=alt.X("bucket:Q", title="items by training popularity (percentile, most popular first)"),
        y=alt.Y("training:Q", scale=y_scale, axis=y_axis, title="per item (log scale)"),
        tooltip=[alt.Tooltip("bucket:Q", title="popularity percentile"),
                 alt.Tooltip("training:Q", format=".1f", title="training interactions")],
    )
    lines = alt.Chart(frame).mark_line(point=alt.OverlayMarkDef(size=16), strokeWidth=2).encode(
        x=alt.X("bucket:Q", title="items by training popularity (percentile, most popular first)"),
        y=alt.Y("recommended:Q", scale=y_scale, axis=y_axis, title="per item (log scale)"),
        color=alt.Color("model:N", scale=model_scale(models), title="model"),
        tooltip=[alt.Tooltip("model:N"), alt.Tooltip("bucket:Q", title="popularity percentile"),
                 alt.Tooltip("recommended:Q", format=".1f", title="times recommended")],
    )
    return (area + lines).properties(
        title="Long tail: training interactions (grey) and recommendations (lines) per item", height=320)


def bias(distribution_frame: pd.DataFrame, attribute: str, title: str) -> alt.Chart:
    """``distribution_frame``: columns value, group, share (from metrics_core.metrics.bias). A
    text attribute with more than :data:`BIAS_VALUES` values shows the values with the largest
    shares and one bar for the rest ("(N other values)")."""
    groups = list(dict.fromkeys(distribution_frame["group"]))
    numeric = "bin_start" in distribution_frame.columns and distribution_frame["bin_start"].notna().any()
    if not numeric and distribution_frame["value"].nunique() > BIAS_VALUES:
        distribution_frame = _top_values(distribution_frame, BIAS_VALUES)
    order = list(dict.fromkeys(distribution_frame.sort_values("bin_start")["value"])) if numeric else None
    return alt.Chart(distribution_frame).mark_bar().encode(
        x=alt.X("value:N", title=attribute, sort=order if numeric else "-y"),
        xOffset=alt.XOffset("group:N", sort=groups),
        y=alt.Y("share:Q", title="share", axis=alt.Axis(format="%")),
        color=alt.Color("group:N", scale=alt.Scale(domain=groups, range=GROUP_COLORS), title=None),
        tooltip=[alt.Tooltip("value:N", title=attribute), alt.Tooltip("group:N"),
                 alt.Tooltip("share:Q", format=".1%")],
    ).properties(title=title, height=300)


FACETS_PER_ROW = 3  # panels of 260 px: three fit the main column beside the sidebar at 1440 px


def score_histograms(frame: pd.DataFrame, models: list[str]) -> alt.FacetChart:
    """``frame``: columns model, part, bin_start, bin_end, share (one histogram per model, at most
    :data:`FACETS_PER_ROW` to a row: more models wrap onto further rows)."""
    return alt.Chart(frame).mark_bar(opacity=0.7, binSpacing=0).encode(
        x=alt.X("bin_start:Q", bin="binned", title="score"),
        x2="bin_end:Q",
        y=alt.Y("share:Q", stack=None, title="share of scores", axis=alt.Axis(format="%")),
        color=alt.Color("part:N", title=None, sort="descending",
                        scale=alt.Scale(range=["#4C78A8", "#BAB0AC"])),
        tooltip=[alt.Tooltip("model:N"), alt.Tooltip("part:N"), alt.Tooltip("bin_start:Q", format=".3g", title="from"),
                 alt.Tooltip("bin_end:Q", format=".3g", title="to"), alt.Tooltip("share:Q", format=".1%")],
    ).properties(height=200, width=260).facet(
        facet=alt.Facet("model:N", sort=models, title=None), columns=min(FACETS_PER_ROW, len(models))).properties(
        title="Scores in the top K and in the rest of each list").resolve_scale(x="independent")


BIAS_VALUES = 40


def _top_values(frame: pd.DataFrame, keep: int) -> pd.DataFrame:
    """The ``keep`` values with the largest share in any group, and the others summed per group."""
    top = frame.groupby("value")["share"].max().nlargest(keep).index
    kept = frame["value"].isin(top)
    others = frame.loc[~kept, "value"].nunique()
    rest = frame[~kept].groupby("group", as_index=False, sort=False)["share"].sum()
    return pd.concat([frame[kept], rest.assign(value=f"({others:,} other values)")], ignore_index=True)


def scatter(frame: pd.DataFrame, a: str, b: str, metric_label: str) -> alt.LayerChart:
    """``frame``: one row per user with columns ``user``, ``a`` and ``b`` (the two models' values;
    the chart's fields are ``first`` and ``second``, the models' names only their titles). Above
    :data:`summaries.SAMPLE` users, a random sample of them is drawn, and the title says so. The
    users' ids are shown as text (those drawn alone: a million ids took 0.1 s)."""
    frame = frame[["user", a, b]].set_axis(["user", "first", "second"], axis=1)
    low = float(min(frame["first"].min(), frame["second"].min()))
    high = float(max(frame["first"].max(), frame["second"].max()))
    shown, total = sample(frame)
    shown = shown.astype({"user": str})
    points = alt.Chart(shown).mark_circle(size=40, opacity=0.45, color=PALETTE[0]).encode(
        x=alt.X("first:Q", title=f"{metric_label}: {a}"),
        y=alt.Y("second:Q", title=f"{metric_label}: {b}"),
        tooltip=[alt.Tooltip("user:N"), alt.Tooltip("first:Q", title=a, format=".4f"),
                 alt.Tooltip("second:Q", title=b, format=".4f")],
    )
    diagonal = alt.Chart(pd.DataFrame({"x": [low, high], "y": [low, high]})).mark_line(
        strokeDash=[4, 4], color="#888").encode(x="x:Q", y="y:Q")
    sampled = f" (a random {len(shown):,} of {total:,} users)" if len(shown) < total else ""
    return (diagonal + points).properties(
        title=f"Per-user {metric_label}: {b} against {a}{sampled} (above the line: {b} is better)", height=380)


def segment_deltas(frame: pd.DataFrame, segment: str, metric_label: str, model: str, baseline: str) -> alt.Chart:
    """``frame``: columns segment, delta, users, wins, losses (from compare_segments); segments in
    their natural order where they have one (least to most active), else the largest gain first."""
    return alt.Chart(frame).mark_bar().encode(
        x=alt.X("delta:Q", title=f"{metric_label}: {model} − {baseline}"),
        y=alt.Y("segment:N", title=segment, sort=natural_order(frame["segment"]) or "-x"),  # (activity in order)
        color=alt.condition("datum.delta >= 0", alt.value("#54A24B"), alt.value("#E45756")),
        tooltip=[alt.Tooltip("segment:N", title=segment), alt.Tooltip("delta:Q", format="+.4f"),
                 alt.Tooltip("users:Q"), alt.Tooltip("wins:Q"), alt.Tooltip("losses:Q")],
    ).properties(title=f"{model} against {baseline} by {segment}", height=alt.Step(26))


def overlap_matrix(frame: pd.DataFrame, measure_label: str) -> alt.LayerChart:
    """``frame``: columns first, second, value (one row per ordered pair of models)."""
    base = alt.Chart(frame).encode(x=alt.X("second:N", title=None, sort=None),
                                   y=alt.Y("first:N", title=None, sort=None))
    cells = base.mark_rect().encode(
        color=alt.Color("value:Q", title=measure_label, scale=alt.Scale(domain=[0, 1], scheme="blues")),
        tooltip=[alt.Tooltip("first:N", title="model"), alt.Tooltip("second:N", title="and"),
                 alt.Tooltip("value:Q", format=".3f", title=measure_label)])
    text = base.mark_text(fontSize=13).encode(
        text=alt.Text("value:Q", format=".2f"),
        color=alt.condition("datum.value > 0.6", alt.value("white"), alt.value("#1F2430")))
    return (cells + text).properties(title=f"Mean {measure_label} between the models' lists", height=alt.Step(48),
                                     width=alt.Step(90))


def history(runs: pd.DataFrame, metric: str, metric_label: str, models: list[str]) -> alt.LayerChart:
    """``runs``: one row per (run, model) with columns created, model, run, note, ``metric`` and
    its interval ``<metric>_low``/``_high``. A line per model over time, its runs as points,
    and each run's 95% interval as a vertical rule."""
    frame = runs.assign(when=pd.to_datetime(runs["created"]), value=runs[metric],
                        low=runs.get(f"{metric}_low"), high=runs.get(f"{metric}_high"))
    color = alt.Color("model:N", scale=model_scale(models), title="model")
    x = alt.X("when:T", title="saved (UTC)", axis=alt.Axis(format="%b %d %H:%M", labelAngle=-30, tickCount=6))
    tooltip = [alt.Tooltip("run:N"), alt.Tooltip("model:N"),
               alt.Tooltip("when:T", title="saved", format="%Y-%m-%d %H:%M"),
               alt.Tooltip("value:Q", title=metric_label, format=".4f"), alt.Tooltip("low:Q", format=".4f"),
               alt.Tooltip("high:Q", format=".4f"), alt.Tooltip("k:Q", title="K"), alt.Tooltip("note:N")]
    base = alt.Chart(frame)
    lines = base.mark_line(point=alt.OverlayMarkDef(size=70, filled=True)).encode(
        x=x, y=alt.Y("value:Q", title=metric_label, scale=alt.Scale(zero=False)), color=color, tooltip=tooltip)
    rules = base.transform_filter("isValid(datum.low)").mark_rule(strokeWidth=2, opacity=0.6).encode(
        x=x, y="low:Q", y2="high:Q", color=color)
    return (rules + lines).properties(title=f"{metric_label} over saved runs (bars: 95% intervals)", height=320)
