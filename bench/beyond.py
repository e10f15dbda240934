"""Beyond-accuracy benchmark: 1M users x top-10 with 32-dimensional item embeddings.

Usage: python bench/beyond.py DATA_DIR   (a make_synthetic.py directory)
Takes the top 10 of each list, gives every item a seeded random 32-d embedding, and times
encoding and every beyond-accuracy metric (with accuracy) at K = 10.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np
import pyarrow.parquet as pq

from metrics_core import Dataset, Settings

data = sys.argv[1]
recs = pq.read_table(f"{data}/recs.parquet", filters=[("rank", "<=", 10)]).to_pandas()
truth = pq.read_table(f"{data}/ground_truth.parquet").to_pandas()
train = pq.read_table(f"{data}/train.parquet").to_pandas()
items = pq.read_table(f"{data}/items.parquet").to_pandas()[["item_id"]]
items["embedding"] = list(np.random.default_rng(0).normal(size=(len(items), 32)))
start = time.perf_counter()
dataset = Dataset.build(recs, truth, train=train, items=items, embedding_column="embedding")
encoded = time.perf_counter() - start
start = time.perf_counter()
result = dataset.evaluate(settings=Settings(k=10))
evaluated = time.perf_counter() - start
print(json.dumps({"users": int(recs.user_id.nunique()), "rows": len(recs), "train_rows": len(train),
                  "encode_s": round(encoded, 2), "metrics_s": round(evaluated, 2),
                  "metrics": {k: round(v, 4) for k, v in result.metrics.items()}}, indent=1))
