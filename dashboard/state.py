"""The app's state: which workspace, which settings, and cached evaluation.

Every ``st.session_state`` key the app uses is named here. Choices survive page switches
and are mirrored in the URL's query parameters, so a view can be shared by its link.
Evaluation is cached on the workspace fingerprint (every byte hashed) plus the settings:
moving the K slider or switching pages never repeats the parsing and the join.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import asdict, replace
from typing import Any, get_args

import pandas as pd
import pyarrow.parquet as pq
import streamlit as st

from dashboard import progress
from dashboard.cache import from_environment
from dashboard.workspace import Workspace, demo_workspace
from metrics_core import Dataset, Evaluation, Settings, settings_for
from metrics_core._numeric.parallel import map_threads
from metrics_core.at_k import AtK, filled, read_at
from metrics_core.inputs.encode import load_kernels_meanwhile
from metrics_core.inputs.read import StoredTable
from metrics_core.metrics import registry
from metrics_core.settings import FIELD_TYPES, PRESETS, Encoding, encoding_for
from metrics_core.stats.compare import CORRECTIONS, TESTS, aggregate_intervals
from metrics_core.stats.segments import ACTIVITY, user_segments
from metrics_core.stats.segments import segment_choices as choices_of_segments
from metrics_core.store import Store, default_home
from metrics_core.store.encoded import encoded_key, load_dataset, save_dataset, worth_keeping
from metrics_core.store.links import DEFAULT_PRESET, LINKED_SETTINGS
from metrics_core.store.results import known_positions, load_results, results_key, save_results


class Key:
    """Every session-state key that holds a choice, named once (pages use these names; widget
    keys of download buttons, which hold no choice, stay local to their page)."""

    K = "k"
    BETA = "beta"
    RBP_P = "rbp_p"
    AP_DENOMINATOR = "ap_denominator"
    GAIN = "gain"
    PRESET = "preset"
    USERS_WITHOUT_RELEVANT = "users_without_relevant"
    USERS_WITHOUT_LIST = "users_without_list"
    SIMILARITY = "similarity"
    NOVELTY_UNKNOWN = "novelty_unknown"
    PRIMITIVE_MODEL = "primitive_model"
    PRIMITIVE_SCALE = "primitive_scale"
    BASELINE = "baseline"
    MODEL = "model"
    MODEL_B = "model_b"
    CASE_USER = "case_user"
    METRIC = "metric"
    USERS_METRIC = "users_metric"
    USERS_SEGMENT = "users_segment"
    ITEM_ATTRIBUTE = "item_attribute"
    SERVED_BY = "served_by"
    USER_ATTRIBUTE = "user_attribute"
    TESTED_METRICS = "tested_metrics"
    TEST = "test"
    CORRECTION = "correction"
    RESAMPLES = "resamples"
    SEED = "seed"
    COMPARE_SEGMENT = "compare_segment"
    SEGMENT_MODEL = "segment_model"
    SEGMENT_METRIC = "segment_metric"
    SCATTER_METRIC = "scatter_metric"
    OVERLAP_MEASURE = "overlap_measure"
    COMPARE_CURVE = "compare_curve"
    COMPARE_TAB = "compare_tab"
    CARD_INTERVALS = "card_intervals"
    EVERY_METRIC = "every_metric"
    PRESENT = "present"
    HISTORY_SCOPE = "history_scope"
    HISTORY_MODEL = "history_model"
    HISTORY_METRIC = "history_metric"
    HISTORY_FIRST = "history_first"
    HISTORY_SECOND = "history_second"
    UPLOAD_RECS = "upload_recs"
    UPLOAD_TRUTH = "upload_truth"
    UPLOAD_TRAIN = "upload_train"
    UPLOAD_ITEMS = "upload_items"
    UPLOAD_USERS = "upload_users"


WORKSPACE, MISSING = "workspace", "missing_workspace"
WORKSPACE_PARAM = "ws"
STARTED, PUBLISHED = "_started", "_published"
BASELINE_IS_PRIMITIVE = "(the baseline)"
# the Compare page's tabs, in order (only the open one runs)
COMPARE_TABS = ("Side by side", "Is the difference real?", "Who gains, who loses", "Who is served", "User by user",
                "Every cut-off", "Export")
UPLOAD_KEYS = (Key.UPLOAD_RECS, Key.UPLOAD_TRUTH, Key.UPLOAD_TRAIN, Key.UPLOAD_ITEMS, Key.UPLOAD_USERS)
# every choice a page offers: kept across page switches and written in the URL
SHARED_KEYS = tuple(v for k, v in vars(Key).items() if k.isupper() and v not in UPLOAD_KEYS)
QUERY_KEYS = SHARED_KEYS
LIST_KEYS = (Key.TESTED_METRICS,)
# the settings' defaults are the library's (a link from `rankscope evaluate --save` names the others)
DEFAULTS = {**{key: getattr(Settings(), key) for key in LINKED_SETTINGS}, Key.PRESET: DEFAULT_PRESET,
            Key.METRIC: "ndcg", Key.PRIMITIVE_MODEL: BASELINE_IS_PRIMITIVE, Key.TEST: "wilcoxon",
            Key.CORRECTION: "holm", Key.RESAMPLES: 1000, Key.SEED: 0, Key.EVERY_METRIC: False,
            Key.PRESENT: False}
CASTS = {Key.K: int, Key.BETA: float, Key.RBP_P: float, Key.RESAMPLES: int, Key.SEED: int,
         Key.CARD_INTERVALS: lambda text: {"True": True, "False": False}[text],
         Key.EVERY_METRIC: lambda text: {"True": True, "False": False}[text],
         Key.PRESENT: lambda text: {"True": True, "False": False}[text]}
# what a URL value must be to be used (anything else falls back to the default, with a message)
def _named_values(kind) -> tuple[str, ...]:
    """The names a setting's type allows (``gain`` also takes a table of gains: its names only)."""
    return tuple(value for arg in get_args(kind) for value in (_named_values(arg) if get_args(arg) else [arg])
                 if isinstance(value, str))


def _one_of(choices) -> tuple:
    """A link value's check: one of ``choices`` (the library's own list of them)."""
    return (lambda v: v in choices, "one of " + ", ".join(choices))


VALID = {Key.K: (lambda v: 1 <= v <= 100_000, "a whole number from 1"),
         Key.BETA: (lambda v: 0.1 <= v <= 10, "a number from 0.1 to 10"),
         Key.RBP_P: (lambda v: 0.05 <= v <= 0.99, "a number from 0.05 to 0.99"),
         Key.RESAMPLES: (lambda v: 0 <= v <= 100_000, "a whole number from 0 to 100,000"),
         Key.SEED: (lambda v: 0 <= v < 2**32, "a whole number from 0"),
         Key.PRESET: _one_of(tuple(PRESETS)), Key.TEST: _one_of(TESTS), Key.CORRECTION: _one_of(CORRECTIONS),
         Key.COMPARE_TAB: _one_of(COMPARE_TABS),
         **{key: _one_of(_named_values(FIELD_TYPES[key])) for key in (
             Key.AP_DENOMINATOR, Key.GAIN, Key.USERS_WITHOUT_RELEVANT, Key.USERS_WITHOUT_LIST, Key.SIMILARITY,
             Key.NOVELTY_UNKNOWN, Key.PRIMITIVE_SCALE)}}
LINK_PROBLEMS = "_link_problems"  # what the link asked for that could not be used, shown once
CACHE = from_environment()


@st.cache_resource(show_spinner=False)
def _store(home: str) -> Store:
    return Store(home)


def store() -> Store:
    """The run store at ``RANKSCOPE_HOME`` (InputError naming the fix when it cannot be used)."""
    return _store(str(default_home().resolve()))


def start() -> None:
    """Run first on every rerun: the workspace of the link, defaults, values from the URL,
    widget values kept.

    A URL value is applied when it differs from what the app itself last wrote there: the
    first visit of a shared link, or a link such as the Users page's "open this user's case".
    """
    published = st.session_state.setdefault(PUBLISHED, {})
    _open_linked_workspace(published)
    if STARTED not in st.session_state:
        st.session_state[STARTED] = True
        for key, value in DEFAULTS.items():
            st.session_state.setdefault(key, value)
    for key in QUERY_KEYS:
        value = st.query_params.get_all(key) if key in LIST_KEYS else st.query_params.get(key)
        if value is not None and value != [] and _text(value) != published.get(key):
            _apply_link_value(key, value)
            published[key] = _text(value)
    for key in SHARED_KEYS:  # keep widget values when the page that shows them is not rendered
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def _apply_link_value(key: str, value) -> None:
    """Use a URL value when it is valid for ``key``; otherwise keep the current (default) value
    and remember a message naming the value and what it must be."""
    if key in LIST_KEYS:
        st.session_state[key] = value
        return
    try:
        cast = CASTS.get(key, str)(value)
        valid, wanted = VALID.get(key, (lambda _: True, ""))
        if (isinstance(cast, float) and not math.isfinite(cast)) or not valid(cast):
            raise ValueError(wanted)
    except (ValueError, KeyError, TypeError):
        wanted = VALID.get(key, (None, "a value this page offers"))[1] or "a value this page offers"
        used = st.session_state.get(key, DEFAULTS.get(key))
        st.session_state.setdefault(LINK_PROBLEMS, []).append(
            f"The link's {key}={value} is not valid ({key} must be {wanted}); {used} is used instead.")
        return
    st.session_state[key] = cast


def link_problems() -> list[str]:
    """What the link asked for that could not be used (each said once)."""
    return st.session_state.pop(LINK_PROBLEMS, [])


def _open_linked_workspace(published: dict) -> None:
    """The saved workspace named by ``?ws=`` (on a reload, in a second browser, after a
    restart); a link to a workspace that is not in the store is remembered as missing, and the
    pages say so instead of showing other data."""
    linked = st.query_params.get(WORKSPACE_PARAM)
    current = st.session_state.get(WORKSPACE)
    if linked and linked != published.get(WORKSPACE_PARAM) and (current is None or current.id != linked):
        published[WORKSPACE_PARAM] = linked
        saved = store().workspace(linked)
        if saved is None or saved.deleted is not None:
            st.session_state[MISSING] = linked
        else:  # (a superseded workspace opens as it was saved: the pages say a newer version exists)
            use_workspace(Workspace.from_saved(store().verify(saved)))
    if WORKSPACE not in st.session_state:
        st.session_state[WORKSPACE] = demo_workspace()


def missing_workspace() -> str | None:
    """The id in the link when no live or superseded saved workspace has it (purged, never
    saved here, or in the trash)."""
    return st.session_state.get(MISSING)


def _text(value) -> str:
    return ",".join(value) if isinstance(value, list) else str(value)


def publish_query_params() -> None:
    """Mirror the workspace and the shareable choices in the URL (and remember what was
    written); a choice still at its default is left out until it has been changed."""
    published = st.session_state.setdefault(PUBLISHED, {})
    current = workspace().id if not missing_workspace() else st.session_state[MISSING]
    if current and st.query_params.get(WORKSPACE_PARAM) != current:
        st.query_params[WORKSPACE_PARAM] = current
    elif not current and WORKSPACE_PARAM in st.query_params:
        del st.query_params[WORKSPACE_PARAM]
    published[WORKSPACE_PARAM] = current
    for key in QUERY_KEYS:
        value = st.session_state.get(key)
        if value is None or (key not in st.query_params and value == DEFAULTS.get(key)):
            continue
        if key in LIST_KEYS:
            if st.query_params.get_all(key) != [str(v) for v in value]:
                st.query_params[key] = [str(v) for v in value]
        elif st.query_params.get(key) != str(value):
            st.query_params[key] = str(value)
        published[key] = _text([str(v) for v in value] if key in LIST_KEYS else value)


def workspace() -> Workspace:
    return st.session_state[WORKSPACE]


def use_workspace(new: Workspace) -> None:
    st.session_state[WORKSPACE] = new
    st.session_state.pop(MISSING, None)
    for key in (Key.MODEL, Key.BASELINE, Key.CASE_USER, Key.MODEL_B, Key.SEGMENT_MODEL, Key.TESTED_METRICS):
        st.session_state.pop(key, None)


EXPOSED = (Key.AP_DENOMINATOR, Key.GAIN, Key.USERS_WITHOUT_RELEVANT, Key.USERS_WITHOUT_LIST, Key.SIMILARITY,
           Key.NOVELTY_UNKNOWN, Key.PRIMITIVE_SCALE)


def chosen_settings() -> Settings:
    """The preset's conventions with the sidebar's choices on top (the primitive model left
    to :func:`settings`, which knows the workspace's models)."""
    base = settings_for(st.session_state.get(Key.PRESET, "rankscope"))
    chosen = {key: st.session_state.get(key, DEFAULTS[key]) for key in (Key.K, Key.BETA, Key.RBP_P, *EXPOSED)}
    return replace(base, **chosen)


def settings() -> Settings:
    """The current settings: :func:`chosen_settings`, and the primitive model (serendipity
    against it, unexpectedness): the baseline unless chosen."""
    primitive = st.session_state.get(Key.PRIMITIVE_MODEL, BASELINE_IS_PRIMITIVE)
    primitive = st.session_state.get(Key.BASELINE) if primitive == BASELINE_IS_PRIMITIVE else primitive
    known = primitive in model_names()
    return replace(chosen_settings(), primitive_model=primitive if known else None)  # None: the first model


def apply_preset() -> None:
    """When the preset changes, show its choices in the sidebar (the user may then adjust)."""
    preset = settings_for(st.session_state.get(Key.PRESET, "rankscope"))
    for key in EXPOSED:
        st.session_state[key] = getattr(preset, key)


def encoding() -> Encoding:
    """How the current preset orders lists (fixed when the data is encoded)."""
    return encoding_for(st.session_state.get(Key.PRESET, "rankscope"))


def data_key() -> str:
    """What the encoded data depends on: every uploaded byte, the mapping and the encoding (the
    cache key of everything computed from it)."""
    return _data_key(workspace(), encoding())


def _data_key(ws: Workspace, chosen: Encoding) -> str:
    return f"{ws.fingerprint()}:{chosen.order}:{chosen.tie_break}"


def model_names() -> list[str]:
    """The open workspace's models, in order (known without reading its tables)."""
    return [str(name) for name in workspace().models]


def _dataset_key(ws: Workspace, chosen: Encoding) -> str:
    return f"data:{_data_key(ws, chosen)}"


def dataset_of(ws: Workspace, chosen: Encoding | None = None) -> Dataset:
    """The encoded dataset of ``ws``: parsed and joined once per workspace, mapping and encoding,
    shared by the Data page's check and every analysis page (kept in the bounded cache)."""
    chosen = chosen or encoding()
    return progress.cached(CACHE, _dataset_key(ws, chosen), reading_words(ws),
                           lambda say: _read_or_build(ws, chosen, say))


def _prepare_dataset(ws: Workspace) -> None:
    """Start reading the workspace's tables on a worker thread, without waiting (a page that needs
    them later finds them ready, or shows how far the reading has come)."""
    chosen = encoding()
    progress.start(CACHE, _dataset_key(ws, chosen), reading_words(ws), lambda say: _read_or_build(ws, chosen, say))


def _read_or_build(ws: Workspace, chosen: Encoding, say: progress.Say) -> Dataset:
    """A saved workspace's encoded dataset as kept in the store (:mod:`metrics_core.store.encoded`:
    its arrays mapped from disk), else its tables read and encoded; a large one is then kept for
    the next open (written meanwhile)."""
    kept_as = encoded_key(ws.fingerprint(), chosen) if ws.id else None
    if kept_as is not None:
        say("Opening the encoded tables kept with this workspace…")
        kept = load_dataset(store().home, kept_as)
        if kept is not None:
            load_kernels_meanwhile()  # (numba for the pages' compiled passes: a read dataset had it loaded)
            if kept.scores_to_count():  # (kept before counts were kept with it: counted meanwhile, 1.7 s
                # at 1M users x 100 x 4 models on both cores; nothing else is counted ahead: the training
                # per-item counts and the category mix, with more, took 3 s and slowed the first pages)
                progress.in_background(kept.count_scores, f"counting the scores of workspace {ws.id}")
            return kept
    data = ws.build(chosen, say)
    if kept_as is not None and not store().read_only and worth_keeping(data):
        home = store().home

        def keep() -> None:
            try:
                data.ready_to_keep()  # (kept with it: a reopened workspace's pages count and copy nothing)
                save_dataset(home, kept_as, data)
            finally:  # (the copies of the first places are for the mapped dataset, kept or not: in memory
                for lists in data.lists.values():  # beside the lists they held 1 GB more at 1M users x 4)
                    lists.drop_first_places()

        progress.in_background(keep, f"keeping the encoded tables of workspace {ws.id}")
    return data


def reading_words(ws: Workspace) -> str:
    """What building a workspace's dataset does, in words (shown while it runs)."""
    others = [label for role, label in (("train", "training interactions"), ("items", "item features"),
                                        ("users", "user features")) if getattr(ws, role) is not None]
    tables = [f"{len(ws.models)} model{'s' * (len(ws.models) > 1)}' recommendations", "the ground truth", *others]
    return (f"Reading and checking {len(ws.models) + 1 + len(others)} tables ({', '.join(tables)}), then joining "
            "each list to the ground truth… (once per workspace: every page and session reuses it)")


def dataset() -> Dataset:
    """The encoded dataset of the current workspace."""
    return dataset_of(workspace())


def evaluations(current: Settings | None = None) -> dict[str, Evaluation]:
    """Every model's evaluation at the current settings (computed once per settings).

    A saved workspace keeps its evaluations in the store (:mod:`metrics_core.store.results`):
    opening it again at the same settings (another session, a restarted server) reads them, and
    the tables are read meanwhile on a worker thread for the pages and the K that need them.

    The metric@k curves (k = 1 .. a model's longest list) do not depend on K, so once one evaluation
    at these settings has computed them, another K up to every model's longest list evaluates each
    model at K alone (``curves=False``: at 1M users x 100 with candidates, a fifth of the work) and
    takes the curves already computed."""
    current = current or settings()
    ws = workspace()
    key, every_k = _evaluations_key(current), _every_k_key(current)
    kept_as = results_key(ws.fingerprint(), encoding(), current) if ws.id else None
    known_results = CACHE.peek(key)
    if known_results is not None:
        return CACHE.get(key, lambda: known_results)  # (named as this session's)
    if kept_as is not None:
        with st.spinner("Reading the evaluation saved with this workspace…"):
            kept = load_results(store().home, kept_as, current, encoding())
        if kept is not None:
            results, positions = kept
            CACHE.get(every_k, lambda: _every_k_of(results, positions))
            _prepare_dataset(ws)
            return CACHE.get(key, lambda: results)
    data = dataset()
    longest = {name: lists.positions for name, lists in data.lists.items()}
    known = CACHE.peek(every_k) if current.k <= min(longest.values()) else None
    models = f"{len(data.models)} model{'s' * (len(data.models) > 1)}"
    home = store().home if kept_as is not None and not store().read_only else None

    def work(say: progress.Say) -> dict[str, Evaluation]:
        if known is not None:
            return {name: replace(result, curves=known[name].curves, beyond_curves=known[name].beyond_curves)
                    for name, result in data.evaluate_all(current, curves=False, progress=say).items()}
        results = data.evaluate_all(current, progress=say, beyond_curves=True)
        CACHE.get(every_k, lambda: _every_k_of(results, longest))
        if home is not None:  # (kept for the next open, written meanwhile)
            progress.in_background(lambda: save_results(home, kept_as, results, longest),
                                   f"keeping the evaluation of workspace {ws.id}")
        return results

    kept_note = "" if home is None or known is not None else (
        "Once evaluated at these settings, the evaluation is kept with the workspace: the next open reads it, in "
        f"any session and after a restart. `rankscope workspaces prepare {ws.id}` evaluates ahead of the first open "
        "(after an upgrade of rankscope, `--all`).")
    return progress.cached(CACHE, key, f"Evaluating {models} at K = {current.k}…", work, kept_note)


def _evaluations_key(current: Settings) -> str:
    return f"evaluations:{data_key()}:{tuple(asdict(current).items())}"


def _every_k_key(current: Settings) -> str:
    return f"curves:{data_key()}:{tuple({**asdict(current), 'k': None}.items())}"


def _every_k_of(results: dict[str, Evaluation], positions: dict[str, int]) -> dict[str, Evaluation]:
    """What another K reads from the first evaluation at these settings: each model's evaluation
    without its per-user table (small: kept beside the evaluations), its curves up to its longest list."""
    return {name: replace(result, per_user=result.per_user.iloc[:0], curves=result.curves.loc[:positions[name]])
            for name, result in results.items()}


def read_at_k(names: list[str]) -> dict[str, AtK] | None:
    """Every model's aggregates at the current K read from the curves of the first evaluation at
    these settings (:func:`metrics_core.at_k.read_at`: a new K in a blink, no per-user table), with
    those of ``names`` that the curves lack computed alone (:meth:`~metrics_core.Dataset.metrics_at`:
    score entropy, calibration, LRAP, ...). None when the evaluation at this K is known already (a
    page takes it) or when no evaluation at these settings is known yet."""
    current = settings()
    bases = CACHE.peek(_every_k_key(current))
    if bases is None or CACHE.peek(_evaluations_key(current)) is not None or \
            any(current.k not in base.curves.index for base in bases.values()):
        return None

    def read() -> dict[str, AtK]:
        read = {name: read_at(base, current.k) for name, base in bases.items()}  # (notes from the kept counts)
        for name, at_k in read.items():
            if at_k.warnings is None:  # (counts not kept, or scores past those kept: the tables tell)
                at_k.warnings = dataset().warnings_at(name, current)
        return read

    with st.spinner(f"Reading every model at K = {current.k} from the curves…"):
        at_k = CACHE.get(f"at_k:{data_key()}:{tuple(asdict(current).items())}", read)
    wanted = sorted({name for name in names for read in at_k.values() if name in read.missing})
    if not wanted:
        return at_k
    data = dataset()

    def computed(say: progress.Say) -> dict[str, Evaluation]:
        return dict(zip(at_k, map_threads(lambda model: data.metrics_at(  # (the notes: read already; no per-user join)
            model, current, [name for name in wanted if name in at_k[model].missing], notes=False, joined=False),
            list(at_k)), strict=True))

    alone = progress.cached(CACHE, f"metrics_at:{data_key()}:{tuple(asdict(current).items())}:{tuple(wanted)}",
                            f"Computing {', '.join(wanted)} at K = {current.k} for {len(at_k)} model(s)…", computed)
    return {model: filled(read, alone[model]) for model, read in at_k.items()}


def per_user_at_k(columns: list[str], models: list[str] | None = None) -> dict[str, pd.DataFrame]:
    """Each model's (of ``models``; None: every model) per-user ``columns`` (with ``hits`` and
    ``evaluated``) at the current settings: from the evaluation at K when it is known, else those
    columns alone (:meth:`~metrics_core.Dataset.per_user_at`: the Users page at a new K evaluates
    one metric, not every one), kept per model, settings and columns, so that a tab reading two
    models computes those two, and a page reading them all later computes only the others."""
    current = settings()
    known = CACHE.peek(_evaluations_key(current))
    if known is not None:
        evaluated = CACHE.get(_evaluations_key(current), lambda: known)
        return {name: evaluated[name].per_user for name in models or evaluated}
    data = dataset()
    wanted = list(models or data.models)
    key = f"per_user:{data_key()}:{tuple(asdict(current).items())}:{tuple(columns)}"

    def computed(name: str) -> pd.DataFrame:
        return data.per_user_at(name, current, columns)

    missing = [name for name in wanted if f"{key}:{name!r}" not in CACHE]
    if missing:
        def work(say: progress.Say) -> None:
            for name, frame in zip(missing, map_threads(computed, missing), strict=True):
                CACHE.get(f"{key}:{name!r}", lambda frame=frame: frame)

        words = f"Computing {', '.join(columns)} per user at K = {current.k} for {len(missing)} model(s)…"
        progress.cached(CACHE, f"per_user_work:{key}:{tuple(missing)!r}", words, work)
    return {name: CACHE.get(f"{key}:{name!r}", lambda name=name: computed(name)) for name in wanted}


def values_at_k(results: dict[str, Evaluation | AtK], names: list[str]) -> dict[str, pd.DataFrame]:
    """Every model's per-user columns of the beyond-accuracy ``names`` over the users they have a
    value for, at the current settings: from ``results`` when they are evaluations at K, else
    computed alone without the accuracy pass or the join with the evaluated users
    (:meth:`~metrics_core.Dataset.metrics_at` with ``joined=False``: what a page that draws only
    their distribution needs; Scores' score entropy at a new K), kept per settings and names."""
    if all(isinstance(result, Evaluation) for result in results.values()):
        return {name: result.per_user[[column for column in names if column in result.per_user.columns]]
                for name, result in results.items()}
    current = settings()
    data = dataset()
    words = f"Computing {', '.join(names)} per user at K = {current.k} for {len(results)} model(s)…"
    return progress.cached(CACHE, f"values:{data_key()}:{tuple(asdict(current).items())}:{tuple(names)}", words,
                           lambda say: dict(zip(results, map_threads(lambda name: data.metrics_at(
                               name, current, names, notes=False, joined=False).per_user, list(results)),
                               strict=True)))


def with_per_user(results: dict[str, Evaluation | AtK], columns: list[str],
                  models: list[str] | None = None) -> dict[str, Evaluation]:
    """Each model's evaluation (of ``models``; None: every one in ``results``) as a page that
    tests or draws ``columns`` per user needs it: ``results`` themselves when they are evaluations
    at K, else the aggregates read at K with those per-user columns computed alone
    (:func:`per_user_at_k`; other columns absent)."""
    names = list(models or results)
    if all(isinstance(result, Evaluation) for result in results.values()):
        return {name: results[name] for name in names}
    frames = per_user_at_k(list(dict.fromkeys(columns)), names)
    return {name: Evaluation(name, at_k.settings, at_k.metrics, frames[name], at_k.curves, at_k.users,
                             at_k.warnings or [], at_k.skipped, at_k.left_out)
            for name, at_k in ((name, results[name]) for name in names)}


def evaluations_of(names: list[str]) -> dict[str, Evaluation]:
    """Every model at the current settings, enough for a page that reads ``names`` with their
    per-user values (the Summary's verdicts): the evaluation at K when it is known or needed, else
    their aggregates read at K (:func:`read_at_k`) and their per-user columns alone
    (:func:`with_per_user`), a new K costing those metrics, not every one."""
    read = read_at_k(names)
    if read is None:
        return evaluations()
    return with_per_user(read, [METRIC_COLUMNS[name] for name in names if name in METRIC_COLUMNS])


def evaluated_when_asked(results: dict[str, Evaluation | AtK]) -> Callable[[], dict[str, Evaluation]]:
    """Every model's whole evaluation at the current settings for a download, which runs after the
    page outside its session: ``results`` themselves when they are evaluations, else evaluated at K
    on the first click (and kept for the others), with the curves already read."""
    if all(isinstance(result, Evaluation) for result in results.values()):
        return lambda: results
    data, current = dataset(), settings()

    @functools.cache
    def every() -> dict[str, Evaluation]:
        return {name: replace(result, curves=results[name].curves)
                for name, result in data.evaluate_all(current, curves=False).items()}

    return every


def per_user_columns_of(result: Evaluation | AtK) -> set[str]:
    """The per-user columns ``result`` has, or for one read at K those the evaluation at K has."""
    if isinstance(result, Evaluation):
        return set(result.per_user.columns)
    return {METRIC_COLUMNS[name] for name in [*result.metrics, *result.missing] if name in METRIC_COLUMNS}


METRIC_COLUMNS = registry.per_user_columns()


def memo(name: str, parts: tuple, build: Callable[[], Any]) -> Any:
    """What a page computes from the current data and evaluation (a chart's summaries, users in
    order): built once per workspace, settings and ``parts`` (the page's own choices), kept in
    the bounded cache beside the evaluations, so that coming back to a page, or to a K seen
    before, redraws what it drew instead of summarising every user's values again."""
    return CACHE.get(f"{name}:{data_key()}:{tuple(asdict(settings()).items())}:{parts!r}", build)


def evaluation(model: str, current: Settings | None = None) -> Evaluation:
    return evaluations(current)[model]


def max_positions() -> int:
    """The longest list of the open workspace: from its dataset when read, else from an
    evaluation kept with it (so that the sidebar does not wait for the tables)."""
    ws = workspace()
    data = CACHE.peek(_dataset_key(ws, encoding()))
    if data is None and ws.id:
        known = known_positions(store().home, ws.fingerprint())
        if known is not None and set(known) == set(model_names()):
            return max(known.values())
    data = dataset() if data is None else data
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


def comparable_metrics(results: dict[str, Evaluation | AtK]) -> list[str]:
    """Metrics with per-user values in every model (those that can be tested and bootstrapped):
    a per-user column and an aggregate, which a mean of per-user values has when one has a value."""
    return [m for m, column in METRIC_COLUMNS.items()
            if all(column in per_user_columns_of(r) and (m in r.metrics or m in getattr(r, "missing", ()))
                   for r in results.values())]


def segments(choice: str) -> pd.Series | None:
    """The segment of every user id: an activity quartile or a user attribute (None: no slicing);
    once per workspace and choice."""
    return CACHE.get(f"segments:{data_key()}:{choice!r}", lambda: user_segments(dataset(), choice))


def segment_choices() -> list[str]:
    """What users can be segmented by. For a saved workspace whose tables are not read yet, from
    what it holds (training rows: activity; a user table: its columns, from the Parquet file's
    schema), so that a page offering the choice does not wait for the tables."""
    ws = workspace()
    data = CACHE.peek(_dataset_key(ws, encoding()))
    if data is None and isinstance(ws.users, StoredTable | None) and ws.id:
        attributes = [] if ws.users is None else [name for name in pq.read_schema(ws.users.path).names
                                                    if name != ws.columns.user]
        return ([ACTIVITY] if ws.train is not None else []) + attributes
    return choices_of_segments(data or dataset())


@st.cache_data(max_entries=64, show_spinner=False)
def _card_intervals(fingerprint: str, settings_items: tuple, model: str, resamples: int, _result) -> dict:
    return aggregate_intervals(_result, resamples, seed=0)


def card_intervals(model: str, resamples: int = 200) -> dict[str, tuple[float, float]]:
    """95% bootstrap interval of each per-user-mean metric of ``model`` (its own users)."""
    current = settings()
    return _card_intervals(data_key(), tuple(asdict(current).items()), model, resamples,
                           evaluation(model, current))
