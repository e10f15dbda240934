"""Choosing the encoding's and the metrics' compiled loops (numba) or their numpy steps in a test,
whatever the size of its data (:func:`metrics_core.inputs.encoded.compiled_for`)."""

from __future__ import annotations

from metrics_core.inputs import encoded


def compiled_loops(monkeypatch, on: bool = True) -> None:
    """Every step of at least one cell on the compiled loops (``on``), loading them if needed, or
    every step on numpy (``on=False``): both thresholds at 0 or past any test's data."""
    threshold = 0 if on else 1 << 40
    monkeypatch.setattr(encoded, "KERNEL_MIN", threshold)
    monkeypatch.setattr(encoded, "LOAD_MIN", threshold)
