"""rankscope on Spark against Spark's own ``pyspark.ml.evaluation.RankingEvaluator``, in one run
on one Spark session (``--master``, default local[2]).

RankingEvaluator needs each user's recommended items as an array in rank order and the relevant
items as an array: that preparation (two groupBys and a join) is timed with it, as a user of it
pays for it. It then computes precision, recall, NDCG and MAP at 10, one metric per call.
rankscope computes every metric it has on Spark at K = 10 in one pass. Usage::

    python bench/spark.py --data /tmp/syn1m [--master local[2]] [--partitions 16]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from metrics_core.spark import evaluate_spark, local_session

RANKING_METRICS = {"precision": "precisionAtK", "recall": "recallAtK", "ndcg": "ndcgAtK",
                   "map": "meanAveragePrecisionAtK"}


def ranking_evaluator(recs, truth, k: int = 10) -> dict[str, float]:
    from pyspark.ml.evaluation import RankingEvaluator
    from pyspark.sql import functions as F  # noqa: N812

    lists = (recs.groupBy("user_id")
             .agg(F.array_sort(F.collect_list(F.struct("rank", "item_id"))).alias("ranked"))
             .select("user_id", F.col("ranked.item_id").cast("array<double>").alias("prediction")))
    relevant = truth.groupBy("user_id").agg(F.collect_set(F.col("item_id").cast("double")).alias("label"))
    joined = lists.join(relevant, "user_id").cache()
    out = {}
    for name, metric in RANKING_METRICS.items():
        out[name] = RankingEvaluator(k=k, metricName=metric).evaluate(joined)
    joined.unpersist()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--partitions", type=int, default=None)
    parser.add_argument("--driver-memory", default="4g")
    parser.add_argument("--curves", action="store_true", help="rankscope also computes every metric at every k")
    args = parser.parse_args()
    import os

    os.environ.setdefault("PYSPARK_SUBMIT_ARGS", f"--driver-memory {args.driver_memory} pyspark-shell")
    spark = local_session(args.master)
    recs = spark.read.parquet(str(args.data / "recs.parquet")).select("user_id", "item_id", "rank", "score")
    truth = spark.read.parquet(str(args.data / "ground_truth.parquet")).select("user_id", "item_id")
    recs.count(), truth.count()  # warm-up: the JVM's first jobs are slow, for whichever runs first
    started = time.perf_counter()
    theirs = ranking_evaluator(recs, truth)
    their_time = time.perf_counter() - started
    started = time.perf_counter()
    ours = evaluate_spark(recs, truth, k=10, partitions=args.partitions, curves=args.curves)
    our_time = time.perf_counter() - started
    spark.stop()
    print(json.dumps({
        "data": str(args.data), "master": args.master, "curves": args.curves,
        "ranking_evaluator_s": round(their_time, 2), "rankscope_s": round(our_time, 2),
        "ratio": round(their_time / our_time, 2), "rankscope_metrics": len(ours.metrics),
        "ranking_evaluator": theirs, "rankscope": {m: ours.metrics[m] for m in RANKING_METRICS},
    }, indent=2))


if __name__ == "__main__":
    main()
