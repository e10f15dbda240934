"""Data: upload recommendations (one file per model), the ground truth and optional tables,
map their columns, and check them; or go back to the demo workspace."""

from dataclasses import replace
from pathlib import Path

import streamlit as st

from dashboard import components, state
from dashboard.state import Key
from dashboard.workspace import Workspace, demo_workspace
from metrics_core import Columns, InputError
from metrics_core.inputs.read import TableFile, read_bytes, read_notes

TYPES = ["csv", "tsv", "parquet", "pq", "run", "trec", "qrels"]
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


@st.cache_data(max_entries=32, show_spinner=False)
def columns_of(data: bytes, name: str, role: str) -> tuple[list[str], list[str]]:
    """The file's column names, and how it was read when that is worth saying (a sniffed
    delimiter, decimal commas)."""
    frame, _ = read_bytes(data, name, role)
    return [str(c) for c in frame.columns], [note.message for note in read_notes(frame)]


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
current = state.workspace()
st.markdown(f"Evaluating **{current.label}**: {len(current.models)} model(s): "
            f"{', '.join(current.models)}.")
if st.button("Back to the demo workspace", icon=":material/movie:"):
    state.use_workspace(demo_workspace())
    st.rerun()

st.subheader("Upload your own files")
st.caption("CSV, Parquet or TREC run/qrels. Recommendations need a user, an item and a rank or a score; the "
           "ground truth a user and an item, optionally a relevance grade. Nothing you upload is modified.")
recs_files = st.file_uploader("Recommendations: one file per model", type=TYPES, accept_multiple_files=True,
                              key=Key.UPLOAD_RECS)
truth_file = st.file_uploader("Ground truth (held-out relevant items)", type=TYPES, key=Key.UPLOAD_TRUTH)
with st.expander("Optional: training interactions, item features, user features"):
    train_file = st.file_uploader("Training interactions (for novelty, popularity, LAUC)", type=TYPES,
                                  key=Key.UPLOAD_TRAIN)
    items_file = st.file_uploader("Item features (catalog, diversity, item bias)", type=TYPES, key=Key.UPLOAD_ITEMS)
    users_file = st.file_uploader("User features (segments, user bias)", type=TYPES, key=Key.UPLOAD_USERS)

if not recs_files or truth_file is None:
    st.info("Upload at least one recommendations file and the ground truth to evaluate your own data.")
    st.stop()

try:
    uploads = {f.name: TableFile(f.name, f.getvalue()) for f in recs_files}
    read = {t.name: columns_of(t.data, t.name, "recommendations") for t in uploads.values()}
    rec_columns = sorted({c for columns, _ in read.values() for c in columns})
    truth = TableFile(truth_file.name, truth_file.getvalue())
    truth_columns, truth_notes = columns_of(truth.data, truth.name, "ground truth")
    optional = {role: (TableFile(f.name, f.getvalue()) if f is not None else None)
                for role, f in (("train", train_file), ("items", items_file), ("users", users_file))}
    item_columns = columns_of(optional["items"].data, optional["items"].name, "item features")[0] \
        if optional["items"] else []
except InputError as error:
    components.show_error(error)
    st.stop()
for message in [m for _, notes in read.values() for m in notes] + truth_notes:
    st.info(message, icon=":material/info:")

st.subheader("Name the models")
names = {}
for column, (file_name, _) in zip(st.columns(min(4, len(uploads))) * len(uploads), uploads.items(), strict=False):
    names[file_name] = column.text_input(f"Model in {file_name}", Path(file_name).stem, key=f"name_{file_name}")

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
threshold = right.number_input("Relevant when the grade is at least", value=1.0, step=0.5,
                               disabled=relevance_column == NONE)
features = None
if item_columns:
    features = st.multiselect("Item feature columns (for diversity and serendipity)",
                              [c for c in item_columns if c != item_column],
                              help="Numbers are used as they are, text columns one-hot. Leave empty for every "
                                   "numeric column.")

if st.button("Check and evaluate these files", type="primary", icon=":material/check_circle:"):
    roles = {"user": user_column, "item": item_column, "score": score_column, "rank": rank_column}
    shared = {column: [r for r, c in roles.items() if c == column] for column in roles.values() if column != NONE}
    shared = {column: names for column, names in shared.items() if len(names) > 1}
    if shared:
        column, names = next(iter(shared.items()))
        st.error(f"The column '{column}' is chosen as the {' and the '.join(names)} column: each role needs its own "
                 "column. Choose another column for one of them.", icon=":material/error:")
        st.stop()
    if score_column == NONE and rank_column == NONE:
        st.error("Choose the rank column or the score column of the recommendations: one of them orders each "
                 "list.", icon=":material/error:")
        st.stop()
    workspace = Workspace(
        label="Uploaded data",
        models={names[name]: table for name, table in uploads.items()},
        ground_truth=truth,
        columns=Columns(user=user_column, item=item_column,
                        score=score_column if score_column != NONE else "__no_score__",
                        rank=rank_column if rank_column != NONE else "__no_rank__",
                        relevance=None if relevance_column == NONE else relevance_column, threshold=threshold),
        feature_columns=tuple(features) if features else None,
        **optional,
    )
    if len(set(names.values())) < len(names):
        st.error("Two models have the same name: give each file its own model name.", icon=":material/error:")
        st.stop()
    try:
        with st.spinner("Reading, checking and joining…"):
            dataset = workspace.build()
            # the new files' own models: the primitive model chosen for the previous workspace may not exist
            report = dataset.evaluate_all(replace(state.settings(), primitive_model=None), curves=False)
    except InputError as error:
        st.subheader("Validation report")
        components.show_error(error)
        st.stop()
    state.use_workspace(workspace)
    st.success(f"Loaded {len(dataset.models)} model(s) for {len(dataset.users):,} users and "
               f"{len(dataset.items):,} items.", icon=":material/check_circle:")
    st.subheader("Validation report")
    notes = {note.message for result in report.values() for note in result.warnings}
    if notes:
        for message in sorted(notes):
            st.warning(message, icon=":material/info:")
    else:
        st.markdown("No problems found.")
    st.page_link("views/overview.py", label="See the overview", icon=":material/dashboard:")
