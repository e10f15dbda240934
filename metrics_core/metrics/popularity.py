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


def novelty(top: np.ndarray, item_users: np.ndarray, n_train_users: int) -> tuple[np.ndarray, int]:
    """Per user: mean over recommended items known in training of −log2(p_i), where p_i is
    the share of training users who interacted with item i. Returns the per-user values and
    the number of recommendations of items unknown to training (left out).
    """
    listed = top >= 0
    users_of = item_users[np.where(listed, top, 0)]
    known = listed & (users_of > 0)
    surprise = -np.log2(np.maximum(users_of, 1) / n_train_users)
    return _row_mean(surprise, known), int((listed & ~known).sum())


def average_recommendation_popularity(top: np.ndarray, item_interactions: np.ndarray) -> np.ndarray:
    """Per user: mean training interaction count of the recommended items (items unknown to
    training count 0). ARP is its mean over users; divide by the number of training users
    for the normalised variant."""
    listed = top >= 0
    return _row_mean(item_interactions[np.where(listed, top, 0)].astype(np.float64), listed)


def popularity_order(item_interactions: np.ndarray) -> np.ndarray:
    """Item codes with at least one training interaction, most popular first (ties by code)."""
    order = np.argsort(-item_interactions, kind="stable")
    return order[item_interactions[order] > 0]


def long_tail(top: np.ndarray, item_interactions: np.ndarray) -> pd.DataFrame:
    """The long-tail curve of one model: training items in 100 popularity buckets (1 = the most
    popular percentile), with each bucket's mean training interactions and mean times
    recommended in the top K (``top``: users x K item codes, -1 empty).

    >>> long_tail(np.array([[0, 1], [0, -1]]), np.array([5, 1, 0])).to_dict("list")
    {'bucket': [1, 51], 'training': [5.0, 1.0], 'recommended': [2.0, 1.0]}
    """
    known = popularity_order(item_interactions)
    bucket = np.arange(len(known)) * 100 // max(len(known), 1) + 1
    counts = np.bincount(top[top >= 0], minlength=len(item_interactions))[known]
    frame = pd.DataFrame({"bucket": bucket, "training": item_interactions[known].astype(np.float64),
                          "recommended": counts.astype(np.float64)})
    return frame.groupby("bucket", as_index=False).mean()


def head_share(top: np.ndarray, item_interactions: np.ndarray, head: float = 0.2) -> float:
    """Share of the recommendations in the top K that go to the ``head`` most popular
    training items (the 20% most popular by default); 0 when nothing is recommended.

    >>> head_share(np.array([[0, 1], [0, 2]]), np.array([9, 5, 1, 1, 1]))  # item 0 is the head
    0.5
    """
    known = popularity_order(item_interactions)
    is_head = np.zeros(len(item_interactions), dtype=bool)
    is_head[known[: max(1, int(len(known) * head + 1e-9))]] = True
    listed = top[top >= 0]
    return float(is_head[listed].mean()) if len(listed) else 0.0
