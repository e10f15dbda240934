"""Numbers the pages used to compute themselves, now in the library: long tail and head share,
activity segments, card intervals, the share without a hit, significance at the level."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from metrics_core import Dataset, Settings
from metrics_core.metrics.registry import per_user_columns
from metrics_core.stats.compare import aggregate_intervals, compare, win_tie_loss
from metrics_core.stats.segments import ACTIVITY, segment_choices, user_segments


@pytest.fixture(scope="module")
def data() -> Dataset:
    rng = np.random.default_rng(7)
    train = pd.DataFrame({"user_id": rng.integers(0, 40, 600), "item_id": rng.zipf(1.6, 600) % 50})
    recs = pd.DataFrame([(u, int(i), r + 1) for u in range(40) for r, i in
                         enumerate(rng.choice(50, 5, replace=False))], columns=["user_id", "item_id", "rank"])
    truth = pd.DataFrame({"user_id": rng.integers(0, 40, 80), "item_id": rng.integers(0, 50, 80)})
    users = pd.DataFrame({"user_id": range(40), "country": ["fr", "de"] * 20})
    return Dataset.build({"A": recs, "B": recs.assign(rank=lambda f: 6 - f["rank"])}, truth, train=train,
                         users=users)


def test_long_tail_and_head_share_match_a_direct_count(data):
    popularity = data.training.interactions_per_item
    known = [int(i) for i in np.argsort(-popularity, kind="stable") if popularity[i] > 0]
    head = set(known[: max(1, len(known) // 5)])
    top = data.lists["A"].items[:, :3]
    listed = [int(i) for i in top.ravel() if i >= 0]
    assert data.head_share("A", 3) == pytest.approx(sum(i in head for i in listed) / len(listed))
    tail = data.long_tail("A", 3)
    assert tail["bucket"].iloc[0] == 1 and tail["bucket"].is_monotonic_increasing
    total_recommended = sum(np.bincount(listed, minlength=len(data.items))[known])
    sizes = pd.Series(np.arange(len(known)) * 100 // len(known) + 1).value_counts().sort_index()
    assert (tail.set_index("bucket")["recommended"] * sizes).sum() == pytest.approx(total_recommended)


def test_activity_segments_are_equal_quartiles_by_training_items(data):
    assert segment_choices(data) == [ACTIVITY, "country"]
    segments = user_segments(data, ACTIVITY)
    sizes = segments.value_counts()
    assert sizes.max() - sizes.min() <= 1
    most = segments[segments == "most active"].index
    least = segments[segments == "least active"].index
    items = pd.Series(data.training.items_per_user, index=data.users.ids)
    assert items[most].min() >= items[least].max()
    assert user_segments(data, "country").loc[0] == "fr"
    assert user_segments(data, "no such column") is None


def test_card_intervals_bracket_each_mean_over_its_own_users(data):
    result = data.evaluate("A", Settings(k=3))
    bounds = aggregate_intervals(result, resamples=300)
    means_of_users = {name for name, column in per_user_columns().items() if name in result.metrics}
    assert set(bounds) == means_of_users and {"ndcg", "novelty", "arp"} <= means_of_users
    for name, (low, high) in bounds.items():
        assert low <= result.metrics[name] <= high, name


def test_share_without_hit_is_one_minus_hit_rate(data):
    result = data.evaluate("A", Settings(k=2))
    assert result.share_without_hit == pytest.approx(1 - result.metrics["hit_rate"])


def test_significance_follows_the_comparisons_level(data):
    results = data.evaluate_all(Settings(k=5))
    for level in (0.95, 0.5):
        comparison = compare(results, "A", ["ndcg", "recall"], resamples=100, level=level)
        assert list(comparison.significant) == list(comparison.rows["p_adjusted"] < 1 - level)


def test_win_tie_loss_counts_every_user():
    assert win_tie_loss(np.array([0.2, 0.5, 0.1, 0.1]), np.array([0.1, 0.5, 0.3, 0.1])) == (1, 2, 1)
