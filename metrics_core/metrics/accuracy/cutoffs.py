"""The cut-offs a pass reports, the running sums along list positions, and the safe divisions
every accuracy formula uses (a division by zero gives 0)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from metrics_core._numeric.sums import row_sums

COLUMN_LOOP_WIDTH = 256
COUNT_ROW_WIDTH = 10  # (narrower whole numbers: the column loop is as fast or faster)


def running_sum(values: np.ndarray) -> np.ndarray:
    """Cumulative sum along each row, as float64: the same additions in the same order as
    ``np.cumsum(values, axis=1)``, done one column at a time over all rows (numpy's row-wise
    cumsum pays a loop per row; this loop is over list positions, up to 256 of them).

    Flags (bool) and whole numbers (integer types) at least :data:`COUNT_ROW_WIDTH` wide are
    summed in integers along each row, then made float64: sums of whole numbers below 2^53 are
    exact in float64 too, in any order of addition, so the result is the same (the counts here
    are at most positions²), 3x faster at 100 positions (one pass in cache per row, not one
    strided pass per position).

    >>> running_sum(np.array([[1, 0, 2], [0, 1, 1]]))
    array([[1., 1., 3.],
           [0., 1., 2.]])
    >>> running_sum(np.arange(20).reshape(1, 20) % 3 == 0)[0, -3:]
    array([6., 6., 7.])
    """
    rows, width = values.shape
    if values.dtype.kind in "biu" and width >= COUNT_ROW_WIDTH:
        counts = np.int32 if values.dtype == bool and width < 2**31 else np.int64
        return np.cumsum(values, axis=1, dtype=counts).astype(np.float64)
    if width > COLUMN_LOOP_WIDTH:
        return np.cumsum(values, axis=1, dtype=np.float64)
    out = np.empty((rows, width))
    if width:
        out[:, 0] = values[:, 0]
    for column in range(1, width):
        np.add(out[:, column - 1], values[:, column], out=out[:, column])
    return out


@dataclass(frozen=True)
class Cutoffs:
    """The cut-offs ``k`` a pass reports (ascending), over position-wise arrays ``width`` wide.

    The arrays are never wider than the longest list: a cut-off beyond it reads the last
    position (nothing changes past the end of a list but the value of k itself, which the
    metrics that depend on it receive). :meth:`prefix` and :meth:`at` turn position-wise
    arrays into one column per reported k, so reporting only K costs one sum per user
    instead of a running sum.
    """

    width: int
    k: np.ndarray

    @classmethod
    def up_to(cls, width: int) -> Cutoffs:
        """Every k = 1 .. ``width``."""
        return cls(width, np.arange(1, width + 1, dtype=np.float64))

    @classmethod
    def for_pass(cls, positions: int, cutoff: int, curves: bool) -> Cutoffs:
        """Every k up to the longest list (``positions``) and K = ``cutoff`` (``curves``), or K
        alone; arrays at most ``positions`` wide whatever K.

        >>> Cutoffs.for_pass(3, 100_000_000, curves=True).k
        array([1.e+00, 2.e+00, 3.e+00, 1.e+08])
        >>> Cutoffs.for_pass(3, 100_000_000, curves=False).width
        3
        """
        if not curves:
            return cls(min(cutoff, positions), np.array([float(cutoff)]))
        every = cls.up_to(positions)
        return every if cutoff <= positions else cls(positions, np.append(every.k, float(cutoff)))

    @property
    def every(self) -> bool:
        """Whether the reported cut-offs are exactly 1 .. width (one per position)."""
        return len(self.k) == self.width and self.k[-1] == self.width

    @property
    def columns(self) -> np.ndarray:
        """The position (0-based) each reported k reads: k - 1, or the last one beyond the width."""
        return (np.minimum(self.k, self.width) - 1).astype(np.intp)

    def column_of(self, cutoff: int) -> int:
        """Where ``cutoff`` is among the reported cut-offs."""
        return int(np.searchsorted(self.k, cutoff))

    def prefix(self, values: np.ndarray) -> np.ndarray:
        """Σ_{i≤k} values[:, i] for each reported k.

        >>> Cutoffs(3, np.array([3.0])).prefix(np.array([[1, 0, 2]]))
        array([[3.]])
        """
        if self.every:
            return running_sum(values)
        if len(self.k) == 1 and self.k[0] >= self.width:
            return row_sums(values)[:, None]
        return running_sum(values)[:, self.columns]

    def at(self, values: np.ndarray) -> np.ndarray:
        """values[:, k - 1] for each reported k (the last position for k beyond the width)."""
        return values if self.every else values[:, self.columns]


def ratio(numerator, denominator) -> np.ndarray:
    """numerator / denominator, broadcast, 0 where the denominator is not positive.

    >>> ratio(np.array([1.0, 2.0]), np.array([2.0, 0.0]))
    array([0.5, 0. ])
    """
    numerator, denominator = np.asarray(numerator), np.asarray(denominator)
    out = np.zeros(np.broadcast_shapes(numerator.shape, denominator.shape))
    return np.divide(numerator, denominator, out=out, where=denominator > 0)  # (the test on the narrower side)


def inverse(values: np.ndarray) -> np.ndarray:
    """1 / values, 0 where a value is not positive (any shape)."""
    values = np.asarray(values, dtype=np.float64)
    return np.divide(1.0, values, out=np.zeros(values.shape), where=values > 0)


def user_rows(users: np.ndarray) -> slice | np.ndarray:
    """The index of the rows of ``users`` (ascending codes) in a users x positions array: a
    slice when they are consecutive, whose rows are then a view, not a gathered copy.

    >>> user_rows(np.array([3, 4, 5])), user_rows(np.array([3, 5]))
    (slice(3, 6, None), array([3, 5]))
    """
    if len(users) and int(users[-1]) - int(users[0]) + 1 == len(users):
        return slice(int(users[0]), int(users[-1]) + 1)
    return users
