"""Popularity of what is recommended: novelty and average recommendation popularity (ARP).

``top`` is a users x K array of item codes (-1 empty). Per-user results are NaN for users
with nothing to average.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def _row_mean(values: np.ndarray, used: np.ndarray) -> np.ndarray:
    n = used.sum(axis=1)
    total = np.where(used, values, 0.0).sum(axis=1)
    return np.divide(total, n, out=np.full(len(n), np.nan), where=n > 0)


def _of_cells(per_item: np.ndarray, top: np.ndarray, empty) -> np.ndarray:
    """``per_item[top]`` with ``empty`` in the empty cells (-1 reads the value appended last):
    one look-up per cell of a value computed once per item."""
    return np.append(per_item, np.asarray(empty, dtype=per_item.dtype))[top]


def _mean_of_cells(per_item: np.ndarray, counted: np.ndarray, top: np.ndarray,
                   flagged: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """Per row of ``top``: the mean of ``per_item`` over its cells whose item is ``counted`` (NaN
    with none; ``per_item`` is 0 where not counted), and the cells whose item is ``flagged`` (0
    without). From :data:`~metrics_core.inputs.encoded.KERNEL_MIN` cells one compiled pass over
    the rows does both (two gathers of every cell took 0.15 s per metric at 1M users x 10, and
    the flagged cells' another 0.13 s)."""
    if _compiled(top):
        from metrics_core.metrics.prefix_kernels import cell_means_and_flagged

        return cell_means_and_flagged(top, per_item.astype(np.float64, copy=False), counted,
                                      np.zeros(len(per_item), dtype=bool) if flagged is None else flagged)
    n = _of_cells(counted, top, False).sum(axis=1)
    total = _of_cells(per_item, top, 0.0).sum(axis=1)
    found = 0 if flagged is None else int(_of_cells(flagged, top, False).sum())
    return np.divide(total, n, out=np.full(len(n), np.nan), where=n > 0), found


def novelty(top: np.ndarray, item_users: np.ndarray, n_train_users: int,
            unknown: str = "leave_out") -> tuple[np.ndarray, int]:
    """Per user: mean over recommended items of −log2(p_i), where p_i is the share of training
    users who interacted with item i. Items unknown to training are left out (``leave_out``)
    or count as seen by one user (``one_user``, RecTools). Returns the per-user values and the
    number of recommendations of unknown items.

    >>> top, users_of = np.array([[0, 1]]), np.array([2, 0])  # item 1 is unknown; 4 training users
    >>> novelty(top, users_of, 4)[0], novelty(top, users_of, 4, "one_user")[0]
    (array([1.]), array([1.5]))
    """
    known = item_users > 0
    counted = known if unknown == "leave_out" else np.ones(len(item_users), dtype=bool)
    surprise = np.where(counted, -np.log2(np.maximum(item_users, 1) / n_train_users), 0.0)
    return _mean_of_cells(surprise, counted, top, ~known)


def average_recommendation_popularity(top: np.ndarray, popularity: np.ndarray, unknown: str = "zero") -> np.ndarray:
    """Per user: mean training popularity of the recommended items; items unknown to training
    count 0 (``zero``) or are left out (``leave_out``, Evidently). ARP is its mean over users."""
    popularity = popularity.astype(np.float64)
    counted = np.ones(len(popularity), dtype=bool) if unknown == "zero" else popularity > 0
    return _mean_of_cells(popularity, counted, top)[0]


def interaction_novelty(recommended: np.ndarray, item_interactions: np.ndarray, total: int) -> float:
    """Novelty over every recommendation of the top K (Microsoft Recommenders' ``novelty``):
    Σ_i c_i · −log2(n_i / N) / Σ_i c_i, with c_i the times item i is recommended
    (``recommended``, per item code), n_i its training interactions and N (``total``) all
    training interactions; an item unknown to training adds nothing but counts in the
    denominator. NaN when nothing is recommended.

    >>> round(interaction_novelty(np.array([2, 1, 1]), np.array([2, 2, 0]), 4), 6)  # lists [0, 1], [0, 2]
    0.75
    """
    listed = recommended.sum()
    if listed == 0:
        return float("nan")
    n = item_interactions.astype(np.float64)
    surprise = np.where(n > 0, -np.log2(np.maximum(n, 1) / max(1, total)), 0.0)
    return float(recommended @ surprise / listed)


def popularity_serendipity(top: np.ndarray, hit_top: np.ndarray, item_interactions: np.ndarray,
                           n_catalog: int, levels: np.ndarray | None = None) -> np.ndarray:
    """Per user (RecTools' Serendipity): mean over the top-K positions of
    max(p(r) − pu(i), 0)·rel(i), where p(r) = (n + 1 − r) / n for rank r, pu(i) = (n + 1 −
    popularity rank of i) / n, popularity rank = dense rank of training interactions (1 = most
    interacted), pu = 0 for items unknown to training, n = catalog size. ``levels``: the
    distinct positive interaction counts, most first (default: those of ``item_interactions``;
    given when the items here are not all the training data's).

    >>> popularity_serendipity(np.array([[1, 0]]), np.array([[True, True]]), np.array([5, 1]), 2)
    array([0.25])
    """
    if levels is None:
        levels = popularity_levels(item_interactions)
    pop_rank = np.searchsorted(-levels, -item_interactions) + 1  # (once per item)
    p_item = np.where(item_interactions > 0, (n_catalog + 1 - pop_rank) / n_catalog, 0.0)
    rank = np.arange(1, top.shape[1] + 1)
    p_user = (n_catalog + 1 - rank) / n_catalog
    if _compiled(top):
        from metrics_core.metrics.prefix_kernels import means_at_last_place
        from metrics_core.metrics.prefix_kernels import popularity_serendipity as loop

        return means_at_last_place(loop, top, hit_top, p_user, p_item)
    return _row_mean(np.maximum(p_user[None, :] - _of_cells(p_item, top, 0.0), 0.0) * hit_top, top >= 0)


def _compiled(top: np.ndarray) -> bool:
    from metrics_core.inputs.encoded import compiled_for

    return compiled_for(top.size)


def popularity_levels(item_interactions: np.ndarray) -> np.ndarray:
    """The distinct positive training-interaction counts, most first: popularity rank r (a
    dense rank, 1 = most interacted) is the r-th of them.

    >>> popularity_levels(np.array([5, 0, 1, 5, 2]))
    array([5, 2, 1])
    """
    return np.unique(item_interactions[item_interactions > 0])[::-1]


def popularity_order(item_interactions: np.ndarray) -> np.ndarray:
    """Item codes with at least one training interaction, most popular first (ties by code)."""
    order = np.argsort(-item_interactions, kind="stable")
    return order[item_interactions[order] > 0]


def long_tail(recommended: np.ndarray, item_interactions: np.ndarray) -> pd.DataFrame:
    """The long-tail curve of one model: training items in 100 popularity buckets (1 = the most
    popular percentile), with each bucket's mean training interactions and mean times
    recommended in the top K (``recommended``: each item's count, :func:`recommendation_counts`).

    >>> long_tail(np.array([2, 1, 0]), np.array([5, 1, 0])).to_dict("list")
    {'bucket': [1, 51], 'training': [5.0, 1.0], 'recommended': [2.0, 1.0]}
    """
    known = popularity_order(item_interactions)
    bucket = np.arange(len(known)) * 100 // max(len(known), 1) + 1
    frame = pd.DataFrame({"bucket": bucket, "training": item_interactions[known].astype(np.float64),
                          "recommended": recommended[known].astype(np.float64)})
    return frame.groupby("bucket", as_index=False).mean()


def head_share(recommended: np.ndarray, item_interactions: np.ndarray, head: float = 0.2) -> float:
    """Share of the recommendations in the top K (``recommended``: each item's count) that go to the
    ``head`` most popular training items (the 20% most popular by default); 0 when nothing is
    recommended.

    >>> head_share(np.array([2, 1, 1, 0, 0]), np.array([9, 5, 1, 1, 1]))  # item 0 is the head
    0.5
    """
    known = popularity_order(item_interactions)
    is_head = np.zeros(len(item_interactions), dtype=bool)
    is_head[known[: max(1, int(len(known) * head + 1e-9))]] = True
    total = recommended.sum()
    return float(recommended[is_head].sum() / total) if total else 0.0
