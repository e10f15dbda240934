"""What the command line prints: the metric table and a comparison in words."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from metrics_core.result import Evaluation


def format_comparison(comparison) -> str:
    frame = comparison.rows[["model", "metric", "value", "baseline_value", "delta", "ci_low", "ci_high",
                             "p_value", "p_adjusted", "wins", "ties", "losses"]]
    lines = [f"baseline: {comparison.baseline} · K = {comparison.k} · {comparison.test} test, "
             f"{comparison.correction} correction", frame.to_string(index=False, float_format=lambda v: f"{v:.4g}"), ""]
    lines += [comparison.sentence(row.model, row.metric) for row in comparison.rows.itertuples()]
    return "\n".join(lines)


def format_table(results: dict[str, Evaluation]) -> str:
    """Metrics as rows, models as columns, then user counts and warnings."""
    names = list(results)
    metrics = list(dict.fromkeys(m for r in results.values() for m in r.metrics))
    first = next(iter(results.values()))
    width = max(12, *(len(n) for n in names))
    counts = {count: "users " + count.replace("_", " ") for count in first.users}
    label = max(len(m) for m in [*metrics, *counts.values()]) + 2
    lines = [f"{'metric @' + str(first.k):<{label}}" + "".join(f"{n:>{width + 2}}" for n in names)]
    lines.append("-" * len(lines[0]))
    for metric in metrics:
        cells = "".join(f"{results[n].metrics.get(metric, float('nan')):>{width + 2}.4f}" for n in names)
        lines.append(f"{metric:<{label}}" + cells)
    lines.append("")
    for count, text in counts.items():
        lines.append(f"{text:<{label}}"
                     + "".join(f"{results[n].users[count]:>{width + 2}}" for n in names))
    for name in names:
        for note in results[name].warnings:
            lines.append(f"warning [{name}]: {note.message}")
        for metric, why in results[name].skipped.items():
            lines.append(f"skipped [{name}] {metric}: {why}")
    return "\n".join(lines)


def strict_failures(results: dict) -> list[str]:
    """With ``--strict``, what the data audit found, one line per model and finding (none: the
    command may pass)."""
    from metrics_core.cutoff_notes import AUDIT_NOTES

    return [f"rankscope: strict [{name}]: {note.message}" for name, result in results.items()
            for note in result.warnings if note.code in AUDIT_NOTES]
