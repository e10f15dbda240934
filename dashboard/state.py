"""The app's state: which workspace, which settings, and cached evaluation.

Every ``st.session_state`` key the app uses is named here. Choices survive page switches
and are mirrored in the URL's query parameters, so a view can be shared by its link.
Evaluation is cached on the workspace fingerprint (every byte hashed) plus the settings:
moving the K slider or switching pages never repeats the parsing and the join.
"""

from __future__ import annotations

import contextlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace

import numpy as np
import pandas as pd
import streamlit as st

from dashboard.workspace import Workspace, demo_workspace
from metrics_core import Dataset, Evaluation, Settings, settings_for
from metrics_core.metrics import registry
from metrics_core.settings import Encoding, encoding_for

WORKSPACE = "workspace"
SETTING_KEYS = ("k", "beta", "ap_denominator", "gain", "preset", "users_without_relevant", "users_without_list")
SHARED_KEYS = (*SETTING_KEYS, "baseline", "model", "case_user", "metric", "model_b")
QUERY_KEYS = ("k", "baseline", "model", "case_user", "metric", "preset", "model_b")
DEFAULTS = {"k": 10, "beta": 1.0, "ap_denominator": "min_k_relevant", "gain": "linear", "preset": "rankscope",
            "users_without_relevant": "exclude", "users_without_list": "zero", "metric": "ndcg"}
CASTS = {"k": int, "beta": float}


def start() -> None:
    """Run first on every rerun: defaults, values from the URL, widget values kept.

    A URL value is applied when it differs from what the app itself last wrote there: the
    first visit of a shared link, or a link such as the Users page's "open this user's case".
    """
    if WORKSPACE not in st.session_state:
        st.session_state[WORKSPACE] = demo_workspace()
    if "_started" not in st.session_state:
        st.session_state["_started"] = True
        for key, value in DEFAULTS.items():
            st.session_state.setdefault(key, value)
    published = st.session_state.setdefault("_published", {})
    for key in QUERY_KEYS:
        value = st.query_params.get(key)
        if value is not None and value != published.get(key):
            with contextlib.suppress(ValueError):
                st.session_state[key] = CASTS.get(key, str)(value)
            published[key] = value
    for key in SHARED_KEYS:  # keep widget values when the page that shows them is not rendered
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def publish_query_params() -> None:
    """Mirror the shareable choices in the URL (and remember what was written)."""
    published = st.session_state.setdefault("_published", {})
    for key in QUERY_KEYS:
        value = st.session_state.get(key)
        if value is not None and st.query_params.get(key) != str(value):
            st.query_params[key] = str(value)
        if value is not None:
            published[key] = str(value)


def workspace() -> Workspace:
    return st.session_state[WORKSPACE]


def use_workspace(new: Workspace) -> None:
    st.session_state[WORKSPACE] = new
    for key in ("model", "baseline", "case_user", "model_b"):
        st.session_state.pop(key, None)


EXPOSED = ("ap_denominator", "gain", "users_without_relevant", "users_without_list")


def settings() -> Settings:
    """The current settings: the preset's conventions with the sidebar's choices on top."""
    base = settings_for(st.session_state.get("preset", "rankscope"))
    chosen = {key: st.session_state.get(key, DEFAULTS[key]) for key in ("k", "beta", *EXPOSED)}
    return replace(base, **chosen)


def apply_preset() -> None:
    """When the preset changes, show its choices in the sidebar (the user may then adjust)."""
    preset = settings_for(st.session_state.get("preset", "rankscope"))
    for key in EXPOSED:
        st.session_state[key] = getattr(preset, key)


def encoding() -> Encoding:
    """How the current preset orders lists (fixed when the data is encoded)."""
    return encoding_for(st.session_state.get("preset", "rankscope"))


def data_key() -> str:
    """What the encoded data depends on: every uploaded byte, the mapping and the encoding (the
    cache key of everything computed from it)."""
    chosen = encoding()
    return f"{workspace().fingerprint()}:{chosen.order}:{chosen.tie_break}"


@st.cache_resource(max_entries=4, show_spinner=False)
def _dataset(fingerprint: str, order: str, tie_break: str, _workspace: Workspace) -> Dataset:
    return _workspace.build(Encoding(order, tie_break))


def dataset() -> Dataset:
    """The encoded dataset of the current workspace (parsed and joined once per encoding)."""
    ws, chosen = workspace(), encoding()
    with st.spinner("Reading and joining the data…"):
        return _dataset(ws.fingerprint(), chosen.order, chosen.tie_break, ws)


@st.cache_resource(max_entries=12, show_spinner=False)  # shared, not copied: pages only read it
def _evaluations(fingerprint: str, settings_items: tuple, _dataset: Dataset) -> dict[str, Evaluation]:
    current = Settings(**dict(settings_items))
    with ThreadPoolExecutor(min(2, len(_dataset.models))) as pool:  # numpy releases the GIL
        done = pool.map(lambda name: (name, _dataset.evaluate(name, current)), _dataset.models)
        return dict(done)


def evaluations(current: Settings | None = None) -> dict[str, Evaluation]:
    """Every model's evaluation at the current settings (computed once per settings)."""
    current = current or settings()
    data = dataset()
    with st.spinner("Computing metrics…"):
        return _evaluations(data_key(), tuple(asdict(current).items()), data)


def evaluation(model: str, current: Settings | None = None) -> Evaluation:
    return evaluations(current)[model]


def max_positions() -> int:
    data = dataset()
    return max(lists.positions for lists in data.lists.values())


@st.cache_data(max_entries=32, show_spinner=False)
def _comparison(fingerprint: str, settings_items: tuple, baseline: str, metrics: tuple, test: str, correction: str,
                resamples: int, seed: int, _results: dict):
    from metrics_core.stats.compare import compare

    return compare(_results, baseline, list(metrics), test, correction, resamples, seed)


def comparison(results: dict, baseline: str, metrics: list[str], test: str = "wilcoxon", correction: str = "holm",
               resamples: int = 1000, seed: int = 0):
    """Paired tests and bootstrap intervals against ``baseline`` (cached with the settings)."""
    current = settings()
    with st.spinner("Bootstrapping confidence intervals…"):
        return _comparison(data_key(), tuple(asdict(current).items()), baseline, tuple(metrics), test,
                           correction, resamples, seed, results)


def comparable_metrics(results: dict) -> list[str]:
    """Metrics with per-user values in every model (those that can be tested and bootstrapped)."""
    return [m for m, column in registry.per_user_columns().items()
            if all(column in r.per_user.columns and r.per_user[column].notna().any() for r in results.values())]


def segments(choice: str) -> pd.Series | None:
    """The segment of every user id: an activity quartile or a user attribute (None: no slicing)."""
    data = dataset()
    ids = pd.Index(data.users.ids)
    if choice == ACTIVITY:
        if data.training is None:
            return None
        counts = pd.Series(data.training.items_per_user, index=ids)
        return pd.qcut(counts.rank(method="first"), 4, labels=["least active", "less active", "more active",
                                                               "most active"]).astype(str).rename("activity")
    if data.user_table is None or choice not in data.user_table.columns:
        return None
    values = data.user_attribute(choice)
    return pd.Series(values.reindex(range(len(ids))).to_numpy(), index=ids).astype(str).rename(choice)


def segment_choices() -> list[str]:
    data = dataset()
    choices = [ACTIVITY] if data.training is not None else []
    if data.user_table is not None:
        choices += [c for c in data.user_table.columns if c != data.columns.user]
    return choices


ACTIVITY = "activity (training interactions)"


@st.cache_data(max_entries=64, show_spinner=False)
def _card_intervals(fingerprint: str, settings_items: tuple, model: str, resamples: int, _result) -> dict:
    from metrics_core.stats.compare import bootstrap_means

    per_user = _result.per_user
    columns = registry.per_user_columns()
    names = [m for m, c in columns.items() if m in _result.metrics and c in per_user.columns]
    if not names:
        return {}
    table = pd.DataFrame({m: per_user[columns[m]] for m in names})
    accuracy = [m for m in names if registry.METRICS[m].family == "accuracy"]
    table.loc[~per_user["evaluated"].to_numpy(), accuracy] = np.nan  # accuracy: evaluated users only
    bounds = bootstrap_means(table.to_numpy(dtype=np.float64), resamples, seed=0)
    return {m: (float(lo), float(hi)) for m, (lo, hi) in zip(names, bounds, strict=True)}


def card_intervals(model: str, resamples: int = 200) -> dict[str, tuple[float, float]]:
    """95% bootstrap interval of each per-user-mean metric of ``model`` (its own users)."""
    current = settings()
    return _card_intervals(data_key(), tuple(asdict(current).items()), model, resamples,
                           evaluation(model, current))


@dataclass
class Page:
    """What an analysis page starts from: the settings, every model's evaluation, the dataset."""

    settings: Settings
    results: dict[str, Evaluation]
    models: list[str]
    dataset: Dataset

    @property
    def k(self) -> int:
        return self.settings.k


def page() -> Page:
    current = settings()
    results = evaluations(current)
    return Page(current, results, list(results), dataset())
