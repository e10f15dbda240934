"""A corpus of awkward input files: each case is a recommendations file and a ground truth
that the reader accepts (with or without a warning) or refuses. Tests run it through every
entry point and check that each gives the same numbers, refusals and warnings."""

from __future__ import annotations

import gzip
import io
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

PLAIN_RECS = "user_id,item_id,rank\n1,a,1\n1,b,2\n1,c,3\n2,a,1\n2,d,2\n3,b,1\n3,c,2\n"
PLAIN_TRUTH = "user_id,item_id\n1,a\n1,c\n2,d\n3,e\n"
BIG = 2**64


@dataclass(frozen=True)
class Case:
    name: str
    recs_name: str
    recs: Callable[[], bytes]
    truth_name: str = "truth.csv"
    truth: Callable[[], bytes] = lambda: PLAIN_TRUTH.encode()
    accepted: bool = True  # refused: exit 2 with a message naming the file


def _parquet(frame: pd.DataFrame) -> bytes:
    out = io.BytesIO()
    frame.to_parquet(out, index=False)
    return out.getvalue()


def _zip(name: str, data: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr(name, data)
    return out.getvalue()


def _xlsx() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("xl/workbook.xml", "<workbook/>")
    return out.getvalue()


def _frame(recs: str = PLAIN_RECS) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(recs), dtype=str).astype({"rank": int})


CASES = [
    Case("plain csv", "recs.csv", lambda: PLAIN_RECS.encode()),
    Case("utf-8 bom", "recs.csv", lambda: b"\xef\xbb\xbf" + PLAIN_RECS.encode(),
         "truth.csv", lambda: b"\xef\xbb\xbf" + PLAIN_TRUTH.encode()),
    Case("utf-16", "recs.csv", lambda: PLAIN_RECS.encode("utf-16")),
    Case("gzip csv.gz", "recs.csv.gz", lambda: gzip.compress(PLAIN_RECS.encode())),
    Case("gzip named csv", "recs.csv", lambda: gzip.compress(PLAIN_RECS.encode())),
    Case("zip of one csv", "recs.zip", lambda: _zip("recs.csv", PLAIN_RECS.encode())),
    Case("parquet named csv", "recs.csv", lambda: _parquet(_frame())),
    Case("tsv", "recs.tsv", lambda: PLAIN_RECS.replace(",", "\t").encode()),
    Case("semicolons, decimal commas", "recs.csv",
         lambda: b"user_id;item_id;score\n1;a;0,9\n1;b;0,5\n2;d;0,7\n2;a;0,2\n3;e;0,1\n"),
    Case("trec run and qrels", "recs.run", lambda: b"1 Q0 a 1 3.0 t\n1 Q0 c 2 2.0 t\n2 Q0 d 1 1.0 t\n",
         "truth.qrels", lambda: b"1 0 a 1\n1 0 c 2\n2 0 d 1\n3 0 e 0\n"),
    Case("ids beyond 2^64", "recs.csv",
         lambda: f"user_id,item_id,rank\n1,{BIG + 5},1\n1,{BIG + 6},2\n2,7,1\n".encode(),
         "truth.csv", lambda: f"user_id,item_id\n1,{BIG + 5}\n2,{BIG + 9}\n".encode()),
    Case("ids mixing numbers and text", "recs.csv", lambda: b"user_id,item_id,rank\n1,7,1\n1,x7,2\n2,8,1\n",
         "truth.csv", lambda: b"user_id,item_id\n1,7\n2,x8\n"),
    Case("ids turning to text far down", "recs.csv", lambda: _text_far_down("user_id,item_id,rank\n", ",1"),
         "truth.csv", lambda: _text_far_down("user_id,item_id\n", "", every=7)),
    Case("fractional item ids", "recs.csv", lambda: b"user_id,item_id,rank\n1,1.5,1\n1,2.5,2\n2,3.5,1\n",
         "truth.csv", lambda: b"user_id,item_id\n1,1.5\n2,3\n"),
    Case("duplicate rows", "recs.csv", lambda: (PLAIN_RECS + "1,b,4\n").encode()),
    Case("text ids with spaces", "recs.csv", lambda: b"user_id,item_id,rank\n u1 ,a ,1\nu1, b,2\n",
         "truth.csv", lambda: b"user_id,item_id\nu1,b\n"),
    Case("large random parquet", "recs.parquet", lambda: _parquet(pd.DataFrame({
        "user_id": np.repeat(np.arange(2000), 5), "item_id": np.random.default_rng(0).integers(0, 300, 10_000),
        "rank": np.tile(np.arange(1, 6), 2000)}).drop_duplicates(["user_id", "item_id"])),
         "truth.csv", lambda: pd.DataFrame({"user_id": np.arange(2000), "item_id": np.arange(2000) % 300})
         .to_csv(index=False).encode()),
    # refused
    Case("empty file", "recs.csv", lambda: b"", accepted=False),
    Case("header only", "recs.csv", lambda: b"user_id,item_id,rank\n", accepted=False),
    Case("empty ground truth", "recs.csv", lambda: PLAIN_RECS.encode(), "truth.csv", lambda: b"user_id,item_id\n",
         accepted=False),
    Case("nan score", "recs.csv", lambda: b"user_id,item_id,score\n1,a,0.5\n1,b,\n", accepted=False),
    Case("no rank or score", "recs.csv", lambda: b"user_id,item_id\n1,a\n1,b\n", accepted=False),
    Case("missing item column", "recs.csv", lambda: b"user_id,product,rank\n1,a,1\n", accepted=False),
    Case("xlsx", "recs.xlsx", _xlsx, accepted=False),
    Case("binary garbage", "recs.csv", lambda: bytes(range(256)) * 8, accepted=False),
    Case("trec run with a word for a score far down", "recs.run", lambda: _trec_word_far_down(),
         "truth.qrels", lambda: b"1 0 d1 1\n2 0 d2 1\n", accepted=False),
    Case("csv with a word for a score far down", "recs.csv",
         lambda: _text_far_down("user_id,item_id,score\n", ",0.5").replace(b"sku-9,0.5", b"9,high"),
         accepted=False),
    Case("trec run with 7 fields", "recs.run", lambda: b"1 Q0 a 1 3.0 t x\n1 Q0 c 2 2.0 t x\n", accepted=False),
    Case("zip of two files", "recs.zip", lambda: _two_zip(), accepted=False),
    Case("truncated parquet", "recs.parquet", lambda: _parquet(_frame())[:-40], accepted=False),
]


def _text_far_down(header: str, rest: str, every: int = 1) -> bytes:
    """A CSV whose item ids are numbers for 262,144 rows (pandas' first block, typed on its own)
    and then text: pandas reads the column as ints, then strs."""
    rows = "".join(f"{user},{user % 50}{rest}\n" for user in range(0, TEXT_FROM + 100, every))
    return (header + rows + f"{TEXT_FROM + 1000},sku-9{rest}\n").encode()


def _trec_word_far_down() -> bytes:
    """A TREC run whose scores are numbers for pandas' first block of rows, then one is a word."""
    rows = "".join(f"{topic} Q0 d{rank} {rank} {1 / rank:.4f} t\n" for topic in range(1, TEXT_FROM // 100 + 2)
                   for rank in range(1, 101))
    return (rows + f"{TEXT_FROM} Q0 dx 1 high t\n").encode()


TEXT_FROM = 2**18  # rows pandas types as one block (its C parser's low_memory chunks)


def _two_zip() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("a.csv", PLAIN_RECS)
        archive.writestr("b.csv", PLAIN_RECS)
    return out.getvalue()


def write(case: Case, folder: Path) -> tuple[Path, Path]:
    """The case's two files in ``folder``: (recommendations, ground truth)."""
    folder.mkdir(parents=True, exist_ok=True)
    recs, truth = folder / case.recs_name, folder / case.truth_name
    recs.write_bytes(case.recs())
    truth.write_bytes(case.truth())
    return recs, truth
