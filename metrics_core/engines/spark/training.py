"""The training data on the Spark engine: its item popularity, counted once in Spark and sent to
every partition, and each user's own training rows, which travel with the user's lists.

A partition holds every training row of its users, so what is one user's (the distinct items
they trained on: the LAUC/MCC candidates; their history vector: serendipity) comes from its
rows. What is the whole data's (how many training users and rows each item has, how many
there are in all, the popularity ranks) cannot: it is counted here over the whole training
table and given to each partition's :class:`~metrics_core.inputs.encoded.Training` as its
``whole`` (:func:`with_whole_training`). Novelty, ARP, ARP (share of users), novelty over
interactions and popularity serendipity then equal the in-memory engine's. With
``similarity="cooccurrence"``, every pair of items that share a training user is counted here
too (a join of the distinct training pairs with themselves on the user): each partition gets
the whole data's similarity of its own items (:meth:`TrainingFacts.whole_for`), from which
diversity, intra-list similarity and serendipity equal the in-memory engine's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from metrics_core.inputs.columns import Columns
from metrics_core.inputs.encode import encode_training
from metrics_core.inputs.encoded import WholeTraining
from metrics_core.inputs.text_ids import as_text
from metrics_core.metrics import popularity

SHARED_COLUMNS = ("_first", "_second", "_shared")  # the pairs of items that share users, and how many


@dataclass
class TrainingFacts:
    """Per training item (``ids`` as Spark read them, ``items`` the same as text): distinct
    training users (``users``) and training rows (``interactions``); and the training users
    and rows of the whole table. ``shared``, for the co-occurrence similarity: each pair of
    items (places in ``items``, first < second) that share training users, and how many."""

    ids: np.ndarray
    items: np.ndarray
    users: np.ndarray
    interactions: np.ndarray
    n_users: int
    n_interactions: int
    shared: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    @property
    def levels(self) -> np.ndarray:
        """The distinct positive per-item row counts, most first (the popularity ranks)."""
        return popularity.popularity_levels(self.interactions)

    def _lookup(self, item_ids: np.ndarray) -> np.ndarray:
        """The place of each id (any type: compared as text) in ``items``, -1 when untrained."""
        return pd.Index(self.items).get_indexer(as_text(item_ids))

    def whole_for(self, item_ids: np.ndarray) -> WholeTraining:
        """These facts per item code of a partition whose item ids are ``item_ids`` (with
        ``shared``, also the co-occurrence similarity of those items)."""
        at = self._lookup(item_ids)
        known = at >= 0
        users = np.where(known, self.users[at], 0)
        similarity = None if self.shared is None else self._similarity(at, users)
        return WholeTraining(users, np.where(known, self.interactions[at], 0), self.n_users, self.n_interactions,
                             self.levels, similarity)

    def _similarity(self, at: np.ndarray, users: np.ndarray):
        """sim(i, j) = |U_i ∩ U_j| / sqrt(|U_i|·|U_j|) between the items whose places in
        ``items`` are ``at`` (-1: untrained, similar to nothing), as an items x items matrix in
        their order; 1 on the diagonal of the trained items (``users``: their training users)."""
        import scipy.sparse as sp

        code = np.full(len(self.items), -1, dtype=np.int64)
        code[at[at >= 0]] = np.flatnonzero(at >= 0)
        first, second, count = self.shared
        first, second = code[first], code[second]
        keep = (first >= 0) & (second >= 0)
        first, second = first[keep], second[keep]
        value = count[keep] / np.sqrt(users[first].astype(np.float64) * users[second])
        trained = np.flatnonzero(users > 0)
        similarity = sp.csr_matrix((np.concatenate([value, value, np.ones(len(trained))]),
                                    (np.concatenate([first, second, trained]),
                                     np.concatenate([second, first, trained]))), shape=(len(at), len(at)))
        similarity.sort_indices()  # (the look-ups search each row's columns)
        return similarity

    def interaction_novelty(self, item_ids: np.ndarray, counts: np.ndarray) -> float:
        """Novelty over every recommendation (:func:`popularity.interaction_novelty`) from the
        times each item (``item_ids``) is in a top K, summed over partitions."""
        at = self._lookup(item_ids)
        return popularity.interaction_novelty(counts, np.where(at >= 0, self.interactions[at], 0),
                                              self.n_interactions)


def training_facts(train_df, columns: Columns, cooccurrence: bool = False) -> TrainingFacts:
    """Count the whole training table in Spark (one row per item comes back to the driver;
    with ``cooccurrence``, also one row per pair of items that share a training user). Rows
    without an item id are left out here: the partition holding them names them, as rows of
    the training table (the items here can become the catalog sent to every partition)."""
    from pyspark.sql import functions as F  # noqa: N812 (the usual name)

    per_item = (train_df.where(F.col(columns.item).isNotNull()).groupBy(columns.item)
                .agg(F.countDistinct(columns.user).alias("users"), F.count(F.lit(1)).alias("interactions"))
                .toPandas())
    n_users = train_df.select(columns.user).distinct().count()
    ids = per_item[columns.item].to_numpy()
    facts = TrainingFacts(ids, as_text(ids), per_item["users"].to_numpy(np.int64),
                          per_item["interactions"].to_numpy(np.int64), int(n_users),
                          int(per_item["interactions"].sum()))
    return replace(facts, shared=_shared_users(train_df, columns, facts)) if cooccurrence else facts


def _shared_users(train_df, columns: Columns, facts: TrainingFacts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """|U_i ∩ U_j| for each pair of items that share a training user, counted in Spark: the
    distinct (user, item) pairs joined with themselves on the user. The pairs come back as
    places in ``facts.items`` (the first item the smaller in Spark's order)."""
    from pyspark.sql import functions as F  # noqa: N812 (the usual name)

    user, item = columns.user, columns.item
    first, second, shared = SHARED_COLUMNS
    seen = train_df.where(F.col(user).isNotNull() & F.col(item).isNotNull()).select(user, item).distinct()
    one, other = seen.toDF(user, first), seen.toDF(user, second)
    pairs = (one.join(other, user).where(F.col(first) < F.col(second)).groupBy(first, second)
             .agg(F.count(F.lit(1)).alias(shared)).toPandas())
    return (facts._lookup(pairs[first].to_numpy()), facts._lookup(pairs[second].to_numpy()),
            pairs[shared].to_numpy(np.float64))


def with_whole_training(dataset, facts: TrainingFacts):
    """``dataset`` (one partition's, built with its users' training rows, or without any when
    none of its users has one) with the whole data's training facts."""
    training = dataset.training
    if training is None:  # no training row in this partition: its users have no history
        catalog_size = int(dataset.in_catalog.sum()) if dataset.in_catalog is not None else None
        empty = np.zeros(0, dtype=np.int64)
        training = encode_training(empty, empty, None, dataset.users, dataset.items, catalog_size)
    return replace(dataset, training=replace(training, whole=facts.whole_for(dataset.items.ids)), _history=None,
                   _above={})
