"""An :class:`~metrics_core.errors.InputError` carried from a Spark worker to the driver.

Bad input found in a partition (a missing id, a file changed while it was read, ...) is raised
there as a :class:`RuntimeError` whose text holds the error's parts between two
:data:`CARRIED` markers; Spark reports it as its own error with the worker's traceback, and the
driver (``engine._partition_errors_as_input_errors``) finds the parts in that report's text."""

from __future__ import annotations

import json

from metrics_core.errors import MAX_ROWS_SHOWN, InputError

CARRIED = "<<rankscope-input-error>>"  # brackets an InputError's parts in a worker's exception


def carried(error: InputError) -> RuntimeError:
    """The worker's exception for ``error``: its parts as text that survives Spark's report."""
    rows = None if error.rows is None else error.rows.head(MAX_ROWS_SHOWN).to_json(orient="split",
                                                                                   default_handler=str)
    return RuntimeError(CARRIED + json.dumps({"source": error.source, "column": error.column,
                                              "problem": error._problem, "fix": error._fix, "rows": rows}) + CARRIED)


def carried_parts(report: str) -> dict | None:
    """The parts :func:`carried` put in the text of Spark's ``report`` (source, column, problem,
    fix and the rows as pandas' split JSON, or None); None when it carries none."""
    parts = report.split(CARRIED)
    return json.loads(parts[1]) if len(parts) >= 3 else None
