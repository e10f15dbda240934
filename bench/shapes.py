"""Data shapes the synthetic generator does not make, derived from one of its directories:

- ``shuffled``: the same rows in random order (as a distributed scoring job writes them);
- ``text``: user ids as UUID-like text and item ids as SKU-like text, rows shuffled;
- ``csv``: the shuffled rows as CSV;
- ``items1m``: a catalog of 1M items (each item split in 20 by the user's id modulo 20, in the
  lists and the ground truth alike, so every hit stays a hit), rows shuffled;
- ``three``: three models in one call (the lists, the lists in reverse order, the lists with
  every other user's list reversed), rows shuffled.

Each shape is a directory with ``recs.parquet`` (``recs.csv``; ``recs_a/b/c.parquet`` for
``three``) and the ground truth in the same id space. ``bench/any_shape.py`` times them. Usage::

    python bench/shapes.py --data /tmp/syn1m --out /tmp/shapes1m [--shapes shuffled,text,csv,items1m,three]
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


def many_items(table: pa.Table, split: int = 20) -> pa.Table:
    """Item ``i`` of user ``u`` becomes ``i * split + u % split``: ``split`` times the catalog
    (integer ids are not negative, so Arrow's truncating division gives ``u // split``)."""
    user = table.column("user_id")
    remainder = pc.subtract(user, pc.multiply(pc.divide(user, split), split))
    items = pc.add(pc.multiply(table.column("item_id"), split), remainder)
    return table.set_column(table.column_names.index("item_id"), "item_id", items)


def reversed_lists(table: pa.Table, every_other: bool = False) -> pa.Table:
    """The same lists with ranks (and scores) reversed: all users, or those with an odd id."""
    rank, score = table.column("rank"), table.column("score")
    flip = pc.equal(pc.bit_wise_and(table.column("user_id"), 1), 1) if every_other else pa.scalar(True)
    last = pc.add(pc.max(rank), 1)
    return table.set_column(table.column_names.index("rank"), "rank", pc.if_else(flip, pc.subtract(last, rank), rank)
                            ).set_column(table.column_names.index("score"), "score",
                                         pc.if_else(flip, pc.negate(score), score))


def write(out: Path, recs: pa.Table | dict[str, pa.Table], truth: pa.Table, meta: str, csv: bool = False) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "meta.json").write_text(meta)  # bench/run.py reads the user count from it
    models = recs if isinstance(recs, dict) else {"recs": recs}
    for name, table in models.items():
        if csv:
            pacsv.write_csv(table, out / f"{name}.csv")
        else:
            pq.write_table(table, out / f"{name}.parquet")
    if csv:
        pacsv.write_csv(truth, out / "ground_truth.csv")
    else:
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
        elif shape == "items1m":
            write(args.out / shape, many_items(mixed), many_items(truth), meta)
        elif shape == "three":
            write(args.out / shape, {"recs_a": mixed, "recs_b": reversed_lists(mixed),
                                     "recs_c": reversed_lists(mixed, every_other=True)}, truth, meta)
        else:
            raise SystemExit(f"unknown shape {shape!r}")
        print(f"wrote {args.out / shape}")


if __name__ == "__main__":
    main()
