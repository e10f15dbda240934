"""rankscope on Apache Spark: the same metrics where the data lives, computed by the same numpy
kernels on each partition.

The recommendations, the ground truth and the training interactions (when given) are put in one
DataFrame (each row tagged with its table) and repartitioned by a hash of the user, so that each
partition holds whole users; the rows reach each partition's Python as they are, in any order.
DataFrames that are plain local Parquet files skip that: the partitions read the files
themselves, by ranges of users when the files are in user order, else through a shuffle of Arrow
streams (:mod:`metrics_core.engines.spark.files`); the partitions get the same rows either way.
Each partition is evaluated in memory exactly as :func:`metrics_core.evaluate` would
(``Dataset.build`` and ``Dataset.evaluate``, with the item table when one is given) and gives
back

- per metric, the count, Σv, Σv² (and Σ forward(v) for GM-MAP) of its per-user values over
  the users it is averaged over (the evaluated users for accuracy metrics),
- one row per item with how many top-K lists of the partition contain it,
- per bootstrap resample, the Poisson-weighted sums of the per-user values (the intervals),
- with curves, each accuracy metric's sum at every k, and
- unless ``per_user=False``, one row per user with every per-user metric (the per-user
  DataFrame, for slicing).

Spark adds those sums up in one pass: a per-user metric's aggregate is its mean, and the catalog
metrics (coverage, Gini, entropy, personalization, distinct items) come from the item counts
summed over partitions, with the same functions as in memory. Results equal the in-memory engine's on the
same data (tests/test_spark.py checks 1e-9).

With training interactions, the whole table's item popularity (and, for the co-occurrence
similarity, its items' shared users) is counted in Spark and sent to every partition
(:mod:`metrics_core.engines.spark.training`): novelty, ARP, popularity serendipity, the LAUC/MCC
candidates, diversity and serendipity equal the in-memory engine's. A graded ground truth's
judged non-relevant rows reach the partitions with it (bpref, infAP), and a primitive model's
lists travel with their users as a fourth table. What needs an input that was not given is
listed in ``skipped`` with its reason. Intervals come from a Poisson bootstrap, whose weighted
sums each partition adds up.
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from metrics_core.engines.memory.dataset import NEEDS, Dataset, no_evaluated_user
from metrics_core.engines.spark import files
from metrics_core.engines.spark.carried import carried, carried_parts
from metrics_core.engines.spark.training import SHARED_COLUMNS, TrainingFacts, training_facts, with_whole_training
from metrics_core.errors import InputError, Note, input_error
from metrics_core.inputs.columns import Columns
from metrics_core.inputs.encode import USER_ITEM_HINT
from metrics_core.inputs.text_ids import as_text
from metrics_core.inputs.validate import SPACES, require_columns
from metrics_core.intervals import normal_interval, sd_of_sums
from metrics_core.metrics import catalog, registry
from metrics_core.settings import Settings
from metrics_core.stats import poisson_bootstrap

RECOMMENDED, RELEVANT, TRAINED, PRIMITIVE = "_recommended", "_relevant", "_trained", "_primitive"  # tables
MODEL = "model"  # the evaluated model's name in a partition's Dataset (PRIMITIVE: the primitive model's)
TABLE = "_table"  # which table a row of _rows_of_users comes from (its position in the tables)
KIND, USER, ITEM, COUNT = "_kind", "_user", "_item", "_count"
BOOTSTRAP_KINDS = ("boot_sum", "boot_n")
NOT_ON_SPARK = {
    "train": "needs training interactions (pass train_df)",
    "candidates": "needs the candidate items: training interactions (train_df) or settings.candidates",
    "features": "needs item features (items_df with numeric columns)",
    "scores": "needs scores (the lists have ranks only)",
    "judgements": NEEDS["judgements"],
    "primitive": "needs the primitive model's lists (pass primitive_df; on the command line, a second "
                 "--recommendations)",
    "categories": "needs training interactions (train_df) and an item table (items_df) with a category column",
}
IN_MEMORY_ONLY = {"exposure_distance": "computed by the in-memory engine only so far (the partitions would need to "
                                       "hand over each item's exposure, not only its count)"}
SIMILARITY_METRICS = registry.needing("features")  # (co-occurrence: read from training, not features)
BATCH_ROWS = 100_000  # rows per Arrow batch handed to a partition's Python (about 5 MB)
MOMENTS = ("n", "sum", "sum_of_squares")  # a partition's rows of kind "moment" (and "forward:<metric>")


@dataclass
class SparkEvaluation:
    """The Spark engine's :class:`~metrics_core.result.Result`: aggregates (``metrics``), user
    counts, what was skipped and why, and the per-user values as a Spark DataFrame (column
    ``_user``: the user id as text; None when not asked for), kept in Spark's cache so that
    slicing or writing them does not evaluate every partition again: :meth:`unpersist` frees
    them. ``intervals``: each aggregate's Poisson bootstrap (or normal) interval."""

    settings: Settings
    metrics: dict[str, float]
    per_user: object  # pyspark.sql.DataFrame, or None (per_user=False)
    curves: pd.DataFrame | None  # index k, one column per accuracy metric (curves=True)
    users: dict[str, int]
    warnings: list[Note] = field(default_factory=list)  # the in-memory engine's, counted over every partition
    skipped: dict[str, str] = field(default_factory=dict)
    intervals: dict[str, tuple[float, float]] = field(default_factory=dict)  # Poisson bootstrap (or normal)
    cached: object = None  # the partitions' output behind per_user, held in Spark's cache

    def __post_init__(self) -> None:
        self.metrics = registry.MetricValues(self.metrics)  # (a renamed metric's old name still reads)

    @property
    def k(self) -> int:
        return self.settings.k

    def unpersist(self) -> None:
        """Free the cached per-user values (``per_user`` then evaluates the partitions again)."""
        if self.cached is not None:
            self.cached.unpersist()

    def to_dict(self) -> dict:
        return {"metrics": self.metrics, "intervals": {m: list(bounds) for m, bounds in self.intervals.items()},
                "users": self.users, "warnings": [note.message for note in self.warnings], "skipped": self.skipped,
                "engine": "spark"}


def _available(settings: Settings, features: bool, scores: bool, train: bool, graded: bool,
               primitive: bool, categories: bool = False) -> set[str]:
    """The needs (:attr:`registry.Metric.needs`) the Spark engine meets with these inputs
    (``graded``: the ground truth has grades, so some pair may be judged non-relevant; the
    partitions' counts of judged pairs tell afterwards whether one is)."""
    return {need for need, met in (("features", features), ("scores", scores), ("train", train),
                                   ("candidates", train or settings.candidates is not None), ("judgements", graded),
                                   ("primitive", primitive), ("categories", categories and train))
            if met}


def _has_categories(items: pd.DataFrame, columns: Columns, settings: Settings) -> bool:
    """Whether the item table has the category column calibration reads (named, or found as in memory)."""
    from metrics_core.metrics.calibration import category_column

    if settings.category_column is not None:
        return settings.category_column in items.columns
    return category_column(items, columns.item) is not None


def _not_on_spark(metric: registry.Metric, available: set[str], settings: Settings) -> str | None:
    """Why the Spark engine does not compute ``metric`` with these inputs and settings (None: it does)."""
    if settings.similarity == "cooccurrence" and metric.name in SIMILARITY_METRICS:  # training, not features
        return None if "train" in available else NOT_ON_SPARK["train"] + " (similarity = co-occurrence)"
    missing = next((NOT_ON_SPARK[need] for need in metric.needs if need not in available), None)
    return missing or IN_MEMORY_ONLY.get(metric.name)


def _per_user_columns(settings: Settings, available: set[str]) -> list[str]:
    """The per-user columns a partition gives back (the same on every partition)."""
    return list(dict.fromkeys(
        column for name, column in registry.per_user_columns().items()
        if _not_on_spark(registry.METRICS[name], available, settings) is None
        and not (column == "score_entropy" and settings.score_entropy != "per_user")))


def evaluate_spark(recs_df, truth_df, k: int = 10, settings: Settings | None = None, train_df=None, items_df=None,
                   columns: Columns | None = None, partitions: int | None = None,
                   feature_columns: list[str] | None = None, curves: bool = False, bootstrap: int = 200,
                   seed: int = 0, level: float = 0.95, per_user: bool = True, primitive_df=None,
                   model: str = "recommendations") -> SparkEvaluation:
    """Every metric the Spark engine computes, for one model's ``recs_df`` against ``truth_df``
    (Spark DataFrames with the columns named by ``columns``). ``items_df`` (small: it is sent
    to every partition) gives the catalog and the item features; ``train_df`` (its user and
    item columns, any size) gives the training-based metrics (its item popularity is counted
    in Spark and sent to every partition; each user's rows travel with the user's lists) and,
    without ``items_df``, the catalog (its items). ``primitive_df`` (another model's lists,
    the same columns as ``recs_df``) is the primitive model that serendipity against a
    primitive model and unexpectedness compare with (``settings.primitive_model`` names it in
    memory); its rows travel with their users, as the recommendations do.
    ``curves=True`` adds every accuracy metric at every k up to the longest list (as the
    in-memory engine's ``curves``), from the same pass (a partition whose lists are all
    shorter than the longest gets empty positions up to it, as the arrays have in memory).
    ``intervals`` are Poisson-bootstrap percentile intervals (``bootstrap`` resamples, ``seed``,
    ``level``: see :mod:`metrics_core.stats.poisson_bootstrap`), the same whatever the
    partitioning; ``bootstrap=0`` gives normal intervals, mean ± z·sd/√n (z = 1.96 at 95%), instead.
    ``partitions``: how many (by default one per 7M rows when the partitions read plain local
    Parquet files themselves, :mod:`~metrics_core.engines.spark.files`; else twice the
    recommendations' own and at least two per core).

    The aggregates come from each partition's sums (count, Σv, Σv² and Σ forward(v) of each
    per-user metric over the users it is averaged over), merged in one Spark pass with the item
    counts, curves and bootstrap sums. ``per_user=False`` leaves the per-user rows out of that
    pass (no per-user DataFrame; faster when only the aggregates are wanted).

    ``warnings`` are the in-memory engine's notes (duplicate items, rank gaps, users without a
    relevant item, ...), each partition's counts summed; the id-mismatch warning (ids of the two
    tables that almost never match) is measured on a sample of the lists against every relevant
    item, as in memory. ``model`` names the model in them."""
    from pyspark.sql import functions as F  # noqa: N812 (the usual name)

    settings = replace(settings or Settings(), k=k)
    columns = columns or Columns()
    if isinstance(bootstrap, bool) or not isinstance(bootstrap, int | np.integer) or bootstrap < 0:
        raise input_error("settings", f"bootstrap={bootstrap!r} is not a number of resamples.",
                          "pass a whole number: 200 (the default), or 0 for normal intervals.")
    if not isinstance(level, float | int) or not 0 < level < 1:
        raise input_error("settings", f"level={level!r} is not a confidence level.",
                          "pass a level between 0 and 1, such as 0.95.")
    if columns.user == TABLE or columns.user.startswith("_slot") or columns.user in SHARED_COLUMNS:
        raise input_error("recommendations (Spark DataFrame)", f"the user column's name '{columns.user}' is one the "
                          "Spark engine gives its own columns.", "rename the user column in every table "
                          "(withColumnRenamed) and pass columns=Columns(user=...).", columns.user)
    recs_columns = [c for c in (columns.user, columns.item, columns.score, columns.rank) if c in recs_df.columns]
    truth_columns = [c for c in (columns.user, columns.item, columns.relevance) if c and c in truth_df.columns]
    if train_df is not None and columns.timestamp in truth_df.columns and columns.timestamp in train_df.columns:
        truth_columns.append(columns.timestamp)  # (the audit: ground truth dated before its user's training)
    frames = (("recommendations", recs_df), ("ground truth", truth_df), ("primitive model", primitive_df))
    for label, frame in ((label, frame) for label, frame in frames if frame is not None):
        require_columns(pd.DataFrame(columns=frame.columns), [columns.user, columns.item], f"{label} (Spark DataFrame)",
                        USER_ITEM_HINT)  # (the in-memory engine's check and words)
    for label, frame in (("recommendations", recs_df), ("ground truth", truth_df)):
        if frame.isEmpty():  # (as in memory: a table without rows is refused, not scored 0)
            raise input_error(f"{label} (Spark DataFrame)", "the table has no rows.",
                              "provide a table with at least one row.")
    train_columns = [columns.user, columns.item, *([columns.timestamp] if columns.timestamp in truth_columns else [])]
    if train_df is not None:
        for need in train_columns:
            if need not in train_df.columns:
                raise input_error("training interactions (Spark DataFrame)", f"there is no column '{need}'.",
                                  "name the columns of the training interactions, or pass columns=Columns(...).",
                                  need)
        train_df = train_df.select(*train_columns)
    facts = training_facts(train_df, columns, settings.similarity == "cooccurrence") if train_df is not None else None
    items = items_df.toPandas() if items_df is not None else None
    if items is None and facts is not None:  # the catalog: the items seen in training
        items = pd.DataFrame({columns.item: facts.ids})
    with_scores = columns.score in recs_columns
    available = _available(settings, items is not None and bool(feature_columns or _numeric(items, columns)),
                           with_scores, facts is not None, columns.relevance in truth_columns, primitive_df is not None,
                           items_df is not None and _has_categories(items, columns, settings))
    keep_users, per_user = per_user, _per_user_columns(settings, available)
    schema = (f"{KIND} string, {USER} string, {ITEM} string, {COUNT} long, evaluated boolean, "
              + ", ".join(f"`{c}` double" for c in per_user))
    ranked = curves and columns.rank in recs_columns
    longest = _longest_rank(recs_df, columns.rank) if ranked else None
    if longest is not None and not np.isfinite(longest):  # NaN or infinite: the partitions name those rows
        longest = None
    curve_to = (max(settings.k, int(longest or 0)) if ranked else
                _longest_list(recs_df, columns.user, settings.k)) if curves else None
    tables = {RECOMMENDED: recs_df.select(*recs_columns), RELEVANT: truth_df.select(*truth_columns)}
    if train_df is not None:
        tables[TRAINED] = train_df
    if primitive_df is not None:
        tables[PRIMITIVE] = primitive_df.select(*[c for c in recs_columns if c in primitive_df.columns])

    layout = _layout(tables, columns.user)
    kernel = _partition_kernel(_with_rbp_scale(settings, truth_df, columns), columns, items, feature_columns,
                               per_user, curve_to, bootstrap, seed,
                               layout, facts, keep_users, "judgements" in available)
    by_files = files.rows_by_files(tables, columns.user, layout, partitions, TABLE) if files.READ_BY_PARTITIONS \
        else None
    if by_files is not None:
        read, rows_of = by_files
        out = read.mapInArrow(lambda batches: kernel(rows_of(batches)), schema=schema)
    else:
        out = _rows_of_users(tables, columns.user, layout, partitions or _partitions(recs_df)).mapInArrow(
            kernel, schema=schema)
    if keep_users:
        out = out.cache()
    with _partition_errors_as_input_errors(tables, columns.user, columns.rank), \
            _arrow_batches_of(recs_df.sparkSession, BATCH_ROWS):
        sums = (out.filter(F.col(KIND) != "user").groupBy(KIND, ITEM)
                .agg(F.sum(COUNT).alias(COUNT), *[F.sum(F.col(f"`{c}`")).alias(c) for c in per_user]).toPandas())
    if "judgements" in available and not sums.loc[sums[KIND] == "judged", COUNT].sum():
        available.discard("judgements")  # every grade reached the threshold: no pair is judged non-relevant
        per_user = [c for c in per_user if c not in _judged_columns()]
    moments = sums[sums[KIND] == "moment"].set_index(ITEM)
    evaluated = int(moments.loc["n", COUNT]) if "n" in moments.index else 0
    notes = _summed_notes(sums[sums[KIND] == "note"], model)
    if not evaluated:
        raise no_evaluated_user(any(note.code == "below_threshold" for note in notes), columns.threshold)
    mismatch = _id_mismatch(recs_df, truth_df, columns, model)
    n, total, squares = (moments.loc[row, per_user].to_numpy(dtype=np.float64) for row in MOMENTS)
    names = {column: metric for metric, column in registry.per_user_columns().items()}
    metrics = {names.get(c, c): float(total[i] / n[i]) for i, c in enumerate(per_user) if n[i] > 0}
    if bootstrap:
        intervals = _bootstrap_intervals(sums, per_user, names, level)
    else:
        sd = sd_of_sums(n, total, squares)
        intervals = {names.get(c, c): normal_interval(total[i] / n[i], sd[i], int(n[i]), level)
                     for i, c in enumerate(per_user) if n[i] > 1}
    for metric in _transformed(per_user):
        column = registry.per_user_columns("accuracy")[metric.of]
        mean = moments.loc[f"forward:{metric.name}", column] / moments.loc["n", column]
        metrics[metric.name] = float(registry.AGGREGATES[metric.aggregate].back(mean))
    metrics.update({name: float(value) for name, value in registry.combined(metrics, settings).items()})
    counts = sums[sums[KIND] == "item"]
    listed = int(sums.loc[sums[KIND] == "lists", COUNT].sum())
    catalog_metrics, skipped, _ = _catalog(counts, items, columns, settings, listed)
    metrics.update(catalog_metrics)
    if facts is not None:
        if "arp" in metrics:
            metrics["arp_normalised"] = metrics["arp"] / max(1, facts.n_users if settings.arp_normalisation == "users"
                                                             else facts.n_interactions)
        metrics["novelty_interactions"] = facts.interaction_novelty(counts[ITEM].to_numpy(),
                                                                    counts[COUNT].to_numpy(dtype=np.int64))
    for metric in registry.METRICS.values():
        if metric.name not in metrics and metric.name not in skipped:
            skipped[metric.name] = _not_on_spark(metric, available, settings) or \
                f"no user has what {metric.name} needs"
    ordered = {m: metrics[m] for m in registry.names() if m in metrics}
    merged = _merged_curves(sums[sums[KIND] == "curve"], per_user, settings) if curves else None
    users = out.filter(F.col(KIND) == "user").drop(KIND, ITEM, COUNT) if keep_users else None
    if users is not None and "judgements" not in available:
        users = users.drop(*_judged_columns())
    warnings = _in_memory_order([*notes, *([mismatch] if mismatch else [])])
    return SparkEvaluation(settings, ordered, users, merged, {"evaluated": evaluated, "with_recommendations": listed},
                           warnings, skipped, intervals, out if keep_users else None)


def _judged_columns() -> list[str]:
    """The per-user columns of the metrics that need judged non-relevant items (bpref, infAP)."""
    return [column for name, column in registry.per_user_columns().items()
            if "judgements" in registry.METRICS[name].needs]


def _first_row(frame) -> dict:
    return frame.first().asDict()


@contextmanager
def _partition_errors_as_input_errors(tables: dict, user: str, rank: str):
    """Bad input found while a partition is evaluated (a missing id, a duplicate, ...) is raised
    there as a :class:`RuntimeError` carrying the :class:`InputError`'s parts; Spark reports it
    as its own error with the worker's traceback. Here it becomes the InputError again, its count
    made the whole table's (:func:`_counted_everywhere`; the rows shown stay the partition's)."""
    try:
        yield
    except Exception as error:
        carried = carried_parts(str(error))
        if carried is None:
            raise
        rows = carried["rows"] and pd.read_json(io.StringIO(carried["rows"]), orient="split")
        source = carried["source"]
        table = PRIMITIVE if f"'{PRIMITIVE}'" in source else RECOMMENDED if source.startswith("recommendations") \
            else RELEVANT if source.startswith("ground truth") else TRAINED
        problem = carried["problem"]
        total = _counted_everywhere(tables.get(table), problem, carried["column"], user, rank)
        if total is not None:
            problem = re.sub(r"^\d+", str(total), problem)
        source = source.replace(f" '{MODEL}' (DataFrame)", " (DataFrame)").replace(
            f"recommendations '{PRIMITIVE}'", "primitive model").replace("(DataFrame)", "(Spark DataFrame)")
        if total is None and re.match(r"\d", problem):
            problem += " (counted in one Spark partition, its rows numbered within it)"
        elif rows is not None and len(rows):
            problem += " (the rows shown are one Spark partition's, numbered within it)"
        raise input_error(source, problem, carried["fix"], carried["column"], rows) from None


def _counted_everywhere(frame, problem: str, column: str | None, user: str, rank: str) -> int | None:
    """How many rows of the whole Spark table have the problem a partition found (the in-memory
    engine's count), or None for a problem counted no other way than the partition's."""
    if frame is None:
        return None
    from pyspark.sql import functions as F  # noqa: N812

    def number(name: str):
        return F.col(f"`{name}`").try_cast("double")

    def not_finite(name: str):
        value = number(name)
        return value.isNull() | F.isnan(value) | (F.abs(value) == float("inf"))

    if problem.endswith("rows have no id.") and column:
        kind = dict(frame.dtypes).get(column, "")
        missing = F.col(f"`{column}`").isNull()
        return frame.where(missing | F.isnan(number(column)) if kind in ("float", "double") else missing).count()
    if "that is missing, not a number, or infinite." in problem and column:
        return frame.where(not_finite(column)).count()
    if problem.endswith("rows have a rank that is not a positive integer.") and column:
        value = number(column)
        return frame.where(~not_finite(column) & ((value < 1) | (value != F.floor(value)))).count()
    if problem.endswith("rows share a rank with another item of the same user's list."):
        groups = frame.groupBy(user, rank).count().where(F.col("count") > 1)
        return int(groups.agg(F.sum(F.col("count") - 1)).first()[0] or 0)
    return None


def _bootstrap_intervals(sums: pd.DataFrame, per_user: list[str], names: dict[str, str],
                         level: float) -> dict[str, tuple[float, float]]:
    """The Poisson-bootstrap interval of each per-user mean, from each resample's weighted sums
    and weights summed over partitions (``sums``: the summed rows of every kind)."""
    resamples = sums[sums[KIND].isin(BOOTSTRAP_KINDS)].assign(resample=lambda f: f[ITEM].astype(int))
    weighted, weights = (resamples[resamples[KIND] == kind].sort_values("resample")[per_user]
                         .to_numpy(dtype=np.float64) for kind in BOOTSTRAP_KINDS)
    bounds = poisson_bootstrap.intervals(weighted, weights, level)
    return {names.get(c, c): (float(low), float(high)) for c, (low, high) in zip(per_user, bounds, strict=True)
            if not np.isnan(low)}


def _longest_rank(frame, rank: str) -> float | None:
    """The largest value of column ``rank`` read as a number, as the in-memory engine reads ranks
    ("12" is 12, not below "9"; text that is not a number is left out here, and the partitions'
    validation names its rows); None without one."""
    from pyspark.sql import functions as F  # noqa: N812

    return _first_row(frame.agg(F.max(F.col(f"`{rank}`").try_cast("double")).alias("longest")))["longest"]


def _layout(tables: dict, user: str) -> dict[str, tuple[int, dict[str, str]]]:
    """Where each table's rows go in :func:`_rows_of_users`: per table (``tables``: name ->
    DataFrame, each with the column ``user``), its position (the value of ``TABLE`` on its rows)
    and, per column other than ``user``, its slot. The j-th column of a type in a table takes the
    j-th slot of that type, so tables share slots (the ground truth's item column is the
    recommendations' when their types agree) and rows carry few nulls."""
    slots: dict[tuple[str, int], str] = {}
    layout = {}
    for position, (name, frame) in enumerate(tables.items()):
        seen: dict[str, int] = {}
        placed = {}
        for column in (c for c in frame.columns if c != user):
            kind = frame.schema[column].dataType.simpleString()
            key = (kind, seen.get(kind, 0))
            seen[kind] = key[1] + 1
            placed[column] = slots.setdefault(key, f"_slot{len(slots)}")
        layout[name] = (position, placed)
    return layout


def _rows_of_users(tables: dict, user: str, layout: dict[str, tuple[int, dict[str, str]]], partitions: int):
    """Every table's rows in one DataFrame (column ``TABLE``, ``user`` and the slots of
    :func:`_layout`, the slots a table does not use null), hash-partitioned by ``user`` into
    ``partitions``, so that each partition holds whole users, in any row order.

    The rows reach Python as they are: grouping them per user in Spark first (``collect_list``
    needs a sort and boxes every value) cost more than the partitions' own grouping in numpy
    (``Dataset.build`` takes rows in any order)."""
    from functools import reduce

    from pyspark.sql import functions as F  # noqa: N812 (the usual name)

    types = {slot: frame.schema[column].dataType for name, frame in tables.items()
             for column, slot in layout[name][1].items()}

    def placed(name: str, frame):
        position, slots = layout[name]
        return frame.select(F.lit(position).cast("byte").alias(TABLE), user,
                            *[F.col(f"`{c}`").alias(slot) for c, slot in slots.items()],
                            *[F.lit(None).cast(kind).alias(slot) for slot, kind in types.items()
                              if slot not in slots.values()])

    every = reduce(lambda one, other: one.unionByName(other), [placed(name, frame) for name, frame in tables.items()])
    kinds = {frame.schema[user].dataType.typeName() for frame in tables.values()}
    return every.repartition(partitions, _user_key(user, kinds))


def _user_key(user: str, kinds: set[str]):
    """What rows are partitioned by: the user id as the in-memory engine matches it, so that
    rows memory counts as one user's reach one partition (ids that memory keeps apart may share
    a partition: harmless). Integers as they are; text without any whitespace (memory strips it
    from the ends, tabs included: " u1\t" is "u1") and without what follows a point (memory
    writes an integral decimal as a whole number: "4.00" is "4"); a mixture, or decimals, as
    text without whitespace and with an integral decimal written as a whole number (" 4.00" is
    4), which costs Spark about three times the plain key on text ids, so it is used only then."""
    from pyspark.sql import functions as F  # noqa: N812

    if kinds <= {"long", "integer", "short", "byte"}:
        return F.col(f"`{user}`")
    if kinds == {"string"}:
        return F.substring_index(F.translate(F.col(f"`{user}`"), SPACES, ""), ".", 1)
    text = F.translate(F.col(f"`{user}`").cast("string"), SPACES, "")
    number = text.try_cast("double")
    integral = number.isNotNull() & (number == F.floor(number)) & (F.abs(number) < 2.0**53)
    return F.when(integral, number.cast("long").cast("string")).otherwise(text)


_ARROW_PASSES: dict[int, tuple[int, dict]] = {}  # per session: the passes running, the settings before the first
_ARROW_LOCK = threading.Lock()


@contextmanager
def _arrow_batches_of(spark, rows: int):
    """Spark's Arrow batches to Python of ``rows`` rows, with no limit in bytes, while the
    block runs (the session's settings are restored after). With a limit in bytes, Spark
    measures the batch after every row it adds, which took half the time of handing plain rows
    to Python or more.
    Evaluations running at once in one session share the change: the first sets it, the last
    restores what was there before the first."""
    conf = spark.conf
    wanted = {"spark.sql.execution.arrow.maxRecordsPerBatch": str(rows),
              "spark.sql.execution.arrow.maxBytesPerBatch": str(2**31 - 1)}  # Spark's "no limit"
    with _ARROW_LOCK:
        running, before = _ARROW_PASSES.get(id(spark), (0, {}))
        if not running:
            before = {key: conf.get(key, None) for key in wanted}
            for key, value in wanted.items():
                conf.set(key, value)
        _ARROW_PASSES[id(spark)] = (running + 1, before)
    try:
        yield
    finally:
        with _ARROW_LOCK:
            running, before = _ARROW_PASSES.pop(id(spark))
            if running > 1:
                _ARROW_PASSES[id(spark)] = (running - 1, before)
            else:
                for key, value in before.items():
                    if value is None:
                        conf.unset(key)
                    else:
                        conf.set(key, value)


def _unnested(batches, user: str, keep: tuple[str, ...],
              layout: dict[str, tuple[int, dict[str, str]]]) -> dict[str, pd.DataFrame] | None:
    """A partition's rows (:func:`_rows_of_users`) back as each table's rows, with their own
    column names (None for an empty partition). Columns null on every row are left out, as if
    not given, except those in ``keep`` (so that their validation names them) and those of a
    table without rows here (its users have none of its rows: a table, not a column, missing)."""
    import pyarrow as pa

    batches = list(batches)
    if not batches:  # a partition no user was hashed to
        return None
    table = pa.Table.from_batches(batches)
    if table.num_rows == 0:
        return None
    positions = table.column(TABLE).to_numpy()
    frames = {}
    for name, (position, slots) in layout.items():
        mine = table.select([user, *slots.values()]).filter(pa.array(positions == position))
        mine = mine.rename_columns([user, *slots])
        kept = [c for c in mine.column_names
                if mine.column(c).null_count < mine.num_rows or c in keep or not mine.num_rows]
        frames[name] = mine.select(kept).to_pandas()
    return frames


def _with_rbp_scale(settings: Settings, truth_df, columns: Columns) -> Settings:
    """The settings a partition evaluates with: graded RBP (``rbp_gain="scaled"``) divides by the
    whole ground truth's highest relevant grade, found here once, not by a partition's own."""
    if settings.rbp_gain != "scaled" or settings.rbp_max_grade is not None or columns.relevance not in truth_df.columns:
        return settings
    from pyspark.sql import functions as F  # noqa: N812

    grade = F.col(f"`{columns.relevance}`")
    top = truth_df.filter(grade >= columns.threshold).agg(F.max(grade)).first()[0]
    return settings if top is None else replace(settings, rbp_max_grade=float(top))


def _partitions(recs_df) -> int:
    """Twice the recommendations' own partitions (for Parquet, about one per 128 MB read) and
    at least two per core: partitions small enough for a worker's memory at any size (10M
    users x 100 in 10 GB of Parquet: 160 partitions of 6M rows), enough to keep every core busy."""
    return max(2 * recs_df.rdd.getNumPartitions(), 2 * recs_df.sparkSession.sparkContext.defaultParallelism, 2)


def _longest_list(recs_df, user: str, k: int) -> int:
    """The k every partition's curves reach when lists are ordered by score: max(K, the most
    rows of one user). (With ranks, the largest rank: :func:`_longest_rank`.)"""
    from pyspark.sql import functions as F  # noqa: N812

    return max(k, int(recs_df.groupBy(user).count().agg(F.max("count")).first()[0] or 0))


def _merged_curves(sums: pd.DataFrame, per_user: list[str], settings: Settings) -> pd.DataFrame:
    """Σ over partitions of each metric's sum at k (``sums``: the summed rows of kind "curve"),
    divided by all evaluated users."""
    metric_of = {c: m for m, c in registry.per_user_columns("accuracy").items() if registry.METRICS[m].curve}
    columns = [c for c in per_user if c in metric_of]
    sums = sums.copy()
    sums.index = sums[ITEM].astype(int).rename("k")
    merged = sums[columns].div(sums[COUNT], axis=0).rename(columns=metric_of).sort_index()
    for name, values in registry.combined(merged, settings).items():
        merged[name] = values
    return merged


def save_spark_run(store, name: str, results: dict[str, SparkEvaluation], sources: dict[str, str], note: str = "",
                   sample: int = 100_000):
    """Record a Spark evaluation in the run store: every aggregate with its interval, and the
    per-user values of up to ``sample`` users per model (the whole table could be billions of
    rows). The run belongs to no stored workspace (the data stays in Spark); it is listed under
    ``name``, and its fingerprint is a hash of the sources' paths, not of their contents."""
    import hashlib
    import json

    from metrics_core.store.runs import RunModel, record_run

    models = []
    for model, result in results.items():
        rows = result.per_user.limit(sample).toPandas().set_index(USER)
        models.append(RunModel(model, result.metrics, result.intervals, result.users, rows))
    settings = next(iter(results.values())).settings
    fingerprint = hashlib.sha256(json.dumps(sorted(sources.items())).encode()).hexdigest()
    return record_run(store, None, name, fingerprint, settings, models, note, engine="spark", per_user_sample=sample)


def _transformed(per_user: list[str]) -> list[registry.Metric]:
    """The metrics aggregated as back(mean(forward(v))) over the evaluated users (GM-MAP)."""
    columns = registry.per_user_columns("accuracy")
    return [m for m in registry.family("accuracy") if m.of is not None and columns.get(m.of) in per_user]


def _numeric(items: pd.DataFrame, columns: Columns) -> bool:
    return any(pd.api.types.is_numeric_dtype(items[c]) for c in items.columns if c != columns.item)


def _catalog(counts: pd.DataFrame, items, columns: Columns, settings: Settings,
             listed: int) -> tuple[dict[str, float], dict[str, str], dict[str, int]]:
    """The catalog metrics of :func:`catalog.summary` from the item counts summed over
    partitions, the catalog being the item table's ids (as text, as the counts' ids are)."""
    recommended = counts[ITEM].astype(str).to_numpy()
    values = counts[COUNT].to_numpy(dtype=np.int64)
    in_catalog = None
    if items is not None:
        catalog_ids = pd.unique(items[columns.item].astype(str).to_numpy())
        unrecommended = catalog_ids[~np.isin(catalog_ids, recommended)]
        in_catalog = np.concatenate([np.isin(recommended, catalog_ids), np.ones(len(unrecommended), dtype=bool)])
        values = np.concatenate([values, np.zeros(len(unrecommended), dtype=np.int64)])
    return catalog.summary(values, listed, in_catalog, settings.k, settings.gini_over, settings.entropy_base)


def _partition_kernel(settings: Settings, columns: Columns, items, feature_columns, per_user: list[str],
                      curve_to: int | None, bootstrap: int, seed: int, layout: dict[str, tuple[int, dict[str, str]]],
                      facts: TrainingFacts | None, keep_users: bool = True, judging: bool = False):
    """The function each partition runs (pickled to the workers: plain data only) on the rows
    :func:`_rows_of_users` puts in it (``layout``: see :func:`_layout`), with the
    whole training data's ``facts`` when there is training data. It gives the sums of
    :func:`_moments` and, with ``keep_users``, each user's row. With
    ``curve_to``, also each accuracy metric's sum over the partition's evaluated users at every
    k up to it, from the same pass (a partition whose lists are all shorter gets empty positions
    up to ``curve_to``, as the longest list gives them in memory, so that every partition
    reports every k). With ``bootstrap`` resamples, also each
    resample's Poisson-weighted sums of the per-user values and of the weights. With
    ``judging`` (the ground truth has grades), bpref and infAP are computed in every partition,
    one whose users have no judged pair included, and each partition counts its judged pairs
    (a row of kind "judged"): with none in any partition, the metrics are dropped afterwards."""
    accuracy = set(registry.per_user_columns("accuracy").values())
    if PRIMITIVE in layout:  # the primitive model's lists are a second model of each partition's Dataset
        settings = replace(settings, primitive_model=PRIMITIVE)

    def kernel(batches):
        import pyarrow as pa

        schema = pa.schema([(KIND, pa.string()), (USER, pa.string()), (ITEM, pa.string()), (COUNT, pa.int64()),
                            ("evaluated", pa.bool_()), *[(c, pa.float64()) for c in per_user]])
        for frame in evaluated(batches):
            yield pa.RecordBatch.from_pandas(frame, schema=schema, preserve_index=False)

    def evaluated(batches):
        frames = _unnested(batches, columns.user, (columns.user, columns.item), layout)
        if frames is None:
            return
        train = frames.get(TRAINED)
        try:  # part=True: a partition's users may all lack lists, or relevant items
            models = {MODEL: frames[RECOMMENDED], **({PRIMITIVE: frames[PRIMITIVE]} if PRIMITIVE in frames else {})}
            dataset = Dataset.build(models, frames[RELEVANT], items=items, columns=columns,
                                    train=train if train is not None and len(train) else None,
                                    feature_columns=feature_columns, part=True,
                                    score_positions=settings.score_positions)
            if facts is not None:
                dataset = with_whole_training(dataset, facts)
            if judging:
                dataset = replace(dataset, truth=replace(dataset.truth, judged_elsewhere=True))
            if curve_to is not None and dataset.lists[MODEL].positions < curve_to:  # all shorter than the longest
                dataset = replace(dataset, lists={**dataset.lists, MODEL: dataset.lists[MODEL].widened(curve_to)},
                                  _above={})
            result = dataset.evaluate(MODEL, settings, curves=curve_to is not None, part=True)
        except InputError as error:
            raise carried(error) from None
        users = result.per_user
        values = np.column_stack([users[column].to_numpy(dtype=np.float64) if column in users.columns
                                  else np.full(len(users), np.nan) for column in per_user])
        evaluated = users["evaluated"].to_numpy(dtype=bool)
        present = ~np.isnan(values) & np.where([c in accuracy for c in per_user], evaluated[:, None], True)
        ids = users.index.astype(str)
        if keep_users:
            yield pd.DataFrame({KIND: "user", USER: ids, ITEM: None, COUNT: None, "evaluated": evaluated,
                                **dict(zip(per_user, values.T, strict=True))})
        yield _moments(values, present, int(evaluated.sum()), per_user)
        yield _notes(result.warnings, per_user)
        if bootstrap:
            yield _weighted_sums(values, present, ids, per_user, bootstrap, seed)
        top = dataset.lists[MODEL].items[:, :settings.k]
        top = top[(top >= 0).any(axis=1)]  # users with a list, as the in-memory catalog metrics count them
        counts = catalog.recommendation_counts(top, len(dataset.items))
        present = np.flatnonzero(counts)
        yield pd.DataFrame({KIND: ["lists", "judged", *["item"] * len(present)], USER: None,
                            ITEM: [None, None, *as_text(dataset.items.ids[present])],
                            COUNT: [len(top), len(dataset.truth.judged), *counts[present]], "evaluated": None,
                            **{column: np.nan for column in per_user}})
        if curve_to is not None:
            curves = result.curves
            n = int(result.users["evaluated"])
            metric_of = {c: m for m, c in registry.per_user_columns("accuracy").items()}
            yield pd.DataFrame({KIND: "curve", USER: None, ITEM: curves.index.astype(str), COUNT: n,
                                "evaluated": None,
                                **{column: (curves[metric_of[column]].to_numpy() * n if n else np.zeros(len(curves)))
                                   if metric_of.get(column) in curves.columns else np.nan for column in per_user}})

    return kernel


COUNT_MARK = "\x00"  # where a note's count goes in its template
GLOBAL_NOTES = ("feature_gaps",)  # about a table every partition gets whole: counted once, not summed
OWN_NOTES = ("id_mismatch",)  # measured on the whole data by the driver (_id_mismatch), not per partition


def _notes(warnings: list[Note], per_user: list[str]) -> pd.DataFrame:
    """A partition's notes as rows of kind "note": the code and the message with its count
    taken out (the template) in ``ITEM``, the count in ``COUNT``; summed over partitions."""
    rows = []
    for note in warnings:
        if note.code in OWN_NOTES or note.code == "read_format":
            continue
        count = str(note.count)
        summed = note.message.startswith(count) and note.code not in GLOBAL_NOTES
        template = note.message.replace(count, COUNT_MARK, 1) if summed else note.message
        rows.append((json.dumps([note.code, template]), note.count))
    return pd.DataFrame({KIND: np.array(["note"] * len(rows), dtype=object), USER: None,
                         ITEM: np.array([r[0] for r in rows], dtype=object),
                         COUNT: np.array([r[1] for r in rows], dtype=np.int64), "evaluated": None,
                         **{column: np.nan for column in per_user}})


def _summed_notes(rows: pd.DataFrame, model: str) -> list[Note]:
    """The partitions' notes, each count summed over the partitions that had it (a note about
    a table every partition holds whole is counted once), the model named as the caller names it."""
    notes = []
    for key, count in zip(rows[ITEM], rows[COUNT], strict=True):
        code, template = json.loads(key)
        total = int(count) if COUNT_MARK in template else 1  # (a global note keeps its own count in its words)
        message = template.replace(COUNT_MARK, str(total)).replace(f"'{MODEL}'", f"'{model}'")
        notes.append(Note(code, message, total))
    return notes


def _in_memory_order(notes: list[Note]) -> list[Note]:
    """The notes in the order the in-memory engine lists them (by code, as the encoding meets them)."""
    order = {code: i for i, code in enumerate(NOTE_ORDER)}
    return sorted(notes, key=lambda note: (order.get(note.code, len(order)), note.message))


NOTE_ORDER = ("read_format", "below_threshold", "duplicate_truth", "duplicate_items", "rank_gaps", "id_mismatch",
              "ties_at_cutoff", "feature_gaps", "users_without_relevant", "users_without_recommendations",
              "truth_in_training", "truth_before_training", "seen_in_training", "short_lists", "sampled_candidates")
MISMATCH_SAMPLE_ROWS = 200_000  # recommendation rows the id-mismatch warning is measured on


def _id_mismatch(recs_df, truth_df, columns: Columns, model: str) -> Note | None:
    """The in-memory engine's id-mismatch warning, measured on the first recommendation rows
    (at most :data:`MISMATCH_SAMPLE_ROWS`: every row of a small table) against the ground truth
    of their users and every relevant item (one of its rows per item).

    The sample's own users' ground truth is read first: it decides the users' side exactly, and
    when enough of the sample's items are relevant to those users alone they are enough among
    every relevant item, so the whole table's distinct items are gathered only when the ids look
    mismatched (a shuffle a healthy evaluation never pays)."""
    from pyspark.sql import functions as F  # noqa: N812

    recs = recs_df.limit(MISMATCH_SAMPLE_ROWS).toPandas()
    if recs.empty:
        return None
    truth_columns = [c for c in (columns.user, columns.item, columns.relevance) if c and c in truth_df.columns]
    users = recs_df.sparkSession.createDataFrame(pd.DataFrame({columns.user: recs[columns.user].drop_duplicates()}))
    own = truth_df.select(*truth_columns).join(F.broadcast(users), columns.user, "left_semi").toPandas()
    if len(own) and _mismatch_in(recs, own, columns, model) is None:
        return None  # (none of the sample's users lacks truth, and its items meet their own users' truth)
    relevant = truth_df.select(*truth_columns)
    if columns.relevance in truth_columns:
        relevant = relevant.where(F.col(columns.relevance) >= columns.threshold)
    items = relevant.dropDuplicates([columns.item]).toPandas()  # (with its real user: a truth row like any other)
    return _mismatch_in(recs, pd.concat([own, items], ignore_index=True).drop_duplicates(), columns, model)


def _mismatch_in(recs: pd.DataFrame, truth: pd.DataFrame, columns: Columns, model: str) -> Note | None:
    """The id-mismatch note of ``recs`` against ``truth``, in memory (None: the ids match, or the
    rows cannot be read: the partitions then name what is wrong with them)."""
    try:
        data = Dataset.build({model: recs}, truth, columns=columns, part=True)
    except InputError:
        return None
    return next((note for note in data.lists[model].notes if note.code == "id_mismatch"), None)


def _moments(values: np.ndarray, present: np.ndarray, evaluated: int, per_user: list[str]) -> pd.DataFrame:
    """A partition's rows of kind ``moment``: per metric column, over the users it is averaged
    over (``present``), the count (``n``; the evaluated users in ``COUNT``), Σv and Σv², and
    Σ forward(v) of each transformed metric (``forward:<name>``, in its column). Sums over
    partitions give the means and the standard deviations."""
    filled = np.where(present, values, 0.0)
    rows = {"n": present.sum(axis=0).astype(np.float64), "sum": filled.sum(axis=0),
            "sum_of_squares": (filled * filled).sum(axis=0)}
    for metric in _transformed(per_user):
        at = per_user.index(registry.per_user_columns("accuracy")[metric.of])
        forward = np.zeros(len(per_user))
        taken = values[present[:, at], at]
        forward[at] = registry.AGGREGATES[metric.aggregate].forward(taken).sum()
        rows[f"forward:{metric.name}"] = forward
    return pd.DataFrame({KIND: "moment", USER: None, ITEM: list(rows), COUNT: [evaluated] + [0] * (len(rows) - 1),
                         "evaluated": None, **dict(zip(per_user, np.vstack(list(rows.values())).T, strict=True))})


def _weighted_sums(values: np.ndarray, present: np.ndarray, ids, per_user: list[str], resamples: int,
                   seed: int) -> pd.DataFrame:
    """A partition's rows of Σ w·v (kind ``boot_sum``) and Σ w (``boot_n``) per resample, over
    the users each metric is averaged over (``present``; ``ids``: the users' ids as text)."""
    sums, weights = poisson_bootstrap.weighted_sums(values, present, poisson_bootstrap.user_keys(ids), resamples, seed)
    resample = np.arange(resamples).astype(str)
    return pd.DataFrame({KIND: np.repeat(BOOTSTRAP_KINDS, resamples), USER: None, ITEM: np.tile(resample, 2),
                         COUNT: None, "evaluated": None, **dict(zip(per_user, np.vstack([sums, weights]).T,
                                                                    strict=True))})


def local_session(master: str = "local[2]", quiet: bool = False):
    """A Spark session for the command line (workers run this Python). ``quiet``: no progress
    bars and no log lines (a bad input's message is rankscope's own, not 50 lines of JVM and
    Python-worker tracebacks; RANKSCOPE_DEBUG=1 keeps Spark's errors)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    quiet = quiet and not os.environ.get("RANKSCOPE_DEBUG")
    builder = (SparkSession.builder.master(master).appName("rankscope")
               .config("spark.ui.enabled", "false").config("spark.sql.execution.arrow.pyspark.enabled", "true")
               .config("spark.sql.execution.arrow.maxRecordsPerBatch", "200000")  # fewer, larger batches to pandas
               .config("spark.ui.showConsoleProgress", str(not quiet).lower()))
    if not quiet:
        return builder.getOrCreate()
    with _stderr_to(SPARK_LOG):  # (the JVM started now keeps writing there, not to the terminal)
        session = builder.getOrCreate()
        session.sparkContext.setLogLevel("OFF")
    return session


SPARK_LOG = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"rankscope-spark-{os.getpid()}.log")


@contextmanager
def _stderr_to(path: str):
    """File descriptor 2 points at ``path`` inside the block (for processes started there)."""
    sys.stderr.flush()
    saved = os.dup(2)
    with open(path, "ab") as log:
        os.dup2(log.fileno(), 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
