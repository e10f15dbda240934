"""The verdict (which model wins on a metric): its interval is the paired t interval, its call
is that interval excluding 0 (so it agrees with the paired t-test, always), and its wording in
each case: a real difference, no detectable difference, a metric where lower is better, one
model, a metric with no better direction, too few users."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from metrics_core import Settings
from metrics_core.result import Evaluation
from metrics_core.stats.verdict import mean_interval, verdict


def results(**columns: dict[str, np.ndarray]) -> dict[str, Evaluation]:
    """Evaluations with the given per-user columns per model (every user evaluated)."""
    out = {}
    for model, values in columns.items():
        per_user = pd.DataFrame(values, index=pd.RangeIndex(len(next(iter(values.values()))), name="user_id"))
        per_user["evaluated"] = True
        metrics = {name: float(np.mean(v)) for name, v in values.items()}
        out[model] = Evaluation(model, Settings(k=10), metrics, per_user, pd.DataFrame(), {"evaluated": len(per_user)})
    return out


def test_a_real_difference_is_named_with_the_paired_t_interval():
    rng = np.random.default_rng(0)
    base = rng.random(500)
    found = verdict(results(popular={"ndcg": base}, svd={"ndcg": base + 0.01 + rng.normal(0, 0.01, 500)}), "ndcg")
    assert found.leader == "svd" and len(found.differences) == 1
    difference = found.differences[0]
    assert difference.real and difference.low > 0
    svd = found.means["svd"] - found.means["popular"]
    assert difference.delta == pytest.approx(svd, abs=1e-15)
    assert found.sentence() == (f"svd is best on NDCG@10: {svd:+.4f} over popular (95% CI {difference.low:+.4f} to "
                                f"{difference.high:+.4f}), a real difference. Paired t intervals over the 500 users "
                                "every model has a value for.")


def test_no_detectable_difference_says_so_and_names_the_leader_by_value_only():
    rng = np.random.default_rng(1)
    a, b = rng.random(300), rng.random(300)
    found = verdict(results(itemknn={"ndcg": a}, svd={"ndcg": b}), "ndcg")
    difference = found.differences[0]
    assert not difference.real and difference.low < 0 < difference.high
    assert found.sentence().startswith(f"{found.leader} has the highest NDCG@10: no detectable difference from ")


def test_where_lower_is_better_the_lowest_leads():
    rng = np.random.default_rng(2)
    low = rng.random(400) * 0.1
    found = verdict(results(a={"fall_out": low + 0.05}, b={"fall_out": low}), "fall_out")
    assert found.leader == "b" and found.differences[0].delta < 0 and found.differences[0].real
    assert found.sentence().startswith("b is best on Fall-out@10 (lower is better): -0.0500 over a")


def test_one_model_no_direction_and_too_few_users_name_no_leader():
    one = verdict(results(only={"ndcg": np.array([0.1, 0.2, 0.3])}), "ndcg")
    assert one.leader is None
    assert one.sentence() == "Only only is loaded: there is no other model to compare on NDCG@10."
    arp = verdict(results(a={"arp": np.array([1.0, 2.0])}, b={"arp": np.array([3.0, 4.0])}), "arp")
    assert arp.leader is None and "no model is called best" in arp.sentence()
    few = verdict(results(a={"ndcg": np.array([0.5])}, b={"ndcg": np.array([0.7])}), "ndcg")
    assert few.leader is None and few.sentence().startswith("Too few users")


def test_every_user_ahead_by_the_same_amount_is_a_real_difference():
    base = np.linspace(0, 0.5, 50)
    found = verdict(results(a={"ndcg": base}, b={"ndcg": base + 0.25}), "ndcg")
    assert found.differences[0].low == pytest.approx(0.25) == found.differences[0].high and found.differences[0].real


@pytest.mark.filterwarnings("ignore:Precision loss")  # (scipy's, on nearly equal values: the reference's own)
@settings(max_examples=60, deadline=None)
@given(st.integers(2, 60), st.floats(-0.2, 0.2), st.floats(0.0, 0.5), st.integers(0, 2**31))
def test_the_call_agrees_with_the_paired_t_test_and_its_interval(n, shift, noise, seed):
    rng = np.random.default_rng(seed)
    a = rng.random(n)
    b = np.clip(a + shift + rng.normal(0, noise, n), 0, 1)
    found = verdict(results(a={"ndcg": a}, b={"ndcg": b}), "ndcg")
    d = found.differences[0]
    leader, other = (b, a) if found.leader == "b" else (a, b)
    if np.all(leader == other):
        assert not d.real
        return
    test = stats.ttest_rel(leader, other)
    interval = test.confidence_interval(0.95)
    if np.isfinite(interval.low):
        assert d.low == pytest.approx(interval.low, abs=1e-12) and d.high == pytest.approx(interval.high, abs=1e-12)
        assert d.real == (test.pvalue < 0.05) or abs(test.pvalue - 0.05) < 1e-9


def test_a_models_interval_is_the_t_interval_of_its_mean():
    values = np.array([0.1, 0.4, 0.35, 0.8, 0.2])
    expected = stats.t.interval(0.95, len(values) - 1, loc=values.mean(), scale=stats.sem(values))
    assert mean_interval(values) == pytest.approx(expected, rel=1e-12)
    assert all(np.isnan(mean_interval(np.array([0.3]))))


def test_models_within_noise_of_the_leader_are_named_in_one_clause():
    base = np.random.default_rng(4).random(2_000) * 0.5
    wobble = np.tile([0.01, -0.01], 1_000)  # (the same mean as the leader's, user by user apart)
    found = verdict(results(best={"ndcg": base + 0.05}, close={"ndcg": base + 0.05 + wobble},
                            near={"ndcg": base + 0.05 - 2 * wobble}, far={"ndcg": base}), "ndcg")
    assert found.leader == "best"
    assert [d.real for d in found.differences].count(False) == 2
    sentence = found.sentence()
    assert sentence.count("no detectable difference from") == 1 and " or " in sentence
    assert "over far (95% CI" in sentence and sentence.index("over far") < sentence.index("no detectable")
