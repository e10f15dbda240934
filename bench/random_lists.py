"""Large random recommendation data in seconds, for benchmarks at 1M users and beyond.

Unlike ``../shared/tools/make_synthetic.py`` (a realistic world, about 25 minutes for 1M users
here), every user gets a full list of distinct items (``(a_u + p * b_u) mod I`` for a prime
item count ``I``), scores falling with rank, and a Poisson(10) + 1 ground truth of random items
graded 1-3. Rows sorted by user and rank, as the generator writes them; ``bench/shapes.py``
makes the other shapes from it. Usage::

    python bench/random_lists.py --n-users 1000000 --out /tmp/random1m [--top-k 100] [--n-items 50021]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n-users", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--top-k", type=int, default=100)
    parser.add_argument("--n-items", type=int, default=50_021, help="a prime keeps every list's items distinct")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    users, length, items = args.n_users, args.top_k, args.n_items
    start, step = rng.integers(0, items, users), rng.integers(1, items, users)
    item = (start[:, None] + np.arange(length)[None, :] * step[:, None]) % items
    rank = np.tile(np.arange(1, length + 1), users)
    recs = pa.table({"user_id": np.repeat(np.arange(users), length), "item_id": item.ravel(),
                     "score": -rank + rng.random(users * length) * 0.1, "rank": rank})
    relevant = rng.poisson(10, users) + 1
    truth = pa.table({"user_id": np.repeat(np.arange(users), relevant),
                      "item_id": rng.integers(0, items, relevant.sum()),
                      "relevance": rng.integers(1, 4, relevant.sum())})
    args.out.mkdir(parents=True, exist_ok=True)
    pq.write_table(recs, args.out / "recs.parquet")
    pq.write_table(truth, args.out / "ground_truth.parquet")
    (args.out / "meta.json").write_text(json.dumps({"n_users": users, "n_items": items, "top_k": length}))


if __name__ == "__main__":
    main()
