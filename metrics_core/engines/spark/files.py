"""The Spark engine's rows read by the partitions themselves, straight from the Parquet files.

When every table the engine evaluates is a Parquet file (or files) read as it is
(``spark.read.parquet(path)``, at most a choice of its columns) from a file system every worker
sees as its own (``file:`` paths: local mode, or a shared mount), the rows need not pass through
Spark's reader, its shuffle of rows and its row-by-row conversion to Arrow (about two thirds of
the engine's time at 1M users x 100). Instead:

1. the driver reads the files' footers and splits their row groups into reading tasks of about
   :data:`TASK_ROWS` rows;
2. each task (a Spark partition of a small table of tasks) reads its row groups with pyarrow,
   gives each row its target partition from its user id (:func:`partition_of_users`: the same
   user always the same partition, in every table), narrows integer columns to the smallest
   type that holds them and writes each target's rows as one Arrow IPC stream: a few binary
   values per task, not millions of rows;
3. Spark shuffles those values by their target (each target partition numbered by a key whose
   ``pmod(hash(key), P)`` is the partition itself: :func:`keys_of_partitions`), and
4. each partition reads its streams back as the record batches the engine's partition kernel
   reads on the other road (``engine._rows_of_users``: the same layout, the same types), whole
   users in any row order.

Where the files are stored in user order (each row group's users, from the Parquet statistics,
a narrow range: what a job writing sorted output gives), nothing needs shuffling at all: each
partition reads the row groups that hold a range of users and keeps that range's rows
(:func:`user_ranges`), so every row is read about once and crosses no process. Files in any
other order take the shuffle above.

The numbers, refusals and warnings are the same on every road (``tests/test_spark_files.py``
and ``tests/test_spark_parity.py`` run them all); anything else (a filter, a renamed column,
partition folders, another file system, types other than numbers and text, user ids of two
types, a row group over :data:`GROUP_ROWS_MAX` rows) takes Spark's own reader.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from urllib.parse import unquote, urlparse

import numpy as np

READ_BY_PARTITIONS = True  # (False: every table through Spark's reader, as the tests compare)
TASK_ROWS = 2_000_000  # rows a reading task reads (row groups of one file or of several small ones together)
PARTITION_ROWS = 7_000_000  # rows per partition unless told (1M users x 100: 16 partitions, the fastest on 2 cores)
GROUP_ROWS_MAX = 50_000_000  # a row group larger than this takes Spark's reader (a task's streams stay under 2 GB)
RANGE_READS_MAX = 2.0  # user ranges when each row is read at most this many times on average (else: shuffle)
ARROW_TYPES = {"long": "int64", "integer": "int32", "short": "int16", "byte": "int8", "double": "float64",
               "float": "float32", "string": "string", "boolean": "bool"}  # Spark type -> Arrow type read here
MIX = np.uint64(0x9E3779B97F4A7C15)  # odd multiplier of Fibonacci hashing: spreads consecutive ids


def parquet_files(frame) -> list[str] | None:
    """The local Parquet files ``frame`` reads as they are (``spark.read.parquet``, then at most
    a choice of its columns, no partition folders), or None for any other DataFrame (or where
    Spark's plan cannot be read, as on Spark Connect)."""
    try:
        plan = frame._jdf.queryExecution().optimizedPlan()
        if plan.getClass().getSimpleName() == "Project":
            chosen = plan.projectList()
            if any(chosen.apply(i).getClass().getSimpleName() != "AttributeReference" for i in range(chosen.size())):
                return None
            plan = plan.child()
        if plan.getClass().getSimpleName() != "LogicalRelation":
            return None
        relation = plan.relation()
        if relation.fileFormat().getClass().getSimpleName() != "ParquetFileFormat" \
                or relation.partitionSchema().nonEmpty():
            return None
        files = list(frame.inputFiles())
    except Exception:  # (no JVM plan to read: Spark Connect, or another Spark's classes)
        return None
    if not files or any(urlparse(f).scheme != "file" for f in files):
        return None
    return [unquote(urlparse(f).path) for f in files]


@dataclass
class Groups:
    """The row groups of every table's files: per group its table's position, file, number,
    rows, and the least and greatest user id (None without statistics) and missing ids."""

    position: list[int]
    path: list[str]
    group: list[int]
    rows: np.ndarray
    least: list
    greatest: list
    missing: np.ndarray

    @classmethod
    def of(cls, files: dict[int, list[str]], needed: dict[int, dict[str, str]], user: str) -> Groups | None:
        """None when a file cannot be opened, lacks a column, stores one as a type that would not
        read as Spark's, or is compressed by a codec this pyarrow lacks (Spark's reader then
        reads it or says what is wrong)."""
        import pyarrow.parquet as pq

        from metrics_core.inputs.read import PARQUET_FAILURES, leaf_statistics

        found = cls([], [], [], [], [], [], [])
        for position, paths in files.items():
            for path in paths:
                try:
                    with pq.ParquetFile(path) as file:  # (footers only: closed at once, the driver opens them all)
                        metadata, schema = file.metadata, file.schema_arrow
                        statistics = leaf_statistics(file, user)
                except PARQUET_FAILURES:
                    return None
                for column, kind in needed[position].items():
                    if column not in schema.names or not _reads_as(schema.field(column).type, kind):
                        return None
                if statistics is None or not all(_decodes(metadata.row_group(g).column(c).compression)
                                                 for g in range(metadata.num_row_groups)
                                                 for c in range(metadata.num_columns)):
                    return None
                for group, stats in enumerate(statistics):
                    known = stats is not None and stats.has_min_max and stats.has_null_count
                    found.position.append(position)
                    found.path.append(path)
                    found.group.append(group)
                    found.rows.append(metadata.row_group(group).num_rows)
                    found.least.append(stats.min if known else None)
                    found.greatest.append(stats.max if known else None)
                    found.missing.append(stats.null_count if known else -1)
        found.rows, found.missing = np.array(found.rows, np.int64), np.array(found.missing, np.int64)
        return found


def _decodes(compression: str) -> bool:
    """Whether this pyarrow decodes a column chunk compressed by ``compression`` (Parquet's name)."""
    import pyarrow as pa

    try:
        return compression == "UNCOMPRESSED" or pa.Codec.is_available(compression.lower())
    except ValueError:  # (a codec pyarrow does not know, such as LZO)
        return False


def reading_tasks(groups: Groups) -> list[str]:
    """Tasks that read every row group once, each about :data:`TASK_ROWS` rows (small files
    together, a large one in several tasks): each its row groups as JSON [[position, file,
    [groups]], ...]."""
    tasks, taken, rows = [], [], 0
    for i in range(len(groups.group)):
        taken.append(i)
        rows += groups.rows[i]
        if rows >= TASK_ROWS or i == len(groups.group) - 1:
            tasks.append(json.dumps(_by_file(groups, np.array(taken))))
            taken, rows = [], 0
    return tasks


def user_ranges(groups: Groups, partitions: int) -> list[tuple[int | None, int | None, str]] | None:
    """Ranges of integer user ids, each with the row groups that may hold them, when the files
    are in user order: (first id, first id after the range, row groups as JSON [[position, file,
    [groups]], ...]) per range, splitting the rows about evenly; the first range starts and the
    last ends nowhere (None), and the first also takes the rows without a user id. None when
    some group has no statistics, or when the ranges' groups would read the rows more than
    :data:`RANGE_READS_MAX` times over or one range more than that many times its share (files
    in another order: every group holds users of every range)."""
    if any(g is None for g in groups.least) or not len(groups.rows):
        return None
    least = np.array(groups.least, dtype=np.int64)
    greatest = np.array(groups.greatest, dtype=np.int64)
    order = np.argsort(least, kind="stable")
    cumulative = np.cumsum(groups.rows[order])
    marks = np.searchsorted(cumulative, cumulative[-1] * np.arange(1, partitions) / partitions)
    bounds = [int(b) for b in np.unique(least[order][np.minimum(marks, len(order) - 1)]) if b > least.min()]
    ranges, read, most = [], 0, 0
    for start, end in zip([None, *bounds], [*bounds, None], strict=True):
        hit = np.ones(len(least), bool) if start is None else greatest >= start
        if end is not None:
            hit &= least < end
        if start is None:
            hit |= groups.missing > 0
        picked = np.flatnonzero(hit)
        read += int(groups.rows[picked].sum())
        most = max(most, int(groups.rows[picked].sum()))
        ranges.append((start, end, json.dumps(_by_file(groups, picked))))
    even = groups.rows.sum() / partitions + groups.rows.max()  # (a range's share, give or take a group)
    return ranges if read <= RANGE_READS_MAX * groups.rows.sum() and most <= RANGE_READS_MAX * even else None


def _by_file(groups: Groups, picked: np.ndarray) -> list:
    """The picked row groups as [[position, file, [groups]], ...], one entry per file."""
    listed: dict[tuple[int, str], list[int]] = {}
    for i in picked:
        listed.setdefault((groups.position[i], groups.path[i]), []).append(groups.group[i])
    return [[position, path, numbers] for (position, path), numbers in listed.items()]


def _reads_as(stored, kind: str) -> bool:
    """Whether a stored Arrow type is read by Spark as ``kind`` (its own type, not widened)."""
    import pyarrow as pa

    if kind == "string":
        return pa.types.is_string(stored) or pa.types.is_large_string(stored)
    return stored == pa.type_for_alias(ARROW_TYPES[kind])


def keys_of_partitions(spark, partitions: int) -> list[int]:
    """For each partition j < ``partitions``, a whole number whose ``pmod(hash(n), partitions)``
    is j: rows keyed by it reach partition j of ``repartition(partitions, key)`` (Spark's hash
    partitioning of a long column), one target per partition, none shared. (Spark's hash has a
    fixed seed: found once per number of partitions in a process.)"""
    if partitions in _KEYS:
        return _KEYS[partitions]
    found: dict[int, int] = {}
    span = 0
    while len(found) < partitions:
        rows = spark.range(span, span + 64 * partitions).selectExpr("id", f"pmod(hash(id), {partitions}) AS j")
        for row in rows.collect():
            found.setdefault(row["j"], row["id"])
        span += 64 * partitions
    _KEYS[partitions] = [found[j] for j in range(partitions)]
    return _KEYS[partitions]


_KEYS: dict[int, list[int]] = {}


def partition_of_users(users, partitions: int) -> np.ndarray:
    """Each row's partition (0 .. ``partitions``-1) from its user id (an Arrow array): integers
    mixed by Fibonacci hashing; text as memory matches it, without the whitespace at its ends
    (tabs included: " u1\t" is "u1") and cut at a point (memory writes an integral decimal as a
    whole number: "4.00" is "4"; "4.5" shares its partition, harmlessly), each distinct text
    hashed once. Missing ids all go to one partition (whose validation names them)."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

    from metrics_core.inputs.validate import SPACES

    if pa.types.is_integer(users.type):
        mixed = users.fill_null(0).to_numpy().astype(np.uint64) * MIX
    else:
        coded = pc.dictionary_encode(users)
        coded = coded.combine_chunks() if isinstance(coded, pa.ChunkedArray) else coded
        keys = pc.list_element(pc.split_pattern(pc.utf8_trim(coded.dictionary, SPACES), ".", max_splits=1), 0)
        hashed = pd.util.hash_array(keys.to_numpy(zero_copy_only=False))
        mixed = hashed[coded.indices.fill_null(0).to_numpy()] if len(hashed) else np.zeros(len(users), np.uint64)
    return ((mixed >> np.uint64(32)) % np.uint64(partitions)).astype(np.uint16)


@dataclass
class Layout:
    """How a table's rows are laid out for the partition kernel: the user column, each table's
    slots (position -> its column -> slot), every column's Arrow type name, the table column."""

    user: str
    slots: dict[int, dict[str, str]]
    types: dict[str, str]
    table_column: str

    def read(self, position: int, path: str, groups: list[int]):
        """Row groups ``groups`` of a file of table ``position``, laid out: ``table_column`` (the
        position), the user and every slot (the table's columns there, the others null)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        slots = self.slots[position]
        try:
            with pq.ParquetFile(path) as file:
                read = file.read_row_groups(groups, columns=[self.user, *slots], use_threads=False)
            arrays = {self.table_column: pa.array(np.full(read.num_rows, position, np.int8)),
                      self.user: read.column(self.user).cast(pa.type_for_alias(self.types[self.user]))}
            for slot, kind in ((slot, pa.type_for_alias(alias)) for slot, alias in self.types.items()
                               if slot != self.user):
                mine = [column for column, placed in slots.items() if placed == slot]
                arrays[slot] = read.column(mine[0]).cast(kind) if mine else pa.nulls(read.num_rows, kind)
        except (OSError, ValueError, KeyError, IndexError, TypeError, pa.ArrowException) as error:
            raise _changed_while_read(path, error) from None
        return pa.table(arrays)

    def split(self, listed: str, keys: list[int]):
        """One reading task's rows (``listed``: see :func:`reading_tasks`) as a record batch of
        (key, Arrow IPC stream): one per target partition with rows (:func:`partition_of_users`),
        keyed by ``keys``."""
        import pyarrow as pa

        rows = pa.concat_tables([self.read(position, path, groups) for position, path, groups in json.loads(listed)])
        target = partition_of_users(rows.column(self.user), len(keys))
        rows = pa.table({name: _narrowed(rows.column(name)) for name in rows.column_names})
        bounds = np.concatenate([[0], np.cumsum(np.bincount(target, minlength=len(keys)))])
        ordered = rows.take(np.argsort(target, kind="stable"))
        sink = pa.BufferOutputStream()  # (the streams one after the other: the binary column's own data)
        out_keys, ends = [], [0]
        for j in np.flatnonzero(np.diff(bounds)):
            with pa.ipc.new_stream(sink, ordered.schema) as writer:
                writer.write_table(ordered.slice(bounds[j], bounds[j + 1] - bounds[j]))
            out_keys.append(keys[j])
            ends.append(sink.tell())
        blobs = pa.Array.from_buffers(pa.binary(), len(out_keys), [None, pa.py_buffer(np.array(ends, np.int32)),
                                                                    sink.getvalue()])
        return pa.RecordBatch.from_arrays([pa.array(out_keys, pa.int64()), blobs], names=["key", "blob"])

    def in_range(self, start: int | None, end: int | None, listed: str):
        """The rows of users ``start`` <= id < ``end`` (None: no bound; without ``start``, also
        those without a user id) of the row groups ``listed`` (JSON, see :func:`user_ranges`)."""
        import pyarrow.compute as pc

        for position, path, groups in json.loads(listed):
            rows = self.read(position, path, groups)
            users = rows.column(self.user)
            keep = pc.is_valid(users) if start is None else pc.greater_equal(users, start)
            if end is not None:
                keep = pc.and_(keep, pc.less(users, end))
            if start is None:
                keep = pc.or_(keep, pc.is_null(users))
            yield from rows.filter(pc.fill_null(keep, False)).to_batches()

    def unpacked(self, batches):
        """The record batches of the Arrow IPC streams (:meth:`split`) in column ``blob`` of
        ``batches``, each column of the type it was read as."""
        import pyarrow as pa

        schema = None
        for batch in batches:
            for blob in batch.column("blob"):
                for rows in pa.ipc.open_stream(blob.as_buffer()):
                    schema = schema or pa.schema([(name, pa.int8() if name == self.table_column else
                                                   pa.type_for_alias(self.types[name])) for name in rows.schema.names])
                    yield rows.cast(schema)


def _changed_while_read(path: str, error: BaseException) -> RuntimeError:
    """A task's failure to read the row groups the driver found in ``path`` (the file was removed
    or rewritten after the run read its footer) as the error Spark carries back to the driver,
    where it becomes an :class:`~metrics_core.errors.InputError` naming the file."""
    from metrics_core.engines.spark.carried import carried
    from metrics_core.errors import input_error

    reason = str(error).splitlines()[0] if str(error) else type(error).__name__
    return carried(input_error(
        f"Parquet file {path}", f"a Spark task could not read it ({type(error).__name__}: {reason}): it was removed or "
        "rewritten after this evaluation had read its footer.",
        "run the evaluation again once the file is written; replace input files only between runs."))


def rows_by_files(tables: dict, user: str, layout: dict[str, tuple[int, dict[str, str]]], partitions: int | None,
                  table_column: str):
    """Every table of ``tables`` (name -> Spark DataFrame) read by the partitions themselves, as
    (a DataFrame in ``partitions`` partitions, by default one per :data:`PARTITION_ROWS` rows and
    at least two per core, and a function turning one partition's record batches into its
    rows): whole users' rows in the layout of the engine's other road (``layout``; column
    ``table_column`` the table's position). None when a table is not plain local Parquet (see
    the module's text)."""
    files, needed, types = {}, {}, {}
    for name, frame in tables.items():
        paths = parquet_files(frame)
        if paths is None:
            return None
        position, slots = layout[name]
        kinds = {field.name: field.dataType.typeName() for field in frame.schema.fields}
        if any(kind not in ARROW_TYPES for kind in kinds.values()):
            return None
        files[position] = paths
        needed[position] = kinds
        types[user] = types.get(user, ARROW_TYPES[kinds[user]])
        if types[user] != ARROW_TYPES[kinds[user]] or kinds[user] in ("double", "float", "boolean"):
            return None  # (ids of two types, or decimals: the other road's key reads them as text)
        types.update({slot: ARROW_TYPES[kinds[column]] for column, slot in slots.items()})
    groups = Groups.of(files, needed, user)
    if groups is None or not len(groups.rows) or groups.rows.max() > GROUP_ROWS_MAX:
        return None  # (no row group at all: Spark's reader says what is missing)
    spark = next(iter(tables.values())).sparkSession
    partitions = partitions or max(-(-int(groups.rows.sum()) // PARTITION_ROWS),
                                   2 * spark.sparkContext.defaultParallelism)
    laid = Layout(user, {position: slots for position, slots in layout.values()}, types, table_column)
    ranges = user_ranges(groups, partitions) if types[user] != "string" else None
    if ranges is not None:
        listed = spark.createDataFrame(ranges, "start long, `end` long, listed string")

        def in_ranges(batches):
            for batch in batches:
                for start, end, row_groups in zip(*(batch.column(i).to_pylist() for i in range(3)), strict=True):
                    yield from laid.in_range(start, end, row_groups)

        return listed.repartition(len(ranges)), in_ranges
    keys = keys_of_partitions(spark, partitions)

    def split(batches):
        for batch in batches:
            for row_groups in batch.column(0).to_pylist():
                yield laid.split(row_groups, keys)

    tasks = reading_tasks(groups)
    listed = spark.createDataFrame([(task,) for task in tasks], "listed string")
    return listed.repartition(len(tasks)).mapInArrow(split, "key long, blob binary").repartition(partitions, "key"), \
        laid.unpacked


def _narrowed(values):
    """Whole numbers in the narrowest integer type that holds them all (fewer bytes to shuffle;
    :meth:`Layout.unpacked` widens them back); other values as they are."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not pa.types.is_integer(values.type) or values.type.bit_width <= 8 or values.null_count == len(values):
        return values
    extremes = pc.min_max(values)
    low, high = extremes["min"].as_py(), extremes["max"].as_py()
    for kind in (pa.int8(), pa.int16(), pa.int32()):
        if kind.bit_width < values.type.bit_width and -(2 ** (kind.bit_width - 1)) <= low \
                and high < 2 ** (kind.bit_width - 1):
            return values.cast(kind)
    return values
