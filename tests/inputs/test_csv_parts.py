"""A large CSV of numbers read in byte ranges on threads (metrics_core.inputs.csv_parts) gives the
columns pandas reads, and anything that path cannot read exactly is read whole instead."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from metrics_core.inputs import csv_parts
from metrics_core.inputs import read as read_module
from metrics_core.inputs.read import read_table

IDS = ["user_id", "item_id"]


@pytest.fixture
def small_parts(monkeypatch):
    """Every file is read in parts, in blocks of a few lines, the types from its first 512 bytes;
    the calls of the range reader are recorded (None: the file was read whole after all)."""
    monkeypatch.setattr(csv_parts, "PARTS_MIN_BYTES", 0)
    monkeypatch.setattr(csv_parts, "BLOCK_BYTES", 200)
    monkeypatch.setattr(read_module, "TYPE_BLOCK_BYTES", 512)
    calls, real = [], csv_parts.read_in_parts

    def spy(*args, **kwargs):
        calls.append(real(*args, **kwargs))
        return calls[-1]

    monkeypatch.setattr(csv_parts, "read_in_parts", spy)
    return calls


def numbers_csv(n: int, seed: int, newline: str = "\n", last_newline: bool = True) -> str:
    rng = np.random.default_rng(seed)
    users, items = rng.integers(-5, 10**12, n), rng.integers(0, 60, n)
    scores = rng.normal(size=n) * 10.0 ** rng.integers(-3, 4, n)
    ranks = rng.integers(1, 101, n)
    lines = [f"{u},{i},{float(s)!r},{r}" for u, i, s, r in zip(users, items, scores, ranks, strict=True)]
    return "user_id,item_id,score,rank" + newline + newline.join(lines) + (newline if last_newline else "")


@pytest.mark.parametrize("parts", [1, 2, 3, 7])
@pytest.mark.parametrize(("newline", "last_newline"), [("\n", True), ("\r\n", True), ("\n", False)])
def test_ranges_read_on_threads_give_the_columns_pandas_reads(tmp_path, small_parts, parts, newline, last_newline,
                                                              monkeypatch):
    """Any number of ranges (more than the file's blocks too), blocks of a few lines, CRLF line
    ends and a last line without one: the rows in the file's order, exactly pandas' values."""
    monkeypatch.setattr(csv_parts, "THREADS", parts)
    path = tmp_path / "recs.csv"
    path.write_bytes(numbers_csv(400, parts, newline, last_newline).encode())
    frame, _ = read_table(path, "recommendations", ids=IDS)
    assert small_parts and small_parts[0] is not None  # (read in parts, not whole)
    expected = pd.read_csv(path)
    pd.testing.assert_frame_equal(frame.reset_index(drop=True), expected, check_exact=True)


CASES = {
    "a missing score": ("user_id,item_id,score\n" + "".join(f"{u},1,0.5\n" for u in range(300)) + "7,1,NA\n"),
    "a quoted number": ("user_id,item_id,rank\n" + "".join(f"{u},1,1\n" for u in range(300)) + '7,"2",1\n'),
    "text ids far down": ("user_id,item_id,rank\n" + "".join(f"{u},1,1\n" for u in range(300)) + "abc,1,1\n"),
    "fractions far down": ("user_id,item_id,rank\n" + "".join(f"{u},1,1\n" for u in range(300)) + "7,1,2.5\n"),
    "many short lines after long ones": ("user_id,item_id,score\n"
                                         + "".join(f"{u},1,0.{'1' * 40}\n" for u in range(40))
                                         + "".join("1,1,1\n" for _ in range(3000))),
}


@pytest.mark.parametrize("text", CASES.values(), ids=CASES.keys())
def test_what_the_ranges_cannot_read_exactly_is_read_whole_with_pandas_values(tmp_path, small_parts, text):
    """A null, a quote, a column that changes type after the first block, or a range with far
    more rows than its first block suggested: the range reader declines (None) and the file is
    read whole, giving pandas' values."""
    from metrics_core.inputs import validate

    path = tmp_path / "recs.csv"
    path.write_text(text)
    frame, _ = read_table(path, "recommendations", ids=IDS)
    assert small_parts == [None]
    expected = pd.read_csv(path)
    for column in IDS:
        got, want = (validate.ids(table, column, "recs", [column]) for table in (frame, expected))
        assert [str(v) for v in (got.texts() if hasattr(got, "texts") else got)] == \
            [str(v) for v in (want.texts() if hasattr(want, "texts") else want)]
    numbers = [c for c in expected.columns if c not in IDS]
    pd.testing.assert_frame_equal(frame[numbers].reset_index(drop=True), expected[numbers], check_dtype=False)


def test_a_quoted_text_column_not_asked_for_sends_the_file_to_the_whole_read(tmp_path, small_parts):
    """The ranges do not parse quotes: a quoted text in a column nobody asked for can hide a line
    end, which they would read as a second row. Every column must be a number for the ranges;
    an unwanted number column is converted too (a quote there fails) but not kept."""
    wanted = ["user_id", "item_id", "rank"]
    path = tmp_path / "recs.csv"
    path.write_text("user_id,item_id,rank,note\n" + "".join(f"{u},1,1,a\n" for u in range(300))
                    + '7,2,1,"first line\n8,3,2,x"\n')
    frame, _ = read_table(path, "recommendations", wanted, IDS)
    assert small_parts == [] and len(frame) == 301  # (the note is text: not read in parts, one record one row)
    pd.testing.assert_frame_equal(frame[wanted].reset_index(drop=True), pd.read_csv(path)[wanted])
    numbers = tmp_path / "numbers.csv"
    numbers.write_text("user_id,item_id,rank,seen\n" + "".join(f"{u},1,1,{u * 7}\n" for u in range(300))
                       + '7,2,1,"5\n8,3,2,6"\n')
    frame, _ = read_table(numbers, "recommendations", wanted, IDS)
    assert small_parts == [None] and len(frame) == 301  # (a quote in the number column: read whole)
    pd.testing.assert_frame_equal(frame[wanted].reset_index(drop=True), pd.read_csv(numbers)[wanted])
    numbers.write_text("user_id,item_id,rank,seen\n" + "".join(f"{u},1,1,{u * 7}\n" for u in range(300)))
    frame, _ = read_table(numbers, "recommendations", wanted, IDS)
    assert small_parts[-1] is not None and list(frame.columns) == wanted  # (in parts; the unwanted column dropped)
    pd.testing.assert_frame_equal(frame.reset_index(drop=True), pd.read_csv(numbers)[wanted])


def test_a_line_with_a_field_too_many_is_pandas_error(tmp_path, small_parts):
    path = tmp_path / "recs.csv"
    path.write_text("user_id,item_id,rank\n" + "".join(f"{u},1,1\n" for u in range(300)) + "7,1,1,9\n")
    with pytest.raises(Exception, match="could not be read"):
        read_table(path, "recommendations", ids=IDS)
    assert small_parts == [None]


def test_text_ids_and_uploads_are_not_read_in_parts(tmp_path, small_parts):
    """Text ids (not numbers by the first block) and bytes (an upload) go the whole-file way."""
    path = tmp_path / "recs.csv"
    path.write_text("user_id,item_id,rank\n" + "".join(f"u{u},1,1\n" for u in range(300)))
    assert read_table(path, "recommendations", ids=IDS)[0]["rank"].sum() == 300
    assert read_module._read_csv(numbers_csv(50, 0).encode(), ".csv", "upload", ids=IDS)["rank"].dtype.kind == "i"
    assert small_parts == []


def test_a_file_that_cannot_be_mapped_is_read_whole(tmp_path, small_parts, monkeypatch):
    """Memory-mapping can fail where reading works (some file systems): the whole-file read
    then gives the values, not an error."""
    import pyarrow as pa

    def unmappable(*args, **kwargs):
        raise OSError("mmap not supported")

    monkeypatch.setattr(pa, "memory_map", unmappable)
    path = tmp_path / "recs.csv"
    path.write_text(numbers_csv(200, 3))
    frame, _ = read_table(path, "recommendations", ids=IDS)
    assert small_parts == [None]
    pd.testing.assert_frame_equal(frame.reset_index(drop=True), pd.read_csv(path), check_exact=True)
