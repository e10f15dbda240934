"""rankscope against Evidently's legacy recsys metrics on the same data, same run.

Usage: python bench/against_evidently.py DATA_DIR EVIDENTLY_PYTHON [K]
DATA_DIR: a make_synthetic.py directory cut to 10k users x top 20 (see the README). Both sides
start from DataFrames already in memory and compute precision, recall, F-beta, MAP, NDCG, MRR,
hit rate, diversity (genre features), novelty, serendipity, personalization and popularity.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

from metrics_core import Dataset, Settings

data, python = sys.argv[1], sys.argv[2]
k = int(sys.argv[3]) if len(sys.argv) > 3 else 10
recs = pd.read_parquet(f"{data}/recs.parquet")
truth = pd.read_parquet(f"{data}/ground_truth.parquet")[["user_id", "item_id"]]
train = pd.read_parquet(f"{data}/train.parquet")
items = pd.read_parquet(f"{data}/items.parquet")
genres = ["Action", "Comedy", "Drama", "Horror", "Romance", "SciFi", "Documentary", "Animation"]
start = time.perf_counter()
dataset = Dataset.build(recs[["user_id", "item_id", "rank"]], truth, train=train, items=items, feature_columns=genres)
result = dataset.evaluate(settings=Settings(k=k), curves=False)
ours = time.perf_counter() - start
peer = subprocess.run([python, str(Path(__file__).with_name("evidently_peer.py")), data, str(k)],
                      capture_output=True, text=True, check=True)
theirs = json.loads(peer.stdout.strip().splitlines()[-1])["seconds"]
print(json.dumps({"users": int(recs.user_id.nunique()), "rankscope_s": round(ours, 3),
                  "evidently_s": round(theirs, 2), "ratio": round(theirs / ours, 1)}, indent=1))
