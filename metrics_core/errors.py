"""One error type for bad input, and the warnings collected on a result.

Every :class:`InputError` message follows the same shape so a user can act on it::

    ground truth (test.csv), column 'rating': 3 rows have a negative grade.
      row 12: user_id=7, item_id=40, rating=-1
      ...
    Fix: grades must be >= 0; drop these rows or rescale the column.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd


MAX_ROWS_SHOWN = 5
Interface = str | Mapping[str, str]  # "api", "cli", or an interface's own words per setting (the app's)

# How the library's interfaces name a setting a message asks the user to change: messages hold
# setting("user_column"), and the command line says --user-column where the API names its
# argument; an interface outside the library (the app) passes its own words for each name.
SETTING_WORDS: dict[str, dict[str, str]] = {
    "user_column": {"api": "Columns(user=...)", "cli": "--user-column"},
    "item_column": {"api": "Columns(item=...)", "cli": "--item-column"},
    "rank_column": {"api": "Columns(rank=...)", "cli": "--rank-column"},
    "score_column": {"api": "Columns(score=...)", "cli": "--score-column"},
    "relevance_column": {"api": "Columns(relevance=...)", "cli": "--relevance-column"},
    "threshold": {"api": "Columns(threshold=...)", "cli": "--relevance-threshold"},
    "feature_columns": {"api": "feature_columns=[...]", "cli": "--feature-columns"},
    "primitive_model": {"api": "primitive_model=...", "cli": "--primitive-model"},
    "embedding_column": {"api": "embedding_column=...", "cli": "--embedding-column"},
    "category_column": {"api": "category_column=...", "cli": "--category-column"},
}
_MARK = re.compile(r"\[\[(\w+)\]\]")


def setting(name: str) -> str:
    """A marker for setting ``name`` that :func:`in_words` turns into the interface's words."""
    assert name in SETTING_WORDS, name
    return f"[[{name}]]"


def in_words(text: str, interface: Interface = "api") -> str:
    """``text`` with every setting marker in ``interface``'s words ("api", "cli", or a mapping of
    every setting's name to an interface's own words).

    >>> in_words(f"map it with {setting('user_column')}.", "cli")
    'map it with --user-column.'
    """
    words = interface if isinstance(interface, Mapping) else {name: said[interface]
                                                                  for name, said in SETTING_WORDS.items()}
    return _MARK.sub(lambda match: words[match[1]], text)


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
