"""Cases: one user's history, every model's recommendations with relevance, and what each
model missed."""

import streamlit as st

from dashboard import state
from dashboard.state import Key
from dashboard.text import plain

settings = state.settings()
dataset = state.dataset()
models = dataset.models
k = settings.k

st.title("Cases")
evaluated = dataset.users.ids[dataset.truth.relevant_count > 0]
options = [str(u) for u in evaluated]
if str(st.session_state.get(Key.CASE_USER)) not in options:
    st.session_state[Key.CASE_USER] = dataset.cases(sample=1, seed=0, k=k)[0].user.__str__()
user = st.selectbox("User (type to search)", options, key=Key.CASE_USER,
                    help="Users with at least one relevant item. The Users page links its best and worst here.")
item_columns = [c for c in (dataset.item_table.columns if dataset.item_table is not None else [])
                if c != dataset.columns.item][:3]
if dataset.item_table is not None and "title" in dataset.item_table.columns:
    item_columns = ["title", *[c for c in item_columns if c != "title"]][:3]
(case,) = dataset.cases([user], k=k, history=10, item_columns=item_columns)

st.subheader("Recent history")
if case.history.empty:
    st.caption("No training interactions for this user.")
else:
    st.dataframe(case.history, hide_index=True, width="stretch")

st.subheader(f"Top {k} of each model")
PER_ROW = 2  # (two lists side by side keep their titles whole; more models wrap onto further rows)
for start in range(0, len(models), PER_ROW):
    for column, name in zip(st.columns(PER_ROW), models[start:start + PER_ROW], strict=False):
        recs = case.recommendations[case.recommendations.model == name].drop(columns=["model"])
        hits = int(recs.relevant.sum())
        with column:
            st.markdown(f"**{plain(name)}** · {hits} relevant of {len(recs)}")
            shown = recs.drop(columns=["grade"])
            first = ["rank", "relevant", *item_columns[:1]]
            shown = shown[first + [c for c in shown.columns if c not in first]]
            st.dataframe(shown, hide_index=True, width="stretch",
                         column_config={"score": st.column_config.NumberColumn(format="%.3f"),
                                        "relevant": st.column_config.CheckboxColumn("hit", width="small"),
                                        "rank": st.column_config.NumberColumn(width="small")})
            missed = case.missed[case.missed.model == name].drop(columns=["model"])
            st.caption(f"Missed {len(missed)} relevant item(s)")
            if len(missed):
                st.dataframe(missed, hide_index=True, width="stretch")
