"""Pieces shared by pages: the sidebar controls, errors in plain words, downloads."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import get_args

import altair as alt
import pandas as pd
import streamlit as st

from dashboard import state
from dashboard.glossary import METRICS, label
from dashboard.setting_words import SETTING_WORDS
from dashboard.state import Key
from dashboard.text import plain
from metrics_core import PRESETS, InputError
from metrics_core.settings import AP_DENOMINATORS, FIELD_TYPES, GAINS, PRIMITIVE_SCALES, SIMILARITIES
from metrics_core.store.catalog import trash_days

AP_LABELS = {"min_k_relevant": "min(K, R)", "relevant": "R (all relevant)", "hits": "hits in the top K", "k": "K"}
SIMILARITY_LABELS = {"cosine": "cosine of item features", "hamming": "Hamming: feature values that differ",
                     "cooccurrence": "co-occurrence in training"}
GAIN_LABELS = {"linear": "grade", "exponential": "2^grade − 1", "binary": "1 (binary)"}


PRESENTING = "<style>html { font-size: 19px; }</style>"  # (Streamlit sizes in rem: every text grows by a fifth)


def presentation_switch() -> bool:
    """The sidebar's "Presentation mode" switch (kept in the link); when on, larger type."""
    with st.sidebar:
        presenting = st.toggle("Presentation mode", key=Key.PRESENT,
                               help="For a meeting: the settings leave the sidebar and the type grows; the "
                                    "numbers stay as they were set. Share the link to open it so.")
    if presenting:
        st.html(PRESENTING)
    return presenting


def sidebar() -> None:
    """K, beta, the AP denominator, the NDCG gain, the preset, who counts, and the baseline (none
    of them in presentation mode: the values set stay in use)."""
    models = state.model_names()
    longest = state.max_positions()
    st.session_state[Key.K] = min(int(st.session_state.get(Key.K, 10)), longest)
    if st.session_state.get(Key.BASELINE) not in models:
        st.session_state[Key.BASELINE] = models[0]
    if presentation_switch():
        return
    with st.sidebar:
        st.markdown(f"**{plain(state.workspace().label)}**")
        st.slider("K (cut-off)", 1, max(longest, 2), key=Key.K, help="How many top items of each list count.")
        st.selectbox("Baseline model", models, key=Key.BASELINE,
                     help="Deltas on the cards and in Compare are against this model.")
        with st.expander("Metric options", expanded=False):
            st.selectbox("Convention preset", list(PRESETS), key=Key.PRESET, on_change=state.apply_preset,
                         help="Reproduce another tool's numbers: trec_eval, ranx, Evidently, RecTools, "
                              "Microsoft Recommenders or torchmetrics conventions.")
            st.number_input("β of F-beta", min_value=0.1, max_value=10.0, step=0.5, key=Key.BETA)
            st.selectbox("AP denominator", AP_DENOMINATORS, key=Key.AP_DENOMINATOR, format_func=AP_LABELS.get)
            st.selectbox("NDCG gain", GAINS, key=Key.GAIN, format_func=GAIN_LABELS.get)
            st.number_input("RBP persistence p", min_value=0.05, max_value=0.99, step=0.05, key=Key.RBP_P,
                            help="Rank-biased precision: the chance that a reader goes on to the next item.")
            st.radio("Users with a list but no relevant item", get_args(FIELD_TYPES["users_without_relevant"]),
                     key=Key.USERS_WITHOUT_RELEVANT,
                     format_func={"exclude": "left out (counted)", "zero": "scored 0",
                                  "zero_if_judged": "scored 0 if judged (trec_eval)"}.get)
            st.radio("Users with relevant items but no list", ["zero", "drop"], key=Key.USERS_WITHOUT_LIST,
                     format_func={"zero": "scored 0", "drop": "left out"}.get)
            st.selectbox("Item similarity (diversity, serendipity)", SIMILARITIES, key=Key.SIMILARITY,
                         format_func=SIMILARITY_LABELS.get)
            st.radio("Items unknown to training, in novelty", ["leave_out", "one_user"], key=Key.NOVELTY_UNKNOWN,
                     format_func={"leave_out": "left out", "one_user": "seen by one user (RecTools)"}.get)
            if st.session_state.get(Key.PRIMITIVE_MODEL) not in (state.BASELINE_IS_PRIMITIVE, *models):
                st.session_state[Key.PRIMITIVE_MODEL] = state.BASELINE_IS_PRIMITIVE
            st.selectbox("Primitive model (unexpectedness)", [state.BASELINE_IS_PRIMITIVE, *models],
                         key=Key.PRIMITIVE_MODEL,
                         help="Serendipity against a primitive model and unexpectedness compare each model with "
                              "this one.")
            st.radio("Scale lists to [0, 1] by", PRIMITIVE_SCALES, key=Key.PRIMITIVE_SCALE, horizontal=True,
                     format_func={"rank": "rank", "minmax": "min-max of scores"}.get)


def model_picker(key: str = Key.MODEL, title: str = "Model") -> str:
    models = state.model_names()
    if st.session_state.get(key) not in models:
        st.session_state[key] = models[min(1, len(models) - 1)] if key == Key.MODEL else models[0]
    return st.selectbox(title, models, key=key)


def missing_workspace(workspace_id: str, store) -> None:
    """A link to a workspace the store does not show: in the trash (say when it was deleted,
    until when it can be restored, and offer to restore it), or not there at all; list the ones
    it has (never the demo's numbers in its place)."""
    trashed = store.workspace(workspace_id)
    if trashed is not None and trashed.deleted is not None:
        st.error(f"The workspace in this link, **{plain(trashed.name)}**, was moved to the trash at "
                 f"{plain(when(trashed.deleted))} UTC; it can be restored for {trash_days():g} days after that.",
                 icon=":material/delete:")
        if not store.read_only and st.button("Restore it", icon=":material/restore_from_trash:",
                                              key="restore_linked"):
            from dashboard.workspace import Workspace

            state.use_workspace(Workspace.from_saved(store.restore_workspace(workspace_id)))
            st.rerun()
    else:
        st.error(f"The workspace in this link ({plain(workspace_id)}) is not in the store at {plain(store.home)}: "
                 "it was purged from the trash, or the link comes from another rankscope server.",
                 icon=":material/link_off:")
    names = [plain(w.name) for w in store.workspaces()]
    st.markdown("Open one of the saved workspaces on the Data page" + (f": {', '.join(names)}." if names else
                                                                        " (there are none yet), or upload files."))


def version_notice(store) -> None:
    """When the open workspace has been saved over under its name: say that this link shows
    the files as they were, and offer the newest version."""
    current = state.workspace()
    saved = store.workspace(current.id) if current.id else None
    if saved is None or saved.superseded_by is None:
        return
    newest = store.latest(saved.id)
    left, right = st.columns([4, 1], vertical_alignment="center")
    left.info(f"This link opens **{plain(saved.name)}** as it was saved at {plain(when(saved.updated))} UTC. "
              + (f"A newer version, **{plain(newest.name)}**, was saved at {plain(when(newest.updated))} UTC."
                 if newest is not None and newest.live else "Newer versions have been saved since."),
              icon=":material/history:")
    if newest is not None and newest.live and right.button("Open the newest version", icon=":material/update:",
                                                           key="open_newest"):
        from dashboard.workspace import Workspace

        state.use_workspace(Workspace.from_saved(store.verify(newest)))
        st.rerun()


def when(stamp: str) -> str:
    """A stored time (ISO, UTC) as the pages show it: "2026-11-26 02:34"."""
    return stamp[:16].replace("T", " ")


def show_error(error: Exception) -> None:
    """An error as a message in plain words (and the offending rows), never a traceback."""
    if isinstance(error, InputError):
        problem, fix = error.parts(SETTING_WORDS)
        st.error(f"**{plain(error.source)}**: {plain(problem)}\n\n**How to fix it:** {plain(fix)}" if problem
                 else plain(error.text(SETTING_WORDS)),
                 icon=":material/error:")
        if error.rows is not None and len(error.rows):
            st.caption(f"Offending rows ({len(error.rows)} shown, numbered as in the file, header excluded):")
            st.dataframe(error.rows.head(20), width="stretch")
    else:
        logging.getLogger("rankscope").error("unexpected error on a page", exc_info=error)
        st.error("Something went wrong while computing this page. Your data was not changed. Try other settings or "
                 "reload the demo workspace; if it happens again, please report it.", icon=":material/error:")
        if os.environ.get("RANKSCOPE_DEBUG"):
            st.exception(error)


MODEL_COLUMN = {"_index": st.column_config.TextColumn("model", width="medium")}  # (a table's model index, whole)


def download_table(frame: pd.DataFrame | Callable[[], pd.DataFrame], name: str, key: str) -> None:
    """A CSV download of ``frame`` (or of what it returns: a table made only when asked for),
    written only when the button is clicked (written on every run, a large per-user table cost
    seconds each time the page was drawn)."""
    st.download_button(f"Download {name} (CSV)", lambda: (frame() if callable(frame) else frame).to_csv(
        index=True).encode(), f"{name}.csv", "text/csv", key=key, on_click="ignore")


def chart(figure: alt.TopLevelMixin, name: str, key: str) -> None:
    """Show a chart with a download of its Vega-Lite JSON (PNG/SVG from the chart's menu). Charts
    stacked one above the other are drawn one by one, each stretched to its column (stretched
    together, each part took the column's whole width and the legend fell off its right edge)."""
    for part in figure.vconcat if isinstance(figure, alt.VConcatChart) else [figure]:
        st.altair_chart(part, width="stretch")
    st.download_button("Download chart (Vega-Lite JSON)", lambda: figure.to_json().encode(), f"{name}.vl.json",
                       "application/json", key=key, on_click="ignore")


def metric_help(name: str, users: int, k: int) -> str:
    """The card's tooltip: the metric's full name (a narrow card cuts its label), its formula and
    its users."""
    info = METRICS[name]
    return f"**{label(name, k)}** = {info.formula}. Averaged over {users:,} users."
