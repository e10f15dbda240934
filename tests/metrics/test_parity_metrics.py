"""Metrics and options other tools report, by hand on one small list (the slow reference and
the peers check them on random and generated data)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from metrics_core import Columns, Settings, evaluate
from metrics_core.cli import main

# one user, list a b c d (ranks 1-4); relevant: b (grade 2), d (grade 1), z (grade 3, not listed)
LIST = pd.DataFrame({"user_id": [1] * 4, "item_id": list("abcd"), "rank": [1, 2, 3, 4]})
TRUTH = pd.DataFrame({"user_id": [1] * 3, "item_id": ["b", "d", "z"], "grade": [2, 1, 3]})
GRADED = Columns(relevance="grade")


def test_new_metrics_by_hand():
    result = evaluate(LIST, TRUTH, k=2, columns=GRADED, candidates=10)
    m = result.metrics
    assert m["rbp"] == pytest.approx(0.2 * 0.8)  # only b, at rank 2, within K = 2
    assert m["relative_precision"] == pytest.approx(1 / 2)  # 1 hit / min(2, 3)
    assert m["r_precision"] == pytest.approx(1 / 3)  # the first R = 3 items hold b only
    ideal = 3 + 2 / math.log2(3) + 1 / 2  # grades 3, 2, 1
    assert m["ndcg_at_r"] == pytest.approx((2 / math.log2(3)) / ideal)
    assert m["set_precision"] == pytest.approx(2 / 4) and m["set_recall"] == pytest.approx(2 / 3)
    assert m["set_map"] == pytest.approx(2 / 4 * 2 / 3)
    negatives = 10 - 3  # candidates minus relevant
    assert m["fall_out"] == pytest.approx(1 / negatives)  # a is the one irrelevant item in the top 2
    assert m["accuracy"] == pytest.approx((1 + negatives - 1) / 10)


def test_new_options_by_hand():
    k4 = {"k": 4, "columns": GRADED}
    assert evaluate(LIST, TRUTH, ap_denominator="k", **k4).metrics["map"] == pytest.approx((1 / 2 + 2 / 4) / 4)
    assert evaluate(LIST, TRUTH, precision_denominator="min_k_relevant", **k4).metrics["precision"] == \
        pytest.approx(2 / 3)
    binary = evaluate(LIST, TRUTH, gain="binary", **k4).metrics
    assert binary["dcg"] == pytest.approx(1 / math.log2(3) + 1 / math.log2(5))
    assert binary["ndcg"] == pytest.approx(binary["dcg"] / (1 + 1 / math.log2(3) + 1 / 2))
    assert evaluate(LIST, TRUTH, rbp_p=0.5, **k4).metrics["rbp"] == pytest.approx(0.5 * (0.5 + 0.5**3))


def test_settings_take_a_preset_directly_and_explicit_choices_win():
    trec = Settings(preset="trec_eval", k=20)
    assert trec.ap_denominator == "relevant" and trec.rr_cutoff is False and trec.k == 20
    assert Settings(preset="evidently", ap_denominator="hits").ap_denominator == "hits"
    with pytest.raises(ValueError, match="unknown preset"):
        Settings(preset="nope")
    with pytest.raises(ValueError, match="between 0 and 1"):
        Settings(rbp_p=1.0)


def test_cli_flags_for_the_new_options(tmp_path, capsys):
    LIST.to_csv(tmp_path / "r.csv", index=False)
    TRUTH.to_csv(tmp_path / "t.csv", index=False)
    code = main(["evaluate", "--recommendations", str(tmp_path / "r.csv"), "--ground-truth", str(tmp_path / "t.csv"),
                 "--relevance-column", "grade", "--k", "4", "--rbp-p", "0.5", "--precision-denominator",
                 "min_k_relevant", "--ap-denominator", "k", "--gain", "binary"])
    assert code == 0
    metrics = json.loads(capsys.readouterr().out)["models"]["r"]["metrics"]
    assert metrics["rbp"] == pytest.approx(0.5 * (0.5 + 0.5**3))
    assert metrics["precision"] == pytest.approx(2 / 3)
    with pytest.raises(SystemExit) as exit_code:  # argparse refuses it, with the reason on stderr
        main(["evaluate", "--recommendations", str(tmp_path / "r.csv"), "--ground-truth", str(tmp_path / "t.csv"),
              "--rbp-p", "1.5"])
    assert exit_code.value.code == 2 and "between 0 and 1" in capsys.readouterr().err


def test_gm_map_and_the_ndcg_ideals_by_hand():
    two = pd.concat([LIST, pd.DataFrame({"user_id": [2], "item_id": ["x"], "rank": [1]})])
    truth = pd.concat([TRUTH, pd.DataFrame({"user_id": [2], "item_id": ["y"], "grade": [1]})])
    result = evaluate(two, truth, k=4, columns=GRADED)
    ap_1 = (1 / 2 + 2 / 4) / 3  # D = min(4, 3)
    assert result.metrics["gm_map"] == pytest.approx(math.exp((math.log(ap_1) + math.log(1e-5)) / 2))
    dcg = 2 / math.log2(3) + 1 / math.log2(5)
    k2 = {"k": 2, "columns": GRADED}
    assert evaluate(LIST, TRUTH, ndcg_ideal="all_relevant", **k2).metrics["ndcg"] == \
        pytest.approx((2 / math.log2(3)) / (3 + 2 / math.log2(3) + 1 / 2))
    assert evaluate(LIST, TRUTH, ndcg_ideal="k_relevant", **k2).metrics["ndcg"] == \
        pytest.approx((2 / math.log2(3)) / (3 + 3 / math.log2(3)))  # two items of the best grade, 3
    assert evaluate(LIST, TRUTH, ndcg_ideal="k_relevant", gain="binary", k=4, columns=GRADED).metrics["ndcg"] == \
        pytest.approx((1 / math.log2(3) + 1 / math.log2(5)) / sum(1 / math.log2(i + 2) for i in range(4)))
    assert dcg == pytest.approx(evaluate(LIST, TRUTH, k=4, columns=GRADED).metrics["dcg"])


@pytest.mark.parametrize("threshold", [0.2, 0.5, 0.9])
def test_a_score_threshold_equals_dropping_the_rows_at_or_below_it(threshold):
    rng = np.random.default_rng(int(threshold * 10))
    recs = pd.DataFrame({"user_id": np.repeat(np.arange(30), 6), "item_id": rng.integers(0, 40, 180),
                         "score": rng.random(180).round(2)}).drop_duplicates(["user_id", "item_id"])
    truth = pd.DataFrame({"user_id": rng.integers(0, 30, 60), "item_id": rng.integers(0, 40, 60)})
    cut = evaluate(recs, truth, k=4, score_threshold=threshold, candidates=50)
    dropped = evaluate(recs[recs.score > threshold], truth, k=4, candidates=50)
    assert cut.metrics.keys() == dropped.metrics.keys()
    for name, value in dropped.metrics.items():
        assert cut.metrics[name] == pytest.approx(value, abs=1e-12), name


def test_a_score_threshold_needs_scores():
    with pytest.raises(ValueError, match="needs scores"):
        evaluate(LIST, TRUTH, score_threshold=0.5)


def test_bpref_and_infap_by_hand_with_a_qrels_file(tmp_path):
    """a judged non-relevant (0), b relevant, c unjudged, d relevant; N = 2 (a, e), R = 3 (b, d, z)."""
    (tmp_path / "run.run").write_text("".join(f"1 Q0 {item} {rank} {5 - rank} s\n" for rank, item in
                                              enumerate("abcd", start=1)))
    (tmp_path / "t.qrels").write_text("1 0 a 0\n1 0 b 2\n1 0 d 1\n1 0 z 3\n1 0 e 0\n")
    result = evaluate(tmp_path / "run.run", tmp_path / "t.qrels", k=4)
    # b and d each have one judged non-relevant item (a) above them: 1 - min(1, 3) / min(3, 2) = 1/2 each
    assert result.metrics["bpref"] == pytest.approx((0.5 + 0.5) / 3)
    # infAP: b at rank 2 has a (judged) above: 1/2 + (1/2)·ε/(1 + 2ε); d at rank 4 has a, b judged
    # and c unjudged above: 1/4 + (2/4)·(1 + ε)/(2 + 2ε) = 1/2
    eps = 1e-5
    assert result.metrics["infap"] == pytest.approx((0.5 + 0.5 * eps / (1 + 2 * eps) + 0.5) / 3, abs=1e-15)
    without_judgements = evaluate(LIST, TRUTH.assign(grade=1), k=4, columns=GRADED)
    for name in ("bpref", "infap"):
        assert name not in without_judgements.metrics and "judged" in without_judgements.skipped[name]


def test_the_ideal_dcg_kept_with_the_ground_truth_follows_the_gain_asked_for():
    """IDCG@R is made once per gain and kept with the ground truth: one dataset evaluated with
    each gain in turn (and again) gives what a fresh dataset gives, by hand too."""
    from metrics_core import Dataset

    dataset = Dataset.build(LIST, TRUTH, columns=GRADED)
    by_hand = {"exponential": (3 / math.log2(3), 7 + 3 / math.log2(3) + 1 / 2),  # 2^g - 1: grades 3, 2, 1
               "linear": (2 / math.log2(3), 3 + 2 / math.log2(3) + 1 / 2),
               "binary": (1 / math.log2(3), 1 + 1 / math.log2(3) + 1 / 2)}
    for gain in ("exponential", "linear", "binary", "exponential"):
        settings = Settings(k=2, gain=gain, ndcg_ideal="all_relevant")
        kept = dataset.evaluate(settings=settings).metrics
        fresh = Dataset.build(LIST, TRUTH, columns=GRADED).evaluate(settings=settings).metrics
        dcg, ideal = by_hand[gain]
        assert kept["ndcg_at_r"] == pytest.approx(dcg / ideal) == fresh["ndcg_at_r"]
        assert kept["ndcg"] == pytest.approx(dcg / ideal) == fresh["ndcg"]
