"""Interpolated precision at any recall level (trec_eval reports 0, 0.1, .., 1 only): by the
definition on random lists, and equal to the registry's eleven levels where they meet."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from metrics_core import Dataset, Settings
from metrics_core.errors import InputError


def slow(listed: list[int], relevant: set[int], k: int, level: float, rule: str) -> float:
    """The highest precision at a rank of the top k where the hits reach the level's count."""
    R = len(relevant)
    share = level * R
    needed = max(int(share + 0.9) if rule == "add_0.9" else math.floor(share) + (share - math.floor(share) >= 0.5), 1)
    hits, best = 0, 0.0
    for rank, item in enumerate(listed[:k], start=1):
        hits += item in relevant
        if hits >= needed:
            best = max(best, hits / rank)
    return best


@pytest.mark.parametrize("rule", ["round", "add_0.9"])
@pytest.mark.parametrize("seed", range(3))
def test_any_level_equals_the_definition_and_the_eleven_levels(seed, rule):
    rng = np.random.default_rng(seed)
    lists = {u: list(rng.choice(30, int(rng.integers(1, 12)), replace=False)) for u in range(40)}
    truth = {u: set(rng.choice(30, int(rng.integers(0, 7)), replace=False)) for u in range(45)}
    recs = pd.DataFrame([(u, int(i), r + 1) for u, items in lists.items() for r, i in enumerate(items)],
                        columns=["user_id", "item_id", "rank"])
    frame = pd.DataFrame([(u, int(i)) for u, items in truth.items() for i in items], columns=["user_id", "item_id"])
    dataset = Dataset.build(recs, frame)
    settings = Settings(k=8, recall_levels=rule)
    levels = [0.0, 0.25, 0.3, 0.5, 0.75, 0.9, 1.0]
    table = dataset.precision_at_recall("model", levels, settings)
    for user, row in table.iterrows():
        for level, value in zip(levels, row, strict=True):
            assert value == pytest.approx(slow(lists.get(user, []), truth[user], 8, level, rule), abs=1e-15)
    metrics = dataset.evaluate(settings=settings).metrics
    for level in (0.0, 0.3, 0.5, 0.9, 1.0):
        assert table[f"{level:g}"].mean() == pytest.approx(metrics[f"iprec_at_recall_{level:.2f}"], abs=1e-15)
    for wrong in ([1.5], ["half"], []):
        with pytest.raises(InputError, match="between 0 and 1"):
            dataset.precision_at_recall("model", wrong)
    with pytest.raises(InputError, match="no model named 'other'"):
        dataset.precision_at_recall("other", [0.5])
