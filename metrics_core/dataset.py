"""The encoded dataset: read and join once, then evaluate any model at any settings cheaply."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from metrics_core.errors import Note, input_error
from metrics_core.inputs import validate
from metrics_core.inputs.columns import Columns
from metrics_core.inputs.encode import (
    Lists,
    Order,
    TieBreak,
    Training,
    Truth,
    encode_lists,
    encode_training,
    encode_truth,
    read_lists,
    read_truth,
    whole_list_heads,
)
from metrics_core.inputs.features import ItemVectors, default_feature_columns, item_vectors
from metrics_core.inputs.ids import IdIndex
from metrics_core.inputs.matching import id_kind, mismatch_note
from metrics_core.inputs.read import read_notes, read_table, split_long_table
from metrics_core.metrics import accuracy, registry
from metrics_core.metrics import beyond as beyond_accuracy
from metrics_core.result import Evaluation
from metrics_core.settings import Settings
from metrics_core.sums import row_sums


def model_name(source, fallback: str) -> str:
    """A model's default name: the file's stem, or ``fallback`` for a DataFrame."""
    return Path(source).stem if isinstance(source, (str, os.PathLike)) else fallback


@dataclass
class Dataset:
    """Everything needed to evaluate, encoded once.

    ``users`` and ``items`` code every id seen in any table; ``lists[name]`` holds one
    model's users x positions arrays (same user rows for every model, so per-user results
    line up); ``truth`` the relevant pairs; ``training`` the training pairs when given.
    Changing K, beta, the AP denominator or the gain only calls :meth:`evaluate` again.
    """

    columns: Columns
    users: IdIndex
    items: IdIndex
    truth: Truth
    lists: dict[str, Lists]
    training: Training | None = None
    item_table: pd.DataFrame | None = None
    user_table: pd.DataFrame | None = None
    order: Order = "rank"
    tie_break: TieBreak = "input"
    notes: list[Note] = field(default_factory=list)
    vectors: ItemVectors | None = None
    item_table_codes: np.ndarray | None = None
    user_table_codes: np.ndarray | None = None
    _history: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)

    @classmethod
    def build(
        cls,
        recommendations,
        ground_truth,
        *,
        train=None,
        items=None,
        users=None,
        columns: Columns | None = None,
        order: Order = "rank",
        tie_break: TieBreak = "input",
        feature_columns: list[str] | None = None,
        embedding_column: str | None = None,
    ) -> Dataset:
        """Read, validate and encode the inputs.

        ``recommendations`` is one source (path or DataFrame) or a mapping name -> source; a
        path's model name defaults to its stem. ``feature_columns`` (default: every numeric
        column of the item table without missing values) and ``embedding_column`` choose the
        item features. Raises :class:`InputError` on bad input.
        """
        columns = columns or Columns()
        if not isinstance(recommendations, Mapping):
            recommendations = {model_name(recommendations, "model"): recommendations}
        if not recommendations:
            raise input_error("recommendations", "no recommendation table was given.", "pass at least one.")
        wanted = [columns.user, columns.item, columns.rank, columns.score]
        raw_lists = []
        notes: list[Note] = []
        for name, source in recommendations.items():
            frame, label = read_table(source, f"recommendations '{name}'", wanted)
            notes += read_notes(frame)
            raw_lists.append(read_lists(str(name), frame, label, columns))
        frame, label = read_table(ground_truth, "ground truth")
        notes += read_notes(frame)
        raw_truth = read_truth(frame, label, columns)
        train_frame = item_frame = user_frame = None
        id_arrays_user = [raw_truth.user] + [r.user for r in raw_lists]
        id_arrays_item = [raw_truth.item] + [r.item for r in raw_lists]
        if train is not None:
            train_frame, train_label = read_table(train, "training interactions")
            notes += read_notes(train_frame)
            validate.require_rows(train_frame, train_label)
            validate.require_columns(train_frame, [columns.user, columns.item], train_label)
            context = [columns.user, columns.item]
            id_arrays_user.append(validate.ids(train_frame, columns.user, train_label, context))
            id_arrays_item.append(validate.ids(train_frame, columns.item, train_label, context))
        if items is not None:
            item_frame, item_label = read_table(items, "item features")
            notes += read_notes(item_frame)
            validate.require_columns(item_frame, [columns.item], item_label)
            id_arrays_item.append(validate.ids(item_frame, columns.item, item_label, [columns.item]))
        if users is not None:
            user_frame, user_label = read_table(users, "user features")
            notes += read_notes(user_frame)
            validate.require_columns(user_frame, [columns.user], user_label)
            id_arrays_user.append(validate.ids(user_frame, columns.user, user_label, [columns.user]))
        kinds = [{"truth user": id_kind(raw_truth.user), "truth item": id_kind(raw_truth.item),
                  "recommended user": id_kind(raw.user), "recommended item": id_kind(raw.item)} for raw in raw_lists]
        user_ids = validate.unify_ids(id_arrays_user)
        item_ids = validate.unify_ids(id_arrays_item)
        raw_truth.user, raw_truth.item = user_ids[0], item_ids[0]
        for i, raw in enumerate(raw_lists, start=1):
            raw.user, raw.item = user_ids[i], item_ids[i]
            if raw.rank is not None and (order == "rank" or raw.score is None):
                raw.heads = whole_list_heads(raw.user, raw.rank, 1)  # whole lists: one user id per list
        listed_users = [raw.user if raw.heads is None else raw.heads for raw in raw_lists]
        user_index = IdIndex.union([user_ids[0], *listed_users, *user_ids[1 + len(raw_lists):]])
        item_index = IdIndex.union(item_ids)
        threshold = columns.threshold if raw_truth.grade is not None else 1.0
        truth = encode_truth(raw_truth, user_index, item_index, threshold)
        lists = {raw.name: encode_lists(raw, user_index, item_index, truth, order, tie_break) for raw in raw_lists}
        for encoded, kind in zip(lists.values(), kinds, strict=True):
            note = mismatch_note(encoded.name, encoded, truth, user_index, item_index, kind)
            if note is not None:
                encoded.notes.append(note)
        item_codes = item_index.codes(item_ids[-1]) if item_frame is not None else None
        user_codes = user_index.codes(user_ids[-1]) if user_frame is not None else None
        training = None
        if train_frame is not None:
            catalog = int(np.count_nonzero(np.bincount(item_codes, minlength=len(item_index)))) \
                if item_codes is not None else None
            training = encode_training(train_frame, train_label, columns, user_index, item_index, catalog)
        notes += truth.notes
        vectors = None
        if item_frame is not None:
            vectors = _vectors(item_frame, item_label, columns.item, item_index, feature_columns, embedding_column,
                               notes)
        return cls(columns, user_index, item_index, truth, lists, training, item_frame, user_frame,
                   order, tie_break, notes, vectors, item_codes, user_codes)

    @classmethod
    def from_long_table(cls, frame: pd.DataFrame, user: str, item: str, prediction: str, target: str,
                        threshold: float = 1.0, name: str = "model", **kwargs) -> Dataset:
        """Build from Evidently's single table (user, item, prediction, target)."""
        recs, truth = split_long_table(frame, user, item, prediction, target, threshold)
        columns = Columns(user=user, item=item, relevance="relevance", threshold=threshold)
        return cls.build({name: recs}, truth, columns=columns, **kwargs)

    @property
    def models(self) -> list[str]:
        return list(self.lists)

    @property
    def in_catalog(self) -> np.ndarray | None:
        """Item codes in the catalog: the item table when given, else the training items."""
        if self.item_table_codes is not None:
            mask = np.zeros(len(self.items), dtype=bool)
            mask[self.item_table_codes] = True
            return mask
        if self.training is not None:
            return self.training.users_per_item > 0
        return None

    @property
    def history(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Each user's mean training-item vector and featured history size (computed once)."""
        if self._history is None and self.training is not None and self.vectors is not None:
            from metrics_core.metrics.similarity import mean_history_vectors

            self._history = mean_history_vectors(self.training.user, self.training.item, len(self.users),
                                                 self.vectors)
        return self._history

    def candidates(self, settings: Settings) -> np.ndarray | None:
        """Candidate items per user for LAUC/MCC, or None when unknown."""
        if settings.candidates is not None:
            return np.full(len(self.users), float(settings.candidates))
        if self.training is None:
            return None
        catalog = self.training.catalog_size or len(np.unique(self.training.item))
        return (catalog - self.training.items_per_user).astype(np.float64)

    def evaluate(self, model: str | None = None, settings: Settings | None = None, curves: bool = True,
                 beyond: bool = True) -> Evaluation:
        """Every metric of one model at ``settings.k``, per user; accuracy metrics also at every
        k up to the longest list (``curves=False``: ``curves`` has the one row k = K, cheaper;
        ``beyond=False``: accuracy metrics only)."""
        settings = settings or Settings()
        if (settings.order, settings.tie_break) != (self.order, self.tie_break):
            raise input_error("settings", f"these lists were ordered by {self.order} (ties: {self.tie_break}); "
                              f"the settings ask for {settings.order} (ties: {settings.tie_break}).",
                              "build the dataset with the same order and tie_break as the settings.")
        model = model if model is not None else self.models[0]
        if model not in self.lists:
            raise input_error("settings", f"no model named {model!r}.", f"choose one of: {', '.join(self.models)}.")
        lists = self.lists[model]
        relevant = self.truth.relevant_count > 0
        listed = lists.listed
        counts = {
            "evaluated": 0,
            "without_relevant": int((listed & ~relevant).sum()),
            "without_recommendations": int((relevant & ~listed).sum()),
        }
        averaged = relevant.copy()
        if settings.users_without_relevant == "zero":
            averaged |= listed
        if settings.users_without_list == "drop":
            averaged &= listed
        rows = np.flatnonzero(averaged)
        if len(rows) == 0:
            raise input_error(
                "ground truth",
                "no user has a relevant item that can be evaluated" + (
                    f" (every grade is below the threshold {self.columns.threshold:g})"
                    if any(note.code == "below_threshold" for note in self.truth.notes) else "") + ".",
                "check that the ground truth's user ids match the recommendations' and that the "
                "relevance threshold is not above every grade.",
            )
        counts["evaluated"] = len(rows)
        candidates = self.candidates(settings)
        result = accuracy.accuracy_pass(lists, self.truth, rows, settings, candidates, curves)
        extra = beyond_accuracy.beyond_pass(lists, settings.k, len(self.items), self.in_catalog, self.training,
                                            self.vectors, self.history) if beyond else \
            beyond_accuracy.not_requested()
        return self._evaluation(model, settings, lists, rows, result, extra, counts, candidates is None)

    def evaluate_all(self, settings: Settings | None = None, curves: bool = True) -> dict[str, Evaluation]:
        return {name: self.evaluate(name, settings, curves) for name in self.models}

    def _evaluation(self, model, settings, lists, rows, result, extra, counts, no_candidates) -> Evaluation:
        n = len(rows)
        columns = registry.per_user_columns("accuracy")
        means = {column: float(values.mean()) for column, values in result.at_k.items()}
        metrics = {name: means[column] for name, column in columns.items() if column in means}
        metrics["fbeta_of_means"] = float(accuracy.fbeta_of_means(np.array(metrics["precision"]),
                                                                  np.array(metrics["recall"]), settings.beta))
        if settings.fbeta == "of_means":
            metrics["fbeta"] = metrics["fbeta_of_means"]
        metrics = {name: metrics[name] for name in registry.names("accuracy") if name in metrics}  # registry order
        metrics.update(extra.metrics)
        skipped = dict(extra.skipped)
        for metric in registry.family("accuracy"):
            if no_candidates and "candidates" in metric.needs:
                skipped[metric.name] = "needs the number of candidate items: give training data or a candidate count"
        per_user = pd.DataFrame(result.at_k, index=rows, copy=False)  # fresh arrays: no copy, no consolidation
        per_user["relevant"] = self.truth.relevant_count[rows]
        per_user["hits"] = result.hits_at_k.astype(np.int64)
        per_user["listed"] = result.items_at_k.astype(np.int64)
        per_user["evaluated"] = True
        if extra.per_user and np.array_equal(extra.rows, rows):  # the same users: no join needed
            for name, values in extra.per_user.items():
                per_user[name] = values
        elif extra.per_user:
            others = pd.DataFrame(extra.per_user, index=extra.rows)
            per_user = per_user.join(others, how="outer")
            per_user["evaluated"] = per_user["evaluated"].astype("boolean").fillna(False).astype(bool)
            codes = per_user.index.to_numpy()
            per_user["listed"] = row_sums(lists.items[codes, :settings.k] >= 0, np.int64)
        per_user.index = pd.Index(self.users.ids[per_user.index.to_numpy()], name=self.columns.user)
        curves = pd.DataFrame({name: result.sums[column] / n for name, column in columns.items()
                               if column in result.sums})
        curves.index = pd.Index(result.k.astype(np.int64), name="k")
        curves["fbeta_of_means"] = accuracy.fbeta_of_means(curves["precision"].to_numpy(),
                                                           curves["recall"].to_numpy(), settings.beta)
        if settings.fbeta == "of_means":
            curves["fbeta"] = curves["fbeta_of_means"]
        curves = curves[[name for name in registry.curves() if name in curves.columns]]
        return Evaluation(model, settings, metrics, per_user, curves, counts,
                          self._warnings(lists, rows, settings, counts), skipped, extra.left_out)

    def _warnings(self, lists: Lists, rows: np.ndarray, settings: Settings, counts: dict) -> list[Note]:
        notes = list(self.notes) + list(lists.notes)
        if counts["without_relevant"]:
            verb = "scored 0" if settings.users_without_relevant == "zero" else "excluded from the averages"
            notes.append(Note("users_without_relevant", f"{counts['without_relevant']} users have "
                              f"recommendations but no relevant item in the ground truth; {verb}.",
                              counts["without_relevant"]))
        if counts["without_recommendations"]:
            verb = "left out" if settings.users_without_list == "drop" else "scored 0 (an empty list)"
            notes.append(Note("users_without_recommendations", f"{counts['without_recommendations']} users "
                              f"have relevant items but no recommendations; {verb}.",
                              counts["without_recommendations"]))
        ties = self.ties_at_cutoff(lists, rows, settings.k)
        if ties:
            rule = "input row order" if self.tie_break == "input" else "item id (text, descending)"
            notes.append(Note("ties_at_cutoff", f"{ties} lists have equal scores on both sides of the "
                              f"cut-off K={settings.k}; the tie was broken by {rule}.", ties))
        return notes

    def item_bias(self, model: str, attribute: str, k: int = 10):
        """Item attribute in the model's top-K recommendations vs the catalog (training items,
        each once; the item table when there is no training data)."""
        from metrics_core.metrics.bias import item_bias

        if self.item_table is None:
            raise input_error("item bias", "needs an item table.", "give an item table with the attribute.")
        values = self.item_attribute(attribute)
        top = self.lists[model].items[:, :k]
        catalog = np.flatnonzero(self.training.users_per_item > 0) if self.training is not None \
            else np.unique(self.item_table_codes)
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
        """Histogram of the scores in each list's top K and in the rest (None for rank-only lists)."""
        from metrics_core.metrics.scores import score_histogram

        lists = self.lists[model]
        return None if lists.scores is None else score_histogram(lists.scores, k, bins, edges)

    def cases(self, users: list | None = None, **options):
        """Recommendation cases; see :func:`metrics_core.cases.cases`."""
        from metrics_core.cases import cases

        return cases(self, users, **options)

    @staticmethod
    def ties_at_cutoff(lists: Lists, rows: np.ndarray, k: int) -> int:
        """Users whose scores at ranks K and K+1 are equal (when lists are ordered by score)."""
        if lists.ordered_by != "score" or lists.scores is None or k >= lists.positions:
            return 0
        inside, outside = lists.scores[rows, k - 1], lists.scores[rows, k]
        return int((inside == outside).sum())


def _vectors(table, label, item_column, items, feature_columns, embedding_column, notes) -> ItemVectors | None:
    """Item vectors from the chosen columns; by default the numeric columns without gaps."""
    if feature_columns is None and embedding_column is None:
        numeric = default_feature_columns(table, item_column)
        gaps = [c for c in numeric if table[c].isna().any()]
        for column in gaps:
            notes.append(Note("feature_gaps", f"item feature '{column}' has {int(table[column].isna().sum())} "
                              "missing values and was left out of the default features; fill it and name it "
                              "in feature_columns to use it.", int(table[column].isna().sum())))
        feature_columns = [c for c in numeric if c not in gaps]
        if not feature_columns:
            return None
    return item_vectors(table, label, item_column, items, feature_columns, embedding_column)
