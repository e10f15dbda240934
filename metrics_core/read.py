"""Read input tables from CSV, Parquet, TREC run / qrels files, or pandas DataFrames.

Nothing here interprets the data: it returns a DataFrame and a label naming where it came
from, for error messages. Validation and encoding happen in :mod:`metrics_core.validate` and
:mod:`metrics_core.encode`.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from metrics_core.errors import input_error

TREC_RUN_COLUMNS = ["user_id", "iteration", "item_id", "rank", "score", "tag"]
TREC_QRELS_COLUMNS = ["user_id", "iteration", "item_id", "relevance"]
PARQUET_SUFFIXES = {".parquet", ".pq"}
TREC_SUFFIXES = {".run", ".trec", ".qrels"}


def read_table(
    source: str | os.PathLike[str] | pd.DataFrame,
    role: str,
    columns: list[str] | None = None,
) -> tuple[pd.DataFrame, str]:
    """Return ``(frame, label)`` for a path or a DataFrame.

    ``role`` ("recommendations", "ground truth", ...) only names the table in messages.
    ``columns`` restricts a Parquet read to the columns that exist among them (faster, less
    memory). DataFrames are returned as they are, never modified: encoding copies what it
    needs. TREC files (``.run``/``.trec``: ``qid Q0 docno rank score tag``; ``.qrels``:
    ``qid iter docno relevance``) are read as ``user_id, item_id, rank, score`` and
    ``user_id, item_id, relevance``.
    """
    if isinstance(source, pd.DataFrame):
        return source, f"{role} (DataFrame)"
    path = Path(source)
    label = f"{role} ({path.name})"
    if not path.is_file():
        raise input_error(label, f"no file at {path}.", "check the path and that the file exists.")
    if path.stat().st_size == 0:
        raise input_error(label, "the file is empty.", "export the table again with a header row.")
    return _checked(lambda: _read_path(path, columns), label), label


def read_bytes(data: bytes, filename: str, role: str) -> tuple[pd.DataFrame, str]:
    """Like :func:`read_table` for an uploaded file's bytes; the suffix of ``filename``
    chooses the format."""
    import io
    import tempfile

    label = f"{role} ({filename})"
    if not data:
        raise input_error(label, "the file is empty.", "upload the table again with a header row.")
    suffix = Path(filename).suffix.lower()

    def parse() -> pd.DataFrame:
        if suffix in PARQUET_SUFFIXES:
            return _read_parquet(io.BytesIO(data), None)
        if suffix in TREC_SUFFIXES:
            with tempfile.NamedTemporaryFile(suffix=suffix) as handle:
                handle.write(data)
                handle.flush()
                return read_trec(handle.name, qrels=suffix == ".qrels")
        return pd.read_csv(io.BytesIO(data), sep="\t" if suffix == ".tsv" else ",")

    return _checked(parse, label), label


def _checked(parse, label: str) -> pd.DataFrame:
    """Run ``parse``; a parser failure (Arrow's "not implemented" for features it cannot read
    included) or an empty table becomes an :class:`InputError`."""
    try:
        frame = parse()
    except (ValueError, OSError, NotImplementedError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise input_error(
            label,
            f"could not be read ({type(exc).__name__}: {str(exc).splitlines()[0]}).",
            "save it as UTF-8 CSV with a header row, Parquet, or a TREC run/qrels file.",
        ) from None
    if frame.empty:
        raise input_error(label, "the file has no rows.", "export the table again with its rows.")
    return frame


def _read_path(path: Path, columns: list[str] | None) -> pd.DataFrame:
    suffix = path.suffix.lower()
    if suffix in PARQUET_SUFFIXES:
        return _read_parquet(path, columns)
    if suffix in TREC_SUFFIXES:
        return read_trec(path, qrels=suffix == ".qrels")
    if suffix == ".tsv":
        return pd.read_csv(path, sep="\t")
    frame = pd.read_csv(path, sep=None if suffix == ".txt" else ",", engine="python" if suffix == ".txt" else "c")
    if len(frame.columns) == 1 and " " in str(frame.columns[0]):
        return read_trec(path, qrels=len(str(frame.columns[0]).split()) == 4)
    return frame


def _read_parquet(source, columns: list[str] | None) -> pd.DataFrame:
    """The columns of a Parquet file, a path or a binary file object (only ``columns`` when
    given and present), decoded in parallel (Arrow's threads work column by column) into one
    contiguous Arrow buffer each, used by numpy as it is: no conversion copy, and a lower peak
    than ``read_table(...).to_pandas()``. A stored pandas index is not read; rows are numbered
    from 0 as in the file."""
    import pyarrow.parquet as pq

    file = pq.ParquetFile(source)
    schema = file.schema_arrow
    stored_index = {c for c in (schema.pandas_metadata or {}).get("index_columns", []) if isinstance(c, str)}
    names = [name for name in schema.names if name not in stored_index]
    if columns is not None:
        names = [name for name in dict.fromkeys(columns) if name in names] or names
    table = file.read(columns=names)
    return pd.DataFrame({name: _column_values(table.column(name)) for name in names}, copy=False)


def _column_values(column):
    """Numbers without nulls as a numpy view of Arrow's memory (read-only; no copy when the
    column is one chunk, as ``ParquetFile.read`` returns it), anything else as pandas makes it."""
    import pyarrow as pa

    kind = column.type
    if column.null_count == 0 and (pa.types.is_integer(kind) or pa.types.is_floating(kind)):
        return column.to_numpy()
    return column.to_pandas()


def read_trec(path: str | os.PathLike[str], qrels: bool) -> pd.DataFrame:
    """Read a whitespace-separated TREC run (6 fields) or qrels (4 fields) file."""
    names = TREC_QRELS_COLUMNS if qrels else TREC_RUN_COLUMNS
    frame = pd.read_csv(
        path,
        sep=r"\s+",
        header=None,
        names=names,
        dtype={"user_id": str, "item_id": str},
        engine="c",
    )
    return frame.drop(columns=["iteration", "tag"], errors="ignore")


def split_long_table(
    frame: pd.DataFrame,
    user: str,
    item: str,
    prediction: str,
    target: str,
    threshold: float = 1.0,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Split Evidently's single long table into ``(recommendations, ground_truth)``.

    Rows with a prediction form the lists (the prediction is a rank when every value is a
    positive integer, else a score); rows whose target is at least ``threshold`` form the
    ground truth, whether or not they were predicted.
    """
    for name in (user, item, prediction, target):
        if name not in frame.columns:
            raise input_error(
                "long table",
                f"has no column '{name}' (columns: {', '.join(map(str, frame.columns))}).",
                "name the user, item, prediction and target columns of the table.",
            )
    predicted = frame[frame[prediction].notna()]
    values = pd.to_numeric(predicted[prediction], errors="coerce")
    is_rank = bool(len(values)) and bool(((values >= 1) & (values == values.round())).all())
    recs = pd.DataFrame(
        {user: predicted[user].to_numpy(), item: predicted[item].to_numpy(),
         ("rank" if is_rank else "score"): values.to_numpy()}
    )
    target_values = pd.to_numeric(frame[target], errors="coerce")
    truth_rows = frame[target_values >= threshold]
    truth = pd.DataFrame(
        {user: truth_rows[user].to_numpy(), item: truth_rows[item].to_numpy(),
         "relevance": target_values[target_values >= threshold].to_numpy()}
    )
    return recs, truth
