"""The items two users x positions lists share, found by one sort along rows, against a
dictionary per row."""

from __future__ import annotations

import numpy as np
import pytest

from metrics_core.metrics.shared_items import shared_items
from tests.compiled import compiled_loops


def lists(rng: np.random.Generator, n_users: int, width: int, n_items: int) -> np.ndarray:
    """Rows of distinct items with some empty cells (-1), anywhere in the row."""
    rows = np.array([rng.choice(n_items, width, replace=False) for _ in range(n_users)]).reshape(n_users, width)
    rows[rng.random(rows.shape) < 0.2] = -1
    return rows


def by_dictionary(a: np.ndarray, b: np.ndarray):
    found = []
    for user in range(len(a)):
        where = {int(item): position for position, item in enumerate(b[user]) if item >= 0}
        found += [(user, position, where[int(item)]) for position, item in enumerate(a[user]) if int(item) in where]
    return tuple(np.array([f[i] for f in found], dtype=np.int64) for i in range(3))


def in_row_order(found):
    user, position, other = found
    order = np.lexsort((position, user))
    return user[order], position[order], other[order]


@pytest.mark.parametrize(("width_a", "width_b"), [(1, 1), (10, 10), (5, 12), (33, 33), (10, 40), (100, 7), (200, 300)])
@pytest.mark.parametrize("seed", [0, 1])
def test_shared_items_equal_a_dictionary_per_row(width_a, width_b, seed):
    rng = np.random.default_rng(seed)
    n_items = max(width_a, width_b) + 15  # few items: many shared
    a, b = lists(rng, 100, width_a, n_items), lists(rng, 100, width_b, n_items)
    found, expected = in_row_order(shared_items(a, b)), by_dictionary(a, b)
    assert all(np.array_equal(x, y) for x, y in zip(found, expected, strict=True))


def test_item_codes_too_big_for_32_bits_once_tagged():
    """Codes that overflow 32 bits once shifted take 64-bit cells: items 1 and 1 + 2^29 stay
    apart (in 32 bits they would wrap to one value) and equal codes still pair."""
    big = 2**29  # shifted by 3 bits: 2^32, a whole wrap of 32 bits
    a = np.array([[1, big + 2, 7], [big + 1, -1, 3]])
    b = np.array([[big + 1, 2, big + 2], [1, 3, -1]])
    found = in_row_order(shared_items(a, b))
    assert [list(x) for x in found] == [[0, 1], [1, 2], [2, 1]]


def test_an_item_repeated_within_a_list_pairs_only_across_the_lists():
    found = shared_items(np.array([[5, 5, 6]]), np.array([[7, 5]]))
    assert [list(x) for x in found] == [[0], [1], [1]]


def test_no_users_and_no_shared_items():
    empty = np.zeros((0, 10), dtype=np.int32)
    assert all(len(x) == 0 for x in shared_items(empty, empty))
    a, b = np.array([[1, 2], [-1, -1]]), np.array([[3, 4], [-1, -1]])
    assert all(len(x) == 0 for x in shared_items(a, b))


@pytest.mark.parametrize(("width_a", "width_b"), [(1, 1), (10, 10), (5, 12), (10, 40), (100, 7)])
@pytest.mark.parametrize("seed", [0, 1])
def test_positions_in_the_other_row_equal_a_dictionary_per_row(width_a, width_b, seed):
    """Per cell, the other row's position of its item, as a dictionary gives it."""
    from metrics_core.metrics.shared_items import positions_in

    rng = np.random.default_rng(seed)
    n_items = max(width_a, width_b) + 15
    a, b = lists(rng, 100, width_a, n_items), lists(rng, 100, width_b, n_items)
    expected = np.full(a.shape, -1)
    user, position, other = by_dictionary(a, b)
    expected[user, position] = other
    np.testing.assert_array_equal(positions_in(a, b), expected)


@pytest.mark.parametrize("widths", [(6, 6), (4, 9)])
def test_shared_depths_are_the_same_by_the_compiled_pass_and_the_row_sort(widths, monkeypatch):
    """Each shared item is counted once, at the later of its two positions, whichever way."""
    from metrics_core.metrics.shared_items import shared_counts, shared_depths

    rng = np.random.default_rng(sum(widths))

    def lists(width: int) -> np.ndarray:
        rows = np.array([rng.choice(15, width, replace=False) for _ in range(400)])
        rows[rng.random(rows.shape) < 0.2] = -1
        return rows

    a, b = lists(widths[0]), lists(widths[1])
    by_sort = shared_depths(a, b)
    compiled_loops(monkeypatch)
    compiled = shared_depths(a[:, :widths[0]], b[:, :widths[1]])
    assert np.array_equal(by_sort, compiled) and by_sort.sum() > 100
    expected = [len(set(x[x >= 0]) & set(y[y >= 0])) for x, y in zip(a, b, strict=True)]
    assert by_sort.sum(axis=1).tolist() == expected
    assert shared_counts(a, b).tolist() == expected  # (the compiled count, KERNEL_MIN being 0)
    compiled_loops(monkeypatch, False)
    assert shared_counts(a, b).tolist() == expected
