"""The beyond-accuracy metrics at every cut-off k = 1 .. the longest list, in one pass over the lists.

The accuracy metrics have their curves (sums over users at every k); these are the same for the
beyond-accuracy metrics, so that a new K is read, not evaluated again (the app's K slider on a
large workspace). Each value at k equals what :func:`metrics_core.metrics.beyond.beyond_pass`
gives at K = k (the tests compare every k of random data and settings):

* **Catalog metrics** (aggregate diversity, coverage, Gini, entropy, personalization) and
  interaction novelty, from each item's recommendation count at k: the count of each place
  added to the running counts of the places before it, one place at a time.
* **Exposure disparity**, from each item's exposure at k the same way (place j's weight times
  its count).
* **Per-user means** (novelty, ARP, popularity serendipity; cosine diversity, intra-list
  similarity and serendipity when ``similarity="cosine"``; score entropy per user, when the lists
  keep every place's score), from one compiled pass over each user's places
  (:mod:`metrics_core.metrics.prefix_kernels`): at every k the sum over users of their value, of
  its square (for intervals), and the users with a value. Serendipity against the primitive model
  and unexpectedness too, from both models' lists (each user's hits looked at again at every k).

Besides them, the first evaluation adds expected exposure's three means (accuracy metrics over
the evaluated users without an accuracy curve:
:func:`metrics_core.metrics.accuracy.whole_list.expected_exposure_curves`).

Not covered, so absent from the columns (a K change computes them alone at K:
:meth:`metrics_core.Dataset.metrics_at`): calibration (its value at every k would take a
logarithm per category of the history at each place: 3 s per model at 1M users x 100), the
primitive-model metrics under ``primitive_scale="minmax"`` when the lists keep the scores of their
first places only, pooled score entropy, and diversity and serendipity under the Hamming or
co-occurrence similarity.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from metrics_core._numeric.parallel import map_chunks, thread_shares
from metrics_core.inputs.encoded import KERNEL_ITEMS_MAX, Lists
from metrics_core.intervals import sd_of_sums
from metrics_core.metrics import catalog, exposure, popularity
from metrics_core.settings import Settings

PLACE_COUNTS_BYTES = 1 << 29  # the most the places x items count tables of the threads may take together


@dataclass
class BeyondCurves:
    """Index k = 1 .. the longest list. ``values``: one column per metric covered, its value at k
    (NaN where the metric at K = k has none). ``users`` and ``sd``: for the metrics that are means
    of per-user values, the users with a value at k and the sample standard deviation of their
    values (for a t interval). ``listed``: the users with an item in their first k places.
    ``notes``: the counts behind the notes that depend on K (:mod:`metrics_core.cutoff_notes`)."""

    values: pd.DataFrame
    users: pd.DataFrame
    sd: pd.DataFrame
    listed: pd.Series
    notes: pd.DataFrame | None = None

    def at(self, k: int) -> tuple[dict[str, float], dict[str, int], dict[str, float]]:
        """The metrics with a value at ``k``, their users and standard deviations."""
        values = self.values.loc[k]
        users = self.users.loc[k] if k in self.users.index else pd.Series(dtype=np.int64)
        present = {name: float(value) for name, value in values.items() if not np.isnan(value)}
        return (present, {name: int(users[name]) for name in users.index if name in present},
                {name: float(self.sd.loc[k, name]) for name in users.index if name in present})


@dataclass
class _Means:
    """Running sums over users, per place: Σ value, Σ value², users."""

    sums: np.ndarray
    squares: np.ndarray
    users: np.ndarray

    @classmethod
    def of(cls, positions: int) -> _Means:
        return cls(np.zeros(positions), np.zeros(positions), np.zeros(positions, dtype=np.int64))

    def __iter__(self):
        return iter((self.sums, self.squares, self.users))

    def add(self, other: _Means) -> _Means:
        return _Means(self.sums + other.sums, self.squares + other.squares, self.users + other.users)

    def mean(self) -> np.ndarray:
        return np.divide(self.sums, self.users, out=np.full(len(self.sums), np.nan), where=self.users > 0)

    def sd(self) -> np.ndarray:
        return sd_of_sums(self.users, self.sums, self.squares)


def _summed(kernel: Callable, n_users: int, positions: int, outputs: int, *arguments) -> list[_Means]:
    """``kernel(*arguments, *outputs' arrays, start, stop)`` over the users on a few threads, each
    range into sums of its own, added up: ``outputs`` sets of (sums, squares, users)."""
    def one(start: int, stop: int) -> list[_Means]:
        means = [_Means.of(positions) for _ in range(outputs)]
        arrays = [tuple(m) for m in means] if outputs > 1 else list(means[0])
        kernel(*arguments, *arrays, start, stop)
        return means

    parts = map_chunks(one, thread_shares(n_users)) if n_users else [[_Means.of(positions)] * outputs]
    totals = parts[0]
    for part in parts[1:]:
        totals = [a.add(b) for a, b in zip(totals, part, strict=True)]
    return totals


def beyond_curves(lists: Lists, settings: Settings, inputs) -> BeyondCurves:
    """Every covered beyond-accuracy metric of ``lists`` at every k (``inputs``: the
    :class:`~metrics_core.metrics.beyond.BeyondInputs` of :func:`~metrics_core.metrics.beyond.beyond_pass`)."""
    from metrics_core.inputs.kernels import read_only_c
    from metrics_core.metrics import prefix_kernels as kernels

    items, positions = lists.items, lists.items.shape[1]
    n_users = len(items)
    k = np.arange(1, positions + 1)
    first = np.empty(n_users, dtype=np.int64)
    map_chunks(lambda start, stop: kernels.first_listed(items, first, start, stop), thread_shares(n_users))
    listed_users = np.cumsum(np.bincount(first, minlength=positions + 1)[:positions])
    values: dict[str, np.ndarray] = {}
    means: dict[str, _Means] = {}
    values.update(_from_counts(items, listed_users, settings, inputs))
    unused = np.empty(n_users)  # (each user's value at its last place: the loops give it for one K)
    training = inputs.training
    if training is not None:
        counted = training.users_per_item > 0 if settings.novelty_unknown == "leave_out" else \
            np.ones(inputs.n_items, dtype=bool)
        surprise = np.where(counted, -np.log2(np.maximum(training.users_per_item, 1) / training.n_users), 0.0)
        means["novelty"], = _summed(kernels.cell_means, n_users, positions, 1, items, surprise, counted, unused)
        interactions = training.interactions_per_item.astype(np.float64)
        counted = np.ones(inputs.n_items, dtype=bool) if settings.arp_unknown == "zero" else interactions > 0
        means["arp"], = _summed(kernels.cell_means, n_users, positions, 1, items, interactions, counted, unused)
        n_catalog = int(inputs.in_catalog.sum()) if inputs.in_catalog is not None else inputs.n_items
        levels = training.interaction_levels
        levels = popularity.popularity_levels(training.interactions_per_item) if levels is None else levels
        pop_rank = np.searchsorted(-levels, -training.interactions_per_item) + 1
        p_item = np.where(training.interactions_per_item > 0, (n_catalog + 1 - pop_rank) / n_catalog, 0.0)
        means["serendipity_popularity"], = _summed(kernels.popularity_serendipity, n_users, positions, 1, items,
                                                   lists.hit, (n_catalog - k + 1) / n_catalog, p_item, unused)
    if settings.similarity == "cosine" and inputs.vectors is not None:
        vectors = inputs.vectors
        means["diversity"], means["intra_list_similarity"] = _summed(
            kernels.cosine_lists, n_users, positions, 2, items, vectors.unit, vectors.has_vector,
            settings.diversity_divisor == "list", settings.one_item_lists == "self", np.empty((n_users, 2)))
        if inputs.history is not None:
            history_mean, history_count = inputs.history
            means["serendipity"], = _summed(kernels.history_serendipity, n_users, positions, 1, items, lists.hit,
                                            vectors.unit, vectors.has_vector, history_mean, history_count,
                                            settings.serendipity_over == "list")
    scores = lists.scores
    if scores is not None and settings.score_entropy == "per_user" and scores.shape[1] >= positions:
        means["score_entropy"], = _summed(kernels.score_entropy, n_users, positions, 1,
                                          read_only_c(scores)[:, :positions], unused)
    if _primitive_covered(lists, inputs, settings):
        means["serendipity_primitive"], means["unexpectedness"] = _primitive_means(lists, inputs.primitive, settings,
                                                                                   inputs.n_items)
    values.update({name: m.mean() for name, m in means.items()})
    if "arp" in values:
        scale = training.n_users if settings.arp_normalisation == "users" else training.n_interactions
        values["arp_normalised"] = values["arp"] / max(1, scale)
    index = pd.Index(k, name="k")
    return BeyondCurves(pd.DataFrame(values, index=index),
                        pd.DataFrame({name: m.users for name, m in means.items()}, index=index),
                        pd.DataFrame({name: m.sd() for name, m in means.items()}, index=index),
                        pd.Series(listed_users, index=index, name="listed"))


def _primitive_covered(lists: Lists, inputs, settings: Settings) -> bool:
    """Whether the primitive-model metrics have curves: a primitive model, item tables the
    compiled loops take (:data:`~metrics_core.inputs.encoded.KERNEL_ITEMS_MAX`) and, for
    ``primitive_scale="minmax"``, both models' scores at every place."""
    primitive = inputs.primitive
    if primitive is None or inputs.n_items > KERNEL_ITEMS_MAX:
        return False
    return settings.primitive_scale == "rank" or all(
        model.scores is not None and model.scores.shape[1] >= model.items.shape[1] for model in (lists, primitive))


def _primitive_means(lists: Lists, primitive: Lists, settings: Settings, n_items: int) -> list[_Means]:
    """Serendipity against the primitive model and unexpectedness at every k
    (:func:`~metrics_core.metrics.prefix_kernels.primitive_lists`)."""
    from metrics_core.inputs.kernels import read_only_c
    from metrics_core.metrics import prefix_kernels as kernels

    minmax = settings.primitive_scale == "minmax"
    scores = (lists.scores[:, :lists.items.shape[1]], primitive.scores[:, :primitive.items.shape[1]]) if minmax \
        else (np.zeros((0, 0)),) * 2
    cells = (read_only_c(cells) for cells in (lists.items, primitive.items, lists.hit, *scores))
    return _summed(kernels.primitive_lists, len(lists.items), lists.items.shape[1], 2, *cells, minmax, n_items)


def _place_counts(items: np.ndarray, n_items: int) -> np.ndarray | None:
    """Places x items: how many lists hold each item at each place, counted in one compiled pass
    over the lists on a few threads (None when the threads' tables would pass
    :data:`PLACE_COUNTS_BYTES`: each place's column is then counted apart)."""
    from metrics_core.metrics import prefix_kernels as kernels

    shares = thread_shares(len(items))
    if not len(items) or items.shape[1] * n_items * 4 * len(shares) > PLACE_COUNTS_BYTES:
        return None

    def one(start: int, stop: int) -> np.ndarray:
        out = np.zeros((items.shape[1], n_items), dtype=np.int32)
        kernels.place_counts(items, out, start, stop)
        return out

    return sum(map_chunks(one, shares))


def _from_counts(items: np.ndarray, listed_users: np.ndarray, settings: Settings, inputs) -> dict[str, np.ndarray]:
    """The metrics read from each item's recommendation count (and exposure) at every k: each
    place's counts added to the running counts, one place at a time."""
    from metrics_core.metrics.beyond import exposure_target

    positions, n_items = items.shape[1], inputs.n_items
    training, categories = inputs.training, inputs.categories
    target = None if categories is None else exposure_target(categories, inputs, settings)
    weights = exposure.position_weights(positions, settings.exposure_browsing, settings.rbp_p)
    counts = np.zeros(n_items, dtype=np.int64)
    exposed = np.zeros(n_items)
    rows: list[dict[str, float]] = []
    by_place = _place_counts(items, n_items)
    for j in range(positions):
        placed = by_place[j] if by_place is not None else \
            np.bincount(items[:, j].astype(np.intp) + 1, minlength=n_items + 1)[1:]
        counts += placed
        exposed += weights[j] * placed
        metrics, _, _ = catalog.summary(counts, int(listed_users[j]), inputs.in_catalog, j + 1, settings.gini_over,
                                        settings.entropy_base)
        if training is not None:
            metrics["novelty_interactions"] = popularity.interaction_novelty(
                counts, training.interactions_per_item, training.n_interactions)
        if target is not None:
            shares = exposure.group_shares(exposed, categories.shares)
            metrics["exposure_distance"] = float("nan") if np.isnan(shares).any() else \
                exposure.js_distance(shares, target)
        rows.append(metrics)
    frame = pd.DataFrame(rows)
    return {name: frame[name].to_numpy(dtype=np.float64) for name in frame.columns}
