"""numba is loaded for the compiled loops without importing scipy.linalg, and without changing
what any other thread or any later compiled code can import or use."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest

from metrics_core.inputs.jit import _HiddenFromThisThread

FRESH_PROCESS = """
import sys
import numpy as np
from metrics_core.inputs.kernels import scatter_rows
out = np.zeros(4, dtype=np.int32)
scatter_rows(np.array([1], np.int32), np.array([2], np.int64), 1, 2, np.array([7], np.int32), out, 0, 1)
assert out.tolist() == [0, 0, 0, 7], out
print("scipy.linalg" in sys.modules)
import numba
import scipy.linalg  # still importable afterwards

@numba.njit
def product(a, b):
    return a @ b  # numba's linear algebra imports scipy.linalg when it compiles this
a = np.arange(6.0).reshape(2, 3)
print(np.array_equal(product(a, a.T), a @ a.T))
"""


def test_loading_the_compiled_loops_leaves_scipy_linalg_unimported_and_still_importable():
    run = subprocess.run([sys.executable, "-c", FRESH_PROCESS], capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["False", "True"], run.stderr


def test_scipy_linalg_is_hidden_from_the_loading_thread_only():
    hidden = _HiddenFromThisThread()
    with pytest.raises(ImportError, match=r"scipy\.linalg"):
        hidden.find_spec("scipy.linalg", None)
    with pytest.raises(ImportError):
        hidden.find_spec("scipy.linalg.cython_blas", None)
    assert hidden.find_spec("scipy", None) is None
    assert hidden.find_spec("scipy.linalgebra", None) is None
    seen = []
    other = threading.Thread(target=lambda: seen.append(hidden.find_spec("scipy.linalg", None)))
    other.start()
    other.join()
    assert seen == [None]  # another thread (another app session) imports it as usual
