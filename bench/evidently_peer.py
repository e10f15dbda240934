"""Evidently's legacy recsys metrics on a make_synthetic.py directory (run with an interpreter
that has evidently < 0.7 and pandas < 3). Prints one JSON line with the seconds it took,
including building its single long table from the DataFrames.

Usage: python bench/evidently_peer.py DATA_DIR K
"""

from __future__ import annotations

import json
import sys
import time

import pandas as pd
from evidently import ColumnMapping
from evidently.metrics import (
    DiversityMetric,
    FBetaTopKMetric,
    HitRateKMetric,
    MAPKMetric,
    MRRKMetric,
    NDCGKMetric,
    NoveltyMetric,
    PersonalizationMetric,
    PopularityBias,
    PrecisionTopKMetric,
    RecallTopKMetric,
    SerendipityMetric,
)
from evidently.report import Report

data, k = sys.argv[1], int(sys.argv[2])
recs = pd.read_parquet(f"{data}/recs.parquet")
truth = pd.read_parquet(f"{data}/ground_truth.parquet")[["user_id", "item_id"]]
train = pd.read_parquet(f"{data}/train.parquet")[["user_id", "item_id"]]
items = pd.read_parquet(f"{data}/items.parquet")
genres = [c for c in items.columns if c.startswith("g_") or c in
          ("Action", "Comedy", "Drama", "Horror", "Romance", "SciFi", "Documentary", "Animation")]
start = time.perf_counter()
table = recs[["user_id", "item_id", "rank"]].merge(truth.assign(target=1), on=["user_id", "item_id"], how="outer")
table["target"] = table["target"].fillna(0)
table = table.rename(columns={"rank": "prediction"}).merge(items[["item_id", *genres]], on="item_id", how="left")
train = train.assign(target=1).merge(items[["item_id", *genres]], on="item_id", how="left")
mapping = ColumnMapping(recommendations_type="rank", target="target", prediction="prediction", item_id="item_id",
                        user_id="user_id")
report = Report(metrics=[
    PrecisionTopKMetric(k=k), RecallTopKMetric(k=k), FBetaTopKMetric(k=k), MAPKMetric(k=k), NDCGKMetric(k=k),
    MRRKMetric(k=k), HitRateKMetric(k=k), DiversityMetric(k=k, item_features=genres), NoveltyMetric(k=k),
    SerendipityMetric(k=k, item_features=genres), PersonalizationMetric(k=k), PopularityBias(k=k),
])
report.run(reference_data=None, current_data=table, column_mapping=mapping,
           additional_data={"current_train_data": train})
report.as_dict()
print(json.dumps({"peer": "evidently", "seconds": time.perf_counter() - start, "genres": genres}))
