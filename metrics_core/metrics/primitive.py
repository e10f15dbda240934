"""Serendipity against a primitive model, and unexpectedness.

For user u, with Pr_u(i) the model's score of a recommended item i and Prim_u(i) the
primitive model's score of the same item (0 when the primitive model's top K does not hold
it), both scaled to [0, 1] within each user's top K:

    serendipity_u = Σ_{i ∈ top K} max(Pr_u(i) − Prim_u(i), 0) · rel_u(i)
    unexpectedness_u = |{i ∈ top K : i not in the primitive model's top K}| / |top K|

Scaling (``primitive_scale``): ``rank`` gives the item at position p (0-based) of a list of n
the score (n − p) / n (the first 1, the last 1/n); ``minmax`` gives (s − min) / (max − min)
of the list's scores (1 for every item when they are all equal).

The items both top K lists hold are found by :func:`~metrics_core.metrics.shared_items.positions_in`
(no Python loop over users). From :data:`~metrics_core.inputs.encoded.KERNEL_MIN` cells both
metrics come from one compiled pass instead
(:func:`~metrics_core.inputs.kernels.primitive_rows`, on a few threads): numpy's steps
write and read about ten users x K arrays, which the compiled pass does not.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from metrics_core._numeric.parallel import map_chunks, thread_shares
from metrics_core._numeric.sums import row_sums
from metrics_core.inputs.encoded import KERNEL_ITEMS_MAX, Lists, compiled_for
from metrics_core.metrics.shared_items import positions_in


@dataclass
class Matched:
    """Users ``rows`` x K: the model's scaled score, the primitive's scaled score of the same
    item (0 when absent), and which cells are listed and found in the primitive's top K."""

    model: np.ndarray
    primitive: np.ndarray
    listed: np.ndarray
    found: np.ndarray


def scaled(lists: Lists, rows: np.ndarray, k: int, scale: str) -> np.ndarray:
    """Each cell of users ``rows``' top K scaled to [0, 1] within its list (NaN when empty).

    >>> lists = Lists("m", np.array([[4, 7, -1]]), np.zeros((1, 3), dtype=bool), None,
    ...               np.array([[3.0, 1.0, np.nan]]), np.array([True]), "score")
    >>> scaled(lists, np.array([0]), 3, "rank"), scaled(lists, np.array([0]), 3, "minmax")
    (array([[1. , 0.5, nan]]), array([[ 1.,  0., nan]]))
    """
    items = _top(lists.items, rows, k)
    present = items >= 0
    if scale == "rank":
        n = row_sums(present, np.int64).astype(np.float64)[:, None]
        position = np.arange(items.shape[1])[None, :]
        values = np.divide(n - position, n, out=np.zeros(items.shape), where=n > 0)
    else:
        scores = np.where(present, _top(lists.scores, rows, k).astype(np.float64), np.nan)
        with np.errstate(invalid="ignore"):
            low, high = np.nanmin(np.where(present.any(axis=1)[:, None], scores, 0.0), axis=1), \
                np.nanmax(np.where(present.any(axis=1)[:, None], scores, 0.0), axis=1)
        spread = (high - low)[:, None]
        values = np.divide(scores - low[:, None], spread, out=np.ones(items.shape), where=spread > 0)
    return np.where(present, values, np.nan)


def serendipity_and_unexpectedness(lists: Lists, primitive: Lists, rows: np.ndarray, hit_top: np.ndarray, k: int,
                                   scale: str, n_items: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`serendipity` and :func:`unexpectedness` of users ``rows`` (``hit_top``: their top
    K's hits; ``n_items``: the number of item codes), the model's top K matched with the
    primitive model's; from :data:`KERNEL_MIN` cells in one compiled pass."""
    if not compiled_for(len(rows) * min(k, lists.positions)) or n_items > KERNEL_ITEMS_MAX:
        matched = against(lists, primitive, rows, k, scale)
        return serendipity(matched, hit_top), unexpectedness(matched)
    from metrics_core.inputs.kernels import primitive_rows, read_only_c

    minmax = scale == "minmax"
    no_scores = np.zeros((0, 0))
    # (read-only C arrays, the types make compiles: lists come writeable or read-only, and scores kept for the
    # first positions of longer lists are strided, a copy here; each mix would be compiled at first use)
    items, other, hit, scores, other_scores = (read_only_c(cells) for cells in (
        lists.items, primitive.items, lists.hit, *((lists.scores, primitive.scores) if minmax else (no_scores,) * 2)))
    gain, unseen = np.empty(len(rows)), np.empty(len(rows))
    map_chunks(lambda start, stop: primitive_rows(items, other, hit, scores, other_scores, minmax, rows, k, n_items,
                                                  start, stop, gain, unseen), thread_shares(len(rows)))
    return gain, unseen


def against(lists: Lists, primitive: Lists, rows: np.ndarray, k: int, scale: str) -> Matched:
    """The model's top K of users ``rows`` matched with the primitive model's top K (against
    itself, every listed item is found with its own score)."""
    items = _top(lists.items, rows, k)
    if primitive is lists:
        model = scaled(lists, rows, k, scale)
        return Matched(model, np.nan_to_num(model), items >= 0, items >= 0)
    other_position = positions_in(items, _top(primitive.items, rows, k))
    found = other_position >= 0
    primitive_values = np.take_along_axis(scaled(primitive, rows, k, scale), np.maximum(other_position, 0), axis=1)
    primitive_values[~found] = 0.0
    return Matched(scaled(lists, rows, k, scale), primitive_values, items >= 0, found)


def _top(cells: np.ndarray, rows: np.ndarray, k: int) -> np.ndarray:
    """The first ``k`` columns of users ``rows`` (ascending, distinct): a view when they are all
    the users, else a copy."""
    return cells[:, :k] if len(rows) == len(cells) else cells[rows, :k]


def serendipity(matched: Matched, hit_top: np.ndarray) -> np.ndarray:
    """Σ over the top K of max(Pr − Prim, 0) · rel, per user."""
    gain = np.where(matched.listed & hit_top, np.maximum(np.nan_to_num(matched.model) - matched.primitive, 0.0), 0.0)
    return gain.sum(axis=1)


def unexpectedness(matched: Matched) -> np.ndarray:
    """Share of the top K the primitive model's top K does not hold, per user (NaN for an
    empty list)."""
    n = matched.listed.sum(axis=1)
    unseen = (matched.listed & ~matched.found).sum(axis=1)
    return np.divide(unseen, n, out=np.full(len(n), np.nan), where=n > 0)
