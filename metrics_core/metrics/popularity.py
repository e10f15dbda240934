"""Popularity of what is recommended: novelty and average recommendation popularity (ARP).

``top`` is a users x K array of item codes (-1 empty). Per-user results are NaN for users
with nothing to average.
"""

from __future__ import annotations

import numpy as np


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
