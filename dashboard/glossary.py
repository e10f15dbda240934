"""Names, formulas and directions of the metrics as the app shows them (tooltips, tables)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MetricInfo:
    label: str
    formula: str
    higher_is_better: bool | None = True
    per_user: str | None = None  # the per-user column behind the aggregate
    at_k: bool = True


METRICS: dict[str, MetricInfo] = {
    "precision": MetricInfo("Precision", "hits in the top K / K, averaged over users", per_user="precision"),
    "recall": MetricInfo("Recall", "hits in the top K / all relevant items of the user, averaged", per_user="recall"),
    "fbeta": MetricInfo("F-beta", "(1+β²)·P·R / (β²·P + R) per user, averaged", per_user="fbeta"),
    "fbeta_of_means": MetricInfo("F-beta of means", "F-beta of the mean precision and mean recall"),
    "map": MetricInfo("MAP", "mean of AP@K = Σ P(i)·rel(i) / D; D = min(K, R) by default", per_user="ap"),
    "mar": MetricInfo("MAR", "mean of AR@K = Σ Recall(i)·rel(i) / hits", per_user="ar"),
    "ndcg": MetricInfo("NDCG", "DCG / ideal DCG; DCG = Σ gain / log2(rank + 1)", per_user="ndcg"),
    "hit_rate": MetricInfo("Hit rate", "share of users with at least one relevant item in the top K", per_user="hit"),
    "mrr": MetricInfo("MRR", "mean of 1 / rank of the first relevant item in the top K", per_user="rr"),
    "lauc": MetricInfo("LAUC", "area under the ROC curve up to rank K, then a straight line to (1, 1)",
                       per_user="lauc"),
    "mcc": MetricInfo("MCC", "Matthews correlation of recommended vs relevant among the candidates",
                      per_user="mcc"),
    "diversity": MetricInfo("Diversity", "mean cosine distance between the items of a list (0-2)",
                            per_user="diversity"),
    "intra_list_similarity": MetricInfo("Intra-list similarity", "mean cosine similarity within a list",
                                        False, per_user="intra_list_similarity"),
    "novelty": MetricInfo("Novelty", "mean −log2(share of training users who saw the item)", per_user="novelty"),
    "serendipity": MetricInfo("Serendipity", "relevant hits that are unlike the user's history: 1 − mean cosine",
                              per_user="serendipity"),
    "personalization": MetricInfo("Personalization", "1 − mean overlap of two users' top-K lists / K"),
    "arp": MetricInfo("ARP", "mean training popularity of the recommended items", None, per_user="arp"),
    "arp_normalised": MetricInfo("ARP (share of users)", "ARP / number of training users", None),
    "coverage": MetricInfo("Coverage", "share of the catalog that appears in some top-K list"),
    "aggregate_diversity": MetricInfo("Distinct items", "number of different items recommended"),
    "gini": MetricInfo("Gini", "inequality of recommendation counts over the catalog (0 even, 1 one item)", False),
    "entropy": MetricInfo("Entropy", "−Σ p ln p of recommendation shares over the catalog"),
    "entropy_normalised": MetricInfo("Entropy (normalised)", "entropy / ln(catalog size)"),
    "score_entropy": MetricInfo("Score entropy", "entropy of softmax(top-K scores) per user, averaged", None,
                                per_user="score_entropy"),
}

ACCURACY = ["precision", "recall", "fbeta", "map", "mar", "ndcg", "hit_rate", "mrr", "lauc", "mcc"]
BEYOND = ["diversity", "novelty", "serendipity", "personalization", "coverage", "aggregate_diversity", "gini",
          "entropy", "arp", "score_entropy"]
PER_USER_LABELS = {info.per_user: info.label for info in METRICS.values() if info.per_user}


def label(name: str, k: int | None = None) -> str:
    info = METRICS.get(name)
    text = info.label if info else name
    return f"{text}@{k}" if k is not None and info is not None and info.at_k else text


def fmt(name: str, value: float | None) -> str:
    if value is None:
        return "–"
    if name == "aggregate_diversity":
        return f"{value:,.0f}"
    if name == "arp":
        return f"{value:,.1f}"
    return f"{value:.4f}"
