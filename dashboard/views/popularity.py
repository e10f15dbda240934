"""Popularity and bias: the long tail, catalog metrics, item bias, exposure by item group and user bias."""

import pandas as pd
import streamlit as st

from dashboard import charts, components, state
from dashboard.glossary import fmt, label
from dashboard.state import Key
from dashboard.text import plain

SHOWN = ("arp", "coverage", "gini", "entropy", "novelty", "exposure_distance", "ee_loss", "ee_relevance",
         "ee_disparity")
settings, models = state.settings(), state.model_names()
results = state.read_at_k(list(SHOWN)) or state.evaluations(settings)  # (a new K: read from the curves)
dataset = state.dataset()
k = settings.k

st.title("Popularity and bias")
rows = {name: {label(m): fmt(m, r.metrics.get(m)) for m in ("arp", "coverage", "gini", "entropy", "novelty")}
        for name, r in results.items()}
model = components.model_picker()
cards = st.columns(5)
for column, name in zip(cards, ("arp", "coverage", "gini", "entropy", "novelty"), strict=True):
    value = results[model].metrics.get(name)
    column.metric(label(name), fmt(name, value), help=components.metric_help(
        name, results[model].left_out.get("users_with_recommendations", 0), k) if value is not None else
        results[model].skipped.get(name), border=True)
st.dataframe(pd.DataFrame(rows).T, width="stretch", column_config=components.MODEL_COLUMN)

if dataset.training is None:
    st.info("The long-tail chart and popularity metrics need training interactions.")
else:
    def tail_and_heads() -> tuple:
        """The long-tail chart and each model's share of recommendations to the most popular items."""
        tail = pd.concat([dataset.long_tail(name, k).assign(model=name) for name in models], ignore_index=True)
        return charts.long_tail(tail, models), {name: dataset.head_share(name, k) for name in models}

    chart, shares = state.memo("long_tail", (), tail_and_heads)  # (a return to the page redraws it)
    components.chart(chart, "long_tail", "dl_tail")
    st.caption("Share of recommendations going to the 20% most popular items: "
               + ", ".join(f"**{plain(n)}** {shares[n]:.0%}" for n in models))

POPULARITY = "popularity (head, mid, tail)"
st.subheader("Who is served: items")
groupings = ([POPULARITY] if dataset.training is not None else []) + ([] if dataset.item_table is None else [
    c for c in dataset.item_table.columns if c != dataset.columns.item and dataset.item_table[c].nunique() <= 50])
if not groupings:
    st.info("Who is served among items needs training interactions (popularity) or an item table (its groups).")
else:
    grouping = st.selectbox("Items grouped by", groupings, key=Key.SERVED_BY)
    by = None if grouping == POPULARITY else grouping
    served = state.memo("served_items", (model, by), lambda: dataset.served_items(model, settings, by))
    what = "The items with training interactions in thirds by popularity (head: the most interacted)" if by is None \
        else f"The items by their {plain(by)} (an item of several counting a share in each)"
    st.caption(f"{what}. For **{plain(model)}**: the relevant items of each group found in the top {k} per user "
               "(hits), the share of each user's relevant items of that group found (recall, over the users with "
               "some), and the group's share of all recommendations.")
    st.dataframe(served.set_index("group").style.format(
        {"items": "{:,.0f}", "relevant": "{:,.0f}", "users": "{:,}", "hits": "{:.4f}", "recall": "{:.4f}",
         "recommended": "{:.1%}"}, na_rep="–"), width="stretch")

st.subheader("Item bias")
if dataset.item_table is None:
    st.info("Load an item table to compare item attributes.")
else:
    attributes = [c for c in dataset.item_table.columns if (c != dataset.columns.item
                  and dataset.item_table[c].nunique() < max(50, len(dataset.item_table) // 2))
                  or (pd.api.types.is_numeric_dtype(dataset.item_table[c]) and c != dataset.columns.item)]
    attribute = st.selectbox("Item attribute", attributes, key=Key.ITEM_ATTRIBUTE)
    report = state.memo("item_bias", (model, attribute), lambda: dataset.item_bias(model, attribute, k))
    figure = "Jensen–Shannon distance" if report.divergence == "jensen_shannon" else "KS statistic"
    extra = f", p-value {report.p_value:.3g}" if report.p_value is not None else ""
    st.markdown(f"**{figure}: {report.statistic:.3f}**{extra} — {plain(model)}'s top {k} against the catalog "
                f"({report.counts['recommendations']:,} recommendations, {report.counts['catalog']:,} catalog items).")
    components.chart(charts.bias(report.distribution, attribute, f"{attribute}: top-{k} recommendations vs catalog"),
                     "item_bias", "dl_item_bias")

st.subheader("Exposure by item group")
categories, missing = dataset.categories(settings.category_column)
if categories is None:
    st.info(f"Exposure by item group {missing}.")
else:
    table = state.memo("exposure", (model,), lambda: dataset.exposure(model, settings))
    target = {"catalog": "the catalog", "training": "training interactions", "uniform": "equal shares"}[
        settings.exposure_target]
    shares = pd.concat([table.assign(value=table["group"], group=f"exposure (top {k})",
                                     share=table["exposure"]),
                        table.assign(value=table["group"], group=f"target: {target}", share=table["target"])])
    distance = results[model].metrics.get("exposure_distance")
    st.markdown(f"**{label('exposure_distance')}: {fmt('exposure_distance', distance)}** — how far {plain(model)}'s "
                f"attention to each {plain(categories.column)} (1/log2(rank + 1) at each rank) is from {target}'s "
                "shares (Jensen–Shannon distance, 0 to 1).")
    components.chart(charts.bias(shares[["value", "group", "share"]], categories.column,
                                 f"{categories.column}: share of exposure vs {target}"), "exposure", "dl_exposure")

st.subheader("Expected exposure")
metrics = results[model].metrics
if "ee_loss" in metrics:
    relevance, disparity = (fmt(name, metrics[name]) for name in ("ee_relevance", "ee_disparity"))
    st.markdown(f"**{label('ee_loss')}: {fmt('ee_loss', metrics['ee_loss'])}** (relevance {relevance}, disparity "
                f"{disparity}) — how far the attention {plain(model)}'s top {k} gives each item "
                f"({settings.ee_patience:g}^(rank − 1)) is from an ideal ranking that puts a user's relevant items "
                "first in random order (TREC Fair Ranking's expected exposure; 0 is ideal, mean over users).")
else:
    st.info("Expected exposure needs users with relevant items.")

st.subheader("User bias")
if dataset.user_table is None or dataset.training is None:
    st.info("Load a user table and training interactions to compare evaluated users with training users.")
else:
    attributes = [c for c in dataset.user_table.columns if c != dataset.columns.user]
    attribute = st.selectbox("User attribute", attributes, key=Key.USER_ATTRIBUTE)
    report = state.memo("user_bias", (attribute,), lambda: dataset.user_bias(attribute))
    figure = "Jensen–Shannon distance" if report.divergence == "jensen_shannon" else "KS statistic"
    extra = f", p-value {report.p_value:.3g}" if report.p_value is not None else ""
    st.markdown(f"**{figure}: {report.statistic:.3f}**{extra} — evaluated users against training users.")
    components.chart(charts.bias(report.distribution, attribute, f"{attribute}: evaluated vs training users"),
                     "user_bias", "dl_user_bias")
