"""The edge cases docs/metrics.md lists, where peers disagree or are wrong."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics_core import Dataset, InputError, Settings, evaluate


def recs(rows, columns=("user_id", "item_id", "rank")):
    return pd.DataFrame(rows, columns=list(columns))


def truth(rows, columns=("user_id", "item_id")):
    return pd.DataFrame(rows, columns=list(columns))


def test_tie_at_cutoff_is_broken_by_row_order_and_reported():
    lists = recs([(1, "a", 0.9), (1, "b", 0.5), (1, "c", 0.5), (1, "d", 0.1)], ("user_id", "item_id", "score"))
    result = evaluate(lists, truth([(1, "c")]), k=2)
    assert result.metrics["precision"] == 0.0  # b (earlier row) takes rank 2, c rank 3
    assert result.per_user.loc[1, "hits"] == 0
    ties = [n for n in result.warnings if n.code == "ties_at_cutoff"]
    assert ties and ties[0].count == 1
    assert "K=2" in ties[0].message


def test_no_tie_warning_when_scores_differ_at_cutoff():
    lists = recs([(1, "a", 0.9), (1, "b", 0.5), (1, "c", 0.4)], ("user_id", "item_id", "score"))
    assert not [n for n in evaluate(lists, truth([(1, "c")]), k=2).warnings if n.code == "ties_at_cutoff"]


def test_same_item_twice_counts_once_at_best_position_and_leaves_a_hole():
    lists = recs([(1, "x", 1), (1, "a", 2), (1, "a", 3), (1, "b", 4)])
    result = evaluate(lists, truth([(1, "a"), (1, "b")]), k=4)
    # hits at ranks 2 and 4; rank 3 is empty, b does not move up
    assert result.per_user.loc[1, "hits"] == 2
    assert result.metrics["precision"] == pytest.approx(2 / 4)
    assert result.metrics["mrr"] == pytest.approx(1 / 2)
    assert result.metrics["map"] == pytest.approx((1 / 2 + 2 / 4) / 2)
    assert result.per_user.loc[1, "listed"] == 3
    dup = [n for n in result.warnings if n.code == "duplicate_items"]
    assert dup and dup[0].count == 1


def test_duplicate_ground_truth_row_is_merged_keeping_the_highest_grade():
    lists = recs([(1, "a", 1), (1, "b", 2)])
    grades = truth([(1, "a", 1), (1, "a", 3), (1, "b", 2)], ("user_id", "item_id", "g"))
    from metrics_core import Columns

    result = evaluate(lists, grades, k=2, columns=Columns(relevance="g", threshold=1))
    assert result.per_user.loc[1, "relevant"] == 2
    assert result.metrics["recall"] == 1.0
    assert result.metrics["ndcg"] == pytest.approx(1.0)  # a has grade 3 > b's 2: ideal order
    assert next(n for n in result.warnings if n.code == "duplicate_truth").count == 1


def test_user_with_relevant_items_and_no_list_scores_zero():
    lists = recs([(1, "a", 1)])
    result = evaluate(lists, truth([(1, "a"), (2, "a")]), k=1)
    assert result.users == {"evaluated": 2, "without_relevant": 0, "without_recommendations": 1}
    assert result.per_user.loc[2, ["precision", "recall", "ndcg", "ap", "rr"]].sum() == 0
    assert result.metrics["precision"] == 0.5


def test_evidently_preset_drops_users_without_list():
    lists = recs([(1, "a", 1)])
    result = evaluate(lists, truth([(1, "a"), (2, "a")]), k=1, preset="evidently")
    assert result.users["evaluated"] == 1
    assert result.metrics["precision"] == 1.0


def test_user_with_list_and_no_relevant_items_is_excluded_and_counted():
    lists = recs([(1, "a", 1), (2, "b", 1)])
    result = evaluate(lists, truth([(1, "a")]), k=1)
    assert result.users["evaluated"] == 1
    assert result.users["without_relevant"] == 1
    assert result.metrics["precision"] == 1.0
    assert any(n.code == "users_without_relevant" for n in result.warnings)
    included = evaluate(lists, truth([(1, "a")]), k=1, users_without_relevant="zero")
    assert included.users["evaluated"] == 2
    assert included.metrics["precision"] == 0.5
    assert included.per_user.loc[2, "recall"] == 0.0


def test_k_larger_than_every_list():
    lists = recs([(1, "a", 1), (1, "b", 2)])
    result = evaluate(lists, truth([(1, "a"), (1, "b")]), k=5)
    assert result.metrics["precision"] == pytest.approx(2 / 5)  # denominator K, not |L|
    assert result.metrics["recall"] == 1.0
    assert result.metrics["ndcg"] == pytest.approx(1.0)
    assert list(result.curves.index) == [1, 2, 5]  # every k up to the longest list, then K
    assert result.curves.loc[5, "precision"] == pytest.approx(2 / 5)
    evid = evaluate(lists, truth([(1, "a"), (1, "b")]), k=5, precision_denominator="list")
    assert evid.metrics["precision"] == 1.0


def test_rows_not_sorted_by_rank():
    ordered = recs([(1, "a", 1), (1, "b", 2), (1, "c", 3), (2, "a", 1), (2, "c", 2)])
    shuffled = ordered.sample(frac=1, random_state=3)
    t = truth([(1, "c"), (2, "c")])
    assert evaluate(shuffled, t, k=2).metrics == evaluate(ordered, t, k=2).metrics


def test_scores_not_sorted_within_users():
    rows = recs([(1, "a", 0.1), (2, "z", 0.3), (1, "b", 0.9), (2, "y", 0.8)], ("user_id", "item_id", "score"))
    result = evaluate(rows, truth([(1, "b"), (2, "z")]), k=1)
    assert result.per_user.loc[1, "hits"] == 1
    assert result.per_user.loc[2, "hits"] == 0


def test_one_user_and_one_item():
    result = evaluate(recs([(7, 3, 1)]), truth([(7, 3)]), k=10)
    assert result.metrics["ndcg"] == 1.0
    assert result.metrics["precision"] == pytest.approx(0.1)
    assert result.users["evaluated"] == 1


def test_every_user_without_relevant_items_is_a_clear_error():
    with pytest.raises(InputError, match="no user has a relevant item"):
        evaluate(recs([(1, "a", 1)]), truth([(2, "b", 0)], ("user_id", "item_id", "g")), k=1,
                 columns=__import__("metrics_core").Columns(relevance="g", threshold=1))


def test_rank_gaps_leave_positions_empty():
    result = evaluate(recs([(1, "a", 1), (1, "b", 2), (1, "c", 5)]), truth([(1, "c")]), k=5)
    assert result.metrics["mrr"] == pytest.approx(1 / 5)
    assert next(n for n in result.warnings if n.code == "rank_gaps").count == 1


def test_mixed_int_and_string_ids_are_read_as_strings():
    lists = recs([(1, "a", 1), ("u2", 5, 1)])
    result = evaluate(lists, truth([("1", "a"), ("u2", "5")]), k=1)
    assert result.metrics["precision"] == 1.0
    assert set(result.per_user.index) == {"1", "u2"}


def test_changing_settings_does_not_reencode(three_users):
    lists, t, _ = three_users
    dataset = Dataset.build(lists, t)
    before = {name: lst.items.copy() for name, lst in dataset.lists.items()}
    for k in (1, 2, 3, 7):
        for denominator in ("min_k_relevant", "relevant", "hits"):
            dataset.evaluate(settings=Settings(k=k, ap_denominator=denominator, gain="exponential", beta=2))
    for name, items in before.items():
        assert (dataset.lists[name].items == items).all()


def test_ap_denominators_on_seed003(three_users):
    lists, t, _ = three_users
    dataset = Dataset.build(lists, t)
    m = {d: dataset.evaluate(settings=Settings(k=3, ap_denominator=d)).metrics["map"]
         for d in ("min_k_relevant", "relevant", "hits")}
    assert m["min_k_relevant"] == pytest.approx((1 / 2 + 1 + (1 / 2 + 2 / 3) / 3) / 3)
    assert m["relevant"] == pytest.approx((1 / 2 + 1 + (1 / 2 + 2 / 3) / 3) / 3)  # R <= K here
    assert m["hits"] == pytest.approx((1 / 2 + 1 + (1 / 2 + 2 / 3) / 2) / 3)


def test_whole_lists_with_a_duplicate_leave_the_input_untouched():
    """Whole, ordered lists of int32 ids are used in place; a duplicate forces a private copy."""
    import numpy as np

    lists = pd.DataFrame({"user_id": np.array([0, 0, 0, 1, 1, 1], dtype=np.int32),
                          "item_id": np.array([0, 1, 1, 2, 0, 1], dtype=np.int32),
                          "rank": np.array([1, 2, 3, 1, 2, 3], dtype=np.int32),
                          "score": np.array([3, 2, 1, 3, 2, 1], dtype=np.float32)})
    before = lists.copy()
    result = evaluate(lists, truth([(0, 1), (1, 1)]), k=3)
    pd.testing.assert_frame_equal(lists, before)
    assert result.per_user.loc[0, "hits"] == 1 and result.per_user.loc[0, "listed"] == 2
    assert result.per_user.loc[1, "hits"] == 1 and result.per_user.loc[1, "listed"] == 3
    assert next(n for n in result.warnings if n.code == "duplicate_items").count == 1


def test_fractional_float_ids_are_read_as_text():
    lists = pd.DataFrame({"user_id": [1.5, 1.5], "item_id": ["a", "b"], "rank": [1, 2]})
    result = evaluate(lists, truth([("1.5", "b")]), k=2)
    assert list(result.per_user.index) == ["1.5"] and result.metrics["mrr"] == 0.5


def test_dcg_by_hand_with_linear_and_exponential_gains():
    """Grades 3 and 1 at ranks 1 and 3 (rank 2 not relevant): DCG@3 = 3 / log2(2) + 1 / log2(4)."""
    from metrics_core import Columns

    lists = recs([(1, "a", 1), (1, "b", 2), (1, "c", 3)])
    graded = pd.DataFrame({"user_id": [1, 1, 1], "item_id": ["a", "c", "z"], "grade": [3, 1, 2]})
    result = evaluate(lists, graded, k=3, columns=Columns(relevance="grade"))
    assert result.metrics["dcg"] == pytest.approx(3 + 1 / 2)
    assert result.curves.loc[1, "dcg"] == pytest.approx(3.0)
    ideal = 3 + 2 / np.log2(3) + 1 / 2  # the unrecommended z (grade 2) counts in the ideal list
    assert result.metrics["ndcg"] == pytest.approx((3 + 1 / 2) / ideal)
    exponential = evaluate(lists, graded, k=3, columns=Columns(relevance="grade"), gain="exponential")
    assert exponential.metrics["dcg"] == pytest.approx(7 + 1 / 2)


@settings(max_examples=60, deadline=None)
@given(st.sets(st.integers(0, 300), min_size=1), st.sets(st.integers(0, 300), min_size=1))
def test_the_per_user_table_joins_accuracy_and_beyond_users_as_pandas_outer_join(accuracy_users, beyond_users):
    """Users evaluated for accuracy (relevant items) and for the other metrics (a list) differ;
    the per-user table is their union, as pandas' outer join gives it (order, NaN, dtypes)."""
    from metrics_core.engines.memory.dataset import _outer_join

    rows, others = np.array(sorted(accuracy_users)), np.array(sorted(beyond_users))
    rng = np.random.default_rng(len(rows) * 1000 + len(others))
    left = pd.DataFrame({"ndcg": rng.random(len(rows)), "relevant": rng.integers(0, 5, len(rows)).astype(np.int32),
                         "hits": rng.integers(0, 5, len(rows)), "evaluated": True}, index=rows)
    right = {"novelty": rng.random(len(others)), "diversity": rng.random(len(others))}
    expected = left.join(pd.DataFrame(right, index=others), how="outer")
    expected["evaluated"] = expected["evaluated"].astype("boolean").fillna(False).astype(bool)
    pd.testing.assert_frame_equal(_outer_join(left, right, others), expected)
