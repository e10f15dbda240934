"""How recommendations spread over the catalog: coverage, aggregate diversity, Gini,
Shannon entropy and personalization. All from per-item recommendation counts, O(N).

``top`` is a users x K array of item codes (-1 empty) of the users averaged over.
"""

from __future__ import annotations

import numpy as np

from metrics_core.metrics import registry

COUNT_CHUNK_CELLS = 1 << 18
NEEDS_CATALOG = "needs the catalog: give an item table or training interactions"
NEEDS_TWO_USERS = "needs at least two users with recommendations"
CATALOG_METRICS = registry.needing("catalog", "catalog")


def recommendation_counts(top: np.ndarray, n_items: int) -> np.ndarray:
    """c_i: how many top-K lists contain item i.

    Counted a block of lists at a time with native index integers (bincount would otherwise
    convert the whole array first); empty cells (-1) fall into a discarded bin.

    >>> recommendation_counts(np.array([[0, 2], [2, -1]]), 4)
    array([1, 0, 2, 0])
    """
    counts = np.zeros(n_items + 1, dtype=np.int64)
    rows = max(1, max(COUNT_CHUNK_CELLS, n_items) // max(1, top.shape[1]))
    for start in range(0, len(top), rows):
        codes = top[start:start + rows].astype(np.intp).ravel()
        codes += 1
        counts += np.bincount(codes, minlength=n_items + 1)
    return counts[1:]


def aggregate_diversity(counts: np.ndarray) -> int:
    """The number of distinct items recommended in any top-K list."""
    return int(np.count_nonzero(counts))


def coverage(counts: np.ndarray, in_catalog: np.ndarray) -> float:
    """Distinct recommended catalog items / catalog size.

    >>> coverage(np.array([1, 0, 2, 0]), np.array([True, True, True, True]))
    0.5
    """
    return float(np.count_nonzero(counts[in_catalog]) / in_catalog.sum())


def gini(counts: np.ndarray) -> float:
    """Gini index of recommendation counts over the whole catalog (unrecommended items count
    as 0): with shares p_j sorted ascending, Σ_j (2j − n − 1)·p_j / (n − 1). 0 = perfectly
    even, 1 = one item gets every recommendation. 0 for a one-item catalog.

    >>> round(gini(np.array([1, 0, 0, 1, 2, 1, 2, 2])), 6)  # the three-user reference, 8-item catalog: 3/7
    0.428571
    """
    n = len(counts)
    total = counts.sum()
    if n < 2 or total == 0:
        return 0.0
    shares = np.sort(counts) / total
    j = np.arange(1, n + 1)
    return float(np.sum((2 * j - n - 1) * shares) / (n - 1))


def entropy(counts: np.ndarray, base: float = np.e) -> tuple[float, float]:
    """Shannon entropy −Σ p_i log p_i of recommendation shares over the catalog (natural log by
    default; ``base=2`` gives bits, Recommenders' distributional coverage), and the same
    divided by log(n) (1 = perfectly even, whatever the base; 0 for a one-item catalog).

    >>> round(entropy(np.array([1, 0, 2, 2, 2]))[0], 3)  # the three-user reference, over the 5 test items
    1.352
    """
    total = counts.sum()
    if total == 0:
        return 0.0, 0.0
    p = counts[counts > 0] / total
    value = float(-np.sum(p * np.log(p)) / np.log(base))
    return value, value / (np.log(len(counts)) / np.log(base)) if len(counts) > 1 else 0.0


def personalization(counts: np.ndarray, n_users: int, k: int) -> float:
    """1 − mean over user pairs of |L_u ∩ L_v| / K, exactly, in O(N).

    Σ_{u<v} |L_u ∩ L_v| = Σ_i c_i(c_i − 1)/2, since an item in c_i lists is shared by
    c_i(c_i − 1)/2 pairs. The divisor is K even for shorter lists (Evidently's shortcut is
    wrong there). Needs at least two users.

    >>> personalization(np.array([2, 2]), n_users=2, k=2)  # identical lists
    0.0
    >>> personalization(np.array([1, 1, 1, 1]), n_users=2, k=2)  # disjoint lists
    1.0
    """
    pairs = n_users * (n_users - 1) / 2
    shared = float(np.sum(counts * (counts - 1) / 2))
    return 1.0 - shared / (pairs * k)


def summary(counts: np.ndarray, n_users: int, in_catalog: np.ndarray | None, k: int, gini_over: str = "catalog",
            entropy_base: float = np.e) -> tuple[dict[str, float], dict[str, str], dict[str, int]]:
    """Every catalog metric from the per-item counts of ``n_users`` top-K lists: ``(metrics,
    skipped, left_out)``. ``in_catalog`` marks the catalog's items among the counted ones (None:
    no catalog, and coverage, Gini and entropy are skipped); Gini over ``"catalog"`` or over the
    ``"recommended"`` items only. The in-memory engine and the Spark engine both call this.
    """
    metrics = {"aggregate_diversity": float(aggregate_diversity(counts))}
    skipped, left_out = {}, {}
    if n_users >= 2:
        metrics["personalization"] = personalization(counts, n_users, k)
    else:
        skipped["personalization"] = NEEDS_TWO_USERS
    if in_catalog is None or not in_catalog.any():
        skipped.update(dict.fromkeys(CATALOG_METRICS, NEEDS_CATALOG))
        return metrics, skipped, left_out
    on_catalog = counts[in_catalog]
    metrics["coverage"] = coverage(counts, in_catalog)
    metrics["gini"] = gini(on_catalog if gini_over == "catalog" else counts[counts > 0])
    metrics["entropy"], metrics["entropy_normalised"] = entropy(on_catalog, entropy_base)
    left_out["recommendations_outside_catalog"] = int(counts[~in_catalog].sum())
    return metrics, skipped, left_out
