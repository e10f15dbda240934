"""How the app names and formats metrics; the names, formulas and directions themselves come
from :mod:`metrics_core.metrics.registry`."""

from __future__ import annotations

from metrics_core.metrics.registry import METRICS, headline, per_user_columns

ACCURACY = headline(("accuracy",))
BEYOND = headline(("beyond", "catalog"))
PER_USER_LABELS = {column: METRICS[name].label for name, column in per_user_columns().items()}
WHOLE_NUMBERS = {"aggregate_diversity"}
ONE_DECIMAL = {"arp"}

__all__ = ["ACCURACY", "BEYOND", "METRICS", "PER_USER_LABELS", "fmt", "label"]


def label(name: str, k: int | None = None) -> str:
    """``"NDCG@10"``: the metric's label, with K when given and the metric depends on it."""
    info = METRICS.get(name)
    text = info.label if info else name
    return f"{text}@{k}" if k is not None and info is not None and not info.whole_list else text


def fmt(name: str, value: float | None) -> str:
    """A metric's value as the app shows it (– when there is none)."""
    if value is None:
        return "–"
    if name in WHOLE_NUMBERS:
        return f"{value:,.0f}"
    if name in ONE_DECIMAL:
        return f"{value:,.1f}"
    return f"{value:.4f}"
