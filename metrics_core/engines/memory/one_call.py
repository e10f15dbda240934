"""One call for the common case: read, encode and evaluate."""

from __future__ import annotations

from collections.abc import Mapping

from metrics_core.engines.memory.dataset import Dataset, model_name
from metrics_core.inputs.columns import Columns
from metrics_core.result import Evaluation
from metrics_core.settings import encoding_for, settings_for, split_options


def evaluate_models(recommendations: Mapping, ground_truth, k: int = 10, *, train=None, items=None,
                    users=None, columns: Columns | None = None, preset: str | None = None,
                    feature_columns: list[str] | None = None, embedding_column: str | None = None,
                    **options) -> dict[str, Evaluation]:
    """Evaluate several models (name -> path or DataFrame) on the same ground truth.

    ``options`` are :class:`~metrics_core.settings.Settings` fields (beta, ap_denominator,
    gain, ...) or :class:`~metrics_core.settings.Encoding` fields (order, tie_break);
    ``preset`` names a convention (a key of :data:`~metrics_core.settings.PRESETS`: ``trec_eval``,
    ``ranx``, ``evidently``, ``rectools``, ``recommenders``, ``torchmetrics``);
    ``feature_columns``/``embedding_column`` choose item features (see :meth:`Dataset.build`).
    """
    evaluation_options, encoding_options = split_options(options)
    settings = settings_for(preset, k=k, **evaluation_options)
    dataset = Dataset.build(recommendations, ground_truth, train=train, items=items, users=users,
                            columns=columns, encoding=encoding_for(preset, **encoding_options),
                            feature_columns=feature_columns, embedding_column=embedding_column)
    return dataset.evaluate_all(settings)


def evaluate(recommendations, ground_truth, k: int = 10, **kwargs) -> Evaluation:
    """Evaluate one model's recommendations (a path or a DataFrame) at cut-off ``k``.

    >>> import pandas as pd
    >>> recs = pd.DataFrame({"user_id": [1, 1, 2], "item_id": [10, 20, 10], "rank": [1, 2, 1]})
    >>> truth = pd.DataFrame({"user_id": [1, 2], "item_id": [20, 30]})
    >>> result = evaluate(recs, truth, k=2)
    >>> result.metrics["recall"], result.metrics["mrr"], result.users["evaluated"]
    (0.5, 0.25, 2)
    """
    name = model_name(recommendations, "model")
    return evaluate_models({name: recommendations}, ground_truth, k, **kwargs)[name]
