"""Compile every numba loop of rankscope into numba's cache, once (``make`` runs
``python -m metrics_core.compiled`` at install): the encoding's kernels, the text-id table's and the
Spark engine's bootstrap weights. A process then loads them from the cache; without it, the first
large evaluation compiles what it needs."""

from __future__ import annotations


def compile_all() -> None:
    from metrics_core.inputs import kernels, text_hash
    from metrics_core.metrics import prefix_kernels
    from metrics_core.stats import poisson_bootstrap

    kernels.compile_all()
    prefix_kernels.compile_all()
    text_hash.compile_all()
    poisson_bootstrap.compile_all()


if __name__ == "__main__":
    compile_all()
