"""Gathers and offsets of large index arrays, split over threads, one cache-sized chunk of
native index integers at a time: the lowest layer of the id index and of the text ids."""

from __future__ import annotations

import numpy as np

from metrics_core._numeric.parallel import PARALLEL_MIN, chunks, map_chunks, thread_shares

INDEX_CHUNK = 1 << 16  # values per pass when used as indices: the index buffer stays in cache


def index_chunks(values: np.ndarray, low: int):
    """``values - low`` as native index integers, one cache-sized chunk at a time (numpy casts
    narrower index arrays on every fancy-index call, which costs more than the gather itself).
    Yields ``(start, stop, indices)``; the buffer is reused between chunks."""
    buffer = np.empty(min(INDEX_CHUNK, len(values)), dtype=np.intp)
    for start in range(0, len(values), INDEX_CHUNK):
        part = values[start:start + INDEX_CHUNK]
        indices = buffer[:len(part)]
        np.subtract(part, low, out=indices, casting="unsafe")
        yield start, start + len(part), indices


def in_parallel(n: int, work):
    """``work(start, stop)`` over ``0 .. n`` split in one range per thread (small arrays: one);
    the results, in order."""
    return map_chunks(work, chunks(n, n) if n < PARALLEL_MIN else thread_shares(n))


def lookup(table: np.ndarray, values: np.ndarray, low: int, out: np.ndarray | None = None) -> np.ndarray:
    """``table[values - low]``, into ``out`` when given: ``values`` itself may be it (each chunk's
    indices are copied out before the chunk is written), which saves the first touch of a new
    array. Every ``values - low`` must index ``table`` (the callers know their bounds): the gather
    runs in numpy's ``clip`` mode, which writes into ``out`` directly, where its checking mode
    buffers every chunk (10M item ids: 8.5 ms against 14.5 ms on two threads)."""
    out = np.empty(len(values), dtype=table.dtype) if out is None else out

    def work(start: int, stop: int) -> None:
        for first, last, indices in index_chunks(values[start:stop], low):
            np.take(table, indices, out=out[start + first:start + last], mode="clip")

    in_parallel(len(values), work)
    return out
