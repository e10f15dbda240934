"""Read input tables from CSV, Parquet, TREC run / qrels files, or pandas DataFrames.

Nothing here interprets the data: it returns a DataFrame and a label naming where it came
from, for error messages. Validation and encoding happen in :mod:`metrics_core.inputs.validate` and
:mod:`metrics_core.inputs.encode`.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import warnings
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from metrics_core._numeric.parallel import map_threads
from metrics_core.errors import InputError, Note, input_error
from metrics_core.inputs.containers import identify
from metrics_core.inputs.text_ids import COMPILED_MIN
from metrics_core.inputs.validate import ALL_CATEGORIES_USED, FILE_COLUMNS, NUMBERS_AS_TEXT, column_list

TREC_RUN_COLUMNS = ["user_id", "iteration", "item_id", "rank", "score", "tag"]
TREC_QRELS_COLUMNS = ["user_id", "iteration", "item_id", "relevance"]
QRELS_GRADE = TREC_QRELS_COLUMNS[-1]  # a qrels file's grade column, used unless another is named
PARQUET_SUFFIXES = {".parquet", ".pq"}
TREC_SUFFIXES = {".run", ".trec", ".qrels"}
TREC_FIELDS = {False: "qid Q0 docno rank score tag", True: "qid iter docno rel"}
DELIMITERS = (",", "\t", ";", "|")
SNIFF_BYTES = 1 << 16
TYPE_BLOCK_BYTES = 1 << 20  # the CSV block whose inferred number types the whole read is given (Arrow's default)
DECIMAL_COMMA = re.compile(r"^\s*-?[0-9]+,[0-9]+\s*$")
DECIMAL_POINT = re.compile(r"^\s*-?[0-9]*\.[0-9]+\s*$")
QRELS = "rankscope.qrels"  # frame.attrs key: the table was read from a TREC qrels file
NOTES = "rankscope.notes"  # frame.attrs key: how the file was read, when that is worth saying
READ_NOTES_KEY = b"rankscope.read_notes"  # a stored table's Parquet metadata: those notes, without the label
INT32 = np.iinfo(np.int32)


@dataclass(frozen=True)
class TableFile:
    """A file held in memory (an upload): its name, which chooses the format and names it in
    messages, and its bytes, kept as they came."""

    name: str
    data: bytes


@dataclass(frozen=True)
class StoredTable:
    """A table kept in the run store: Parquet at ``path``, named in messages by the file it was
    uploaded as (``name``). A qrels file keeps its meaning: its grades are always used."""

    name: str
    path: Path

    def column_names(self) -> list[str]:
        """The columns, from the Parquet schema (nothing is parsed)."""
        import pyarrow.parquet as pq

        return list(pq.read_schema(self.path).names)


def is_qrels(frame: pd.DataFrame) -> bool:
    """Whether ``frame`` was read from a TREC qrels file (its grades are then always used)."""
    return bool(frame.attrs.get(QRELS))


def read_notes(frame: pd.DataFrame) -> list[Note]:
    """What is worth knowing about how ``frame`` was read (a sniffed delimiter, decimal commas)."""
    return list(frame.attrs.get(NOTES, []))


def read_table(
    source,
    role: str,
    columns: list[str] | None = None,
    ids: list[str] | None = None,
) -> tuple[pd.DataFrame, str]:
    """Return ``(frame, label)`` for a path, a pandas or polars DataFrame, or an Arrow table.

    ``role`` ("recommendations", "ground truth", ...) only names the table in messages.
    ``columns`` restricts a Parquet read to the columns that exist among them (faster, less
    memory). DataFrames are returned as they are, never modified: encoding copies what it
    needs. A CSV is read by Arrow's reader when ``ids`` (the id columns) are named, by pandas
    otherwise (see :func:`_read_csv_arrow`); text read by Arrow, from a CSV or Parquet, stays in
    Arrow's memory (pandas' ``str``, or for Parquet text ids a categorical of their texts: see
    :func:`_read_parquet`), never a Python string per row. TREC files (``.run``/``.trec``: ``qid Q0 docno
    rank score tag``; ``.qrels``: ``qid iter docno relevance``) are read as ``user_id, item_id,
    rank, score`` and ``user_id, item_id, relevance``.
    """
    if isinstance(source, pd.DataFrame):
        label = f"{role} (DataFrame)"
        require_unique_columns([str(c) for c in source.columns], label)
        return source, label
    arrow = as_arrow(source)
    if arrow is not None:
        label = f"{role} ({type(source).__module__.split('.')[0]} {type(source).__name__})"
        require_unique_columns([str(c) for c in arrow.column_names], label)
        names = arrow.column_names
        if columns is not None:
            names = [name for name in dict.fromkeys(columns) if name in names] or names
        return pd.DataFrame(_columns_values(arrow, names), copy=False), label
    if isinstance(source, TableFile):
        return read_bytes(source.data, source.name, role)
    if isinstance(source, StoredTable):
        label = f"{role} ({source.name})"
        qrels = Path(source.name).suffix.lower() == ".qrels"
        if qrels and columns is not None:
            columns = [*columns, QRELS_GRADE]  # (a qrels file's grades are always used)
        frame = _checked(lambda: _read_parquet(source.path, columns, label, ids), label)
        if qrels:
            frame.attrs[QRELS] = True
        notes = stored_notes(source.path, label)
        if notes:
            frame.attrs[NOTES] = notes
        return frame, label
    path = Path(source)
    label = f"{role} ({path.name})"
    if not path.is_file():
        raise input_error(label, f"no file at {path}.", "check the path and that the file exists.")
    if path.stat().st_size == 0:
        raise input_error(label, "the file is empty.", "export the table again with a header row.")
    with path.open("rb") as handle:
        found = identify(handle.read(4096), path.name, label, path.read_bytes)
    if found.kind == "parquet":
        return _checked(lambda: _read_parquet(path, columns, label, ids), label), label
    if found.data is not None:
        return _parsed_bytes(found.data, found.name, label, found.note), label
    return _checked(lambda: _read_path(path, columns, label, ids), label), label


def as_arrow(source):
    """``source`` as an Arrow table when it is one (a ``pyarrow.Table`` or ``RecordBatch``, or a
    polars DataFrame, whose ``to_arrow()`` shares its memory), else None. Its columns are then used
    as a Parquet file's are (numbers as numpy views of Arrow's memory, no copy through pandas)."""
    module = type(source).__module__.split(".")[0]
    if module == "polars" and hasattr(source, "to_arrow"):
        return source.to_arrow()
    if module != "pyarrow":
        return None
    import pyarrow as pa

    if isinstance(source, pa.RecordBatch):
        return pa.Table.from_batches([source])
    return source if isinstance(source, pa.Table) else None


def read_bytes(data: bytes, filename: str, role: str) -> tuple[pd.DataFrame, str]:
    """Like :func:`read_table` for a file's bytes (an upload); the suffix of ``filename``
    chooses the format and ``filename`` names it in messages."""
    label = f"{role} ({filename})"
    if not data:
        raise input_error(label, "the file is empty.", "export the table again with a header row.")
    found = identify(data[:4096], filename, label, lambda: data)
    if found.kind == "parquet":
        return _checked(lambda: _read_parquet(io.BytesIO(data), None, label), label), label
    return _parsed_bytes(data if found.data is None else found.data, found.name, label, found.note), label


def _parsed_bytes(data: bytes, name: str, label: str, note: str = "") -> pd.DataFrame:
    """A text table's bytes read by the format its name's suffix says (TREC, or delimited text);
    ``note`` (how the bytes were unpacked or re-encoded) is kept among the read notes."""
    suffix = Path(name).suffix.lower()
    if not data.strip():
        raise input_error(label, "the file is empty.", "export the table again with a header row.")

    def parse() -> pd.DataFrame:
        if suffix in TREC_SUFFIXES:
            return read_trec(io.BytesIO(data), qrels=suffix == ".qrels", label=label)
        return _read_csv(data, suffix, label)

    frame = _checked(parse, label)
    if note:
        frame.attrs[NOTES] = [Note("read_format", f"{label}: {note}.", 1), *frame.attrs.get(NOTES, [])]
    return frame


def _checked(parse, label: str) -> pd.DataFrame:
    """Run ``parse``; a parser failure (Arrow's "not implemented" for features it cannot read
    included) or an empty table becomes an :class:`InputError`."""
    try:
        frame = parse()
    except InputError:
        raise
    except (ValueError, OSError, NotImplementedError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise unreadable(label, exc) from None
    if frame.empty:
        raise input_error(label, "the file has no rows.", "export the table again with its rows.")
    return frame


def unreadable(label: str, exc: BaseException) -> InputError:
    """The error of a file its parser could not read (the same words wherever it is read)."""
    return input_error(label, f"could not be read ({type(exc).__name__}: {str(exc).splitlines()[0]}).",
                       "save it as UTF-8 CSV with a header row, Parquet, or a TREC run/qrels file.")


def stored_notes(path: Path, label: str) -> list[Note]:
    """How the file a stored table was made from was read (kept in its Parquet metadata by
    :func:`metrics_core.store.files.write_parquet`), named by ``label``."""
    import pyarrow.parquet as pq

    metadata = pq.read_schema(path).metadata or {}
    texts = json.loads(metadata.get(READ_NOTES_KEY, b"[]"))
    return [Note("read_format", f"{label}: {text}", 1) for text in texts]


def _read_path(path: Path, columns: list[str] | None, label: str, ids: list[str] | None) -> pd.DataFrame:
    suffix = path.suffix.lower()
    if suffix in PARQUET_SUFFIXES:
        return _read_parquet(path, columns, label, ids)
    if suffix in TREC_SUFFIXES:
        return read_trec(path, qrels=suffix == ".qrels", label=label)
    with path.open("rb") as handle:
        head = handle.read(SNIFF_BYTES)
    return _read_csv(path, suffix, label, head, columns, ids)


def _read_csv(source, suffix: str, label: str, head: bytes | None = None, columns: list[str] | None = None,
              ids: list[str] | None = None) -> pd.DataFrame:
    """A delimited text file (a path or its bytes), its delimiter and decimal mark sniffed from
    the first lines (:func:`sniff_csv`); duplicate header names are an error. A file of
    whitespace-separated fields without a header is read as a TREC run (6 fields) or qrels (4).
    With ``ids`` named, Arrow's reader is tried first (see :func:`_read_csv_arrow`)."""
    if head is None:
        head = source[:SNIFF_BYTES]
    text_format = sniff_csv(head, suffix)
    require_unique_columns(text_format.header, label)
    source = io.BytesIO(source) if isinstance(source, bytes) else source
    frame = _read_csv_arrow(source, text_format, columns, ids) if ids else None
    if frame is None:
        _rewind(source)
        frame = _pandas_csv(source, sep=text_format.sep, decimal=text_format.decimal)
    if len(frame.columns) == 1 and " " in str(frame.columns[0]).strip():
        _rewind(source)
        return read_trec(source, qrels=len(str(frame.columns[0]).split()) == 4, label=label)
    if text_format.note:
        frame.attrs[NOTES] = [Note("read_format", f"{label}: {text_format.note}", 1)]
    return frame


def _pandas_csv(source, **options) -> pd.DataFrame:
    """``pd.read_csv(source, **options)`` (delimited text and TREC files alike), whose
    ``DtypeWarning`` is not shown: see the filter set below."""
    return pd.read_csv(source, **options)


# pandas types each block of 2^18 rows of a text file on its own, and warns when a column's blocks
# disagree (an id column whose text starts far down holds ints, then strs; a score column with one
# word in it). The checks after reading decide what such a column is (ids: text, validate.ids;
# numbers: the rows that are not, named in the error), the same on every entry point, so the
# warning, printed with a line of rankscope's source on the terminal, tells the user nothing they
# can act on. This filter, set once at import, ignores it for this module's reads alone (pandas
# names the caller as the warning's module). Not catch_warnings around each read: in Python 3.11
# it swaps the process's filters, and the command reads the ground truth on a thread beside the
# recommendations, so one read's exit put the warning back in the middle of the other (1 run in 3).
# Not low_memory=False: it types whole columns, for 15% more memory and 25% more time on a large file.
warnings.filterwarnings("ignore", category=pd.errors.DtypeWarning, module=rf"{re.escape(__name__)}\Z")


PARQUET_FAILURES = (OSError, ValueError, NotImplementedError)  # what pyarrow raises for a Parquet file it
# cannot open or decode (ArrowInvalid is a ValueError, ArrowNotImplementedError a NotImplementedError)


PANDAS_MISSING = ["", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>",
                  "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"]  # what pandas reads as missing


def _read_csv_arrow(source, text_format: TextFormat, columns: list[str] | None, ids: list[str]) -> pd.DataFrame | None:
    """A CSV read by Arrow's parallel reader (text stays in Arrow's memory: no Python string
    per row; ids Arrow kept as text that pandas would read as numbers, such as `` 7``, are
    turned into numbers by :func:`validate.ids`, as the frame's attrs say), or None where
    pandas would read the file differently: a line Arrow cannot parse (or a column whose type
    changes far down), ids read as floats, or a column other than the ids that is not all
    numbers or booleans (pandas keeps dates as text and reads padded numbers as numbers)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    header = text_format.header
    wanted = [name for name in dict.fromkeys(columns or header) if name in header] or header
    options = pacsv.ConvertOptions(include_columns=wanted, decimal_point=text_format.decimal,
                                   null_values=PANDAS_MISSING, strings_can_be_null=True)
    parse = pacsv.ParseOptions(delimiter=text_format.sep)
    failures = (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError)
    try:
        numbers, rows_per_byte = _first_block(source, parse, options)
    except failures:
        numbers, rows_per_byte = {}, 0.0
    parts = _numbers_in_parts(source, text_format, wanted, ids, numbers, rows_per_byte)
    if parts is not None:
        return _with_read_columns(pd.DataFrame(parts, copy=False), wanted, ids, header)
    table = None
    if numbers:
        _rewind(source)
        try:
            table = pacsv.read_csv(source, parse_options=parse, convert_options=_typed(options, numbers))
        except failures:
            table = None  # (a number column that changes type further down: Arrow's own inference below)
    if table is None:
        _rewind(source)
        try:
            table = pacsv.read_csv(source, parse_options=parse, convert_options=options)
        except failures:
            return None
    numbers = (pa.types.is_integer, pa.types.is_floating, pa.types.is_boolean, pa.types.is_null)
    if table.num_rows == 0 or any(not any(kind(field.type) for kind in numbers) for field in table.schema
                                  if field.name not in ids) or any(pa.types.is_floating(field.type) for field
                                                                   in table.schema if field.name in ids):
        return None  # (ids Arrow read as floats may be integers beyond int64, which pandas reads exactly)
    return _with_read_columns(pd.DataFrame(_columns_values(table, wanted), copy=False), wanted, ids, header)


def _with_read_columns(frame: pd.DataFrame, wanted: list[str], ids: list[str], header: list[str]) -> pd.DataFrame:
    """``frame``, the ``wanted`` columns of a CSV whose columns are ``header``, with what its
    attrs say of them: which ids may be numbers read as text, and the file's columns when only
    some were read (for messages)."""
    frame.attrs[NUMBERS_AS_TEXT] = [name for name in ids if name in wanted]
    if len(wanted) < len(header):
        frame.attrs[FILE_COLUMNS] = list(header)
    return frame


def _first_block(source, parse, options) -> tuple[dict, float]:
    """The number types Arrow infers from the file's first block (integer and float columns
    only, wanted or not), and its rows per byte.

    The whole-file read is given these types: left to infer, Arrow tries each type again on
    every block, and a number column that turns to text or to fractions further down is re-read
    whole; given them, a large CSV is read faster. A value that does not fit the first block's type
    raises ``ArrowInvalid``: the caller then reads the file with Arrow's inference, as before,
    so the result is the same either way."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    every_column = pacsv.ConvertOptions(decimal_point=options.decimal_point, null_values=options.null_values,
                                        strings_can_be_null=options.strings_can_be_null)
    with pacsv.open_csv(source, read_options=pacsv.ReadOptions(block_size=TYPE_BLOCK_BYTES), parse_options=parse,
                        convert_options=every_column) as reader:
        schema = reader.schema
        try:
            rows = reader.read_next_batch().num_rows
        except StopIteration:
            rows = 0
    numbers = {field.name: field.type for field in schema
               if pa.types.is_integer(field.type) or pa.types.is_floating(field.type)}
    return numbers, rows / TYPE_BLOCK_BYTES


def _typed(options, numbers: dict):
    """``options`` with the column types ``numbers`` (of the columns it includes)."""
    import pyarrow.csv as pacsv

    included = set(options.include_columns)
    numbers = {name: kind for name, kind in numbers.items() if name in included}
    return pacsv.ConvertOptions(column_types=numbers, include_columns=options.include_columns,
                                decimal_point=options.decimal_point, null_values=options.null_values,
                                strings_can_be_null=options.strings_can_be_null)


def _numbers_in_parts(source, text_format: TextFormat, wanted: list[str], ids: list[str], numbers: dict,
                      rows_per_byte: float) -> dict | None:
    """The ``wanted`` columns of a large CSV at a path read in byte ranges on threads
    (:mod:`metrics_core.inputs.csv_parts`) when every column of the file is a number by the
    first block (the ids integers), else None. Every column, not only the wanted ones: the
    ranges do not parse quotes, and a quoted text column could hide a line end (a record read
    as two rows); a quote in a column converted to numbers fails the conversion instead."""
    import pyarrow as pa

    from metrics_core.inputs.csv_parts import PARTS_MIN_BYTES, read_in_parts

    header = text_format.header
    if not isinstance(source, str | os.PathLike) or not all(name in numbers for name in header) or any(
            pa.types.is_floating(numbers[name]) for name in ids if name in wanted) or rows_per_byte <= 0:
        return None
    if os.path.getsize(source) < PARTS_MIN_BYTES:
        return None
    return read_in_parts(source, text_format.sep, text_format.decimal, header, {name: numbers[name] for name in header},
                         wanted, rows_per_byte, PANDAS_MISSING)


def _rewind(source) -> None:
    """Back to the start of a file object (a path needs nothing)."""
    if hasattr(source, "seek"):
        source.seek(0)


@dataclass(frozen=True)
class TextFormat:
    """How a delimited text file is read: ``sep``, ``decimal``, its ``header`` fields, and a
    ``note`` in words when it is not the plain comma-separated form."""

    sep: str
    decimal: str
    header: list[str]
    note: str = ""


def sniff_csv(head: bytes, suffix: str = ".csv") -> TextFormat:
    """The delimiter and decimal mark of a text table from its first bytes.

    ``.tsv`` files are tab-separated. Otherwise the delimiter is the first of ``,`` tab ``;``
    ``|`` that occurs in the header and the same number of times on each of the first lines;
    failing that, the one the header holds most of (a comma when it holds none). With a
    delimiter other than a comma, numbers written with a decimal comma (``0,5``) and none
    with a decimal point are read with ``,`` as the decimal mark.

    >>> found = sniff_csv(b"user;item;score\\n1;a;0,5\\n2;b;1,25\\n")
    >>> found.sep, found.decimal, found.header
    (';', ',', ['user', 'item', 'score'])
    """
    text = head.decode("utf-8", errors="replace")
    lines = [line for line in text.splitlines() if line.strip()]
    if len(head) == SNIFF_BYTES and len(lines) > 1:
        lines = lines[:-1]  # the last line may be cut
    lines = lines[:50] or [""]
    header = lines[0]
    if suffix == ".tsv":
        sep = "\t"
    else:
        consistent = [d for d in DELIMITERS if header.count(d) and all(line.count(d) == header.count(d)
                                                                         for line in lines[1:20])]
        sep = consistent[0] if consistent else max(DELIMITERS, key=lambda d: (header.count(d), d == ","))
        if not header.count(sep):
            sep = ","
    fields = [field for line in lines[1:] for field in next(csv.reader([line], delimiter=sep), [])]
    decimal = "," if sep != "," and any(DECIMAL_COMMA.match(f) for f in fields) and not any(
        DECIMAL_POINT.match(f) for f in fields) else "."
    words = {"\t": "a tab", ",": "a comma"}.get(sep, repr(sep))
    note = ""
    if sep != "," and suffix != ".tsv":
        note = f"read with {words} between columns"
    if decimal == ",":
        note = (note + " and a decimal comma (0,5 = 0.5)") if note else "read with a decimal comma (0,5 = 0.5)"
    return TextFormat(sep, decimal, next(csv.reader([header], delimiter=sep), []), note)


def require_unique_columns(names: list[str], label: str) -> None:
    """Each column name occurs once (pandas would silently rename or drop a repeated one)."""
    repeated = [name for name, count in Counter(names).items() if count > 1]
    if repeated:
        raise input_error(label, f"the column name{'s' if len(repeated) > 1 else ''} "
                          f"{', '.join(repr(r) for r in repeated)} occur{'' if len(repeated) > 1 else 's'} more "
                          "than once in the header, so it is unclear which column holds what.",
                          "rename or drop the repeated columns so that every column has its own name.")


def _read_parquet(source, columns: list[str] | None, label: str, ids: list[str] | None = None) -> pd.DataFrame:
    """The columns of a Parquet file, a path or a binary file object (only ``columns`` when
    given and present). A stored pandas index is not read; rows are numbered from 0 as in the
    file. Number columns without nulls are decoded straight into numpy arrays
    (:func:`_numbers_by_row_group`); the others by Arrow's reader into one buffer each, used by
    numpy or pandas as it is. Text id columns (among ``ids``) become pandas categoricals of
    their texts: from :data:`COMPILED_MIN` rows of a path, coded as they are read
    (:func:`_coded_while_read`; every category used, as ``frame.attrs`` says), else read as
    the file's dictionary codes when it stores them so (:func:`_stored_as_codes`) or as text."""
    import pyarrow.parquet as pq

    file = pq.ParquetFile(source)
    schema = file.schema_arrow
    require_unique_columns(schema.names, label)
    stored_index = {c for c in (schema.pandas_metadata or {}).get("index_columns", []) if isinstance(c, str)}
    in_file = names = [name for name in schema.names if name not in stored_index]
    if columns is not None:
        names = [name for name in dict.fromkeys(columns) if name in names] or names
    numbers = {name: dtype for name in names if (dtype := _number_type(file, name)) is not None}
    values = (_numbers_by_row_group(file, source, numbers) if numbers else None) or {}
    text_ids = [name for name in names if name in (ids or ()) and _is_text(file, name)]
    coded = [name for name in text_ids if _stored_as_codes(file, name)]
    factorized = []
    if isinstance(source, str | os.PathLike) and file.metadata.num_rows >= COMPILED_MIN:
        values.update({name: text for name in text_ids
                       if (text := _coded_while_read(source, file, name, name in coded)) is not None})
        factorized = [name for name in text_ids if name in values]
    others = [name for name in names if name not in values]
    if others:
        coded = [name for name in coded if name in others]
        if coded:  # (a second reader of the same source: read_dictionary is an option of the reader)
            file = pq.ParquetFile(source, read_dictionary=coded)
        table = file.read(columns=others)
        values.update(_columns_values(table, others))
    frame = pd.DataFrame({name: values[name] for name in names}, copy=False)
    if factorized:
        frame.attrs[ALL_CATEGORIES_USED] = factorized
    if len(names) < len(in_file):
        frame.attrs[FILE_COLUMNS] = in_file
    return frame


CODED_BYTES_PER_ROW = 8  # see _stored_as_codes


def _is_text(file, name: str) -> bool:
    """Whether column ``name`` holds text as offsets and bytes (Arrow's string or large_string)."""
    import pyarrow as pa

    kind = file.schema_arrow.field(name).type
    return pa.types.is_string(kind) or pa.types.is_large_string(kind)


def _coded_while_read(path, file, name: str, stored_as_codes: bool) -> pd.Categorical | None:
    """A large text id column as a categorical of its distinct texts (every one in use), coded
    by the compiled hash table as its row groups are read: a column the file stores as plain
    text (distinct user ids, say) row by row (:func:`metrics_core.inputs.text_hash.code_row_groups`),
    one it stores as dictionary codes (:func:`_stored_as_codes`) one dictionary per row group
    (:func:`~metrics_core.inputs.text_hash.code_dictionaries`). None when a row group's statistics
    count a null (the general read's checks
    name those rows) or the table cannot take the column."""
    stats = leaf_statistics(file, name)
    if stats is None or any(s is not None and s.has_null_count and s.null_count for s in stats):
        return None
    from metrics_core.inputs import text_hash  # (numba: imported only for large columns)

    coded = (text_hash.code_dictionaries if stored_as_codes else text_hash.code_row_groups)(path, name)
    if coded is None:
        return None
    codes, distinct = coded
    return pd.Categorical.from_codes(codes, dtype=_distinct_categories(distinct), validate=False)


def _distinct_categories(distinct) -> pd.CategoricalDtype:
    """The categories of texts known to be distinct (a hash table holds each once), without
    pandas' check that they are, which hashes every text again;
    with the check when this pandas lacks the way around it."""
    texts = pd.Index(pd.array(distinct, dtype=pd.StringDtype("pyarrow")))
    unchecked = getattr(pd.CategoricalDtype, "_from_fastpath", None)
    return unchecked(texts, ordered=False) if unchecked is not None else pd.CategoricalDtype(texts)


def _stored_as_codes(file, name: str) -> bool:
    """Whether text column ``name`` (:func:`_is_text`) is stored as dictionary codes in every
    row group, so that reading the codes and each row group's dictionary beats reading every
    row's text.

    Parquet writers code a column through a dictionary page until that page is full (1 MiB in
    Arrow), then fall back to plain text, which a column of item ids seldom reaches and one of
    distinct user ids soon does. A coded row takes at most 4 bytes, a plain one 4 bytes plus
    its text, so a column chunk with a dictionary page and at most
    :data:`CODED_BYTES_PER_ROW` uncompressed bytes a row (the dictionary page included) is
    taken as coded. The guess only chooses the faster reader: Arrow reads plain pages into the
    dictionary too, and either way the values are the same. Reading the codes is several times
    faster than reading the texts and coding them (a path of at least
    :data:`COMPILED_MIN` rows is coded one row group's dictionary at a time instead:
    :func:`_coded_while_read`)."""
    leaf, meta = _leaf(file, name), file.metadata
    if leaf is None or meta.num_rows == 0:
        return False
    for group in range(meta.num_row_groups):
        chunk = meta.row_group(group).column(leaf)
        rows = meta.row_group(group).num_rows
        if not chunk.has_dictionary_page or chunk.total_uncompressed_size > CODED_BYTES_PER_ROW * rows:
            return False
    return True


def _number_type(file, name: str) -> np.dtype | None:
    """The numpy type to decode column ``name`` into, or None to read it the general way.

    A column qualifies when it holds integers or floats and every row group's statistics say
    it has no null (a file without statistics is read the general way). Integers whose values
    all fit in 32 bits by the statistics' minimum and maximum are decoded as int32 (ids,
    ranks and grades usually do): the same values in half the memory, and item codes that
    need no narrowing copy. The statistics are those of the Parquet leaf column named
    ``name`` (:func:`_leaf`)."""
    import pyarrow as pa

    kind = file.schema_arrow.field(name).type
    if not (pa.types.is_integer(kind) or pa.types.is_floating(kind)) or file.metadata.num_rows == 0:
        return None
    stats = leaf_statistics(file, name)
    if not without_nulls(stats):
        return None
    dtype = np.dtype(kind.to_pandas_dtype())
    if dtype.kind in "iu" and dtype.itemsize > 4 and all(s.has_min_max for s in stats):
        low, high = min(int(s.min) for s in stats), max(int(s.max) for s in stats)
        if INT32.min <= low and high <= INT32.max:
            return np.dtype(np.int32)
    return dtype


def leaf_statistics(file, name: str) -> list | None:
    """The statistics of each row group (None where a row group has none) of the Parquet leaf
    column named ``name`` (:func:`_leaf`), None when there is no such column."""
    index = _leaf(file, name)
    if index is None:
        return None
    meta = file.metadata
    return [meta.row_group(group).column(index).statistics for group in range(meta.num_row_groups)]


def without_nulls(stats: list | None) -> bool:
    """Whether the row groups' statistics (:func:`leaf_statistics`) all say: no null."""
    return stats is not None and all(s is not None and s.has_null_count and not s.null_count for s in stats)


def _leaf(file, name: str) -> int | None:
    """The number of the Parquet leaf column named ``name`` (a struct column before it has a
    leaf per field, so Arrow's field number would point at another column), None if not one."""
    leaves = [i for i in range(len(file.schema)) if file.schema.column(i).path == name]
    return leaves[0] if len(leaves) == 1 else None


def _numbers_by_row_group(file, source, types: dict[str, np.dtype]) -> dict | None:
    """Number columns without nulls as numpy arrays of the given types, decoded a row group at
    a time into arrays made once: the peak is the arrays themselves. None if the statistics
    were wrong after all (a null, which has no place in an integer array, or a value outside
    int32 in a column they said fits): the caller then reads the general way, never a wrapped
    or made-up value. Arrow's whole-file read holds about 1.7x the columns' size at its peak;
    reading a path, the row groups are shared between threads (each with its own reader), which
    is also faster. A 64-bit integer column going into int32 is checked by Arrow's minimum and
    maximum, then narrowed as numpy copies it in (Arrow's checked cast made a third pass and a
    buffer)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from metrics_core._numeric.parallel import THREADS, map_chunks, thread_shares

    meta = file.metadata
    starts = np.cumsum([0] + [meta.row_group(g).num_rows for g in range(meta.num_row_groups)])
    names = list(types)
    out = {name: np.empty(meta.num_rows, dtype=dtype) for name, dtype in types.items()}
    by_path = isinstance(source, str | os.PathLike)

    def read_groups(reader, first: int, stop: int) -> bool:
        for group in range(first, stop):
            part = reader.read_row_group(group, columns=names, use_threads=not by_path)
            for name in names:
                column = part.column(name)
                if column.null_count:
                    return False
                if out[name].dtype == np.int32 and not pa.types.is_int32(column.type) and len(column):
                    low, high = pc.min_max(column).values()  # (one pass; the narrowing copy below is another)
                    if low.as_py() < INT32.min or high.as_py() > INT32.max:
                        return False
                np.copyto(out[name][starts[group]:starts[group + 1]], column.to_numpy(), casting="unsafe")
        return True

    def read(first: int, stop: int) -> bool:
        if not by_path:
            return read_groups(file, first, stop)
        with pq.ParquetFile(source) as reader:  # (closed here: the app reads stored files for days)
            return read_groups(reader, first, stop)

    done = map_chunks(read, thread_shares(meta.num_row_groups), threads=THREADS if by_path else 1)
    return out if all(done) else None


def _columns_values(table, names: list[str]) -> dict:
    """:func:`_column_values` of the table's columns ``names``, on a few threads: a CSV's columns
    come in one chunk per block read, and joining them writes new memory, whose first touch
    is most of the cost, which threads share."""
    return dict(zip(names, map_threads(lambda name: _column_values(table.column(name)), names), strict=True))


def _column_values(column):
    """Numbers without nulls as a numpy view of Arrow's memory (read-only; no copy when the
    column is one chunk, as ``ParquetFile.read`` returns it), anything else as pandas makes it."""
    import pyarrow as pa

    kind = column.type
    if column.null_count == 0 and (pa.types.is_integer(kind) or pa.types.is_floating(kind)):
        return column.to_numpy()
    return column.to_pandas()


def read_trec(source, qrels: bool, label: str = "TREC file") -> pd.DataFrame:
    """Read a whitespace-separated TREC run (``qid Q0 docno rank score tag``) or qrels
    (``qid iter docno rel``) file, a path or a binary file object. Ids are read as text. A
    line with another number of fields is an error that names it."""
    names = TREC_QRELS_COLUMNS if qrels else TREC_RUN_COLUMNS
    if not hasattr(source, "read"):
        source = io.BytesIO(Path(source).read_bytes())
    try:
        frame = _pandas_csv(source, sep=r"\s+", header=None, names=names, dtype={"user_id": str, "item_id": str},
                            engine="c")
        short = frame[names[-1]].isna().to_numpy()
    except pd.errors.ParserError:
        short = None
    if short is None or short.any() or not isinstance(frame.index, pd.RangeIndex):  # (extra fields: an index)
        source.seek(0)
        _raise_field_count(source.read(), qrels, label)
    frame = frame.drop(columns=["iteration", "tag"], errors="ignore")
    if qrels:
        frame.attrs[QRELS] = True
    return frame


def _raise_field_count(data: bytes, qrels: bool, label: str) -> None:
    """The error for a TREC file with a line of the wrong length, with real line numbers."""
    expected = len(TREC_FIELDS[qrels].split())
    wrong = [(number, len(line.split())) for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1)
             if line.strip() and len(line.split()) != expected]
    shown = "; ".join(f"found {count} on line {number}" for number, count in wrong[:5])
    more = f" (and {len(wrong) - 5} more lines)" if len(wrong) > 5 else ""
    raise input_error(label, f"expected {expected} fields ({TREC_FIELDS[qrels]}), {shown}{more}.",
                      "give every line exactly these fields separated by spaces or tabs (ids without spaces); a "
                      "table with a header row should be saved as .csv or .tsv instead.")


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
                f"has no column '{name}' (columns: {column_list(frame.columns)}).",
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
