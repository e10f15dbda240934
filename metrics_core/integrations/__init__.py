"""rankscope's results handed to the tools people already use: :mod:`.mlflow` logs them into an
MLflow run, and :mod:`.mlflow_evaluator` makes rankscope an evaluator of ``mlflow.models.evaluate``.
Each imports its tool only when used."""
