"""Quality gates for CI jobs: ``--fail-if "ndcg < 0.30"`` or ``"B.ndcg < baseline.ndcg"``.

A gate is ``LEFT OP RIGHT`` with OP one of < <= > >= == != and each side a number or
``[MODEL.]METRIC`` (``baseline`` names the baseline model). A side without a model applies
to every model in turn. A gate *fails* when its condition holds, and also when either side is
not a number (NaN): a quality gate that cannot be checked must not let a build through.
"""

from __future__ import annotations

import math
import operator
import re
from dataclasses import dataclass

from metrics_core.errors import input_error
from metrics_core.metrics import registry

OPERATORS = {"<=": operator.le, ">=": operator.ge, "==": operator.eq, "!=": operator.ne, "<": operator.lt,
             ">": operator.gt}
PATTERN = re.compile(r"^\s*(.+?)\s*(<=|>=|==|!=|<|>)\s*(.+?)\s*$")


@dataclass(frozen=True)
class GateResult:
    gate: str
    model: str
    left: float
    right: float
    failed: bool
    reason: str = ""

    def message(self) -> str:
        state = "FAILED" if self.failed else "passed"
        why = f"; {self.reason}" if self.reason else ""
        return f"gate {state} for {self.model}: {self.gate} ({self.left:.4f} vs {self.right:.4f}){why}"


def check_gates(gates: list[str], metrics: dict[str, dict[str, float]], baseline: str) -> list[GateResult]:
    """Evaluate every gate against ``metrics`` (model -> metric -> value)."""
    results = []
    for gate in gates:
        match = PATTERN.match(gate)
        if not match:
            raise input_error("--fail-if", f"cannot read the gate {gate!r}.",
                              'write it as "ndcg < 0.30" or "B.ndcg < baseline.ndcg".')
        left, symbol, right = match.groups()
        sides = [_side(left, metrics, baseline, gate), _side(right, metrics, baseline, gate)]
        models = [m for m in metrics] if any(s[0] == "each" for s in sides) else [None]
        for model in models:
            a, b = (_value(side, model, metrics, gate) for side in sides)
            shown = model or next((s[1] for s in sides if s[0] == "model"), "all")
            if math.isnan(a) or math.isnan(b):
                side = " and ".join(text for text, value in ((left, a), (right, b)) if math.isnan(value))
                results.append(GateResult(gate, shown, a, b, True, f"{side} is not a number (NaN), so the gate "
                                          "cannot be checked and fails"))
            else:
                results.append(GateResult(gate, shown, a, b, bool(OPERATORS[symbol](a, b))))
    return results


def _side(text: str, metrics, baseline: str, gate: str):
    try:
        return ("number", float(text))
    except ValueError:
        pass
    model, _, metric = text.rpartition(".")
    metric = registry.current_name(metric)
    if model == "baseline":
        model = baseline
    if model and model not in metrics:
        raise input_error("--fail-if", f"gate {gate!r} names an unknown model {model!r}.",
                          f"use one of: {', '.join(metrics)}, or baseline.")
    return ("model", model, metric) if model else ("each", metric)


def _value(side, model, metrics, gate: str) -> float:
    if side[0] == "number":
        return side[1]
    owner, metric = (side[1], side[2]) if side[0] == "model" else (model, side[1])
    if metric not in metrics[owner]:
        raise input_error("--fail-if", f"gate {gate!r} uses {metric!r}, which was not computed for {owner!r}.",
                          f"use one of: {', '.join(sorted(metrics[owner]))}.")
    return float(metrics[owner][metric])
