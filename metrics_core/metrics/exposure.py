"""Exposure across item groups: how the attention a reader gives to ranked lists is shared among
groups of items (a genre, a provider, a popularity band), against a target share.

A list's position i gets the exposure w(i) of a browsing model: 1 / log2(i + 1) (``log2``, the
DCG discount) or p^(i−1) (``rbp``, a reader who goes on with persistence p). Each item's
exposure is summed over every top K; a group's exposure is the sum over its items (an item of
several groups, "Drama|War", splits its exposure equally); the groups' shares of the total are
compared with a target: the groups' shares of the catalog's items (``catalog``), of the training
interactions (``training``), or equal shares (``uniform``), by the Jensen–Shannon distance
(base 2: 0 when the shares match, 1 at most). Items without a group are left out.

Reference: the ranking [A, A, B, B] with the log2 discount gives A 0.63668 of the exposure; its
distance to equal shares is 0.11739.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    import scipy.sparse as sp

BROWSING = ("log2", "rbp")
TARGETS = ("catalog", "training", "uniform")


def position_weights(k: int, browsing: str, persistence: float) -> np.ndarray:
    """w(i) for i = 1 .. k.

    >>> position_weights(3, "log2", 0.8).round(4).tolist(), position_weights(3, "rbp", 0.5).tolist()
    ([1.0, 0.6309, 0.5], [1.0, 0.5, 0.25])
    """
    rank = np.arange(1, k + 1, dtype=np.float64)
    return 1.0 / np.log2(rank + 1.0) if browsing == "log2" else persistence ** (rank - 1.0)


def item_exposure(top: np.ndarray, weights: np.ndarray, n_items: int) -> np.ndarray:
    """Each item's exposure summed over the lists ``top`` (users x K item codes, -1 empty)."""
    filled = top >= 0
    return np.bincount(top[filled], weights=np.broadcast_to(weights[:top.shape[1]], top.shape)[filled],
                       minlength=n_items)


def group_shares(per_item: np.ndarray, shares: sp.csr_matrix) -> np.ndarray:
    """The groups' shares of ``per_item`` (items x groups ``shares``: each item's share of each
    group), summing to 1 (NaN when no grouped item has any)."""
    totals = np.asarray(shares.T @ per_item, dtype=np.float64).ravel()
    whole = totals.sum()
    return totals / whole if whole > 0 else np.full(len(totals), np.nan)


def target_shares(target: str, shares: sp.csr_matrix, in_catalog: np.ndarray | None,
                  interactions_per_item: np.ndarray | None) -> np.ndarray | None:
    """The groups' target shares (None when the target's input is missing: no catalog, no
    training data)."""
    if target == "uniform":
        return np.full(shares.shape[1], 1.0 / shares.shape[1])
    if target == "catalog":
        return None if in_catalog is None else group_shares(in_catalog.astype(np.float64), shares)
    return None if interactions_per_item is None else group_shares(interactions_per_item.astype(np.float64), shares)


def js_distance(p: np.ndarray, q: np.ndarray) -> float:
    """The Jensen–Shannon distance of two distributions, base 2 (0 to 1).

    >>> round(js_distance(np.array([0.63668, 0.36332]), np.array([0.5, 0.5])), 5)
    0.11739
    """
    from scipy.spatial.distance import jensenshannon

    return float(jensenshannon(p, q, base=2))


def exposure_table(per_item: np.ndarray, shares: sp.csr_matrix, target: np.ndarray | None,
                   names: list[str]) -> pd.DataFrame:
    """One row per group: ``group``, ``exposure`` (its share) and ``target`` (its target share)."""
    return pd.DataFrame({"group": names, "exposure": group_shares(per_item, shares),
                         "target": target if target is not None else np.nan})
