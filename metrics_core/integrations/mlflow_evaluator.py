"""rankscope as an MLflow evaluator: ``mlflow.models.evaluate(..., evaluators="rankscope")``.

Registered under MLflow's ``mlflow.model_evaluator`` entry point (``pyproject.toml``), so that a
ranking model's output is evaluated with rankscope's metrics and logged into the run::

    mlflow.models.evaluate(data=recs, predictions="score", model_type="ranker", evaluators="rankscope",
                           evaluator_config={"ground_truth": truth, "k": 10})

``data``: one row per (user, item) with a score and/or a rank; with a ``model`` instead of
``predictions``, its ``predict`` on ``data`` gives each row's score. ``evaluator_config``:
``ground_truth`` (a DataFrame or a path, required), ``k`` (10), ``columns`` (a mapping as
:class:`~metrics_core.inputs.columns.Columns` takes it: ``user``, ``item``, ``score``, ``rank``,
``relevance``, ``threshold``), ``preset`` and ``report`` (log the HTML report, default True).
"""

from __future__ import annotations

import pandas as pd
from mlflow.models.evaluation import EvaluationResult, ModelEvaluator

from metrics_core.errors import input_error
from metrics_core.integrations.mlflow import aggregates, log_to_mlflow

MODEL_TYPES = ("ranker", "rankscope")


class RankscopeEvaluator(ModelEvaluator):
    """Evaluates a ranking model's lists against a ground truth with rankscope."""

    @classmethod
    def can_evaluate(cls, *, model_type, evaluator_config, **kwargs) -> bool:
        return model_type in MODEL_TYPES or "ground_truth" in (evaluator_config or {})

    def evaluate(self, *, model_type, dataset, run_id, evaluator_config, model=None, extra_metrics=None,
                 custom_artifacts=None, predictions=None, **kwargs) -> EvaluationResult:
        from metrics_core import Columns, evaluate

        config = dict(evaluator_config or {})
        if "ground_truth" not in config:
            raise input_error("mlflow evaluator", "evaluator_config has no ground_truth.",
                              'pass evaluator_config={"ground_truth": <DataFrame or path>, "k": 10}.')
        columns = Columns(**config.get("columns", {}))
        recommendations = pd.DataFrame(dataset.features_data).copy()
        if model is not None:
            recommendations[columns.score] = model.predict(dataset.features_data)
        elif dataset.predictions_data is not None:
            recommendations[dataset.predictions_name] = dataset.predictions_data
        result = evaluate(recommendations, config["ground_truth"], k=int(config.get("k", 10)), columns=columns,
                          preset=config.get("preset"))
        log_to_mlflow(result, run=run_id, report=bool(config.get("report", True)))
        return EvaluationResult(aggregates(result), {}, run_id)
