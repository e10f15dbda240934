"""The Spark engine's partitions reading the Parquet files themselves (engines/spark/files.py):
by user ranges when the files are in user order, by a shuffle of Arrow streams otherwise, and
Spark's own reader for anything else. Every road gives the same numbers, warnings and refusals
as Spark's reader and the in-memory engine, whatever the row groups, the row order, the id type
and the number of files."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_spark import data

from metrics_core import Columns, InputError, evaluate
from metrics_core.engines.spark import files

pytest.importorskip("pyspark")
NEEDS_JAVA = pytest.mark.skipif(shutil.which("java") is None, reason="no Java for Spark")


def groups(ranges: list[tuple[int, int]], rows: int = 100, missing: int = 0) -> files.Groups:
    """Row groups of one file with the given user ranges (least, greatest)."""
    n = len(ranges)
    return files.Groups([0] * n, ["f.parquet"] * n, list(range(n)), np.full(n, rows), [r[0] for r in ranges],
                        [r[1] for r in ranges], np.array([missing] + [0] * (n - 1)))


def test_user_ranges_cover_every_id_once_and_read_each_sorted_group_about_once():
    """Sorted groups (a user straddling two groups): the ranges are contiguous from no bound to no
    bound, every group is read by each range its users fall in, and about once in all."""
    sorted_groups = groups([(0, 10), (10, 20), (20, 30), (30, 40), (40, 50), (50, 60), (60, 70), (70, 80)])
    ranges = files.user_ranges(sorted_groups, 4)
    assert ranges is not None and ranges[0][0] is None and ranges[-1][1] is None
    assert [end for _, end, _ in ranges[:-1]] == [start for start, _, _ in ranges[1:]]  # contiguous
    for start, end, listed in ranges:
        read = {g for _, _, numbered in json.loads(listed) for g in numbered}
        holding = {i for i, (least, greatest) in enumerate(zip(sorted_groups.least, sorted_groups.greatest,
                                                                   strict=True))
                   if (start is None or greatest >= start) and (end is None or least < end)}
        assert read == holding
    assert sum(len(json.loads(listed)[0][2]) for *_, listed in ranges) <= 2 * 8


def test_user_ranges_refuse_files_in_another_order_or_without_statistics():
    assert files.user_ranges(groups([(0, 1000)] * 8), 4) is None  # every group holds every user: a shuffle
    assert files.user_ranges(groups([(0, 10), (None, None)]), 2) is None
    with_missing = files.user_ranges(groups([(0, 10), (10, 20), (20, 30), (30, 40)], missing=3), 2)
    assert with_missing is not None and with_missing[0][0] is None  # the first range takes the missing ids


def test_row_groups_give_the_user_columns_own_statistics_after_a_nested_column(tmp_path):
    """The user id's statistics are its own leaf's, also when a column of two leaves comes before it."""
    table = pa.table({"point": [{"x": i, "y": -i} for i in range(20)], "user_id": np.arange(20, dtype=np.int64) + 100,
                      "item_id": np.arange(20, dtype=np.int64)})
    pq.write_table(table, tmp_path / "nested.parquet", row_group_size=5)
    found = files.Groups.of({0: [str(tmp_path / "nested.parquet")]}, {0: {"user_id": "long", "item_id": "long"}},
                            "user_id")
    assert list(zip(found.least, found.greatest, strict=True)) == [(100, 104), (105, 109), (110, 114), (115, 119)]
    assert list(found.rows) == [5] * 4 and not found.missing.any()
    assert files.Groups.of({0: [str(tmp_path / "nested.parquet")]}, {0: {"user_id": "integer"}}, "user_id") is None


def test_files_pyarrow_cannot_read_take_sparks_reader(tmp_path, monkeypatch):
    """A file pyarrow cannot open (a broken one, or a feature it does not implement), or
    compressed by a codec it lacks (LZO), is left to Spark's reader."""
    (tmp_path / "broken.parquet").write_bytes(b"PAR1 not really")
    assert files.Groups.of({0: [str(tmp_path / "broken.parquet")]}, {0: {"user_id": "long"}}, "user_id") is None
    pq.write_table(pa.table({"user_id": [1, 2]}), tmp_path / "plain.parquet")

    def not_implemented(*args, **kwargs):
        raise pa.ArrowNotImplementedError("a Parquet feature this pyarrow lacks")

    with monkeypatch.context() as patched:
        patched.setattr(pq, "ParquetFile", not_implemented)
        assert files.Groups.of({0: [str(tmp_path / "plain.parquet")]}, {0: {"user_id": "long"}}, "user_id") is None
    assert not files._decodes("LZO") and files._decodes("SNAPPY") and files._decodes("UNCOMPRESSED")
    pq.write_table(pa.table({"user_id": [1, 2]}), tmp_path / "zstd.parquet", compression="zstd")
    assert files.Groups.of({0: [str(tmp_path / "zstd.parquet")]}, {0: {"user_id": "long"}}, "user_id") is not None


def test_reading_tasks_read_every_group_once_and_small_files_together(monkeypatch):
    monkeypatch.setattr(files, "TASK_ROWS", 1000)
    many = files.Groups([0] * 12 + [1] * 3, [f"f{i}.parquet" for i in range(12)] + ["t.parquet"] * 3,
                        [0] * 12 + [0, 1, 2], np.array([100] * 12 + [900, 900, 900]), [None] * 15, [None] * 15,
                        np.zeros(15, np.int64))
    tasks = [json.loads(task) for task in files.reading_tasks(many)]
    read = [(position, path, group) for task in tasks for position, path, numbered in task for group in numbered]
    assert sorted(read) == sorted(zip(many.position, many.path, many.group, strict=True))  # each group once
    assert len(tasks) == 3 and len(tasks[0]) == 10  # ten small files in one task
    assert tasks[1][-1] == [1, "t.parquet", [0]] and tasks[2] == [[1, "t.parquet", [1, 2]]]  # a large one in two


def test_partition_of_users_keeps_a_user_in_one_partition_whatever_its_spaces():
    """As memory matches text ids (SPACES: every character str.strip() takes away)."""
    import sys

    from metrics_core.inputs.validate import SPACES

    assert "".join(c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace()) == SPACES
    text = pa.chunked_array([[" u1", "u1\t", None, "7.00"], ["u1", "u2", None, "7", "\u3000u2"]])
    parts = files.partition_of_users(text, 7)
    assert parts[0] == parts[1] == parts[4] and parts[2] == parts[6] and parts[3] == parts[7]
    assert parts[5] == parts[8] and parts.max() < 7
    numbers = files.partition_of_users(pa.chunked_array([[1, 2, None], [1, None]]), 5)
    assert numbers[0] == numbers[3] and numbers[2] == numbers[4] and numbers.max() < 5
    assert len(set(files.partition_of_users(pa.array(np.arange(1000)), 8))) == 8  # (consecutive ids spread)


def _written(frame: pd.DataFrame, folder, name: str, order: str, pieces: int = 1, group_rows: int = 37):
    """``frame`` as Parquet in ``order`` ("sorted" by user, or "shuffled"), in ``pieces`` files of a
    folder (one file when 1), with small row groups (users straddle them)."""
    frame = frame.sort_values("user_id", kind="stable") if order == "sorted" else frame.sample(frac=1, random_state=3)
    target = folder / name
    if pieces == 1:
        frame.to_parquet(target.with_suffix(".parquet"), row_group_size=group_rows, index=False)
        return target.with_suffix(".parquet")
    target.mkdir()
    for i, part in enumerate(np.array_split(np.arange(len(frame)), pieces)):
        frame.iloc[part].to_parquet(target / f"part-{i}.parquet", row_group_size=group_rows, index=False)
    return target


@pytest.fixture(scope="module")
def spark():
    from metrics_core.engines.spark.engine import local_session

    session = local_session("local[2]", quiet=True)
    yield session
    session.stop()


@pytest.mark.slow
@NEEDS_JAVA
@pytest.mark.parametrize("order, ids, pieces, road", [
    ("sorted", "numbers", 1, "ranges"), ("sorted", "numbers", 3, "ranges"), ("shuffled", "numbers", 1, "shuffle"),
    ("shuffled", "text", 2, "shuffle"), ("sorted", "text", 1, "shuffle")])
@pytest.mark.parametrize("partitions", [1, 4])
def test_every_road_gives_the_numbers_of_sparks_reader_and_of_memory(tmp_path, spark, monkeypatch, order, ids, pieces,
                                                                     road, partitions):
    from metrics_core.engines.spark import engine

    recs, truth, _ = data(4, users=300)
    if ids == "text":
        recs, truth = (f.assign(user_id="user-" + f.user_id.astype(str)) for f in (recs, truth))
    train = pd.DataFrame({"user_id": recs.user_id.sample(900, replace=True, random_state=1).to_numpy(),
                          "item_id": np.random.default_rng(2).integers(0, 130, 900)})
    paths = [_written(frame, tmp_path, name, order, pieces) for name, frame in
             (("recs", recs), ("truth", truth), ("train", train))]
    taken = []
    ranges, keys = files.user_ranges, files.keys_of_partitions
    monkeypatch.setattr(files, "user_ranges", lambda *a: taken.append("ranges?") or ranges(*a))
    monkeypatch.setattr(files, "keys_of_partitions", lambda *a: taken.append("shuffle") or keys(*a))
    columns = Columns(relevance="relevance", threshold=1)
    results = {}
    for reading in (True, False):
        monkeypatch.setattr(files, "READ_BY_PARTITIONS", reading)
        recs_df, truth_df, train_df = (spark.read.parquet(str(p)) for p in paths)
        results[reading] = engine.evaluate_spark(recs_df, truth_df, k=5, columns=columns, train_df=train_df,
                                                 partitions=partitions, bootstrap=20, curves=True, per_user=True)
    if partitions == 1 and ids == "numbers":
        road = "ranges"  # (one partition: one range holds every user, whatever the order)
    assert taken and ("shuffle" in taken) == (road == "shuffle")
    memory = evaluate(recs, truth, k=5, columns=columns, train=train)
    by_files, by_spark = results[True], results[False]
    assert len(by_files.metrics) >= 35 and by_files.metrics.keys() == by_spark.metrics.keys()
    for name, value in by_files.metrics.items():
        assert value == pytest.approx(by_spark.metrics[name], abs=1e-12), name
        assert value == pytest.approx(memory.metrics[name], abs=1e-9), name
    assert by_files.intervals.keys() == by_spark.intervals.keys()
    for name, bounds in by_files.intervals.items():  # (the bootstrap's weights follow the users, not the road)
        assert bounds == pytest.approx(by_spark.intervals[name], abs=1e-12), name
    for name in by_files.curves.columns:
        np.testing.assert_allclose(by_files.curves[name], memory.curves[name], atol=1e-12, err_msg=name)
    assert [n.message for n in by_files.warnings] == [n.message for n in by_spark.warnings]
    per_user = by_files.per_user.toPandas().set_index("_user")
    expected = memory.per_user[memory.per_user["evaluated"]]
    np.testing.assert_allclose(per_user.loc[expected.index.astype(str), "ndcg"], expected["ndcg"], atol=1e-12)
    for result in results.values():
        result.unpersist()


@pytest.mark.slow
@NEEDS_JAVA
@pytest.mark.parametrize("order", ["sorted", "shuffled"])
def test_a_missing_user_id_is_refused_with_the_whole_tables_count_on_every_road(tmp_path, spark, order):
    from metrics_core.engines.spark.engine import evaluate_spark

    recs, truth, _ = data(5, users=80)
    recs["user_id"] = recs["user_id"].astype("Int64").mask(recs.index % 50 == 7)
    recs_path, truth_path = (_written(frame, tmp_path, name, order) for name, frame in (("recs", recs),
                                                                                        ("truth", truth)))
    with pytest.raises(InputError) as memory:
        evaluate(recs_path, truth_path, k=5)
    with pytest.raises(InputError) as on_spark:
        evaluate_spark(spark.read.parquet(str(recs_path)), spark.read.parquet(str(truth_path)), k=5, partitions=3,
                       bootstrap=0, per_user=False)
    assert on_spark.value.column == memory.value.column == "user_id"
    count = int(recs["user_id"].isna().sum())
    assert str(count) in on_spark.value._problem and str(count) in memory.value._problem


@pytest.mark.slow
@NEEDS_JAVA
@pytest.mark.parametrize("order", ["sorted", "shuffled"])
@pytest.mark.parametrize("change", ["removed", "rewritten", "retyped"])
def test_a_file_changed_after_its_footer_was_read_is_named_not_an_internal_error(tmp_path, spark, monkeypatch,
                                                                                   order, change):
    """The driver plans the tasks from the files' footers; a file removed or rewritten (other row
    groups, a column gone, a column of another type) before the tasks read it is refused naming
    the file, on both roads."""
    from metrics_core.engines.spark.engine import evaluate_spark

    recs, truth, _ = data(5, users=80)
    recs_path, truth_path = (_written(frame, tmp_path, name, order) for name, frame in (("recs", recs),
                                                                                        ("truth", truth)))
    planned = files.rows_by_files

    def then_changed(*args, **kwargs):
        found = planned(*args, **kwargs)
        if change == "removed":
            recs_path.unlink()
        elif change == "rewritten":
            recs.iloc[:10].drop(columns="item_id").to_parquet(recs_path, index=False)
        else:  # (the same rows and groups, items now lists: Arrow cannot cast them, NotImplementedError)
            _written(recs.assign(item_id=[[item] for item in recs["item_id"]]), tmp_path, "recs", order)
        return found

    monkeypatch.setattr(files, "rows_by_files", then_changed)
    recs_frame, truth_frame = (spark.read.parquet(str(path)) for path in (recs_path, truth_path))
    with pytest.raises(InputError) as refused:
        evaluate_spark(recs_frame, truth_frame, k=5, partitions=3, bootstrap=0, per_user=False)
    assert str(recs_path) in str(refused.value) and "removed or rewritten" in str(refused.value)
    assert "replace input files only between runs" in str(refused.value)


@pytest.mark.slow
@NEEDS_JAVA
def test_other_dataframes_and_file_systems_take_sparks_reader(tmp_path, spark, monkeypatch):
    """A filter, a renamed column, a DataFrame made in memory or partition folders are not plain
    Parquet files: None, Spark's own reader. So are a column of another type (a date), ids of two
    types, and a row group too large for one task's streams."""
    from metrics_core.engines.spark.engine import RECOMMENDED, RELEVANT, TABLE, _layout

    recs = data(6, users=40)[0]
    recs.to_parquet(tmp_path / "recs.parquet")
    read = spark.read.parquet(str(tmp_path / "recs.parquet"))
    assert files.parquet_files(read) == [str(tmp_path / "recs.parquet")]
    assert files.parquet_files(read.select("user_id", "item_id")) == [str(tmp_path / "recs.parquet")]
    assert files.parquet_files(read.where("user_id > 3")) is None
    assert files.parquet_files(read.withColumnRenamed("rank", "r")) is None
    assert files.parquet_files(spark.createDataFrame(recs)) is None
    pq.write_to_dataset(pa.Table.from_pandas(recs.assign(day=recs.user_id % 2)), tmp_path / "split",
                        partition_cols=["day"])
    assert files.parquet_files(spark.read.parquet(str(tmp_path / "split"))) is None
    truth = data(6, users=40)[1]
    truth.to_parquet(tmp_path / "truth.parquet")
    truth.assign(user_id=truth.user_id.astype(str)).to_parquet(tmp_path / "text.parquet")
    truth.assign(day=pd.Timestamp("2026-01-01")).to_parquet(tmp_path / "dated.parquet")

    def road(truth_file: str):
        tables = {RECOMMENDED: read, RELEVANT: spark.read.parquet(str(tmp_path / truth_file))}
        return files.rows_by_files(tables, "user_id", _layout(tables, "user_id"), 2, TABLE)

    assert road("truth.parquet") is not None
    assert road("text.parquet") is None and road("dated.parquet") is None
    monkeypatch.setattr(files, "GROUP_ROWS_MAX", 100)
    assert road("truth.parquet") is None


@pytest.mark.slow
@NEEDS_JAVA
@pytest.mark.parametrize("partitions", [1, 7, 52])
def test_each_key_reaches_its_own_partition(spark, partitions):
    """Rows keyed by keys_of_partitions()[j] land in partition j of repartition(P, key): one
    target per partition, so the shuffle road's partitions are as even as its hash of users."""
    from pyspark.sql import functions as F  # noqa: N812

    keys = files.keys_of_partitions(spark, partitions)
    placed = (spark.createDataFrame([(key,) for key in keys], "key long").repartition(partitions, "key")
              .select("key", F.spark_partition_id().alias("j")).toPandas())
    assert dict(zip(placed["key"], placed["j"], strict=True)) == {key: j for j, key in enumerate(keys)}


@pytest.mark.slow
@NEEDS_JAVA
@pytest.mark.parametrize("partitions_read_the_files", [True, False])
def test_text_ids_memory_counts_as_one_user_meet_in_one_partition(tmp_path, spark, monkeypatch,
                                                                  partitions_read_the_files):
    """Memory matches text ids without their surrounding whitespace (tabs too) and with an
    integral decimal as a whole number ("u7\\t" is "u7", "7.00" is "7"): on both of the Spark
    engine's roads the two files' rows of such a user reach one partition and give memory's numbers."""
    from metrics_core.engines.spark.engine import evaluate_spark

    monkeypatch.setattr(files, "READ_BY_PARTITIONS", partitions_read_the_files)
    recs, truth, _ = data(7, users=200)
    recs = recs.assign(user_id=np.where(recs.user_id % 2 == 0, "u" + recs.user_id.astype(str) + "\t",
                                        recs.user_id.astype(str) + ".00"))
    truth = truth.assign(user_id=np.where(truth.user_id % 2 == 0, "u" + truth.user_id.astype(str),
                                          " " + truth.user_id.astype(str)))
    recs.to_parquet(tmp_path / "recs.parquet")
    truth.to_parquet(tmp_path / "truth.parquet")
    columns = Columns(relevance="relevance", threshold=1)
    memory = evaluate(tmp_path / "recs.parquet", tmp_path / "truth.parquet", k=5, columns=columns)
    ours = evaluate_spark(spark.read.parquet(str(tmp_path / "recs.parquet")),
                          spark.read.parquet(str(tmp_path / "truth.parquet")), k=5, columns=columns, partitions=6,
                          bootstrap=0, per_user=False)
    assert memory.metrics["hit_rate"] > 0.05  # (memory matched the two spellings)
    for name, value in ours.metrics.items():
        assert value == pytest.approx(memory.metrics[name], abs=1e-9), name
