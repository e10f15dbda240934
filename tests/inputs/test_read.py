"""Every input format: CSV, Parquet, TREC run/qrels, DataFrames, Evidently's long table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from metrics_core import Dataset, evaluate
from metrics_core.errors import InputError
from metrics_core.inputs.read import read_bytes, read_table


def test_csv_parquet_and_frames_agree(tmp_path, three_users):
    recs, truth, _ = three_users
    recs.to_csv(tmp_path / "r.csv", index=False)
    recs.to_parquet(tmp_path / "r.parquet")
    truth.to_csv(tmp_path / "t.tsv", sep="\t", index=False)
    a = evaluate(recs, truth, k=3).metrics
    assert evaluate(tmp_path / "r.csv", tmp_path / "t.tsv", k=3).metrics == a
    assert evaluate(str(tmp_path / "r.parquet"), truth, k=3).metrics == a


def test_trec_run_and_qrels(tmp_path):
    (tmp_path / "sys.run").write_text(
        "q1 Q0 d1 1 2.0 sys\nq1 Q0 d2 2 1.5 sys\nq1 Q0 d3 3 1.5 sys\nq2 Q0 d9 1 0.3 sys\n"
    )
    (tmp_path / "truth.qrels").write_text("q1 0 d3 1\nq1 0 d4 0\nq2 0 d9 2\n")
    from metrics_core import Columns

    graded = Columns(relevance="relevance", threshold=1)
    default = evaluate(tmp_path / "sys.run", tmp_path / "truth.qrels", k=2, columns=graded)
    assert default.users["evaluated"] == 2
    assert default.per_user.loc["q1", "hits"] == 0  # by rank: d3 is third
    trec = evaluate(tmp_path / "sys.run", tmp_path / "truth.qrels", k=2, columns=graded, preset="trec_eval")
    assert trec.per_user.loc["q1", "hits"] == 1  # by score, tie d2/d3 broken by docno descending: d3 first


def test_evidently_long_table():
    table = pd.DataFrame({
        "user": [1, 1, 1, 2, 2, 2],
        "item": ["a", "b", "c", "a", "b", "z"],
        "prediction": [1, 2, None, 1, 2, None],
        "target": [0, 1, 1, 1, 0, 1],
    })
    result = Dataset.from_long_table(table, "user", "item", "prediction", "target").evaluate()
    # user 1: b relevant at rank 2, c relevant and not predicted; user 2: a at rank 1, z missed
    assert result.per_user.loc[1, "recall"] == pytest.approx(0.5)
    assert result.per_user.loc[2, "rr"] == 1.0


def test_parquet_read_only_needed_columns(tmp_path, three_users):
    recs, truth, _ = three_users
    recs.assign(extra=["x"] * len(recs)).to_parquet(tmp_path / "r.parquet")
    assert evaluate(tmp_path / "r.parquet", truth, k=3).metrics["precision"] == pytest.approx(4 / 9)


def test_parquet_columns_keep_their_types_and_a_stored_index_is_not_a_column(tmp_path):
    frame = pd.DataFrame({"user_id": ["u1", "u2", "u3"], "item_id": [7, 8, 9], "rank": [1, 1, 1],
                          "grade": pd.array([1, None, 3], dtype="Int64"), "score": [0.5, 0.25, 1.0]},
                         index=pd.Index([10, 20, 30], name="row"))
    frame.to_parquet(tmp_path / "t.parquet")  # pandas stores the index as a column
    read, _ = read_table(tmp_path / "t.parquet", "t")
    assert list(read.columns) == ["user_id", "item_id", "rank", "grade", "score"]
    assert list(read.index) == [0, 1, 2]
    assert read["item_id"].dtype == "int32" and read["score"].dtype == "float64"  # int64 that fits 32 bits
    assert read["item_id"].tolist() == [7, 8, 9] and read["user_id"].tolist() == ["u1", "u2", "u3"]
    assert read["grade"].isna().tolist() == [False, True, False] and read["grade"].iloc[2] == 3
    only, _ = read_table(tmp_path / "t.parquet", "t", ["item_id", "absent", "user_id"])
    assert list(only.columns) == ["item_id", "user_id"]
    uploaded, _ = read_bytes((tmp_path / "t.parquet").read_bytes(), "t.parquet", "t")  # the app's reader
    pd.testing.assert_frame_equal(uploaded, read)


@pytest.mark.parametrize("statistics", [True, False])
def test_parquet_read_by_row_group_gives_every_row_in_order_and_nulls_stay_missing(tmp_path, statistics,
                                                                                 monkeypatch):
    """Number columns go into numpy arrays a row group at a time (on several threads); a column
    with a null in one row group, or a file without statistics, is read the general way."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from metrics_core.inputs import read as read_module

    monkeypatch.setattr("metrics_core._numeric.parallel.THREADS", 3)
    rng = np.random.default_rng(0)
    n = 10_007
    with_null = rng.random(n)
    with_null[9_000] = np.nan  # only in the last row groups
    table = pa.table({"user_id": rng.integers(-5, 2**40, n), "item_id": pa.array(rng.integers(0, 99, n), pa.int32()),
                      "score": pa.array(rng.random(n), pa.float32()), "rank": rng.integers(1, 9, n),
                      "grade": pa.array(with_null, from_pandas=True), "name": [f"u{i}" for i in range(n)]})
    path = tmp_path / "t.parquet"
    pq.write_table(table, path, row_group_size=1_000, write_statistics=statistics)
    by_group = []
    real = read_module._numbers_by_row_group
    monkeypatch.setattr(read_module, "_numbers_by_row_group",
                        lambda *args: by_group.append(dict(args[2])) or real(*args))
    read, _ = read_table(path, "t")
    expected = table.to_pandas()
    narrowed = {"rank": np.int32} if statistics else {}  # int64 ranks 1..8 fit 32 bits; ids up to 2^40 do not
    for name in ["user_id", "item_id", "score", "rank"]:
        assert read[name].dtype == narrowed.get(name, expected[name].dtype)
        np.testing.assert_array_equal(read[name].to_numpy(), expected[name].to_numpy())
    assert read["grade"].isna().sum() == 1 and read["grade"].isna().to_numpy()[9_000]
    assert read["name"].tolist() == expected["name"].tolist()
    assert by_group == ([{"user_id": np.int64, "item_id": np.int32, "score": np.float32, "rank": np.int32}]
                        if statistics else [])
    uploaded, _ = read_bytes(path.read_bytes(), "t.parquet", "t")  # a file object: one reader, in turn
    pd.testing.assert_frame_equal(uploaded, read)


@pytest.mark.parametrize(("low", "high", "dtype"), [(-2**31, 2**31 - 1, np.int32), (0, 2**31, np.int64),
                                                     (-2**31 - 1, 0, np.int64)])
def test_parquet_integers_are_read_as_int32_only_when_every_row_group_fits(tmp_path, low, high, dtype):
    """The range comes from the statistics of all row groups (the extreme sits in the last)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "ids.parquet"
    values = [0] * 2_000 + [low, high]
    pq.write_table(pa.table({"user_id": pa.array(values, pa.int64())}), path, row_group_size=1_000)
    read, _ = read_table(path, "ids")
    assert read["user_id"].dtype == dtype
    assert read["user_id"].tolist() == values


def test_a_null_in_an_integer_column_after_a_struct_column_stays_missing(tmp_path, monkeypatch):
    """A struct column has a Parquet leaf per field, so the rank's statistics are not at its
    Arrow field number (they were read from another column, and a missing rank became -2^63).
    A null the statistics do not announce also falls back to the general read."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from metrics_core.errors import InputError
    from metrics_core.inputs import read as read_module

    path = tmp_path / "recs.parquet"
    pq.write_table(pa.table({"pair": pa.array([{"a": 1, "b": 2}] * 4), "user_id": [1, 1, 2, 2],
                             "item_id": [5, 6, 5, 7], "rank": pa.array([1, None, 1, 2])}), path)
    read, _ = read_table(path, "recommendations")
    assert read["rank"].isna().tolist() == [False, True, False, False]
    with pytest.raises(InputError, match="rank") as error:
        evaluate(path, pd.DataFrame({"user_id": [1], "item_id": [5]}), k=2)
    assert error.value.rows.index.tolist() == [1]
    monkeypatch.setattr(read_module, "_number_type",  # lying statistics
                        lambda file, name: np.dtype(np.int64) if name == "rank" else None)
    again, _ = read_table(path, "recommendations")
    np.testing.assert_array_equal(again["rank"].to_numpy(), read["rank"].to_numpy())


@pytest.mark.parametrize("outside", [2**40, -2**31 - 1])
def test_an_integer_outside_int32_is_read_exactly_when_the_statistics_say_it_fits(tmp_path, monkeypatch, outside):
    """A checked narrowing: a range the statistics got wrong falls back to the general read,
    never a wrapped value (2^40 would become 0 as int32, -2^31 - 1 would become 2^31 - 1)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from metrics_core.inputs import read as read_module

    path = tmp_path / "recs.parquet"
    pq.write_table(pa.table({"user_id": pa.array([1, outside, 3], pa.int64())}), path)
    monkeypatch.setattr(read_module, "_number_type", lambda file, name: np.dtype(np.int32))  # lying statistics
    read, _ = read_table(path, "recommendations")
    assert read["user_id"].tolist() == [1, outside, 3]


def test_parquet_the_reader_cannot_decode_is_an_input_error(tmp_path, monkeypatch):
    """Arrow raises NotImplementedError (not ValueError) for features it cannot read; that is
    bad input to the user, so it must become a message, not an internal error."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from metrics_core.errors import InputError

    path = tmp_path / "recs.parquet"
    pd.DataFrame({"user_id": [1], "item_id": [2], "rank": [1]}).to_parquet(path)

    def unsupported(*args, **kwargs):
        raise pa.ArrowNotImplementedError("Nested data conversions not implemented for chunked array outputs")

    monkeypatch.setattr(pq.ParquetFile, "read", unsupported)
    monkeypatch.setattr(pq.ParquetFile, "read_row_group", unsupported)  # (number columns are read by row group)
    with pytest.raises(InputError) as error:
        read_table(path, "recommendations")
    assert "recs.parquet" in str(error.value) and "could not be read" in str(error.value)


def test_a_parquet_footer_the_reader_cannot_open_is_an_input_error(tmp_path, monkeypatch):
    """The same when opening the file itself raises Arrow's NotImplementedError (the build opens
    each Parquet model first to count its rows): a message naming the file, not an internal error."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from metrics_core import evaluate
    from metrics_core.errors import InputError

    recs, truth = tmp_path / "recs.parquet", tmp_path / "truth.parquet"
    pd.DataFrame({"user_id": [1, 1], "item_id": [2, 3], "rank": [1, 2]}).to_parquet(recs)
    pd.DataFrame({"user_id": [1], "item_id": [2]}).to_parquet(truth)

    def unsupported(*args, **kwargs):
        raise pa.ArrowNotImplementedError("a Parquet feature this pyarrow lacks")

    monkeypatch.setattr(pq, "ParquetFile", unsupported)
    with pytest.raises(InputError) as error:
        evaluate(recs, truth, k=2)
    assert "recs.parquet" in str(error.value) and "could not be read" in str(error.value)


CSV_CASES = {
    "numbers": "user_id,item_id,rank\n1,10,1\n1,11,2\n2,10,1\n",
    "padded text and numbers": "user_id;item_id;score\n u1 ; 007 ;0,5\nu1;7;0,25\n 2;x;1,5\n",
    "integral decimals": "user_id,item_id,score\n 4.00 ,7.0,0.5\n4,7,0.25\n",
    "ids beyond int64": "user_id,item_id,rank\n18446744073709551615,1,1\n9223372036854775808,2,1\n5,1,1\n",
    "a text column beside": "user_id,item_id,rank,note\n1,10,1,ok\n2,11,1,ok\n",  # pandas reads it
    "dates beside": "user_id,item_id,rank,when\n1,10,1,2024-01-01\n",  # pandas keeps them as text
    "mixed ids far down": "user_id,item_id,rank\n" + "".join(f"{u},1,1\n" for u in range(3000)) + "abc,1,1\n",
    "a fraction far down": "user_id,item_id,rank\n" + "".join(f"{u},1,1\n" for u in range(3000)) + "7,1,2.5\n",
    "text scores far down": "user_id,item_id,score\n" + "".join(f"{u},1,0.5\n" for u in range(3000)) + "7,1,x\n",
    "ids beyond int64 far down": "user_id,item_id,rank\n" + "".join(f"{u},1,1\n" for u in range(3000))
                                 + "9223372036854775808,2,1\n",
}


@pytest.mark.parametrize("text", CSV_CASES.values(), ids=CSV_CASES.keys())
def test_arrow_csv_reader_gives_the_ids_and_numbers_pandas_gives(tmp_path, text, request, monkeypatch):
    """The id columns Arrow reads as codes into texts become, after validation, exactly the ids
    pandas' reader gives (numbers where pandas reads numbers, exact text otherwise); a column
    that changes type after the block whose types the whole read is given (1 KB here) too."""
    from metrics_core.inputs import read as read_module
    from metrics_core.inputs import validate
    from metrics_core.inputs.text_ids import is_text

    monkeypatch.setattr(read_module, "TYPE_BLOCK_BYTES", 1 << 10)
    path = tmp_path / "recs.csv"
    path.write_text(text)
    fast, _ = read_table(path, "recommendations", ids=["user_id", "item_id"])
    plain, _ = read_table(path, "recommendations")
    pandas_reads = ("beside", "beyond", "decimals", "text scores")  # Arrow reads the others
    assert bool(fast.attrs.get(validate.NUMBERS_AS_TEXT)) != any(w in request.node.callspec.id for w in pandas_reads)
    for column in ("user_id", "item_id"):
        got, expected = (validate.ids(frame, column, "recs", [column]) for frame in (fast, plain))
        assert is_text(got) == is_text(expected), column
        if is_text(got):
            assert list(got.texts()) == list(expected.texts()), column
        else:
            assert got.tolist() == expected.tolist() and got.dtype == expected.dtype, column
    numbers = [c for c in plain.columns if c not in ("user_id", "item_id") and plain[c].dtype.kind in "if"]
    pd.testing.assert_frame_equal(fast[numbers], plain[numbers])


def test_a_large_csv_is_read_with_the_number_types_of_its_first_block(tmp_path, monkeypatch):
    """Arrow's reader gets the types its first block has (one read, no inference block by
    block); a file or an upload alike."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    from metrics_core.inputs import read as read_module

    monkeypatch.setattr(read_module, "TYPE_BLOCK_BYTES", 1 << 10)
    text = "user_id,item_id,score,note\n" + "".join(f"{u},{u % 7},{u / 3},x\n" for u in range(3000))
    (tmp_path / "recs.csv").write_text(text)
    given = []
    plain_read = pacsv.read_csv

    def spy(source, **options):
        given.append(options["convert_options"].column_types)
        return plain_read(source, **options)

    monkeypatch.setattr(pacsv, "read_csv", spy)
    wanted, ids = ["user_id", "item_id", "score"], ["user_id", "item_id"]
    frames = [read_table(tmp_path / "recs.csv", "recommendations", wanted, ids=ids)[0],
              read_module._read_csv(text.encode(), ".csv", "upload", columns=wanted, ids=ids)]
    for frame in frames:
        assert frame["score"].tolist() == pytest.approx([u / 3 for u in range(3000)])
        assert frame["item_id"].tolist() == [u % 7 for u in range(3000)]
    assert given == [{"user_id": pa.int64(), "item_id": pa.int64(), "score": pa.float64()}] * 2


def test_a_csv_with_a_short_line_gets_pandas_message(tmp_path):
    (tmp_path / "recs.csv").write_text("user_id,item_id,rank\n1,10,1\n1,11,2,9\n")
    with pytest.raises(Exception, match="could not be read"):
        read_table(tmp_path / "recs.csv", "recommendations", ids=["user_id", "item_id"])


def text_id_table(n: int, seed: int = 0):
    """Users mostly distinct (their dictionary page overflows into plain text), items from a
    few SKUs (coded throughout), with texts of several lengths, a NUL, a space and non-ASCII."""
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    users = np.array([f"user-{i:06d}" for i in range(n // 3)] + ["a\x00", " é ", "7.00"], dtype=object)
    items = np.array(["sku-1", "sku-22", "SKU-333", "x", "ü"], dtype=object)
    return pa.table({"user_id": users[rng.integers(0, len(users), n)], "item_id": items[rng.integers(0, 5, n)],
                     "rank": np.tile(np.arange(1, 11), n // 10 + 1)[:n]})


@pytest.mark.parametrize(("threads", "unchecked"), [(1, True), (3, True), (3, False)])
def test_text_ids_stored_as_codes_or_coded_while_read_give_the_ids_of_the_plain_read(tmp_path, threads, unchecked,
                                                                                     monkeypatch):
    """Item ids the file stores as dictionary codes are coded one row group's dictionary at a
    time; user ids it stores as plain text are coded by the compiled table as the row groups are
    read (in batches that cross row groups, on any number of threads). Both give the texts, and
    then the ids, of reading every row's text; their categories are made without pandas'
    uniqueness check, or with it when pandas lacks the way around it (``unchecked`` False)."""
    import pyarrow.parquet as pq

    from metrics_core.inputs import read as read_module
    from metrics_core.inputs import text_hash, validate

    if not unchecked:
        monkeypatch.delattr(pd.CategoricalDtype, "_from_fastpath", raising=False)
    monkeypatch.setattr("metrics_core._numeric.parallel.THREADS", threads)
    monkeypatch.setattr(read_module, "COMPILED_MIN", 0)
    monkeypatch.setattr(text_hash, "BATCH_ROWS", 700)
    table = text_id_table(10_000)
    path = tmp_path / "t.parquet"
    pq.write_table(table, path, row_group_size=1_000, dictionary_pagesize_limit=2_000)
    file = pq.ParquetFile(path)
    assert read_module._stored_as_codes(file, "item_id") and not read_module._stored_as_codes(file, "user_id")
    read, _ = read_table(path, "t", ids=["user_id", "item_id"])
    assert read.attrs[validate.ALL_CATEGORIES_USED] == ["user_id", "item_id"]
    plain, _ = read_table(path, "t")  # (no ids named: every row's text)
    for name in ["user_id", "item_id"]:
        assert isinstance(read[name].dtype, pd.CategoricalDtype)
        assert read[name].astype(object).tolist() == table.column(name).to_pylist()
        assert plain[name].tolist() == table.column(name).to_pylist()
        coded, texts = validate.ids(read, name, "t", [name]), validate.ids(plain, name, "t", [name])
        assert list(coded.values) == list(texts.values) and list(coded.texts()) == list(texts.texts())
    assert read["rank"].tolist() == table.column("rank").to_pylist()


@pytest.mark.parametrize("large", [False, True])
def test_texts_a_files_dictionary_holds_that_no_row_uses_are_not_ids(tmp_path, large, monkeypatch):
    """A writer may store dictionary texts no row uses; read as codes (large: one row group's
    dictionary at a time, by the compiled table), they are not ids, and the ids are the plain
    read's."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from metrics_core.inputs import read as read_module
    from metrics_core.inputs import validate

    if large:
        monkeypatch.setattr(read_module, "COMPILED_MIN", 0)
    indices = np.tile(np.array([1, 3, 1, 2], dtype=np.int32), 500)
    items = pa.DictionaryArray.from_arrays(pa.array(indices), pa.array(["unused", "sku-1", "x", "ü", "never"]))
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"user_id": np.arange(len(indices)) % 7, "item_id": items}), path,
                   row_group_size=500, store_schema=False)  # (without Arrow's schema the column reads as text)
    read, _ = read_table(path, "t", ids=["item_id"])
    assert isinstance(read["item_id"].dtype, pd.CategoricalDtype)
    coded = validate.ids(read, "item_id", "t", ["item_id"])
    assert list(coded.values) == ["sku-1", "x", "ü"]
    assert list(coded.texts()) == items.to_pylist()
    assert (validate.ALL_CATEGORIES_USED in read.attrs) == large


@pytest.mark.parametrize("statistics", [True, False])
def test_a_null_text_id_read_either_way_is_named_like_any_missing_id(tmp_path, statistics, monkeypatch):
    """With the row groups' null counts the compiled coding is not tried; without them it stops
    at the null's batch and the column is read the general way. The error names the row."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from metrics_core.inputs import read as read_module

    monkeypatch.setattr(read_module, "COMPILED_MIN", 0)
    table = text_id_table(5_000)
    users, items = table.column("user_id").to_pylist(), table.column("item_id").to_pylist()
    users[4_321], items[17] = None, None
    for name, values in (("user_id", users), ("item_id", items)):
        path = tmp_path / f"{name}.parquet"
        pq.write_table(table.set_column(table.schema.get_field_index(name), name, pa.array(values)), path,
                       row_group_size=1_000, write_statistics=statistics, dictionary_pagesize_limit=2_000)
        with pytest.raises(InputError) as error:
            Dataset.build(path, pd.DataFrame({"user_id": ["user-000001"], "item_id": ["x"]}))
        assert "1 rows have no id" in str(error.value) and name in str(error.value)
        assert str(4_321 if name == "user_id" else 17) in str(error.value)
