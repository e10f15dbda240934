"""Uploaded files go to the run store at once (disk, not session memory), and a summary of
what was uploaded is shown before anything is evaluated."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import streamlit as st

from dashboard.text import plain
from metrics_core import Columns
from metrics_core.inputs.grades import GradeScale, grade_scale
from metrics_core.inputs.read import StoredTable
from metrics_core.store import Store

STORED = "_stored_uploads"  # session key: upload file id -> (table key, name, notes)
# what the uploaders accept: the formats read.py reads, and the same compressed or zipped
TYPES = ["csv", "tsv", "txt", "parquet", "pq", "run", "trec", "qrels", "gz", "zip"]


def upload_limit_note() -> str:
    """The uploaders' size limit in words, with the way round it (the command line's --save,
    whose link opens the saved workspace in the app)."""
    limit = int(st.get_option("server.maxUploadSize"))
    return (f"Up to {limit:,} MB per file. A larger file: save it from the command line, which has no limit "
            "(rankscope evaluate --recommendations FILE --ground-truth FILE --save NAME), then open the link it "
            "prints.")
RARE_OVERLAP = 0.01


def stored_upload(store: Store, upload, role: str) -> tuple[StoredTable, list[str]]:
    """The upload as a table in the store (stored once per upload, whatever the reruns), and
    the notes on how it was read."""
    memo = st.session_state.setdefault(STORED, {})
    key = (upload.file_id, upload.name)
    if key not in memo:
        notes: list[str] = []
        sha = store.put_table(upload.name, upload.getvalue(), role, notes)
        memo[key] = (sha, notes)
    sha, notes = memo[key]
    return store.table(sha, upload.name), notes


@dataclass
class ModelSummary:
    rows: int
    users: int
    items: int
    lengths: tuple[int, float, int]  # min, median, max list length
    scores: tuple[float, float] | None
    sample_user: str
    sample: list[str]
    items_in_truth: float  # share of the distinct recommended items that appear in the ground truth
    warnings: list[str] = field(default_factory=list)


@st.cache_data(max_entries=64, show_spinner=False)
def summarise_model(table: StoredTable, truth: StoredTable, columns: Columns) -> ModelSummary:
    """Rows, users, items, list lengths, score range, one sample list, and what looks wrong: a
    score that behaves like a rank (lower is better), or recommended items that almost never
    appear in the ground truth (different id spaces)."""
    wanted = [c for c in (columns.user, columns.item, columns.score, columns.rank) if c in table.column_names()]
    _refuse_nested(table, wanted)
    frame = pd.read_parquet(table.path, columns=wanted, dtype_backend="pyarrow")  # text ids stay in Arrow memory
    truth_items = pd.read_parquet(truth.path, columns=[columns.item], dtype_backend="pyarrow")[columns.item]
    user, item = frame[columns.user], frame[columns.item]
    lengths = user.value_counts()
    has_score, has_rank = columns.score in frame.columns, columns.rank in frame.columns
    scores = frame[columns.score] if has_score else None
    order = [columns.rank] if has_rank else [columns.score] if has_score else []
    first = user.iloc[0]
    rows = frame[user == first]
    if order:
        rows = rows.sort_values(order, ascending=has_rank)
    distinct = item.drop_duplicates()
    shared = float(distinct.astype("string[pyarrow]").isin(truth_items.astype("string[pyarrow]").unique()).mean())
    warnings = []
    if has_score and _looks_like_a_rank(frame, columns, has_rank):
        warnings.append(f"The score column '{columns.score}' looks like a rank (lower is better): rankscope puts "
                        "higher scores first. Map it as the rank column instead, or negate it.")
    if shared < RARE_OVERLAP:
        warnings.append(f"Only {shared:.2%} of the recommended items ever appear in the ground truth: the item ids "
                        f"may come from another id space (check '{columns.item}' in both files).")
    return ModelSummary(len(frame), int(lengths.size), int(distinct.size),
                        (int(lengths.min()), float(lengths.median()), int(lengths.max())),
                        (float(scores.min()), float(scores.max())) if scores is not None else None,
                        str(first), [str(v) for v in rows[columns.item].head(10)], shared, warnings)


def _refuse_nested(table: StoredTable, wanted: list[str]) -> None:
    """A list, struct or map column cannot be summarised (nor evaluated: the check names it)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pq.read_schema(table.path)
    for name in wanted:
        kind = schema.field(name).type
        if pa.types.is_nested(kind):
            raise ValueError(f"the column '{name}' of {table.name} holds {kind} values, not one value per row")


def _looks_like_a_rank(frame: pd.DataFrame, columns: Columns, has_rank: bool) -> bool:
    """With a rank column: scores rise with the rank within users (their centred values
    correlate positively). Without one: every user's scores are exactly 1, 2, .., n."""
    score = pd.to_numeric(frame[columns.score], errors="coerce")
    groups = frame[columns.user]
    if has_rank:
        rank = pd.to_numeric(frame[columns.rank], errors="coerce")
        centred_score = score - score.groupby(groups).transform("mean")
        centred_rank = rank - rank.groupby(groups).transform("mean")
        return bool((centred_score * centred_rank).sum() > 0)
    values = score.to_numpy(dtype=np.float64)
    if not np.all(np.isfinite(values)) or not np.all(values == np.round(values)):
        return False
    counts = groups.map(groups.value_counts())
    return bool(score.groupby(groups).min().eq(1).all() and score.groupby(groups).max().eq(
        counts.groupby(groups).first()).all())


@st.cache_data(max_entries=16, show_spinner=False)
@st.cache_data(max_entries=16, show_spinner=False)
def _grades(truth: StoredTable, column: str) -> np.ndarray:
    """The ground truth's ``column`` as numbers (NaN where a value is not one)."""
    values = pd.read_parquet(truth.path, columns=[column])[column]
    try:
        return pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64)
    except (TypeError, ValueError):  # (lists or other values that are not numbers: no scale; the check names them)
        return np.full(len(values), np.nan)


def grade_scale_of(truth: StoredTable, column: str) -> GradeScale:
    """What the relevance column's values look like, and the threshold they suggest."""
    return grade_scale(_grades(truth, column))


def grade_share(truth: StoredTable, column: str, threshold: float) -> float:
    """The share of the ground truth's rows with a grade of at least ``threshold``."""
    grades = _grades(truth, column)
    return float((grades >= threshold).mean()) if len(grades) else 0.0


def numeric_columns(table: StoredTable, item_column: str) -> list[str]:
    """The stored table's numeric and boolean columns other than the item id (from its Parquet
    schema: what the command line uses as item features by default)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    numeric = (pa.types.is_integer, pa.types.is_floating, pa.types.is_boolean)
    return [field.name for field in pq.read_schema(table.path)
            if field.name != item_column and any(kind(field.type) for kind in numeric)]


def summarise_truth(truth: StoredTable, columns: Columns) -> dict[str, int]:
    frame = pd.read_parquet(truth.path, columns=[columns.user, columns.item], dtype_backend="pyarrow")
    return {"rows": len(frame), "users": int(frame[columns.user].nunique()),
            "items": int(frame[columns.item].nunique())}


def show_summary(models: dict[str, StoredTable], truth: StoredTable, columns: Columns) -> None:
    """The upload summary: one row per model, then each model's sample list and warnings."""
    summaries = {name: summarise_model(table, truth, columns) for name, table in models.items()}
    counts = summarise_truth(truth, columns)
    st.markdown(f"Ground truth: **{counts['rows']:,}** rows, **{counts['users']:,}** users, "
                f"**{counts['items']:,}** items.")
    st.dataframe(pd.DataFrame({
        name: {"rows": f"{s.rows:,}", "users": f"{s.users:,}", "items": f"{s.items:,}",
               "list length (min / median / max)": f"{s.lengths[0]} / {s.lengths[1]:g} / {s.lengths[2]}",
               "score range": f"{s.scores[0]:.4g} to {s.scores[1]:.4g}" if s.scores else "no score column",
               "recommended items in the ground truth": f"{s.items_in_truth:.1%}"}
        for name, s in summaries.items()}).T, width="stretch")
    for name, s in summaries.items():
        st.caption(f"**{plain(name)}**, a sample list (user {plain(s.sample_user)}): {plain(', '.join(s.sample))}")
        for warning in s.warnings:
            st.warning(plain(f"{name}: {warning}"), icon=":material/warning:")
