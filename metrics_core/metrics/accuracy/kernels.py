"""What an accuracy entry of the registry says about how it is computed: its kernel, which every
pass reads (:mod:`~metrics_core.metrics.accuracy.passes`), so that a metric is written once.

A kernel is one of:

- a tuple of terms, summed: :class:`HitSum` (a factor of k and the user times a sum over the
  user's hits at ranks ≤ k of a weight per hit) and :class:`FirstHit` (a value of the first hit's
  rank, counted once that hit is within k). Every pass computes these: the values at K from
  the hit cells, the sums over users at every k from the hit cells, and the per-user values at
  every k of the general pass;
- :class:`OverCandidates`: a formula over the counts of a user's candidates at every k (it
  weighs the irrelevant cells, so only the general pass, which candidates select, computes it);
- :class:`OfWholeList`: per-user values over the whole list, whatever K (no curve).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Union

import numpy as np

if TYPE_CHECKING:
    from metrics_core.inputs.encoded import Lists, Truth
    from metrics_core.metrics.accuracy.cutoffs import Cutoffs
    from metrics_core.metrics.accuracy.hits import Hits
    from metrics_core.settings import Settings


@dataclass(frozen=True)
class Scaled:
    """What a :class:`HitSum`'s factor reads: the reported cut-offs ``k`` (1 x cut-offs) and
    ``R`` (rows x 1: users, or groups of users with the same R in the sums from the hit cells);
    where the pass has them, hits ``H`` and items listed ``F`` at each k (rows x cut-offs) and
    ``ideal()``, each row's IDCG at each k. A factor that reads ``H``, ``F`` or ``ideal`` is
    computed by the passes that have them only (:func:`~.passes.totals_follow_from_hits`)."""

    k: np.ndarray
    R: np.ndarray
    settings: Settings
    uniform_gain: float = 1.0  # DCG's gain when the lists carry hits only (all grades equal)
    H: np.ndarray | None = None
    F: np.ndarray | None = None
    ideal: Callable[[], np.ndarray] | None = None


@dataclass(frozen=True)
class CandidateCounts:
    """A user's counts over its candidates, for :class:`OverCandidates`: position-wise ``hit``,
    ``filled`` and ``H_all`` (hits so far), at each reported k ``H`` and ``F`` (rows x cut-offs),
    ``R`` and the irrelevant candidates ``n_negative`` (rows), the cut-offs ``cut`` and the
    ``settings``."""

    hit: np.ndarray
    filled: np.ndarray
    H_all: np.ndarray
    H: np.ndarray
    F: np.ndarray
    R: np.ndarray
    n_negative: np.ndarray
    cut: Cutoffs
    settings: Settings


@dataclass(frozen=True)
class Totals:
    """What a :class:`HitSum`'s own sum over users at every k reads, when its factor is a user's
    own (NDCG's 1 / IDCG with graded truth): the pass's inputs, its hit cells, the users' distinct
    R, and ``running_by_relevant(weights)``, Σ of a weight per hit over each R group's hits at
    ranks ≤ k (distinct R x cut-offs)."""

    lists: Lists
    truth: Truth
    rows: np.ndarray
    cut: Cutoffs
    settings: Settings
    hits: Hits
    distinct_relevant: np.ndarray
    running_by_relevant: Callable[[np.ndarray | None], np.ndarray]


def _never(settings: Settings) -> bool:
    return False


@dataclass(frozen=True)
class HitSum:
    """value@k = scale(k, user) · Σ over the user's hits at ranks ≤ k of weight(hit).

    ``weight(hits)`` gives one weight per hit (None: 1, a count); ``scale(scaled)`` a factor
    broadcast over rows x cut-offs. ``totals(t)``, when given, is the sum over users at every
    k for a factor that is not a function of k and R alone (the pass then uses it). ``ties``:
    with ``settings.dcg_ties == "average"`` and scores, the hits are DCG's with tied scores
    averaged (:func:`~metrics_core.metrics.accuracy.hits.tie_spread`), not the relevant cells."""

    weight: Callable[[Hits], np.ndarray | None]
    scale: Callable[[Scaled], np.ndarray | float]
    totals: Callable[[Totals], np.ndarray] | None = None
    ties: bool = False


@dataclass(frozen=True)
class FirstHit:
    """value@k = weight(first, R) once the user's first hit (rank ``first``) is at a rank ≤ k,
    else 0; at any rank of the whole list, whatever k, when ``anywhere(settings)``."""

    weight: Callable[[np.ndarray, np.ndarray], np.ndarray]
    anywhere: Callable[[Settings], bool] = _never


@dataclass(frozen=True)
class OverCandidates:
    """value@k = formula(counts), from a user's :class:`CandidateCounts` at every k."""

    formula: Callable[[CandidateCounts], np.ndarray]


@dataclass(frozen=True)
class OfWholeList:
    """Per-user values over the whole list whatever K: ``compute(lists, truth, rows, settings)``
    returns columns for several entries at once (called once per pass); the entry's per-user
    column is one of them."""

    compute: Callable[[Lists, Truth, np.ndarray, Settings], dict[str, np.ndarray]]


Term = Union[HitSum, FirstHit]  # noqa: UP007 (an alias evaluated at run time)
Kernel = Union[tuple[Term, ...], OverCandidates, OfWholeList]  # noqa: UP007


def kernel_problem(name: str, kernel: object, curve: bool, needs: tuple[str, ...]) -> str | None:
    """Why an accuracy entry's kernel cannot be computed by every pass it reaches, in words that
    say what to add; None when it can.

    >>> kernel_problem("hits", None, True, ())[:60]
    "accuracy metric 'hits' has no kernel: give its registry entr"
    """
    if kernel is None:
        return (f"accuracy metric {name!r} has no kernel: give its registry entry kernel=(HitSum(weight, scale),) "
                "(a factor times a sum over the hits at ranks <= k), FirstHit, OverCandidates or OfWholeList "
                "(metrics_core/metrics/accuracy/kernels.py; CONTRIBUTING.md, 'Adding a metric').")
    if isinstance(kernel, OverCandidates):
        return None if "candidates" in needs else \
            f"accuracy metric {name!r} is computed over candidates: add needs=('candidates',) to its entry."
    if isinstance(kernel, OfWholeList):
        return None if not curve else \
            f"accuracy metric {name!r} is computed over the whole list: it has no curve (curve=False)."
    if not isinstance(kernel, tuple) or not kernel or not all(isinstance(t, (HitSum, FirstHit)) for t in kernel):
        return (f"accuracy metric {name!r}: kernel must be a non-empty tuple of HitSum and FirstHit terms, "
                f"an OverCandidates or an OfWholeList, not {kernel!r}.")
    return None
