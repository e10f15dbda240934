"""Compare, in tabs of which only the open one runs: all models side by side (the best value per
metric highlighted, deltas against the baseline), significance (intervals, paired tests,
win/tie/loss, plain-language reading), segments, who is served, a per-user scatter and the
lists' overlap, metric@k curves, and exports (offline HTML report, JSON, CSV)."""

import json

import pandas as pd
import streamlit as st

from dashboard import charts, components, state
from dashboard.glossary import ACCURACY, BEYOND, METRICS, PER_USER_LABELS, change_text, label
from dashboard.state import Key
from dashboard.summaries import model_column
from dashboard.text import plain
from dashboard.workspace import content_hash
from metrics_core.metrics.registry import curves as curves_of_registry
from metrics_core.report.cases import case_study
from metrics_core.report.document import numbers, numbers_csv, report_html
from metrics_core.stats import overlap
from metrics_core.stats.compare import compare_segments, win_tie_loss
from metrics_core.stats.overlap import MEASURES
from metrics_core.stats.segments import ACTIVITY
from metrics_core.stats.served import GAP_RESAMPLES, gap_sentences, items_by_model
from metrics_core.stats.verdict import LEAD_METRIC

settings, models = state.settings(), state.model_names()
k = settings.k
baseline = st.session_state[Key.BASELINE]
TABS = state.COMPARE_TABS

st.title("Compare models")
if st.session_state.get(Key.COMPARE_TAB) not in TABS:
    st.session_state[Key.COMPARE_TAB] = TABS[0]
# Only the open tab runs (issue #43): a new K computes what it shows, not what every section shows.
tabs = dict(zip(TABS, st.tabs(TABS, key=Key.COMPARE_TAB, on_change="rerun"), strict=True))
opened = next(name for name, tab in tabs.items() if tab.open)


def read_at_k(names: list[str]) -> dict:
    """Every model at the current K: the aggregates read from the first evaluation's curves, with
    those of ``names`` the curves lack computed alone; a K already evaluated takes its evaluation."""
    return state.read_at_k(names) or state.evaluations(settings)


def side_by_side() -> None:
    """Every metric of every model, the best highlighted, and the differences from the baseline."""
    read = read_at_k(ACCURACY + BEYOND)
    names = [m for m in ACCURACY + BEYOND if any(m in r.metrics for r in read.values())]
    table = pd.DataFrame({label(m, k): [read[model].metrics.get(m) for model in models] for m in names},
                         index=models)
    table.index.name = "model"

    def best(column: pd.Series) -> list[str]:
        direction = METRICS[names[list(table.columns).index(column.name)]].higher_is_better
        if direction is None or column.isna().all():
            return [""] * len(column)
        target = column.max() if direction else column.min()
        return ["background-color: #d6ecd2; font-weight: 600" if v == target else "" for v in column]

    st.caption(f"Best value per metric highlighted (for ARP and score entropy neither direction is better). "
               f"K = {k}; users evaluated: {read[baseline].users['evaluated']:,}.")
    st.dataframe(table.style.apply(best, axis=0).format("{:.4f}", na_rep="–"), width="stretch",
                 column_config=components.MODEL_COLUMN)
    components.download_table(table, "models", "dl_models")

    st.subheader(f"Difference from the baseline ({plain(baseline)})")
    deltas = table - table.loc[baseline]

    def tone(column: pd.Series) -> list[str]:
        name = names[list(deltas.columns).index(column.name)]
        direction = METRICS[name].higher_is_better
        if direction is None:
            return [""] * len(column)
        moved = column.map(lambda v: pd.notna(v) and change_text(name, v) != "no change")
        good = moved & (column > 0 if direction else column < 0)
        bad = moved & (column < 0 if direction else column > 0)
        return ["color: #1a7f37" if g else "color: #c62828" if b else "" for g, b in zip(good, bad, strict=True)]

    if len(models) > 1:
        shown_as = {column: (lambda v, name=name: "–" if pd.isna(v) else change_text(name, v))
                    for column, name in zip(deltas.columns, names, strict=True)}  # ("no change" where it rounds to 0)
        st.dataframe(deltas.drop(index=baseline).style.apply(tone, axis=0).format(shown_as), width="stretch",
                     column_config=components.MODEL_COLUMN)
    else:
        st.info("Only one model is loaded.")


def chosen_metrics(comparable: list[str]) -> list[str]:
    """The metrics chosen for the paired tests (NDCG, MAP and recall until one chooses), of those
    ``comparable`` now."""
    st.session_state.setdefault(Key.TESTED_METRICS, [m for m in ("ndcg", "map", "recall") if m in comparable])
    st.session_state[Key.TESTED_METRICS] = [m for m in st.session_state[Key.TESTED_METRICS] if m in comparable]
    return st.session_state[Key.TESTED_METRICS]


def tested(read: dict, chosen: list[str]):
    """The comparison of the ``chosen`` metrics against the baseline (None with one model or no
    metric chosen), with the test's settings chosen on the significance tab."""
    if len(models) < 2 or not chosen:
        return None
    results = state.with_per_user(read, [state.METRIC_COLUMNS[m] for m in chosen])
    choice = st.session_state
    return state.comparison(results, baseline, chosen, choice[Key.TEST], choice[Key.CORRECTION],
                            int(choice[Key.RESAMPLES]), int(choice[Key.SEED]))


def significance() -> None:
    """Paired tests of the chosen metrics against the baseline: intervals, table, sentences."""
    read = read_at_k([])
    comparable = state.comparable_metrics(read)
    left, right = st.columns([3, 2])
    with left:
        chosen_metrics(comparable)
        chosen = st.multiselect("Metrics to test", comparable, key=Key.TESTED_METRICS,
                                format_func=lambda m: METRICS[m].label)
    with right, st.expander("Test settings"):
        st.radio("Paired test", ["wilcoxon", "t"], horizontal=True, key=Key.TEST,
                 format_func={"wilcoxon": "Wilcoxon signed-rank", "t": "paired t-test"}.get)
        st.selectbox("Multiple-comparison correction", ["holm", "bonferroni", "none"], key=Key.CORRECTION)
        st.number_input("Bootstrap resamples", 100, 20_000, step=100, key=Key.RESAMPLES)
        st.number_input("Seed", 0, 10_000, key=Key.SEED)
    if len(models) < 2:
        st.info("Load a second model to test differences.")
        return
    comparison = tested(read, chosen)
    if comparison is None:
        st.info("Choose a metric to test.")
        return
    for metric, column in zip(chosen, st.columns(min(3, len(chosen))) * len(chosen), strict=False):
        part = comparison.intervals[comparison.intervals.metric == metric]
        with column:
            components.chart(charts.intervals(part, label(metric, k), models, comparison.level),
                             f"intervals_{metric}", f"dl_intervals_{metric}")
    correction = st.session_state[Key.CORRECTION]
    table = comparison.rows.assign(
        metric=comparison.rows.metric.map(lambda m: label(m, k)),
        interval=[f"{lo:+.4f} to {hi:+.4f}" for lo, hi in zip(comparison.rows.ci_low, comparison.rows.ci_high,
                                                                  strict=True)],
        significant=comparison.significant,
    )[["model", "metric", "value", "baseline_value", "delta", "interval", "p_value", "p_adjusted", "significant",
       "wins", "ties", "losses", "effect_size"]]
    st.dataframe(table, hide_index=True, width="stretch", column_config={
        "value": st.column_config.NumberColumn(format="%.4f"),
        "baseline_value": st.column_config.NumberColumn("baseline", format="%.4f"),
        "delta": st.column_config.NumberColumn(format="%+.4f"),
        "interval": st.column_config.TextColumn(f"{comparison.level:.0%} CI of the delta"),
        "p_value": st.column_config.NumberColumn("p", format="%.3g"),
        "p_adjusted": st.column_config.NumberColumn(f"p ({correction})", format="%.3g"),
        "effect_size": st.column_config.NumberColumn("effect", format="%.3f",
                                                     help="rank-biserial r (Wilcoxon) or Cohen's d_z (t-test)"),
    })
    for row in comparison.rows.itertuples():
        st.markdown(f"- {plain(comparison.sentence(row.model, row.metric))}")
    components.download_table(comparison.rows.set_index(["model", "metric"]), "significance", "dl_significance")


def who_gains() -> None:
    """A challenger against the baseline on one metric, segment by segment, and each model's gap
    between the best and worst served segment."""
    read = read_at_k([])
    choices = state.segment_choices()
    if len(models) < 2:
        st.info("Load a second model to see who gains and who loses.")
        return
    if not choices:
        st.info("Segments need training interactions (user activity) or a user table.")
        return
    comparable = state.comparable_metrics(read)
    if not comparable:
        st.info("No metric has per-user values in every model: there is nothing to compare segment by segment.")
        return
    a, b, c = st.columns(3)
    segment = a.selectbox("Segment users by", choices, key=Key.COMPARE_SEGMENT)
    challenger = b.selectbox("Model", [m for m in models if m != baseline], key=Key.SEGMENT_MODEL)
    if st.session_state.get(Key.SEGMENT_METRIC) not in comparable:
        st.session_state[Key.SEGMENT_METRIC] = "ndcg" if "ndcg" in comparable else comparable[0]
    metric = c.selectbox("Metric", comparable, key=Key.SEGMENT_METRIC, format_func=lambda m: METRICS[m].label)
    results = state.with_per_user(read, [state.METRIC_COLUMNS[metric]], [baseline, challenger])
    groups, test = state.segments(segment), st.session_state[Key.TEST]
    by_segment = state.memo("compare_segments", (segment, baseline, challenger, metric, test),
                            lambda: compare_segments(results, baseline, challenger, metric, groups, test))
    components.chart(charts.segment_deltas(by_segment, groups.name, label(metric, k), challenger, baseline),
                     "segments", "dl_segments")
    st.dataframe(by_segment, hide_index=True, width="stretch", column_config={
        "baseline_value": st.column_config.NumberColumn(baseline, format="%.4f"),
        "value": st.column_config.NumberColumn(challenger, format="%.4f"),
        "delta": st.column_config.NumberColumn(format="%+.4f"),
        "p_value": st.column_config.NumberColumn("p (uncorrected)", format="%.3g")})
    gaps = state.memo("segment_gaps", (segment, baseline, challenger, metric), lambda: gap_sentences(
        {name: results[name] for name in (baseline, challenger)}, metric, groups))
    for name, sentence in gaps.items():
        st.markdown(f"- **{plain(name)}**: {plain(sentence)}")
    st.caption(f"Gap: the best served {plain(groups.name)} group's mean minus the worst's; its 95% interval "
               f"from {GAP_RESAMPLES} resamples of the users within each group.")


def served_items() -> dict | None:
    """Each model's recall of the head, middle and tail items by training popularity, and their
    shares of its recommendations (None without training interactions)."""
    return state.memo("served_by_model", (), lambda: items_by_model(state.dataset(), models, settings))


def who_is_served() -> None:
    st.subheader("Who is served: popular and niche items")
    served = served_items()
    if served is None:
        st.info("How popular and niche items are found needs training interactions (their popularity).")
        return
    st.caption(f"The items with training interactions in thirds by popularity (head: the most interacted): the "
               f"recall of each third's relevant items in the top {k}, over the users with some, and each third's "
               "share of the recommendations.")
    left, right = st.columns(2)
    left.dataframe(served["recall"].style.format("{:.4f}", na_rep="–"), width="stretch",
                   column_config=components.MODEL_COLUMN)
    right.dataframe(served["recommended"].style.format("{:.1%}"), width="stretch",
                    column_config=components.MODEL_COLUMN)


def user_by_user() -> None:
    """Two models' values of one metric user by user (a sampled scatter), and how alike their lists are."""
    if len(models) < 2:
        st.info("Load a second model to compare users.")
        return
    read = read_at_k([])
    per_user_metrics = [c for c in PER_USER_LABELS if c in state.per_user_columns_of(read[baseline])]
    if not per_user_metrics:
        st.info(f"{plain(baseline)} has no per-user values to compare user by user.")
        return
    if st.session_state.get(Key.SCATTER_METRIC) not in per_user_metrics:
        st.session_state[Key.SCATTER_METRIC] = per_user_metrics[0]
    columns = st.columns(3)
    a = baseline
    columns[0].markdown(f"Model A is the baseline: **{plain(a)}** (change it in the sidebar).")
    others = [m for m in models if m != a]
    if st.session_state.get(Key.MODEL_B) not in others:
        st.session_state[Key.MODEL_B] = others[0]
    with columns[1]:
        b = st.selectbox("Model B", others, key=Key.MODEL_B)
    with columns[2]:
        column = st.selectbox("Metric", per_user_metrics, format_func=PER_USER_LABELS.get, key=Key.SCATTER_METRIC)
    results = state.with_per_user(read, [column], [a, b])

    def paired() -> tuple:
        """Both models' values of every user who has both, who wins, and the scatter (a sample)."""
        pair = pd.DataFrame({a: results[a].per_user[column], b: results[b].per_user[column]}).dropna()
        pair.index.name = "user"
        if pair.empty:
            return pair, (0, 0, 0), None
        return pair, win_tie_loss(pair[b].to_numpy(), pair[a].to_numpy()), \
            charts.scatter(pair.reset_index(), a, b, PER_USER_LABELS[column])

    pair, (wins, ties, losses), scatter = state.memo("compare_pair", (a, b, column), paired)
    if pair.empty:
        st.info("No user has this metric for both models.")
    else:
        st.markdown(f"**{plain(b)}** is better than **{plain(a)}** for **{wins:,}** users ({wins / len(pair):.0%}), "
                    f"worse for **{losses:,}** ({losses / len(pair):.0%}), equal for {ties:,}.")
        components.chart(scatter, "scatter", "dl_scatter")
        components.download_table(pair, f"per_user_{column}", "dl_pair")

    st.subheader("How alike are the lists?")
    dataset = state.dataset()
    measure = st.radio("Overlap", MEASURES, horizontal=True, key=Key.OVERLAP_MEASURE,
                       format_func={"jaccard": f"Jaccard@{k} (shared items / all items)",
                                    "rbo": "rank-biased overlap (p = 0.9, weighs the top)"}.get)
    measure_label = f"Jaccard@{k}" if measure == "jaccard" else f"RBO@{k}"

    def shared() -> overlap.SharedAtK | None:
        """Every pair's shared items per user at K, for Jaccard: the matrix and the chosen pair read
        them (counted once, when either is not kept)."""
        return state.memo("overlap_shared", (), lambda: overlap.shared_at(dataset, k)) if measure == "jaccard" \
            else None

    table = state.memo("overlap_matrix", (measure,), lambda: overlap.matrix(dataset, k, measure, shared=shared()))
    pairs = table.rename_axis("first").reset_index().melt(id_vars="first", var_name="second", value_name="value")
    left, right = st.columns(2)
    with left:
        components.chart(charts.overlap_matrix(pairs, measure_label), "overlap_matrix", "dl_overlap_matrix")
    with right:
        values = state.memo("overlap_users", (a, b, measure),
                            lambda: overlap.per_user(dataset, a, b, k, measure, shared=shared()))
        name = f"{b} vs {a}"
        frame = pd.DataFrame({"model": model_column(name, [name], len(values)), "value": values.to_numpy()})
        components.chart(charts.distribution(frame, measure_label, [name]), "overlap_users", "dl_overlap_users")
    st.caption(f"Mean {measure_label} of {plain(b)} and {plain(a)}: {values.mean():.3f} over {len(values):,} users "
               "(1: the same lists, 0: nothing in common).")


def every_cut_off() -> None:
    """Each model's metric at k = 1 .. its longest list (the first evaluation's curves)."""
    read = read_at_k([])
    curve_metrics = [m for m in curves_of_registry() if all(m in r.curves for r in read.values())]
    if not curve_metrics:
        st.info("No metric has a curve in every model.")
        return
    metric = st.selectbox("Metric", curve_metrics, key=Key.COMPARE_CURVE, format_func=lambda m: METRICS[m].label)
    curves = pd.concat([r.curves[[metric]].rename(columns={metric: "value"}).assign(model=name).reset_index()
                        for name, r in read.items()], ignore_index=True)
    components.chart(charts.metric_curves(curves, METRICS[metric].label, k, models), "compare_curves",
                     "dl_cmp_curves")


def export() -> None:
    """The offline HTML report, every number as JSON and as CSV: every model evaluated at K, with
    the paired tests of the metrics chosen on the significance tab."""
    read = read_at_k([])
    dataset, workspace = state.dataset(), state.workspace()
    comparison = tested(read, chosen_metrics(state.comparable_metrics(read)))
    served = served_items()
    # (read here: the download's function runs after the page, outside its session)
    activity = state.segments(ACTIVITY) if dataset.training is not None else None
    every = state.evaluated_when_asked(read)  # (a K read from the curves: every model evaluated at K on a click)
    files = {**{f"recommendations {m}": t for m, t in workspace.models.items()},
             "ground truth": workspace.ground_truth, "training interactions": workspace.train,
             "item features": workspace.items, "user features": workspace.users}
    prints = {name: f"{table.name} · {content_hash(table)[:16]}" for name, table in files.items() if table is not None}
    st.caption("The report and the numbers hold every model's metrics at K and the paired tests of the metrics "
               "chosen under \"Is the difference real?\".")
    e1, e2, e3 = st.columns(3)
    e1.download_button("HTML report (works offline)",
                       lambda: report_html(every(), comparison, fingerprints=prints, workspace=workspace.label,
                                           cases=case_study(dataset, every()), served=served,
                                           gaps=None if activity is None else gap_sentences(every(), LEAD_METRIC,
                                                                                            activity)),
                       "rankscope-report.html", "text/html", key="dl_report", icon=":material/description:",
                       on_click="ignore")
    e2.download_button("Every number (JSON)",
                       lambda: json.dumps(numbers(every(), comparison, fingerprints=prints), indent=2),
                       "rankscope-numbers.json", "application/json", key="dl_json", icon=":material/data_object:",
                       on_click="ignore")
    e3.download_button("Every number (CSV)", lambda: numbers_csv(every(), comparison), "rankscope-numbers.csv",
                       "text/csv", key="dl_csv", icon=":material/table:", on_click="ignore")


SECTIONS = dict(zip(TABS, (side_by_side, significance, who_gains, who_is_served, user_by_user, every_cut_off,
                           export), strict=True))
with tabs[opened]:
    SECTIONS[opened]()
