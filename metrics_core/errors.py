"""One error type for bad input, and the warnings collected on a result.

Every :class:`InputError` message follows the same shape so a user can act on it::

    ground truth (test.csv), column 'rating': 3 rows have a negative grade.
      row 12: user_id=7, item_id=40, rating=-1
      ...
    Fix: grades must be >= 0; drop these rows or rescale the column.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

MAX_ROWS_SHOWN = 5


class InputError(ValueError):
    """Input that rankscope cannot evaluate; the message says where, what and how to fix it.

    The parts are kept for programs (the app shows ``rows`` as a table): ``source``,
    ``column``, ``problem``, ``fix`` and ``rows`` (the offending rows, or None).
    """

    def __init__(self, message: str, source: str = "", column: str | None = None, problem: str = "",
                 fix: str = "", rows: pd.DataFrame | None = None):
        super().__init__(message)
        self.source, self.column, self.problem, self.fix, self.rows = source, column, problem, fix, rows


def input_error(
    source: str,
    problem: str,
    fix: str,
    column: str | None = None,
    rows: pd.DataFrame | None = None,
) -> InputError:
    """Build an :class:`InputError` naming the source, the column, up to five rows and the fix."""
    where = f"{source}, column '{column}'" if column else source
    lines = [f"{where}: {problem}"]
    if rows is not None and len(rows):
        for label, row in rows.head(MAX_ROWS_SHOWN).iterrows():
            cells = ", ".join(f"{name}={value!r}" for name, value in row.items())
            lines.append(f"  row {label}: {cells}")
        if len(rows) > MAX_ROWS_SHOWN:
            lines.append(f"  ... and {len(rows) - MAX_ROWS_SHOWN} more")
    lines.append(f"Fix: {fix}")
    return InputError("\n".join(lines), source, column, problem, fix, rows)


@dataclass(frozen=True)
class Note:
    """A problem with one sensible reading: reported with a count, never hidden.

    ``code`` is stable (for programs), ``message`` is for people.
    """

    code: str
    message: str
    count: int

    def __str__(self) -> str:
        return self.message
