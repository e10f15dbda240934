"""What a dataset shows beyond its metrics: the long tail and the head's share of the
recommendations, item and user bias against the catalog, the score distribution, and the
recommendation cases. :class:`~metrics_core.engines.memory.dataset.Dataset` has these as methods (it is an
:class:`Analyses`); the computations themselves live in :mod:`metrics_core.metrics`."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from metrics_core._numeric.distinct import distinct
from metrics_core.errors import input_error
from metrics_core.inputs import validate

if TYPE_CHECKING:
    from metrics_core.inputs.encoded import Lists, Training, Truth


class Analyses:
    """The analyses of a dataset's encoded lists, training data and side tables."""

    lists: dict[str, Lists]
    truth: Truth
    training: Training | None
    item_table: pd.DataFrame | None
    item_table_codes: np.ndarray | None
    user_table: pd.DataFrame | None
    user_table_codes: np.ndarray | None

    def _lists_of(self, model: str):
        """The lists of ``model``, or an InputError naming the dataset's models."""
        if model not in self.lists:
            raise input_error("model", f"no model named {model!r}.", f"choose one of: {', '.join(self.lists)}.")
        return self.lists[model]

    def long_tail(self, model: str, k: int = 10) -> pd.DataFrame:
        """The model's long-tail curve at K (see :func:`metrics_core.metrics.popularity.long_tail`)."""
        from metrics_core.metrics.popularity import long_tail

        interactions = self._interactions("the long-tail chart")
        return long_tail(self.recommended_counts(self._lists_of(model), k), interactions)

    def head_share(self, model: str, k: int = 10, head: float = 0.2) -> float:
        """Share of the model's top-K recommendations that go to the most popular items."""
        from metrics_core.metrics.popularity import head_share

        interactions = self._interactions("the head share")
        return head_share(self.recommended_counts(self._lists_of(model), k), interactions, head)

    def recommended_counts(self, lists, k: int) -> np.ndarray:
        """How many times each item is in the top K of ``lists`` (one of this dataset's): counted
        once per lists and K for the pages that read it (the long tail, the head share, who is
        served), since reading the first K columns of memory-mapped lists reads them all."""
        from metrics_core.metrics.catalog import recommendation_counts

        kept = self.__dict__.setdefault("_recommended_counts", {})
        if (id(lists), k) not in kept:
            kept[id(lists), k] = recommendation_counts(lists.top(k), len(self.items))
        return kept[id(lists), k]

    def _interactions(self, what: str) -> np.ndarray:
        if self.training is None:
            raise input_error(what, "needs training interactions.", "give the training data.")
        return self.training.interactions_per_item

    def item_bias(self, model: str, attribute: str, k: int = 10):
        """Item attribute in the model's top-K recommendations vs the catalog (training items,
        each once; the item table when there is no training data)."""
        from metrics_core.metrics.bias import item_bias

        if self.item_table is None:
            raise input_error("item bias", "needs an item table.", "give an item table with the attribute.")
        values = self.item_attribute(attribute)
        top = self._lists_of(model).top(k)
        catalog = np.flatnonzero(self.training.users_per_item > 0) if self.training is not None \
            else distinct(self.item_table_codes)
        return item_bias(attribute, values, top[top >= 0], catalog)

    def user_bias(self, attribute: str):
        """User attribute among evaluated users (with a relevant item) vs the training users."""
        from metrics_core.metrics.bias import user_bias

        if self.user_table is None or self.training is None:
            raise input_error("user bias", "needs a user table and training interactions.",
                              "give both a user table with the attribute and the training data.")
        values = self.user_attribute(attribute)
        evaluated = np.flatnonzero(self.truth.relevant_count > 0)
        return user_bias(attribute, values, evaluated, np.flatnonzero(self.training.items_per_user > 0))

    def item_attribute(self, attribute: str) -> pd.Series:
        """An item-table column indexed by item code."""
        return self._values_by_code(self.item_table, attribute, self.item_table_codes, "item table")

    def user_attribute(self, attribute: str) -> pd.Series:
        """A user-table column indexed by user code."""
        return self._values_by_code(self.user_table, attribute, self.user_table_codes, "user table")

    @staticmethod
    def _values_by_code(table: pd.DataFrame, attribute: str, codes: np.ndarray, what: str) -> pd.Series:
        if attribute not in table.columns:
            raise input_error(what, f"has no column '{attribute}' (columns: {validate.column_list(table.columns)}).",
                              "choose one of the table's columns.")
        values = pd.Series(table[attribute].to_numpy(), index=codes)
        return values[~values.index.duplicated()]

    def score_distribution(self, model: str, k: int = 10, bins: int = 40, edges: np.ndarray | None = None):
        """Histogram of the scores in each list's top K and in the rest (None for rank-only lists):
        see :func:`metrics_core.metrics.scores.score_histogram`. The counts of each position are
        kept beside the lists, per bins, so another K sums them instead of reading every score."""
        from metrics_core.metrics.scores import histogram_at, place_histograms

        lists = self._lists_of(model)
        lists.require_scores(lists.positions, "the score histogram")
        if lists.scores is None:
            return None
        kept = lists.__dict__.setdefault("_score_places", {})
        key = (bins, None if edges is None else tuple(np.asarray(edges, dtype=np.float64).tolist()))
        with lists.__dict__.setdefault("_score_places_lock", threading.Lock()):  # (a count in flight: awaited)
            if key not in kept:
                kept[key] = place_histograms(lists.scores, bins, edges)
        return histogram_at(*kept[key], k)

    def count_scores(self, bins: int | None = None) -> None:
        """Count each model's scores per position ahead of :meth:`score_distribution` at ``bins``
        (default :data:`~metrics_core.metrics.scores.SCORE_BINS`, the app's): the models of
        :meth:`scores_to_count`. The counts are kept beside the lists and, when the dataset is kept,
        with it (:mod:`metrics_core.store.encoded`): a reopened workspace's histograms at any K then
        sum them instead of reading every score (1.7 s at 1M users x 100 x 4 models)."""
        from metrics_core.metrics.scores import SCORE_BINS

        for name in self.scores_to_count(bins):
            self.score_distribution(name, 1, bins=bins or SCORE_BINS)

    def ready_to_keep(self) -> None:
        """Compute ahead what the app's pages read on a reopened workspace and the store keeps with
        the dataset: each model's scores counted per position (:meth:`count_scores`) and the copy
        of its lists' first places (:meth:`~metrics_core.inputs.encoded.Lists.top`). Every road
        that keeps an encoded dataset (``--save``, ``workspaces prepare``, the app) calls it."""
        self.count_scores()
        for lists in self.lists.values():
            lists.copy_first_places()

    def scores_to_count(self, bins: int | None = None) -> list[str]:
        """The models whose scores :meth:`count_scores` counts at ``bins``: scored at every position
        and not counted yet."""
        from metrics_core.metrics.scores import SCORE_BINS

        return [name for name, lists in self.lists.items()
                if lists.scores is not None and lists.scores.shape[1] >= lists.positions
                and (bins or SCORE_BINS, None) not in vars(lists).get("_score_places", {})]

    def cases(self, users: list | None = None, **options):
        """Recommendation cases; see :func:`metrics_core.engines.memory.cases.cases`."""
        from metrics_core.engines.memory.cases import cases

        for lists in self.lists.values():
            lists.require_scores(lists.positions, "the recommendation cases")
        return cases(self, users, **options)

    def exposure(self, model: str, settings=None) -> pd.DataFrame:
        """Each item group's share of the exposure of the model's top-K lists and its target share
        (columns ``group``, ``exposure``, ``target``; see :mod:`metrics_core.metrics.exposure`),
        groups from the category column, browsing model and target as ``settings`` say."""
        from metrics_core.metrics import exposure
        from metrics_core.settings import Settings

        settings = settings or Settings()
        categories, why = self.categories(settings.category_column)
        if categories is None:
            raise input_error("exposure", why + ".", "give an item table with a category column (a genre).")
        top = self._lists_of(model).top(settings.k)
        per_item = exposure.item_exposure(top, exposure.position_weights(top.shape[1], settings.exposure_browsing,
                                                                         settings.rbp_p), len(self.items))
        training = self.training
        target = exposure.target_shares(settings.exposure_target, categories.shares, self.in_catalog,
                                        None if training is None else training.interactions_per_item)
        return exposure.exposure_table(per_item, categories.shares, target, categories.names)

    def served_items(self, model: str, settings=None, by: str | None = None) -> pd.DataFrame:
        """How each group of items is served in the model's top K (one row per group; see
        :func:`metrics_core.stats.served.item_side`): the head, middle and tail thirds of the
        items by training interactions (``by=None``, with training data), or the categories of the
        item table's column ``by`` (an item of several counting a share in each)."""
        from metrics_core.settings import Settings
        from metrics_core.stats.served import by_group, item_side, popularity_thirds

        settings = settings or Settings()
        self._lists_of(model)  # (an unknown model: a message naming the models)
        if by is None:
            if self.training is None:
                raise input_error("served items", "the head, middle and tail of popularity need training "
                                  "interactions.", "give training data, or name an item column with by=...")
            shares, names = popularity_thirds(self.training.interactions_per_item)
        else:
            categories, why = self.categories(by)
            if categories is None:
                raise input_error("served items", why + ".", "give an item table with that column.")
            shares, names = categories.shares.toarray(), categories.names
        lists = self.retrieved(model, settings.score_threshold, settings.max_list_length, settings.judged_only)
        user, position = lists.hit_coordinates
        inside = position < settings.k
        rows = np.flatnonzero(self.truth.relevant_count > 0)
        kept = self.__dict__.setdefault("_relevant_by_group", {})  # (the ground truth's side: once per grouping)
        if by not in kept:
            kept[by] = by_group(self.truth.user, self.truth.item, rows, shares)
        return item_side(user[inside], lists.items[user[inside], position[inside]],
                         self.recommended_counts(lists, settings.k), kept[by], rows, shares, names)

    def precision_at_recall(self, model: str, levels, settings=None) -> pd.DataFrame:
        """Interpolated precision at any recall ``levels`` (0.25, 0.75, …; trec_eval reports 0, 0.1,
        .., 1 only) over the model's top K, for each user with a relevant item: one row per user
        (index: user id), one column per level; ``.mean()`` gives the values trec_eval's
        ``iprec_at_recall`` would. The rule that says when a level is reached is
        ``settings.recall_levels`` (trec_eval 10's rounding by default)."""
        from metrics_core.metrics.accuracy.whole_list import precision_at_recall_levels
        from metrics_core.settings import Settings

        settings = settings or Settings()
        try:
            levels = np.asarray(levels, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError):
            levels = np.array([np.nan])
        if not len(levels) or not np.all((levels >= 0) & (levels <= 1)):
            raise input_error("recall levels", "the levels asked for are not numbers between 0 and 1.",
                              "give recall levels such as [0.25, 0.5, 0.75].")
        rows = np.flatnonzero(self.truth.relevant_count > 0)
        self._lists_of(model)
        lists = self.retrieved(model, settings.score_threshold, settings.max_list_length, settings.judged_only)
        values = precision_at_recall_levels(lists, self.truth, rows, settings.k, levels, settings.recall_levels)
        return pd.DataFrame(values.T, index=pd.Index(self.users.ids[rows], name=self.columns.user),
                            columns=[f"{level:g}" for level in levels])

