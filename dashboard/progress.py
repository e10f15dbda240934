"""Long work (reading a workspace, evaluating its models) shown in words while it runs.

The work runs on a worker thread, once per cache key whichever sessions ask for it; each asking
session's script thread shows the step the work last said ("Ordering the lists of 'b' (2 of 4)
and joining them to the ground truth…") with the seconds so far, until the value is in the cache.
A session that reruns meanwhile (a new K, another page, a reload, a second browser after a
server restart) finds the same work running and shows its words again: nothing is started twice,
and nothing computed is thrown away when the user moves on.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from dashboard.cache import BoundedCache, release_memory
from dashboard.text import plain

POLL_SECONDS = 0.25
Say = Callable[[str], None]


@dataclass
class Running:
    """Work in flight: its future, the words of its current step, and a note shown under them
    throughout (Markdown, or empty)."""

    words: str
    started: float = field(default_factory=time.monotonic)
    future: Future | None = None
    note: str = ""

    def say(self, words: str) -> None:
        self.words = words


_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="rankscope-work")
_RUNNING: dict[str, Running] = {}
_LOCK = threading.Lock()


def cached(cache: BoundedCache, key: str, first_words: str, work: Callable[[Say], Any], note: str = "") -> Any:
    """``cache``'s value for ``key``; when it is not there, ``work(say)`` computes it on a worker
    thread while this session shows each step ``say`` reports (``first_words`` until the
    first), with ``note`` (Markdown) under them. Raises what ``work`` raised (an
    :class:`~metrics_core.errors.InputError` reaches the page, which names the problem)."""
    if key in cache:
        return cache.get(key, lambda: work(lambda words: None))
    with _LOCK:
        running = _RUNNING.get(key)
        if running is None:
            running = Running(first_words, note=note)
            running.future = _POOL.submit(_run, cache, key, running, work)
            _RUNNING[key] = running
    _show_until_done(running)
    return cache.get(key, running.future.result)  # (read on this session's thread: it is named as a user)


def start(cache: BoundedCache, key: str, first_words: str, work: Callable[[Say], Any]) -> None:
    """Start what :func:`cached` would compute for ``key``, without waiting for it (nothing when
    it is cached or running already); an error is kept for the session that asks for the value."""
    with _LOCK:
        if key in cache or key in _RUNNING:
            return
        running = Running(first_words)
        running.future = _POOL.submit(_run, cache, key, running, work)
        _RUNNING[key] = running


def in_background(work: Callable[[], Any], what: str) -> None:
    """Run ``work`` on a worker thread; a failure is written to the server's log (naming
    ``what``), never shown: nothing the user sees depends on it."""
    def run() -> None:
        try:
            work()
        except Exception:
            logging.getLogger("rankscope").exception("failed while %s", what)

    _POOL.submit(run)


_RELEASE_QUEUED = threading.Event()


def release_meanwhile() -> None:
    """Give the memory a page run freed back to the system on a worker thread (at most one
    waiting at a time): the temporaries of a page's summaries (8 MB columns at 1M users) stay in the
    C heap otherwise, and a session's memory grew by gigabytes over a few pages (measured at 1M
    users x 4 models: 8.1 to 10.1 GiB open, 6.3 GiB of it cached)."""
    if _RELEASE_QUEUED.is_set():
        return
    _RELEASE_QUEUED.set()

    def release() -> None:
        _RELEASE_QUEUED.clear()
        release_memory(collect=False)  # (a page's arrays are freed when their last name goes: no collection,
        # which would hold the GIL while the next run waits)

    _POOL.submit(release)


def _run(cache: BoundedCache, key: str, running: Running, work: Callable[[Say], Any]) -> Any:
    try:
        return cache.get(key, lambda: work(running.say))
    finally:
        with _LOCK:
            _RUNNING.pop(key, None)
        release_meanwhile()  # (the work's temporaries, which the C heap kept: 0.4 GB at 250k users x 4 models; one
        # release waiting at a time, without a collection: a page at a new K ran two or three, 0.13 s of a core each)


def _show_until_done(running: Running) -> None:
    placeholder = st.empty()
    shown = None
    while True:
        try:
            running.future.result(timeout=POLL_SECONDS)
            break
        except TimeoutError:
            pass
        line = plain(f"{running.words} ({time.monotonic() - running.started:.0f} s)") + \
            (f"\n\n{running.note}" if running.note else "")
        if line != shown:
            placeholder.info(line, icon=":material/hourglass_top:")
            shown = line
    placeholder.empty()
