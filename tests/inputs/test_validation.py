"""Bad input: one error type, naming the source, the column, the rows and the fix."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from metrics_core import Columns, InputError, evaluate

GOOD_TRUTH = pd.DataFrame({"user_id": [1], "item_id": ["a"]})


def check(error: InputError, *fragments: str) -> None:
    text = str(error)
    for fragment in fragments:
        assert fragment in text, f"{fragment!r} not in:\n{text}"
    assert "Fix:" in text


def test_missing_columns_names_them_and_lists_what_is_there():
    with pytest.raises(InputError) as e:
        evaluate(pd.DataFrame({"user": [1], "item_id": ["a"], "rank": [1]}), GOOD_TRUTH)
    check(e.value, "'user_id'", "the table has: user, item_id, rank")


def test_neither_rank_nor_score():
    with pytest.raises(InputError) as e:
        evaluate(pd.DataFrame({"user_id": [1], "item_id": ["a"]}), GOOD_TRUTH)
    check(e.value, "neither a rank column 'rank' nor a score column 'score'")


@pytest.mark.parametrize("bad", [np.nan, np.inf, "high"])
def test_bad_scores_show_the_rows(bad):
    lists = pd.DataFrame({"user_id": [1, 1], "item_id": ["a", "b"], "score": [0.5, bad]}, dtype=object)
    with pytest.raises(InputError) as e:
        evaluate(lists, GOOD_TRUTH)
    check(e.value, "column 'score'", "1 rows have a score", "row 1: user_id=1, item_id='b'")


def test_two_items_with_the_same_rank():
    lists = pd.DataFrame({"user_id": [1, 1, 2], "item_id": ["a", "b", "a"], "rank": [1, 1, 1]})
    with pytest.raises(InputError) as e:
        evaluate(lists, GOOD_TRUTH)
    check(e.value, "share a rank", "row 0", "row 1")
    assert "row 2" not in str(e.value)


@pytest.mark.parametrize("rank", [0, -1, 1.5])
def test_ranks_must_be_positive_integers(rank):
    lists = pd.DataFrame({"user_id": [1, 1], "item_id": ["a", "b"], "rank": [1, rank]})
    with pytest.raises(InputError) as e:
        evaluate(lists, GOOD_TRUTH)
    check(e.value, "column 'rank'", "not a positive integer", "row 1")


def test_negative_grades():
    grades = pd.DataFrame({"user_id": [1, 1], "item_id": ["a", "b"], "g": [1, -2]})
    lists = pd.DataFrame({"user_id": [1], "item_id": ["a"], "rank": [1]})
    with pytest.raises(InputError) as e:
        evaluate(lists, grades, columns=Columns(relevance="g"))
    check(e.value, "ground truth", "column 'g'", "negative grade", "row 1")


@pytest.mark.parametrize("k", [0, -3, 2.5])
def test_k_must_be_positive(k):
    lists = pd.DataFrame({"user_id": [1], "item_id": ["a"], "rank": [1]})
    with pytest.raises(InputError) as e:
        evaluate(lists, GOOD_TRUTH, k=k)
    check(e.value, "K = ")


@pytest.mark.parametrize(("content", "problem"), [("", "empty"), ("user_id,item_id,rank\n", "no rows")])
def test_empty_and_header_only_files(tmp_path, content, problem):
    path = tmp_path / "recs.csv"
    path.write_text(content)
    with pytest.raises(InputError) as e:
        evaluate(path, GOOD_TRUTH)
    check(e.value, "recs.csv", problem)


def test_missing_ids():
    lists = pd.DataFrame({"user_id": [1, None], "item_id": ["a", "b"], "rank": [1, 2]})
    with pytest.raises(InputError) as e:
        evaluate(lists, GOOD_TRUTH)
    check(e.value, "column 'user_id'", "no id", "row 1")


def test_input_frames_are_not_modified(three_users):
    lists, t, _ = three_users
    lists_before, truth_before = lists.copy(), t.copy()
    evaluate(lists, t, k=2)
    pd.testing.assert_frame_equal(lists, lists_before)
    pd.testing.assert_frame_equal(t, truth_before)


@pytest.mark.parametrize("column", ["user_id", "item_id"])
def test_an_id_that_is_not_valid_unicode_names_its_rows(column):
    """A lone surrogate (only Python-made strings hold one) has no UTF-8 form: Arrow cannot take it."""
    lists = pd.DataFrame({"user_id": ["u", "v", "u"], "item_id": ["a", "b", "c"], "rank": [1, 1, 2]}, dtype=object)
    lists.loc[[0, 2], column] = "x\ud800"
    with pytest.raises(InputError) as e:
        evaluate(lists, pd.DataFrame({"user_id": ["u"], "item_id": ["a"]}, dtype=object))
    check(e.value, f"column '{column}'", "2 rows have an id that is not valid Unicode text", "row 0:", "row 2:")
    assert e.value.rows.index.tolist() == [0, 2]
