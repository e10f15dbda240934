"""What an evaluation returns: aggregates, per-user values, curves, user counts, warnings."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from metrics_core.errors import Note
from metrics_core.jsonable import plain
from metrics_core.settings import Encoding, Settings


@dataclass
class Evaluation:
    """One model evaluated at one K.

    metrics: aggregate name -> value (``map`` is the mean of per-user ``ap``, etc.).
    per_user: one row per averaged user (index: user id) with every per-user metric at K,
        plus ``relevant`` (R), ``hits`` (h(K)), ``listed`` (items in the top K) and
        ``evaluated`` (counted in the accuracy averages; accuracy columns are NaN otherwise).
    curves: index k = 1 .. max(K, longest list) (only k = K when evaluated with curves=False),
        one column per aggregate metric.
    users: counts of evaluated users and of users left out or scored 0, and why.
    warnings: problems with one sensible reading, each with a count.
    skipped: metric -> why it could not be computed.
    left_out: what beyond-accuracy metrics could not use, and how much of it.
    encoding: how the lists were ordered when the data was encoded.
    """

    model: str
    settings: Settings
    metrics: dict[str, float]
    per_user: pd.DataFrame
    curves: pd.DataFrame
    users: dict[str, int]
    warnings: list[Note] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    left_out: dict[str, int] = field(default_factory=dict)
    encoding: Encoding = field(default_factory=Encoding)

    @property
    def k(self) -> int:
        return self.settings.k

    @property
    def share_without_hit(self) -> float:
        """Share of the evaluated users with no relevant item in the top K (1 - hit rate)."""
        evaluated = self.per_user.loc[self.per_user["evaluated"], "hits"]
        return float((evaluated == 0).mean()) if len(evaluated) else 0.0

    def to_dict(self) -> dict:
        """The JSON shape of the command line: metrics, users, warnings, skipped."""
        out = {
            "metrics": plain(self.metrics),
            "users": dict(self.users),
            "warnings": [note.message for note in self.warnings],
        }
        if self.skipped:
            out["skipped"] = dict(self.skipped)
        if self.left_out:
            out["left_out"] = dict(self.left_out)
        return out

