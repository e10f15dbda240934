"""Arrays for memory read or written at random.

A random access into an array of hundreds of MB misses the processor's address cache (TLB) as
well as its data caches: with 4 KiB pages every access also walks the page table. Backed by 2
MiB pages (Linux transparent huge pages, asked for with ``madvise``), the same array needs 512×
fewer address entries, and the kernel faults it in 2 MiB at a time.

numpy asks for huge pages for every big array by default; ``rankscope evaluate`` turns that off
for the process (see :func:`metrics_core.cli.use_small_pages`: arrays read in order gain
nothing, and faulting huge pages in costs more system time), and asks for them here only, for
the arrays written at random.
"""

from __future__ import annotations

import contextlib
import mmap

import numpy as np

HUGE_MIN = 1 << 22  # 4 MiB (as numpy): about what the address cache covers in small pages


def random_access_array(size: int, dtype, zeroed: bool = False) -> np.ndarray:
    """An array of ``size`` elements of ``dtype`` for writes or reads at random positions,
    uninitialised unless ``zeroed``: on Linux, in private anonymous memory (zeros from the
    kernel) that the kernel is asked to back with huge pages (a hint: it may not); elsewhere, or
    under :data:`HUGE_MIN` bytes, ``np.empty`` (``np.zeros``). The memory is returned to the
    system when the array and its views are gone."""
    dtype = np.dtype(dtype)
    nbytes = size * dtype.itemsize
    advice = getattr(mmap, "MADV_HUGEPAGE", None)
    private = getattr(mmap, "MAP_PRIVATE", None)
    if advice is None or private is None or nbytes < HUGE_MIN:
        return np.zeros(size, dtype=dtype) if zeroed else np.empty(size, dtype=dtype)
    memory = mmap.mmap(-1, nbytes, flags=private | mmap.MAP_ANONYMOUS)  # (a shared mapping gets no huge pages)
    with contextlib.suppress(OSError):  # (a kernel without transparent huge pages refuses the hint)
        memory.madvise(advice)
    return np.frombuffer(memory, dtype=dtype, count=size)
