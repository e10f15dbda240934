"""Every metric once: its name, family, direction, per-user column, what it needs, whether a
bootstrap interval exists, whether it has a curve over k, its label, its formula in words and,
for an accuracy metric, its kernel: how every pass computes it.

Everything else reads this list: the accuracy passes (:mod:`metrics_core.metrics.accuracy`
loops over the entries' kernels), the evaluation's aggregates and curves, the comparison's
per-user columns and refusals, the app's cards, tables, pickers and tooltips, the report, and the
metric tables of ``docs/metrics.md`` (:mod:`metrics_core.metrics.docs`). Adding an accuracy
metric is one entry here, its kernel made of the pieces in
:mod:`metrics_core.metrics.accuracy.formulas` (a new piece only when none fits), and a slow
definition in ``tests/reference.py``, which the cross-check requires; an entry whose kernel a
pass cannot compute stops the import with a message saying what to add (see CONTRIBUTING.md).

Families:

- ``accuracy``: a mean over the evaluated users (those with a relevant item), from the lists
  and the ground truth; reported at every k when it has a curve.
- ``beyond``: a mean over the users with a non-empty list (and what the metric needs).
- ``catalog``: a property of all lists together (coverage, Gini, ...); drawing users with
  replacement biases it, so it has no bootstrap interval.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from metrics_core.metrics.accuracy import formulas as f
from metrics_core.metrics.accuracy.ideal import discounted_gain, ndcg_totals
from metrics_core.metrics.accuracy.kernels import (
    FirstHit,
    HitSum,
    Kernel,
    OfWholeList,
    OverCandidates,
    kernel_problem,
)
from metrics_core.metrics.accuracy.whole_list import (
    expected_exposure,
    interpolated_precision,
    judged_share,
    label_ranking_ap,
    partial_auc,
    whole_list,
)

if TYPE_CHECKING:
    from metrics_core.settings import Settings

Family = Literal["accuracy", "beyond", "catalog"]
Need = Literal["candidates", "catalog", "train", "features", "scores", "judgements", "primitive", "categories"]


@dataclass(frozen=True)
class Metric:
    """One metric as every part of rankscope sees it.

    name: the key in ``Evaluation.metrics``, the CLI's JSON and the comparison.
    label, formula: how people see it (cards, tables, tooltips, the glossary).
    per_user: its column in ``Evaluation.per_user`` (None: not a mean of per-user values).
    higher_is_better: True, False, or None when neither direction is better (ARP, score entropy).
    interval: whether a bootstrap interval over users is meaningful.
    needs: inputs beyond the lists and the ground truth.
    curve: whether ``Evaluation.curves`` reports it at every k.
    headline: shown on its own (a card, a table row); False for a variant of another metric.
    bounds: the smallest and largest value it can take under the default conventions (None:
        unbounded on that side); ``similarity="hamming"`` puts diversity between 0 and the
        number of feature columns.
    whole_list: computed over each whole list whatever K (its label has no "@K").
    of, aggregate: for a metric without per-user values of its own, the metric whose per-user
        values it summarises and how (a key of ``AGGREGATES``: a mean of transformed values,
        transformed back, so that it can be bootstrapped like a mean).
    combines, combine: for a smooth function of other metrics' means, their names and the
        function (``combine(means, settings)``, the means in ``combines`` order); every engine
        reports it when those metrics are there, and the comparison resamples it from their means.
    decimals: how many decimals a value is shown with (a count: 0).
    kernel: for an accuracy metric with per-user values, how every pass computes it
        (:mod:`metrics_core.metrics.accuracy.kernels`).
    """

    name: str
    label: str
    formula: str
    family: Family
    per_user: str | None = None
    higher_is_better: bool | None = True
    interval: bool = True
    needs: tuple[Need, ...] = ()
    curve: bool = False
    headline: bool = True
    bounds: tuple[float | None, float | None] = (0.0, 1.0)
    whole_list: bool = False
    of: str | None = None
    aggregate: str | None = None
    combines: tuple[str, ...] = ()
    combine: Callable[[Sequence[np.ndarray], Settings], np.ndarray] | None = None
    decimals: int = 4
    kernel: Kernel | None = None


GEOMETRIC_EPSILON = 1e-5  # trec_eval's gm_map: a user's AP below this counts as this


@dataclass(frozen=True)
class Aggregate:
    """A summary of per-user values v as back(mean(forward(v)))."""

    forward: Callable[[np.ndarray], np.ndarray]
    back: Callable[[np.ndarray], np.ndarray]

    def __call__(self, values: np.ndarray) -> float:
        """The summary of ``values``; NaN without values."""
        if not len(values):
            return float("nan")
        return float(self.back(np.mean(self.forward(np.asarray(values, dtype=np.float64)))))


AGGREGATES: dict[str, Aggregate] = {
    # exp(mean(log(max(v, ε)))), trec_eval's geometric mean (ε = 1e-5)
    "geometric_mean": Aggregate(lambda v: np.log(np.maximum(v, GEOMETRIC_EPSILON)), np.exp),
}


def _accuracy(name: str, label: str, formula: str, per_user: str | None, needs: tuple[Need, ...] = (),
              headline: bool = True, bounds: tuple[float | None, float | None] = (0.0, 1.0),
              curve: bool = True, higher_is_better: bool | None = True, whole_list: bool = False,
              kernel: Kernel | None = None) -> Metric:
    """An accuracy entry; one with per-user values must have a kernel every pass can compute
    (else the import stops here, saying what to add)."""
    problem = kernel_problem(name, kernel, curve, needs) if per_user else None
    if problem:
        raise TypeError(problem)
    return Metric(name, label, formula, "accuracy", per_user, higher_is_better, needs=needs, curve=curve,
                  headline=headline, bounds=bounds, whole_list=whole_list, kernel=kernel)


def _fbeta_of_means(means: Sequence[np.ndarray], settings: Settings) -> np.ndarray:
    return f.fbeta_of_means(means[0], means[1], settings.beta)


def _sum(weight, scale, totals=None, ties=False) -> tuple[HitSum]:
    return (HitSum(weight, scale, totals, ties),)


WHOLE_LIST = OfWholeList(whole_list)
PARTIAL_AUC = OfWholeList(partial_auc)
JUDGED = OfWholeList(judged_share)
LRAP = OfWholeList(label_ranking_ap)
EXPECTED_EXPOSURE = OfWholeList(expected_exposure)
RECALL_LEVELS = OfWholeList(interpolated_precision)


REGISTRY: tuple[Metric, ...] = (
    _accuracy("precision", "Precision", "hits in the top K / K, averaged over users", "precision",
              kernel=_sum(f.one, f.per_precision_denominator)),
    _accuracy("recall", "Recall", "hits in the top K / all relevant items of the user, averaged", "recall",
              kernel=_sum(f.one, f.per_relevant)),
    _accuracy("fbeta", "F-beta", "(1+β²)·P·R / (β²·P + R) per user, averaged", "fbeta",
              kernel=_sum(f.one, f.fbeta_factor)),
    Metric("fbeta_of_means", "F-beta of means", "F-beta of the mean precision and mean recall", "accuracy",
           headline=False, curve=True, combines=("precision", "recall"), combine=_fbeta_of_means),
    _accuracy("map", "MAP", "mean of AP@K = Σ P(i)·rel(i) / D; D = min(K, R) by default", "ap",
              kernel=_sum(f.precision_at_hit, f.per_ap_denominator)),
    Metric("gm_map", "GM-MAP", "geometric mean of AP@K over users, an AP below 1e-5 counting as 1e-5 (trec_eval)",
           "accuracy", of="map", aggregate="geometric_mean", headline=False),
    _accuracy("mar", "MAR", "mean of AR@K = Σ Recall(i)·rel(i) / hits", "ar",
              kernel=(HitSum(f.one, f.per_twice_relevant), FirstHit(f.half_per_relevant))),
    _accuracy("ndcg", "NDCG", "DCG / ideal DCG; DCG = Σ gain / log2(rank + 1)", "ndcg",
              kernel=_sum(discounted_gain, f.per_ideal_dcg, ndcg_totals, ties=True)),
    _accuracy("dcg", "DCG", "Σ gain / log2(rank + 1) over the top K, not normalised (gain as set)", "dcg",
              bounds=(0.0, None), kernel=_sum(discounted_gain, f.dcg_factor, ties=True)),
    _accuracy("hit_rate", "Hit rate", "share of users with at least one relevant item in the top K", "hit",
              kernel=(FirstHit(f.first_hit_counts),)),
    _accuracy("mrr", "MRR", "mean of 1 / rank of the first relevant item in the top K", "rr",
              kernel=(FirstHit(f.reciprocal_rank, f.whole_list_unless_cut),)),
    _accuracy("lauc", "LAUC", "area under the ROC curve up to rank K, then a straight line to (1, 1)", "lauc",
              ("candidates",), kernel=OverCandidates(f.lauc)),
    _accuracy("mcc", "MCC", "Matthews correlation of recommended vs relevant among the candidates", "mcc",
              ("candidates",), bounds=(-1.0, 1.0), kernel=OverCandidates(f.mcc)),
    _accuracy("rbp", "RBP", "rank-biased precision: (1 − p)·Σ rel(i)·p^(i−1), persistence p (0.8)", "rbp",
              kernel=_sum(f.rbp_weight, f.unit)),
    _accuracy("bpref", "bpref", "Σ over relevant items in the top K of 1 − min(judged non-relevant above, R) / "
              "min(R, N), / R", "bpref", ("judgements",),
              kernel=_sum(f.bpref_term, f.per_relevant)),
    _accuracy("infap", "infAP", "inferred AP: Σ over relevant items in the top K, at rank i, of 1/i + "
              "(pooled above / i)·(relevant above + ε) / (judged above + 2ε), / R; ε = 1e-5; pooled = judged or "
              "pooled but unjudged (trec_eval)", "infap",
              ("judgements",), kernel=_sum(f.infap_term, f.per_relevant)),
    _accuracy("relative_precision", "Relative precision", "hits in the top K / min(K, R)", "relative_precision",
              kernel=_sum(f.one, f.per_best_possible)),
    _accuracy("r_precision_at_k", "R-precision@K", "hits among the first min(K, R) items / min(K, R): R-precision "
              "when R ≤ K, precision@K when R > K", "r_precision_at_k", headline=False,
              kernel=_sum(f.within_relevant_count, f.per_best_possible)),
    _accuracy("pauc", "pAUC", "RecTools' partial AUC: Σ over relevant items listed with FP < K irrelevant items "
              "above of (K − FP), / (R·K), reading the list past K to its K-th irrelevant item", "pauc", curve=False,
              headline=False, kernel=PARTIAL_AUC),
    _accuracy("pap", "pAP", "RecTools' pAP: pAUC over the first K relevant items listed, / (min(R, K)·K)", "pap",
              curve=False, headline=False, kernel=PARTIAL_AUC),
    _accuracy("lrap", "LRAP", "label ranking average precision over the top K (scikit-learn's): Σ over relevant "
              "items j of relevant / all items scored at least j's score, / R; ties count as above", "lrap",
              curve=False, headline=False, kernel=LRAP),
    _accuracy("ee_loss", "EE-L", "expected exposure loss (TREC Fair Ranking): ‖ε − ε*‖², exposure γ^(i−1) of "
              "the top K against the ideal policy's, relevant items sharing the first ranks", "ee_loss", curve=False,
              headline=False, bounds=(0.0, None), higher_is_better=False, kernel=EXPECTED_EXPOSURE),
    _accuracy("ee_relevance", "EE-R", "expected exposure relevance: ε·ε*, the exposure the top K gives relevant "
              "items weighed by their ideal share", "ee_relevance", curve=False, headline=False, bounds=(0.0, None),
              kernel=EXPECTED_EXPOSURE),
    _accuracy("ee_disparity", "EE-D", "expected exposure disparity: ‖ε‖², Σ γ^(2(i−1)) over the listed ranks of "
              "the top K (one list: its length's)", "ee_disparity", curve=False, headline=False, bounds=(0.0, None),
              higher_is_better=None, kernel=EXPECTED_EXPOSURE),
    _accuracy("judged", "Judged", "items in the top K the ground truth has a row for (any grade) / items listed in "
              "the top K (ir_measures' Judged@k)", "judged", curve=False, headline=False, higher_is_better=None,
              kernel=JUDGED),
    _accuracy("fall_out", "Fall-out", "irrelevant items in the top K / irrelevant candidates", "fall_out",
              ("candidates",), higher_is_better=False, kernel=OverCandidates(f.fall_out)),
    _accuracy("accuracy", "Accuracy", "(hits + irrelevant candidates left out) / all candidates", "accuracy",
              ("candidates",), kernel=OverCandidates(f.classification_accuracy)),
    *(_accuracy(f"iprec_at_recall_{level / 10:.2f}", f"iP at recall {level / 10:.1f}",
                f"highest precision at a rank whose recall reaches {level / 10:.1f} (within the top K)",
                f"iprec_at_recall_{level / 10:.2f}", curve=False, headline=False, kernel=RECALL_LEVELS)
      for level in range(11)),
    _accuracy("11pt_avg", "11-point average precision", "mean interpolated precision at recall 0, 0.1, .., 1",
              "11pt_avg", curve=False, kernel=RECALL_LEVELS),
    _accuracy("r_precision", "R-precision", "hits among the first R items of the whole list / R", "r_precision",
              curve=False, whole_list=True, kernel=WHOLE_LIST),
    _accuracy("ndcg_at_r", "NDCG at R", "NDCG of the whole list cut at R, the user's relevant count", "ndcg_at_r",
              curve=False, whole_list=True, kernel=WHOLE_LIST),
    _accuracy("set_precision", "Set precision", "all hits in the whole list / its length", "set_precision",
              curve=False, headline=False, whole_list=True, kernel=WHOLE_LIST),
    _accuracy("set_recall", "Set recall", "all hits in the whole list / R", "set_recall", curve=False,
              headline=False, whole_list=True, kernel=WHOLE_LIST),
    _accuracy("utility", "Utility", "relevant items in the whole list − its other items (trec_eval's utility at its "
              "default weights 1, −1, 0, 0)", "utility", curve=False, headline=False, bounds=(None, None),
              whole_list=True, kernel=WHOLE_LIST),
    _accuracy("set_map", "Set MAP", "set precision × set recall (trec_eval's set_map)", "set_map", curve=False,
              headline=False, whole_list=True, kernel=WHOLE_LIST),
    Metric("diversity", "Diversity",
           "mean distance between the items of a list: 1 − cosine (0-2; Hamming: differing feature columns)", "beyond",
           "diversity", needs=("features",), bounds=(0.0, 2.0)),
    Metric("intra_list_similarity", "Intra-list similarity",
           "mean similarity (cosine or co-occurrence) of the items of a list", "beyond",
           "intra_list_similarity", higher_is_better=False, needs=("features",), headline=False,
           bounds=(-1.0, 1.0)),
    Metric("novelty", "Novelty", "mean −log2(share of training users who saw the item)", "beyond", "novelty",
           needs=("train",), bounds=(0.0, None)),
    Metric("serendipity", "Serendipity", "relevant hits that are unlike the user's history: 1 − mean similarity to it",
           "beyond", "serendipity", needs=("train", "features"), bounds=(0.0, 2.0)),
    Metric("calibration", "Miscalibration", "C_KL = Σ_g p(g|history)·log(p / q̃), q̃ = (1 − α)·q(g|top K) + α·p, "
           "the item categories' mix in the history (p) and the list (q), α = 0.01 (Steck)", "beyond", "calibration",
           higher_is_better=False, needs=("train", "categories"), bounds=(0.0, None)),
    Metric("serendipity_popularity", "Serendipity (popularity)",
           "mean over the top K of max(p(rank) − p(popularity rank), 0)·rel, p(r) = (n + 1 − r) / n (RecTools)",
           "beyond", "serendipity_popularity", needs=("train",), headline=False),
    Metric("serendipity_primitive", "Serendipity vs primitive",
           "Σ over the top K of max(Pr(i) − Prim(i), 0)·rel(i), both models' lists scaled to [0, 1]", "beyond",
           "serendipity_primitive", needs=("primitive",), bounds=(0.0, None)),
    Metric("unexpectedness", "Unexpectedness", "share of the top K that the primitive model's top K does not hold",
           "beyond", "unexpectedness", higher_is_better=None, needs=("primitive",)),
    Metric("novelty_interactions", "Novelty (interactions)",
           "mean over every recommendation of −log2(item's share of training interactions) (Recommenders)",
           "catalog", interval=False, needs=("train",), headline=False, bounds=(0.0, None)),
    Metric("personalization", "Personalization", "1 − mean overlap of two users' top-K lists / K", "catalog",
           interval=False),
    Metric("arp", "ARP", "mean training popularity of the recommended items", "beyond", "arp",
           higher_is_better=None, needs=("train",), bounds=(0.0, None), decimals=1),
    Metric("arp_normalised", "ARP (share of users)", "ARP / number of training users", "beyond",
           higher_is_better=None, needs=("train",), headline=False, bounds=(0.0, None)),  # repeats count
    Metric("exposure_distance", "Exposure disparity",
           "Jensen–Shannon distance (base 2) between the item groups' shares of the lists' exposure "
           "(1 / log2(rank + 1) at each rank) and their shares of the catalog", "catalog", higher_is_better=False,
           interval=False, needs=("categories",)),
    Metric("coverage", "Coverage", "share of the catalog that appears in some top-K list", "catalog",
           interval=False, needs=("catalog",)),
    Metric("aggregate_diversity", "Distinct items", "number of different items recommended", "catalog",
           interval=False, bounds=(0.0, None), decimals=0),
    Metric("gini", "Gini", "inequality of recommendation counts over the catalog (0 even, 1 one item)", "catalog",
           higher_is_better=False, interval=False, needs=("catalog",)),
    Metric("entropy", "Entropy", "−Σ p ln p of recommendation shares over the catalog", "catalog", interval=False,
           needs=("catalog",), bounds=(0.0, None)),
    Metric("entropy_normalised", "Entropy (normalised)", "entropy / ln(catalog size)", "catalog", interval=False,
           needs=("catalog",), headline=False),
    Metric("score_entropy", "Score entropy", "entropy of softmax(top-K scores) per user, averaged", "beyond",
           "score_entropy", higher_is_better=None, needs=("scores",), bounds=(0.0, None)),
)
METRICS: dict[str, Metric] = {metric.name: metric for metric in REGISTRY}


RENAMED = {"ndcg_rel": "ndcg_at_r"}  # old name -> new: trec_eval's ndcg_rel is another measure


def current_name(name: str) -> str:
    """``name``, or the metric's new name when it was renamed (with a DeprecationWarning).

    >>> import warnings
    >>> with warnings.catch_warnings(record=True):
    ...     current_name("ndcg_rel"), current_name("ndcg")
    ('ndcg_at_r', 'ndcg')
    """
    if name not in RENAMED:
        return name
    import warnings

    warnings.warn(f"metric {name!r} is now called {RENAMED[name]!r} (trec_eval's {name} is another measure); "
                  f"the old name will go in a later version", DeprecationWarning, stacklevel=3)
    return RENAMED[name]


class MetricValues(dict):
    """Aggregates by metric name that also answer to a renamed metric's old name (warning)."""

    def __missing__(self, name: str) -> float:
        if name in RENAMED:
            return self[current_name(name)]
        raise KeyError(name)


def family(name: Family) -> list[Metric]:
    """The metrics of one family, in registry order."""
    return [metric for metric in REGISTRY if metric.family == name]


def names(family_name: Family | None = None) -> list[str]:
    """Metric names, of one family or all, in registry order."""
    return [metric.name for metric in REGISTRY if family_name is None or metric.family == family_name]


def per_user_columns(family_name: Family | None = None) -> dict[str, str]:
    """Metric name -> per-user column, for the metrics that are means of per-user values."""
    return {metric.name: metric.per_user for metric in REGISTRY
            if metric.per_user and (family_name is None or metric.family == family_name)}


def columns_behind(metric_names: Iterable[str]) -> set[str]:
    """The per-user columns whose values make ``metric_names``: each metric's own, the column an
    aggregate of another metric summarises (``of``), and those of the metrics a combined one is a
    function of (``combines``), so that computing these columns alone gives those metrics.

    >>> sorted(columns_behind(["gm_map", "fbeta_of_means", "coverage"]))
    ['ap', 'precision', 'recall']
    """
    columns: set[str] = set()
    for name in metric_names:
        metric = METRICS[name]
        if metric.per_user:
            columns.add(metric.per_user)
        if metric.of is not None:
            columns |= columns_behind([metric.of])
        columns |= columns_behind(metric.combines)
    return columns


def accuracy_entries(with_candidates: bool, with_judgements: bool = True) -> list[Metric]:
    """The accuracy entries the accuracy passes compute (those with per-user values): those
    needing a candidate count only with one, those needing judged non-relevant items only with
    some."""
    missing = {need for need, present in (("candidates", with_candidates), ("judgements", with_judgements))
               if not present}
    return [metric for metric in family("accuracy") if metric.per_user and not missing & set(metric.needs)]


def combined(means: Mapping[str, np.ndarray | float], settings: Settings) -> dict[str, np.ndarray]:
    """Every metric that is a smooth function of other metrics' means (``combine``), from those
    means (by metric name; scalars or arrays, such as a curve over k), where they are all given.

    >>> from metrics_core.settings import Settings
    >>> {name: float(value) for name, value in combined({"precision": 0.5, "recall": 0.25}, Settings()).items()}
    {'fbeta_of_means': 0.3333333333333333}
    """
    return {metric.name: metric.combine([np.asarray(means[name], dtype=np.float64) for name in metric.combines],
                                        settings)
            for metric in REGISTRY if metric.combine is not None and all(name in means for name in metric.combines)}


def needing(need: Need, family_name: Family | None = None) -> list[str]:
    """The metrics (of one family, or all) that need ``need``, in registry order."""
    return [metric.name for metric in REGISTRY
            if need in metric.needs and (family_name is None or metric.family == family_name)]


def smooth_of_means() -> list[str]:
    """Aggregates that are smooth functions of per-user means (no per-user column of their own,
    or a transformed mean of another metric's): intervals from resampled means, no paired test."""
    return [metric.name for metric in REGISTRY if metric.per_user is None and metric.interval]


def label(name: str, k: int | None = None) -> str:
    """``"NDCG@10"``: a metric's label, with K when given and the metric depends on it (a metric
    over the whole list, or a name the registry does not know, as it is).

    >>> label("ndcg", 10), label("r_precision", 10), label("ndcg"), label("custom", 5)
    ('NDCG@10', 'R-precision', 'NDCG', 'custom')
    """
    info = METRICS.get(name)
    text = info.label if info else name
    return f"{text}@{k}" if k is not None and info is not None and not info.whole_list else text


ESSENTIAL = ("ndcg", "recall", "precision", "map", "mrr", "hit_rate", "coverage", "novelty", "diversity",
             "serendipity", "personalization", "gini")  # the few a reader who is not a specialist starts from


def essential(families: tuple[Family, ...]) -> list[str]:
    """The metrics of :data:`ESSENTIAL` of the given families, in registry order."""
    return [name for name in headline(families) if name in ESSENTIAL]


def headline(families: tuple[Family, ...]) -> list[str]:
    """The metrics shown on their own, of the given families, in registry order."""
    return [metric.name for metric in REGISTRY if metric.headline and metric.family in families]


def curves() -> list[str]:
    """Metrics reported at every cut-off."""
    return [metric.name for metric in REGISTRY if metric.curve]
