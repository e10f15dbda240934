"""The compiled text table codes every text exactly as Arrow's dictionary encoding does: the same
rows share a code, whatever the chunks, lengths, bytes, growth or threads, and equal hashes
never merge two texts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics_core import evaluate
from metrics_core.inputs import text_hash, text_ids, validate
from metrics_core.inputs.text_ids import TextIds

ARENA_MAX = text_hash.ARENA_MAX  # the real limit, before a test lowers it
TEXTS = st.text(alphabet=st.sampled_from(["a", "b", "é", "\x00", "😀", " ", "7"]), max_size=20)


def assert_codes_the_texts(column: pa.ChunkedArray, threads: int = 2) -> np.ndarray:
    codes, distinct = text_hash.factorize(column, threads=threads)
    texts = column.to_pylist()
    assert distinct.to_pylist() == sorted(set(distinct.to_pylist()))  # each text once, sorted by code point
    assert [distinct[int(c)].as_py() for c in codes] == texts  # every row its own text
    assert sorted(distinct.to_pylist()) == sorted(set(texts))  # and only texts that occur
    return codes


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(TEXTS, max_size=40), min_size=1, max_size=4), st.booleans(), st.integers(1, 3))
def test_codes_are_exact_for_any_texts_chunks_and_threads(chunks, large, threads):
    kind = pa.large_string() if large else pa.string()
    column = pa.chunked_array([pa.array(chunk, type=kind) for chunk in chunks], type=kind)
    assert_codes_the_texts(column, threads)


def test_sliced_chunks_of_both_offset_widths_and_texts_of_every_length_around_a_word():
    texts = ["x" * n for n in range(0, 70)] + [f"id-{i}" for i in range(3000)] * 2
    whole = pa.array(texts)
    parts = pa.chunked_array([whole.slice(5, 2000), whole.slice(2005)])  # chunks that start inside a buffer
    assert_codes_the_texts(parts)
    column = pa.chunked_array([pa.array(texts[:100], pa.large_string()), pa.array(texts[100:], pa.large_string())])
    assert_codes_the_texts(column)


def test_a_column_in_one_chunk_is_shared_between_the_threads(monkeypatch):
    """A column read as one chunk is cut into pieces, so that each thread codes a share of its rows
    (and the second share's texts are merged into the first's table, in pieces too)."""
    monkeypatch.setattr(text_hash, "PIECE_ROWS", 7)
    texts = [f"u{v}" for v in np.random.default_rng(5).integers(0, 40, 101)]
    for kind in (pa.string(), pa.large_string()):
        column = pa.chunked_array([pa.array(texts, kind)])
        pieces = text_hash._pieces(column)
        assert [row for _, _, row in pieces] == list(range(0, 101, 7))
        assert len(text_hash._shares(pieces, 101, 2)) == 2
        assert_codes_the_texts(column, threads=2)
        assert_codes_the_texts(pa.chunked_array([pa.array(texts, kind).slice(3)]), threads=2)
    merged = []
    code = text_hash.Table.code
    monkeypatch.setattr(text_hash.Table, "code",
                        lambda self, *args: merged.append(len(args[0]) - 1) or code(self, *args))
    distinct = pa.chunked_array([pa.array([f"t{i}" for i in range(40)])])
    second_share = 40 - 7 * text_hash._shares(text_hash._pieces(distinct), 40, 2)[0][1]
    text_hash.factorize(distinct, threads=2)
    assert max(merged) == 7 and sum(merged) == 40 + second_share  # every row in pieces, then the second share's texts


def test_the_table_arena_and_starts_grow_from_their_smallest_size():
    rng = np.random.default_rng(3)
    texts = [f"user-{v}" * (1 + v % 5) for v in rng.integers(0, 50_000, 200_000)]
    table = text_hash.Table(1, 1)
    column = pa.chunked_array([pa.array(texts)])
    (offsets, data, _), = text_hash._pieces(column)
    codes = np.empty(len(texts), np.int32)
    assert table.code(offsets, data, codes)
    distinct = table.texts().to_pylist()
    assert [distinct[c] for c in codes] == texts and len(distinct) == len(set(texts))
    assert table.table.shape[0] >= len(distinct) * 2 // text_hash.SLOTS  # grew, at most half full


def test_rows_grouped_by_text_take_the_code_of_the_row_before_across_batches_and_growth():
    """Runs of one text (rows sorted by user) are coded from the row before; a text of the same
    length that differs in its last byte, an empty text after an empty one, runs that cross a
    batch and a table that grows mid-run all keep every row its own text."""
    runs = [("user-0001", 5), ("user-0002", text_hash.BATCH + 3), ("", 2), ("user-0003", 1), ("", 3),
            ("user-0002", 4), ("é", text_hash.BATCH * 2)]
    runs += [(f"u{i}", 1 + i % 7) for i in range(300)]  # enough texts to grow the smallest table mid-run
    texts = [text for text, count in runs for _ in range(count)]
    table = text_hash.Table(1, 1)
    (offsets, data, _), = text_hash._pieces(pa.chunked_array([pa.array(texts)]))
    codes = np.empty(len(texts), np.int32)
    assert table.code(offsets, data, codes)
    distinct = table.texts().to_pylist()
    assert [distinct[c] for c in codes] == texts and len(distinct) == len(set(texts))
    assert_codes_the_texts(pa.chunked_array([pa.array(texts)]))


def test_a_text_whose_fingerprint_equals_another_texts_is_compared_byte_for_byte():
    """Give "a"'s slot the fingerprint "b" will have: "b" must still get a code of its own."""
    table = text_hash.Table(4, 64)
    one = pa.chunked_array([pa.array(["a"])])
    (offsets, data, _), = text_hash._pieces(one)
    table.code(offsets, data, np.empty(1, np.int32))
    b = np.frombuffer(b"b", np.uint8)
    h_b = text_hash.text_hash(b.ctypes.data, 0, 1)
    fingerprint = (h_b & text_hash.LOW32) | (np.uint64(1) << np.uint64(32))  # its hash's low bits, length 1
    line = int(h_b >> np.uint64(32)) & (table.table.shape[0] - 1)
    a_line = np.flatnonzero(table.table[:, text_hash.SLOTS] != 0)[0]
    table.table[line] = table.table[a_line]  # "a" now sits in "b"'s home line, with "b"'s fingerprint
    table.table[line, 0] = fingerprint
    if line != a_line:
        table.table[a_line] = 0
    codes = np.empty(1, np.int32)
    (offsets, data, _), = text_hash._pieces(pa.chunked_array([pa.array(["b"])]))
    assert table.code(offsets, data, codes)
    assert codes[0] == 1 and table.texts().to_pylist() == ["a", "b"]


def test_a_column_beyond_the_tables_limits_is_left_to_arrow(monkeypatch):
    monkeypatch.setattr(text_hash, "ARENA_MAX", 16)
    column = pa.chunked_array([pa.array([f"text-{i}" for i in range(10)])])
    assert text_hash.factorize(column) is None


def test_shares_whose_texts_fit_one_by_one_but_not_together_are_left_to_arrow(monkeypatch):
    """Each thread's 40 distinct texts (320 bytes) fit an arena of 400; merged into the first
    table they do not, and the second share's rows must not keep codes that were never written."""
    monkeypatch.setattr(text_hash, "ARENA_MAX", 400)
    shares = [pa.array([f"{share}{i:07d}" for i in range(40)]) for share in "ab"]
    assert text_hash.factorize(pa.chunked_array(shares[:1]), threads=1) is not None  # one share fits
    assert text_hash.factorize(pa.chunked_array(shares), threads=2) is None


def compiled_calls(monkeypatch) -> list:
    """Make every Arrow text column go to the compiled table; the list collects whether each
    call coded its column (True) or left it to Arrow (False)."""
    monkeypatch.setattr(text_ids, "COMPILED_MIN", 1)
    monkeypatch.setattr(text_ids, "PARALLEL_MIN", 1)
    calls, factorize = [], text_hash.factorize

    def spy(column, *args, **kwargs):
        coded = factorize(column, *args, **kwargs)
        calls.append(coded is not None)
        return coded

    monkeypatch.setattr(text_hash, "factorize", spy)
    return calls


@pytest.mark.parametrize("limit", [16, ARENA_MAX])  # Arrow after the table gave up, or the table
def test_large_text_columns_read_through_the_compiled_table_give_the_same_ids(limit, monkeypatch):
    calls = compiled_calls(monkeypatch)
    monkeypatch.setattr(text_hash, "ARENA_MAX", limit)
    texts = [" u2", "u1 ", "u2", "7.00", "x", "a\x00", "a", "é"] * 5
    frame = pd.DataFrame({"user_id": pd.Series(texts, dtype="str")})
    ids = validate.ids(frame, "user_id", "recs", ["user_id"])
    assert isinstance(ids, TextIds)
    assert list(ids.values) == ["7", "a", "a\x00", "u1", "u2", "x", "é"]
    assert list(ids.texts()) == [t.strip().replace("7.00", "7") for t in texts]
    assert calls == [limit == ARENA_MAX]


def test_metrics_of_text_ids_coded_by_the_compiled_table_equal_those_of_numbers(monkeypatch):
    rng = np.random.default_rng(8)
    users, items = rng.integers(0, 300, 6000), rng.integers(0, 900, 6000)
    recs = pd.DataFrame({"user_id": users, "item_id": items, "rank": np.tile(np.arange(1, 21), 300)})
    recs = recs.drop_duplicates(["user_id", "item_id"]).drop_duplicates(["user_id", "rank"])
    truth = pd.DataFrame({"user_id": rng.integers(0, 300, 2000), "item_id": rng.integers(0, 900, 2000)})
    as_numbers = evaluate(recs, truth, k=10).metrics
    calls = compiled_calls(monkeypatch)

    def as_text(frame):
        return frame.assign(user_id=("u-" + frame.user_id.astype(str)).astype("str"),
                            item_id=("sku-" + frame.item_id.astype(str)).astype("str"))

    as_texts = evaluate(as_text(recs), as_text(truth), k=10).metrics
    assert calls == [True] * 4  # users and items of both tables, by the compiled table
    assert as_texts.keys() == as_numbers.keys()
    for name, value in as_numbers.items():
        assert as_texts[name] == pytest.approx(value, rel=1e-12, nan_ok=True), name
