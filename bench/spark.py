"""rankscope on Spark against Spark's own ``pyspark.ml.evaluation.RankingEvaluator``, in one run
on one Spark session (``--master``, default local[2]).

RankingEvaluator needs each user's recommended items as an array in rank order and the relevant
items as an array: that preparation (two groupBys and a join) is timed with it, as a user of it
pays for it. It then computes precision, recall, NDCG and MAP at 10, one metric per call.
rankscope computes every metric it has on Spark at K = 10 in one pass. Usage::

    python bench/spark.py --data /tmp/random1m [--master local[2]] [--partitions 16] [--curves] [--rounds 3] \
        [--no-per-user]
    python bench/spark.py --data /tmp/random10m --driver-memory 3g --rankscope-only

``--warm-up N`` paired rounds run first and are reported apart (``warm_up``), not in the ratios:
the first round of each side carries the JVM's compilation of its code (RankingEvaluator's first
round has taken 62-96 s against 52-86 s for the next ones).

It also reports the peak resident memory of the driver: the JVM (in local mode it runs the
tasks too) and this Python process (which receives the aggregates).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import time
from pathlib import Path

from metrics_core.engines.spark.engine import evaluate_spark, local_session

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
    parser.add_argument("--rounds", type=int, default=1, help="paired rounds (RankingEvaluator, then rankscope)")
    parser.add_argument("--warm-up", type=int, default=1, help="paired rounds first, reported apart")
    parser.add_argument("--rankscope-only", action="store_true", help="leave RankingEvaluator out (10M users)")
    parser.add_argument("--no-per-user", action="store_true",
                        help="rankscope gives the aggregates only (per_user=False), as RankingEvaluator does")
    args = parser.parse_args()
    import os

    os.environ.setdefault("PYSPARK_SUBMIT_ARGS", f"--driver-memory {args.driver_memory} pyspark-shell")
    spark = local_session(args.master)
    recs = spark.read.parquet(str(args.data / "recs.parquet")).select("user_id", "item_id", "rank", "score")
    truth = spark.read.parquet(str(args.data / "ground_truth.parquet")).select("user_id", "item_id")
    recs.count(), truth.count()  # warm-up: the JVM's first jobs are slow, for whichever runs first
    report = {"data": str(args.data), "master": args.master, "curves": args.curves, "per_user": not args.no_per_user,
              "driver_memory": args.driver_memory, "warm_up": [], "rounds": []}
    for round_ in range(args.warm_up + args.rounds):  # paired rounds: both sides see the same machine and JVM
        row = {}
        if not args.rankscope_only:
            started = time.perf_counter()
            report["ranking_evaluator"] = ranking_evaluator(recs, truth)
            row["ranking_evaluator_s"] = round(time.perf_counter() - started, 2)
        started = time.perf_counter()
        ours = evaluate_spark(recs, truth, k=10, partitions=args.partitions, curves=args.curves,
                              per_user=not args.no_per_user)
        row["rankscope_s"] = round(time.perf_counter() - started, 2)
        ours.unpersist()  # else the next round reads this round's cached output
        if "ranking_evaluator_s" in row:
            row["ratio"] = round(row["ranking_evaluator_s"] / row["rankscope_s"], 2)
        report["warm_up" if round_ < args.warm_up else "rounds"].append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    report["rankscope_metrics"] = len(ours.metrics)
    report["rankscope"] = {m: ours.metrics[m] for m in RANKING_METRICS}
    report["rankscope_ndcg_interval"] = ours.intervals.get("ndcg")
    if not args.rankscope_only:
        report["median_ratio"] = statistics.median(row["ratio"] for row in report["rounds"])
    report["driver_jvm_peak_gib"] = _peak_gib(spark.sparkContext._gateway.proc.pid)
    report["driver_python_peak_gib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2)
    spark.stop()
    print(json.dumps(report, indent=2))


def _peak_gib(pid: int) -> float:
    """A process's peak resident memory (VmHWM), in GiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 2**20, 2)
    return float("nan")


if __name__ == "__main__":
    main()
