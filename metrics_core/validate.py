"""Checks on raw input columns. Each raises :class:`~metrics_core.errors.InputError` with the
column, the count of offending rows, up to five of them and the fix; nothing is "corrected"."""

from __future__ import annotations

import numpy as np
import pandas as pd

from metrics_core.errors import input_error


def require_columns(frame: pd.DataFrame, names: list[str], source: str, flag_hint: str = "") -> None:
    """Every name in ``names`` is a column of ``frame``."""
    missing = [name for name in names if name not in frame.columns]
    if missing:
        have = ", ".join(map(str, frame.columns))
        raise input_error(
            source,
            f"missing column{'s' if len(missing) > 1 else ''} {', '.join(repr(m) for m in missing)} "
            f"(the table has: {have}).",
            f"rename the column in the file or map it to one of the existing columns{flag_hint}.",
        )


def require_rows(frame: pd.DataFrame, source: str) -> None:
    if frame.empty:
        raise input_error(source, "the table has no rows.", "provide a table with at least one row.")


def _offending(frame: pd.DataFrame, mask: np.ndarray, columns: list[str]) -> pd.DataFrame:
    shown = [c for c in dict.fromkeys(columns) if c in frame.columns]
    return frame.loc[mask, shown]


def ids(frame: pd.DataFrame, column: str, source: str, context: list[str]) -> np.ndarray:
    """The id column as integers (any width) or str objects (anything else, mixes included).

    Missing ids are an error. Integral floats (``3.0``, as CSV readers produce) become ints.
    """
    series = frame[column]
    if isinstance(series.dtype, np.dtype) and series.dtype.kind in "iu":
        return series.to_numpy()  # plain integers cannot be missing
    missing = series.isna().to_numpy()
    if missing.any():
        raise input_error(
            source,
            f"{int(missing.sum())} rows have no id.",
            "fill in the id or drop these rows.",
            column,
            _offending(frame, missing, context),
        )
    values = series.to_numpy()
    if values.dtype.kind in "iu":
        return values
    if values.dtype.kind == "f" and np.isfinite(values).all() and (values == np.round(values)).all():
        return values.astype(np.int64)
    if values.dtype.kind == "b":
        return values.astype(np.int64)
    return _as_str(values)


def _as_str(values: np.ndarray) -> np.ndarray:
    return pd.Series(values, copy=False).astype(str).to_numpy(dtype=object)


def unify_ids(arrays: list[np.ndarray]) -> list[np.ndarray]:
    """If any table holds string ids, read every table's ids as strings so that they match."""
    if all(a.dtype.kind in "iu" for a in arrays):
        return arrays
    return [a if a.dtype == object else _as_str(a) for a in arrays]


def numbers(
    frame: pd.DataFrame, column: str, source: str, context: list[str], what: str, fix: str
) -> np.ndarray:
    """The column as finite numbers (integer columns kept as they are, anything else as
    float); text, NaN and infinities are an error."""
    series = frame[column]
    if series.dtype.kind in "iu":
        return series.to_numpy()
    if series.dtype.kind == "f":
        values = series.to_numpy()
    else:
        values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    if len(values) and np.isfinite(values.min()) and np.isfinite(values.max()):
        return values  # NaN and infinities would show in the extremes: no mask needed
    bad = ~np.isfinite(values)
    if bad.any():
        raise input_error(
            source,
            f"{int(bad.sum())} rows have a {what} that is missing, not a number, or infinite.",
            fix,
            column,
            _offending(frame, bad, context),
        )
    return values


def ranks(frame: pd.DataFrame, column: str, source: str, context: list[str]) -> np.ndarray:
    """Ranks as integers: positive, rank 1 is best."""
    values = numbers(
        frame, column, source, context, "rank",
        "ranks must be positive integers (1 = best); fill or drop these rows.",
    )
    if values.dtype.kind in "iu":
        bad = values < 1 if len(values) and values.min() < 1 else None
    else:
        bad = (values < 1) | (values != np.round(values))
    if bad is not None and bad.any():
        raise input_error(
            source,
            f"{int(bad.sum())} rows have a rank that is not a positive integer.",
            "ranks must be 1, 2, 3, ... (1 = best); renumber the lists.",
            column,
            _offending(frame, bad, context),
        )
    return values if values.dtype.kind in "iu" else values.astype(np.int64)


def grades(frame: pd.DataFrame, column: str, source: str, context: list[str]) -> np.ndarray:
    """Relevance grades as float64: finite and non-negative."""
    values = numbers(
        frame, column, source, context, "relevance grade",
        "grades must be numbers >= 0; fill or drop these rows.",
    )
    bad = values < 0
    if bad.any():
        raise input_error(
            source,
            f"{int(bad.sum())} rows have a negative grade.",
            "grades must be >= 0; drop these rows or rescale the column.",
            column,
            _offending(frame, bad, context),
        )
    return values


def cutoff(k: int) -> int:
    """K must be a positive integer."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise input_error("settings", f"K = {k!r} is not a positive integer.", "choose K >= 1, e.g. 10.")
    return int(k)
