"""Files are read by what they are, not by their names (issue #42): Parquet named .csv, gzip
and zip, a UTF-8 byte-order mark, UTF-16; workbooks, archives of several files and binary
data are refused naming what they are."""

from __future__ import annotations

import gzip

import pytest
from corpus import CASES, write

from metrics_core import InputError
from metrics_core.inputs.read import read_bytes, read_notes, read_table

ACCEPTED = [c for c in CASES if c.accepted and c.recs_name.endswith((".csv", ".gz", ".zip", ".tsv"))]


@pytest.mark.parametrize("case", ACCEPTED, ids=[c.name for c in ACCEPTED])
def test_every_accepted_container_reads_with_the_plain_columns(tmp_path, case):
    recs, _ = write(case, tmp_path)
    frame = read_table(recs, "recommendations")[0]
    assert list(frame.columns)[:2] == ["user_id", "item_id"], list(frame.columns)  # (no BOM in the name)


def test_how_a_file_was_unpacked_is_a_note(tmp_path):
    data = gzip.compress(b"user_id,item_id,rank\n1,a,1\n")
    frame = read_bytes(data, "recs.csv.gz", "recommendations")[0]
    assert [n.message for n in read_notes(frame)] == ["recommendations (recs.csv.gz): decompressed from gzip."]
    assert read_bytes("user_id,item_id,rank\n1,a,1\n".encode("utf-16"), "r.csv", "recommendations")[0].shape == (1, 3)


@pytest.mark.parametrize(("name", "expected"), [("xlsx", "Excel workbook"), ("binary garbage", "binary data"),
                                                ("zip of two files", "zip archive of 2 files"),
                                                ("trec run with 7 fields", "found 7 on line 1")])
def test_what_cannot_be_read_is_named(tmp_path, name, expected):
    case = next(c for c in CASES if c.name == name)
    recs, _ = write(case, tmp_path)
    with pytest.raises(InputError, match=expected):
        read_table(recs, "recommendations")
    with pytest.raises(InputError, match=expected):
        read_bytes(recs.read_bytes(), recs.name, "recommendations")
