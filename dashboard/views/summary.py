"""Summary: which model wins, first. Every model x the headline metrics with 95% intervals, the
best per metric marked, and the library's verdict on each metric in plain words (one method for
the interval and the call: the paired t interval, see :mod:`metrics_core.stats.verdict`)."""

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import components, state
from dashboard.glossary import METRICS, fmt, label
from dashboard.text import plain
from metrics_core.metrics import registry
from metrics_core.stats.verdict import SUMMARY_METRICS, half_width, verdict

settings, models = state.settings(), state.model_names()
results = state.evaluations_of(list(SUMMARY_METRICS))  # (a new K: its headline metrics alone, issue #43)
k = settings.k
shown = [m for m in SUMMARY_METRICS if any(m in r.metrics for r in results.values())]
per_user = registry.per_user_columns()

st.title("Summary")
first = next(iter(results.values()))
st.caption(f"{plain(state.workspace().label)} · {len(models)} model{'s' * (len(models) > 1)} · "
           f"{first.users['evaluated']:,} users evaluated · K = {k}")


def drawn() -> tuple:
    """The verdict on each per-user headline metric, and the table of values with intervals."""
    verdicts = {m: verdict(results, m) for m in shown if m in per_user}
    cells, best = {}, {}
    for metric in shown:
        values = {}
        for model in models:
            value = results[model].metrics.get(metric)
            half = half_width(results[model], metric) if value is not None else None
            values[model] = fmt(metric, value) + ("" if half is None else f" ± {fmt(metric, half)}")
        cells[label(metric, k)] = values
        direction = METRICS[metric].higher_is_better
        numbers = {m: results[m].metrics.get(metric) for m in models}
        known = {m: v for m, v in numbers.items() if v is not None and np.isfinite(v)}
        if direction is not None and known and len(models) > 1:
            target = max(known.values()) if direction else min(known.values())
            best[label(metric, k)] = {m for m, v in known.items() if v == target}
    table = pd.DataFrame(cells, index=pd.Index(models, name="model"))
    return verdicts, table, best


verdicts, table, best = state.memo("summary", (), drawn)
if len(models) > 1 and "ndcg" in verdicts:
    headline = verdicts["ndcg"]
    clear = headline.leader is not None and all(d.real for d in headline.differences)
    (st.success if clear else st.info)(plain(headline.sentence()), icon=":material/emoji_events:" if clear else
                                       ":material/balance:")
elif len(models) == 1:
    st.info(f"Only {plain(models[0])} is loaded: add a second model on the Data page to see which one wins.",
            icon=":material/info:")


def marked(column: pd.Series) -> list[str]:
    winners = best.get(column.name, set())
    return ["background-color: #d6ecd2; font-weight: 600" if model in winners else "" for model in column.index]


st.subheader("Headline metrics")
st.caption("Each value ± the half-width of its 95% interval (the t interval of the mean over users; coverage is a "
           "count over the catalog, without one). The best value per metric is marked.")
st.dataframe(table.style.apply(marked, axis=0), width="stretch", column_config=components.MODEL_COLUMN)
components.download_table(table, "summary", "dl_summary")

st.subheader("Which model wins, metric by metric")
for metric, found in verdicts.items():
    if metric != "ndcg" or len(models) < 2:
        st.markdown(f"- **{plain(label(metric, k))}**: {plain(found.sentence())}")
    else:
        st.markdown(f"- **{plain(label(metric, k))}**: see above.")
st.caption("A difference is called real when its 95% paired t interval excludes 0 (the same as a paired t-test at "
           "5%); the Compare page has the Wilcoxon test, bootstrap intervals and corrections for many metrics.")
