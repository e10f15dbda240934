"""The command line's hand-over to MLflow: ``--mlflow`` and ``--mlflow-experiment`` on evaluate
and compare (both engines), the run's id said on stderr."""

from __future__ import annotations

import argparse
import sys


def add_mlflow_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--mlflow", action="store_true",
                        help="also log the results into an MLflow run (MLflow's MLFLOW_TRACKING_URI; pip install "
                             "'rankscope[mlflow]')")
    parser.add_argument("--mlflow-experiment", metavar="NAME", default=None,
                        help="the MLflow experiment of that run (default: MLflow's current one)")


def log_to_mlflow_if_asked(args: argparse.Namespace, results: dict, comparison=None) -> None:
    """With ``--mlflow``, log the results (and the comparison) into a new MLflow run and say
    which on stderr (stdout keeps the JSON)."""
    if not getattr(args, "mlflow", False):
        return
    from metrics_core.integrations.mlflow import log_to_mlflow

    run_id = log_to_mlflow(results, experiment=args.mlflow_experiment, comparison=comparison)
    print(f"rankscope: logged to MLflow run {run_id}", file=sys.stderr)
