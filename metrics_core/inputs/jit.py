"""numba for the compiled loops, imported without the scipy.linalg import numba adds.

The first compiled function a process loads (even from numba's cache) imports numba's array-math
registry, which imports ``scipy.linalg`` only to decide whether compiled inner products of float
vectors may call BLAS. None of rankscope's loops takes an inner product, and in a fresh process
that import is a noticeable part of a large command (the command imports scipy only when a
feature needs it). So :func:`load_array_math` imports the registry with ``scipy.linalg`` hidden
from the importing thread alone: numba then uses its own inner-product loop (the documented
fallback when scipy is absent), and everything else, numba's linear algebra included (it imports
scipy.linalg again when compiled), is unchanged. When either module is already imported, nothing
is hidden.
"""

from __future__ import annotations

import importlib.abc
import sys
import threading

import numba


class _HiddenFromThisThread(importlib.abc.MetaPathFinder):
    """Makes ``scipy.linalg`` fail to import in one thread; other threads import it as usual."""

    def __init__(self) -> None:
        self.thread = threading.get_ident()

    def find_spec(self, name, path, target=None):
        if threading.get_ident() == self.thread and (name == "scipy.linalg" or name.startswith("scipy.linalg.")):
            raise ImportError(f"{name} is not imported while numba's array-math registry loads")
        return None


def load_array_math() -> None:
    """Import numba's array-math registry, with ``scipy.linalg`` hidden from this thread."""
    if "numba.np.arraymath" in sys.modules or "scipy.linalg" in sys.modules:
        return
    hidden = _HiddenFromThisThread()
    sys.meta_path.insert(0, hidden)
    try:
        import numba.np.arraymath  # noqa: F401
    finally:
        sys.meta_path.remove(hidden)


load_array_math()

__all__ = ["numba"]
