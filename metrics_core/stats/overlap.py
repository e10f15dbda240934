"""How similar are two models' lists? Per user Jaccard@K and rank-biased overlap, and the
model x model matrix of their means.

Both models' lists are users x positions arrays over the same user rows (one
:class:`~metrics_core.engines.memory.dataset.Dataset`), items unique within a list; -1 marks an empty cell.
Users whose lists are both empty have no value (NaN) and are left out of the means.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from metrics_core._numeric.sums import row_sums
from metrics_core.inputs.encoded import compiled_for
from metrics_core.metrics.shared_items import shared_counts, shared_depths, shared_pair_counts

MEASURES = ("jaccard", "rbo")


def jaccard(a: np.ndarray, b: np.ndarray, listed: tuple[np.ndarray, np.ndarray] | None = None,
            n_items: int | None = None) -> np.ndarray:
    """Per user |A ∩ B| / |A ∪ B| of the items in two top-K lists (NaN when both are empty);
    ``listed``: each list's item count, and ``n_items``: more than the largest item code, when known.

    >>> jaccard(np.array([[1, 2, 3], [4, -1, -1]]), np.array([[3, 2, 9], [-1, -1, -1]]))
    array([0.5, 0. ])
    """
    in_a, in_b = listed if listed is not None else (listed_items(a), listed_items(b))
    return jaccard_of_counts(shared_counts(a, b, n_items), in_a, in_b)


def jaccard_of_counts(shared: np.ndarray, in_a: np.ndarray, in_b: np.ndarray) -> np.ndarray:
    """Per user shared / (in_a + in_b − shared): Jaccard from the items two lists share and the
    items each lists (NaN when both are empty)."""
    shared = shared.astype(np.float64)
    union = in_a + in_b - shared
    return np.divide(shared, union, out=np.full(len(shared), np.nan), where=union > 0)


def rank_biased_overlap(a: np.ndarray, b: np.ndarray, p: float = 0.9,
                        listed: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Per user extrapolated rank-biased overlap of two top-K lists (Webber, Moffat and Zobel,
    2010): with X_d the items shared by the top d of both lists,

        RBO = (X_K / K)·p^K + ((1 - p) / p)·Σ_{d≤K} (X_d / d)·p^d,

    1 for identical lists, 0 for disjoint ones; ``p`` weighs the top (0.9: the first 10 ranks
    carry about 86% of the weight). Empty cells count as items no other list holds. NaN when
    both lists are empty.

    >>> rank_biased_overlap(np.array([[1, 2, 3]]), np.array([[1, 2, 3]])).round(12)
    array([1.])
    >>> rank_biased_overlap(np.array([[1, 2]]), np.array([[2, 1]]), p=0.5)
    array([0.5])
    """
    width = a.shape[1]
    shared = np.cumsum(shared_depths(a, b), axis=1)  # X_d for d = 1 .. K (an item counts from its later position)
    d = np.arange(1, width + 1, dtype=np.float64)
    agreement = shared / d
    value = agreement[:, -1] * p**width + (1 - p) / p * (agreement * p**d).sum(axis=1)
    in_a, in_b = listed if listed is not None else (listed_items(a), listed_items(b))
    return np.where((in_a == 0) & (in_b == 0), np.nan, value)


def listed_items(top: np.ndarray) -> np.ndarray:
    """Items in each row of a top-K array (-1 empty)."""
    return row_sums(top >= 0, np.int64)


@dataclass(frozen=True)
class SharedAtK:
    """What Jaccard@K reads of every pair of models: per user, the items both top-K lists hold
    (``counts``: users x pairs, pairs (m1, m2), m1 < m2, in reading order) and each model's items
    in its top K (``listed``)."""

    k: int
    models: list[str]
    counts: np.ndarray
    listed: dict[str, np.ndarray]

    def of(self, first: str, second: str) -> np.ndarray:
        """The shared items of two models' lists, per user (either order)."""
        pairs = [(a, b) for i, a in enumerate(self.models) for b in self.models[i + 1:]]
        pair = (first, second) if (first, second) in pairs else (second, first)
        return self.counts[:, pairs.index(pair)]


def shared_at(dataset, k: int) -> SharedAtK:
    """:class:`SharedAtK` of every pair of the dataset's models: on large lists
    (:func:`~metrics_core.inputs.encoded.compiled_for` their cells, 2 to 63 models) in one compiled
    pass over each user's lists (:func:`~metrics_core.metrics.shared_items.shared_pair_counts`),
    otherwise pair by pair (:func:`~metrics_core.metrics.shared_items.shared_counts`): the same
    counts. Both the model x model matrix and one pair's per-user values read it."""
    models = list(dataset.models)
    tops = [dataset.lists[name].top(k) for name in models]
    listed = {name: dataset.lists[name].listed_at(k) for name in models}
    pairs = [(i, j) for i in range(len(models)) for j in range(i + 1, len(models))]
    if len(pairs) > 1 and len(models) < 64 and compiled_for(sum(top.size for top in tops)):
        counts = shared_pair_counts(tops, len(dataset.items))
    else:
        counts = np.zeros((len(dataset.users), len(pairs)), dtype=np.int32)
        for column, (i, j) in enumerate(pairs):
            counts[:, column] = shared_counts(tops[i], tops[j], len(dataset.items))
    return SharedAtK(k, models, counts, listed)


def per_user(dataset, first: str, second: str, k: int, measure: str = "jaccard", p: float = 0.9,
             listed: dict[str, np.ndarray] | None = None, shared: SharedAtK | None = None) -> pd.Series:
    """``measure`` between two models' top-K lists, per user id (users with both lists empty left out);
    ``listed``: each model's items in its top K, when known (else the lists' own count, kept per K);
    ``shared``: the pairs' shared items at this K (:func:`shared_at`), which Jaccard then reads."""
    a, b = (dataset.lists[name].top(k) for name in (first, second))
    if shared is not None:
        listed = shared.listed
    listed = listed if listed is not None else {name: dataset.lists[name].listed_at(k) for name in (first, second)}
    counts = listed[first], listed[second]
    if measure == "jaccard":
        values = jaccard(a, b, counts, len(dataset.items)) if shared is None else \
            jaccard_of_counts(shared.of(first, second), *counts)
    else:
        values = rank_biased_overlap(a, b, p, counts)
    series = pd.Series(values, index=pd.Index(dataset.users.ids, name=dataset.columns.user), name=measure)
    return series.dropna()


def matrix(dataset, k: int, measure: str = "jaccard", p: float = 0.9, shared: SharedAtK | None = None
           ) -> pd.DataFrame:
    """Model x model mean of ``measure`` over users (1 on the diagonal). Jaccard reads every pair's
    shared items (``shared``, found by :func:`shared_at` when not given)."""
    models = dataset.models
    out = pd.DataFrame(np.eye(len(models)), index=pd.Index(models, name="model"), columns=models)
    pairs = [(first, second) for i, first in enumerate(models) for second in models[i + 1:]]
    if measure == "jaccard":
        shared = shared if shared is not None else shared_at(dataset, k)
        means = [_mean(jaccard_of_counts(shared.of(first, second), shared.listed[first], shared.listed[second]))
                 for first, second in pairs]
    else:
        listed = {name: dataset.lists[name].listed_at(k) for name in models}
        means = [float(per_user(dataset, first, second, k, measure, p, listed).mean()) for first, second in pairs]
    for (first, second), mean in zip(pairs, means, strict=True):
        out.loc[first, second] = out.loc[second, first] = mean
    return out


def _mean(values: np.ndarray) -> float:
    """The mean of the values that are not NaN (NaN when none is), as a Series' ``mean``."""
    present = values[~np.isnan(values)]
    return float(present.mean()) if len(present) else np.nan
