"""The encoded dataset: read and join once, then evaluate any model at any settings cheaply."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from metrics_core._numeric.parallel import map_threads, meanwhile
from metrics_core.cutoff_notes import counts_at_every_k, seen_note, short_note, ties_note
from metrics_core.engines.memory.analyses import Analyses
from metrics_core.errors import InputError, Note, input_error, setting
from metrics_core.inputs import validate
from metrics_core.inputs.columns import Columns
from metrics_core.inputs.containers import COMPRESSED_SUFFIXES
from metrics_core.inputs.encode import (
    encode_lists,
    encode_training,
    encode_truth,
    load_kernels_meanwhile,
    read_lists,
    read_truth,
    whole_list_heads,
)
from metrics_core.inputs.encoded import Lists, RawLists, RawTruth, Training, Truth, compiled_for, compiled_for_lists
from metrics_core.inputs.features import ItemVectors, default_feature_columns, item_vectors
from metrics_core.inputs.ids import IdIndex
from metrics_core.inputs.matching import id_kind, mismatch_note
from metrics_core.inputs.read import PARQUET_FAILURES, PARQUET_SUFFIXES, read_notes, read_table, split_long_table
from metrics_core.inputs.recipe import Recipe
from metrics_core.inputs.stream import encode_streamed, longest_list
from metrics_core.inputs.text_ids import TextIds, is_text
from metrics_core.metrics import accuracy, registry
from metrics_core.metrics import beyond as beyond_accuracy
from metrics_core.metrics.beyond_curves import BeyondCurves
from metrics_core.metrics.beyond_curves import beyond_curves as every_k
from metrics_core.result import Evaluation
from metrics_core.settings import Encoding, Settings

NEEDS = {
    "candidates": "needs the number of candidate items: give training data or a candidate count",
    "judgements": "needs judged non-relevant items: ground-truth rows with a grade below the relevance threshold "
                  "(e.g. 0 in a qrels file)",
}


def primitive_model(settings: Settings, models: list[str]) -> str:
    """The model the primitive-model metrics compare each model with: ``primitive_model``, else
    the first model (an InputError when it names none of ``models``)."""
    name = settings.primitive_model or models[0]
    if name not in models:
        raise input_error("settings", f"the primitive model {name!r} is not a model of this dataset.",
                          f"choose one of {', '.join(models)} with {setting('primitive_model')}.")
    return name


def no_evaluated_user(below_threshold: bool, threshold: float) -> InputError:
    """The refusal when no user can be evaluated (the same words on every engine)."""
    return input_error(
        "ground truth",
        "no user has a relevant item that can be evaluated" + (
            f" (every grade is below the threshold {threshold:g})" if below_threshold else "") + ".",
        "check that the ground truth's user ids match the recommendations' and that the relevance threshold is "
        "not above every grade.")


def model_name(source, fallback: str) -> str:
    """A model's default name: the file's stem (``recs`` for ``recs.csv.gz`` too), or
    ``fallback`` for a DataFrame."""
    if not isinstance(source, (str, os.PathLike)):
        return fallback
    path = Path(source)
    return Path(path.stem).stem if path.suffix.lower() in COMPRESSED_SUFFIXES else path.stem


@dataclass
class Dataset(Analyses):
    """Everything needed to evaluate, encoded once.

    ``users`` and ``items`` code every id seen in any table; ``lists[name]`` holds one
    model's users x positions arrays (same user rows for every model, so per-user results
    line up); ``truth`` the relevant pairs; ``training`` the training pairs when given;
    ``truth_before_training`` how many relevant ground-truth rows are dated before their user's
    last training interaction (both tables with a ``timestamp`` column; the audit).
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
    encoding: Encoding = field(default_factory=Encoding)
    notes: list[Note] = field(default_factory=list)
    vectors: ItemVectors | None = None
    item_table_codes: np.ndarray | None = None
    user_table_codes: np.ndarray | None = None
    truth_before_training: int = 0
    _history: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    _above: dict[tuple[str, float], Lists] = field(default_factory=dict, repr=False)

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
        encoding: Encoding | None = None,
        feature_columns: list[str] | None = None,
        embedding_column: str | None = None,
        part: bool = False,
        score_positions: int | None = None,
        progress: Callable[[str], None] | None = None,
    ) -> Dataset:
        """Read, validate and encode the inputs.

        ``recommendations`` is one source (path, DataFrame or :class:`TableFile`) or a
        mapping name -> source; a path's model name defaults to its stem. ``encoding``
        orders the lists (default: by rank, else by score). ``feature_columns`` (default:
        every numeric column of the item table without missing values) and
        ``embedding_column`` choose the item features. ``part=True``: the tables are one part of
        a larger evaluation (a Spark partition), where recommendations or ground truth without
        rows is not an error (the part's users have only lists, or only relevant items).
        ``score_positions``: keep each list's scores for its first that many positions only
        (data evaluated at one K: the metrics at K read the scores of the first K + 1
        positions, and placing the rest of the scores costs time and memory); a score threshold,
        score histograms and cases then raise. ``progress`` is
        told each step in words as it starts ("reading recommendations 'b' (2 of 4)…"). Raises
        :class:`InputError` on bad input.

        The recipe: read and check every table (ids read once per table; the ground truth on
        a thread of its own from the start, beside the models' ids, whose checks leave a core
        idle at times; its errors are raised after theirs), read the ids of every table alike
        (text everywhere when any table has text ids), code them once, then encode the
        ground truth (on a thread, while the first model's rows are placed), each model's lists,
        the training data and the item features against those codes.
        """
        columns, encoding = columns or Columns(), encoding or Encoding()
        say = progress or (lambda words: None)
        if not isinstance(recommendations, Mapping):
            recommendations = {model_name(recommendations, "model"): recommendations}
        if not recommendations:
            raise input_error("recommendations", "no recommendation table was given.", "pass at least one.")
        notes: list[Note] = []
        wanted = [columns.user, columns.item, columns.rank, columns.score]
        id_columns = [columns.user, columns.item]
        several = len(recommendations) > 1
        def model_read(name: str, source) -> tuple[str, object, bool, pd.DataFrame, str]:
            say(f"Reading and checking recommendations '{name}' ({list(recommendations).index(name) + 1} of "
                f"{len(recommendations)}) and the ground truth…")
            two_steps = _in_two_steps(source, columns, encoding, several)  # (then only its ids; notes come later)
            return name, source, two_steps, *_read(source, f"recommendations '{name}'", [] if two_steps else notes,
                                                   id_columns, id_columns if two_steps else wanted)

        def model_ids(name: str, source, two_steps: bool, frame: pd.DataFrame, label: str) -> RawLists | _LaterLists:
            return _LaterLists.of(name, source, frame, label, columns) if two_steps \
                else read_lists(name, frame, label, columns, part)

        truth_notes: list[Note] = []
        truth_columns = [*id_columns, *([columns.relevance] if columns.relevance else []),
                         columns.timestamp]  # (a file's others: unread; its timestamps, where it has some: the audit)
        truth_read = meanwhile(lambda: read_truth(*_read(ground_truth, "ground truth", truth_notes, id_columns,
                                                         truth_columns), columns, part))  # (raised after the models)
        stored_rows = [_parquet_rows(source) for source in recommendations.values()]
        if None not in stored_rows:
            _load_loops_for(stored_rows)  # (Parquet files say their rows: the loops load while they are read)
        raw_lists = [model_ids(*model_read(str(name), source)) for name, source in recommendations.items()]
        raw_truth = truth_read.result()
        notes += truth_notes
        if train is not None or items is not None or users is not None:
            say("Reading " + " and ".join(role for role, source in (("training interactions", train), (
                "item features", items), ("user features", users)) if source is not None) + "…")
        sides = {role: _side_table(source, role, columns, notes)
                 for role, source in (("training interactions", train), ("item features", items),
                                      ("user features", users)) if source is not None}
        kinds = {raw.name: {"truth user": id_kind(raw_truth.user), "truth item": id_kind(raw_truth.item),
                            "recommended user": id_kind(raw.user), "recommended item": id_kind(raw.item)}
                 for raw in raw_lists}
        user_ids = _unified({"truth": raw_truth.user, **{("model", raw.name): raw.user for raw in raw_lists},
                             **{role: side.ids["user"] for role, side in sides.items() if "user" in side.ids}})
        item_ids = _unified({"truth": raw_truth.item, **{("model", raw.name): raw.item for raw in raw_lists},
                             **{role: side.ids["item"] for role, side in sides.items() if "item" in side.ids}})
        for side in sides.values():
            side.ids = {kind: (user_ids if kind == "user" else item_ids)[side.role] for kind in side.ids}
        raw_truth.user, raw_truth.item = user_ids["truth"], item_ids["truth"]
        for raw in raw_lists:
            raw.user, raw.item = user_ids["model", raw.name], item_ids["model", raw.name]
            if isinstance(raw, RawLists):
                _find_whole_lists(raw, encoding)
        user_index = IdIndex.union([raw.user if raw.heads is None else raw.heads for raw in raw_lists]
                                   + [ids for key, ids in user_ids.items() if not isinstance(key, tuple)])
        item_index = IdIndex.union(list(item_ids.values()))
        _load_loops_for([len(raw.user_rows if isinstance(raw, _LaterLists) else raw.user) for raw in raw_lists])
        threshold = columns.threshold if raw_truth.grade is not None else 1.0
        truth_encoded = meanwhile(lambda: encode_truth(raw_truth, user_index, item_index, threshold))
        lists = {}  # (each model's rows are placed while the ground truth is encoded, and joined to it then)
        while raw_lists:  # each model's rows are let go once its lists are made: a lower peak with many models
            raw = raw_lists.pop(0)
            say(f"Ordering the lists of '{raw.name}' ({len(lists) + 1} of {len(recommendations)}) and joining them "
                "to the ground truth…")
            del user_ids["model", raw.name], item_ids["model", raw.name]
            lists[raw.name] = raw.encode(user_index, item_index, truth_encoded.result, columns, notes, encoding,
                                         score_positions) \
                if isinstance(raw, _LaterLists) else encode_lists(raw, user_index, item_index, truth_encoded.result,
                                                                  encoding.order, encoding.tie_break, score_positions)
        del raw
        truth = truth_encoded.result()
        for encoded in lists.values():
            note = mismatch_note(encoded.name, encoded, truth, user_index, item_index, kinds[encoded.name])
            if note is not None:
                encoded.notes.append(note)
        item_side, user_side, train_side = (sides.get(role) for role in ("item features", "user features",
                                                                          "training interactions"))
        item_codes = item_index.codes(item_side.ids["item"]) if item_side else None
        user_codes = user_index.codes(user_side.ids["user"]) if user_side else None
        training, early = None, 0
        if train_side is not None:
            say("Counting the training interactions (popularity, history)…")
            catalog = int(np.count_nonzero(np.bincount(item_codes, minlength=len(item_index)))) \
                if item_codes is not None else None
            training = encode_training(user_index.codes(train_side.ids["user"]),
                                       item_index.codes(train_side.ids["item"]),
                                       _timestamps(train_side.frame, columns.timestamp), user_index, item_index,
                                       catalog)
            early = _truth_before_training(raw_truth, columns, threshold, user_index, training)
        notes += truth.notes
        vectors = None
        if item_side is not None:
            say("Making the item features into vectors (diversity, similarity)…")
            vectors = _vectors(item_side, columns.item, item_codes, len(item_index), feature_columns,
                               embedding_column, notes)
        return cls(columns, user_index, item_index, truth, lists, training,
                   item_side.frame if item_side else None, user_side.frame if user_side else None,
                   encoding, notes, vectors, item_codes, user_codes, truth_before_training=early)

    @classmethod
    def from_recipe(cls, recipe: Recipe, encoding: Encoding | None = None,
                    progress: Callable[[str], None] | None = None) -> Dataset:
        """:meth:`build` of a :class:`~metrics_core.inputs.recipe.Recipe`: the app's workspace
        (uploaded or stored tables) or a saved workspace, read with its mapping and features."""
        return cls.build(dict(recipe.models), recipe.ground_truth, train=recipe.train, items=recipe.items,
                         users=recipe.users, columns=recipe.columns, encoding=encoding,
                         feature_columns=list(recipe.feature_columns) if recipe.feature_columns else None,
                         embedding_column=recipe.embedding_column, progress=progress)

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
        catalog = self.training.catalog_size or int(np.count_nonzero(np.bincount(self.training.item)))
        return (catalog - self.training.items_per_user).astype(np.float64)

    def evaluate(self, model: str | None = None, settings: Settings | None = None, curves: bool = True,
                 beyond: bool = True, part: bool = False, beyond_curves: bool = False) -> Evaluation:
        """Every metric of one model at ``settings.k``, per user; accuracy metrics also at every
        k up to the longest list (``curves=False``: ``curves`` has the one row k = K, cheaper;
        ``beyond=False``: accuracy metrics only). ``beyond_curves=True`` (with ``curves`` and
        ``beyond``): the beyond-accuracy metrics at every k too, where their form allows
        (:mod:`metrics_core.metrics.beyond_curves`: ``Evaluation.beyond_curves``), so that another
        K reads them. ``part=True``: the data is one part of a larger
        evaluation (a Spark partition), where no user to average accuracy over is not an error
        (the part's accuracy aggregates and curves are then NaN)."""
        settings = settings or Settings()
        model = model if model is not None else self.models[0]
        lists, rows, counts = self._evaluated(model, settings, part)
        candidates = self.candidates(settings)
        inputs = self.beyond_inputs(model, settings) if beyond else None

        def beyond_metrics() -> tuple[beyond_accuracy.BeyondPass, BeyondCurves | None]:
            if not inputs:
                return beyond_accuracy.not_requested(), None
            at_k = beyond_accuracy.beyond_pass(lists, settings, inputs)
            return at_k, every_k(lists, settings, inputs) if beyond_curves and curves else None

        result, (extra, beyond_every_k) = map_threads(lambda run: run(), [  # (two threads: each leaves a core
            lambda: accuracy.accuracy_pass(lists, self.truth, rows, settings, candidates, curves), beyond_metrics])
        evaluation = self._evaluation(model, settings, lists, rows, result, extra, counts, candidates is None)
        if beyond_every_k is not None and "ee_loss" in evaluation.metrics:  # (no accuracy curve: beside them)
            for name, values in accuracy.expected_exposure_curves(lists, self.truth, rows, settings).items():
                beyond_every_k.values[name] = values
        if beyond_every_k is not None and "11pt_avg" in evaluation.metrics:  # (the same, with its intervals)
            levels, spread = accuracy.interpolated_precision_curves(lists, self.truth, rows, settings)
            for name, values in levels.items():
                beyond_every_k.values[name] = values
            beyond_every_k.users["11pt_avg"], beyond_every_k.sd["11pt_avg"] = len(rows), spread
        if beyond_every_k is not None:  # (and the notes' counts at every k: another K says them without the tables)
            beyond_every_k.notes = counts_at_every_k(
                lists, rows, None if self.training is None else lists.seen_per_place(self.training))
        evaluation.beyond_curves = beyond_every_k
        return evaluation

    def metrics_at(self, model: str, settings: Settings, names: Iterable[str], notes: bool = True,
                   joined: bool = True, kept: Iterable[str] | None = None) -> Evaluation:
        """``names`` (metric names) of ``model`` at ``settings``, computed alone, as :meth:`evaluate`
        gives them: their aggregates and per-user columns (with ``relevant``, ``hits``, ``listed`` and
        ``evaluated``), their skipped reasons, the users and the notes; curves at K only. The accuracy
        pass computes the per-user columns behind the accuracy names among them
        (:func:`~metrics_core.metrics.registry.columns_behind`), the beyond-accuracy pass the groups
        of the others, or neither (what a K read from the curves lacks, and the app's pages that
        show a few metrics at a new K). Its per-user users are those the passes run give values to
        (the evaluated users, with the beyond-accuracy pass also the users with a list). Without
        ``notes``, no notes (a K read from the curves has them already). Without ``joined``, when
        ``names`` are beyond-accuracy metrics only, no accuracy pass, no notes and no per-user table
        joined with the evaluated users': the per-user columns of ``names`` over the users they have a
        value for (the aggregates, users and intervals a K read from the curves lacks; at 1M users the
        join took more time than the metrics). ``kept``: the per-user columns to keep (``evaluated``
        always), when not all: the others are not joined (at 1M users each column joined costs 8 MB
        written, and ``listed`` a pass over the lists)."""
        names = set(names)
        if not joined and not names & set(registry.names("accuracy")):
            return self._beyond_alone(model, settings, names)
        lists, rows, counts = self._evaluated(model, settings)
        accuracy_names = names & set(registry.names("accuracy"))
        candidates = self.candidates(settings)
        result = accuracy.accuracy_pass(lists, self.truth, rows, settings, candidates, curves=False,
                                        only=registry.columns_behind(accuracy_names))
        beyond_names = names - accuracy_names
        extra = beyond_accuracy.beyond_pass(lists, settings, self.beyond_inputs(model, settings, beyond_names),
                                            only=beyond_names) if beyond_names else beyond_accuracy.not_requested()
        evaluation = self._evaluation(model, settings, lists, rows, result, extra, counts, candidates is None, notes,
                                      None if kept is None else {*kept, "evaluated"})
        evaluation.metrics = {name: value for name, value in evaluation.metrics.items() if name in names}
        evaluation.skipped = {name: reason for name, reason in evaluation.skipped.items() if name in names}
        return evaluation

    def _beyond_alone(self, model: str, settings: Settings, names: set[str]) -> Evaluation:
        """The beyond-accuracy ``names`` of ``model`` at ``settings``, their per-user columns over
        their own users (:meth:`metrics_at` without ``joined``); no notes, no curves."""
        lists, _, counts = self._evaluated(model, settings)
        extra = beyond_accuracy.beyond_pass(lists, settings, self.beyond_inputs(model, settings, names), only=names)
        per_user = pd.DataFrame(extra.per_user, index=pd.Index(self.users.ids[extra.rows], name=self.columns.user))
        return Evaluation(model, settings, dict(extra.metrics), per_user, pd.DataFrame(index=pd.Index([], name="k")),
                          counts, [], dict(extra.skipped), extra.left_out, self.encoding)

    def per_user_at(self, model: str, settings: Settings, columns: list[str]) -> pd.DataFrame:
        """The per-user ``columns`` of ``model`` at ``settings`` (with ``hits`` and ``evaluated``),
        as :meth:`evaluate` gives them in ``per_user``, computing those alone (:meth:`metrics_at`;
        the app's pages that show one metric per user at a new K)."""
        named = {column: name for name, column in registry.per_user_columns().items()}
        wanted = list(dict.fromkeys([*columns, "hits", "evaluated"]))
        per_user = self.metrics_at(model, settings, [named[c] for c in columns if c in named], notes=False,
                                   kept=wanted).per_user
        return per_user[[c for c in wanted if c in per_user.columns]]

    def _evaluated(self, model: str, settings: Settings, part: bool = False) -> tuple[Lists, np.ndarray, dict]:
        """The model's lists as ``settings`` retrieve them, the users the accuracy metrics average
        over and their counts (:meth:`_averaged`), with the refusals every evaluation makes: a model
        the dataset lacks, scores kept for too few places, no user to average over (unless ``part``)."""
        if model not in self.lists:
            raise input_error("settings", f"no model named {model!r}.", f"choose one of: {', '.join(self.models)}.")
        lists = self.retrieved(model, settings.score_threshold, settings.max_list_length, settings.judged_only)
        lists.require_scores(settings.score_positions or lists.positions, f"k = {settings.k}")
        rows, counts = self._averaged(lists, settings)
        if len(rows) == 0 and not part:
            raise no_evaluated_user(any(note.code == "below_threshold" for note in self.truth.notes),
                                    self.columns.threshold)
        return lists, rows, counts

    def _averaged(self, lists: Lists, settings: Settings) -> tuple[np.ndarray, dict[str, int]]:
        """The users the accuracy metrics average over (their codes, ascending), whatever K, and the
        counts of users evaluated, with a list but no relevant item, and the reverse."""
        relevant = self.truth.relevant_count > 0
        listed = lists.listed
        averaged = relevant.copy()
        if settings.users_without_relevant == "zero":
            averaged |= listed
        elif settings.users_without_relevant == "zero_if_judged":  # (trec_eval: a topic judged all non-relevant)
            averaged |= listed & self.truth.has_truth_rows
        if settings.users_without_list == "drop":
            averaged &= listed
        rows = np.flatnonzero(averaged)
        return rows, {"evaluated": len(rows), "without_relevant": int((listed & ~relevant).sum()),
                      "without_recommendations": int((relevant & ~listed).sum())}

    def warnings_at(self, model: str, settings: Settings) -> list[Note]:
        """The notes (warnings) an evaluation of ``model`` at ``settings`` gives, without evaluating:
        a K read from the curves (:meth:`Evaluation.at`) takes its notes from here."""
        lists = self.retrieved(model, settings.score_threshold, settings.max_list_length, settings.judged_only)
        rows, counts = self._averaged(lists, settings)
        return self._warnings(lists, rows, settings, counts)

    def retrieved(self, model: str, score_threshold: float | None = None,
                  max_list_length: int | None = None, judged_only: bool = False) -> Lists:
        """The model's lists; with ``max_list_length``, cut to their first that many items (trec_eval's
        ``-M``); with ``score_threshold``, without the items scored at or below it; with
        ``judged_only``, then condensed to the items the ground truth judges (trec_eval's ``-J``).
        Each is kept once, so moving K stays cheap."""
        lists = self.lists[model]
        if max_list_length is not None and max_list_length < lists.positions:
            cut = (model, "first", int(max_list_length))
            if cut not in self._above:
                self._above[cut] = lists.first(int(max_list_length))
            lists = self._above[cut]
        if score_threshold is not None:
            if lists.scores is None:
                raise input_error("settings", f"score_threshold = {score_threshold:g} needs scores, and the lists "
                                  f"of {model!r} have ranks only.",
                                  "map a score column, or leave score_threshold unset.")
            key = (model, float(score_threshold), max_list_length)
            lists.require_scores(lists.positions, "a score threshold")
            if key not in self._above:
                self._above[key] = lists.above(score_threshold)
            lists = self._above[key]
        if judged_only:
            key = (model, "judged", score_threshold, max_list_length)
            if key not in self._above:
                self._above[key] = lists.judged_only(self.truth)
            lists = self._above[key]
        return lists

    def beyond_inputs(self, model: str, settings: Settings,
                      only: set[str] | None = None) -> beyond_accuracy.BeyondInputs:
        """What the beyond-accuracy metrics of ``model`` read, as ``settings`` asks: the
        co-occurrence similarity only for ``similarity="cooccurrence"`` (for training rows that are
        one part of the data, the whole data's, when it was counted), and the primitive
        model's lists (``primitive_model``, default the first model; against itself a model
        scores 0 on both primitive metrics; with one model there is nothing to compare with).
        With ``only`` (metric names), the inputs made once per dataset that those metrics do not
        read are left out: the users' history vectors and the co-occurrences (the similarity
        metrics), the categories and history mixes (calibration, exposure), the primitive lists."""
        def needed(names: tuple[str, ...]) -> bool:
            return only is None or bool(only.intersection(names))

        primitive_name = primitive_model(settings, self.models)
        other = self.retrieved(primitive_name, settings.score_threshold, settings.max_list_length,
                               settings.judged_only) \
            if len(self.models) > 1 and needed(beyond_accuracy.PRIMITIVE) else None
        cooccurrence = self.training.cooccurrence if (settings.similarity == "cooccurrence" and needed(
            beyond_accuracy.SIMILARITY) and self.training is not None) else None
        self._check_category_column(settings.category_column)  # (refused as an evaluation refuses it)
        categories, no_categories = self.categories(settings.category_column) \
            if needed(("calibration", "exposure_distance")) else (None, "")
        return beyond_accuracy.BeyondInputs(len(self.items), self.in_catalog, self.training, self.vectors,
                                            self.history if needed(beyond_accuracy.SIMILARITY) else None,
                                            cooccurrence, other, categories, no_categories)

    def _check_category_column(self, column: str | None) -> None:
        """An InputError when ``column`` is named and the item table has no such column."""
        if column is not None and self.item_table is not None and column not in self.item_table.columns:
            raise input_error("item table", f"has no column '{column}' (columns: "
                              f"{validate.column_list(self.item_table.columns)}).",
                              f"name its category column with {setting('category_column')}, or leave it unset.")

    def categories(self, column: str | None = None):
        """``(Categories, "")`` for calibration and exposure, from the item table's ``column``
        (None: :func:`~metrics_core.metrics.calibration.category_column`), made once per column,
        with each user's history mix when there is training data; or ``(None, why)`` without an
        item table or such a column. An InputError when ``column`` is not a column of the item table."""
        from metrics_core.metrics import calibration

        if self.item_table is None:
            return None, "needs an item table with a category column"
        self._check_category_column(column)
        kept = self.__dict__.setdefault("_category_inputs", {})  # (not a field: never stored with the dataset)
        if column is None and None not in kept:
            kept[None] = calibration.category_column(self.item_table, self.columns.item)
        chosen = column or kept[None]
        if chosen is None:
            return None, ("needs a category per item: a text column of the item table whose values repeat "
                          "(a genre), or one named as the category column")
        if chosen not in kept:
            shares, names = calibration.category_shares(self.item_table[chosen], self.item_table_codes,
                                                        len(self.items))
            history = None if self.training is None else \
                calibration.mix_of_rows(self.training.matrix, shares)
            kept[chosen] = calibration.Categories(chosen, shares, names, history)
        return kept[chosen], ""

    def evaluate_all(self, settings: Settings | None = None, curves: bool = True,
                     progress: Callable[[str], None] | None = None, beyond_curves: bool = False
                     ) -> dict[str, Evaluation]:
        """:meth:`evaluate` of every model, on a few threads (numpy releases the GIL in its array
        work, and one model's steps leave a core idle at times). The users' history vectors, which every
        model reads, are computed first, once; the ground truth's values made on first use are
        the same whichever thread makes them. ``progress`` is told, in words, which models are
        being evaluated and how many are done."""
        settings = settings or Settings()
        say = progress or (lambda words: None)
        if self.training is not None and self.vectors is not None:
            say("Reading each user's history of item features…")
            self.history  # noqa: B018 (computed once here, not by two threads)
        done: list[str] = []
        lock = threading.Lock()

        def one(name: str) -> Evaluation:
            result = self.evaluate(name, settings, curves, beyond_curves=beyond_curves)
            with lock:
                done.append(name)
                if len(done) < len(self.models):
                    say(f"Evaluating {len(self.models)} models at K = {settings.k}: {len(done)} of "
                        f"{len(self.models)} done (last: '{name}')…")
            return result

        say(f"Evaluating {len(self.models)} model{'s' * (len(self.models) > 1)} at K = {settings.k}: every "
            f"metric, per user{', at every k' if curves else ''}…")
        return dict(zip(self.models, map_threads(one, self.models), strict=True))

    def _evaluation(self, model, settings, lists, rows, result, extra, counts, no_candidates,
                    notes: bool = True, kept: set[str] | None = None) -> Evaluation:
        n = len(rows)
        columns = registry.per_user_columns("accuracy")
        means = {column: float(values.mean()) if n else float("nan") for column, values in result.at_k.items()}
        metrics = {name: means[column] for name, column in columns.items() if column in means}
        metrics.update({name: float(value) for name, value in registry.combined(metrics, settings).items()})
        if settings.fbeta == "of_means" and "fbeta_of_means" in metrics:
            metrics["fbeta"] = metrics["fbeta_of_means"]
        for metric in registry.family("accuracy"):
            if metric.of is not None and columns[metric.of] in result.at_k:
                metrics[metric.name] = registry.AGGREGATES[metric.aggregate](result.at_k[columns[metric.of]])
        metrics = {name: metrics[name] for name in registry.names("accuracy") if name in metrics}  # registry order
        metrics.update(extra.metrics)
        skipped = dict(extra.skipped)
        missing = {"candidates": no_candidates, "judgements": not self.truth.judges}
        for metric in registry.family("accuracy"):
            for need in (need for need in metric.needs if missing.get(need)):
                skipped[metric.name] = NEEDS[need]
        per_user = pd.DataFrame(result.at_k, index=rows, copy=False)  # fresh arrays: no copy, no consolidation
        per_user["relevant"] = self.truth.relevant_count[rows]
        per_user["hits"] = result.hits_at_k.astype(np.int64)
        per_user["listed"] = result.items_at_k.astype(np.int64)
        per_user["evaluated"] = True
        if kept is not None:
            per_user = per_user[[column for column in per_user.columns if column in kept]]
        if extra.per_user and np.array_equal(extra.rows, rows):  # the same users: no join needed
            for name, values in extra.per_user.items():
                per_user[name] = values
        elif extra.per_user:
            per_user = _outer_join(per_user, extra.per_user, extra.rows)
            if "listed" in per_user.columns:
                per_user["listed"] = lists.listed_at(settings.k, per_user.index.to_numpy())
        per_user.index = pd.Index(self.users.ids[per_user.index.to_numpy()], name=self.columns.user)
        curves = pd.DataFrame({name: result.sums[column] / n if n else np.full(len(result.k), np.nan)
                               for name, column in columns.items() if column in result.sums})
        curves.index = pd.Index(result.k.astype(np.int64), name="k")
        for name, values in registry.combined(curves, settings).items():
            curves[name] = values
        if settings.fbeta == "of_means" and "fbeta_of_means" in curves:
            curves["fbeta"] = curves["fbeta_of_means"]
        curves = curves[[name for name in registry.curves() if name in curves.columns]]
        return Evaluation(model, settings, metrics, per_user, curves, counts,
                          self._warnings(lists, rows, settings, counts) if notes else [], skipped, extra.left_out,
                          self.encoding)

    def _warnings(self, lists: Lists, rows: np.ndarray, settings: Settings, counts: dict) -> list[Note]:
        notes = list(self.notes) + list(lists.notes)
        if counts["without_relevant"]:
            verb = {"zero": "scored 0", "zero_if_judged": "scored 0 when the ground truth judges some of their "
                    "items (all below the threshold), excluded from the averages otherwise"}.get(
                settings.users_without_relevant, "excluded from the averages")
            notes.append(Note("users_without_relevant", f"{counts['without_relevant']} users have "
                              f"recommendations but no relevant item in the ground truth; {verb}.",
                              counts["without_relevant"]))
        if counts["without_recommendations"]:
            verb = "left out" if settings.users_without_list == "drop" else "scored 0 (an empty list)"
            notes.append(Note("users_without_recommendations", f"{counts['without_recommendations']} users "
                              f"have relevant items but no recommendations; {verb}.",
                              counts["without_recommendations"]))
        ties = ties_note(self.ties_at_cutoff(lists, rows, settings.k), settings.k, self.encoding.tie_break)
        return notes + ([ties] if ties else []) + self._audit(lists, settings)

    def _audit(self, lists: Lists, settings: Settings) -> list[Note]:
        """What a careful reader checks before trusting the numbers
        (:data:`~metrics_core.cutoff_notes.AUDIT_NOTES`): ground truth the training data already holds
        (leakage), recommended items the user already has in training, lists much shorter than K,
        candidates sampled from the catalog."""
        notes = []
        if self.training is not None:
            leaked = self._truth_in_training()
            if leaked:
                notes.append(Note("truth_in_training", f"{leaked} relevant (user, item) pairs of the ground truth "
                                  "are in the training data too: the split leaks (a model that repeats training "
                                  "items looks better than it is).", leaked))
            early = self.truth_before_training
            if early:
                notes.append(Note("truth_before_training", f"{early} relevant ground-truth rows are dated before their "
                                  "user's last training interaction: for those users the split is not by time, and "
                                  "the model learned from what came after them (leakage).", early))
            seen = seen_note(int(lists.seen_per_place(self.training)[:settings.k].sum()), settings.k)
            notes += [seen] if seen else []
        short = short_note(int((lists.lengths[lists.listed] < settings.k / 2).sum()), settings.k)
        notes += [short] if short else []
        catalog = None if self.in_catalog is None else int(self.in_catalog.sum())
        if settings.candidates is not None and catalog is not None and settings.candidates < catalog:
            notes.append(Note("sampled_candidates", f"each user is ranked among {settings.candidates} candidates "
                              f"of a catalog of {catalog} items: metrics over sampled candidates run higher than "
                              "over the whole catalog and do not compare with a full-ranking evaluation.", 1))
        return notes

    def _truth_in_training(self) -> int:
        """Relevant ground-truth pairs also in training (counted once per dataset)."""
        kept = self.__dict__.setdefault("_leaked", {})
        if "count" not in kept:
            from metrics_core.metrics.similarity import matrix_entries

            kept["count"] = int((matrix_entries(self.training.matrix, self.truth.user, self.truth.item) != 0).sum())
        return kept["count"]

    @staticmethod
    def ties_at_cutoff(lists: Lists, rows: np.ndarray, k: int) -> int:
        """Users whose scores at ranks K and K+1 are equal (when lists are ordered by score)."""
        if lists.ordered_by != "score" or lists.scores is None or k >= lists.positions:
            return 0
        inside, outside = lists.scores[rows, k - 1], lists.scores[rows, k]
        return int((inside == outside).sum())


def _outer_join(left: pd.DataFrame, right: dict[str, np.ndarray], right_rows: np.ndarray) -> pd.DataFrame:
    """``left`` (indexed by ascending user codes) joined with the columns ``right`` of users
    ``right_rows``, as ``left.join(DataFrame(right, index=right_rows), how="outer")`` gives it (the
    union of the users in ascending order; a user missing on one side has NaN there, and
    ``evaluated`` False), by placing each column in a union-length array, faster than pandas'
    aligning."""
    left_rows = left.index.to_numpy()
    union, at_left, at_right = _sorted_union(left_rows, right_rows)

    def placed(values: np.ndarray, at: np.ndarray) -> np.ndarray:
        """``values`` at the union's positions ``at``: as they are when they cover it, else as
        float64 with NaN elsewhere (pandas' upcast)."""
        if len(at) == len(union):
            return values
        out = np.full(len(union), np.nan)
        out[at] = values
        return out

    columns = {name: placed(left[name].to_numpy(), at_left) for name in left.columns if name != "evaluated"}
    evaluated = np.zeros(len(union), dtype=bool)
    evaluated[at_left] = left["evaluated"].to_numpy()
    columns["evaluated"] = evaluated
    columns.update({name: placed(np.asarray(values), at_right) for name, values in right.items()})
    return pd.DataFrame(columns, index=pd.Index(union, dtype=left_rows.dtype), copy=False)


def _sorted_union(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The sorted union of two arrays of user codes (row numbers, from 0) and the position in it of
    each of ``a`` and of ``b``, by marking each and counting the marks before it (linear in the
    users; ``np.union1d`` sorts or hashes the concatenation, 0.8 s at 1M users, and a binary search
    per user took 37 ms)."""
    marked = np.zeros(int(max(a.max(initial=-1), b.max(initial=-1))) + 1, dtype=bool)
    marked[a] = True
    marked[b] = True
    place = np.cumsum(marked, dtype=np.int64) - 1
    return np.flatnonzero(marked).astype(np.result_type(a.dtype, b.dtype), copy=False), place[a], place[b]


@dataclass
class _SideTable:
    """A training, item or user table, read and checked once: ``ids`` holds its user and/or
    item id column as read (then as unified with the other tables)."""

    role: str
    frame: pd.DataFrame
    label: str
    ids: dict[str, np.ndarray]


SIDE_ID_COLUMNS = {"training interactions": ("user", "item"), "item features": ("item",),
                   "user features": ("user",)}


def _in_two_steps(source, columns: Columns, encoding: Encoding, several: bool) -> bool:
    """Whether a model's ids are read first and its rank and score later (:class:`_LaterLists`):
    with several models, a Parquet file with both id columns, of any type (their rows are then
    not all held at once; a file without them is read whole, whose message lists its columns);
    with one, a Parquet file whose rank and score may be streamed into the cells
    (:mod:`metrics_core.inputs.stream`: ordered by rank, rows enough for the compiled loops,
    :func:`~metrics_core.inputs.encoded.compiled_for`). A file
    that cannot be opened is read the usual way, which names the problem."""
    if several:
        return _ids_in_parquet(source, columns)
    rows = _parquet_rows(source) if encoding.order == "rank" else None
    try:
        return rows is not None and compiled_for(rows) and longest_list(source, columns) is not None
    except PARQUET_FAILURES:
        return False


def _load_loops_for(rows: list[int]) -> None:
    """Start loading the compiled loops (:func:`~metrics_core.inputs.encode.load_kernels_meanwhile`,
    once per process) when models of ``rows`` rows need them."""
    if compiled_for_lists(rows):
        load_kernels_meanwhile()


def _parquet_rows(source) -> int | None:
    """The rows a Parquet file's metadata counts; None for any other source, or a file that
    cannot be opened (its read names the problem)."""
    if not _parquet_path(source):
        return None
    import pyarrow.parquet as pq

    try:
        with pq.ParquetFile(source) as file:
            return file.metadata.num_rows
    except PARQUET_FAILURES:
        return None


def _parquet_path(source) -> bool:
    """Whether ``source`` is the path of a Parquet file (by its suffix)."""
    return isinstance(source, str | os.PathLike) and Path(source).suffix.lower() in PARQUET_SUFFIXES


def _ids_in_parquet(source, columns: Columns) -> bool:
    """Whether ``source`` is a Parquet file with a user and an item column."""
    if not _parquet_path(source):
        return False
    try:
        import pyarrow.parquet as pq

        names = pq.read_schema(source).names
    except PARQUET_FAILURES:  # (read again by read_table, which names the problem)
        return False
    return columns.user in names and columns.item in names


@dataclass
class _LaterLists:
    """A model whose rank and score columns are read once its ids are coded: first only the id
    columns are read (kept, for its rows, and each id once, for the id index), then its rank
    and score, streamed into the cells (:meth:`encode`) or read whole. Several models' rows
    are then never all held at once: each model's rank and score are encoded and let go before
    the next model's.

    ``user`` and ``item`` are the distinct ids (then as unified with the other tables');
    ``ids`` is the table of the id columns as read, ``user_rows`` and ``item_rows`` its
    validated ids."""

    name: str
    source: object
    ids: pd.DataFrame
    user: np.ndarray | TextIds
    item: np.ndarray | TextIds
    user_rows: np.ndarray | TextIds
    item_rows: np.ndarray | TextIds
    heads = None

    @classmethod
    def of(cls, name: str, source, frame: pd.DataFrame, label: str, columns: Columns) -> _LaterLists:
        """The model whose id columns, read from ``source``, are ``frame``."""
        id_columns = [columns.user, columns.item]
        validate.require_rows(frame, label)
        validate.require_columns(frame, id_columns, label)
        user, item = (validate.ids(frame, column, label, id_columns) for column in id_columns)
        return cls(name, source, frame, _distinct(user), _distinct(item), user, item)

    def encode(self, users: IdIndex, items: IdIndex, truth: Callable[[], Truth], columns: Columns,
               notes: list[Note], encoding: Encoding, score_positions: int | None) -> Lists:
        """The model's lists: ordered by rank, with cells enough for the compiled loops, its rank
        and score are streamed into the cells (:func:`~metrics_core.inputs.stream.encode_streamed`),
        in any row order; otherwise, or when that path declines the file, they are read whole
        (:meth:`read`) and encoded as any table's. ``truth`` gives the ground truth (waiting for
        it), asked for once the cells are placed."""
        positions = longest_list(self.source, columns) if encoding.order == "rank" else None
        if positions is not None and compiled_for(len(users) * positions):
            user_rows, item_rows = self._rows_ids()
            lists = encode_streamed(self.name, self.source, columns, _row_codes(users, self.user, user_rows),
                                    _row_codes(items, self.item, item_rows), len(users), len(items), positions,
                                    truth, score_positions)
            if lists is not None:
                return lists
        raw = self.read(columns, notes, encoding)
        return encode_lists(raw, users, items, truth, encoding.order, encoding.tie_break, score_positions)

    def _rows_ids(self) -> tuple[np.ndarray | TextIds, np.ndarray | TextIds]:
        """The rows' user and item ids, read as the other tables' (text when any table's are)."""
        return (validate.unify_ids([self.user, self.user_rows])[1],
                validate.unify_ids([self.item, self.item_rows])[1])

    def read(self, columns: Columns, notes: list[Note], encoding: Encoding) -> RawLists:
        """The model's rows (the id columns read first, with the rank and score read now), its
        ids read as the other tables' (text when any table's are)."""
        role = f"recommendations '{self.name}'"
        rest, label = _read(self.source, role, notes, [columns.user, columns.item], [columns.rank, columns.score])
        rest = rest.drop(columns=[name for name in self.ids.columns if name in rest.columns])
        frame = pd.concat([self.ids, rest], axis=1)
        frame.attrs = rest.attrs
        raw = read_lists(self.name, frame, label, columns, ids=self._rows_ids())
        _find_whole_lists(raw, encoding)
        return raw


def _row_codes(index: IdIndex, distinct: np.ndarray | TextIds, rows: np.ndarray | TextIds) -> np.ndarray:
    """The codes of a table's rows' ids ``rows``, whose distinct ids, sorted, are ``distinct``
    (integer ids: their first and last are the rows' bounds, no pass over the rows for them)."""
    if is_text(rows) or not len(distinct):
        return index.codes(rows)
    return index.codes(rows, (int(distinct[0]), int(distinct[-1])))


def _find_whole_lists(raw: RawLists, encoding: Encoding) -> None:
    """Note the user of each list (``raw.heads``) when the rows come as whole lists in rank
    order: the id index and the coding then need one user id per list, not one per row."""
    if raw.rank is not None and (encoding.order == "rank" or raw.score is None):
        raw.heads = whole_list_heads(raw.user, raw.rank, 1)


def _distinct(ids: np.ndarray | TextIds) -> np.ndarray | TextIds:
    """Each id once (sorted), read the same way as ``ids``."""
    if is_text(ids):
        return TextIds(np.arange(len(ids.values), dtype=ids.codes.dtype), ids.values)
    return IdIndex.union([ids]).ids


def _read(source, role: str, notes: list[Note], ids: list[str], columns: list[str] | None = None
          ) -> tuple[pd.DataFrame, str]:
    """``(frame, label)`` of a source whose id columns are ``ids`` (a CSV is then read by Arrow:
    see :func:`read_table`); what is worth saying about how it was read goes to ``notes``."""
    frame, label = read_table(source, role, columns, ids)
    notes += read_notes(frame)
    return frame, label


def _side_table(source, role: str, columns: Columns, notes: list[Note]) -> _SideTable:
    frame, label = _read(source, role, notes, [columns.user, columns.item])
    validate.require_rows(frame, label)
    names = {"user": columns.user, "item": columns.item}
    wanted = [names[kind] for kind in SIDE_ID_COLUMNS[role]]
    validate.require_columns(frame, wanted, label)
    return _SideTable(role, frame, label, {kind: validate.ids(frame, names[kind], label, wanted)
                                           for kind in SIDE_ID_COLUMNS[role]})


def _unified(ids: dict) -> dict:
    """The id arrays of every table (keyed "truth", ("model", name) or a side table's role),
    read alike (see :func:`validate.unify_ids`)."""
    return dict(zip(ids, validate.unify_ids(list(ids.values())), strict=True))


def _truth_before_training(raw: RawTruth, columns: Columns, threshold: float, users: IdIndex,
                           training: Training) -> int:
    """Relevant ground-truth rows whose timestamp is earlier than their user's last training
    interaction (0 when either table has no timestamp column, or a user has no training row).
    Timestamps are numbers or datetimes; other values count as missing."""
    stamps = _timestamps(raw.frame, columns.timestamp)
    if stamps is None or training.timestamp is None:
        return 0
    last = pd.Series(training.timestamp).groupby(training.user, sort=False).max()
    last_of = np.full(len(users), np.nan)
    last_of[last.index.to_numpy()] = last.to_numpy()
    relevant = np.ones(len(stamps), dtype=bool) if raw.grade is None else raw.grade >= threshold
    return int((stamps[relevant] < last_of[users.codes(raw.user)[relevant]]).sum())


def _timestamps(frame: pd.DataFrame, column: str) -> np.ndarray | None:
    if column not in frame.columns:
        return None
    return pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=np.float64)


def _vectors(side: _SideTable, item_column: str, codes: np.ndarray, n_items: int, feature_columns,
             embedding_column, notes) -> ItemVectors | None:
    """Item vectors from the chosen columns; by default the numeric columns without gaps."""
    table = side.frame
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
    return item_vectors(table, side.label, item_column, codes, n_items, feature_columns, embedding_column)
