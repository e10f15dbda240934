"""The trec_eval preset averages as trec_eval does without -c, and reads -M (issue #46): over the
topics in both the run and the qrels, a topic whose judged documents are all non-relevant
counting 0 (``users_without_relevant="zero_if_judged"``), topics of one file only left out; and
``max_list_length`` (``--max-list-length``, trec_eval's -M) evaluates the first N items of each list."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from metrics_core import Dataset, Settings, encoding_for
from metrics_core.errors import InputError
from metrics_core.metrics.registry import REGISTRY


def test_a_topic_judged_all_non_relevant_counts_0_and_topics_of_one_file_are_left_out(tmp_path):
    """q1: d1 relevant at rank 1 (P@2 = 0.5); q2: judged, nothing relevant (0); q3: in the run
    only (left out); q4: in the qrels only (left out, as trec_eval without -c). P@2 = 0.25."""
    (tmp_path / "r.run").write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\nq2 Q0 d1 1 2.0 t\nq2 Q0 d3 2 1.0 t\n"
                                    "q3 Q0 d1 1 2.0 t\n")
    (tmp_path / "t.qrels").write_text("q1 0 d1 1\nq2 0 d1 0\nq2 0 d9 0\nq4 0 d1 1\n")
    dataset = Dataset.build({"r": tmp_path / "r.run"}, tmp_path / "t.qrels", encoding=encoding_for("trec_eval"))
    result = dataset.evaluate(settings=Settings(k=2, preset="trec_eval"))
    assert result.metrics["precision"] == pytest.approx(0.25) and result.users["evaluated"] == 2
    assert sorted(result.per_user.index[result.per_user["evaluated"]]) == ["q1", "q2"]
    assert any("judges some of their items" in note.message for note in result.warnings)
    rankscope = dataset.evaluate(settings=Settings(k=2))  # (rankscope's default: q2 and q3 counted apart, q4 as 0)
    assert rankscope.metrics["precision"] == pytest.approx(0.25) and rankscope.users["evaluated"] == 2


def random_lists(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    rows = [(u, int(i), r + 1) for u in range(40) for r, i in enumerate(rng.choice(60, int(rng.integers(1, 20)),
                                                                                replace=False))]
    truth = pd.DataFrame([(u, int(i), int(rng.integers(0, 3))) for u in range(45)
                          for i in rng.choice(60, int(rng.integers(1, 8)), replace=False)],
                         columns=["user_id", "item_id", "grade"])
    return pd.DataFrame(rows, columns=["user_id", "item_id", "rank"]), truth


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("n", [1, 5, 12])
def test_max_list_length_equals_evaluating_the_lists_cut_to_n(seed, n):
    """Every accuracy metric, at K and over the whole list, per user and at every k, is that of
    the same lists with every item after the n-th removed from the file."""
    recs, truth = random_lists(seed)
    columns = {"relevance": "grade", "threshold": 1}
    from metrics_core import Columns

    full = Dataset.build(recs, truth, columns=Columns(**columns))
    cut = Dataset.build(recs[recs["rank"] <= n], truth, columns=Columns(**columns))
    names = [m.name for m in REGISTRY if m.family == "accuracy"]
    for k in (3, 10):
        a = full.evaluate(settings=Settings(k=k, max_list_length=n))
        b = cut.evaluate(settings=Settings(k=k))
        for name in names:
            if name in b.metrics:
                assert a.metrics[name] == pytest.approx(b.metrics[name], abs=1e-12, nan_ok=True), (name, k)
        shared = [c for c in b.curves.columns if c in a.curves.columns]
        width = min(len(a.curves), len(b.curves))
        pd.testing.assert_frame_equal(a.curves[shared].iloc[:width], b.curves[shared].iloc[:width], atol=1e-12)


def test_max_list_length_must_be_a_positive_whole_number():
    with pytest.raises(InputError, match="max_list_length"):
        Settings(max_list_length=0)
    with pytest.raises(InputError, match="max_list_length"):
        Settings(max_list_length=2.5)
