"""A slow, obviously correct per-user implementation of the accuracy metrics.

It follows docs/metrics.md line by line with Python lists and loops, so that the fast array code
can be checked against it on random data. Nothing here is shared with ``metrics_core``.
"""

from __future__ import annotations

import math


def ordered_lists(rows, use_rank=True, with_scores=False):
    """rows: (user, item, rank, score) tuples in input order -> {user: [item or None, ...]}
    (``with_scores``: also {user: [score or None, ...]} alongside).

    By rank (rank 1 = position 0; gaps stay empty), else by score descending, ties by input
    order. An item seen again later in the same list leaves its later position empty.
    """
    by_user = {}
    for index, (user, item, rank, score) in enumerate(rows):
        by_user.setdefault(user, []).append((index, item, rank, score))
    lists, scores = {}, {}
    for user, entries in by_user.items():
        if use_rank:
            placed = {rank - 1: (item, score) for _, item, rank, score in entries}
        else:
            ordered = sorted(entries, key=lambda e: (-e[3], e[0]))
            placed = {pos: (e[1], e[3]) for pos, e in enumerate(ordered)}
        length = max(placed) + 1
        slots = [placed.get(p, (None, None)) for p in range(length)]
        seen = set()
        for p, (item, _) in enumerate(slots):
            if item in seen:
                slots[p] = (None, None)
            elif item is not None:
                seen.add(item)
        lists[user] = [item for item, _ in slots]
        scores[user] = [score for _, score in slots]
    return (lists, scores) if with_scores else lists


def relevant_grades(truth_rows, threshold=None):
    """truth_rows: (user, item, grade) -> {user: {item: highest grade}} of relevant items."""
    out = {}
    for user, item, grade in truth_rows:
        if threshold is not None and grade < threshold:
            continue
        current = out.setdefault(user, {})
        current[item] = max(grade, current.get(item, grade))
    return out


def judged_nonrelevant(truth_rows, threshold):
    """{user: set of items graded below the threshold and not relevant through another row}."""
    relevant = relevant_grades(truth_rows, threshold)
    out = {}
    for user, item, grade in truth_rows:
        if 0 <= grade < threshold and item not in relevant.get(user, {}):
            out.setdefault(user, set()).add(item)
    return out


def pooled_unjudged(truth_rows, threshold):
    """{user: set of items with a negative grade (qrels: in the pool, not judged) that are neither
    relevant nor judged through another row}."""
    relevant, judged = relevant_grades(truth_rows, threshold), judged_nonrelevant(truth_rows, threshold)
    out = {}
    for user, item, grade in truth_rows:
        if grade < 0 and item not in relevant.get(user, {}) and item not in judged.get(user, set()):
            out.setdefault(user, set()).add(item)
    return out


def rbp_gain_of(grade, kind, scale):
    """r_i of a relevant item in RBP: 1, min(grade, scale) / scale, or the grade."""
    return {"binary": 1.0, "scaled": min(grade, scale) / scale, "grade": grade}[kind]


def user_metrics(slots, grades, k, beta=1.0, ap_denominator="min_k_relevant", gain="linear",
                 precision_denominator="k", rr_cutoff=True, candidates=None, rbp_p=0.8, ndcg_ideal="cut_at_k",
                 judged=None, recall_levels="round", pooled=frozenset(), dcg_log_base=2.0,
                 false_positives="listed", dcg_discount="log2", rbp_gain="binary", rbp_max_grade=None,
                 top_grade=1.0, scores=None, dcg_ties="order", ee_patience=0.5):
    """Every accuracy metric of one user at cut-off k, by the definitions (``top_grade``: the
    highest relevant grade of the whole ground truth, graded RBP's scale by default; ``scores``:
    each slot's score, None for rank-only lists, which have no ties)."""
    top = (slots + [None] * k)[:k]
    rel = [1 if item is not None and item in grades else 0 for item in top]
    listed = [1 if item is not None else 0 for item in top]
    R = len(grades)
    h = sum(rel)
    n_listed = sum(listed)
    if precision_denominator == "k":
        P = h / k
    elif precision_denominator == "list":
        P = h / n_listed if n_listed else 0.0
    else:
        P = h / min(k, R) if R else 0.0
    Rc = h / R if R else 0.0
    b2 = beta * beta
    F = (1 + b2) * P * Rc / (b2 * P + Rc) if (b2 * P + Rc) > 0 else 0.0
    ap_sum = 0.0
    ar_sum = 0.0
    for i in range(1, k + 1):
        if rel[i - 1]:
            ap_sum += sum(rel[:i]) / i
            ar_sum += (sum(rel[:i]) / R) if R else 0.0
    D = {"min_k_relevant": min(k, R), "relevant": R, "hits": h, "k": k}[ap_denominator]
    AP = ap_sum / D if D else 0.0
    AR = ar_sum / h if h else 0.0

    def g(x):
        if isinstance(gain, dict):  # custom gains; a grade not listed keeps its value
            return gain.get(x, x)
        return {"linear": x, "exponential": 2.0 ** x - 1.0, "binary": 1.0}[gain]

    def weight(i, base=2.0):  # rank i + 1's discount: 1 / log(rank + 1), LensKit's 1 / log(max(rank, 2))
        return 1 / math.log(max(i + 1, 2) if dcg_discount == "lenskit" else i + 2, base)

    gains = [g(grades[item]) if item is not None and item in grades else 0.0 for item in slots]
    if dcg_ties == "average" and scores is not None:  # scikit-learn: a run of equal scores shares its mean gain
        start = 0
        while start < len(slots):
            end = start
            while slots[start] is not None and end + 1 < len(slots) and slots[end + 1] is not None \
                    and scores[end + 1] == scores[start]:
                end += 1
            gains[start:end + 1] = [sum(gains[start:end + 1]) / (end - start + 1)] * (end - start + 1)
            start = end + 1
    dcg = sum(gains[i] * weight(i) for i in range(min(k, len(slots))))
    dcg_in_base = sum(gains[i] * weight(i, dcg_log_base) for i in range(min(k, len(slots))))
    ordered = sorted((g(x) for x in grades.values()), reverse=True)  # the ideal list: highest gain first
    ideal = {"cut_at_k": ordered[:k], "all_relevant": ordered, "k_relevant": ordered[:1] * k}[ndcg_ideal]
    idcg = sum(x * weight(i) for i, x in enumerate(ideal))
    NDCG = dcg / idcg if idcg > 0 else 0.0
    HR = 1.0 if h else 0.0
    RR = 0.0
    full = slots if not rr_cutoff else top
    for i, item in enumerate(full):
        if item is not None and item in grades:
            RR = 1.0 / (i + 1)
            break
    out = {"precision": P, "recall": Rc, "fbeta": F, "ap": AP, "ar": AR, "ndcg": NDCG, "dcg": dcg_in_base, "hit": HR,
           "rr": RR,
           "rbp": sum((1 - rbp_p) * rbp_p ** i * rbp_gain_of(grades[top[i]], rbp_gain, rbp_max_grade or top_grade)
                      for i in range(k) if rel[i]),
           "relative_precision": h / min(k, R) if R else 0.0,
           "r_precision_at_k": sum(rel[:min(k, R)]) / min(k, R) if R else 0.0}
    if judged is not None:  # trec_eval's bpref over the top k
        total, nonrelevant_above = 0.0, 0
        for item in top:
            if item is None:
                continue
            if item in grades:
                scale = min(R, len(judged))
                total += 1.0 - min(nonrelevant_above, R) / scale if nonrelevant_above else 1.0
            elif item in judged:
                nonrelevant_above += 1
        out["bpref"] = total / R if R else 0.0
        inferred, relevant_above, judged_above, pooled_above = 0.0, 0, 0, 0  # trec_eval's infAP, epsilon 1e-5
        for i, item in enumerate(top):
            if item in grades:
                eps, above = 1e-5, relevant_above + judged_above
                share = (relevant_above + eps) / (above + 2 * eps)
                in_pool = above + pooled_above  # (pooled but unjudged items count in the pool, not the share)
                inferred += 1.0 if i == 0 else 1 / (i + 1) + (i / (i + 1)) * (in_pool / i) * share
                relevant_above += 1
            elif item is not None and item in judged:
                judged_above += 1
            elif item is not None and item in pooled:
                pooled_above += 1
        out["infap"] = inferred / R if R else 0.0
    points = []  # (recall, precision) at every rank of the top k
    for i in range(1, k + 1):
        points.append((sum(rel[:i]) / R if R else 0.0, sum(rel[:i]) / i))
    levels = []
    for level in range(11):
        share = level / 10 * R  # hits that reach the level: trec_eval 10 rounds (lround), trec_eval 9 adds 0.9
        lround = math.floor(share) + (share - math.floor(share) >= 0.5)  # C's lround: halves away from 0
        needed = max(int(share + 0.9) if recall_levels == "add_0.9" else lround, 1)
        reached = [p for (r, p), i in zip(points, range(1, k + 1), strict=True) if R and sum(rel[:i]) >= needed]
        value = max(reached) if reached else 0.0
        out[f"iprec_at_recall_{level / 10:.2f}"] = value
        levels.append(value)
    out["11pt_avg"] = sum(levels) / 11
    # over the whole list, whatever k
    everything = [item for item in slots if item is not None]
    found = sum(1 for item in everything if item in grades)
    first_R = [item for item in slots[:R] if item is not None and item in grades]
    dcg_R = sum(g(grades[item]) * weight(i) for i, item in enumerate(slots[:R]) if item is not None and item in grades)
    idcg_R = sum(x * weight(i) for i, x in enumerate(sorted((g(v) for v in grades.values()), reverse=True)))
    out["r_precision"] = len(first_R) / R if R else 0.0
    out["utility"] = found - (len(everything) - found)  # relevant retrieved − non-relevant retrieved
    with_rows = set(grades) | set(judged or ()) | set(pooled)  # (ir_measures' Judged@k: any qrels row)
    out["judged"] = sum(1 for item in top if item is not None and item in with_rows) / n_listed if n_listed else 0.0
    false_above, relevant_above, pauc, pap = 0, 0, 0.0, 0.0  # RecTools' partial AUC: down the list to its k-th FP
    for item in everything:
        if item in grades:
            if false_above < k:
                pauc += k - false_above
                pap += k - false_above if relevant_above < k else 0
            relevant_above += 1
        else:
            false_above += 1
    out["pauc"] = pauc / (R * k) if R else 0.0
    lrap = 0.0  # scikit-learn's LRAP over the top k: a run of equal scores counts as ranked above
    for j in range(k):
        if not rel[j]:
            continue
        end = j
        while scores is not None and end + 1 < min(k, len(slots)) and top[end + 1] is not None \
                and scores[end + 1] == scores[end]:
            end += 1
        lrap += sum(rel[:end + 1]) / sum(listed[:end + 1])
    out["lrap"] = lrap / R if R else 0.0
    exposure = [ee_patience ** i for i in range(k)]  # expected exposure: rank i + 1 gets γ^i
    ideal = (1 - ee_patience ** min(R, k)) / (R * (1 - ee_patience)) if R else 0.0
    out["ee_disparity"] = sum(e * e for e, filled in zip(exposure, listed, strict=True) if filled)
    out["ee_relevance"] = ideal * sum(e for e, hit in zip(exposure, rel, strict=True) if hit)
    out["ee_loss"] = sum((e - (ideal if hit else 0.0)) ** 2
                         for e, hit, filled in zip(exposure, rel, listed, strict=True) if filled) \
        + ideal * ideal * (R - h)  # (relevant items not in the top K: exposure 0 against ε*)
    out["pap"] = pap / (min(R, k) * k) if R else 0.0
    out["ndcg_at_r"] = dcg_R / idcg_R if idcg_R > 0 else 0.0
    out["set_precision"] = found / len(everything) if everything else 0.0
    out["set_recall"] = found / R if R else 0.0
    out["set_map"] = out["set_precision"] * out["set_recall"]
    if candidates is not None:
        all_listed = sum(1 for item in slots if item is not None)
        all_hits = sum(1 for item in slots if item is not None and item in grades)
        negatives = max(candidates - R, all_listed - all_hits)
        fp = n_listed - h
        if negatives == 0:
            lauc = 1.0
        else:
            area = 0.0
            hits_so_far = 0
            for i in range(k):
                if rel[i]:
                    hits_so_far += 1
                elif listed[i]:
                    area += (hits_so_far / R if R else 0.0) / negatives
            tpr = h / R if R else 0.0
            lauc = area + (1 - fp / negatives) * (tpr + 1) / 2
        out["lauc"] = lauc
        out["fall_out"] = fp / negatives if negatives else 0.0
        if false_positives == "k":  # (RecTools: K recommendations whatever the list holds)
            fp = k - h
        tp, fn = h, R - h
        tn = max(negatives - fp, 0)  # (K - hits can count more empty places than irrelevant candidates)
        den = math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
        out["mcc"] = (tp * tn - fp * fn) / den if den > 0 else 0.0
        out["accuracy"] = (tp + tn) / (R + negatives) if R + negatives else 0.0
    return out
