"""rankscope in MLflow, run for real against a file store in a temp folder: what the command line
logs equals its JSON to the last digit, the Python API, compare, a saved run's export, and
``mlflow.models.evaluate(..., evaluators="rankscope")``. Skipped only without MLflow (the
``mlflow`` extra)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from metrics_core import evaluate, evaluate_models, log_to_mlflow
from metrics_core.errors import InputError
from metrics_core.integrations.mlflow import metric_key
from metrics_core.metrics import registry
from metrics_core.stats.compare import compare

mlflow = pytest.importorskip("mlflow", reason="MLflow is not installed (pip install 'rankscope[mlflow]')")

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
FILES = ["--recommendations", f"a={DATA / 'recs_personalised.csv'}", "--recommendations",
         f"b={DATA / 'recs_popularity.csv'}", "--ground-truth", str(DATA / "ground_truth.csv"), "--train",
         str(DATA / "train.csv"), "--items", str(DATA / "items.csv"), "--relevance-column", "rating",
         "--relevance-threshold", "4"]


@pytest.fixture
def tracking(tmp_path, monkeypatch):
    """A file store of its own (MLflow 3 keeps the file store behind a switch)."""
    uri = (tmp_path / "mlruns").as_uri()
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    mlflow.set_tracking_uri(uri)
    yield mlflow.tracking.MlflowClient(uri)
    mlflow.set_tracking_uri(None)


def only_run(client, experiment: str):
    runs = client.search_runs([client.get_experiment_by_name(experiment).experiment_id])
    assert len(runs) == 1
    return runs[0]


def rankscope(*args: str, home: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "metrics_core", *args], capture_output=True, text=True,
                          timeout=600, env={**os.environ, "RANKSCOPE_HOME": str(home)})


def test_the_command_line_logs_what_its_json_says_to_the_last_digit(tracking, tmp_path):
    done = rankscope("evaluate", *FILES, "--mlflow", "--mlflow-experiment", "offline", home=tmp_path / "store")
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    run = only_run(tracking, "offline")
    assert f"logged to MLflow run {run.info.run_id}" in done.stderr
    logged = run.data.metrics
    compared = 0
    for model, result in printed["models"].items():
        for metric, value in result["metrics"].items():
            if value is not None:
                assert logged[metric_key(metric, 10, model)] == value, (model, metric)
                compared += 1
    assert compared > 60 and logged["a.ndcg_at_10_low"] < logged["a.ndcg_at_10"] < logged["a.ndcg_at_10_high"]
    assert run.data.params["k"] == "10" and json.loads(run.data.params["models"]) == ["a", "b"]
    artifacts = {a.path for a in tracking.list_artifacts(run.info.run_id, "rankscope")}
    assert artifacts == {"rankscope/per_user_a.parquet", "rankscope/per_user_b.parquet", "rankscope/report.html",
                         "rankscope/verdicts.txt"}
    verdicts = Path(tracking.download_artifacts(run.info.run_id, "rankscope/verdicts.txt", str(tmp_path))).read_text()
    assert "is best on NDCG@10" in verdicts
    kept = pd.read_parquet(tracking.download_artifacts(run.info.run_id, "rankscope/per_user_a.parquet", str(tmp_path)))
    assert int(kept["evaluated"].sum()) == printed["models"]["a"]["users"]["evaluated"] and "ndcg" in kept.columns


def test_every_metric_name_is_one_mlflow_accepts():
    from mlflow.utils.validation import _validate_metric_name

    for metric in registry.METRICS:
        for model in (None, "two-tower #2 (β)"):
            _validate_metric_name(metric_key(metric, 10, model))  # (raises on a refused name)
    assert metric_key("ndcg", 10) == "ndcg_at_10" and "@" not in metric_key("ndcg", 10)


def test_the_python_api_logs_into_the_active_run_with_intervals(tracking):
    result = evaluate(DATA / "recs_personalised.csv", DATA / "ground_truth.csv", k=5)
    mlflow.set_experiment("notebook")
    with mlflow.start_run() as active:
        assert log_to_mlflow(result, report=False) == active.info.run_id
    run = only_run(tracking, "notebook")
    frame = result.to_frame()
    assert run.data.metrics["recall_at_5"] == result.metrics["recall"]
    assert run.data.metrics["recall_at_5_low"] == frame.at["recall", "low"]
    assert "coverage_at_5_low" not in run.data.metrics  # (no interval for a catalog metric)
    assert run.data.metrics["r_precision"] == result.metrics["r_precision"]  # (over the whole list: no @K)


def test_compare_logs_the_comparison_and_its_sentences(tracking, tmp_path):
    done = rankscope("compare", *FILES, "--bootstrap", "50", "--mlflow", "--mlflow-experiment", "cmp",
                     home=tmp_path / "store")
    assert done.returncode == 0, done.stderr
    run = only_run(tracking, "cmp")
    folder = tracking.download_artifacts(run.info.run_id, "rankscope", str(tmp_path))
    table = pd.read_csv(Path(folder) / "comparison.csv")
    assert set(table["metric"]) == {"ndcg", "map", "recall"} and set(table["model"]) == {"b"}
    assert "b trails a on ndcg@10" in (Path(folder) / "comparison.txt").read_text()


def test_a_saved_run_exports_as_the_command_would_have_logged_it(tracking, tmp_path):
    home = tmp_path / "store"
    saved = rankscope("evaluate", *FILES, "--save", "shop", home=home)
    assert saved.returncode == 0, saved.stderr
    runs = json.loads(rankscope("runs", "list", "--format", "json", home=home).stdout)
    exported = rankscope("runs", "export", runs[0]["run"], "--mlflow", "--mlflow-experiment", "export", home=home)
    assert exported.returncode == 0, exported.stderr
    logged = only_run(tracking, "export").data.metrics
    printed = json.loads(saved.stdout)["models"]
    assert logged["b.ndcg_at_10"] == printed["b"]["metrics"]["ndcg"]
    assert logged["a.novelty_at_10"] == printed["a"]["metrics"]["novelty"]
    refused = rankscope("runs", "export", runs[0]["run"], home=home)
    assert refused.returncode == 2 and "add --mlflow" in refused.stderr


def test_a_spark_run_s_kept_intervals_are_what_is_logged(tracking):
    """A Spark run keeps a sample of its per-user rows: its export logs the aggregates and the
    bootstrap intervals the run kept, not intervals from the sample."""
    from metrics_core import Settings
    from metrics_core.integrations.mlflow import KeptAggregates

    kept = KeptAggregates(Settings(k=20), {"ndcg": 0.25, "coverage": 0.5, "mrr": None}, {"ndcg": [0.24, 0.26]})
    mlflow.set_experiment("spark")
    log_to_mlflow({"big": kept})
    logged = only_run(tracking, "spark").data.metrics
    assert logged == {"ndcg_at_20": 0.25, "ndcg_at_20_low": 0.24, "ndcg_at_20_high": 0.26, "coverage_at_20": 0.5}


def test_mlflow_evaluate_with_the_rankscope_evaluator(tracking):
    recs = pd.read_csv(DATA / "recs_personalised.csv")
    truth = pd.read_csv(DATA / "ground_truth.csv")
    mlflow.set_experiment("plugin")
    with mlflow.start_run():
        result = mlflow.models.evaluate(data=recs, predictions="score", model_type="ranker", evaluators="rankscope",
                                        evaluator_config={"ground_truth": truth, "k": 10, "report": False})
    direct = evaluate(recs, truth, k=10)
    assert result.metrics["ndcg_at_10"] == direct.metrics["ndcg"]
    assert only_run(tracking, "plugin").data.metrics["map_at_10"] == direct.metrics["map"]
    with pytest.raises(InputError, match="ground_truth"), mlflow.start_run():
        mlflow.models.evaluate(data=recs, predictions="score", model_type="ranker", evaluators="rankscope")


def test_a_tracking_store_that_refuses_is_named_after_the_numbers_are_printed(tmp_path):
    """MLflow 3 refuses a folder store without its switch (and a sqlite:// one without the full
    package): the command prints its numbers, then says where it could not log and how to fix it."""
    env = {k: v for k, v in os.environ.items() if k != "MLFLOW_ALLOW_FILE_STORE"}
    done = subprocess.run([sys.executable, "-m", "metrics_core", "evaluate", *FILES, "--mlflow"], capture_output=True,
                          text=True, timeout=300, env={**env, "RANKSCOPE_HOME": str(tmp_path / "store"),
                                                       "MLFLOW_TRACKING_URI": (tmp_path / "mlruns").as_uri()})
    assert done.returncode == 2 and json.loads(done.stdout)["models"]["a"]["metrics"]["ndcg"] > 0
    assert "MLflow could not log to file://" in done.stderr and "MLFLOW_ALLOW_FILE_STORE=true" in done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr


def test_without_mlflow_the_command_names_the_extra(tmp_path):
    probe = ("import sys\nsys.modules['mlflow'] = None\nfrom metrics_core.cli import main\n"
             f"sys.exit(main({['evaluate', *FILES, '--mlflow']!r}))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "RANKSCOPE_HOME": str(tmp_path)})
    assert done.returncode == 2 and "pip install 'rankscope[mlflow]'" in done.stderr
    assert "Traceback" not in done.stderr


def test_results_draw_the_app_s_charts():
    results = evaluate_models({"a": DATA / "recs_personalised.csv", "b": DATA / "recs_popularity.csv"},
                              DATA / "ground_truth.csv", k=10)
    curves = results["a"].chart("curves", "ndcg").to_dict()
    assert curves["layer"][0]["mark"]["type"] == "line" and curves["title"] == "NDCG at every cut-off (dashed: K = 10)"
    interval = results["a"].chart("interval", "recall").to_dict()
    assert interval["layer"][0]["encoding"]["x"]["title"] == "Recall@10 (95% t interval)"
    assert compare(results, metrics=["ndcg"], resamples=50).chart("ndcg").to_dict()["title"].startswith("NDCG@10")
    with pytest.raises(InputError, match="no chart named"):
        results["a"].chart("pie")
    with pytest.raises(InputError, match="no metric"):
        results["a"].chart("curves", "nope")
