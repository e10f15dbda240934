"""Work split in chunks of users and run on a few threads (numpy releases the GIL in its
array loops, sorts and searches, so chunks of array work overlap on separate cores)."""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

THREADS = max(1, min(4, os.cpu_count() or 1))
PARALLEL_MIN = 1 << 20  # arrays at least this long are worth splitting between threads
Result = TypeVar("Result")
Item = TypeVar("Item")


def chunks(total: int, size: int) -> list[tuple[int, int]]:
    """``(start, stop)`` bounds covering ``0 .. total`` in pieces of ``size``.

    >>> chunks(5, 2)
    [(0, 2), (2, 4), (4, 5)]
    """
    size = max(1, size)
    return [(start, min(total, start + size)) for start in range(0, total, size)]


def thread_shares(total: int, threads: int = THREADS) -> list[tuple[int, int]]:
    """``0 .. total`` in one range per thread (``threads`` ranges of about equal length)."""
    return chunks(total, -(-total // threads))


def map_chunks(work: Callable[[int, int], Result], bounds: list[tuple[int, int]],
               threads: int = THREADS) -> list[Result]:
    """``[work(start, stop) for each bound]``, in order, on up to ``threads`` threads."""
    return map_threads(lambda bound: work(*bound), bounds, threads)


def map_threads(work: Callable[[Item], Result], items: list[Item], threads: int = THREADS) -> list[Result]:
    """``[work(item) for item in items]``, in order, on up to ``threads`` threads (the first
    exception, in order, is raised)."""
    if threads > 1 and len(items) > 1:
        with ThreadPoolExecutor(min(threads, len(items))) as pool:
            return list(pool.map(work, items))
    return [work(item) for item in items]


def meanwhile(work: Callable[[], Result]) -> Future[Result]:
    """Start ``work`` on a thread of its own; the future's ``result()`` waits for it and raises
    what it raised."""
    pool = ThreadPoolExecutor(1)
    started = pool.submit(work)
    pool.shutdown(wait=False)
    return started
