"""The users who tell a verdict's story: where the leader gains most and loses most.

With two or more models, the leader and the runner-up are the verdict's (the best and the second
best mean of ``metric`` over the users every model has a value for). For each of those users the
difference d_u = leader_u − runner-up_u; the **best** cases are the ``n`` users with the largest
d_u > 0 and the **worst** the ``n`` with the smallest d_u < 0 (the leader wins on average and still
loses somewhere: that is what a reader should see). Ties are broken by the number of relevant
items (more first: a user with 12 relevant items tells more than one with 1), then by user order.

With one model: the best cases are the users with the highest value, the worst those with the
lowest, each tie broken the same way. A metric where neither direction is better, or with no
per-user values, has no examples (None).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from metrics_core.metrics import registry
from metrics_core.result import Evaluation
from metrics_core.stats.compare import paired_values
from metrics_core.stats.verdict import LEAD_METRIC, verdict


@dataclass(frozen=True)
class Examples:
    """``best`` and ``worst``: user ids, most telling first; ``values``: per-user values of
    ``metric`` for ``models`` (the leader first, then the runner-up when there is one), indexed by
    user id, for the users picked."""

    metric: str
    models: tuple[str, ...]
    best: tuple
    worst: tuple
    values: pd.DataFrame

    @property
    def leader(self) -> str:
        return self.models[0]

    @property
    def runner_up(self) -> str | None:
        return self.models[1] if len(self.models) > 1 else None


def telling_users(results: dict[str, Evaluation], metric: str = LEAD_METRIC, n: int = 3) -> Examples | None:
    """The ``n`` best and ``n`` worst cases of ``metric`` (see the module)."""
    if metric not in registry.per_user_columns() or registry.METRICS[metric].higher_is_better is None:
        return None
    call = verdict(results, metric)
    if call.leader is None and len(results) > 1:
        return None
    models = (call.leader, call.differences[0].other) if call.leader else (next(iter(results)),)
    paired = paired_values(results, metric, list(results))[list(models)]
    sign = 1.0 if registry.METRICS[metric].higher_is_better else -1.0
    gain = sign * (paired.iloc[:, 0] - paired.iloc[:, 1] if len(models) > 1 else paired.iloc[:, 0])
    relevant = results[models[0]].per_user["relevant"].reindex(paired.index).to_numpy()
    order = np.lexsort((np.arange(len(paired)), -relevant, -gain.to_numpy()))  # last key first
    reverse = np.lexsort((np.arange(len(paired)), -relevant, gain.to_numpy()))
    if len(models) > 1:
        order = order[gain.to_numpy()[order] > 0]
        reverse = reverse[gain.to_numpy()[reverse] < 0]
    best, worst = order[:n], reverse[:n]
    if len(models) == 1:
        worst = worst[~np.isin(worst, best)]
    picked = paired.iloc[np.concatenate([best, worst])]
    return Examples(metric, models, tuple(paired.index[best]), tuple(paired.index[worst]), picked)
