"""Who is served: a metric by user group, the gap between the best and the worst served group
and the spread of the group means, with intervals from resampling users within each group."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from metrics_core.errors import InputError
from metrics_core.stats.segments import ACTIVITY_LABELS
from metrics_core.stats.served import served


def test_gap_and_spread_by_hand_with_users_the_groups_do_not_name():
    """Means 0.1, 0.3 and 0.8: gap 0.7, spread (0.3 + 0.1 + 0.4) / 3; a user without a group is in
    "(unknown)" and a user without a value is left out."""
    values = pd.Series([0.0, 0.2, 0.3, 0.3, 0.8, 0.8, np.nan], index=list("abcdefg"))
    groups = pd.Series(["x", "x", "y", "y", "z"], index=list("abcde"))
    result = served(values, groups, resamples=300)
    assert result.groups.index.tolist() == ["(unknown)", "x", "y", "z"]
    assert result.groups["users"].tolist() == [1, 2, 2, 1]
    means = [0.8, 0.1, 0.3, 0.8]
    assert result.groups["mean"].tolist() == pytest.approx(means)
    assert result.gap == pytest.approx(0.7) and result.spread == pytest.approx(np.mean(np.abs(np.subtract(
        means, np.mean(means)))))
    assert "is 0.7000 higher for (unknown) than for x" in result.sentence("NDCG@10")  # (the first of equal means)


def test_a_user_in_two_groups_is_refused_naming_the_user():
    values = pd.Series([0.1, 0.2], index=["a", "b"])
    groups = pd.Series(["x", "y", "x"], index=["a", "b", "b"])
    with pytest.raises(InputError, match=r"1 users have more than one group, e\.g\. 'b'"):
        served(values, groups, resamples=10)


@pytest.mark.parametrize("users", [3_000, 130_000])  # (the second: each group's means from the normal limit)
def test_the_gap_interval_has_the_width_of_the_difference_of_two_far_apart_means(users):
    rng = np.random.default_rng(users)
    group = np.where(rng.random(users) < 0.3, "small", "large")
    values = np.where(group == "small", rng.exponential(0.2, users), 1 + rng.exponential(0.5, users))
    result = served(pd.Series(values), pd.Series(group), resamples=1000, seed=3)
    small, large = values[group == "small"], values[group == "large"]
    error = np.sqrt(small.var() / len(small) + large.var() / len(large))
    assert result.gap == pytest.approx(large.mean() - small.mean())
    assert result.gap_high - result.gap_low == pytest.approx(2 * 1.96 * error, rel=0.15)
    assert result.gap_low < result.gap < result.gap_high
    assert result.spread == pytest.approx(result.gap / 2) and result.spread_low < result.spread < result.spread_high
    assert result.groups.loc["large", "low"] < large.mean() < result.groups.loc["large", "high"]


def test_activity_groups_read_from_least_to_most_active_and_one_group_has_no_gap():
    values = pd.Series(np.arange(8) / 10)
    groups = pd.Series(np.repeat(ACTIVITY_LABELS[::-1], 2))
    assert served(values, groups, resamples=50).groups.index.tolist() == ACTIVITY_LABELS
    alone = served(values, pd.Series(["all"] * 8), resamples=50)
    assert alone.gap == 0 and "no gap" in alone.sentence("recall@10")
    with pytest.raises(InputError, match="no user has a value"):
        served(pd.Series([np.nan, np.nan]), pd.Series(["a", "b"]), resamples=10)
    with pytest.raises(InputError, match="resample"):
        served(values, groups, resamples=0)


def test_head_mid_and_tail_items_by_hand():
    """Training interactions 5, 4, 3, 2, 1 for items 0..4 (item 5 has none): head {0, 1}, mid
    {2, 3}, tail {4}, not in training {5}. User a: relevant {0, 4, 5}, top 3 [0, 2, 4]; user b:
    relevant {1, 3}, top 3 [3, 5, 1]."""
    from metrics_core import Dataset, Settings

    recs = pd.DataFrame({"user_id": ["a"] * 3 + ["b"] * 3, "item_id": [0, 2, 4, 3, 5, 1], "rank": [1, 2, 3] * 2})
    truth = pd.DataFrame({"user_id": ["a", "a", "a", "b", "b"], "item_id": [0, 4, 5, 1, 3]})
    train = pd.DataFrame({"user_id": "z", "item_id": np.repeat([0, 1, 2, 3, 4], [5, 4, 3, 2, 1])})
    table = Dataset.build({"m": recs}, truth, train=train).served_items("m", Settings(k=3)).set_index("group")
    assert table.index.tolist() == ["head", "mid", "tail", "not in training"]
    assert table["items"].tolist() == [2, 2, 1, 1] and table["users"].tolist() == [2, 1, 1, 1]
    assert table["hits"].tolist() == [1.0, 0.5, 0.5, 0.0]
    assert table["recall"].tolist() == [1.0, 1.0, 1.0, 0.0]
    assert table["recommended"].tolist() == pytest.approx([2 / 6, 2 / 6, 1 / 6, 1 / 6])
    with pytest.raises(InputError, match="training interactions"):
        Dataset.build({"m": recs}, truth).served_items("m")
    with pytest.raises(InputError, match="no model named"):
        Dataset.build({"m": recs}, truth, train=train).served_items("nope")


def test_items_of_several_categories_count_a_share_in_each():
    """Item 0 is drama and comedy: its hit counts half in each; recall per category is over the
    users' relevant shares."""
    from metrics_core import Dataset, Settings

    recs = pd.DataFrame({"user_id": 1, "item_id": [0, 1, 2], "rank": [1, 2, 3]})
    truth = pd.DataFrame({"user_id": 1, "item_id": [0, 2]})
    items = pd.DataFrame({"item_id": [0, 1, 2, 3], "genre": ["Drama|Comedy", "Drama", "Comedy", "Comedy"]})
    table = Dataset.build({"m": recs}, truth, items=items).served_items("m", Settings(k=1), by="genre")
    table = table.set_index("group")
    assert table.loc["Drama", "hits"] == 0.5 and table.loc["Comedy", "hits"] == 0.5
    assert table.loc["Drama", "recall"] == 1.0 and table.loc["Comedy", "recall"] == pytest.approx(0.5 / 1.5)
    assert table.loc["Comedy", "items"] == 2.5 and table.loc["Drama", "recommended"] == 0.5


def test_items_by_model_has_a_row_per_model_for_the_report_and_compare():
    from dashboard.workspace import demo_workspace
    from metrics_core import Dataset, Settings
    from metrics_core.stats.served import items_by_model

    dataset = demo_workspace().build()
    tables = items_by_model(dataset, dataset.models, Settings(k=10))
    for measure in ("recall", "recommended"):
        assert tables[measure].index.tolist() == dataset.models
        assert {"head", "mid", "tail"} <= set(tables[measure].columns)
    assert tables["recommended"].sum(axis=1).tolist() == pytest.approx([1.0] * len(dataset.models))
    popular = tables["recommended"].loc["popularity"]
    assert popular["head"] > popular["tail"]  # (the popularity model recommends the head)
    recs = pd.DataFrame({"user_id": 1, "item_id": [1], "rank": [1]})
    assert items_by_model(Dataset.build({"m": recs}, recs[["user_id", "item_id"]]), ["m"], Settings()) is None


def test_groups_given_for_the_same_users_in_order_or_in_another_give_the_same_result():
    """The pages give the groups of the values' own users in their order (read without looking up
    each id); groups in another order, for other users too, or missing some, give the same groups,
    means and gap; several models' sentences (computed side by side) are each model's own."""
    from metrics_core.stats.served import gap_sentences

    rng = np.random.default_rng(4)
    users = pd.Index(rng.permutation(3000) * 7, name="user_id")
    values = pd.Series(rng.random(3000), index=users)
    values[rng.random(3000) < 0.2] = np.nan
    groups = pd.Series(rng.choice(["light", "heavy", "top"], 3000), index=users).astype("category")
    ours = served(values, groups, resamples=200)
    for other in (groups.sample(frac=1.0, random_state=1), pd.concat([groups, pd.Series(["x"], index=[-5])]),
                  groups.iloc[100:]):
        theirs = served(values, other, resamples=200)
        expected = ours.groups if len(other) >= len(groups) else None
        if expected is not None:
            pd.testing.assert_frame_equal(theirs.groups, expected)
            assert (theirs.gap, theirs.gap_low, theirs.gap_high) == (ours.gap, ours.gap_low, ours.gap_high)
        else:  # (users the groups do not name: "(unknown)")
            assert theirs.groups.loc["(unknown)", "users"] == values.iloc[:100].notna().sum()

    class Result:
        def __init__(self, per_user):
            self.per_user, self.k = per_user, 10

    results = {f"m{i}": Result(pd.DataFrame({"ndcg": values.sample(frac=1.0, random_state=i).sort_index()
                                                        .reindex(users) * (i + 1) / 3}))
               for i in range(3)}
    sentences = gap_sentences(results, "ndcg", groups, resamples=200)
    assert list(sentences) == ["m0", "m1", "m2"]
    for name, result in results.items():
        assert sentences[name] == served(result.per_user["ndcg"], groups, 200).sentence("NDCG@10")
