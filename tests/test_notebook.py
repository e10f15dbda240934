"""rankscope in a notebook (issue #47): an evaluation and a comparison show as HTML tables (the
headline metrics with their 95% t intervals, the comparison in words) and as short plain text
elsewhere; ``to_frame()`` gives one row per metric. docs/examples/quickstart.ipynb is executed by
a real kernel (nbclient), as a user runs it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dashboard.workspace import demo_workspace
from metrics_core import Settings
from metrics_core.intervals import mean_interval
from metrics_core.stats.compare import compare
from metrics_core.stats.verdict import half_width

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def results():
    return demo_workspace().build().evaluate_all(Settings(k=10))


def test_to_frame_has_every_metric_with_the_summary_s_interval(results):
    result = results["personalised"]
    frame = result.to_frame()
    assert list(frame.index) == list(result.metrics) and list(frame.columns) == ["label", "value", "low", "high",
                                                                                "users"]
    assert frame.at["ndcg", "label"] == "NDCG@10" and frame.at["ndcg", "value"] == result.metrics["ndcg"]
    low, high = frame.at["ndcg", "low"], frame.at["ndcg", "high"]
    assert (high - low) / 2 == pytest.approx(half_width(result, "ndcg"), rel=1e-12)  # (the Summary's method)
    evaluated = result.per_user.loc[result.per_user["evaluated"], "ndcg"].to_numpy()
    assert (low, high) == pytest.approx(mean_interval(evaluated), rel=1e-12)
    assert frame.at["ndcg", "users"] == len(evaluated)
    assert np.isnan(frame.at["coverage", "low"]) and frame["users"].isna()["coverage"]


def test_text_and_html_name_things_as_text(results):
    result = results["diverse"]
    assert repr(result).startswith("Evaluation(model='diverse', k=10, evaluated=") and "ndcg=" in repr(result)
    page = result._repr_html_()
    assert "<b>diverse</b> at K = 10" in page and "NDCG@10" in page and "95% interval (t)" in page
    renamed = type(result)(**{**result.__dict__, "model": "<script>x</script>"})
    assert "<script>" not in renamed._repr_html_()
    comparison = compare(results, "popularity", ["ndcg"], resamples=50)
    assert repr(comparison).startswith("Comparison(baseline='popularity'") and len(comparison.to_frame()) == 2
    assert "personalised beats popularity on ndcg@10" in comparison._repr_html_()


def test_the_example_notebook_runs_and_shows_html_tables():
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    notebook = nbformat.read(ROOT / "docs" / "examples" / "quickstart.ipynb", as_version=4)
    nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(ROOT)}}).execute()
    shown = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.get("outputs", [])]
    assert not [output for output in shown if output.output_type == "error"]
    pages = [output["data"]["text/html"] for output in shown if "text/html" in output.get("data", {})]
    assert any("<b>personalised</b> at K = 10" in page and "NDCG@10" in page for page in pages)
    assert any("personalised beats popularity on ndcg@10" in page for page in pages)


def test_a_saved_run_shows_its_models_headline_metrics(tmp_path):
    import json
    import os
    import subprocess
    import sys

    from metrics_core.store.catalog import Store
    from metrics_core.store.runs import load_run

    data = ROOT / "data"
    done = subprocess.run([sys.executable, "-m", "metrics_core", "evaluate", "--recommendations",
                           f"<b>a</b>={data / 'recs_personalised.csv'}", "--recommendations",
                           f"b={data / 'recs_popularity.csv'}", "--ground-truth", str(data / "ground_truth.csv"),
                           "--save", "shop"], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "RANKSCOPE_HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)["models"]
    store = Store(tmp_path)
    with store.connect() as connection:
        (row,) = connection.execute("SELECT id FROM runs").fetchall()
    run = load_run(store, row["id"])
    assert repr(run).startswith(f"Run(id={run.id!r}, workspace='shop'") and "k=10" in repr(run)
    page = run._repr_html_()
    assert "<b>a</b>" not in page and "&lt;b&gt;a&lt;/b&gt;" in page and "NDCG@10" in page
    assert f"{printed['b']['metrics']['ndcg']:.4f}" in page and " to " in page
