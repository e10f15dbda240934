"""Every accuracy metric at every k in memory: ``Dataset.evaluate(curves=True, beyond=False)``
after one ``Dataset.build``, on each data directory given (any row order: the rows are encoded
once, before the timing), with binary relevance and with graded relevance (grades 1-5 drawn at
random, threshold 3: graded NDCG, and bpref and infAP from the judged rows below it).

Each setting is timed ``--repeat`` times (the median, with the range); the path every setting
takes (the curves from the hit cells, :func:`metrics_core.metrics.accuracy.totals_from_hit_cells`)
is timed against the per-user path that candidates, precision over the list's length or AP over
the hits take, and the largest difference between their curves is reported. Usage::

    python bench/every_k.py --data /tmp/random1m --data /tmp/shapes1m/shuffled [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from unittest import mock

import numpy as np
import pandas as pd

from metrics_core import Columns, Dataset, Settings
from metrics_core.metrics import accuracy


def seconds(work, repeat: int) -> tuple[float, float, float, object]:
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - started)
    return float(np.median(times)), min(times), max(times), result


def measure(data: Path, graded: bool, repeat: int) -> dict:
    recs = pd.read_parquet(data / "recs.parquet")
    truth = pd.read_parquet(data / "ground_truth.parquet")
    columns = Columns()
    if graded:
        truth["grade"] = np.random.default_rng(0).integers(1, 6, len(truth))
        columns = Columns(relevance="grade", threshold=3)
    dataset = Dataset.build({"model": recs}, truth, columns=columns)
    del recs, truth

    def every_k():
        return dataset.evaluate("model", Settings(k=10), curves=True, beyond=False)

    every_k()  # warm: the hit cells and judged cells are computed once per model
    median, low, high, fast = seconds(every_k, repeat)
    with mock.patch.object(accuracy, "totals_follow_from_hits", lambda *_: False):
        per_user_median, _, _, slow = seconds(every_k, max(1, repeat // 2))
    at_k, _, _, _ = seconds(lambda: dataset.evaluate("model", Settings(k=10), curves=False, beyond=False), repeat)
    return {"data": str(data), "graded": graded, "every_k_s": round(median, 3),
            "range_s": [round(low, 3), round(high, 3)],
            "per_user_path_s": round(per_user_median, 3), "at_k_only_s": round(at_k, 3),
            "largest_difference": float((fast.curves - slow.curves).abs().to_numpy().max())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, action="append", required=True)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    for data in args.data:
        for graded in (False, True):
            print(json.dumps(measure(data, graded, args.repeat)), flush=True)


if __name__ == "__main__":
    main()
