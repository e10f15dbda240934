"""Users: how a metric spreads over users, by segment, and who is served worst and best."""

import pandas as pd
import streamlit as st

from dashboard import charts, components, state
from dashboard.glossary import PER_USER_LABELS
from dashboard.state import Key
from dashboard.summaries import model_column
from dashboard.text import plain
from metrics_core import Evaluation
from metrics_core.result import share_without_hit_in
from metrics_core.stats.segments import natural_order
from metrics_core.stats.served import GAP_RESAMPLES, served

settings, models = state.settings(), state.model_names()
# A new K is read from the first evaluation's curves, and the chosen metric's per-user values at K
# are computed alone (issue #43); a K already evaluated shows its evaluation's.
results = state.read_at_k([]) or state.evaluations(settings)

st.title("Users")
model = components.model_picker()
result = results[model]
per_user_metrics = [c for c in PER_USER_LABELS if c in state.per_user_columns_of(result)]
left, right = st.columns(2)
with left:
    column = st.selectbox("Metric", per_user_metrics, format_func=PER_USER_LABELS.get, key=Key.USERS_METRIC)
choices = ["nobody (all users)", *state.segment_choices()]
with right:
    segment = st.selectbox("Slice by", choices, key=Key.USERS_SEGMENT)
metric_label = f"{PER_USER_LABELS[column]}@{settings.k}"


def drawn() -> tuple:
    """The distribution chart, the slices' name and table, and the chosen model's share without a
    hit, median, users counted and five worst and best served users (the first in the table's
    order among equal values)."""
    slices = state.segments(segment) if segment != choices[0] else None
    by = None if slices is None else slices.name
    per_user = state.per_user_at_k([column])
    frames = []
    for name in models:
        values = per_user[name][column].dropna()
        frame = pd.DataFrame({"model": model_column(name, models, len(values)), "value": values.to_numpy()},
                             index=values.index)
        if slices is not None:
            frame[slices.name] = slices.reindex(values.index).to_numpy()
        frames.append(frame)
    values = pd.concat(frames)
    chart = charts.distribution(values.reset_index(drop=True), metric_label, models, by)
    summary = values[values.model == model].groupby(by)["value"].agg(["count", "mean", "median"]) if by else None
    order = natural_order(summary.index) if by else None
    summary = summary.reindex(order) if order else summary  # (activity: least to most active)
    mine = per_user[model]
    gap = served(mine[column], slices, resamples=GAP_RESAMPLES).sentence(metric_label) if by else None
    counted = mine[column].dropna()  # (the five at each end by selection, not a sort of 1M users: 0.16 s)
    return chart, by, summary, gap, share_without_hit_in(mine), counted.median(), len(counted), \
        counted.nsmallest(5), counted.nlargest(5)


chart, by, summary, gap, without_hit, median, counted, worst, best = state.memo("users", (model, column, segment),
                                                                              drawn)
components.chart(chart, f"users_{column}", "dl_users")

a, b, c = st.columns(3)
a.metric("Users with no hit in the top K", f"{without_hit:.1%}",
         help="Evaluated users whose top K holds no relevant item.",
         border=True)
b.metric(f"Median {metric_label}", f"{median:.4f}", border=True)
c.metric("Users behind this metric", f"{counted:,}", border=True)

if by:
    st.dataframe(summary.style.format({"mean": "{:.4f}", "median": "{:.4f}"}), width="stretch")
    st.caption(f"{plain(gap)} (Gap: the best served group's mean minus the worst's; its 95% interval from "
               f"{GAP_RESAMPLES} resamples of the users within each group.)")

st.subheader(f"Worst and best served users ({plain(model)})")
cases_page = "views/cases.py"
left, right = st.columns(2)
for side, title, picks in ((left, "Worst", worst), (right, "Best", best)):
    with side:
        st.markdown(f"**{title}**")
        for user, value in picks.items():
            st.page_link(cases_page, label=f"user {plain(user)}: {value:.4f}", icon=":material/person_search:",
                         query_params={"case_user": str(user), "model": model})
if isinstance(result, Evaluation):
    components.download_table(result.per_user, f"per_user_{model}", "dl_per_user")
else:  # (every column at this K: evaluated when asked for; the tables are read already, for the values above)
    dataset = state.dataset()
    components.download_table(lambda: dataset.evaluate(model, settings, curves=False).per_user,
                              f"per_user_{model}", "dl_per_user")
