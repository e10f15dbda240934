"""What a ground truth's relevance column looks like, and the threshold to propose for it.

The relevance threshold decides which rows are relevant (grade >= threshold). Its default, 1,
suits 0/1 labels, clicks and trec_eval's qrels, and is wrong for ratings: on a 0.5-5 star scale it
makes nearly every rated item relevant. :func:`grade_scale` reads the grades and names the scale:

- **binary** (only 0 and 1): 1.
- **graded judgements** (whole grades from 0 up to 10, or any negative grade: trec_eval's qrels,
  where 0 is judged not relevant): 1.
- **ratings** (a bounded scale from 0.5 or 1: at most 10 distinct values, every one a multiple of
  0.5, the largest at most 10, at least three values in use): the value three quarters of the way
  up the scale, on the scale's step (1-5: 4; 0.5-5: 4; 1-10: 8).
- **counts** (whole numbers up to more than 10, such as clicks or plays): 1.
- anything else (**continuous** values): no proposal; the person mapping the columns decides.

Each comes with the share of rows relevant at the proposed threshold and the distribution of the
values (for a scale: the share of each value), so that the choice can be checked before it is used.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class GradeScale:
    """``kind``: binary, ratings, counts, judgements or continuous; ``threshold``: the proposal
    (None: none); ``relevant_share``: the rows relevant at it; ``shares``: each value's share of
    the rows (for a scale of few values, else empty); ``words``: the reading in a sentence."""

    kind: str
    low: float
    high: float
    threshold: float | None
    relevant_share: float | None
    shares: dict[float, float]
    words: str


def grade_scale(grades) -> GradeScale:
    """The scale of ``grades`` (a column of numbers; NaN left out) and the threshold it suggests.

    >>> grade_scale([0.5, 3.5, 4, 5, 4.5, 2]).threshold, grade_scale([1, 2, 3, 4, 5, 5]).threshold
    (4.0, 4.0)
    >>> grade_scale([0, 1, 1, 0]).kind, grade_scale([1, 3, 40, 2, 7, 1, 12]).kind
    ('binary', 'counts')
    """
    values = np.asarray(grades, dtype=np.float64)
    values = values[np.isfinite(values)]
    if not len(values):
        return GradeScale("continuous", math.nan, math.nan, None, None, {}, "The column holds no number.")
    low, high = float(values.min()), float(values.max())
    distinct, counts = np.unique(values, return_counts=True)
    shares = {float(v): float(c / len(values)) for v, c in zip(distinct, counts, strict=True)} \
        if len(distinct) <= 10 else {}

    def scale(kind: str, threshold: float | None, words: str) -> GradeScale:
        share = None if threshold is None else float((values >= threshold).mean())
        return GradeScale(kind, low, high, threshold, share, shares, words)

    if set(distinct.tolist()) <= {0.0, 1.0}:
        return scale("binary", 1.0, "0/1 labels: 1 is relevant.")
    whole = bool(np.all(distinct == np.round(distinct)))
    if low < 0 or (low == 0 and whole and high <= 10):
        return scale("judgements", 1.0, f"Graded judgements from {low:g} to {high:g} (0 and below: not relevant, "
                                         "as trec_eval reads qrels): 1 and above is relevant.")
    halves = np.all(np.isclose(distinct * 2, np.round(distinct * 2)))
    if len(distinct) <= 10 and halves and high <= 10 and len(distinct) >= 3:
        step = 1.0 if whole else 0.5
        start = 0.5 if step == 0.5 and low >= 0.5 else (1.0 if low >= 1 else 0.0)
        proposal = start + round(0.75 * (high - start) / step) * step
        return scale("ratings", float(proposal), f"Ratings from {start:g} to {high:g}: {proposal:g} and above is "
                                                 "relevant (the top quarter of the scale).")
    if whole and low >= 0 and high > 10:
        return scale("counts", 1.0, f"Counts from {low:g} to {high:g} (clicks, plays): any interaction (1 and "
                                    "above) is relevant.")
    return scale("continuous", None, f"Values from {low:g} to {high:g} with no scale of their own: choose the "
                                     "threshold.")
