"""A process-wide cache bounded by memory and by age, for what the app computes from a
workspace (encoded datasets, evaluations): shared by every session, never copied.

Streamlit's ``cache_resource`` bounds entries by count only, so three large uploads could keep
gigabytes alive for good. Here every entry is weighed (the bytes of the arrays and frames it
holds); the least recently used entries leave when the total passes the budget
(``RANKSCOPE_CACHE_MB``, default 40% of the machine's memory, at least 2048: a 1M-user x 4-model
workspace's encoded data takes several GB, and a budget it did not fit in rebuilt it on every
click), and any entry not used for ``RANKSCOPE_CACHE_TTL``
seconds (default 900) leaves on the next sweep, which a background thread runs every few
seconds. An entry whose every session has closed (its browser tab gone) leaves once it has not
been used for ``RANKSCOPE_CACHE_ORPHAN_SECONDS`` (default 30): a server that served a few large
uploads comes back to its idle memory within about a minute of their sessions closing, whatever
the TTL. After an eviction the C heap is trimmed, so that freed memory goes back to the system.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import logging
import math
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import fields, is_dataclass
from typing import Any

import numpy as np
import pandas as pd

SWEEP_SECONDS = 2.0
EMPTY_SWEEPS = 30


def deep_nbytes(value: Any, seen: set[int] | None = None) -> int:
    """The bytes of the numpy arrays and pandas objects reachable from ``value`` through
    containers, dataclass fields and attributes (each object counted once)."""
    seen = set() if seen is None else seen
    if id(value) in seen or value is None or isinstance(value, str | bytes | int | float | bool):
        return len(value) if isinstance(value, bytes) else 0
    seen.add(id(value))
    if isinstance(value, np.ndarray):
        return int(value.nbytes) if value.base is None or id(value.base) not in seen else 0
    if isinstance(value, pd.DataFrame | pd.Series | pd.Index):
        usage = value.memory_usage(deep=False, index=True)
        return int(usage.sum() if hasattr(usage, "sum") else usage)
    if isinstance(value, dict):
        return sum(deep_nbytes(v, seen) for v in value.values())
    if isinstance(value, list | tuple | set | frozenset):
        return sum(deep_nbytes(v, seen) for v in value)
    if is_dataclass(value):
        return sum(deep_nbytes(getattr(value, f.name, None), seen) for f in fields(value))
    attributes = getattr(value, "__dict__", None)
    return sum(deep_nbytes(v, seen) for v in attributes.values()) if attributes else 0


M_ARENA_MAX = -8  # glibc's mallopt parameter


def _libc():
    name = ctypes.util.find_library("c")
    return ctypes.CDLL(name) if name else None


def limit_heap_arenas(count: int = 2) -> None:
    """Let the C heap use at most ``count`` arenas from now on (glibc only). ``make run`` also
    sets MALLOC_ARENA_MAX=2, which applies from the server's first thread.

    glibc gives threads that allocate at the same time arenas of their own, up to eight per core,
    and Streamlit runs every session's script on its own thread: memory a closed session freed
    stayed spread over many arenas, in pieces the system never got back (measured: 280 MiB above
    idle after three large uploads, 190 MiB with two arenas)."""
    libc = _libc()
    if libc is not None and hasattr(libc, "mallopt"):
        libc.mallopt(M_ARENA_MAX, count)


def release_memory(collect: bool = True) -> None:
    """Collect garbage (``collect``), then give free pages back to the system: Arrow's memory pool
    and the C heap (glibc only; the trim runs without the GIL, a collection holds it)."""
    import pyarrow as pa

    if collect:
        gc.collect()
    pa.default_memory_pool().release_unused()
    libc = _libc()
    if libc is not None and hasattr(libc, "malloc_trim"):
        libc.malloc_trim(0)


class BoundedCache:
    """``get(key, build)``: the value built once per key, kept while the budget allows.

    ``session()`` names the session asking (None outside a session) and ``alive(id)`` says
    whether a session is still open; with both, an entry no open session has used is dropped
    after ``orphan_seconds`` unused."""

    def __init__(self, max_bytes: int, ttl: float, orphan_seconds: float = 30.0,
                 session: Callable[[], str | None] = lambda: None, alive: Callable[[str], bool] | None = None):
        self.max_bytes, self.ttl, self.orphan_seconds = max_bytes, ttl, orphan_seconds
        self._session, self._alive = session, alive
        self._entries: OrderedDict[str, tuple[Any, int, float]] = OrderedDict()  # value, bytes, last used
        self._owners: dict[str, set[str]] = {}  # key -> the sessions that used it
        self._lock = threading.RLock()
        self._building: dict[str, threading.Lock] = {}
        self._sweeper: threading.Thread | None = None

    def get(self, key: str, build: Callable[[], Any]) -> Any:
        session = self._session()
        with self._lock:
            if session is not None:
                self._owners.setdefault(key, set()).add(session)
            if key in self._entries:
                value, size, _ = self._entries.pop(key)
                self._entries[key] = (value, size, time.monotonic())
                return value
            building = self._building.setdefault(key, threading.Lock())
        with building:  # two sessions asking for the same data build it once
            with self._lock:
                if key in self._entries:
                    return self._entries[key][0]
            value = build()
            with self._lock:
                self._entries[key] = (value, deep_nbytes(value), time.monotonic())
                self._building.pop(key, None)
                self._start_sweeper()
            self.evict()
            return value

    @property
    def nbytes(self) -> int:
        with self._lock:
            return sum(size for _, size, _ in self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)

    def peek(self, key: str) -> Any:
        """The value kept for ``key`` (None when there is none), counted as a use."""
        with self._lock:
            if key not in self._entries:
                return None
            value, size, _ = self._entries.pop(key)
            self._entries[key] = (value, size, time.monotonic())
            return value

    def __contains__(self, key: str) -> bool:
        with self._lock:
            return key in self._entries

    def evict(self) -> int:
        """Drop entries past their age, then the least recently used while over the budget (the
        newest entry always stays). Returns how many left."""
        now = time.monotonic()
        with self._lock:
            dropped = [k for k, (_, _, used) in self._entries.items()
                       if now - used > self.ttl or (now - used > self.orphan_seconds and self._orphaned(k))]
            for key in dropped:
                del self._entries[key]
                self._owners.pop(key, None)
            total = sum(size for _, size, _ in self._entries.values())
            while total > self.max_bytes and len(self._entries) > 1:
                _, (_, size, _) = self._entries.popitem(last=False)
                total -= size
                dropped.append(None)
        if dropped:
            release_memory()
        return len(dropped)

    def _orphaned(self, key: str) -> bool:
        """Every session that used ``key`` has closed (never, without a way to tell)."""
        if self._alive is None or key not in self._owners:
            return False
        self._owners[key] = {session for session in self._owners[key] if self._alive(session)}
        return not self._owners[key]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._owners.clear()
        release_memory()

    def _start_sweeper(self) -> None:
        if self._sweeper is None or not self._sweeper.is_alive():
            self._sweeper = threading.Thread(target=self._sweep, name="rankscope-cache-sweeper", daemon=True)
            self._sweeper.start()

    def _sweep(self) -> None:
        """Every few seconds: drop expired entries; while the cache is empty, give memory back
        for a minute more (sessions that close free their own objects after the entries left)."""
        empty_sweeps = 0
        while empty_sweeps < EMPTY_SWEEPS:
            time.sleep(min(SWEEP_SECONDS, self.ttl))
            self.evict()
            with self._lock:
                empty = not self._entries
            empty_sweeps = empty_sweeps + 1 if empty else 0
            if empty:
                release_memory()
        with self._lock:
            self._sweeper = None


def from_environment() -> BoundedCache:
    """The app's cache: ``RANKSCOPE_CACHE_MB``, ``RANKSCOPE_CACHE_TTL`` and
    ``RANKSCOPE_CACHE_ORPHAN_SECONDS``, with Streamlit's sessions as the owners of entries."""
    megabytes = _number_from_environment("RANKSCOPE_CACHE_MB", default_budget_mb())
    return BoundedCache(int(megabytes * 2**20), _number_from_environment("RANKSCOPE_CACHE_TTL", 900),
                        _number_from_environment("RANKSCOPE_CACHE_ORPHAN_SECONDS", 30), streamlit_session,
                        streamlit_session_alive)


def _number_from_environment(name: str, default: float) -> float:
    """``$name`` as a number >= 0, else ``default`` (a value that is not one is said in the server's
    log, not raised: the app must start)."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if math.isfinite(value) and value >= 0:
        return value
    logging.getLogger("rankscope").warning("%s=%r is not a number >= 0; %g is used instead", name, text, default)
    return default


MEMORY_SHARE = 0.4
MIN_BUDGET_MB = 2048


def default_budget_mb() -> float:
    """40% of the machine's memory (at least 2048 MB; 2048 where the size cannot be read)."""
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (ValueError, OSError, AttributeError):
        return MIN_BUDGET_MB
    return max(MIN_BUDGET_MB, MEMORY_SHARE * total)


def streamlit_session() -> str | None:
    """The id of the Streamlit session running this script (None outside one)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    context = get_script_run_ctx(suppress_warning=True)
    return context.session_id if context is not None else None


def streamlit_session_alive(session_id: str) -> bool:
    """Whether the session still has its browser connected (True when no server runs: tests)."""
    from streamlit.runtime import Runtime

    return not Runtime.exists() or Runtime.instance().is_active_session(session_id)
