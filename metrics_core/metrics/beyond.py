"""Beyond-accuracy metrics of one model at K, averaged over users with a non-empty list.

Each metric needs some inputs: the catalog (item table or training data) for coverage,
Gini and entropy; training data for novelty, ARP and serendipity; item features for
diversity and serendipity; scores for score entropy. What cannot be computed is reported
under ``skipped`` with the reason, never silently left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from metrics_core.inputs.encoded import Lists, Training
from metrics_core.inputs.features import ItemVectors
from metrics_core.metrics import catalog, popularity, registry, scores, similarity
from metrics_core.sums import row_sums

NEEDS_CATALOG = "needs the catalog: give an item table or training interactions"
NEEDS_TRAINING = "needs training interactions"
NEEDS_FEATURES = "needs item features: an item table with numeric/categorical feature columns or an embedding"



@dataclass
class BeyondPass:
    rows: np.ndarray
    per_user: dict[str, np.ndarray]
    metrics: dict[str, float]
    skipped: dict[str, str]
    left_out: dict[str, int] = field(default_factory=dict)


def not_requested() -> BeyondPass:
    """The result when only accuracy metrics were asked for: every beyond metric skipped."""
    names = registry.names("beyond") + registry.names("catalog")
    return BeyondPass(np.zeros(0, dtype=np.int64), {}, {}, dict.fromkeys(names, "not requested (beyond=False)"))


def beyond_pass(lists: Lists, k: int, n_items: int, in_catalog: np.ndarray | None, training: Training | None,
                vectors: ItemVectors | None, history: tuple[np.ndarray, np.ndarray] | None) -> BeyondPass:
    """Every beyond-accuracy metric whose inputs are present, per user and aggregated."""
    top_all = lists.items[:, :k]
    listed = row_sums(top_all >= 0, np.int64)
    rows = np.flatnonzero(listed)
    every_user = len(rows) == len(top_all)
    top = top_all if every_user else top_all[rows]  # a view when every user has a list
    out = BeyondPass(rows, {}, {}, {}, {"users_with_recommendations": len(rows)})
    counts = catalog.recommendation_counts(top, n_items)
    out.metrics["aggregate_diversity"] = float(catalog.aggregate_diversity(counts))
    if len(rows) >= 2:
        out.metrics["personalization"] = catalog.personalization(counts, len(rows), k)
    else:
        out.skipped["personalization"] = "needs at least two users with recommendations"
    if in_catalog is not None and in_catalog.any():
        out.metrics["coverage"] = catalog.coverage(counts, in_catalog)
        out.metrics["gini"] = catalog.gini(counts[in_catalog])
        out.metrics["entropy"], out.metrics["entropy_normalised"] = catalog.entropy(counts[in_catalog])
        out.left_out["recommendations_outside_catalog"] = int(counts[~in_catalog].sum())
    else:
        for name in ("coverage", "gini", "entropy", "entropy_normalised"):
            out.skipped[name] = NEEDS_CATALOG
    if training is not None:
        out.per_user["novelty"], unknown = popularity.novelty(top, training.users_per_item, training.n_users)
        out.left_out["recommendations_unknown_to_training"] = unknown
        out.per_user["arp"] = popularity.average_recommendation_popularity(top, training.interactions_per_item)
    else:
        for name in ("novelty", "arp", "arp_normalised"):
            out.skipped[name] = NEEDS_TRAINING
    if vectors is not None:
        ils, without = similarity.intra_list_similarity(top, vectors)
        out.per_user["intra_list_similarity"] = ils
        out.per_user["diversity"] = 1.0 - ils
        out.left_out["recommendations_without_features"] = without
        out.left_out["users_with_fewer_than_two_featured_items"] = int(np.isnan(ils).sum())
        if history is not None:
            hit_top = lists.hit[rows, :k]
            out.per_user["serendipity"] = similarity.serendipity(top, hit_top, rows, vectors, *history)
            out.left_out["users_without_history"] = int((history[1][rows] == 0).sum())
        else:
            out.skipped["serendipity"] = NEEDS_TRAINING
    else:
        for name in ("diversity", "intra_list_similarity", "serendipity"):
            out.skipped[name] = NEEDS_FEATURES
    if lists.scores is not None:
        out.per_user["score_entropy"] = scores.score_entropy(lists.scores[:, :k] if every_user
                                                             else lists.scores[rows, :k])
    else:
        out.skipped["score_entropy"] = "needs scores (the lists have ranks only)"
    for name, values in out.per_user.items():
        present = ~np.isnan(values)
        if present.any():
            out.metrics[name] = float(values[present].mean())
        else:
            out.skipped[name] = f"no user has what {name} needs (see left_out)"
    if "arp" in out.metrics:
        out.metrics["arp_normalised"] = out.metrics["arp"] / max(1, training.n_users)
    return out
