"""rankscope's metric engine: read -> validate/encode -> compute -> result.

The common case is one call::

    from metrics_core import evaluate
    result = evaluate("recs.parquet", "truth.parquet", k=10)
    result.metrics, result.per_user, result.curves, result.users, result.warnings

For repeated evaluation (a K slider), encode once with :class:`Dataset` and call
:meth:`Dataset.evaluate` with new :class:`Settings`.
"""

from metrics_core.lazy import lazy_names

# The public names, imported on first use: ``rankscope --help`` and a small evaluation do not pay
# for what they do not use (numpy, pandas, scipy, the store).
__getattr__ = lazy_names(__name__, {
    "Dataset": "engines.memory.dataset", "evaluate": "engines.memory.one_call",
    "evaluate_models": "engines.memory.one_call", "evaluate_spark": "engines.spark.engine",
    "InputError": "errors", "Note": "errors", "Columns": "inputs.columns", "RatingErrors": "metrics.rating",
    "rating_errors": "metrics.rating", "Evaluation": "result", "PRESETS": "settings", "Encoding": "settings",
    "Settings": "settings", "encoding_for": "settings", "settings_for": "settings",
    "log_to_mlflow": "integrations.mlflow"}, globals())

__all__ = [
    "PRESETS",
    "Columns",
    "Dataset",
    "Encoding",
    "Evaluation",
    "InputError",
    "Note",
    "RatingErrors",
    "Settings",
    "encoding_for",
    "evaluate",
    "evaluate_models",
    "evaluate_spark",
    "log_to_mlflow",
    "rating_errors",
    "settings_for",
]
__version__ = "0.2.0"
