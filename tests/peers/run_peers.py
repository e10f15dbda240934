"""Compute the peers' own numbers on a data directory and print them as JSON (run with the
peers' interpreter, .venv-peers/bin/python; rankscope is not imported here).

Usage: run_peers.py DATA_DIR K
DATA_DIR holds recs.csv (user_id, item_id, rank, score), truth.csv (user_id, item_id),
train.csv (user_id, item_id) and items.csv (item_id, genre, year).
"""

from __future__ import annotations

import json
import sys
import warnings

import numpy as np
import pandas as pd


def rectools_numbers(recs, truth, train, items, k) -> dict:
    from rectools import Columns
    from rectools.metrics import (
        MAP,
        MRR,
        NDCG,
        PAP,
        AvgRecPopularity,
        CatalogCoverage,
        HitRate,
        IntraListDiversity,
        MeanInvUserFreq,
        PairwiseHammingDistanceCalculator,
        PartialAUC,
        Precision,
        Recall,
        Serendipity,
        calc_metrics,
    )

    reco = recs.rename(columns={"user_id": Columns.User, "item_id": Columns.Item, "rank": Columns.Rank})
    interactions = truth.rename(columns={"user_id": Columns.User, "item_id": Columns.Item})
    prev = train.rename(columns={"user_id": Columns.User, "item_id": Columns.Item})
    features = items.set_index("item_id")[["genre", "year"]]
    catalog = items["item_id"].unique()
    metrics = {
        "precision": Precision(k), "recall": Recall(k), "map": MAP(k), "ndcg": NDCG(k), "mrr": MRR(k),
        "hit_rate": HitRate(k), "novelty": MeanInvUserFreq(k), "arp": AvgRecPopularity(k),
        "arp_normalised": AvgRecPopularity(k, normalize=True), "serendipity_popularity": Serendipity(k),
        "diversity": IntraListDiversity(k, PairwiseHammingDistanceCalculator(features)),
        "coverage": CatalogCoverage(k, normalize=True), "pauc": PartialAUC(k), "pap": PAP(k),
    }
    return {name: float(value) for name, value in calc_metrics(metrics, reco[[Columns.User, Columns.Item,
                                                                              Columns.Rank]],
                                                               interactions, prev, catalog).items()}


def recommenders_numbers(recs, truth, train, k) -> dict:
    from recommenders.evaluation import python_evaluation as ev

    pred = recs.rename(columns={"user_id": "userID", "item_id": "itemID", "score": "prediction"})
    top = pred[pred["rank"] <= k][["userID", "itemID"]]
    pred = pred.drop(columns=["rank"])  # Recommenders ranks by prediction itself
    true = truth.rename(columns={"user_id": "userID", "item_id": "itemID"}).assign(rating=1.0)
    hits = top.merge(true[["userID", "itemID"]].assign(relevance=1.0), how="left").fillna({"relevance": 0.0})
    trained = train.rename(columns={"user_id": "userID", "item_id": "itemID"})
    common = dict(col_user="userID", col_item="itemID")
    ranking = dict(col_rating="rating", col_prediction="prediction", k=k, **common)
    return {
        "precision": ev.precision_at_k(true, pred, **ranking), "recall": ev.recall_at_k(true, pred, **ranking),
        "map": ev.map_at_k(true, pred, **ranking), "ndcg": ev.ndcg_at_k(true, pred, **ranking),
        # r_precision_at_k is left out: it averages only over users with a hit among their
        # first R (the others drop out of its mean as NaN), which rankscope does not copy.
        "novelty_interactions": ev.novelty(trained, top, **common),
        "diversity": ev.diversity(trained, top, **common),
        "serendipity": ev.serendipity(trained, hits, col_relevance="relevance", **common),
        "entropy": ev.distributional_coverage(trained, top, **common),
        "coverage": ev.catalog_coverage(trained, top, **common),
    }


def torchmetrics_numbers(recs, truth, k) -> dict:
    import torch
    from torchmetrics import retrieval as r

    true = set(zip(truth["user_id"], truth["item_id"], strict=True))
    target = torch.tensor([(u, i) in true for u, i in zip(recs["user_id"], recs["item_id"], strict=True)])
    preds = torch.tensor(recs["score"].to_numpy(dtype=np.float64))
    indexes = torch.tensor(recs["user_id"].to_numpy(dtype=np.int64))
    metrics = {"precision": r.RetrievalPrecision(top_k=k), "recall": r.RetrievalRecall(top_k=k),
               "map": r.RetrievalMAP(top_k=k), "ndcg": r.RetrievalNormalizedDCG(top_k=k),
               "mrr": r.RetrievalMRR(top_k=k), "hit_rate": r.RetrievalHitRate(top_k=k),
               "r_precision": r.RetrievalRPrecision()}
    return {name: float(metric(preds, target, indexes=indexes)) for name, metric in metrics.items()}


def main(data: str, k: int) -> None:
    warnings.filterwarnings("ignore")
    recs, truth, train, items = (pd.read_csv(f"{data}/{name}.csv") for name in ("recs", "truth", "train", "items"))
    print(json.dumps({"rectools": rectools_numbers(recs, truth, train, items, k),
                      "recommenders": recommenders_numbers(recs, truth, train, k),
                      "torchmetrics": torchmetrics_numbers(recs, truth, k)}))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
