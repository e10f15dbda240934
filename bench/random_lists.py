"""Large random recommendation data in seconds, for benchmarks at 1M users and beyond.

Unlike ``../shared/tools/make_synthetic.py`` (a realistic world, about 25 minutes for 1M users
here), every user gets a full list of distinct items (``(a_u + p * b_u) mod I`` for a prime
item count ``I``), scores falling with rank, and a Poisson(10) + 1 ground truth of random items
graded 1-3. Rows sorted by user and rank, as the generator writes them; ``bench/shapes.py``
makes the other shapes from it. Users are written a million at a time, so
10M users x 100 (1B rows) need about 3 GiB of memory. Usage::

    python bench/random_lists.py --n-users 1000000 --out /tmp/random1m [--top-k 100] [--n-items 50021]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

CHUNK = 1_000_000
RECS = pa.schema({"user_id": pa.int64(), "item_id": pa.int64(), "score": pa.float64(), "rank": pa.int64()})
TRUTH = pa.schema({"user_id": pa.int64(), "item_id": pa.int64(), "relevance": pa.int64()})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n-users", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--top-k", type=int, default=100)
    parser.add_argument("--n-items", type=int, default=50_021, help="a prime keeps every list's items distinct")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    with (pq.ParquetWriter(args.out / "recs.parquet", RECS) as recs,
          pq.ParquetWriter(args.out / "ground_truth.parquet", TRUTH) as truth):
        for first in range(0, args.n_users, CHUNK):
            users = np.arange(first, min(first + CHUNK, args.n_users))
            lists, relevant = _chunk(rng, users, args.top_k, args.n_items)
            recs.write_table(lists)
            truth.write_table(relevant)
    (args.out / "meta.json").write_text(json.dumps({"n_users": args.n_users, "n_items": args.n_items,
                                                    "top_k": args.top_k}))


def _chunk(rng: np.random.Generator, users: np.ndarray, length: int, items: int) -> tuple[pa.Table, pa.Table]:
    """The lists and the ground truth of ``users``."""
    start, step = rng.integers(0, items, len(users)), rng.integers(1, items, len(users))
    item = (start[:, None] + np.arange(length)[None, :] * step[:, None]) % items
    rank = np.tile(np.arange(1, length + 1), len(users))
    lists = pa.table({"user_id": np.repeat(users, length), "item_id": item.ravel(),
                      "score": -rank + rng.random(len(users) * length) * 0.1, "rank": rank}, schema=RECS)
    relevant = rng.poisson(10, len(users)) + 1
    truth = pa.table({"user_id": np.repeat(users, relevant), "item_id": rng.integers(0, items, relevant.sum()),
                      "relevance": rng.integers(1, 4, relevant.sum())}, schema=TRUTH)
    return lists, truth


if __name__ == "__main__":
    main()
