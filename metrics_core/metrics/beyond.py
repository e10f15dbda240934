"""Beyond-accuracy metrics of one model at K, averaged over users with a non-empty list.

Each metric needs some inputs: the catalog (item table or training data) for coverage,
Gini and entropy; training data for novelty, ARP and serendipity; item features for
diversity and serendipity; scores for score entropy. What cannot be computed is reported
under ``skipped`` with the reason, never silently left out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

import numpy as np

from metrics_core._numeric.sums import row_sums
from metrics_core.inputs.encoded import Cooccurrence, Lists, Training
from metrics_core.inputs.features import ItemVectors
from metrics_core.metrics import calibration, catalog, exposure, popularity, primitive, registry, scores, similarity
from metrics_core.metrics.accuracy.cutoffs import user_rows
from metrics_core.settings import Settings

NEEDS_TRAINING = "needs training interactions"
NEEDS_PRIMITIVE = "needs a second model (the primitive model) to compare with"
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


@dataclass
class BeyondInputs:
    """What the beyond-accuracy metrics read besides the lists, each None when absent:
    ``in_catalog`` (item codes in the catalog), ``training``, item ``vectors``, ``history``
    (mean history vectors and sizes), ``cooccurrence`` (items' unit training-user vectors,
    users' history rows and the items x items similarity, for ``similarity="cooccurrence"``)
    and ``primitive`` (the primitive model's lists, for serendipity against it)."""

    n_items: int
    in_catalog: np.ndarray | None = None
    training: Training | None = None
    vectors: ItemVectors | None = None
    history: tuple[np.ndarray, np.ndarray] | None = None
    cooccurrence: Cooccurrence | None = None
    primitive: Lists | None = None
    categories: calibration.Categories | None = None
    no_categories: str = "needs an item table with a category column"


POPULARITY = ("novelty", "arp", "arp_normalised", "novelty_interactions", "serendipity_popularity")
SIMILARITY = ("diversity", "intra_list_similarity", "serendipity")
PRIMITIVE = ("serendipity_primitive", "unexpectedness")
CATALOG = tuple(registry.names("catalog"))


def beyond_pass(lists: Lists, settings: Settings, inputs: BeyondInputs, only: set[str] | None = None) -> BeyondPass:
    """Every beyond-accuracy metric whose inputs are present, per user and aggregated, with
    the conventions ``settings`` chooses; with ``only`` (metric names), the groups of metrics that
    hold one of them alone (catalog, popularity, similarity, calibration, exposure, primitive
    model, score entropy), and of their results those named, with the same values."""
    k, training = settings.k, inputs.training
    wanted = (lambda names: True) if only is None else (lambda names: bool(only.intersection(names)))
    rows = np.flatnonzero(lists.listed_within(k))
    every_user = len(rows) == len(lists.items)
    top = cache(lambda: lists.top(k) if every_user else lists.top(k)[rows])  # (a view when every user has a list)
    hit_top = cache(lambda: lists.hit[user_rows(rows), :k])  # (read by the groups that need them alone)
    out = BeyondPass(rows, {}, {}, {}, {"users_with_recommendations": len(rows)})
    counts = catalog.recommendation_counts(top(), inputs.n_items) if wanted((*CATALOG, "novelty_interactions")) \
        else None
    groups = ((CATALOG, lambda: _catalog_metrics(out, counts, inputs, settings)),
              (POPULARITY, lambda: _popularity_metrics(out, top(), hit_top(), counts, inputs, settings, wanted)),
              (SIMILARITY, lambda: _similarity_metrics(out, top(), hit_top(), rows, inputs, settings)),
              (("calibration",), lambda: _calibration(out, lists, rows, inputs, settings)),
              (("exposure_distance",), lambda: _exposure(out, top(), inputs, settings)),
              (PRIMITIVE, lambda: _primitive_metrics(out, lists, rows, hit_top(), inputs, settings)),
              (("score_entropy",), lambda: _score_entropy(out, lists, None if every_user else rows, settings)))
    for names, compute in groups:
        if wanted(names):
            compute()
    for name, values in out.per_user.items():
        present = ~np.isnan(values)
        if present.any():
            out.metrics[name] = float(values[present].mean())
        else:
            out.skipped[name] = f"no user has what {name} needs (see left_out)"
    if "arp" in out.metrics:
        scale = training.n_users if settings.arp_normalisation == "users" else training.n_interactions
        out.metrics["arp_normalised"] = out.metrics["arp"] / max(1, scale)
    if only is not None:
        out.per_user = {name: values for name, values in out.per_user.items() if name in only}
        out.metrics = {name: value for name, value in out.metrics.items() if name in only}
        out.skipped = {name: reason for name, reason in out.skipped.items() if name in only}
    return out


def _popularity_metrics(out: BeyondPass, top: np.ndarray, hit_top: np.ndarray, counts: np.ndarray | None,
                        inputs: BeyondInputs, settings: Settings, wanted: Callable[[tuple[str, ...]], bool]) -> None:
    """Novelty, ARP and popularity serendipity per user, and the interactions' novelty: each that
    is ``wanted`` (the Summary at a new K asks for novelty alone)."""
    training = inputs.training
    if training is None:
        out.skipped.update(dict.fromkeys(POPULARITY, NEEDS_TRAINING))
        return
    if wanted(("novelty",)):
        out.per_user["novelty"], unknown = popularity.novelty(top, training.users_per_item, training.n_users,
                                                              settings.novelty_unknown)
        out.left_out["recommendations_unknown_to_training"] = unknown
    if wanted(("arp", "arp_normalised")):
        out.per_user["arp"] = popularity.average_recommendation_popularity(
            top, training.interactions_per_item, settings.arp_unknown)
    if wanted(("novelty_interactions",)):
        out.metrics["novelty_interactions"] = popularity.interaction_novelty(
            counts, training.interactions_per_item, training.n_interactions)
    if wanted(("serendipity_popularity",)):
        n_catalog = int(inputs.in_catalog.sum()) if inputs.in_catalog is not None else inputs.n_items
        out.per_user["serendipity_popularity"] = popularity.popularity_serendipity(
            top, hit_top, training.interactions_per_item, n_catalog, training.interaction_levels)


def _score_entropy(out: BeyondPass, lists: Lists, rows: np.ndarray | None, settings: Settings) -> None:
    """The entropy of the softmax of each user's top-K scores (``rows``: the users with a list,
    None: every user), or of every list's pooled (``score_entropy="pooled"``)."""
    if lists.scores is None:
        out.skipped["score_entropy"] = "needs scores (the lists have ranks only)"
    elif settings.score_entropy == "pooled":
        out.metrics["score_entropy"] = scores.pooled_score_entropy(
            lists.scores[:, :settings.k] if rows is None else lists.scores[rows, :settings.k])
    else:
        out.per_user["score_entropy"] = scores.score_entropy(lists.score_places(settings.k), rows, settings.k)


def _calibration(out: BeyondPass, lists: Lists, rows: np.ndarray, inputs: BeyondInputs,
                 settings: Settings) -> None:
    """Each user's miscalibration: the category mix of its top K against its history's."""
    categories = inputs.categories
    if categories is None or categories.history is None:
        out.skipped["calibration"] = inputs.no_categories if categories is None else NEEDS_TRAINING
        return
    out.per_user["calibration"] = calibration.list_miscalibration(lists.items, rows, settings.k, categories.history,
                                                                  categories.shares, settings.calibration_alpha)


def _exposure(out: BeyondPass, top: np.ndarray, inputs: BeyondInputs, settings: Settings) -> None:
    """How far the item groups' shares of the lists' exposure are from their target shares."""
    categories = inputs.categories
    if categories is None:
        out.skipped["exposure_distance"] = inputs.no_categories
        return
    target = exposure_target(categories, inputs, settings)
    if target is None:
        wanted = "training interactions" if settings.exposure_target == "training" else \
            "the catalog (an item table or training data)"
        out.skipped["exposure_distance"] = f"needs {wanted} for its target ({settings.exposure_target})"
        return
    per_item = exposure.item_exposure(top, exposure.position_weights(top.shape[1], settings.exposure_browsing,
                                                                     settings.rbp_p), inputs.n_items)
    shares = exposure.group_shares(per_item, categories.shares)
    if np.isnan(shares).any():
        out.skipped["exposure_distance"] = "no recommended item has a category"
        return
    out.metrics["exposure_distance"] = exposure.js_distance(shares, target)


def exposure_target(categories: calibration.Categories, inputs: BeyondInputs, settings: Settings):
    """The groups' target shares as ``settings.exposure_target`` says (None: its input is missing)."""
    training = inputs.training
    return exposure.target_shares(settings.exposure_target, categories.shares, inputs.in_catalog,
                                  None if training is None else training.interactions_per_item)


def _catalog_metrics(out: BeyondPass, counts: np.ndarray, inputs: BeyondInputs, settings: Settings) -> None:
    metrics, skipped, left_out = catalog.summary(counts, len(out.rows), inputs.in_catalog, settings.k,
                                                 settings.gini_over, settings.entropy_base)
    out.metrics.update(metrics)
    out.skipped.update(skipped)
    out.left_out.update(left_out)


def _similarity_metrics(out: BeyondPass, top, hit_top, rows, inputs: BeyondInputs, settings: Settings) -> None:
    """Diversity, intra-list similarity and serendipity, with the chosen similarity."""
    names = ("diversity", "intra_list_similarity", "serendipity")
    if settings.similarity == "cooccurrence":
        if inputs.cooccurrence is None:
            out.skipped.update(dict.fromkeys(names, NEEDS_TRAINING + " (similarity = co-occurrence)"))
            return
        co = inputs.cooccurrence
        sums = similarity.matrix_pair_sums(top, co.item_similarity)
        usable = top >= 0
        to_history = similarity.cooccurrence_history_similarity(rows, co.history, co.item_similarity)
        history_count = co.history_count
    else:
        vectors = inputs.vectors
        if vectors is None:
            out.skipped.update(dict.fromkeys(names, NEEDS_FEATURES))
            return
        if settings.similarity == "hamming":
            if vectors.value_codes is None:
                out.skipped.update(dict.fromkeys(names, "Hamming distance needs feature columns (not an embedding)"))
                return
            has_features = vectors.value_codes[:, 0] >= 0
            sums = similarity.hamming_pair_sums(top, vectors.value_codes, has_features)
            usable = similarity.usable_cells(top, has_features)
        else:
            usable = similarity.usable_cells(top, vectors.has_vector)
            sums = similarity.cosine_pair_sums(top, vectors, usable)
        out.left_out["recommendations_without_features"] = int(((top >= 0) & ~usable).sum())
        to_history = similarity.feature_history_similarity(rows, vectors, inputs.history[0]) \
            if inputs.history is not None else None
        history_count = inputs.history[1] if inputs.history is not None else None
    out.per_user["diversity"] = _diversity(sums, top, settings)
    if sums.is_distance:
        out.skipped["intra_list_similarity"] = "a Hamming distance has no similarity"
    else:
        out.per_user["intra_list_similarity"] = np.clip(sums.mean(), -1.0, 1.0)
        if settings.one_item_lists == "self":  # (LensKit: a lone item is as similar to itself as can be)
            out.per_user["intra_list_similarity"][sums.n == 1] = 1.0
            out.per_user["diversity"][sums.n == 1] = 0.0
    out.left_out["users_with_fewer_than_two_featured_items"] = int((sums.n < (
        1 if settings.one_item_lists == "self" and not sums.is_distance else 2)).sum())
    if to_history is None or settings.similarity == "hamming":
        out.skipped["serendipity"] = NEEDS_TRAINING if to_history is None else "a Hamming distance has no " \
            "similarity to a history"
        return
    out.per_user["serendipity"] = similarity.serendipity(top, hit_top, rows, usable, to_history, history_count,
                                                         settings.serendipity_over)
    out.left_out["users_without_history"] = int((history_count[rows] == 0).sum())


def _diversity(sums: similarity.PairSums, top: np.ndarray, settings: Settings) -> np.ndarray:
    """Per user: the mean distance over pairs (NaN with fewer than two usable items; 0 for a
    Hamming distance over a list of fewer than two, as RecTools), or the distance summed over
    pairs / n (Evidently; 0 with fewer than two)."""
    distance = sums.distance_sum()
    if settings.diversity_divisor == "list":
        return np.divide(distance, sums.n, out=np.zeros(len(sums.n)), where=sums.n >= 2)
    mean = np.divide(distance, sums.pairs, out=np.full(len(sums.n), np.nan), where=sums.n >= 2)
    if sums.is_distance:
        mean[row_sums(top >= 0, np.int64) < 2] = 0.0
    return mean


def _primitive_metrics(out: BeyondPass, lists: Lists, rows, hit_top, inputs: BeyondInputs,
                       settings: Settings) -> None:
    names = PRIMITIVE
    if inputs.primitive is None:
        out.skipped.update(dict.fromkeys(names, NEEDS_PRIMITIVE))
        return
    if settings.primitive_scale == "minmax" and (lists.scores is None or inputs.primitive.scores is None):
        out.skipped.update(dict.fromkeys(names, "primitive_scale = minmax needs scores in both models"))
        return
    out.per_user["serendipity_primitive"], out.per_user["unexpectedness"] = primitive.serendipity_and_unexpectedness(
        lists, inputs.primitive, rows, hit_top, settings.k, settings.primitive_scale, inputs.n_items)
