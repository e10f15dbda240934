"""Hand rankscope's results to MLflow's tracker: every aggregate under a name MLflow accepts, the
intervals' bounds, the settings as parameters, the per-user values and the offline report as
artifacts. MLflow is imported only here, and only when used (``pip install 'rankscope[mlflow]'``).

Names: MLflow accepts letters, digits, ``_ - . /`` and spaces in a metric's name, so NDCG@10 is
``ndcg_at_10`` (``ndcg@10`` would be refused); its interval's bounds are ``ndcg_at_10_low`` and
``ndcg_at_10_high``. With several models each name starts with the model's (``b.ndcg_at_10``),
any other character of a model's name written as ``_``.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from metrics_core.errors import InputError, input_error
from metrics_core.metrics import registry
from metrics_core.settings import Settings

ARTIFACTS = "rankscope"  # the artifact folder of everything logged here
NOT_ALLOWED = re.compile(r"[^0-9A-Za-z_\-. /]")


def import_mlflow():
    """mlflow, or an :class:`InputError` naming the extra that brings it."""
    try:
        import mlflow
    except ImportError:
        raise input_error("mlflow", "MLflow is not installed.", "pip install 'rankscope[mlflow]'.") from None
    return mlflow


def metric_key(metric: str, k: int, model: str | None = None) -> str:
    """The MLflow name of ``metric`` at ``k`` (with K unless it covers the whole list), after
    ``model.`` when given.

    >>> metric_key("ndcg", 10), metric_key("r_precision", 10), metric_key("ndcg", 5, "two-tower #2")
    ('ndcg_at_10', 'r_precision', 'two-tower _2.ndcg_at_5')
    """
    info = registry.METRICS.get(metric)
    name = metric if info is not None and info.whole_list else f"{metric}_at_{k}"
    return NOT_ALLOWED.sub("_", f"{model}.{name}" if model is not None else name)


def aggregates(result, model: str | None = None) -> dict[str, float]:
    """Every finite aggregate of ``result`` (either engine's), with its interval's bounds where
    it has one: the t interval of the mean over users in memory (as the notebook's table and the
    Summary give it), the Spark engine's bootstrap interval on Spark."""
    if hasattr(result, "to_frame"):
        rows = result.to_frame()[["value", "low", "high"]].itertuples()
    else:
        rows = ((name, value, *result.intervals.get(name, (math.nan, math.nan)))
                for name, value in result.metrics.items())
    out = {}
    for metric, value, low, high in rows:
        key = metric_key(metric, result.k, model)
        for suffix, number in (("", value), ("_low", low), ("_high", high)):
            if number is not None and math.isfinite(number):
                out[key + suffix] = float(number)
    return out


@dataclass(frozen=True)
class KeptAggregates:
    """A model's aggregates and intervals as a run keeps them, without per-user values (a Spark
    run's per-user rows are a sample): what :func:`aggregates` reads of an evaluation."""

    settings: Settings
    metrics: dict[str, float | None]
    intervals: dict[str, tuple[float, float]]

    @property
    def k(self) -> int:
        return self.settings.k


def parameters(settings) -> dict[str, str]:
    """The settings as MLflow parameters (text), each as a saved run keeps it (a custom gain as
    its JSON pairs)."""
    from metrics_core.store.settings_text import settings_json

    return {name: value if isinstance(value, str) else json.dumps(value)
            for name, value in json.loads(settings_json(settings)).items()}


@contextlib.contextmanager
def _active_run(run=None, experiment: str | None = None) -> Iterator[str]:
    """The run to log into: ``run`` (an MLflow run or its id), else the active run, else a new one
    in ``experiment`` (ended when the block ends); yields its id."""
    mlflow = import_mlflow()
    if run is not None:
        run_id = run if isinstance(run, str) else run.info.run_id
        active = mlflow.active_run()
        if active is not None and active.info.run_id == run_id:
            yield run_id
            return
        with mlflow.start_run(run_id=run_id):
            yield run_id
        return
    if mlflow.active_run() is not None:
        yield mlflow.active_run().info.run_id
        return
    if experiment:
        mlflow.set_experiment(experiment)
    with mlflow.start_run() as started:
        yield started.info.run_id


def log_to_mlflow(results, run=None, *, experiment: str | None = None, comparison=None, report: bool = True,
                  per_user: bool = True) -> str:
    """Log one evaluation, or several models' (``{name: evaluation}``), into an MLflow run and
    return its id: every aggregate and interval bound (:func:`aggregates`), the settings as
    parameters, each model's per-user values as a Parquet artifact, the offline HTML report (when
    the report's extra is installed and the results have their curves, as evaluations do), with
    several models which one wins on each of the Summary's metrics (``verdicts.txt``), and with
    ``comparison`` the comparison table and each comparison in words.

    ``run``: an MLflow run or run id to log into; else the active run; else a new run (in
    ``experiment`` when given), ended before this returns. Raises :class:`InputError` when MLflow
    is missing or the results are empty.
    """
    if not isinstance(results, Mapping):
        results = {getattr(results, "model", "model"): results}
    if not results:
        raise input_error("mlflow", "there are no results to log.", "evaluate at least one model first.")
    mlflow = import_mlflow()
    try:
        return _logged(mlflow, results, run, experiment, comparison, report, per_user)
    except mlflow.exceptions.MlflowException as error:  # (the tracking store refused: say where and how to fix it)
        raise input_error("mlflow", f"MLflow could not log to {mlflow.get_tracking_uri()} "
                                    f"({str(error).strip().splitlines()[0][:300]}).",
                          "set MLFLOW_TRACKING_URI to your tracking server (http://...), or to a folder "
                          "(file:///path/mlruns) with MLFLOW_ALLOW_FILE_STORE=true, which MLflow 3 asks for; a "
                          "sqlite:// store needs the full mlflow package.") from None


def _logged(mlflow, results: Mapping, run, experiment: str | None, comparison, report: bool, per_user: bool) -> str:
    """:func:`log_to_mlflow`'s work, in the run it chooses; returns the run's id."""
    several = len(results) > 1
    first = next(iter(results.values()))
    with _active_run(run, experiment) as run_id, tempfile.TemporaryDirectory() as folder:
        mlflow.log_params({**parameters(first.settings), "models": json.dumps(list(results))})
        metrics: dict[str, float] = {}
        for name, result in results.items():
            metrics.update(aggregates(result, name if several else None))
        mlflow.log_metrics(metrics)
        for name, result in results.items():
            if per_user and hasattr(getattr(result, "per_user", None), "to_parquet"):
                path = Path(folder) / f"per_user_{NOT_ALLOWED.sub('_', name)}.parquet"
                result.per_user.to_parquet(path)
                mlflow.log_artifact(str(path), ARTIFACTS)
        if comparison is not None:
            mlflow.log_text(comparison.rows.to_csv(index=False), f"{ARTIFACTS}/comparison.csv")
            words = [comparison.sentence(row.model, row.metric) for row in comparison.rows.itertuples()]
            mlflow.log_text("\n".join(words) + "\n", f"{ARTIFACTS}/comparison.txt")
        if several and all(hasattr(r, "to_frame") for r in results.values()):
            mlflow.log_text("\n".join(_verdicts(results)) + "\n", f"{ARTIFACTS}/verdicts.txt")
        if report and _report_available() and all(_has_curves(r) for r in results.values()):
            from metrics_core.report.document import report_html

            mlflow.log_text(report_html(dict(results), comparison), f"{ARTIFACTS}/report.html")
    return run_id


def _verdicts(results: Mapping) -> list[str]:
    """Which model wins on each of the Summary's metrics, in the Summary's words."""
    from metrics_core.stats.verdict import SUMMARY_METRICS, verdict

    per_user = registry.per_user_columns()
    present = [m for m in SUMMARY_METRICS if m in per_user and all(m in r.metrics for r in results.values())]
    return [verdict(dict(results), metric).sentence() for metric in present]


def _has_curves(result) -> bool:
    """Whether the report can draw ``result``: an in-memory evaluation with its curves (a saved
    run keeps aggregates and per-user values only)."""
    curves = getattr(result, "curves", None)
    return hasattr(result, "to_frame") and curves is not None and not curves.empty


def _report_available() -> bool:
    """Whether the report's charts can be drawn (Altair and vl-convert, the report extra)."""
    import importlib.util

    return all(importlib.util.find_spec(name) is not None for name in ("altair", "vl_convert"))


__all__ = ["InputError", "KeptAggregates", "aggregates", "log_to_mlflow", "metric_key", "parameters"]
