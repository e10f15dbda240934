"""The metric tables of ``docs/metrics.md``, generated from the registry: one row per metric (its
key, label, family, per-user column, direction, inputs, whether it has a curve and an interval,
and its formula in words). ``python -m metrics_core.metrics.docs`` rewrites them between the
two markers; ``tests/metrics/test_registry.py`` fails when the committed page differs from what
the registry generates, so a metric added to the registry appears in the docs or the suite says so.
The definitions' prose around the tables stays hand-written."""

from __future__ import annotations

import sys
from pathlib import Path

from metrics_core.metrics.registry import REGISTRY, Metric

BEGIN = "<!-- generated from metrics_core/metrics/registry.py by python -m metrics_core.metrics.docs -->"
END = "<!-- end of the generated tables -->"
PAGE = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"
FAMILIES = {"accuracy": "Accuracy: a mean over the evaluated users (those with a relevant item)",
            "beyond": "Beyond accuracy: a mean over the users with a non-empty list (and what the metric needs)",
            "catalog": "Catalog: a property of all lists together (no interval over users)"}


def _direction(metric: Metric) -> str:
    return {True: "higher", False: "lower", None: "neither"}[metric.higher_is_better]


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def tables() -> str:
    """The generated Markdown, markers included."""
    parts = [BEGIN]
    for family, title in FAMILIES.items():
        parts += ["", f"**{title}**", "", "| key | label | per-user column | better | needs | at every k | interval "
                  "| formula |", "|---|---|---|---|---|---|---|---|"]
        for metric in (m for m in REGISTRY if m.family == family):
            parts.append(" | ".join([
                f"| `{metric.name}`", _cell(metric.label), f"`{metric.per_user}`" if metric.per_user else "–",
                _direction(metric), ", ".join(metric.needs) or "–", "yes" if metric.curve else "–",
                "yes" if metric.interval else "–", _cell(metric.formula)]) + " |")
    parts += ["", END]
    return "\n".join(parts)


def rewritten(text: str) -> str:
    """``text`` with the generated block replaced by the registry's tables."""
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[:start] + tables() + text[end:]


def main() -> None:
    text = PAGE.read_text(encoding="utf-8")
    new = rewritten(text)
    if new != text:
        PAGE.write_text(new, encoding="utf-8")
        print(f"rewrote the metric tables of {PAGE}", file=sys.stderr)


if __name__ == "__main__":
    main()
