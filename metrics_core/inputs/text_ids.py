"""A column of text ids held as integer codes into its distinct texts.

100M rows of UUID-like ids as Python strings take about 10 GB; as codes they take 400 MB, plus
one string per distinct id. Every table's text ids are read into this form once (by
:func:`metrics_core.inputs.validate.ids`), and everything after works on the codes: the id
index codes the distinct texts once and gathers (:meth:`IdIndex.codes`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from metrics_core._numeric.parallel import PARALLEL_MIN, map_chunks, thread_shares
from metrics_core.inputs.gather import lookup
from metrics_core.inputs.text_order import increasing, sort_order

COMPILED_MIN = 1 << 22  # rows from which text is coded by the compiled hash table (worth numba's first call)


@dataclass(frozen=True)
class TextIds:
    """Ids ``values[codes]``: ``values`` are the distinct texts that occur, sorted (as Python
    compares ``str``) and each once, so comparing codes compares the texts; ``codes`` are int32
    (int64 beyond 2**31 distinct ids)."""

    codes: np.ndarray
    values: np.ndarray

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, rows) -> TextIds:
        """The ids of some rows (a slice, mask or positions), with the same ``values``."""
        return TextIds(self.codes[rows], self.values)

    def texts(self) -> np.ndarray:
        """Every row's id as a ``str`` object (one per row: only for small selections)."""
        return self.values[self.codes]

    @classmethod
    def from_codes(cls, codes: np.ndarray, values, all_used: bool = False) -> TextIds:
        """Ids ``values[codes]`` for any ``values`` (``str`` objects, or Arrow text, which is
        sorted as it is; texts in any order, repeats and texts no row uses allowed): the values
        become the sorted distinct texts in use, the codes follow. ``all_used``: every value is
        some row's (as a factorization gives them), so finding the used ones (a pass over the
        codes) is skipped, and repeats are taken to be rare; Arrow text then already in order,
        each text once, keeps its codes as they are."""
        import pyarrow as pa

        arrow = isinstance(values, pa.Array)
        values = values if arrow else np.asarray(values, dtype=object)
        if all_used and arrow and increasing(values):  # (sorted and distinct already, as text_hash codes them)
            return cls(codes.astype(_code_type(len(values)), copy=False),
                       values.to_numpy(zero_copy_only=False).astype(object, copy=False))
        if all_used:
            used = slice(None)
            distinct, position = sorted_distinct(values, few_repeats=True)
        else:
            used = np.zeros(len(values), dtype=bool)
            used[codes] = True
            distinct, position = sorted_distinct(values.filter(pa.array(used)) if arrow else values[used])
        code_type = _code_type(len(distinct))
        new_code = np.full(len(values), -1, dtype=code_type)
        new_code[used] = position
        if len(values) == len(distinct) and (new_code == np.arange(len(values))).all():
            return cls(codes.astype(code_type, copy=False), distinct)
        return cls(lookup(new_code, codes, 0), distinct)

    @classmethod
    def factorize(cls, values) -> TextIds:
        """Ids of ``values`` (a Series or array; numbers are written as their exact decimal
        text), hashed once so that the per-row work is a code."""
        codes, uniques = pd.factorize(values)
        return cls.from_codes(codes, as_text(np.asarray(uniques)), all_used=True)


def factorize_text(series: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, distinct)`` of a text column without missing values, ``distinct`` possibly
    repeating a text (see :meth:`TextIds.from_codes`).

    A column held by Arrow (pandas' ``str``) is coded on a few threads, one share of the rows
    each: from ``COMPILED_MIN`` rows by the compiled table of :mod:`metrics_core.inputs.text_hash`,
    below that (or for a text type it does not read) by Arrow's dictionary encoding, whose shares'
    dictionaries are put end to end (slower on large columns: each lookup waits on memory).
    """
    arrow = getattr(series.array, "__arrow_array__", None)
    if arrow is None or len(series) < PARALLEL_MIN:
        return pd.factorize(series)
    column = arrow()
    if len(column) >= COMPILED_MIN and _offsets_and_bytes(column.type):
        from metrics_core.inputs import text_hash  # (numba: imported only for large columns)

        coded = text_hash.factorize(column)
        if coded is not None:
            return coded[0], coded[1].to_numpy(zero_copy_only=False)
    shares = thread_shares(len(column))
    encoded = map_chunks(lambda start, stop: column.slice(start, stop - start).dictionary_encode(), shares)
    code_type = _code_type(len(column))  # (codes never exceed the rows)
    codes, distinct, offset = [], [], 0
    for share in encoded:  # the chunks of one encoded share hold one dictionary
        codes += [chunk.indices.to_numpy(zero_copy_only=False).astype(code_type) + code_type(offset)
                  for chunk in share.chunks]
        dictionary = share.chunk(0).dictionary if share.num_chunks else None
        if dictionary is not None:
            distinct.append(dictionary.to_numpy(zero_copy_only=False))
            offset += len(dictionary)
    return np.concatenate(codes), np.concatenate(distinct)


def _offsets_and_bytes(kind) -> bool:
    """Whether Arrow holds this text type as offsets into one byte buffer (not as views)."""
    import pyarrow as pa

    return pa.types.is_string(kind) or pa.types.is_large_string(kind)


def sorted_distinct(texts, few_repeats: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``(distinct, position)``: the distinct texts of ``texts`` (``str`` objects, or an Arrow
    text array: no conversion) sorted as Python compares ``str`` (by code point), as ``str``
    objects, and each text's position among them.

    Arrow hashes and sorts them (UTF-8 bytes compare in code-point order), faster than numpy's
    fixed-width copy and sort, which would also drop a trailing NUL character. With
    ``few_repeats`` (texts that are mostly distinct already) every text is sorted and equal
    neighbours are merged, which saves the hashing; with many repeats, hashing them away first
    sorts fewer.

    >>> distinct, position = sorted_distinct(np.array(["b", "a", "b", "é"], dtype=object))
    >>> distinct.tolist(), position.tolist()
    (['a', 'b', 'é'], [1, 0, 1, 2])
    >>> distinct, position = sorted_distinct(np.array(["b", "a", "b", "é"], dtype=object), few_repeats=True)
    >>> distinct.tolist(), position.tolist()
    (['a', 'b', 'é'], [1, 0, 1, 2])
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(texts, pa.Array):
        array = texts.cast(pa.large_string())
    else:
        try:
            array = pa.array(texts, type=pa.large_string())
        except (pa.ArrowTypeError, pa.ArrowInvalid):  # not all str: written as their text
            array = pa.array(as_text(texts), type=pa.large_string())
    if few_repeats and len(array):
        order = sort_order(array)
        ordered = array.take(order)
        new = np.ones(len(array), dtype=bool)  # a text unlike the one before it, in sorted order
        new[1:] = pc.not_equal(ordered.slice(1), ordered.slice(0, len(array) - 1)).to_numpy(zero_copy_only=False)
        position = np.empty(len(array), dtype=np.int64)
        position[order] = np.cumsum(new) - 1
        return ordered.filter(pa.array(new)).to_numpy(zero_copy_only=False).astype(object), position
    encoded = array.dictionary_encode()
    order = sort_order(encoded.dictionary)
    place = np.empty(len(order), dtype=np.int64)
    place[order] = np.arange(len(order))
    position = place[encoded.indices.to_numpy(zero_copy_only=False)] if len(array) else np.zeros(0, np.int64)
    return encoded.dictionary.take(order).to_numpy(zero_copy_only=False).astype(object), position


def _code_type(distinct: int) -> type:
    """The integer type of codes into ``distinct`` texts."""
    return np.int32 if distinct < 2**31 else np.int64


def as_text(values: np.ndarray) -> np.ndarray:
    """Exact decimal text of numbers (or ``str`` of anything else), as str objects."""
    return pd.Series(values, copy=False).astype(str).to_numpy(dtype=object)


def is_text(ids) -> bool:
    """Whether an id column was read as text (else it is an integer array)."""
    return isinstance(ids, TextIds)
