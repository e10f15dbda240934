"""How the app names and formats metrics; the names, formulas and directions themselves come
from :mod:`metrics_core.metrics.registry`."""

from __future__ import annotations

from metrics_core.metrics.registry import METRICS, essential, headline, label, per_user_columns

ACCURACY = headline(("accuracy",))
BEYOND = headline(("beyond", "catalog"))
ESSENTIAL_ACCURACY = essential(("accuracy",))
ESSENTIAL_BEYOND = essential(("beyond", "catalog"))
PER_USER_LABELS = {column: METRICS[name].label for name, column in per_user_columns().items()}

__all__ = ["ACCURACY", "BEYOND", "ESSENTIAL_ACCURACY", "ESSENTIAL_BEYOND", "METRICS", "PER_USER_LABELS",
           "change_look", "change_text", "fmt", "label"]


def fmt(name: str, value: float | None) -> str:
    """A metric's value as the app shows it (– when there is none)."""
    if value is None:
        return "–"
    decimals = METRICS[name].decimals if name in METRICS else 4
    return f"{value:.{decimals}f}" if decimals == 4 else f"{value:,.{decimals}f}"


def change_look(name: str, delta: float | None) -> tuple[str, str]:
    """A card's change as ``(colour, arrow)`` for ``st.metric``: green when the change is an
    improvement, red when it is not, grey when neither direction is better or it rounds to zero;
    the arrow by the change's sign. Said outright because Streamlit reads a change's direction from
    a leading hyphen, and :func:`change_text` writes a minus sign (it drew a fall as a green rise).

    >>> change_look("ndcg", -0.1), change_look("gini", -0.1), change_look("arp", 5.0), change_look("ndcg", 1e-6)
    (('red', 'down'), ('green', 'down'), ('gray', 'up'), ('gray', 'off'))
    """
    if delta is None:
        return "gray", "off"
    if change_text(name, delta) == "no change":
        return "gray", "off"
    arrow = "up" if delta > 0 else "down"
    better = METRICS[name].higher_is_better
    if better is None:
        return "gray", arrow
    return ("green" if (delta > 0) == better else "red"), arrow


def change_text(name: str, delta: float | None) -> str | None:
    """A change as a card shows it: signed at the metric's precision, or "no change" when it
    rounds to zero there (a "−0.0000" reads as noise); None when there is no change to show.

    >>> change_text("ndcg", 0.01234), change_text("ndcg", -0.00004), change_text("arp", -12.34)
    ('+0.0123', 'no change', '−12.3')
    """
    if delta is None:
        return None
    text = fmt(name, abs(delta))
    return "no change" if float(text.replace(",", "")) == 0 else ("+" if delta > 0 else "−") + text
