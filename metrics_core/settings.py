"""The choices that change a number: :class:`Encoding` (how lists are ordered, fixed when the
data is encoded), :class:`Settings` (everything chosen at evaluation time, cheap to change),
and named presets that reproduce other tools' conventions on purpose."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Literal, get_args, get_type_hints

from metrics_core.errors import input_error

Order = Literal["rank", "score"]
TieBreak = Literal["input", "item_desc"]
APDenominator = Literal["min_k_relevant", "relevant", "hits", "k"]
Gain = Literal["linear", "exponential", "binary"]
PrecisionDenominator = Literal["k", "list", "min_k_relevant"]
NdcgIdeal = Literal["cut_at_k", "all_relevant", "k_relevant"]
Similarity = Literal["cosine", "hamming", "cooccurrence"]
PrimitiveScale = Literal["rank", "minmax"]
RecallLevels = Literal["round", "add_0.9"]
UsersWithoutRelevant = Literal["exclude", "zero", "zero_if_judged"]
CustomGain = tuple[tuple[float, float], ...]  # (grade, gain) pairs, grades ascending
AP_DENOMINATORS: tuple[str, ...] = get_args(APDenominator)
GAINS: tuple[str, ...] = get_args(Gain)
PRECISION_DENOMINATORS: tuple[str, ...] = get_args(PrecisionDenominator)
NDCG_IDEALS: tuple[str, ...] = get_args(NdcgIdeal)
SIMILARITIES: tuple[str, ...] = get_args(Similarity)
PRIMITIVE_SCALES: tuple[str, ...] = get_args(PrimitiveScale)


@dataclass(frozen=True)
class Settings:
    """Every choice that changes a number, with rankscope's defaults.

    k: the cut-off K.
    beta: F-beta weight of recall (beta > 1 favours recall).
    ap_denominator: D of AP@K: ``min_k_relevant`` = min(K, R), ``relevant`` = R, ``hits`` = h(K),
        ``k`` = K (RecTools' divide_by_k).
    gain: NDCG and DCG gain of a grade g: ``linear`` = g, ``exponential`` = 2^g - 1, ``binary`` = 1,
        or a mapping {grade: gain} (trec_eval's custom gains; a grade not in it keeps its own
        value as gain). Gains must not decrease as grades rise, so that the ideal list is the
        grades in descending order. Stored as ((grade, gain), ...) pairs.
    precision_denominator: ``k`` (short lists are penalised), ``list`` = number of items in
        the top k (Evidently's min(K, |L|)) or ``min_k_relevant`` = min(K, R) (RecTools).
    rbp_p: persistence of rank-biased precision, 0 < p < 1 (default 0.8).
    rbp_gain: what a relevant item at rank i adds to RBP, times (1 − p)·p^(i−1): 1 (``binary``,
        Moffat and Zobel's r_i, default), its grade over the ground truth's highest grade
        (``scaled``: graded RBP, within [0, 1], as cwl_eval scales grades), or its grade itself
        (``grade``, ranx; RBP can then exceed 1).
    rbp_max_grade: the grade ``scaled`` divides by, higher grades counting as it (cwl_eval's
        ``max_rel``); None: the ground truth's highest relevant grade.
    ee_patience: γ of expected exposure's browsing model, 0 < γ < 1: the item at rank i gets
        exposure γ^(i−1) (default 0.5, TREC Fair Ranking's).
    ndcg_ideal: the ideal list behind NDCG: ``cut_at_k`` (the user's best grades, at most K of
        them), ``all_relevant`` (all of them whatever K, trec_eval's ``ndcg`` on a top-K run) or
        ``k_relevant`` (K relevant items, RecTools).
    dcg_discount: each rank i's weight in DCG and NDCG: 1 / log2(i + 1) (``log2``, default), or
        LensKit's 1 / log2(max(i, 2)) (``lenskit``: ranks 1 and 2 both weigh 1).
    false_positives: what MCC and accuracy over the candidates count as false positives: the
        irrelevant items ``listed`` in the top K (default), or K − hits (``k``, RecTools: a list
        shorter than K counts its empty places as false positives too).
    dcg_log_base: the base of the logarithm in DCG's discount 1 / log(rank + 1) (default 2;
        scikit-learn's ``dcg_score(log_base=...)``, Microsoft Recommenders' ``discfun_type="loge"`` is
        e). DCG at base b is log2(b) times DCG at base 2; NDCG does not depend on it.
    dcg_ties: items with equal scores in DCG and NDCG at K: in the list's ``order`` (default), or
        ``average`` (scikit-learn's ``dcg_score``/``ndcg_score`` default, McSherry and Najork):
        every position of a run of equal scores takes the run's mean gain, so the order within a
        tie does not matter. A run is equal scores next to each other in the list's order (every
        tie, when lists are ordered by score); lists without scores have none.
    score_threshold: items scored at or below it are not retrieved (their positions are left
        empty), as torchmetrics' retrieval metrics can do; None keeps every item. Needs scores.
    preset: a named convention (see ``PRESETS``) applied to every field left at its default:
        ``Settings(preset="trec_eval", k=20)``. Its encoding part (how lists are ordered) is
        :func:`encoding_for`'s.
    rr_cutoff: RR counts only the first relevant item within K (False: anywhere in the list,
        as trec_eval's ``recip_rank``).
    fbeta: the headline F-beta: ``per_user`` (mean of per-user F) or ``of_means`` (F of the
        mean precision and recall). Both are always reported.
    users_without_relevant: ``exclude`` (counted, not averaged), ``zero_if_judged`` (averaged as
        0 when the ground truth has rows for them, all below the threshold, as trec_eval averages a
        topic whose judged documents are all non-relevant; excluded otherwise) or ``zero`` (averaged as 0,
        Evidently's ``no_feedback_users``).
    users_without_list: users with relevant items but no list score 0 (``zero``) or are left
        out (``drop``, as Evidently does silently).
    candidates: number of candidate items per user for LAUC and MCC; None = the training
        catalog minus the user's own training items (skipped when there is no training data).
    max_list_length: the most items of each list evaluated, the first in its order (trec_eval's
        ``-M``); None: every item. Every metric, over the top K or the whole list, sees the cut list.
    judged_only: evaluate each list condensed to the items its user's ground truth judges
        (relevant, or graded below the threshold), the others removed and the rest moved up
        (trec_eval's ``-J``, pytrec_eval's ``judged_docs_only_flag``, ir_measures'
        ``judged_only``); applied after ``score_threshold`` and ``max_list_length``. Items
        without a ground-truth row, and a qrels file's pooled but unjudged ones (a negative
        grade), are removed.
    recall_levels: how many hits reach recall level r in interpolated precision
        (``iprec_at_recall_*``, ``11pt_avg``): ``round`` = round(r·R) as trec_eval 10 counts
        them, ``add_0.9`` = ⌊r·R + 0.9⌋ as trec_eval 9 and pytrec_eval do; at least one.


    Beyond-accuracy conventions (the defaults are rankscope's; docs/metrics.md):

    novelty_unknown: items unknown to training are left out of novelty (``leave_out``) or
        count as seen by one training user (``one_user``, RecTools' MeanInvUserFreq).
    arp_normalisation: ``arp_normalised`` = ARP / training users (``users``) or / training
        interactions (``interactions``, RecTools' normalised ARP).
    arp_unknown: items unknown to training count with popularity 0 in ARP (``zero``) or are left
        out of the user's average (``leave_out``, Evidently).
    entropy_base: logarithm base of the catalog entropy (e; 2 gives bits, Recommenders'
        distributional coverage).
    gini_over: Gini over every ``catalog`` item (unrecommended ones count 0) or over the
        ``recommended`` items only (Evidently).
    similarity: what diversity, intra-list similarity and serendipity compare: ``cosine`` of
        the item features; ``hamming`` (diversity = mean number of feature columns whose values
        differ, RecTools' IntraListDiversity with PairwiseHammingDistanceCalculator; users with
        fewer than two items score 0 as in RecTools); ``cooccurrence`` (cosine of the items'
        training-user sets, |U_i ∩ U_j| / sqrt(|U_i|·|U_j|), Microsoft Recommenders' default).
    diversity_divisor: diversity is the mean distance over the n(n − 1)/2 item ``pairs`` of a
        list (default; users with fewer than two items are left out), or the sum of those
        distances divided by the list length n (``list``, Evidently; such users score 0).
    one_item_lists: a list with one item that has features (cosine or co-occurrence) has no pair:
        left out of diversity and intra-list similarity (``leave_out``, default), or compared
        with itself (``self``: similarity 1, diversity 0, LensKit's ILS).
    serendipity_over: serendipity averages unexpectedness over the ``relevant`` recommended
        items (default) or over the whole top K with irrelevant items counting 0 (``list``,
        Microsoft Recommenders).
    score_entropy: softmax entropy ``per_user`` (default) or of one softmax over every user's
        top-K scores pooled (``pooled``, Evidently).
    primitive_model: the model that ``serendipity_primitive`` and ``unexpectedness`` compare
        with (None: the first model of the dataset; the metrics are skipped for that model).
    primitive_scale: how both models' top-K lists become [0, 1] scores per user: ``rank``
        ((n − position) / n for a list of n, first = 1) or ``minmax`` of the scores.
    category_column: the item-table column holding each item's categories for calibration and exposure
        (None: the first text column whose values repeat, such as a genre).
    calibration_alpha: calibration's smoothing α of the list's category mix, 0 < α <= 1.
    exposure_browsing: how attention falls down a list for exposure: ``log2`` (1 / log2(rank + 1),
        the DCG discount) or ``rbp`` (rbp_p^(rank − 1)).
    exposure_target: the item groups' shares exposure is compared with: the ``catalog``'s, the
        ``training`` interactions', or ``uniform``.

    How lists are ordered is fixed when the data is encoded: see :class:`Encoding`.
    """

    k: int = 10
    beta: float = 1.0
    ap_denominator: APDenominator = "min_k_relevant"
    gain: Gain | CustomGain = "linear"
    precision_denominator: PrecisionDenominator = "k"
    rr_cutoff: bool = True
    fbeta: Literal["per_user", "of_means"] = "per_user"
    users_without_relevant: UsersWithoutRelevant = "exclude"
    users_without_list: Literal["zero", "drop"] = "zero"
    candidates: int | None = None
    rbp_p: float = 0.8
    rbp_gain: Literal["binary", "scaled", "grade"] = "binary"
    rbp_max_grade: float | None = None
    ee_patience: float = 0.5
    ndcg_ideal: NdcgIdeal = "cut_at_k"
    dcg_log_base: float = 2.0
    dcg_ties: Literal["order", "average"] = "order"
    dcg_discount: Literal["log2", "lenskit"] = "log2"
    false_positives: Literal["listed", "k"] = "listed"
    recall_levels: RecallLevels = "round"
    max_list_length: int | None = None
    judged_only: bool = False
    score_threshold: float | None = None
    novelty_unknown: Literal["leave_out", "one_user"] = "leave_out"
    arp_normalisation: Literal["users", "interactions"] = "users"
    arp_unknown: Literal["zero", "leave_out"] = "zero"
    entropy_base: float = math.e
    gini_over: Literal["catalog", "recommended"] = "catalog"
    similarity: Similarity = "cosine"
    diversity_divisor: Literal["pairs", "list"] = "pairs"
    one_item_lists: Literal["leave_out", "self"] = "leave_out"
    serendipity_over: Literal["relevant", "list"] = "relevant"
    score_entropy: Literal["per_user", "pooled"] = "per_user"
    primitive_model: str | None = None
    primitive_scale: PrimitiveScale = "rank"
    category_column: str | None = None
    calibration_alpha: float = 0.01
    exposure_browsing: Literal["log2", "rbp"] = "log2"
    exposure_target: Literal["catalog", "training", "uniform"] = "catalog"
    preset: str | None = None

    def __post_init__(self) -> None:
        if self.preset is not None:
            if self.preset not in PRESETS:
                raise input_error("settings", f"unknown preset {self.preset!r}.",
                                  f"choose one of: {', '.join(PRESETS)}.")
            defaults = {f.name: f.default for f in fields(self)}
            for name, value in PRESETS[self.preset].items():
                if name in defaults and getattr(self, name) == defaults[name]:
                    object.__setattr__(self, name, value)  # frozen: set once, while constructing
        if isinstance(self.k, bool) or not isinstance(self.k, numbers.Integral) or self.k < 1:
            raise input_error("settings", f"K = {self.k!r} is not a positive integer.", "choose K >= 1, e.g. 10.")
        _one_of("ap_denominator", self.ap_denominator, AP_DENOMINATORS)
        object.__setattr__(self, "gain", _checked_gain(self.gain))  # frozen: normalised once, here
        _one_of("precision_denominator", self.precision_denominator, get_args(PrecisionDenominator))
        _one_of("ndcg_ideal", self.ndcg_ideal, NDCG_IDEALS)
        _one_of("recall_levels", self.recall_levels, get_args(RecallLevels))
        if self.score_threshold is not None and not (isinstance(self.score_threshold, (int, float))
                                                     and math.isfinite(self.score_threshold)):
            raise input_error("settings", f"score_threshold = {self.score_threshold!r} is not a finite number.",
                              "give a number, e.g. 0.5, or leave it unset.")
        if not (isinstance(self.rbp_p, (int, float)) and 0 < self.rbp_p < 1):
            raise input_error("settings", f"rbp_p = {self.rbp_p!r} is not between 0 and 1.",
                              "choose a persistence 0 < p < 1, e.g. 0.8.")
        _one_of("fbeta", self.fbeta, ("per_user", "of_means"))
        _one_of("false_positives", self.false_positives, ("listed", "k"))
        _one_of("rbp_gain", self.rbp_gain, ("binary", "scaled", "grade"))
        if isinstance(self.ee_patience, bool) or not (isinstance(self.ee_patience, (int, float))
                                                      and 0 < self.ee_patience < 1):
            raise input_error("settings", f"ee_patience = {self.ee_patience!r} is not between 0 and 1.",
                              "choose a patience 0 < γ < 1, e.g. 0.5.")
        if not isinstance(self.judged_only, bool):
            raise input_error("settings", f"judged_only = {self.judged_only!r} is not True or False.",
                              "give True to evaluate the judged items only, else False.")
        if self.rbp_max_grade is not None and (isinstance(self.rbp_max_grade, bool) or not (
                isinstance(self.rbp_max_grade, (int, float)) and math.isfinite(self.rbp_max_grade)
                and self.rbp_max_grade > 0)):
            raise input_error("settings", f"rbp_max_grade = {self.rbp_max_grade!r} is not a number above 0.",
                              "give the highest grade of the relevance scale, e.g. 4, or leave it unset.")
        _one_of("dcg_discount", self.dcg_discount, ("log2", "lenskit"))
        _one_of("dcg_ties", self.dcg_ties, ("order", "average"))
        for name in ("novelty_unknown", "arp_normalisation", "arp_unknown", "gini_over", "similarity",
                     "diversity_divisor", "one_item_lists", "serendipity_over", "score_entropy", "primitive_scale",
                     "exposure_browsing", "exposure_target"):
            _one_of(name, getattr(self, name), get_args(FIELD_TYPES[name]))
        if not (isinstance(self.entropy_base, (int, float)) and math.isfinite(self.entropy_base)
                and self.entropy_base > 1):
            raise input_error("settings", f"entropy_base = {self.entropy_base!r} is not a number above 1.",
                              "choose 2 (bits) or e (the default, nats).")
        if isinstance(self.dcg_log_base, bool) or not (isinstance(self.dcg_log_base, (int, float))
                                                       and math.isfinite(self.dcg_log_base) and self.dcg_log_base > 1):
            raise input_error("settings", f"dcg_log_base = {self.dcg_log_base!r} is not a number above 1.",
                              "choose 2 (the default) or e (natural logarithms, as Microsoft Recommenders).")
        if not (isinstance(self.calibration_alpha, (int, float)) and 0 < self.calibration_alpha <= 1):
            raise input_error("settings", f"calibration_alpha = {self.calibration_alpha!r} is not in (0, 1].",
                              "choose a small smoothing, e.g. 0.01 (Steck's).")
        if self.category_column is not None and not isinstance(self.category_column, str):
            raise input_error("settings", f"category_column = {self.category_column!r} is not a column name.",
                              "name a text column of the item table, or leave it unset.")
        _one_of("users_without_relevant", self.users_without_relevant, get_args(UsersWithoutRelevant))
        if self.max_list_length is not None and (isinstance(self.max_list_length, bool) or not isinstance(
                self.max_list_length, numbers.Integral) or self.max_list_length < 1):
            raise input_error("settings", f"max_list_length = {self.max_list_length!r} is not a positive integer.",
                              "give the most items a list may have, e.g. 1000 (trec_eval's -M), or leave it unset.")
        _one_of("users_without_list", self.users_without_list, ("zero", "drop"))
        if not (isinstance(self.beta, (int, float)) and math.isfinite(self.beta) and self.beta > 0):
            raise input_error("settings", f"beta = {self.beta!r} is not a finite number > 0.",
                              "choose beta > 0, e.g. 1.0.")
        if self.candidates is not None and self.candidates < 1:
            raise input_error("settings", f"candidates = {self.candidates!r}.", "give a positive item count.")

    @property
    def score_positions(self) -> int | None:
        """How many of each list's first positions have scores the metrics at ``k`` read: k + 1
        (score entropy and the primitive model's min-max scaling read the top k, the tie warning
        position k + 1); None (every position) with a score threshold, which reads them all, with
        ``judged_only``, which moves later items up, and with ``dcg_ties="average"``, whose runs
        of tied scores can reach past k. ``Dataset.build(score_positions=...)``
        keeps only these."""
        return self.k + 1 if self.score_threshold is None and not self.judged_only and self.dcg_ties == "order" \
            else None


FIELD_TYPES = get_type_hints(Settings)


@dataclass(frozen=True)
class Encoding:
    """How each list is ordered, decided once when the data is encoded.

    order: ``rank`` (the rank column decides when there is one, else the score) or ``score``
        (higher first, the rank column ignored, as trec_eval and ranx do).
    tie_break: equal scores keep the input row order (``input``) or put the larger item id,
        compared as text, first (``item_desc``, as trec_eval).
    """

    order: Order = "rank"
    tie_break: TieBreak = "input"

    def __post_init__(self) -> None:
        _one_of("order", self.order, get_args(Order))
        _one_of("tie_break", self.tie_break, get_args(TieBreak))


def _checked_gain(gain: object) -> str | CustomGain:
    """A named gain, or custom gains as ((grade, gain), ...) pairs sorted by grade, in any order
    of gains (trec_eval's ``ndcg.1=3,2=9,4=4.5`` gives grade 4 less than grade 2)."""
    if isinstance(gain, str):
        _one_of("gain", gain, GAINS)
        return gain
    pairs = gain.items() if isinstance(gain, Mapping) else gain
    try:
        pairs = tuple(sorted((float(grade), float(value)) for grade, value in pairs))
    except (TypeError, ValueError):
        raise input_error("settings", f"gain = {gain!r} is neither a gain name nor grade: gain pairs.",
                          f"choose one of {', '.join(GAINS)}, or give {{grade: gain}}, e.g. {{1: 3, 2: 9}} "
                          "(CLI: --gain 1=3,2=9).") from None
    if not pairs or not all(math.isfinite(v) for pair in pairs for v in pair):
        raise input_error("settings", f"gain = {gain!r} has no pairs or a value that is not a finite number.",
                          "give finite numbers, e.g. {1: 3, 2: 9}.")
    grades = [grade for grade, _ in pairs]
    repeated = sorted({g for g in grades if grades.count(g) > 1})
    if repeated:
        raise input_error("settings", f"custom gains give grade {repeated[0]:g} more than once.",
                          "give each grade one gain, e.g. 1=3,2=9.")
    return pairs  # (gains may fall as grades rise: the ideal list takes each user's grades by gain)


def _one_of(name: str, value: object, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise input_error("settings", f"{name} = {value!r} is not one of {', '.join(allowed)}.",
                          f"choose one of: {', '.join(allowed)}.")


PRESETS: dict[str, dict[str, object]] = {
    # rankscope's own defaults, as docs/metrics.md defines them.
    "rankscope": {},
    # trec_eval: AP over all relevant items (map_cut), recip_rank without a cut-off, lists
    # ordered by score with ties broken by document id compared as text, larger first; the
    # rank column is ignored, as trec_eval ignores it.
    # Averaged as trec_eval does without -c: over the topics in both the run and the qrels, a topic
    # whose judged documents are all non-relevant counting 0.
    "trec_eval": {"ap_denominator": "relevant", "rr_cutoff": False, "order": "score", "tie_break": "item_desc",
                  "users_without_relevant": "zero_if_judged", "users_without_list": "drop"},
    # trec_eval 9.0.8 and earlier, and pytrec_eval (which ships it): the same, with a recall level
    # of interpolated precision reached by ⌊r·R + 0.9⌋ hits (trec_eval 10 rounds r·R).
    "trec_eval_9": {"ap_denominator": "relevant", "rr_cutoff": False, "order": "score", "tie_break": "item_desc",
                    "users_without_relevant": "zero_if_judged", "users_without_list": "drop",
                    "recall_levels": "add_0.9"},
    # ranx: AP over all relevant items; lists ordered by score (ranx ignores ranks); RBP weighs a
    # hit by its raw grade.
    "ranx": {"ap_denominator": "relevant", "order": "score", "rbp_gain": "grade"},
    # Evidently 0.6.7 (legacy recsys metrics): precision over the items in the top k, the
    # headline F-beta of the mean precision and recall, AP divided by R as its code does,
    # users with relevant items but no list left out; ARP without items unknown to training,
    # Gini over the recommended items only, diversity = pairwise distance sum / list length,
    # one softmax entropy over every user's scores.
    "evidently": {"precision_denominator": "list", "fbeta": "of_means", "ap_denominator": "relevant",
                  "users_without_list": "drop", "arp_unknown": "leave_out", "gini_over": "recommended",
                  "diversity_divisor": "list", "score_entropy": "pooled"},
    # RecTools 0.19: MAP divided by R (divide_by_k=False), NDCG's ideal list of K relevant items
    # (divide_by_achievable=False), cold items seen by one user in MeanInvUserFreq, ARP
    # normalised by interactions, IntraListDiversity with Hamming distances of item features,
    # MCC and accuracy with K - hits false positives.
    "rectools": {"ap_denominator": "relevant", "ndcg_ideal": "k_relevant", "novelty_unknown": "one_user",
                 "arp_normalisation": "interactions", "similarity": "hamming", "false_positives": "k"},
    # Microsoft Recommenders 1.2 (python_evaluation): binary NDCG gain, users without a list left
    # out, lists by score, co-occurrence similarity, serendipity over the whole top K,
    # distributional coverage = entropy in bits.
    "recommenders": {"gain": "binary", "users_without_list": "drop", "order": "score", "similarity": "cooccurrence",
                     "serendipity_over": "list", "entropy_base": 2.0},
    # torchmetrics 1.9 retrieval metrics: AP divided by the hits in the top k, queries without a
    # relevant item score 0 (empty_target_action="neg"), only queries with rows exist, lists by score.
    "torchmetrics": {"ap_denominator": "hits", "users_without_relevant": "zero", "users_without_list": "drop",
                     "order": "score"},
}


def settings_for(preset: str | None = None, **overrides: object) -> Settings:
    """Settings of a named preset, with explicit ``overrides`` (None values ignored) on top."""
    return _chosen(Settings, preset, overrides)


def encoding_for(preset: str | None = None, **overrides: object) -> Encoding:
    """The encoding of a named preset, with explicit ``overrides`` (None values ignored) on top."""
    return _chosen(Encoding, preset, overrides)


def split_options(options: dict[str, object]) -> tuple[dict[str, object], dict[str, object]]:
    """``(settings options, encoding options)`` of a mix of both (as ``evaluate(**options)`` takes)."""
    encoding_fields = {f.name for f in fields(Encoding)}
    return ({k: v for k, v in options.items() if k not in encoding_fields},
            {k: v for k, v in options.items() if k in encoding_fields})


def _chosen(kind, preset: str | None, overrides: dict[str, object]):
    if preset is not None and preset not in PRESETS:
        raise input_error("settings", f"unknown preset {preset!r}.", f"choose one of: {', '.join(PRESETS)}.")
    own = {f.name for f in fields(kind)}
    chosen = {k: v for k, v in (PRESETS[preset] if preset else {}).items() if k in own}
    chosen.update({k: v for k, v in overrides.items() if v is not None})
    return kind(**chosen)
