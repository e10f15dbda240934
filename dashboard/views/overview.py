"""Overview: every metric of one model as a card (delta against the baseline, users behind
it, the formula as a tooltip), and metric@k curves for all models."""

import pandas as pd
import streamlit as st

from dashboard import charts, components, state
from dashboard.glossary import (
    ACCURACY,
    BEYOND,
    ESSENTIAL_ACCURACY,
    ESSENTIAL_BEYOND,
    METRICS,
    change_look,
    change_text,
    fmt,
    label,
)
from dashboard.state import Key
from dashboard.text import plain
from metrics_core.metrics.registry import curves as curves_of_registry

INTERVALS_BY_DEFAULT_UP_TO = 50_000
settings, models = state.settings(), state.model_names()
k = settings.k
every = st.session_state.get(Key.EVERY_METRIC, False)  # (the toggles are drawn below: their last values)
shown_metrics = (ACCURACY + BEYOND) if every else (ESSENTIAL_ACCURACY + ESSENTIAL_BEYOND)
# A K other than the first evaluation's is read from its curves when they hold every card shown
# (issue #43: a new K in a blink); the cards' bootstrap intervals need the per-user values at K.
results = None if st.session_state.get(Key.CARD_INTERVALS) else state.read_at_k(shown_metrics)
results = results or state.evaluations(settings)

st.title("Overview")
left, right = st.columns([2, 3])
with left:
    model = components.model_picker()
baseline = st.session_state[Key.BASELINE]
result, base = results[model], results[baseline]
large = result.users["evaluated"] > INTERVALS_BY_DEFAULT_UP_TO
with right:
    st.session_state.setdefault(Key.CARD_INTERVALS, not large)
    show_intervals = st.toggle("95% confidence intervals on the cards", key=Key.CARD_INTERVALS,
                               help="Percentile bootstrap over users (200 resamples). Off by default above "
                                    f"{INTERVALS_BY_DEFAULT_UP_TO:,} users, where it takes a moment.")
interval_of = state.card_intervals(model) if show_intervals else {}
with right:
    st.caption(f"{plain(state.workspace().label)} · {result.users['evaluated']:,} users evaluated · "
               f"{result.users['without_relevant']:,} with a list but no relevant item left out · "
               f"deltas against **{plain(baseline)}**")


PER_ROW = 4


def cards(names: list[str], users_of) -> None:
    shown = [n for n in names if n in result.metrics]
    for start in range(0, len(shown), PER_ROW):
        for column, name in zip(st.columns(PER_ROW), shown[start:start + PER_ROW], strict=False):
            value, reference = result.metrics[name], base.metrics.get(name)
            delta = None if model == baseline or reference is None else value - reference
            change = change_text(name, delta)
            colour, arrow = change_look(name, delta)
            with column.container(border=True):
                # (the name as text above the number: it wraps where a metric's own label is cut short)
                st.markdown(f"**{label(name, k)}**", help=components.metric_help(name, users_of(name), k))
                st.metric(
                    label(name, k),
                    fmt(name, value),
                    change,
                    delta_color=colour,
                    delta_arrow=arrow,
                    label_visibility="collapsed",
                )
                low_high = interval_of.get(name)
                spread = f" · 95% CI {fmt(name, low_high[0])}–{fmt(name, low_high[1])}" if low_high else ""
                st.caption(f"{users_of(name):,} users{spread}")


every = st.toggle("Show every metric", key=Key.EVERY_METRIC,
                  help="Off: the few metrics most readers start from. On: every metric rankscope computes "
                       "(trec_eval's, classification metrics over candidates, interpolated precision, …).")
st.subheader("Accuracy")
cards(ACCURACY if every else ESSENTIAL_ACCURACY, result.users_of)
st.subheader("Beyond accuracy")
cards(BEYOND if every else ESSENTIAL_BEYOND, result.users_of)
if result.skipped:
    with st.expander(f"{len(result.skipped)} metrics could not be computed: why"):
        st.table(pd.DataFrame({"metric": list(result.skipped), "reason": list(result.skipped.values())})
                 .set_index("metric"))
if result.warnings:
    with st.expander(f"{len(result.warnings)} notes about the data"):
        for note in result.warnings:
            st.markdown(f"- {plain(note.message)}")

st.subheader("Metric at every cut-off")
curve_metrics = [m for m in curves_of_registry() if m in result.curves.columns]
if st.session_state.get(Key.METRIC) not in curve_metrics:
    st.session_state[Key.METRIC] = "ndcg"
metric = st.selectbox("Metric", curve_metrics, key=Key.METRIC, format_func=lambda m: METRICS[m].label)
curves = pd.concat([r.curves[[metric]].rename(columns={metric: "value"}).assign(model=name).reset_index()
                    for name, r in results.items()], ignore_index=True)
components.chart(charts.metric_curves(curves, METRICS[metric].label, k, models), f"{metric}_curves", "dl_curves")
components.download_table(curves.pivot(index="k", columns="model", values="value"), f"{metric}_at_every_k",
                          "dl_curves_csv")
