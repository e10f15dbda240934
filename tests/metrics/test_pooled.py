"""A negative grade in a qrels file is trec_eval's "in the pool, not judged" (-1): infAP counts
such items among the pooled items above a hit (the judged precision stands in for them), bpref
ignores them like items outside the ground truth (issue #46). Checked by hand through trec_eval
10's m_infap.c and m_bpref.c, and against the slow definitions on random qrels at every path."""

from __future__ import annotations

import numpy as np
import pytest

from metrics_core import Dataset, Settings, encoding_for
from tests.reference import judged_nonrelevant, pooled_unjudged, relevant_grades, user_metrics


def write_trec(folder, run: list[tuple[str, str, float]], qrels: list[tuple[str, str, int]]):
    """A run file (ranked by score, as trec_eval reads it) and a qrels file."""
    (folder / "model.run").write_text("".join(f"{q} Q0 {d} {i + 1} {s} tag\n" for i, (q, d, s) in enumerate(run)))
    (folder / "truth.qrels").write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels))
    return folder / "model.run", folder / "truth.qrels"


def test_pooled_unjudged_items_by_hand(tmp_path):
    """The run d1 d2 d3 d4; qrels d1 = -1 (pooled, unjudged), d2 and d4 relevant, d3 judged
    non-relevant. infAP: d2 at rank 2, a = n = 0, u = 1: 1/2 + (1/2)·1·(ε/2ε) = 0.75; d4 at rank 4,
    a = n = u = 1: 1/4 + (3/4)·(3/3)·(1 + ε)/(2 + 2ε) = 0.625; (0.75 + 0.625)/2 = 0.6875. bpref:
    N = 1 (d1 is not judged): d2 has no judged non-relevant item above (1), d4 has one (1 − 1/1 = 0):
    0.5. Were d1 judged non-relevant, infAP would be 0.5000035."""
    run, qrels = write_trec(tmp_path, [("q", "d1", 4.0), ("q", "d2", 3.0), ("q", "d3", 2.0), ("q", "d4", 1.0)],
                            [("q", "d1", -1), ("q", "d2", 1), ("q", "d3", 0), ("q", "d4", 1)])
    dataset = Dataset.build({"model": run}, qrels)
    m = dataset.evaluate(settings=Settings(k=4, preset="trec_eval")).metrics
    assert m["infap"] == pytest.approx(0.6875, abs=1e-12) and m["bpref"] == pytest.approx(0.5, abs=1e-12)
    assert dataset.truth.judged_count.tolist() == [1]
    curves = dataset.evaluate(settings=Settings(k=4, preset="trec_eval")).curves
    assert curves.loc[2, "infap"] == pytest.approx(0.375, abs=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_pooled_unjudged_items_agree_with_the_slow_definitions(tmp_path, seed):
    rng = np.random.default_rng(seed)
    docs = [f"d{i}" for i in range(30)]
    run, qrels_rows = [], []
    for q in range(25):
        for doc in rng.choice(docs, size=int(rng.integers(1, 15)), replace=False):
            run.append((f"q{q}", str(doc), float(rng.random())))
        for doc in rng.choice(docs, size=int(rng.integers(1, 12)), replace=False):
            qrels_rows.append((f"q{q}", str(doc), int(rng.choice([-1, -1, 0, 1, 2]))))
    qrels_rows = [row for row in qrels_rows if row[2] > 0 or row[0] != "q0"] + [("q0", docs[0], 1)]
    run_path, qrels_path = write_trec(tmp_path, run, qrels_rows)
    dataset = Dataset.build({"model": run_path}, qrels_path, encoding=encoding_for("trec_eval"))  # (by score)
    grades = relevant_grades(qrels_rows, threshold=1)
    judged, pooled = judged_nonrelevant(qrels_rows, 1), pooled_unjudged(qrels_rows, 1)
    by_user = {}
    for q, doc, _score in sorted(run, key=lambda row: (row[0], -row[2])):
        by_user.setdefault(q, []).append(doc)
    users = [u for u in grades if grades[u]]
    for k in (1, 4, 9):
        expected = {u: user_metrics(by_user.get(u, []), grades[u], k, ap_denominator="relevant",
                                    judged=judged.get(u, set()), pooled=pooled.get(u, set())) for u in users}
        for curves in (False, True):
            result = dataset.evaluate(settings=Settings(k=k), curves=curves)  # (every user with a relevant item)
            per_user = result.per_user[result.per_user["evaluated"]]
            for metric in ("bpref", "infap", "judged"):  # (Judged@k counts pooled items as judged)
                want = np.array([expected[str(u)][metric] for u in per_user.index])
                np.testing.assert_allclose(per_user[metric].to_numpy(), want, atol=1e-12, err_msg=f"{metric}@{k}")
            if curves:
                for kk in (1, 3, k):
                    slow = [user_metrics(by_user.get(u, []), grades[u], kk, judged=judged.get(u, set()),
                                         pooled=pooled.get(u, set())) for u in users]
                    for metric in ("bpref", "infap"):
                        assert result.curves.loc[kk, metric] == pytest.approx(
                            np.mean([values[metric] for values in slow]), abs=1e-12), (metric, kk)
