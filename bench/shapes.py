"""Data shapes the synthetic generator does not make, derived from one of its directories:

- ``shuffled``: the same rows in random order (as a distributed scoring job writes them);
- ``text``: user ids as UUID-like text and item ids as SKU-like text, rows shuffled;
- ``csv``: the shuffled rows as CSV.

Each shape is a directory with ``recs.parquet`` (or ``recs.csv``) and the ground truth in the
same id space. Usage::

    python bench/shapes.py --data /tmp/syn1m --out /tmp/shapes1m [--shapes shuffled,text,csv]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

SEED = 7


def shuffled(table: pa.Table, seed: int = SEED) -> pa.Table:
    return table.take(np.random.default_rng(seed).permutation(table.num_rows))


def as_text(table: pa.Table) -> pa.Table:
    """UUID-like users (``u-0000000042-7d1e-4b2a-9c3f-5e8a0b1c2d3e``) and SKU-like items
    (``SKU-00001234``), one text per id, built by Arrow's string kernels."""
    def padded(column: str, width: int) -> pa.ChunkedArray:  # large strings: 100M ids pass 2 GiB of text
        return pc.utf8_lpad(pc.cast(table.column(column), pa.large_string()), width, "0")

    def text(value: str) -> pa.Scalar:
        return pa.scalar(value, pa.large_string())

    users = pc.binary_join_element_wise(text("u-"), padded("user_id", 10), text("-7d1e-4b2a-9c3f-5e8a0b1c2d3e"),
                                        text(""))
    items = pc.binary_join_element_wise(text("SKU-"), padded("item_id", 8), text(""))
    return table.set_column(table.column_names.index("user_id"), "user_id", users).set_column(
        table.column_names.index("item_id"), "item_id", items)


def write(out: Path, recs: pa.Table, truth: pa.Table, meta: str, csv: bool = False) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "meta.json").write_text(meta)  # bench/run.py reads the user count from it
    if csv:
        pacsv.write_csv(recs, out / "recs.csv")
        pacsv.write_csv(truth, out / "ground_truth.csv")
    else:
        pq.write_table(recs, out / "recs.parquet")
        pq.write_table(truth, out / "ground_truth.parquet")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--shapes", default="shuffled,text,csv")
    args = parser.parse_args()
    recs = pq.read_table(args.data / "recs.parquet", columns=["user_id", "item_id", "score", "rank"])
    truth = pq.read_table(args.data / "ground_truth.parquet", columns=["user_id", "item_id", "relevance"])
    mixed = shuffled(recs)
    meta = (args.data / "meta.json").read_text()
    for shape in args.shapes.split(","):
        if shape == "shuffled":
            write(args.out / shape, mixed, truth, meta)
        elif shape == "text":
            write(args.out / shape, as_text(mixed), as_text(truth), meta)
        elif shape == "csv":
            write(args.out / shape, mixed, truth, meta, csv=True)
        else:
            raise SystemExit(f"unknown shape {shape!r}")
        print(f"wrote {args.out / shape}")


if __name__ == "__main__":
    main()
