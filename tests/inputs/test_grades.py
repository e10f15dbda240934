"""The relevance column's scale and the threshold proposed for it (metrics_core/inputs/grades.py)."""

from __future__ import annotations

import numpy as np
import pytest

from metrics_core.inputs.grades import grade_scale


@pytest.mark.parametrize("grades, kind, threshold", [
    ([0, 1, 1, 0, 1], "binary", 1.0),
    ([0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5], "ratings", 4.0),  # (MovieLens' half stars)
    ([1, 2, 3, 4, 5, 3, 4], "ratings", 4.0),
    ([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], "ratings", 8.0),
    ([0, 1, 2, 3, 4, 0, 0], "judgements", 1.0),  # (a graded qrels: 0 is judged not relevant)
    ([-1, 0, 1, 2], "judgements", 1.0),
    ([1, 1, 3, 40, 2, 7, 120], "counts", 1.0),
    ([0.12, 0.57, 0.91, 0.33], "continuous", None),
])
def test_each_scale_gets_its_threshold(grades, kind, threshold):
    scale = grade_scale(np.array(grades, dtype=float))
    assert (scale.kind, scale.threshold) == (kind, threshold)
    if threshold is not None:
        assert scale.relevant_share == pytest.approx(np.mean(np.array(grades) >= threshold))
        assert 0 < scale.relevant_share <= 1


def test_shares_of_a_scale_sum_to_one_and_missing_values_are_left_out():
    scale = grade_scale(np.array([1, 2, 2, 5, np.nan, 4, 4, 4]))
    assert scale.kind == "ratings" and sum(scale.shares.values()) == pytest.approx(1)
    assert scale.shares[4.0] == pytest.approx(3 / 7)
    assert grade_scale(np.array([np.nan])).threshold is None
