"""History: saved runs of this workspace, or of one model name across workspaces (a model's
versions over time), as metric lines with their intervals and a table; any two runs compared
with the Compare page's paired statistics over the users they share."""

import streamlit as st

from dashboard import charts, components, state
from dashboard.glossary import label
from dashboard.state import Key
from dashboard.text import plain
from metrics_core import InputError
from metrics_core.metrics.registry import METRICS
from metrics_core.store import comparable_pair, compare_runs, list_runs, run_labels, save_run

THIS_WORKSPACE, ONE_MODEL = "This workspace", "One model across workspaces"
RECORDING = "_recording_run"  # the note of the run the button asked to record

st.title("History")
store = state.store()
current = state.workspace()

with st.container(border=True):
    st.markdown("**Record a run**: the current workspace's evaluation at the sidebar's settings (every model, "
                "every metric and each user's values), kept in the store.")
    left, right = st.columns([4, 1], vertical_alignment="bottom")
    left.text_input("Note (optional)", key="run_note", placeholder="e.g. candidate 2, new features",
                    help="Names the run in the table, the chart and the comparison (else: the workspace and its "
                         "run number).")
    if store.read_only:
        st.caption("This server is read-only (RANKSCOPE_READ_ONLY=1): runs cannot be recorded here.")
    elif not current.id:
        st.caption("The demo and unsaved uploads cannot be recorded: save the workspace on the Data page first.")

    def ask_to_record() -> None:
        """Keep the note for the run recorded below, and empty the field for the next one."""
        st.session_state[RECORDING] = st.session_state.get("run_note", "").strip()
        st.session_state["run_note"] = ""

    right.button("Record run", icon=":material/add_chart:", disabled=not current.id or store.read_only,
                 width="stretch", on_click=ask_to_record)
    note = st.session_state.pop(RECORDING, None)
    if note is not None:  # (recorded here, in the page: an error in the evaluation is shown as the pages show it)
        saved = store.workspace(current.id)
        if saved is None or saved.deleted:  # deleted meanwhile, from another tab or the command line
            st.error(f"{plain(current.label)} is no longer in the store, so its runs cannot be recorded: save it again "
                     "on the Data page.", icon=":material/link_off:")
        else:
            run = save_run(store, saved, state.evaluations(), note=note)
            st.success(f"Recorded run {run.id}" + (f" ({plain(run.note)})." if run.note else "."),
                       icon=":material/check_circle:")

every_run = list_runs(store)
if every_run.empty:
    st.info("No runs are saved yet. Record one above, or from the command line: "
            "`rankscope evaluate ... --save NAME`.")
    st.stop()

versions = set(store.versions(current.id)) if current.id else set()  # (runs of its earlier versions too)
st.session_state.setdefault(Key.HISTORY_SCOPE, THIS_WORKSPACE if versions & set(every_run["workspace_id"])
                            else ONE_MODEL)
scope = st.radio("Runs of", [THIS_WORKSPACE, ONE_MODEL], horizontal=True, key=Key.HISTORY_SCOPE)
if scope == THIS_WORKSPACE:
    runs = every_run[every_run["workspace_id"].isin(versions)]
    if runs.empty:
        st.info(f"No runs of {plain(current.label)} yet.")
        st.stop()
else:
    model_names = list(dict.fromkeys(every_run["model"]))
    chosen_model = st.selectbox("Model", model_names, key=Key.HISTORY_MODEL)
    runs = every_run[every_run["model"] == chosen_model]
    runs = runs.assign(model=runs["workspace"] + " · " + runs["model"])

runs = runs.assign(id=runs["run"], run=run_labels(runs))  # (named by their note, else workspace and number)
metrics = [m for m in METRICS if m in runs.columns and runs[m].notna().any()]
if st.session_state.get(Key.HISTORY_METRIC) not in metrics:
    st.session_state[Key.HISTORY_METRIC] = "ndcg" if "ndcg" in metrics else metrics[0]
metric = st.selectbox("Metric", metrics, format_func=lambda m: METRICS[m].label, key=Key.HISTORY_METRIC)
models = list(dict.fromkeys(runs["model"]))
components.chart(charts.history(runs, metric, METRICS[metric].label, models), "history", "dl_history")
shown = ["run", "created", "workspace", "model", "k", *[m for m in ("ndcg", "map", "recall", "precision")
                                                         if m in runs.columns], "id"]
st.dataframe(runs[shown], hide_index=True, width="stretch",
             column_config={m: st.column_config.NumberColumn(label(m, None), format="%.4f")
                            for m in ("ndcg", "map", "recall", "precision")})
components.download_table(runs.set_index(["id", "model"]), "runs", "dl_runs")

st.subheader("Compare two runs")
ids = list(dict.fromkeys(runs["id"]))
if len(ids) < 2:
    st.info("Two runs are needed.")
    st.stop()
DEFAULT_PAIR = "_history_default_pair"  # (the pair the page chose, not the user: not written in the link)
described = {row.id: f"{row.run} · {components.when(row.created)}" for row in runs.drop_duplicates("id").itertuples()}
left, right = st.columns(2)
if st.session_state.get(Key.HISTORY_FIRST) not in ids or st.session_state.get(Key.HISTORY_SECOND) not in ids:
    # (by default the newest run and the newest earlier one evaluated alike: two that can be compared)
    st.session_state[Key.HISTORY_FIRST], st.session_state[Key.HISTORY_SECOND] = comparable_pair(store, ids)
    st.session_state[DEFAULT_PAIR] = (st.session_state[Key.HISTORY_FIRST],
                                                  st.session_state[Key.HISTORY_SECOND])
first = left.selectbox("Baseline run", ids, format_func=described.get, key=Key.HISTORY_FIRST)
second = right.selectbox("Run", ids, format_func=described.get, key=Key.HISTORY_SECOND)
if (first, second) != st.session_state.get(DEFAULT_PAIR):
    st.session_state.pop(DEFAULT_PAIR, None)  # (the user chose: what they choose again is theirs)
if first == second:
    st.info("Choose two different runs.")
    st.stop()
chosen = [metric] if METRICS[metric].interval else None
labels = dict(zip(runs["id"], runs["run"], strict=True))
try:
    with st.spinner("Pairing users and bootstrapping…"):  # (runs never change: each pair compared once per server)
        comparisons = state.CACHE.get(
            f"runs_compared:{store.home}:{first}:{second}:{chosen}:{labels[first]!r}:{labels[second]!r}",
            lambda: compare_runs(store, first, second, chosen, names=labels))
except InputError as error:
    if (first, second) == st.session_state.get(DEFAULT_PAIR):  # (no two runs alike: not the user's choice)
        st.info(f"No two of these runs were made alike, so none is compared by default. {plain(error.problem)}",
                icon=":material/info:")
    else:
        components.show_error(error)
    st.stop()
for model, comparison in comparisons.items():
    st.markdown(f"**{plain(model)}**")
    st.dataframe(comparison.rows[["metric", "value", "baseline_value", "delta", "ci_low", "ci_high", "p_adjusted",
                                  "wins", "ties", "losses", "users"]], hide_index=True, width="stretch")
    for row in comparison.rows.itertuples():
        st.markdown(f"- {plain(comparison.sentence(row.model, row.metric))}")
