"""Peer libraries timed on the same files, each including its conversion from a DataFrame.

Run as a script with the interpreter that has the peer installed (rectools needs numpy < 2,
so it lives in its own environment):  python bench/peers.py rectools DATA_DIR K [REPEAT [WARMUP]]
WARMUP untimed calls come first. Prints one JSON line:
{"peer": ..., "seconds": [one per timed run], "metrics": {...}}.
"""

from __future__ import annotations

import json
import sys
import time

import pandas as pd


def load(data: str):
    recs = pd.read_parquet(f"{data}/recs.parquet", columns=["user_id", "item_id", "score", "rank"])
    truth = pd.read_parquet(f"{data}/ground_truth.parquet", columns=["user_id", "item_id"])
    return recs, truth


def run_rectools(recs: pd.DataFrame, truth: pd.DataFrame, k: int) -> dict:
    from rectools import Columns
    from rectools.metrics import MAP, MRR, NDCG, HitRate, Precision, Recall, calc_metrics

    reco = recs.rename(columns={"user_id": Columns.User, "item_id": Columns.Item, "rank": Columns.Rank})
    interactions = truth.rename(columns={"user_id": Columns.User, "item_id": Columns.Item})
    metrics = {"precision": Precision(k), "recall": Recall(k), "ndcg": NDCG(k), "map": MAP(k), "mrr": MRR(k),
               "hit_rate": HitRate(k)}
    return calc_metrics(metrics, reco=reco[[Columns.User, Columns.Item, Columns.Rank]], interactions=interactions)


def run_ranx(recs: pd.DataFrame, truth: pd.DataFrame, k: int) -> dict:
    import ranx

    qrels = ranx.Qrels.from_df(truth.assign(relevance=1).astype({"user_id": str, "item_id": str})
                               .astype({"user_id": object, "item_id": object}),
                               q_id_col="user_id", doc_id_col="item_id", score_col="relevance")
    run = ranx.Run.from_df(recs.astype({"user_id": str, "item_id": str, "score": float})
                           .astype({"user_id": object, "item_id": object}),
                           q_id_col="user_id", doc_id_col="item_id", score_col="score")
    names = {"precision": f"precision@{k}", "recall": f"recall@{k}", "ndcg": f"ndcg@{k}", "map": f"map@{k}",
             "mrr": f"mrr@{k}", "hit_rate": f"hit_rate@{k}"}
    scores = ranx.evaluate(qrels, run, list(names.values()), make_comparable=True)
    return {name: float(scores[measure]) for name, measure in names.items()}


def run_pytrec_eval(recs: pd.DataFrame, truth: pd.DataFrame, k: int) -> dict:
    import pytrec_eval

    qrels: dict = {}
    for user, item in zip(truth["user_id"].astype(str), truth["item_id"].astype(str), strict=True):
        qrels.setdefault(user, {})[item] = 1
    run: dict = {}
    for user, item, score in zip(recs["user_id"].astype(str), recs["item_id"].astype(str), recs["score"],
                                 strict=True):
        run.setdefault(user, {})[item] = float(score)
    measures = {f"P_{k}": "precision", f"recall_{k}": "recall", f"ndcg_cut_{k}": "ndcg", f"map_cut_{k}": "map",
                "recip_rank": "mrr"}
    per_query = pytrec_eval.RelevanceEvaluator(qrels, set(measures)).evaluate(run)
    n = len(per_query)
    return {name: sum(v[m] for v in per_query.values()) / n for m, name in measures.items()}


PEERS = {"rectools": run_rectools, "ranx": run_ranx, "pytrec_eval": run_pytrec_eval}

if __name__ == "__main__":
    peer, data, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
    repeat = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    warmup = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    recs, truth = load(data)
    if peer == "ranx":  # numba compiles on first use: warm it on a small slice, not timed
        run_ranx(recs.head(1000), truth[truth.user_id.isin(recs.head(1000).user_id)], k)
    for _ in range(warmup):
        PEERS[peer](recs, truth, k)
    seconds = []
    for _ in range(repeat):
        start = time.perf_counter()
        metrics = PEERS[peer](recs, truth, k)
        seconds.append(time.perf_counter() - start)
    print(json.dumps({"peer": peer, "seconds": seconds, "metrics": {m: float(v) for m, v in metrics.items()}}))
