"""The Spark engine equals the in-memory engine on the same data (local[2], small generated
data). Skipped when pyspark or Java is missing."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from metrics_core import Columns, Settings, evaluate, evaluate_models

pytest.importorskip("pyspark")
pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("java") is None, reason="no Java for Spark")]


@pytest.fixture(scope="module")
def spark():
    from metrics_core.engines.spark.engine import local_session

    session = local_session("local[2]")
    yield session
    session.stop()


def data(seed: int = 0, users: int = 400, items: int = 120):
    """Lists of 12 with ranks and scores (some users without a list, some without relevant
    items), graded ground truth, and an item table with two numeric features and a genre."""
    rng = np.random.default_rng(seed)
    recs = pd.DataFrame({"user_id": np.repeat(np.arange(users), 12), "item_id": rng.integers(0, items, users * 12),
                         "rank": np.tile(np.arange(1, 13), users), "score": rng.random(users * 12)})
    recs = recs.drop_duplicates(["user_id", "item_id"])
    recs = recs[recs.user_id % 17 != 0]  # users with relevant items but no list
    truth = pd.DataFrame({"user_id": rng.integers(0, users + 30, users * 3),
                          "item_id": rng.integers(0, items, users * 3),
                          "relevance": rng.integers(1, 4, users * 3)}).drop_duplicates(["user_id", "item_id"])
    table = pd.DataFrame({"item_id": np.arange(items + 10), "f1": rng.random(items + 10), "f2": rng.random(items + 10),
                          "genre": rng.choice(["drama", "comedy", "drama|war", "noir"], items + 10)})
    return recs, truth, table


@pytest.mark.parametrize("k, options", [(5, {}), (12, {"gain": "exponential", "ap_denominator": "relevant",
                                                         "dcg_ties": "average"}),
                                        (3, {"users_without_relevant": "zero", "users_without_list": "drop",
                                             "rbp_gain": "scaled"})])
def test_every_metric_equals_the_in_memory_engine(spark, k, options):
    """(Graded RBP divides by the whole ground truth's highest grade, which one user alone has
    here, not by a partition's own.)"""
    from metrics_core.engines.spark.engine import evaluate_spark

    recs, truth, table = data(k)
    truth.loc[truth.index[0], "relevance"] = 9
    columns = Columns(relevance="relevance", threshold=1)
    settings = Settings(**options)
    ours = evaluate_spark(spark.createDataFrame(recs), spark.createDataFrame(truth), k=k, settings=settings,
                          items_df=spark.createDataFrame(table), columns=columns, partitions=5)
    memory = evaluate(recs, truth, k=k, items=table, columns=columns, **options)
    assert len(ours.metrics) >= 35
    for name, value in ours.metrics.items():
        assert value == pytest.approx(memory.metrics[name], abs=1e-9), name
    assert ours.users["evaluated"] == memory.users["evaluated"]
    per_user = ours.per_user.toPandas().set_index("_user")
    evaluated = per_user[per_user["evaluated"]]
    expected = memory.per_user[memory.per_user["evaluated"]]
    expected.index = expected.index.astype(str)
    np.testing.assert_allclose(evaluated.loc[expected.index, "ndcg"], expected["ndcg"], atol=1e-12)
    assert set(ours.skipped) >= {"novelty", "lauc", "serendipity_primitive"}
    assert "train_df" in ours.skipped["novelty"] and "settings.candidates" in ours.skipped["lauc"]


def test_aggregates_alone_equal_those_with_the_per_user_rows(spark):
    """per_user=False gives the same aggregates, intervals and curves from the partitions'
    sums, with no per-user DataFrame."""
    from metrics_core.engines.spark.engine import evaluate_spark

    recs, truth, table = data(2)
    frames = spark.createDataFrame(recs), spark.createDataFrame(truth)
    both, alone = (evaluate_spark(*frames, k=6, items_df=spark.createDataFrame(table), partitions=4, curves=True,
                                  bootstrap=30, per_user=keep) for keep in (True, False))
    assert alone.per_user is None and both.per_user is not None
    assert alone.metrics.keys() == both.metrics.keys() and alone.intervals.keys() == both.intervals.keys()
    memory = evaluate(recs, truth, k=6, items=table)
    for name, value in alone.metrics.items():
        assert value == pytest.approx(both.metrics[name], abs=1e-12), name
        assert value == pytest.approx(memory.metrics[name], abs=1e-9), name
    for name, bounds in alone.intervals.items():
        np.testing.assert_allclose(bounds, both.intervals[name], atol=1e-12, err_msg=name)
    pd.testing.assert_frame_equal(alone.curves, both.curves)
    alone.unpersist()  # (nothing cached: a no-op)


TRAINING_METRICS = {"novelty", "arp", "arp_normalised", "novelty_interactions", "serendipity_popularity",
                    "serendipity", "lauc", "mcc", "fall_out", "accuracy", "calibration"}


@pytest.mark.parametrize("case", ["table", "no table", "few trained users", "unknown as one user", "cooccurrence",
                                  "null scores"])
def test_training_metrics_equal_the_in_memory_engine(spark, case):
    """With training interactions (repeated pairs, items outside the item table, users with a
    history and no list, users with neither), the popularity metrics, the LAUC/MCC candidates
    and serendipity equal the in-memory engine's: the whole table's popularity reaches every
    partition, a partition with no training row of its users included ("few trained users"),
    and a score column null on every row is left out, as if not given ("null scores"). With
    the co-occurrence similarity, every partition gets the whole table's (its items' shared
    users counted in Spark), so diversity and serendipity equal memory's too, per user."""
    from metrics_core.engines.spark.engine import evaluate_spark

    recs, truth, table = data(3)
    rng = np.random.default_rng(11)
    users = 4 if case == "few trained users" else 460
    train = pd.DataFrame({"user_id": rng.integers(0, users, 3000), "item_id": rng.integers(0, 140, 3000)})
    options = {"unknown as one user": {"novelty_unknown": "one_user", "arp_normalisation": "interactions",
                                       "arp_unknown": "leave_out"},
               "cooccurrence": {"similarity": "cooccurrence"}}.get(case, {})
    items = None if case == "no table" else table
    columns = Columns(relevance="relevance", threshold=1)
    recs_df = spark.createDataFrame(recs)
    if case == "null scores":  # an empty score column: the scores are left out
        recs_df = spark.createDataFrame(recs.assign(score=None).astype({"score": "float64"}))
        recs = recs.drop(columns="score")
    ours = evaluate_spark(recs_df, spark.createDataFrame(truth), k=8, settings=Settings(**options),
                          train_df=spark.createDataFrame(train), columns=columns, partitions=7,
                          items_df=None if items is None else spark.createDataFrame(items))
    memory = evaluate(recs, truth, k=8, train=train, items=items, columns=columns, **options)
    expected = TRAINING_METRICS - ({"serendipity", "calibration"} if case == "no table" else set())
    assert expected <= set(ours.metrics)
    for name, value in ours.metrics.items():
        assert value == pytest.approx(memory.metrics[name], abs=1e-9), name
    per_user = ours.per_user.toPandas().set_index("_user")
    mine = memory.per_user.set_index(memory.per_user.index.astype(str))
    assert set(per_user.index) == set(mine.index)  # users with only training rows included
    for column in ("novelty", "arp", "serendipity_popularity", "lauc", "mcc") + (("calibration",) if items is not None
                                                                                else ()):
        np.testing.assert_allclose(per_user.loc[mine.index, column], mine[column], atol=1e-12, err_msg=column)
    if case == "cooccurrence":
        assert {"diversity", "intra_list_similarity", "serendipity"} <= set(ours.metrics)
        assert ours.metrics["diversity"] != pytest.approx(evaluate(recs, truth, k=8, train=train, items=items,
                                                                   columns=columns).metrics["diversity"])
        for column in ("diversity", "intra_list_similarity", "serendipity"):
            np.testing.assert_allclose(per_user.loc[mine.index, column], mine[column], atol=1e-12, err_msg=column)
        alone = evaluate_spark(recs_df, spark.createDataFrame(truth), k=8, settings=Settings(**options), partitions=3,
                               columns=columns, per_user=False, bootstrap=0)
        assert "train_df" in alone.skipped["diversity"] and "co-occurrence" in alone.skipped["diversity"]
    if case == "table":
        from metrics_core.errors import InputError

        assert "exposure_distance" in memory.metrics and "in-memory engine only" in ours.skipped["exposure_distance"]

        with pytest.raises(InputError, match=r"training interactions.*no column 'item_id'") as error:
            evaluate_spark(recs_df, spark.createDataFrame(truth), k=8, columns=columns,
                           train_df=spark.createDataFrame(train.rename(columns={"item_id": "item"})))
        assert error.value.column == "item_id"
    if case == "no table":  # the catalog comes from the training items: a null one is the training table's
        from metrics_core.errors import InputError

        holed = train.astype({"item_id": "float64"}).assign(item_id=lambda f: f.item_id.where(f.index != 5))
        with pytest.raises(InputError) as error:
            evaluate_spark(recs_df, spark.createDataFrame(truth), k=8, columns=columns,
                           train_df=spark.createDataFrame(holed), partitions=16)
        assert error.value.column == "item_id" and "no id" in error.value.problem
        assert str(error.value).startswith("training interactions (Spark DataFrame)")


@pytest.mark.parametrize("rank", ["numbers", "text", None])
def test_curves_at_every_k_equal_the_in_memory_engine(spark, rank):
    """Lists ordered by rank (numbers, or numbers as text, whose largest as text would be "9"),
    then by score (the longest list then counts rows); some partitions hold only short lists,
    and their curves still reach the longest list."""
    from metrics_core.engines.spark.engine import evaluate_spark

    recs, truth, _ = data(7)
    # with text ranks, few long lists (1 user in 40) over more partitions: some hold none
    long_lists = (recs.user_id % 40 == 1) if rank == "text" else (recs.user_id % 5 != 0)
    recs = recs[long_lists | (recs["rank"] <= 4)]  # lists of 4 and of up to 12
    if rank is None:
        recs = recs.drop(columns=["rank"])
    elif rank == "text":
        recs = recs.assign(rank=recs["rank"].astype(str))
    ours = evaluate_spark(spark.createDataFrame(recs), spark.createDataFrame(truth), k=6, curves=True,
                          partitions=16 if rank == "text" else 7)
    memory = evaluate(recs, truth, k=6)
    assert list(ours.curves.index) == list(memory.curves.index) == list(range(1, 13))
    for name in ours.curves.columns:
        np.testing.assert_allclose(ours.curves[name], memory.curves[name], atol=1e-9, err_msg=name)
    assert {"precision", "ndcg", "map", "fbeta_of_means"} <= set(ours.curves.columns)


def test_judged_metrics_equal_the_in_memory_engine(spark):
    """bpref and infAP (judged non-relevant rows: grade 0 under threshold 1) equal the in-memory
    values at K, at every k and per user, although most partitions' users have no judged pair
    (only users 1-3 have one); with grades but no pair judged non-relevant (every grade 0 row
    is also relevant through another row), they are skipped with the in-memory engine's reason."""
    from metrics_core.engines.spark.engine import evaluate_spark

    recs, truth, _ = data(8)
    few = recs[recs.user_id < 4][["user_id", "item_id", "rank"]]  # judged at ranks 1-2, relevant at 3-5
    truth = truth[~truth.set_index(["user_id", "item_id"]).index.isin(few.set_index(["user_id", "item_id"]).index)]
    graded = pd.concat([truth, few[few["rank"] <= 2].assign(relevance=0), few[few["rank"].between(3, 5)].assign(
        relevance=2)]).drop(columns="rank")
    recs_df = spark.createDataFrame(recs)
    columns = Columns(relevance="relevance", threshold=1)
    ours = evaluate_spark(recs_df, spark.createDataFrame(graded), k=6, columns=columns, partitions=9, curves=True)
    memory = evaluate(recs, graded, k=6, columns=columns)
    assert {"bpref", "infap"} <= set(ours.metrics) and {"bpref", "infap"} <= set(ours.curves.columns)
    for name in ("bpref", "infap", "precision"):
        assert ours.metrics[name] == pytest.approx(memory.metrics[name], abs=1e-9), name
        np.testing.assert_allclose(ours.curves[name], memory.curves[name], atol=1e-9, err_msg=name)
        assert ours.intervals[name][0] <= ours.metrics[name] <= ours.intervals[name][1]
    per_user = ours.per_user.toPandas().set_index("_user")
    mine = memory.per_user[memory.per_user["evaluated"]]
    mine.index = mine.index.astype(str)
    for column in ("bpref", "infap"):
        np.testing.assert_allclose(per_user.loc[mine.index, column], mine[column], atol=1e-12, err_msg=column)
    assert (mine["bpref"] < mine["recall"] - 0.1).sum() >= 2  # (the judged rows count)
    condensed = evaluate_spark(recs_df, spark.createDataFrame(graded), k=6, columns=columns, partitions=9, curves=True,
                               settings=Settings(judged_only=True))  # (trec_eval's -J: in every partition)
    memory = evaluate(recs, graded, k=6, columns=columns, judged_only=True)
    assert memory.metrics["precision"] > evaluate(recs, graded, k=6, columns=columns).metrics["precision"]
    for name in ("bpref", "infap", "precision", "ndcg", "judged"):
        assert condensed.metrics[name] == pytest.approx(memory.metrics[name], abs=1e-9), name
    pd.testing.assert_frame_equal(condensed.curves, memory.curves[condensed.curves.columns], check_exact=False,
                                  atol=1e-9)

    again = truth[truth.user_id < 40].assign(relevance=0)
    relevant_too = pd.concat([truth, again])  # each grade-0 row repeats a relevant pair: nothing judged
    ours = evaluate_spark(recs_df, spark.createDataFrame(relevant_too), k=6, columns=columns, partitions=9,
                          curves=True)
    memory = evaluate(recs, relevant_too, k=6, columns=columns)
    assert "bpref" in memory.skipped and "bpref" not in ours.metrics and "bpref" not in ours.curves.columns
    assert ours.skipped["infap"] == memory.skipped["infap"]
    assert "bpref" not in ours.intervals and "bpref" not in ours.per_user.columns


@pytest.mark.parametrize("scale", ["rank", "minmax"])
def test_primitive_model_metrics_equal_the_in_memory_engine(spark, scale):
    """Serendipity against a primitive model and unexpectedness, with the primitive model's
    lists as primitive_df (users it lists and the model does not, and the reverse, included),
    equal the in-memory engine's for the same two models; without primitive_df they are
    skipped and say what to pass; a primitive model without an item column is named."""
    from metrics_core.engines.spark.engine import evaluate_spark
    from metrics_core.errors import InputError

    recs, truth, _ = data(9)
    base, _, _ = data(10)
    base = base[base.user_id % 11 != 3]  # users only the model lists
    recs = recs[recs.user_id % 13 != 5]  # and users only the primitive model lists
    recs_df, truth_df, base_df = (spark.createDataFrame(f) for f in (recs, truth, base))
    ours = evaluate_spark(recs_df, truth_df, k=5, settings=Settings(primitive_scale=scale), primitive_df=base_df,
                          partitions=6, bootstrap=20)
    memory = evaluate_models({"base": base, "model": recs}, truth, k=5, primitive_model="base", primitive_scale=scale)
    assert {"serendipity_primitive", "unexpectedness"} <= set(ours.metrics) and not ours.skipped.keys() & {
        "serendipity_primitive", "unexpectedness"}
    for name, value in ours.metrics.items():
        assert value == pytest.approx(memory["model"].metrics[name], abs=1e-9), name
    per_user = ours.per_user.toPandas().set_index("_user")
    mine = memory["model"].per_user.set_index(memory["model"].per_user.index.astype(str))
    for column in ("serendipity_primitive", "unexpectedness"):
        np.testing.assert_allclose(per_user.loc[mine.index, column], mine[column], atol=1e-12, err_msg=column)
    alone = evaluate_spark(recs_df, truth_df, k=5, partitions=6, bootstrap=0, per_user=False)
    assert "primitive_df" in alone.skipped["unexpectedness"] and "unexpectedness" not in alone.metrics
    with pytest.raises(InputError, match=r"primitive model \(Spark DataFrame\).*missing column 'item_id'"):
        evaluate_spark(recs_df, truth_df, k=5, primitive_df=base_df.withColumnRenamed("item_id", "item"))
    holed = spark.createDataFrame(base.astype({"item_id": "float64"}).assign(
        item_id=lambda f: f.item_id.where(f.index != f.index[3])))
    with pytest.raises(InputError) as error:  # found inside a partition, named as the primitive model's
        evaluate_spark(recs_df, truth_df, k=5, primitive_df=holed, partitions=3, bootstrap=0, per_user=False)
    assert str(error.value).startswith("primitive model (Spark DataFrame)") and error.value.column == "item_id"


def test_every_metric_on_movielens_equals_the_in_memory_engine(spark, movielens):
    """Real data with every input (MovieLens 100k: item-kNN lists, ratings below 4 judged
    non-relevant, training data, the co-occurrence similarity, the popular model as the
    primitive one): the Spark engine computes every metric the in-memory engine does, to
    1e-12, and skips only what needs an item table, as memory does."""
    from metrics_core.engines.spark.engine import evaluate_spark

    train, truth = (pd.read_csv(movielens / f"{name}.csv") for name in ("train", "test"))
    train = train[["user_id", "item_id"]]
    lists = {model: pd.read_csv(movielens / f"recs_{model}.csv") for model in ("popular", "itemknn")}
    columns, options = Columns(relevance="rating", threshold=4), {"similarity": "cooccurrence",
                                                                   "primitive_model": "popular"}
    memory = evaluate_models(lists, truth, k=10, train=train, columns=columns, **options)["itemknn"]
    ours = evaluate_spark(*(spark.createDataFrame(f) for f in (lists["itemknn"], truth)), k=10, columns=columns,
                          settings=Settings(**options), train_df=spark.createDataFrame(train), per_user=False,
                          primitive_df=spark.createDataFrame(lists["popular"]), bootstrap=0)
    assert ours.metrics.keys() == memory.metrics.keys() and len(ours.metrics) >= 50
    assert set(ours.skipped) == set(memory.skipped) == {"calibration", "exposure_distance"}  # (no item table)
    for name, value in ours.metrics.items():
        assert value == pytest.approx(memory.metrics[name], abs=1e-12), name


def test_bootstrap_intervals_equal_the_bootstrap_of_the_in_memory_per_user_values(spark):
    """Each partition's Poisson-weighted sums, merged, give what one Poisson bootstrap over the
    in-memory engine's per-user table gives, whatever the partitioning; bootstrap=0 gives the
    normal intervals."""
    from metrics_core.engines.spark.engine import evaluate_spark
    from metrics_core.metrics import registry
    from metrics_core.stats import poisson_bootstrap as pb

    recs, truth, _ = data(4)
    frames = spark.createDataFrame(recs), spark.createDataFrame(truth)
    three, seven = (evaluate_spark(*frames, k=5, partitions=p, bootstrap=60, seed=9, level=0.9) for p in (3, 7))
    memory = evaluate(recs, truth, k=5)
    per_user = memory.per_user
    columns = registry.per_user_columns()
    names = list(three.intervals)
    assert {"precision", "ndcg", "map", "mrr"} <= set(names) and len(names) >= 15
    values = per_user[[columns[m] for m in names]].to_numpy(dtype=np.float64)
    accuracy = np.array([registry.METRICS[m].family == "accuracy" for m in names])
    present = ~np.isnan(values) & (per_user["evaluated"].to_numpy()[:, None] | ~accuracy)
    expected = pb.intervals(*pb.weighted_sums(values, present, pb.user_keys(per_user.index), 60, 9), 0.9)
    for name, bounds in zip(names, expected, strict=True):
        np.testing.assert_allclose(three.intervals[name], bounds, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(seven.intervals[name], bounds, atol=1e-12, err_msg=name)
        assert bounds[0] <= three.metrics[name] <= bounds[1], name
    normal = evaluate_spark(*frames, k=5, partitions=3, bootstrap=0)
    sd = per_user.loc[per_user["evaluated"], "ndcg"].std(ddof=1) / np.sqrt(memory.users["evaluated"])
    np.testing.assert_allclose(normal.intervals["ndcg"], memory.metrics["ndcg"] + np.array([-1, 1]) * 1.959964 * sd)
    at_90 = evaluate_spark(*frames, k=5, partitions=3, bootstrap=0, level=0.9)
    np.testing.assert_allclose(at_90.intervals["ndcg"], memory.metrics["ndcg"] + np.array([-1, 1]) * 1.644854 * sd)
    from metrics_core.errors import InputError

    for bad in ({"bootstrap": -1}, {"bootstrap": 2.5}, {"level": 1.0}, {"level": "95%"}):
        with pytest.raises(InputError, match=r"bootstrap=|level="):
            evaluate_spark(*frames, k=5, **bad)


def test_partitions_no_user_reaches_and_bad_rows_in_a_partition(spark):
    """More partitions than users (some get no row), and partitions where no user is averaged
    over (users without a list left out), still give the in-memory values; a row
    without an item id, found inside a partition, is the same InputError as in memory (column,
    row values, fix), not Spark's report of the worker's traceback."""
    from metrics_core.engines.spark.engine import evaluate_spark
    from metrics_core.errors import InputError

    recs = pd.DataFrame({"user_id": [1, 1, 2, 2, 3], "item_id": [1, 2, 3, 4, 5], "rank": [1, 2, 1, 2, 1]})
    truth = pd.DataFrame({"user_id": [1, 2, 3], "item_id": [1, 3, 9]})
    ours = evaluate_spark(spark.createDataFrame(recs), spark.createDataFrame(truth), k=2, partitions=8)
    assert ours.metrics["ndcg"] == pytest.approx(evaluate(recs, truth, k=2).metrics["ndcg"], abs=1e-12)
    alone = pd.DataFrame({"user_id": [1, 3, *range(10, 60)], "item_id": [1, 3, *[9] * 50]})  # 10-59: no list
    dropped = evaluate_spark(spark.createDataFrame(recs), spark.createDataFrame(alone), k=2, partitions=8,
                             settings=Settings(users_without_list="drop"), curves=True)  # some: no one averaged
    memory = evaluate(recs, alone, k=2, users_without_list="drop")
    assert dropped.users["evaluated"] == memory.users["evaluated"] == 2
    for name, value in dropped.metrics.items():
        assert value == pytest.approx(memory.metrics[name], abs=1e-12), name
    for name in dropped.curves.columns:
        np.testing.assert_allclose(dropped.curves[name], memory.curves[name], atol=1e-12, err_msg=name)
    text_rank = recs.assign(rank=recs["rank"].astype(str).where(recs.index != 2, "second"))
    with pytest.raises(InputError) as caught:  # the longest list is found before any partition checks its rows
        evaluate_spark(spark.createDataFrame(text_rank), spark.createDataFrame(truth), k=2, curves=True)
    assert caught.value.column == "rank" and "rank='second'" in str(caught.value)
    infinite = recs.assign(rank=recs["rank"].astype(float).where(recs.index != 2, np.inf))
    with pytest.raises(InputError) as caught:
        evaluate_spark(spark.createDataFrame(infinite), spark.createDataFrame(truth), k=2, curves=True)
    assert caught.value.column == "rank" and "infinite" in caught.value.problem and "item_id=3" in str(caught.value)
    recs["item_id"] = recs["item_id"].astype("float").where(recs.index != 1)
    with pytest.raises(InputError) as caught:
        evaluate_spark(spark.createDataFrame(recs), spark.createDataFrame(truth), k=2, partitions=3)
    assert caught.value.column == "item_id" and "no id" in caught.value.problem
    assert "recommendations (Spark DataFrame)" in str(caught.value) and "user_id=1" in str(caught.value)
    assert "Traceback" not in str(caught.value) and "fill in the id" in caught.value.fix
    for reserved in ("_table", "_slot0", "_first"):  # the engine's own column names, named before Spark runs
        frames = (spark.createDataFrame(f.rename(columns={"user_id": reserved})) for f in (recs, truth))
        with pytest.raises(InputError, match="gives its own columns") as caught:
            evaluate_spark(*frames, k=2, columns=Columns(user=reserved))
        assert caught.value.column == reserved and "withColumnRenamed" in caught.value.fix


@pytest.mark.parametrize("options", [{}, {"users_without_relevant": "zero"}])
def test_partitions_whose_users_have_only_lists_or_only_relevant_items(spark, options):
    """With many partitions, some hold only users with a list and no relevant item, or only
    users with relevant items and no list. Their users still count as in memory: in the
    catalog and beyond-accuracy metrics (lists only), as evaluated users scoring 0 (relevant
    items only), and in the per-user rows and curves."""
    from metrics_core.engines.spark.engine import evaluate_spark

    rng = np.random.default_rng(4)
    listed = np.arange(40)  # users 0-39 have lists; 0-5 also relevant items; 100-139 only relevant items
    recs = pd.DataFrame({"user_id": np.repeat(listed, 5), "item_id": rng.permuted(np.tile(np.arange(30), (40, 1)),
                                                                                  axis=1)[:, :5].ravel(),
                         "score": rng.random(200)})
    truth = pd.DataFrame({"user_id": [*range(6), *range(100, 140)], "item_id": rng.integers(0, 30, 46)})
    train = pd.DataFrame({"user_id": rng.integers(0, 140, 300), "item_id": rng.integers(0, 30, 300)})
    table = pd.DataFrame({"item_id": np.arange(35), "f1": rng.random(35), "f2": rng.random(35)})
    ours = evaluate_spark(spark.createDataFrame(recs), spark.createDataFrame(truth), k=4,
                          settings=Settings(**options), items_df=spark.createDataFrame(table),
                          train_df=spark.createDataFrame(train), partitions=40, curves=True)
    memory = evaluate(recs, truth, k=4, items=table, train=train, **options)
    assert ours.users == {"evaluated": memory.users["evaluated"], "with_recommendations": 40}
    for name in ("precision", "ndcg", "coverage", "gini", "novelty", "diversity", "personalization", "arp"):
        assert name in ours.metrics, name
    for name, value in ours.metrics.items():
        assert value == pytest.approx(memory.metrics[name], abs=1e-9), name
    for name in ours.curves.columns:
        np.testing.assert_allclose(ours.curves[name], memory.curves[name], atol=1e-12, err_msg=name)
    assert ours.per_user.count() == len(memory.per_user) == 80


def test_the_command_line_runs_on_spark_and_matches_memory(tmp_path):
    """Two models with training data, from Parquet, on Spark and in memory: the same metrics
    (the second model compared with the first by the primitive-model metrics), the run saved
    with its per-user values; a CSV file, a missing Java and an unknown primitive model are
    named errors."""
    recs, truth, _ = data(1)
    recs.to_parquet(tmp_path / "recs.parquet")
    other = data(12)[0]
    other.to_parquet(tmp_path / "other.parquet")
    rng = np.random.default_rng(5)
    truth.assign(timestamp=rng.integers(0, 100, len(truth))).to_parquet(tmp_path / "truth.parquet")
    train = pd.DataFrame({"user_id": rng.integers(0, 420, 2000), "item_id": rng.integers(0, 130, 2000),
                          "timestamp": rng.integers(0, 100, 2000)})
    train.to_parquet(tmp_path / "train.parquet")
    command = [sys.executable, "-m", "metrics_core", "evaluate", "--recommendations", str(tmp_path / "recs.parquet"),
               "--recommendations", f"two={tmp_path / 'other.parquet'}", "--ground-truth",
               str(tmp_path / "truth.parquet"), "--train", str(tmp_path / "train.parquet"), "--k", "5"]
    home = tmp_path / "store"
    tracking = {"MLFLOW_TRACKING_URI": (tmp_path / "mlruns").as_uri(), "MLFLOW_ALLOW_FILE_STORE": "true"}
    spark_run = subprocess.run([*command, "--engine", "spark", "--master", "local[2]", "--save", "big table",
                                "--note", "nightly", "--strict", "--mlflow", "--mlflow-experiment", "spark"],
                               capture_output=True, text=True, timeout=300,
                               env={**os.environ, "RANKSCOPE_HOME": str(home), **tracking})
    memory_run = subprocess.run([*command, "--strict"], capture_output=True, text=True, timeout=120)
    # the same audit on both engines: the split leaks and training items are recommended, so --strict fails both
    strict = [[line for line in run.stderr.splitlines() if "strict" in line] for run in (spark_run, memory_run)]
    assert spark_run.returncode == memory_run.returncode == 1 and strict[0] == strict[1], spark_run.stderr[-2000:]
    assert any("in the training data too" in line for line in strict[0])
    assert any("dated before their user's last training interaction" in line for line in strict[0])
    logged = None
    if importlib.util.find_spec("mlflow") is not None:  # (the mlflow extra, in make test's environment)
        import mlflow

        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
            client = mlflow.tracking.MlflowClient(tracking["MLFLOW_TRACKING_URI"])
            (logged,) = client.search_runs([client.get_experiment_by_name("spark").experiment_id])
    both_on_spark, both_in_memory = (json.loads(run.stdout)["models"] for run in (spark_run, memory_run))
    on_spark, in_memory = both_on_spark["recs"], both_in_memory["recs"]
    assert on_spark["engine"] == "spark"
    if logged is not None:  # (what Spark computed, logged to MLflow as printed)
        assert logged.data.metrics["recs.ndcg_at_5"] == on_spark["metrics"]["ndcg"]
        assert logged.data.metrics["recs.ndcg_at_5_low"] == on_spark["intervals"]["ndcg"][0]
    low, high = on_spark["intervals"]["ndcg"]
    assert low < in_memory["metrics"]["ndcg"] < high
    from metrics_core.store import Store, list_runs, run_results

    runs = list_runs(Store(home), workspace="big table")
    assert list(runs["engine"]) == ["spark"] * 2 and list(runs["model"]) == ["recs", "two"]
    assert list(runs["note"]) == ["nightly"] * 2 and runs["run"].nunique() == 1
    assert runs.loc[0, "ndcg"] == pytest.approx(in_memory["metrics"]["ndcg"], abs=1e-9)
    assert runs.loc[0, "ndcg_low"] < runs.loc[0, "ndcg"] < runs.loc[0, "ndcg_high"]
    saved = run_results(Store(home), runs.loc[0, "run"])["recs"].per_user  # every user: fewer than the sample size
    memory = evaluate(recs, truth, k=5, train=train).per_user
    assert sorted(saved.index) == sorted(memory.index.astype(str))
    evaluated = memory[memory["evaluated"]]
    np.testing.assert_allclose(saved.loc[evaluated.index.astype(str), "ndcg"], evaluated["ndcg"], atol=1e-12)
    recs.to_csv(tmp_path / "r.csv", index=False)
    csv = subprocess.run([*command[:5], str(tmp_path / "r.csv"), "--ground-truth", str(tmp_path / "truth.parquet"),
                          "--engine", "spark"], capture_output=True, text=True, timeout=120)
    assert csv.returncode == 2 and "Parquet" in csv.stderr
    no_java = subprocess.run([*command, "--engine", "spark"], capture_output=True, text=True, timeout=120,
                             env={**os.environ, "JAVA_HOME": str(tmp_path / "no-java")})
    assert no_java.returncode == 2 and "Spark could not start" in no_java.stderr and "Java 17" in no_java.stderr
    assert "Traceback" not in no_java.stderr
    unknown = subprocess.run([*command, "--engine", "spark", "--primitive-model", "three"], capture_output=True,
                             text=True, timeout=120, env={**os.environ, "JAVA_HOME": str(tmp_path / "no-java")})
    assert "Spark could not start" not in unknown.stderr  # (named before Spark starts)
    assert unknown.returncode == 2 and "'three' is not a model" in unknown.stderr and "Traceback" not in unknown.stderr
    assert {"novelty", "arp", "lauc", "serendipity_popularity"} <= set(on_spark["metrics"])
    assert both_on_spark["two"]["metrics"]["unexpectedness"] > 0 == on_spark["metrics"]["unexpectedness"]
    for model in ("recs", "two"):
        for name, value in both_on_spark[model]["metrics"].items():
            assert value == pytest.approx(both_in_memory[model]["metrics"][name], abs=1e-9), (model, name)


def test_rows_reach_the_partitions_as_they_are_with_their_nulls(spark, monkeypatch):
    """Every table's rows reach the partitions in one pass, in shared typed slots (the ground
    truth's and the training's item column is the recommendations' when the types agree), nulls
    and all: a score column null on every row is left out, as if not given, and equals the
    in-memory engine without scores; a null item and a null rank in two rows of one user are
    named as in memory. The session's Arrow settings are lifted for the pass and restored."""
    import metrics_core.engines.spark.engine as engine
    from metrics_core.errors import InputError

    passes = []
    placed = engine._rows_of_users
    monkeypatch.setattr(engine, "_rows_of_users", lambda *args: passes.append(args[2]) or placed(*args))
    recs, truth, _ = data(3, users=60)
    columns = Columns(relevance="relevance", threshold=1)
    memory = evaluate(recs.drop(columns="score"), truth, k=4, columns=columns)
    with_null = spark.createDataFrame(recs.assign(score=None).astype({"score": "float64"}))
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "777")
    for frame in (spark.createDataFrame(recs).drop("score"), with_null):
        passes.clear()
        ours = engine.evaluate_spark(frame, spark.createDataFrame(truth), k=4, columns=columns, partitions=3,
                                     curves=True)
        assert len(passes) == 1
        (recommended, slots), (relevant, truth_slots) = (passes[0][name] for name in (engine.RECOMMENDED,
                                                                                      engine.RELEVANT))
        assert (recommended, relevant) == (0, 1) and truth_slots["item_id"] == slots["item_id"]
        assert truth_slots["relevance"] == slots["rank"]  # both the first other long column
        for name, value in ours.metrics.items():
            assert value == pytest.approx(memory.metrics[name], abs=1e-9), name
        for name in ours.curves.columns:
            np.testing.assert_allclose(ours.curves[name], memory.curves[name], atol=1e-12, err_msg=name)
    assert spark.conf.get("spark.sql.execution.arrow.maxRecordsPerBatch") == "777"
    assert spark.conf.get("spark.sql.execution.arrow.maxBytesPerBatch") == "67108864b"  # Spark's default, again
    with engine._arrow_batches_of(spark, 5):  # two evaluations at once: the last to end restores the settings
        with engine._arrow_batches_of(spark, 5):
            pass
        assert spark.conf.get("spark.sql.execution.arrow.maxRecordsPerBatch") == "5"  # (the other still runs)
    assert spark.conf.get("spark.sql.execution.arrow.maxRecordsPerBatch") == "777"
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "200000")
    two_nulls = pd.DataFrame({"user_id": [1, 1, 1, 2], "item_id": [1.0, np.nan, 3.0, 4.0],
                              "rank": [1.0, 2.0, np.nan, 1.0]})
    with pytest.raises(InputError) as caught:
        engine.evaluate_spark(spark.createDataFrame(two_nulls), spark.createDataFrame(truth), k=2, partitions=2)
    assert caught.value.column == "item_id" and "no id" in caught.value.problem and "rank=2" in str(caught.value)
