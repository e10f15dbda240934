"""Opaque user and item ids mapped to dense integer codes, once."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from metrics_core._numeric.distinct import distinct
from metrics_core._numeric.parallel import PARALLEL_MIN, THREADS
from metrics_core.inputs.encoded import compiled_for
from metrics_core.inputs.gather import INDEX_CHUNK, in_parallel, index_chunks, lookup
from metrics_core.inputs.text_ids import TextIds, as_text, is_text, sorted_distinct

LOOKUP_TABLE_LIMIT = 1 << 26  # ids spanning fewer values than this use a direct lookup table
RUN_PIECE = 1 << 18  # values compared with their neighbours at a time by run_heads (a 256 KB mask)
OWN_FLAGS_MAX = 1 << 22  # id ranges up to which the compiled marking gives each thread flags of its own


@dataclass(frozen=True)
class IdIndex:
    """Sorted unique ids (int64 or str) and their codes ``0 .. len-1``.

    Integer ids in a compact range are coded through a lookup table (a gather, the fastest
    way); anything else through a hash index. Ids not in the index get code -1.
    """

    ids: np.ndarray
    _low: int = 0
    _table: np.ndarray | None = None

    @classmethod
    def union(cls, arrays: list[np.ndarray | TextIds]) -> IdIndex:
        """The index of every id that occurs in any of ``arrays`` (already unified by type:
        all integer arrays, or all :class:`TextIds`, whose distinct texts are all in use)."""
        arrays = [a for a in arrays if len(a)]
        if not arrays:
            return cls(np.array([], dtype=np.int64))
        if is_text(arrays[0]):
            first = arrays[0].values
            if all(len(a.values) == len(first) and np.array_equal(a.values, first) for a in arrays[1:]):
                return cls(first)  # (sorted and distinct already: every table has the same ids, the usual case)
            return cls(sorted_distinct(np.concatenate([a.values for a in arrays]))[0])
        arrays = [run_heads(a) if _grouped(a) else a for a in arrays]  # (the same ids, far fewer values)
        extremes = [extremes_of(a) for a in arrays]
        low, high = min(e[0] for e in extremes), max(e[1] for e in extremes)
        if high - low < LOOKUP_TABLE_LIMIT:
            present = np.zeros(high - low + 1, dtype=bool)
            for a in arrays:
                _mark_present(present, a, low)
            ids = np.flatnonzero(present) + low
            table = np.full(high - low + 1, -1, dtype=np.int32 if len(ids) < 2**31 else np.int64)
            table[ids - low] = np.arange(len(ids))
            return cls(ids.astype(np.int64), low, table)
        return cls(distinct(np.concatenate([pd.unique(a) for a in arrays])))

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def is_integer(self) -> bool:
        return self.ids.dtype.kind in "iu"

    def codes(self, values: np.ndarray | TextIds, bounds: tuple[int, int] | None = None) -> np.ndarray:
        """Codes of ``values`` (int32 when they fit), -1 for ids not in the index. Text ids are
        looked up once per distinct text, then gathered; when their distinct texts are the
        index's own (one table holding every id, the usual case for users), their codes already
        are the index's codes and are returned as they are. ``bounds``: the integer values'
        minimum and maximum when the caller has them (their distinct ids, sorted), which saves
        a pass over 100M rows."""
        if is_text(values):
            if not len(values):
                return np.zeros(0, np.int32)
            if len(values.values) == len(self.ids) and np.array_equal(values.values, self.ids):
                return values.codes  # (both sorted and distinct: the same texts at the same places)
            return lookup(self.codes(values.values), values.codes, 0)
        if self._table is not None and values.dtype.kind in "iu":
            if not len(values):
                return np.zeros(0, dtype=self._table.dtype)
            high = self._low + len(self._table) - 1
            low, most = bounds if bounds is not None else extremes_of(values)
            if low >= self._low and most <= high:
                if len(self._table) == len(self.ids):  # ids are low, low+1, ...: the code is an offset
                    return _offset(values, self._low) if self._low else values
                change = values[1:] != values[:-1] if _grouped(values) else None  # (items: no pass to find out)
                if change is not None and (np.count_nonzero(change) + 1) * 4 < len(values):  # grouped: each run once
                    starts = np.flatnonzero(np.concatenate([[True], change]))
                    codes = lookup(self._table, values[starts], self._low)
                    return np.repeat(codes, np.diff(np.append(starts, len(values))))
                return lookup(self._table, values, self._low)
            shifted = values.astype(np.int64) - self._low
            inside = (shifted >= 0) & (shifted < len(self._table))
            out = np.full(len(values), -1, dtype=self._table.dtype)
            out[inside] = self._table[shifted[inside]]
            return out
        if self.is_integer and values.dtype.kind in "iu":
            where = np.searchsorted(self.ids, values).clip(0, max(len(self.ids) - 1, 0))
            found = self.ids[where] == values if len(self.ids) else np.zeros(len(values), bool)
            return np.where(found, where, -1).astype(np.int32)
        index = pd.Index(self.ids.astype(str) if self.is_integer else self.ids)
        keys = values if values.dtype == object else values.astype(str)
        return index.get_indexer(keys).astype(np.int32)

    def descending_text_order(self) -> np.ndarray:
        """For each code, its place when ids are sorted as text in descending order.

        trec_eval breaks score ties by comparing document ids as strings, larger first.
        """
        _, ascending = sorted_distinct(as_text(self.ids))  # (the ids are distinct, and so are their texts)
        return len(self.ids) - 1 - ascending


def extremes_of(values: np.ndarray) -> tuple[int, int]:
    """``(min, max)`` of a non-empty integer array: on a few threads, each reading its share in
    cache-sized blocks, so that the maximum reads what the minimum just brought into the cache
    (100M int32 ids: one pass over memory on two cores, where ``values.min()`` and
    ``values.max()`` make two on one)."""
    def share(start: int, stop: int) -> tuple[int, int]:
        low, high = int(values[start]), int(values[start])
        for first in range(start, stop, INDEX_CHUNK):
            block = values[first:min(stop, first + INDEX_CHUNK)]
            low, high = min(low, int(block.min())), max(high, int(block.max()))
        return low, high

    parts = in_parallel(len(values), share)
    return min(p[0] for p in parts), max(p[1] for p in parts)


def _mark_present(present: np.ndarray, values: np.ndarray, low: int) -> None:
    """``present[values - low] = True`` (threads may set the same flag: they all write True).

    Values go in blocks; once every flag is set (a dense range of ids, the usual catalog) the
    rest cannot change anything and is skipped. The check runs only when ``present`` is no
    larger than a block, so it never costs more than the block it may save. Blocks of many ids
    (:func:`~metrics_core.inputs.encoded.compiled_for`) in a range of at most
    :data:`OWN_FLAGS_MAX` are marked by the compiled loop (:func:`_mark_compiled`).
    """
    block = PARALLEL_MIN * THREADS * 2
    compiled = values.dtype in (np.int32, np.int64) and len(present) <= OWN_FLAGS_MAX and compiled_for(len(values))
    for first in range(0, len(values), block):
        if len(present) <= block and present.all():  # (also when an earlier array set them all)
            return
        part = values[first:first + block]
        if compiled:
            _mark_compiled(present, part, low)
            continue

        def work(start: int, stop: int, part: np.ndarray = part) -> None:
            for _, _, indices in index_chunks(part[start:stop], low):
                present[indices] = True

        in_parallel(len(part), work)


def _mark_compiled(present: np.ndarray, values: np.ndarray, low: int) -> None:
    """:func:`_mark_present` by :func:`~metrics_core.inputs.kernels.mark_rows`, each thread on
    flags of its own, then or-ed into ``present`` (threads setting flags in the same cache lines
    slow each other down: 10M Zipf-popular item ids of 50,000 in 5-7 ms on two threads, against
    14-16 ms for numpy's indexed assignment)."""
    from metrics_core.inputs.kernels import mark_rows

    def work(start: int, stop: int) -> np.ndarray:
        flags = np.zeros(len(present), dtype=bool)
        mark_rows(flags, values, low, start, stop)
        return flags

    for flags in in_parallel(len(values), work):
        present |= flags


def run_heads(values: np.ndarray) -> np.ndarray:
    """The values that start a run of equal neighbours within each piece of :data:`RUN_PIECE`
    values (a run across a piece's or a thread's border is given twice, and an id may come
    back in a later run): every distinct value of ``values``, in about one value per run. For
    ids in runs (rows sorted by user), the id index then reads the extremes and marks the ids
    in these few values instead of every value (the runs of the whole array at once, a mask as
    large as the array on one thread, cost more)."""
    def share(start: int, stop: int) -> np.ndarray:
        pieces = []
        for first in range(start, stop, RUN_PIECE):
            part = values[first:min(stop, first + RUN_PIECE)]
            pieces += [part[:1], part[1:][part[1:] != part[:-1]]]
        return np.concatenate(pieces)

    return np.concatenate(in_parallel(len(values), share))


def _offset(values: np.ndarray, low: int) -> np.ndarray:
    """``values - low``."""
    out = np.empty_like(values)
    in_parallel(len(values), lambda start, stop: np.subtract(values[start:stop], low, out=out[start:stop]))
    return out


def _grouped(values: np.ndarray, sample: int = 1000) -> bool:
    """Whether most neighbours in the first ``sample`` values are equal (runs of one id)."""
    head = values[:sample]
    return len(head) > 1 and np.count_nonzero(head[1:] == head[:-1]) * 2 > len(head)
