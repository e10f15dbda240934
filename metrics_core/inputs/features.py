"""Item feature vectors for the similarity-based metrics, aligned to item codes.

Numeric columns are used as they are, text/categorical columns one-hot, and an embedding
column (a list or array per item) as its own block. Each item's vector is normalised to unit
length so that a dot product is a cosine. Items missing from the item table, and items whose
vector is all zeros, have no vector; metrics leave them out and count them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from metrics_core.errors import input_error, setting
from metrics_core.inputs import validate


@dataclass
class ItemVectors:
    """``unit[c]`` is item code c's unit vector (zeros when ``has_vector[c]`` is False);
    ``value_codes[c, j]`` codes item c's value in feature column j (equal values, equal
    codes; -1 for items not in the table), for Hamming distances, which compare items whose
    features are all 0 too; None when the features are an embedding only."""

    unit: np.ndarray
    has_vector: np.ndarray
    value_codes: np.ndarray | None = None

    @property
    def dimensions(self) -> int:
        return self.unit.shape[1]


def default_feature_columns(table: pd.DataFrame, item_column: str) -> list[str]:
    """Every numeric (or boolean) column except the item id."""
    return [c for c in table.columns if c != item_column and (
        pd.api.types.is_numeric_dtype(table[c]) or pd.api.types.is_bool_dtype(table[c]))]


def item_vectors(table: pd.DataFrame, source: str, item_column: str, codes: np.ndarray, n_items: int,
                 feature_columns: list[str] | None = None, embedding_column: str | None = None) -> ItemVectors:
    """Build unit vectors from ``feature_columns`` (default: every numeric column) and/or
    ``embedding_column``: numbers as they are, text one-hot, a multi-label text column (values
    holding ``|``, "Drama|War") one column per label. Raises :class:`InputError` for a feature column that mixes numbers
    and text, missing values, or embeddings of uneven length."""
    if feature_columns is None:
        feature_columns = [] if embedding_column else default_feature_columns(table, item_column)
        feature_columns = [c for c in feature_columns if c != embedding_column]
    validate.require_columns(table, [*feature_columns, *([embedding_column] if embedding_column else [])],
                             source, f" with {setting('feature_columns')} or {setting('embedding_column')}")
    blocks = [_feature_block(table, column, source, item_column) for column in feature_columns]
    if embedding_column:
        blocks.append(_embedding_block(table, embedding_column, source, item_column))
    if not blocks:
        raise input_error(source, "has no numeric feature column to compare items with.",
                          f"name the feature columns ({setting('feature_columns')}) or an embedding column.")
    matrix = np.hstack(blocks).astype(np.float64)
    norms = np.linalg.norm(matrix, axis=1)
    unit = np.zeros((n_items, matrix.shape[1]))
    usable = (codes >= 0) & (norms > 0)
    unit[codes[usable]] = matrix[usable] / norms[usable, None]
    has_vector = np.zeros(n_items, dtype=bool)
    has_vector[codes[usable]] = True
    value_codes = None
    if feature_columns:
        value_codes = np.full((n_items, len(feature_columns)), -1, dtype=np.int64)
        for j, column in enumerate(feature_columns):
            value_codes[codes[codes >= 0], j] = pd.factorize(table[column])[0][codes >= 0]  # zero vectors too
    return ItemVectors(unit, has_vector, value_codes)


def _feature_block(table: pd.DataFrame, column: str, source: str, item_column: str) -> np.ndarray:
    series = table[column]
    context = [item_column, column]
    if pd.api.types.is_bool_dtype(series):
        return series.to_numpy(dtype=np.float64)[:, None]
    if pd.api.types.is_numeric_dtype(series):
        return validate.numbers(table, column, source, context, "feature value",
                                "fill in the missing feature values or drop the column.")[:, None]
    as_numbers = pd.to_numeric(series, errors="coerce")
    parsed = as_numbers.notna() & series.notna()
    if parsed.any():
        bad = (~parsed).to_numpy()
        raise input_error(source, f"feature column mixes numbers and text: {int(bad.sum())} rows are not numbers.",
                          f"fix these values, or drop the column from {setting('feature_columns')}.", column,
                          table.loc[bad, context])
    missing = series.isna().to_numpy()
    if missing.any():
        raise input_error(source, f"{int(missing.sum())} rows have no value in a categorical feature.",
                          "fill in a category (e.g. 'unknown') or drop the column.", column,
                          table.loc[missing, context])
    text = series.astype(str)
    if text.str.contains("|", regex=False).any():  # several labels per item ("Drama|War"): one column per label
        return text.str.get_dummies(sep="|").drop(columns="", errors="ignore").to_numpy(dtype=np.float64)
    return pd.get_dummies(text, dtype=np.float64).to_numpy()


def _embedding_block(table: pd.DataFrame, column: str, source: str, item_column: str) -> np.ndarray:
    """One row per item from a list/array column, through Arrow's list layout (no Python loop
    over items); rows that are not lists of numbers are found only when reporting the error."""
    import pyarrow as pa

    context = [item_column, column]
    try:
        lists = pa.array(table[column].to_numpy(dtype=object), type=pa.list_(pa.float64()), from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError):
        lengths = np.array([_length(v) for v in table[column].to_list()])  # diagnosis only
        bad = lengths < 0
        raise input_error(source, f"{int(bad.sum())} rows have an embedding that is not a list of numbers.",
                          "store one list or array of numbers per item.", column, table.loc[bad, context]) from None
    lengths = np.diff(lists.offsets.to_numpy())
    missing = lists.is_null().to_numpy(zero_copy_only=False)
    if missing.any():
        raise input_error(source, f"{int(missing.sum())} rows have no embedding.",
                          "give every item an embedding or drop these rows.", column, table.loc[missing, context])
    common = np.bincount(lengths).argmax()
    if (lengths != common).any():
        bad = lengths != common
        raise input_error(source, f"embeddings have uneven lengths: {int(bad.sum())} rows differ from the usual "
                          f"length {common}.", f"give every item an embedding of length {common}.", column,
                          table.loc[bad, context].assign(length=lengths[bad]))
    matrix = lists.flatten().to_numpy(zero_copy_only=False).reshape(len(lengths), common)
    if not np.isfinite(matrix).all():
        bad = ~np.isfinite(matrix).all(axis=1)
        raise input_error(source, f"{int(bad.sum())} embeddings contain NaN or infinite values.",
                          "fill or drop these items.", column, table.loc[bad, context])
    return matrix


def _length(value) -> int:
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        return -1
    return len(array) if array.ndim == 1 else -1
