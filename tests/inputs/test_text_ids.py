"""Text ids are held as codes into their distinct texts: the same ids, the same metrics, and no
Python string per row (100M rows of UUID-like ids as strings take about 10 GB)."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics_core import Dataset, evaluate
from metrics_core.errors import InputError
from metrics_core.inputs import text_ids, text_order, validate
from metrics_core.inputs.ids import IdIndex
from metrics_core.inputs.text_ids import TextIds


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["b", "a", " a", "c ", "10", "9", "é", "", "a\x00", "\uffff", "😀"]), min_size=1,
                max_size=6),
       st.lists(st.integers(0, 5), max_size=30))
def test_codes_into_any_texts_become_codes_into_sorted_distinct_texts_in_use(values, rows):
    rows = np.array([r % len(values) for r in rows], dtype=np.int64)
    ids = TextIds.from_codes(rows, np.array(values, dtype=object))
    assert list(ids.values) == sorted({values[r] for r in rows.tolist()})  # sorted, distinct, each in use
    assert list(ids.texts()) == [values[r] for r in rows.tolist()]  # every row keeps its text
    as_arrow = TextIds.from_codes(rows, pa.array(values))  # (Arrow text, as pandas holds it: sorted as it is)
    assert as_arrow.values.tolist() == ids.values.tolist() and as_arrow.codes.tolist() == ids.codes.tolist()
    if len(rows) and set(rows.tolist()) == set(range(len(values))):  # every value used: the shorter path
        for given_values in (np.array(values, dtype=object), pa.array(values, pa.string())):
            shorter = TextIds.from_codes(rows, given_values, all_used=True)
            assert shorter.values.tolist() == ids.values.tolist() and shorter.codes.tolist() == ids.codes.tolist()


def test_codes_into_texts_already_sorted_and_distinct_are_kept_as_they_are():
    """Text that the compiled table coded comes sorted, each text once: its codes are the index's
    codes already (no pass over the rows, no new array); text out of order or repeated is
    sorted and merged as ever."""
    rows = np.array([2, 0, 1, 2, 2], dtype=np.int32)
    ids = TextIds.from_codes(rows, pa.array(["a", "b", "é"], pa.large_string()), all_used=True)
    assert np.shares_memory(ids.codes, rows) and ids.values.tolist() == ["a", "b", "é"]
    for values in (["a", "é", "b"], ["a", "b", "b"]):
        ids = TextIds.from_codes(rows, pa.array(values, pa.large_string()), all_used=True)
        assert list(ids.texts()) == [values[r] for r in rows] and ids.values.tolist() == sorted(set(values))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["b", "a", "a\x00", "", "é", "\uffff", "😀", "ab", "a b"]), max_size=25))
def test_sorting_texts_with_few_repeats_gives_what_hashing_them_first_gives(texts):
    texts = np.array(texts, dtype=object)
    hashed_first = text_ids.sorted_distinct(texts)
    sorted_first = text_ids.sorted_distinct(texts, few_repeats=True)
    assert hashed_first[0].tolist() == sorted_first[0].tolist() == sorted(set(texts.tolist()))
    assert hashed_first[1].tolist() == sorted_first[1].tolist()


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from(["b", "a", "a\x00", "", "é", "\uffff", "😀", "ab", "a b", "B"]), max_size=40))
def test_texts_sorted_in_two_halves_on_threads_are_in_arrows_order(texts):
    """Split by a sampled pivot and sorted half by half, the texts come in the order of Arrow's
    sort of the whole array, ties in their order; all-equal texts (one half empty) too."""
    import pyarrow.compute as pc

    array = pa.array(texts, type=pa.large_string())
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(text_order, "SPLIT_SORT_MIN", 0)
        patch.setattr(text_order, "THREADS", 2)
        split = text_order.sort_order(array)
    assert split.tolist() == pc.array_sort_indices(array).to_numpy().tolist()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "c", "é", "a\x00"]), min_size=1, max_size=5, unique=True),
       st.lists(st.sampled_from(["a", "b", "c", "é", "a\x00", "z"]), min_size=1, max_size=30))
def test_text_ids_get_the_index_codes_of_their_texts_and_minus_one_outside_it(index_texts, rows):
    """Whether the rows' distinct texts are the index's own (codes returned as they are), as many
    but other texts, or fewer."""
    index = IdIndex(np.array(sorted(index_texts), dtype=object))
    ids = TextIds.factorize(np.array(rows, dtype=object))
    expected = [sorted(index_texts).index(text) if text in index_texts else -1 for text in rows]
    assert index.codes(ids).tolist() == expected


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["a", "b", "é", "a\x00", ""]), min_size=1, max_size=8), min_size=1,
                max_size=3), st.booleans())
def test_the_index_of_text_ids_is_every_text_once_sorted_whether_or_not_the_tables_hold_the_same(tables, same):
    """Tables holding the same texts (the usual case) give them as they are; others are merged."""
    if same:
        tables = [tables[0]] * len(tables)
    index = IdIndex.union([TextIds.factorize(np.array(texts, dtype=object)) for texts in tables])
    assert index.ids.tolist() == sorted({text for texts in tables for text in texts})


def test_text_ids_with_the_index_own_texts_keep_their_codes_without_a_lookup():
    ids = TextIds.factorize(np.array(["b", "a", "c", "a"], dtype=object))
    index = IdIndex(np.array(["a", "b", "c"], dtype=object))
    assert index.codes(ids) is ids.codes and ids.codes.tolist() == [1, 0, 2, 0]
    other = IdIndex(np.array(["a", "b", "d"], dtype=object))  # as many texts, not the same
    assert other.codes(ids).tolist() == [1, 0, -1, 0]


def test_ids_that_differ_only_in_a_trailing_nul_character_stay_two_ids():
    """(numpy's fixed-width text drops trailing NULs: sorting the ids that way merged them.)"""
    recs = pd.DataFrame({"user_id": ["u", "u"], "item_id": ["a", "a\x00"], "rank": [1, 2]})
    truth = pd.DataFrame({"user_id": ["u"], "item_id": ["a\x00"]})
    result = evaluate(recs, truth, k=2)
    assert result.per_user["hits"].tolist() == [1]
    assert "duplicate_items" not in {note.code for note in result.warnings}
    assert result.metrics["mrr"] == 0.5


def test_sorted_distinct_writes_other_objects_as_text_and_keeps_a_trailing_nul():
    distinct, position = text_ids.sorted_distinct(np.array(["a\x00", 7, "a", "7"], dtype=object))
    assert distinct.tolist() == ["7", "a", "a\x00"] and position.tolist() == [2, 0, 1, 0]


def test_a_categorical_column_is_read_from_its_categories_with_the_text_rules():
    frame = pd.DataFrame({"user_id": pd.Categorical([" u2", "u1 ", "u2", "7.00", "x"], categories=[
        "x", " u2", "u1 ", "u2", "7.00", "never used"])})
    ids = validate.ids(frame, "user_id", "recs", ["user_id"])
    assert isinstance(ids, TextIds)
    assert list(ids.values) == ["7", "u1", "u2", "x"]  # stripped, "7.00" -> "7", " u2" and "u2" one id
    assert list(ids.texts()) == ["u2", "u1", "u2", "7", "x"]


def test_a_missing_id_in_a_categorical_column_names_the_row():
    frame = pd.DataFrame({"user_id": pd.Categorical(["a", None, "b"]), "item_id": [1, 2, 3]})
    with pytest.raises(InputError, match="1 rows have no id") as caught:
        validate.ids(frame, "user_id", "recs", ["user_id", "item_id"])
    assert caught.value.rows.index.tolist() == [1]


def test_numbers_in_one_table_match_text_in_another():
    truth = pd.DataFrame({"user_id": ["1", "2"], "item_id": [10, 20]})
    recs = pd.DataFrame({"user_id": [1, 1, 2, 2], "item_id": ["10", "11", "21", "20"], "rank": [1, 2, 1, 2]})
    result = evaluate(recs, truth, k=2)
    assert result.metrics["hit_rate"] == 1.0


@pytest.mark.parametrize("dictionary", [False, True])
@pytest.mark.parametrize("threads_from", [1 << 20, 100])
def test_text_ids_read_from_parquet_give_the_metrics_of_the_same_ids_as_numbers(tmp_path, dictionary,
                                                                              threads_from, monkeypatch):
    """Rows shuffled, ids as text in Parquet (plain or dictionary-encoded columns), hashed on one
    thread or in shares on several, against the same data with integer ids."""
    monkeypatch.setattr(text_ids, "PARALLEL_MIN", threads_from)
    rng = np.random.default_rng(5)
    users = np.repeat(np.arange(300), 8)
    recs = pd.DataFrame({"user_id": users, "item_id": rng.integers(0, 90, len(users)),
                         "score": rng.random(len(users))}).sample(frac=1.0, random_state=2)
    truth = pd.DataFrame({"user_id": rng.integers(0, 320, 900), "item_id": rng.integers(0, 90, 900)})

    def as_text(frame: pd.DataFrame, path) -> str:
        text = frame.assign(user_id="user-" + frame.user_id.astype(str), item_id="SKU-" + frame.item_id.astype(str))
        pq.write_table(pa.Table.from_pandas(text, preserve_index=False), path, use_dictionary=dictionary)
        return str(path)

    text = evaluate(as_text(recs, tmp_path / "recs.parquet"), as_text(truth, tmp_path / "truth.parquet"), k=5)
    numbers = evaluate(recs, truth, k=5)
    assert text.metrics.keys() == numbers.metrics.keys()
    for metric, value in numbers.metrics.items():
        assert text.metrics[metric] == pytest.approx(value, abs=1e-12), metric


def test_text_ids_never_become_a_python_string_per_row():
    """200k rows over 1,000 distinct ids: a string per row alone would take over 12 MB."""
    rows, distinct = 200_000, 1000
    codes = np.random.default_rng(0).integers(0, distinct, rows)
    texts = pd.array([f"user-{i:08d}-7d1e-4b2a-9c3f-5e8a0b1c2d3e" for i in range(distinct)], dtype="str")
    frame = pd.DataFrame({"user_id": texts.take(codes)})
    tracemalloc.start()
    try:
        ids = validate.ids(frame, "user_id", "recs", ["user_id"])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(ids.values) == distinct
    assert peak < 6_000_000, f"reading 200k text ids took {peak / 1e6:.1f} MB"


def test_whole_lists_of_text_ids_are_found_on_their_codes():
    users = np.repeat([f"u{i:03d}" for i in range(50)], 4)
    recs = pd.DataFrame({"user_id": users, "item_id": np.tile(["a", "b", "c", "d"], 50),
                         "rank": np.tile([1, 2, 3, 4], 50)})
    truth = pd.DataFrame({"user_id": ["u001", "u049"], "item_id": ["c", "a"]})
    data = Dataset.build(recs, truth)
    lists = data.lists["model"]
    assert not lists.items.flags.writeable  # whole lists used in place: the heads were found
    assert lists.hit[data.users.codes(TextIds.factorize(np.array(["u001"])))[0], 2]
