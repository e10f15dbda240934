"""Model comparison: paired tests equal scipy's, corrections equal a hand computation,
win/tie/loss on a hand-made case, a seeded bootstrap that covers the truth about 95% of the
time, segments, gates, and the CLI."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from metrics_core import Dataset, InputError, Settings
from metrics_core.stats.compare import (
    adjust,
    bootstrap_means,
    compare,
    compare_segments,
    paired_test,
    signed_rank_test,
    win_tie_loss,
)
from metrics_core.stats.gates import check_gates


@pytest.fixture(scope="module")
def results():
    rng = np.random.default_rng(5)
    users, items = 300, 60
    truth = pd.DataFrame([(u, int(i)) for u in range(users) for i in rng.choice(items, 4, replace=False)],
                         columns=["user_id", "item_id"])
    relevant = truth.groupby("user_id")["item_id"].apply(list)
    frames = {}
    for name, skill in (("A", 0.1), ("B", 0.3), ("C", 0.3)):
        rows = []
        for u in range(users if name != "C" else users - 20):  # C has no list for 20 users
            good = [i for i in relevant[u] if rng.random() < skill]
            rest = [int(i) for i in rng.permutation(items) if i not in good][: 10 - len(good)]
            rows += [(u, int(i), r + 1) for r, i in enumerate(good + rest)]
        frames[name] = pd.DataFrame(rows, columns=["user_id", "item_id", "rank"])
    return Dataset.build(frames, truth).evaluate_all(Settings(k=10))


def test_p_values_equal_scipy_on_the_same_arrays(results):
    comparison = compare(results, "A", ["ndcg", "recall"], test="t", correction="none", resamples=50)
    a = results["A"].per_user["ndcg"]
    b = results["B"].per_user["ndcg"]
    row = comparison.rows.query("model == 'B' and metric == 'ndcg'").iloc[0]
    assert row.p_value == pytest.approx(stats.ttest_rel(b, a).pvalue, rel=1e-12)
    wilcoxon = compare(results, "A", ["ndcg"], test="wilcoxon", correction="none", resamples=50)
    row = wilcoxon.rows.query("model == 'B'").iloc[0]
    assert row.p_value == pytest.approx(stats.wilcoxon(b, a).pvalue, rel=1e-12)
    assert row.wins + row.ties + row.losses == results["A"].users["evaluated"] == row.users


def test_missing_lists_count_as_empty_never_dropped(results):
    comparison = compare(results, "A", ["ndcg"], correction="none", resamples=20)
    row = comparison.rows.query("model == 'C'").iloc[0]
    assert row.users == results["A"].users["evaluated"]  # the 20 users without a C list are still paired
    assert (results["C"].per_user.loc[list(range(280, 300)), "ndcg"] == 0).all()


def test_corrections_by_hand():
    p = np.array([0.01, 0.04, 0.03, 0.20])
    # Holm: sorted 0.01, 0.03, 0.04, 0.20 times 4, 3, 2, 1 = 0.04, 0.09, 0.08, 0.20, then running max
    assert adjust(p, "holm").tolist() == pytest.approx([0.04, 0.09, 0.09, 0.20])
    assert adjust(p, "bonferroni").tolist() == pytest.approx([0.04, 0.16, 0.12, 0.80])
    assert adjust(p, "none").tolist() == p.tolist()
    assert adjust(np.array([0.5, 0.9]), "bonferroni").tolist() == [1.0, 1.0]


def test_win_tie_loss_and_effect_sizes():
    a = np.array([0.0, 0.5, 1.0, 0.2, 0.2])
    b = np.array([1.0, 0.5, 0.0, 0.4, 0.2])
    assert win_tie_loss(b, a) == (2, 2, 1)
    _, d = paired_test(b, a, "t")
    diff = b - a
    assert d == pytest.approx(diff.mean() / diff.std(ddof=1))
    _, r = paired_test(b, a, "wilcoxon")
    # nonzero |d|: 1, 1, 0.2 -> ranks 2.5, 2.5, 1; positive ranks 2.5 + 1, negative 2.5
    assert r == pytest.approx((3.5 - 2.5) / 6)
    assert paired_test(a, a, "wilcoxon") == (1.0, 0.0)


def test_bootstrap_is_seeded_and_covers_the_truth_about_95_percent():
    rng = np.random.default_rng(0)
    values = rng.normal(size=(200, 2))
    assert np.array_equal(bootstrap_means(values, 300, seed=4), bootstrap_means(values, 300, seed=4))
    covered, runs, true_difference = 0, 200, 0.3
    for run in range(runs):
        sample = np.random.default_rng(1000 + run)
        a = sample.normal(0.0, 1.0, 150)
        b = a + true_difference + sample.normal(0.0, 1.0, 150)
        low, high = bootstrap_means(b - a, 400, seed=run)[0]
        covered += low <= true_difference <= high
    assert 0.89 <= covered / runs <= 0.99


def test_plain_language_reading(results):
    comparison = compare(results, "A", ["ndcg"], resamples=100)
    text = comparison.sentence("B", "ndcg")
    assert text.startswith("B beats A on ndcg@10 by +") and "after Holm correction" in text


def test_segments(results):
    segments = pd.Series(np.where(np.arange(300) % 2, "odd", "even"), index=range(300))
    frame = compare_segments(results, "A", "B", "ndcg", segments)
    assert set(frame.segment) == {"odd", "even"}
    assert frame.users.sum() == results["A"].users["evaluated"]
    assert (frame.wins + frame.ties + frame.losses == frame.users).all()


def test_activity_segments_come_least_to_most_active_and_unknown_last(results):
    """Who gains and who loses by activity reads in activity's order, not the alphabet's (less,
    least, more, most), with users of no segment last."""
    from metrics_core.stats.segments import ACTIVITY_LABELS

    labels = np.array(ACTIVITY_LABELS)[np.arange(300) % 4]
    segments = pd.Series(labels, index=range(300)).iloc[:-10]  # (ten users in no segment)
    frame = compare_segments(results, "A", "B", "ndcg", segments)
    assert list(frame.segment) == [*ACTIVITY_LABELS, "(unknown)"]
    assert frame.users.sum() == results["A"].users["evaluated"]


def test_gates():
    metrics = {"A": {"ndcg": 0.25}, "B": {"ndcg": 0.31}}
    failed = [g for g in check_gates(["ndcg < 0.30"], metrics, "A") if g.failed]
    assert [g.model for g in failed] == ["A"]
    assert not any(g.failed for g in check_gates(["B.ndcg < baseline.ndcg"], metrics, "A"))
    assert all(g.failed for g in check_gates(["baseline.ndcg <= 0.25"], metrics, "A"))
    with pytest.raises(InputError, match="unknown model"):
        check_gates(["Z.ndcg < 1"], metrics, "A")
    with pytest.raises(InputError, match="cannot read"):
        check_gates(["ndcg is bad"], metrics, "A")


def test_cli_compare_json_gates_and_report(tmp_path):
    rng = np.random.default_rng(1)
    truth = pd.DataFrame({"user_id": np.repeat(np.arange(50), 3), "item_id": rng.integers(0, 30, 150)})
    truth.drop_duplicates().to_csv(tmp_path / "truth.csv", index=False)
    for name, shift in (("old", 0), ("new", 1)):
        recs = pd.DataFrame({"user_id": np.repeat(np.arange(50), 5),
                             "item_id": (np.tile(np.arange(5), 50) + shift * truth.item_id.to_numpy()[::3].repeat(5))
                             % 30, "rank": np.tile(np.arange(1, 6), 50)})
        recs.drop_duplicates(["user_id", "item_id"]).to_csv(tmp_path / f"{name}.csv", index=False)
    base = [sys.executable, "-m", "metrics_core"]
    files = ["--recommendations", f"old={tmp_path / 'old.csv'}", "--recommendations", f"new={tmp_path / 'new.csv'}",
             "--ground-truth", str(tmp_path / "truth.csv"), "--k", "5", "--bootstrap", "200"]
    done = subprocess.run([*base, "compare", *files, "--baseline", "old", "--metrics", "ndcg,recall"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["baseline"] == "old" and out["k"] == 5
    row = out["rows"][0]
    assert set(row) >= {"model", "metric", "value", "baseline_value", "delta", "ci_low", "ci_high", "p_value",
                        "p_adjusted", "test", "wins", "ties", "losses"}
    assert row["ci_low"] <= row["delta"] <= row["ci_high"]
    gated = subprocess.run([*base, "compare", *files, "--fail-if", "new.ndcg < baseline.ndcg", "--fail-if",
                            "ndcg > 0.0"], capture_output=True, text=True)
    assert gated.returncode == 1
    assert "gate FAILED" in gated.stderr and "Traceback" not in gated.stderr
    bad = subprocess.run([*base, "compare", *files, "--fail-if", "nonsense"], capture_output=True, text=True)
    assert bad.returncode == 2 and "cannot read the gate" in bad.stderr
    report = subprocess.run([*base, "report", *files, "--output", str(tmp_path / "r.html"), "--json",
                             str(tmp_path / "n.json"), "--csv", str(tmp_path / "n.csv")],
                            capture_output=True, text=True)
    assert report.returncode == 0, report.stderr
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "<h2>Best and worst cases</h2>" in html and "Who is served" not in html  # (no training data)
    train = pd.DataFrame({"user_id": rng.integers(0, 50, 400), "item_id": rng.integers(0, 30, 400)})
    train.to_csv(tmp_path / "train.csv", index=False)
    with_training = subprocess.run([*base, "report", *files, "--train", str(tmp_path / "train.csv"), "--output",
                                    str(tmp_path / "t.html")], capture_output=True, text=True)
    assert with_training.returncode == 0, with_training.stderr
    html = (tmp_path / "t.html").read_text(encoding="utf-8")
    assert "<h2>Who is served: user groups</h2>" in html and "<h2>Who is served: popular and niche items</h2>" in html
    items = pd.DataFrame({"item_id": range(30), "shelf": ["front", "back", "side"] * 10})
    items.to_csv(tmp_path / "items.csv", index=False)
    by_shelf = subprocess.run([*base, "report", *files, "--items", str(tmp_path / "items.csv"), "--served-by", "shelf",
                               "--output", str(tmp_path / "s.html")], capture_output=True, text=True)
    assert by_shelf.returncode == 0, by_shelf.stderr
    served = (tmp_path / "s.html").read_text(encoding="utf-8").split("<h2>Who is served: items by shelf</h2>")[1]
    assert all(shelf in served.split("<h2>")[0] for shelf in ("front", "back", "side"))
    unknown = subprocess.run([*base, "report", *files, "--items", str(tmp_path / "items.csv"), "--served-by", "aisle",
                              "--output", str(tmp_path / "u.html")], capture_output=True, text=True)
    assert unknown.returncode == 2 and "aisle" in unknown.stderr and "Traceback" not in unknown.stderr
    numbers = json.loads((tmp_path / "n.json").read_text())
    assert set(numbers["models"]) == {"old", "new"} and numbers["comparison"]["rows"]
    assert "fingerprints" in numbers and len(numbers["fingerprints"]) == 3
    assert pd.read_csv(tmp_path / "n.csv").shape[0] > 10


def test_fbeta_of_means_gets_an_interval_and_catalog_metrics_are_refused(results):
    comparison = compare(results, "A", ["fbeta_of_means"], resamples=200)
    row = comparison.rows.query("model == 'B'").iloc[0]
    assert row.test == "bootstrap" and np.isnan(row.p_value)
    assert row.ci_low <= row.delta <= row.ci_high
    assert "the interval excludes 0" in comparison.sentence("B", "fbeta_of_means")
    value = comparison.intervals.query("model == 'B'").iloc[0]
    assert value.ci_low <= results["B"].metrics["fbeta_of_means"] <= value.ci_high
    with pytest.raises(InputError, match="does not even cover its own value"):
        compare(results, "A", ["coverage"])


def test_bootstrap_leaves_missing_values_out_of_each_column():
    values = np.array([[1.0, np.nan], [2.0, 5.0], [3.0, 5.0]])
    low, high = bootstrap_means(values, 500, seed=1)[1]
    assert low == high == 5.0


def test_arp_normalised_interval_is_the_arp_interval_scaled():
    from dashboard.workspace import demo_workspace

    results = demo_workspace().build().evaluate_all(Settings(k=10))
    comparison = compare(results, "popularity", ["arp", "arp_normalised"], resamples=300)
    arp = comparison.intervals.query("metric == 'arp' and model == 'diverse'").iloc[0]
    scaled = comparison.intervals.query("metric == 'arp_normalised' and model == 'diverse'").iloc[0]
    scale = results["diverse"].metrics["arp_normalised"] / results["diverse"].metrics["arp"]
    assert scaled.ci_low == pytest.approx(arp.ci_low * scale) and scaled.ci_high == pytest.approx(arp.ci_high * scale)


@pytest.mark.parametrize("resamples", [40, 3_000])  # (3,000 x 300 users: drawn in batches, not kept)
def test_metrics_share_the_draws_and_keep_the_bounds_of_one_metric_at_a_time(results, resamples, monkeypatch):
    """Metrics paired over the same users are bootstrapped together (one set of draws), with the
    bounds each gets alone; a metric paired over other users (unexpectedness: users with a list in every
    model) alone."""
    from metrics_core.stats import compare as module

    calls = []
    shared = module.resampled_means_of
    monkeypatch.setattr(module, "resampled_means_of", lambda rows, n, columns, *args: calls.append(columns) or
                        shared(rows, n, columns, *args))
    together = compare(results, "A", ["ndcg", "recall", "unexpectedness", "map"], correction="none",
                       resamples=resamples)
    assert calls == [3 * 3, 3]  # ndcg, recall and map at once; unexpectedness alone (each model's mean only)
    for metric in ("ndcg", "recall", "unexpectedness", "map"):
        alone = compare(results, "A", [metric], correction="none", resamples=resamples)
        for frame in ("rows", "intervals"):
            mine = getattr(together, frame).query("metric == @metric").reset_index(drop=True)
            pd.testing.assert_frame_equal(mine, getattr(alone, frame).reset_index(drop=True))


def test_a_differences_interval_is_the_bootstrap_of_the_paired_differences(results):
    """A difference's resampled means are the differences of the models' resampled means (the same
    users drawn for both): its bounds equal those of bootstrapping the per-user differences
    themselves, with the same draws."""
    from metrics_core.stats.compare import paired_values

    comparison = compare(results, "A", ["ndcg"], correction="none", resamples=700, seed=3)
    paired = paired_values(results, "ndcg", list(results))
    for model in ("B", "C"):
        row = comparison.rows.query("model == @model").iloc[0]
        expected = bootstrap_means((paired[model] - paired["A"]).to_numpy(), 700, seed=3)[0]
        assert (row.ci_low, row.ci_high) == pytest.approx(tuple(expected), rel=1e-12, abs=1e-15)


def test_above_100000_users_the_resampled_means_follow_the_bootstraps_normal_limit():
    """The normal limit's intervals agree with users drawn with replacement within the draws'
    own noise (skewed values, a column with gaps, a paired difference), and their width is the
    bootstrap's standard error times 2·1.96."""
    from metrics_core.stats.compare import NORMAL_LIMIT_USERS, drawn_means, percentile_interval

    rng = np.random.default_rng(3)
    n = NORMAL_LIMIT_USERS + 20_000
    a = rng.exponential(1.0, n)  # skewness 2
    b = a * 0.8 + rng.exponential(0.3, n)
    gaps = np.where(rng.random(n) < 0.3, np.nan, rng.random(n) ** 3)
    values = np.column_stack([a, b, b - a, gaps])
    limit = bootstrap_means(values, 1_000, seed=1)
    drawn = percentile_interval(drawn_means(values, 1_000, seed=2), 0.95)
    present = ~np.isnan(values)
    errors = np.array([np.nanstd(values[:, j]) / np.sqrt(present[:, j].sum()) for j in range(4)])
    assert (np.abs(limit - drawn) < 0.4 * errors[:, None]).all()
    np.testing.assert_allclose(limit[:, 1] - limit[:, 0], 2 * 1.959964 * errors, rtol=0.1)
    means = np.nanmean(values, axis=0)
    assert ((limit[:, 0] < means) & (means < limit[:, 1])).all()
    assert np.array_equal(bootstrap_means(values, 200, seed=4), bootstrap_means(values, 200, seed=4))
    none = bootstrap_means(np.column_stack([a, np.full(n, np.nan)]), 100)
    assert np.isnan(none[1]).all() and np.isfinite(none[0]).all()


@pytest.mark.parametrize("n", [51, 300, 20_000])
def test_the_signed_rank_test_above_50_pairs_is_scipys(n):
    """p-value and effect equal scipy's wilcoxon and the rank-biserial of scipy's ranks, with ties,
    zeros and a shift."""
    from scipy import stats

    rng = np.random.default_rng(n)
    a = np.round(rng.random(n), 1)
    b = np.round(rng.random(n) + 0.03, 1)
    p, effect = paired_test(b, a, "wilcoxon")
    d = b - a
    nonzero = d[d != 0]
    ranks = stats.rankdata(np.abs(nonzero))
    assert p == pytest.approx(stats.wilcoxon(b, a).pvalue, rel=1e-9, abs=1e-300)
    assert effect == pytest.approx((ranks[nonzero > 0].sum() - ranks[nonzero < 0].sum()) / ranks.sum(), rel=1e-12)
    continuous = rng.random(n)
    p, _ = paired_test(continuous + 0.01, rng.random(n))
    assert 0 <= p <= 1


@pytest.mark.parametrize("seed", range(6))
def test_the_signed_rank_test_ranks_sizes_of_any_magnitude_as_scipy_does(seed):
    """The sort by the sizes' bits ranks as scipy's ranks do over the whole float range: tiny and
    subnormal differences, huge ones, infinities, exact ties of either sign, one difference alone."""
    from scipy import stats

    rng = np.random.default_rng(seed)
    n = int(rng.integers(51, 3_000))
    pool = np.array([5e-324, 1e-310, 1e-300, 1e-12, 0.1, 0.25, 1.0, 3.0, 1e12, 1e300, np.inf])
    d = rng.choice(pool, n) * rng.choice([-1.0, 1.0], n)
    d[: n // 3] = rng.standard_normal(n // 3) * 10.0 ** rng.integers(-8, 8, n // 3)
    p, effect = signed_rank_test(d)
    ranks = stats.rankdata(np.abs(d))
    assert effect == pytest.approx((ranks[d > 0].sum() - ranks[d < 0].sum()) / ranks.sum(), rel=1e-12)
    assert p == pytest.approx(stats.wilcoxon(d).pvalue, rel=1e-9, abs=1e-300)
    assert signed_rank_test(np.array([-2.5])) == pytest.approx((stats.wilcoxon([-2.5], method="approx").pvalue,
                                                                -1.0))


@pytest.mark.parametrize("metric", ["ndcg", "map", "unexpectedness"])
def test_paired_values_and_arrays_are_pandas_alignment_of_the_evaluated_users(results, metric):
    """Models of one dataset share their users' index (no aligning); models whose tables hold
    other users (as runs from elsewhere) are aligned by id. Either way: the users with a value in
    every model (and, for accuracy metrics, evaluated in every model), in the index's order."""
    from dataclasses import replace

    from metrics_core.metrics import registry
    from metrics_core.stats.compare import paired_arrays, paired_values

    def by_alignment(chosen):
        column = registry.per_user_columns()[metric]
        frames = {}
        for name, result in chosen.items():
            values = result.per_user[column]
            frames[name] = values[result.per_user["evaluated"]] if registry.METRICS[metric].family == "accuracy" \
                else values
        return pd.DataFrame(frames).dropna()

    pd.testing.assert_frame_equal(paired_values(results, metric, list(results)), by_alignment(results),
                                  check_freq=False)
    fewer = {**results, "C": replace(results["C"], per_user=results["C"].per_user.iloc[::2])}
    assert not fewer["C"].per_user.index.equals(results["A"].per_user.index)
    pd.testing.assert_frame_equal(paired_values(fewer, metric, list(fewer)), by_alignment(fewer), check_freq=False)
    for chosen in (results, fewer):  # (paired_arrays: the same values without the users' ids, for the verdicts)
        arrays = paired_arrays(chosen, metric, list(chosen))
        assert list(arrays) == list(chosen)
        for name, values in arrays.items():
            np.testing.assert_array_equal(values, by_alignment(chosen)[name].to_numpy())


@pytest.mark.parametrize("labels", [["b", "a", None, "c"], ["most active", "least active", None, "more active"],
                                    [2.0, 1.0, None, 10.0]])
def test_segments_equal_a_groupby_of_the_users_labels(results, labels):
    """Each segment's users, means, wins and p-value are those of the users whose label reads as
    the segment (a pandas groupby of the labels as text; users without one: (unknown)), in the
    segments' natural order or by name."""
    from metrics_core.stats.compare import paired_values
    from metrics_core.stats.segments import UNKNOWN, natural_order

    rng = np.random.default_rng(2)
    segments = pd.Series(np.array(labels, dtype=object)[rng.integers(0, 4, 300)], index=range(300)).iloc[5:]
    frame = compare_segments(results, "A", "C", "ndcg", segments, "t")
    paired = paired_values(results, "ndcg", ["A", "C"])
    text = segments.reindex(paired.index).astype(object).where(lambda s: s.notna(), UNKNOWN).map(str)
    order = natural_order(text.unique()) or sorted(text.unique())
    assert list(frame.segment) == order
    for row in frame.itertuples():
        mine = paired[(text == row.segment).to_numpy()]
        assert row.users == len(mine) and row.baseline_value == mine["A"].mean() and row.value == mine["C"].mean()
        assert (row.wins, row.ties, row.losses) == win_tie_loss(mine["C"].to_numpy(), mine["A"].to_numpy())
        assert row.p_value == paired_test(mine["C"].to_numpy(), mine["A"].to_numpy(), "t")[0]


def test_segments_given_for_the_paired_users_in_order_or_shuffled_give_the_same_table(results):
    """The pages give each user's segment for the paired users in their order (read as they are,
    no look-up per id); the same segments shuffled, or for other users too, give the same table."""
    from metrics_core.stats.compare import paired_values

    paired = paired_values(results, "ndcg", ["A", "C"])
    rng = np.random.default_rng(6)
    in_order = pd.Series(rng.choice(["x", "y", "z"], len(paired)), index=paired.index)
    expected = compare_segments(results, "A", "C", "ndcg", in_order, "t")
    for other in (in_order.sample(frac=1.0, random_state=3), pd.concat([in_order, pd.Series(["w"], index=[-9])])):
        pd.testing.assert_frame_equal(compare_segments(results, "A", "C", "ndcg", other, "t"), expected)
