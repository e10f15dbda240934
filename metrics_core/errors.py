"""One error type for bad input, and the warnings collected on a result.

Every :class:`InputError` message follows the same shape so a user can act on it::

    ground truth (test.csv), column 'rating': 3 rows have a negative grade.
      row 12: user_id=7, item_id=40, rating=-1
      ...
    Fix: grades must be >= 0; drop these rows or rescale the column.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd


MAX_ROWS_SHOWN = 5
Interface = str  # "api", "cli" or "app"

# How each interface names a setting a message asks the user to change: messages hold
# setting("user_column"), and the command line says --user-column where the app names its box.
SETTING_WORDS: dict[str, dict[Interface, str]] = {
    "user_column": {"api": "Columns(user=...)", "cli": "--user-column",
                    "app": "the 'User column' choice on the Data page"},
    "item_column": {"api": "Columns(item=...)", "cli": "--item-column",
                    "app": "the 'Item column' choice on the Data page"},
    "rank_column": {"api": "Columns(rank=...)", "cli": "--rank-column",
                    "app": "the 'Rank column' choice on the Data page"},
    "score_column": {"api": "Columns(score=...)", "cli": "--score-column",
                     "app": "the 'Score column' choice on the Data page"},
    "relevance_column": {"api": "Columns(relevance=...)", "cli": "--relevance-column",
                         "app": "the 'Relevance grade' choice on the Data page"},
    "threshold": {"api": "Columns(threshold=...)", "cli": "--relevance-threshold",
                  "app": "the 'Relevant when the grade is at least' box on the Data page"},
    "feature_columns": {"api": "feature_columns=[...]", "cli": "--feature-columns",
                        "app": "the 'Item feature columns' choice on the Data page"},
    "primitive_model": {"api": "primitive_model=...", "cli": "--primitive-model",
                        "app": "the 'Primitive model' choice under Metric options"},
    "embedding_column": {"api": "embedding_column=...", "cli": "--embedding-column",
                         "app": "an embedding column (the command line's --embedding-column)"},
}
_MARK = re.compile(r"\[\[(\w+)\]\]")


def setting(name: str) -> str:
    """A marker for setting ``name`` that :func:`in_words` turns into the interface's words."""
    assert name in SETTING_WORDS, name
    return f"[[{name}]]"


def in_words(text: str, interface: Interface = "api") -> str:
    """``text`` with every setting marker in ``interface``'s words.

    >>> in_words(f"map it with {setting('user_column')}.", "cli")
    'map it with --user-column.'
    """
    return _MARK.sub(lambda match: SETTING_WORDS[match[1]][interface], text)


class InputError(ValueError):
    """Input that rankscope cannot evaluate; the message says where, what and how to fix it.

    The parts are kept for programs (the app shows ``rows`` as a table): ``source``,
    ``column``, ``problem``, ``fix`` and ``rows`` (the offending rows, or None).
    """

    def __init__(self, message: str, source: str = "", column: str | None = None, problem: str = "",
                 fix: str = "", rows: pd.DataFrame | None = None):
        super().__init__(in_words(message))
        self.template = message
        self.source, self.column, self.rows = source, column, rows
        self.problem, self.fix = in_words(problem), in_words(fix)
        self._problem, self._fix = problem, fix

    def text(self, interface: Interface = "api") -> str:
        """The whole message with settings named as ``interface`` names them."""
        return in_words(self.template, interface)

    def parts(self, interface: Interface = "api") -> tuple[str, str]:
        """``(problem, fix)`` with settings named as ``interface`` names them."""
        return in_words(self._problem, interface), in_words(self._fix, interface)


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
