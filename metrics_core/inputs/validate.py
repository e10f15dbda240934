"""Checks on raw input columns. Each raises :class:`~metrics_core.errors.InputError` with the
column, the count of offending rows, up to five of them and the fix; nothing is "corrected"."""

from __future__ import annotations

import numpy as np
import pandas as pd

from metrics_core.errors import input_error
from metrics_core.inputs.text_ids import TextIds, factorize_text, is_text

MAX_COLUMNS_SHOWN = 20
NUMBERS_AS_TEXT = "rankscope.numbers_as_text"  # frame.attrs key: columns read as text that may hold numbers (CSV)
ALL_CATEGORIES_USED = "rankscope.all_categories_used"  # frame.attrs key: categorical columns whose categories
# are each some row's (a factorization made them), so finding the used ones is skipped
FILE_COLUMNS = "rankscope.file_columns"  # frame.attrs key: every column of the file, when only some were read


def column_list(columns) -> str:
    """The table's columns for a message: at most 20 of them, then how many more.

    >>> column_list(range(23))
    '0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19 and 3 more'
    """
    names = [str(c) for c in columns]
    shown = ", ".join(names[:MAX_COLUMNS_SHOWN])
    return shown + (f" and {len(names) - MAX_COLUMNS_SHOWN} more" if len(names) > MAX_COLUMNS_SHOWN else "")


def require_columns(frame: pd.DataFrame, names: list[str], source: str, hint: str = "") -> None:
    """Every name in ``names`` is a column of ``frame``. ``hint`` (e.g. " with " + a setting
    marker) says where the mapping is chosen. A table read as one column whose name holds
    ``;``, ``|`` or a tab gets a message about the delimiter instead. The message lists the
    file's columns, all of them when only some were read (``frame.attrs``, :data:`FILE_COLUMNS`)."""
    missing = [name for name in names if name not in frame.columns]
    if not missing:
        return
    in_file = frame.attrs.get(FILE_COLUMNS, list(frame.columns))  # (a read of some columns: all the file's)
    if len(in_file) == 1:
        only = str(in_file[0])
        delimiter = next((d for d in ("\t", ";", "|") if d in only), None)
        if delimiter is not None:
            words = "a tab" if delimiter == "\t" else repr(delimiter)
            raise input_error(
                source,
                f"the table was read as one column named {only[:80]!r}: its columns look separated by {words}, "
                "not by commas.",
                f"save the file with commas between columns (or as .tsv for tabs), or read it with {words} as the "
                "delimiter (pandas: sep=...) and pass the DataFrame.",
            )
    raise input_error(
        source,
        f"missing column{'s' if len(missing) > 1 else ''} {', '.join(repr(m) for m in missing)} "
        f"(the table has: {column_list(in_file)}).",
        f"rename the column in the file or map it to one of the existing columns{hint}.",
    )


def require_rows(frame: pd.DataFrame, source: str) -> None:
    if frame.empty:
        raise input_error(source, "the table has no rows.", "provide a table with at least one row.")


def _offending(frame: pd.DataFrame, mask: np.ndarray, columns: list[str]) -> pd.DataFrame:
    shown = [c for c in dict.fromkeys(columns) if c in frame.columns]
    return frame.loc[mask, shown]


INT64_MAX = np.iinfo(np.int64).max
EXACT_FLOAT_LIMIT = 2**53  # larger integers are not all representable as float64
INTEGRAL_DECIMAL = r"^([+-]?[0-9]+)\.0*$"  # "4.00" -> "4"
SPACES = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
          "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")  # what str.strip() takes from a text id's ends
CONTAINERS = (list, tuple, dict, set, np.ndarray)


def ids(frame: pd.DataFrame, column: str, source: str, context: list[str]) -> np.ndarray | TextIds:
    """The id column as integers (a signed integer column as it is, e.g. int32 from a Parquet file
    whose ids fit; others as int64), or as :class:`TextIds` (codes into exact texts), never
    through float.

    - integers that fit int64 stay integers; unsigned ids at or above 2**63 (and Python
      integers beyond int64) are read as their exact decimal text;
    - integral decimals (``4.0`` as a float, ``"4.00"`` as text or a Decimal) are integers;
      decimals above 2**53 are an error (a float cannot have held them exactly);
    - text ids lose the whitespace around them;
    - missing ids and lists, structs or maps used as ids are errors.

    Text is hashed once per row (Arrow's text on a few threads) and cleaned once per distinct
    id: no Python string is made per row (a categorical column is coded from its categories).
    Text that is not valid Unicode (a lone surrogate, which only Python-made strings can hold)
    is an error naming its rows.
    """
    try:
        return _ids(frame, column, source, context)
    except UnicodeEncodeError:
        bad = _not_utf8(frame[column])
        if not bad.any():
            raise
        raise input_error(
            source,
            f"{int(bad.sum())} rows have an id that is not valid Unicode text (a lone surrogate "
            "character such as '\\ud800', which has no UTF-8 form).",
            "decode the ids from their bytes with the right encoding, or replace the invalid "
            "characters (e.g. .str.encode('utf-8', 'replace').str.decode('utf-8')).",
            column,
            _offending(frame, bad, context),
        ) from None


def _not_utf8(series: pd.Series) -> np.ndarray:
    """Rows whose value is a ``str`` with no UTF-8 form (checked once per distinct value)."""
    codes, distinct = pd.factorize(series)
    invalid = np.array([isinstance(v, str) and not _encodable(v) for v in distinct], dtype=bool)
    return invalid[codes] & (codes >= 0) if len(invalid) else np.zeros(len(series), dtype=bool)


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _ids(frame: pd.DataFrame, column: str, source: str, context: list[str]) -> np.ndarray | TextIds:
    """:func:`ids`, before invalid Unicode is named."""
    series = frame[column]
    if isinstance(series.dtype, np.dtype) and series.dtype.kind == "i":
        return series.to_numpy()  # plain integers cannot be missing
    missing = _missing(series)
    if missing is not None:
        raise input_error(
            source,
            f"{int(missing.sum())} rows have no id.",
            "fill in the id or drop these rows.",
            column,
            _offending(frame, missing, context),
        )
    if isinstance(series.dtype, pd.CategoricalDtype):
        categories = series.cat.categories
        if pd.api.types.is_string_dtype(categories.dtype):
            return _text_ids(series.array.codes, pd.Series(categories),  # (a view: .cat.codes copies 100M codes)
                             numeric=column in frame.attrs.get(NUMBERS_AS_TEXT, ()),
                             all_used=column in frame.attrs.get(ALL_CATEGORIES_USED, ()))
        series = series.astype(categories.dtype)  # numbers held as categories: read as the numbers
    if pd.api.types.is_integer_dtype(series.dtype):  # unsigned, or a nullable integer type without gaps
        unsigned = not pd.api.types.is_signed_integer_dtype(series.dtype)
        values = series.to_numpy(dtype=np.uint64 if unsigned else np.int64)
        return values.astype(np.int64) if not len(values) or values.max() <= INT64_MAX else TextIds.factorize(values)
    if pd.api.types.is_bool_dtype(series.dtype):
        return series.to_numpy(dtype=np.int64)
    if pd.api.types.is_float_dtype(series.dtype):
        return _float_ids(series.to_numpy(dtype=np.float64), frame, column, source, context)
    if pd.api.types.is_string_dtype(series.dtype) and not isinstance(series.dtype, np.dtype):
        return _text_ids(*factorize_text(series), numeric=column in frame.attrs.get(NUMBERS_AS_TEXT, ()))
    values = series.to_numpy()
    kind = pd.api.types.infer_dtype(values, skipna=False)
    if kind == "integer":  # Python ints, some beyond int64 (or they would have an integer dtype)
        fits = all(-INT64_MAX - 1 <= v <= INT64_MAX for v in (min(values), max(values)))
        return values.astype(np.int64) if fits else TextIds.factorize(values)
    if kind == "floating":
        return _float_ids(values.astype(np.float64), frame, column, source, context)
    if kind == "boolean":
        return values.astype(np.int64)
    if kind == "decimal":
        codes, distinct = pd.factorize(values)
        return _text_ids(codes, pd.Series(distinct, dtype=object).map(str), numeric=True)
    if kind == "bytes":
        codes, distinct = pd.factorize(values)
        return _text_ids(codes, pd.Series(distinct, dtype=object).str.decode("utf-8", errors="replace"))
    nested = np.fromiter((isinstance(v, CONTAINERS) for v in values), dtype=bool, count=len(values)) \
        if kind == "mixed" else np.zeros(len(values), dtype=bool)
    if nested.any():
        raise input_error(
            source,
            f"{int(nested.sum())} rows hold a list, struct or map where an id belongs.",
            "map a column that holds one id per row (explode list columns into one row per item first).",
            column,
            _offending(frame, nested, context),
        )
    codes, distinct = pd.factorize(values)  # (7 and "7" are told apart here and become one id below)
    return _text_ids(codes, pd.Series(distinct, dtype=object))


def _missing(series: pd.Series) -> np.ndarray | None:
    """The rows of ``series`` with no value, None when there are none. A categorical's codes
    are read for -1 (the smallest code) instead: no mask of 100M rows when none is missing."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        codes = series.array.codes
        if not len(codes) or codes.min() >= 0:
            return None
        return codes < 0
    missing = series.isna().to_numpy()
    return missing if missing.any() else None


def _float_ids(values: np.ndarray, frame: pd.DataFrame, column: str, source: str,
               context: list[str]) -> np.ndarray | TextIds:
    """Float ids: integral ones as int64 (``3.0`` from a CSV reader), others as their text."""
    if not (np.isfinite(values).all() and (values == np.round(values)).all()):
        return TextIds.factorize(values)
    inexact = np.abs(values) > EXACT_FLOAT_LIMIT
    if inexact.any():
        raise input_error(
            source,
            f"{int(inexact.sum())} rows have an id above 2^53 stored as a decimal number, which cannot hold it "
            "exactly (different ids may have become equal).",
            "store ids as integers or as text (quote them in the CSV, or use an integer or string column in Parquet).",
            column,
            _offending(frame, inexact, context),
        )
    return values.astype(np.int64)


def _text_ids(codes: np.ndarray, distinct, numeric: bool = False, all_used: bool = True) -> np.ndarray | TextIds:
    """Ids ``distinct[codes]`` as text without surrounding whitespace, integral decimals written
    as integers (``" 4.00 "`` -> ``"4"``). ``numeric`` (Decimal values, CSV text): when every
    id is then an integer that fits int64, the ids are those integers, as a number-typed column
    would have given. Only the distinct values are cleaned; ids that become equal become one.
    ``all_used``: every distinct value is some row's, as a factorization gives them (a
    categorical's categories need not be)."""
    text = pd.Series(distinct, copy=False).astype("str").str.strip()
    dotted = text.str.contains(".", regex=False).to_numpy(dtype=bool)
    if dotted.any():  # the regular expression only where it can apply
        text = text.copy()
        text[dotted] = text[dotted].str.replace(INTEGRAL_DECIMAL, r"\1", regex=True)
    if numeric and text.str.fullmatch(r"[+-]?[0-9]+").all():
        as_int = pd.to_numeric(text, errors="coerce")
        if as_int.dtype == np.int64:
            return as_int.to_numpy(dtype=np.int64)[codes]
    return TextIds.from_codes(codes, _arrow_text(text), all_used=all_used)


def _arrow_text(text: pd.Series):
    """``text`` as one Arrow array when pandas holds it in Arrow (no ``str`` object per text),
    else as ``str`` objects."""
    import pyarrow as pa

    arrow = getattr(text.array, "__arrow_array__", None)
    if arrow is None:
        return text.to_numpy(dtype=object)
    column = arrow()
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


def unify_ids(arrays: list[np.ndarray | TextIds]) -> list[np.ndarray | TextIds]:
    """If any table holds text ids, read every table's ids as text so that they match
    (integers as their exact decimal text: ``7`` matches ``"7"``)."""
    if not any(is_text(a) for a in arrays):
        return arrays
    return [a if is_text(a) else TextIds.factorize(a) for a in arrays]


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
        problem = f"{int(bad.sum())} rows have a {what} that is missing, not a number, or infinite."
        if series.astype(str)[bad].str.fullmatch(r"\s*-?[0-9]+,[0-9]+\s*").any():
            problem += " Some are written with a decimal comma (e.g. '0,5'), which is read as text here."
            fix = ("write numbers with a decimal point (0.5), or save the file with ';' between columns, where "
                   "decimal commas are recognised.")
        raise input_error(source, problem, fix, column, _offending(frame, bad, context))
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


def grades(frame: pd.DataFrame, column: str, source: str, context: list[str],
           allow_negative: bool = False) -> np.ndarray:
    """Relevance grades as float64: finite, and non-negative unless ``allow_negative`` (TREC
    qrels, where a negative grade is a judged non-relevant document)."""
    values = numbers(
        frame, column, source, context, "relevance grade",
        "grades must be numbers >= 0; fill or drop these rows.",
    )
    bad = values < 0
    if not allow_negative and bad.any():
        raise input_error(
            source,
            f"{int(bad.sum())} rows have a negative grade.",
            "grades must be >= 0; drop these rows or rescale the column.",
            column,
            _offending(frame, bad, context),
        )
    return values


