"""The co-occurrence similarity (diversity, intra-list similarity and serendipity from the items'
training-user sets) in memory and on Spark, on generated data: ``--users`` users with lists of
10 and 20 training rows each from 5,000 items of Zipf(0.8) popularity (the pairs of items that
share users then fill about 9.5M entries of the items x items matrix at 100,000 users), and 3
relevant items per user.

In memory: ``metrics_core.evaluate`` with ``similarity="cooccurrence"`` (``--repeat`` times,
each from the DataFrames). On Spark (``--master``, default local[2]; the tables written to
Parquet and read back, as a user's tables would be): ``evaluate_spark`` with the training rows,
aggregates only and normal intervals, ``--rounds`` times in one session (the first carries
Spark's warm-up). The three similarity metrics and novelty are compared between the engines.
Usage::

    python bench/cooccurrence.py [--users 100000] [--repeat 3] [--rounds 2] [--no-spark]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from metrics_core import Settings, evaluate

COMPARED = ("diversity", "intra_list_similarity", "serendipity", "novelty")


def generated(users: int, items: int = 5000, seed: int = 0) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    popularity = 1.0 / np.arange(1, items + 1) ** 0.8
    popularity /= popularity.sum()
    train = pd.DataFrame({"user_id": np.repeat(np.arange(users), 20),
                          "item_id": rng.choice(items, users * 20, p=popularity)})
    recs = pd.DataFrame({"user_id": np.repeat(np.arange(users), 10), "item_id": rng.integers(0, items, users * 10),
                         "rank": np.tile(np.arange(1, 11), users)}).drop_duplicates(["user_id", "item_id"])
    truth = pd.DataFrame({"user_id": rng.integers(0, users, users * 3),
                          "item_id": rng.choice(items, users * 3, p=popularity)}).drop_duplicates()
    return {"recs": recs, "truth": truth, "train": train}


def timed(work) -> tuple[float, object]:
    started = time.perf_counter()
    result = work()
    return round(time.perf_counter() - started, 2), result


def on_spark(tables: dict[str, pd.DataFrame], master: str, driver_memory: str, rounds: int) -> tuple[list, dict]:
    os.environ.setdefault("PYSPARK_SUBMIT_ARGS", f"--driver-memory {driver_memory} pyspark-shell")
    from metrics_core.engines.spark.engine import evaluate_spark, local_session

    spark = local_session(master)
    try:
        with tempfile.TemporaryDirectory() as folder:
            for name, frame in tables.items():
                frame.to_parquet(Path(folder) / f"{name}.parquet")
            recs, truth, train = (spark.read.parquet(str(Path(folder) / f"{name}.parquet"))
                                  for name in ("recs", "truth", "train"))
            times, result = [], None
            for _ in range(rounds):
                seconds, result = timed(lambda: evaluate_spark(
                    recs, truth, k=10, train_df=train, settings=Settings(similarity="cooccurrence"),
                    per_user=False, bootstrap=0))
                times.append(seconds)
            return times, result.metrics
    finally:
        spark.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--driver-memory", default="4g")
    parser.add_argument("--no-spark", action="store_true")
    args = parser.parse_args()
    tables = generated(args.users)
    memory_times, memory = [], None
    for _ in range(args.repeat):
        seconds, memory = timed(lambda: evaluate(tables["recs"], tables["truth"], k=10, train=tables["train"],
                                                 similarity="cooccurrence"))
        memory_times.append(seconds)
    report = {"users": args.users, "memory_s": memory_times,
              "memory": {name: memory.metrics[name] for name in COMPARED}}
    if not args.no_spark:
        report["spark_s"], metrics = on_spark(tables, args.master, args.driver_memory, args.rounds)
        report["largest_difference"] = max(abs(metrics[name] - memory.metrics[name]) for name in COMPARED)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
