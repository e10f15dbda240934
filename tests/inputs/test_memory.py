"""Arrays for random access: right shape and contents, and on Linux a private mapping with the
kernel's huge-page advice (``hg`` in the mapping's flags)."""

from __future__ import annotations

import mmap
import sys
from pathlib import Path

import numpy as np
import pytest

from metrics_core.inputs.memory import HUGE_MIN, random_access_array


def mapping_flags(array: np.ndarray) -> set[str]:
    """The VmFlags of the memory mapping that holds ``array``'s first byte (Linux smaps)."""
    address = array.ctypes.data
    flags, inside = set(), False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()[0]
        if "-" in head and not head.endswith(":"):
            low, high = (int(part, 16) for part in head.split("-"))
            inside = low <= address < high
        elif inside and head == "VmFlags:":
            flags = set(line.split()[1:])
    return flags


@pytest.mark.parametrize("size", [10, HUGE_MIN // 4 + 3])
@pytest.mark.parametrize("dtype", [np.int32, np.float64, np.uint8])
def test_arrays_have_the_size_type_and_zeros_asked_for_and_are_writable(size, dtype):
    zeros = random_access_array(size, dtype, zeroed=True)
    assert zeros.shape == (size,) and zeros.dtype == dtype and not zeros.any()
    out = random_access_array(size, dtype)
    out[:] = 7
    out[size // 2] = 3
    assert out.shape == (size,) and out.dtype == dtype and out.flags.writeable
    assert int(out.sum()) == 7 * (size - 1) + 3
    np.testing.assert_array_equal(out.reshape(-1)[[0, size // 2]], [7, 3])


@pytest.mark.skipif(not sys.platform.startswith("linux") or not hasattr(mmap, "MADV_HUGEPAGE")
                    or not Path("/sys/kernel/mm/transparent_hugepage").exists(),
                    reason="transparent huge pages are a Linux feature")
def test_big_arrays_are_private_mappings_advised_to_use_huge_pages_and_small_ones_are_not():
    big = random_access_array(HUGE_MIN // 8, np.int64)
    big[:] = 1
    flags = mapping_flags(big)
    assert "hg" in flags and "sh" not in flags  # huge-page advice, not shared (which gets no huge pages)
    small = random_access_array(1000, np.int64)
    assert "hg" not in mapping_flags(small)  # (plain numpy memory)
