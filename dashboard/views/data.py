"""Data: upload recommendations (one file per model), the ground truth and optional tables,
map their columns, and check them; or go back to the demo workspace."""

from dataclasses import replace

import streamlit as st

from dashboard import components, saved_workspaces, state
from dashboard import uploads as uploads_summary
from dashboard.state import Key
from dashboard.text import plain
from dashboard.uploads import TYPES, grade_scale_of, grade_share, numeric_columns, stored_upload, upload_limit_note
from dashboard.workspace import Workspace, demo_workspace, save
from metrics_core import Columns, InputError
from metrics_core.engines.memory.dataset import model_name

GUESSES = {
    "user": ["user_id", "user", "userid", "uid", "customer_id", "customer", "visitor_id", "query_id", "qid",
             "session_id"],
    "item": ["item_id", "item", "itemid", "movie_id", "movieid", "product_id", "product", "doc_id", "docno",
             "article_id"],
    "score": ["score", "prediction", "pred", "predicted", "probability", "logit"],
    "rank": ["rank", "position", "pos", "ranking"],
    "relevance": ["rating", "relevance", "grade", "label", "target", "clicks", "relevant", "stars", "judgment", "gain"],
}
NONE = "(none)"
UPLOAD_GENERATION = "_upload_generation"
LOADED = "_loaded"  # what the last save's check found: shown while its workspace stays open (any rerun)


WORDS = {"user": ("user", "customer", "query", "visitor", "session", "client"),
         "item": ("item", "product", "movie", "doc", "article", "track", "song", "sku")}


def guess(options: list[str], kind: str, fallback: str | None = None, taken: tuple[str, ...] = ()) -> int:
    """The index of the most likely column for a role, never one already ``taken`` by another
    role: a usual name, else a column containing a usual word, else ``fallback``, else the
    first free column."""
    free = [(i, o.lower()) for i, o in enumerate(options) if o not in taken]
    for candidate in GUESSES[kind]:
        for index, name in free:
            if name == candidate:
                return index
    for word in WORDS.get(kind, ()):
        for index, name in free:
            if word in name:
                return index
    if fallback in options:
        return options.index(fallback)
    return free[0][0] if free else 0


st.title("Data")
store = state.store()
current = state.workspace()
if state.missing_workspace():
    components.missing_workspace(state.missing_workspace(), store)
else:
    saved_note = f"saved as **{plain(current.label)}**" if current.id else "not saved"
    st.markdown(f"Evaluating **{plain(current.label)}** ({saved_note}): {len(current.models)} model(s): "
                f"{plain(', '.join(current.models))}.")
if st.button("Back to the demo workspace", icon=":material/movie:"):
    state.use_workspace(demo_workspace())
    st.rerun()

if st.session_state.get(LOADED, (None,))[0] not in (None, current.id):
    del st.session_state[LOADED]  # another workspace is open: its report is not this one's
if LOADED in st.session_state:
    _, models_count, users_count, items_count, notes = st.session_state[LOADED]
    st.success(f"Saved and loaded {models_count} model(s) for {users_count:,} users and {items_count:,} items.",
               icon=":material/check_circle:")
    st.subheader("Validation report")
    for message in notes:
        st.warning(plain(message), icon=":material/info:")
    if not notes:
        st.markdown("No problems found.")
    st.page_link("views/overview.py", label="See the overview", icon=":material/dashboard:")

saved_workspaces.manage(store, current)
if current.id and not state.missing_workspace() and not store.read_only:
    saved_workspaces.add_or_replace_model(store, current)

if store.read_only:
    st.info("This server is read-only (RANKSCOPE_READ_ONLY=1): saved workspaces can be opened, not uploaded, "
            "renamed or deleted.", icon=":material/lock:")
    st.stop()
st.subheader("Upload your own files")
st.caption("CSV (also gzip or zip), Parquet or TREC run/qrels. Recommendations need a user, an item and a rank "
           "or a score; the ground truth a user and an item, optionally a relevance grade. Each file is kept once "
           f"in the store ({plain(store.home)}); nothing you upload is modified. {plain(upload_limit_note())}")
generation = st.session_state.setdefault(UPLOAD_GENERATION, 0)  # a new generation empties the uploaders
recs_files = st.file_uploader("Recommendations: one file per model", type=TYPES, accept_multiple_files=True,
                              key=f"{Key.UPLOAD_RECS}_{generation}")
truth_file = st.file_uploader("Ground truth (held-out relevant items)", type=TYPES,
                              key=f"{Key.UPLOAD_TRUTH}_{generation}")
with st.expander("Optional: training interactions, item features, user features"):
    train_file = st.file_uploader("Training interactions (for novelty, popularity, LAUC)", type=TYPES,
                                  key=f"{Key.UPLOAD_TRAIN}_{generation}")
    items_file = st.file_uploader("Item features (catalog, diversity, item bias)", type=TYPES,
                                  key=f"{Key.UPLOAD_ITEMS}_{generation}")
    users_file = st.file_uploader("User features (segments, user bias)", type=TYPES,
                                  key=f"{Key.UPLOAD_USERS}_{generation}")

if not recs_files or truth_file is None:
    st.info("Upload at least one recommendations file and the ground truth to evaluate your own data.")
    st.stop()

try:
    with st.spinner("Storing the files…"):
        stored = {f.name: stored_upload(store, f, "recommendations") for f in recs_files}
        truth, truth_notes = stored_upload(store, truth_file, "ground truth")
        optional = {role: (stored_upload(store, f, label)[0] if f is not None else None)
                    for role, label, f in (("train", "training interactions", train_file),
                                           ("items", "item features", items_file),
                                           ("users", "user features", users_file))}
    uploads = {name: table for name, (table, _) in stored.items()}
    rec_columns = sorted({c for table in uploads.values() for c in table.column_names()})
    truth_columns = truth.column_names()
    item_columns = optional["items"].column_names() if optional["items"] else []
except InputError as error:
    components.show_error(error)
    st.stop()
for message in [m for _, notes in stored.values() for m in notes] + truth_notes:
    st.info(plain(message), icon=":material/info:")
st.subheader("Name the models")
names = {}
for column, (file_name, _) in zip(st.columns(min(4, len(uploads))) * len(uploads), uploads.items(), strict=False):
    names[file_name] = column.text_input(f"Model in {plain(file_name)}", model_name(file_name, file_name),
                                         key=f"name_{file_name}")

st.subheader("Map the columns")
left, middle, right = st.columns(3)
user_column = left.selectbox("User column", rec_columns, index=guess(rec_columns, "user"))
item_column = middle.selectbox("Item column", rec_columns,
                               index=guess(rec_columns, "item", taken=(user_column,)))
with_none = [NONE, *rec_columns]
score_column = right.selectbox("Score column", with_none,
                               index=guess(with_none, "score", NONE, taken=(user_column, item_column)))
rank_column = left.selectbox("Rank column (1 = best; used when present)", with_none,
                             index=guess(with_none, "rank", NONE, taken=(user_column, item_column, score_column)))
truth_options = [NONE, *truth_columns]
relevance_column = middle.selectbox("Relevance grade in the ground truth", truth_options,
                                    index=guess(truth_options, "relevance", NONE, taken=(user_column, item_column)))
scale = grade_scale_of(truth, relevance_column) if relevance_column != NONE else None
proposal = scale.threshold if scale is not None and scale.threshold is not None else 1.0
threshold = right.number_input("Relevant when the grade is at least", value=float(proposal), step=0.5,
                               disabled=relevance_column == NONE, key=f"threshold_{relevance_column}",
                               help="Proposed from the grades' scale (below); change it if it does not fit.")
if scale is not None:
    relevant = f"{scale.relevant_share:.0%} of the ground truth's rows count as relevant at ≥ {proposal:g}. " \
        if scale.relevant_share is not None else ""
    spread = " · ".join(f"{value:g}: {share:.0%}" for value, share in scale.shares.items())
    st.caption(plain(f"{relevance_column}: {scale.words} {relevant}" + (f"Values: {spread}." if spread else "")))
    if scale.threshold is not None and threshold != scale.threshold:
        st.warning(plain(f"The threshold {threshold:g} differs from the {proposal:g} proposed for {scale.kind} "
                         f"({scale.low:g} to {scale.high:g}): {grade_share(truth, relevance_column, threshold):.0%} "
                         "of the rows count as relevant at it."), icon=":material/tune:")
features = None
if item_columns:
    features = st.multiselect("Item feature columns (for diversity and serendipity)",
                              [c for c in item_columns if c != item_column],
                              default=numeric_columns(optional["items"], item_column),
                              key=f"features_{item_column}",
                              help="Numbers are used as they are, text columns one-hot (labels joined by | one column "
                                   "per label). Every numeric column to begin with, as the command line does; "
                                   "empty: every numeric column.")

columns = Columns(user=user_column, item=item_column, score=score_column if score_column != NONE else "__no_score__",
                  rank=rank_column if rank_column != NONE else "__no_rank__",
                  relevance=None if relevance_column == NONE else relevance_column, threshold=threshold)
roles = {"user": user_column, "item": item_column, "score": score_column, "rank": rank_column}
shared = {column: [r for r, c in roles.items() if c == column] for column in roles.values() if column != NONE}
shared = {column: names for column, names in shared.items() if len(names) > 1}
problems = []
if shared:
    column, taken_by = next(iter(shared.items()))
    problems.append(f"The column '{column}' is chosen as the {' and the '.join(taken_by)} column: each role needs "
                    "its own column. Choose another column for one of them.")
if score_column == NONE and rank_column == NONE:
    problems.append("Choose the rank column or the score column of the recommendations: one of them orders each list.")
if len(set(names.values())) < len(names):
    problems.append("Two models have the same name: give each file its own model name.")
for problem in problems:
    st.error(plain(problem), icon=":material/error:")
if problems:
    st.stop()

st.subheader("What was uploaded")
try:
    uploads_summary.show_summary({names[name]: table for name, table in uploads.items()}, truth, columns)
except (KeyError, ValueError, TypeError, NotImplementedError) as error:  # (Arrow's errors are among them)
    st.warning(f"No summary for this mapping ({plain(error)}); the check below names what is wrong.",
               icon=":material/warning:")

default_name = store.free_name(f"{model_name(next(iter(uploads)), 'recs')} upload")  # (never a colleague's name)
workspace_name = st.text_input("Save as workspace", value=default_name, key=f"save_name_{generation}",
                               help="A saved workspace reopens from its link after a reload, in another browser "
                                    "and after a server restart.")
taken = store.named(workspace_name) if workspace_name.strip() else None
if_exists = "refuse"
if taken is not None:
    st.warning(f"A workspace named **{plain(taken.name)}** exists already ({plain(', '.join(taken.models))}; saved "
               f"{plain(components.when(taken.updated))} UTC). Choose what saving does, or type another name.",
               icon=":material/warning:")
    if_exists = st.radio("Saving under a taken name", ["version", "replace"], key=f"if_exists_{generation}",
                         format_func={"version": f"Save as a new version: {plain(store.free_name(taken.name))}",
                                      "replace": f"Replace it: {plain(taken.name)} opens these files (links to the "
                                                 "old one keep showing the old files)"}.get)
if st.button("Check, save and evaluate", type="primary", icon=":material/check_circle:", key="check_and_save"):
    workspace = Workspace(label=workspace_name, models={names[name]: table for name, table in uploads.items()},
                          ground_truth=truth, columns=columns,
                          feature_columns=tuple(features) if features else None, **optional)
    try:
        dataset = state.dataset_of(workspace)  # (says each step while it reads, checks and joins)
        with st.spinner("Checking every model at K…"):
            # the new files' own models: the primitive model chosen for the previous workspace may not exist
            report = dataset.evaluate_all(replace(state.chosen_settings(), primitive_model=None),
                                          curves=False)
        saved = save(workspace, store, workspace_name, len(dataset.users), if_exists=if_exists)
    except InputError as error:
        st.subheader("Validation report")
        components.show_error(error)
        st.stop()
    state.use_workspace(saved)
    st.session_state[UPLOAD_GENERATION] = generation + 1  # the uploaders let go of the files' bytes
    st.session_state[LOADED] = (saved.id, len(dataset.models), len(dataset.users), len(dataset.items),
                                sorted({note.message for result in report.values() for note in result.warnings}))
    st.rerun()

