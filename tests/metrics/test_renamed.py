"""A renamed metric (ndcg_rel is now ndcg_at_r: trec_eval's ndcg_rel is another measure) still
answers to its old name, with a DeprecationWarning: in results, comparisons, gates and saved runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metrics_core import evaluate_models
from metrics_core.stats.compare import compare
from metrics_core.stats.gates import check_gates

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(scope="module")
def results():
    return evaluate_models({"a": DATA / "recs_personalised.csv", "b": DATA / "recs_popularity.csv"},
                           DATA / "ground_truth.csv", k=10)


def test_the_old_name_reads_the_new_metric_with_a_warning(results):
    result = results["a"]
    assert "ndcg_at_r" in result.metrics and "ndcg_rel" not in result.metrics
    with pytest.warns(DeprecationWarning, match="'ndcg_rel' is now called 'ndcg_at_r'"):
        assert result.metrics["ndcg_rel"] == result.metrics["ndcg_at_r"]
    with pytest.warns(DeprecationWarning):
        rows = compare(results, "a", ["ndcg_rel"], resamples=20).rows
    assert list(rows["metric"]) == ["ndcg_at_r"]
    with pytest.warns(DeprecationWarning):
        (gate,) = check_gates(["b.ndcg_rel > 2"], {n: r.metrics for n, r in results.items()}, "a")
    assert not gate.failed and gate.left == results["b"].metrics["ndcg_at_r"]
    with pytest.raises(KeyError):
        result.metrics["no_such_metric"]


def test_a_run_saved_under_the_old_name_loads_under_the_new(tmp_path, results):
    from metrics_core.store.catalog import Store
    from metrics_core.store.runs import RunModel, list_runs, load_run, normal_intervals, record_run, run_results

    store = Store(tmp_path)
    models = [RunModel(name, dict(r.metrics), normal_intervals(r), r.users, r.per_user) for name, r in results.items()]
    run = record_run(store, None, "shop", "f", results["a"].settings, models)
    with store.connect() as connection:  # (as a run saved before the rename holds it)
        for row in connection.execute("SELECT rowid, metrics, intervals FROM run_models").fetchall():
            connection.execute("UPDATE run_models SET metrics = ?, intervals = ? WHERE rowid = ?",
                               (row["metrics"].replace('"ndcg_at_r"', '"ndcg_rel"'),
                                row["intervals"].replace('"ndcg_at_r"', '"ndcg_rel"'), row["rowid"]))
        assert '"ndcg_rel"' in connection.execute("SELECT metrics FROM run_models").fetchone()[0]
    loaded = load_run(store, run.id)
    assert loaded.models["a"]["metrics"]["ndcg_at_r"] == results["a"].metrics["ndcg_at_r"]
    assert "ndcg_at_r" in loaded.models["a"]["intervals"] and "ndcg_rel" not in json.dumps(loaded.models)
    assert "ndcg_at_r_low" in list_runs(store).columns
    assert "ndcg_at_r" in run_results(store, run.id)["b"].per_user.columns
