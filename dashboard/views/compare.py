"""Compare: all models side by side, the best value per metric highlighted, deltas against
the baseline, metric@k curves, and a per-user scatter of two models."""

import pandas as pd
import streamlit as st

from dashboard import charts, components, state
from dashboard.glossary import ACCURACY, BEYOND, METRICS, PER_USER_LABELS, label

settings = state.settings()
results = state.evaluations(settings)
models = list(results)
k = settings.k
baseline = st.session_state["baseline"]

st.title("Compare models")
names = [m for m in ACCURACY + BEYOND if any(m in r.metrics for r in results.values())]
table = pd.DataFrame({label(m, k): [results[model].metrics.get(m) for model in models] for m in names}, index=models)
table.index.name = "model"


def best(column: pd.Series) -> list[str]:
    name = names[list(table.columns).index(column.name)]
    direction = METRICS[name].higher_is_better
    if direction is None or column.isna().all():
        return [""] * len(column)
    target = column.max() if direction else column.min()
    return ["background-color: #d6ecd2; font-weight: 600" if v == target else "" for v in column]


st.caption(f"Best value per metric highlighted (for ARP and score entropy neither direction is better). "
           f"K = {k}; users evaluated: {results[baseline].users['evaluated']:,}.")
st.dataframe(table.style.apply(best, axis=0).format("{:.4f}", na_rep="–"), width="stretch")
components.download_table(table, "models", "dl_models")

st.subheader(f"Difference from the baseline ({baseline})")
deltas = table - table.loc[baseline]


def tone(column: pd.Series) -> list[str]:
    direction = METRICS[names[list(deltas.columns).index(column.name)]].higher_is_better
    if direction is None:
        return [""] * len(column)
    good = column > 0 if direction else column < 0
    bad = column < 0 if direction else column > 0
    return ["color: #1a7f37" if g else "color: #c62828" if b else "" for g, b in zip(good, bad, strict=True)]


if len(models) > 1:
    st.dataframe(deltas.drop(index=baseline).style.apply(tone, axis=0).format("{:+.4f}", na_rep="–"),
                 width="stretch")
else:
    st.info("Only one model is loaded.")

st.subheader("Metric at every cut-off")
curve_metrics = [m for m in ("ndcg", "precision", "recall", "map", "hit_rate", "mrr") if m in results[baseline].curves]
metric = st.selectbox("Metric", curve_metrics, key="compare_curve", format_func=lambda m: METRICS[m].label)
curves = pd.concat([r.curves[[metric]].rename(columns={metric: "value"}).assign(model=name).reset_index()
                    for name, r in results.items()], ignore_index=True)
components.chart(charts.metric_curves(curves, METRICS[metric].label, k, models), "compare_curves", "dl_cmp_curves")

st.subheader("User by user")
if len(models) < 2:
    st.info("Load a second model to compare users.")
else:
    columns = st.columns(3)
    a = baseline
    columns[0].markdown(f"Model A is the baseline: **{a}** (change it in the sidebar).")
    others = [m for m in models if m != a]
    if st.session_state.get("model_b") not in others:
        st.session_state["model_b"] = others[0]
    with columns[1]:
        b = st.selectbox("Model B", others, key="model_b")
    per_user_metrics = [c for c in PER_USER_LABELS if c in results[a].per_user.columns]
    with columns[2]:
        column = st.selectbox("Metric", per_user_metrics, format_func=PER_USER_LABELS.get, key="scatter_metric")
    pair = pd.DataFrame({a: results[a].per_user[column], b: results[b].per_user[column]}).dropna()
    pair.index.name = "user"
    if pair.empty:
        st.info("No user has this metric for both models.")
    else:
        wins, losses = int((pair[b] > pair[a]).sum()), int((pair[b] < pair[a]).sum())
        st.markdown(f"**{b}** is better than **{a}** for **{wins:,}** users ({wins / len(pair):.0%}), worse for "
                    f"**{losses:,}** ({losses / len(pair):.0%}), equal for {len(pair) - wins - losses:,}.")
        plotted = pair.reset_index().astype({"user": str})
        components.chart(charts.scatter(plotted, a, b, PER_USER_LABELS[column]), "scatter", "dl_scatter")
        components.download_table(pair, f"per_user_{column}", "dl_pair")
