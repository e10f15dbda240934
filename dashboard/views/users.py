"""Users: how a metric spreads over users, by segment, and who is served worst and best."""

import pandas as pd
import streamlit as st

from dashboard import charts, components, state
from dashboard.glossary import PER_USER_LABELS
from dashboard.state import Key
from dashboard.text import plain

context = state.page()
settings, results, models, dataset = context.settings, context.results, context.models, context.dataset

st.title("Users")
model = components.model_picker()
result = results[model]
per_user_metrics = [c for c in PER_USER_LABELS if c in result.per_user.columns]
left, right = st.columns(2)
with left:
    column = st.selectbox("Metric", per_user_metrics, format_func=PER_USER_LABELS.get, key=Key.USERS_METRIC)
choices = ["nobody (all users)", *state.segment_choices()]
with right:
    segment = st.selectbox("Slice by", choices, key=Key.USERS_SEGMENT)
metric_label = f"{PER_USER_LABELS[column]}@{settings.k}"
slices = state.segments(segment) if segment != choices[0] else None

frames = []
for name in models:
    values = results[name].per_user[column].dropna()
    frame = pd.DataFrame({"model": name, "value": values.to_numpy()}, index=values.index)
    if slices is not None:
        frame[slices.name] = slices.reindex(values.index).to_numpy()
    frames.append(frame)
values = pd.concat(frames)
by = None if slices is None else slices.name
components.chart(charts.distribution(values.reset_index(drop=True), metric_label, models, by), f"users_{column}",
                 "dl_users")

a, b, c = st.columns(3)
a.metric("Users with no hit in the top K", f"{result.share_without_hit:.1%}",
         help="Evaluated users whose top K holds no relevant item.",
         border=True)
b.metric(f"Median {metric_label}", f"{result.per_user[column].median():.4f}", border=True)
c.metric("Users behind this metric", f"{result.per_user[column].notna().sum():,}", border=True)

if by:
    summary = values[values.model == model].groupby(by)["value"].agg(["count", "mean", "median"])
    st.dataframe(summary.style.format({"mean": "{:.4f}", "median": "{:.4f}"}), width="stretch")

st.subheader(f"Worst and best served users ({plain(model)})")
ranked = result.per_user[column].dropna().sort_values()
cases_page = "views/cases.py"
left, right = st.columns(2)
for side, title, picks in ((left, "Worst", ranked.head(5)), (right, "Best", ranked.tail(5)[::-1])):
    with side:
        st.markdown(f"**{title}**")
        for user, value in picks.items():
            st.page_link(cases_page, label=f"user {plain(user)}: {value:.4f}", icon=":material/person_search:",
                         query_params={"case_user": str(user), "model": model})
components.download_table(result.per_user, f"per_user_{model}", "dl_per_user")
