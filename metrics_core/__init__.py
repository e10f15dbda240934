"""rankscope's metric engine: read -> validate/encode -> compute -> result.

The common case is one call::

    from metrics_core import evaluate
    result = evaluate("recs.parquet", "truth.parquet", k=10)
    result.metrics, result.per_user, result.curves, result.users, result.warnings

For repeated evaluation (a K slider), encode once with :class:`Dataset` and call
:meth:`Dataset.evaluate` with new :class:`Settings`.
"""

from metrics_core.dataset import Dataset
from metrics_core.errors import InputError, Note
from metrics_core.evaluate import evaluate, evaluate_models
from metrics_core.inputs.columns import Columns
from metrics_core.metrics.rating import RatingErrors, rating_errors
from metrics_core.result import Evaluation
from metrics_core.settings import PRESETS, Encoding, Settings, encoding_for, settings_for

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
    "rating_errors",
    "settings_for",
]
__version__ = "0.1.0"
