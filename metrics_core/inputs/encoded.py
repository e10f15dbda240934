"""The encoded data model: what reading produces (:class:`RawLists`, :class:`RawTruth`) and what
every metric reads (:class:`Truth`, :class:`Lists`, :class:`Training`): integer codes in
arrays, built once by :mod:`metrics_core.inputs.encode`."""

from __future__ import annotations

import mmap
import sys
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from metrics_core._numeric.distinct import member_of
from metrics_core._numeric.sums import column_sums
from metrics_core.errors import Note, input_error
from metrics_core.settings import Order

if TYPE_CHECKING:
    import scipy.sparse as sp

KERNEL_MIN = 1 << 22  # cells from which a step runs on the compiled loops (numba), once they are loaded
LOAD_MIN = KERNEL_MIN  # cells from which a step, or one build's models together, load them if not loaded yet
ONE_RUN_LOAD_MIN = 1 << 24  # LOAD_MIN in a process that evaluates once (the command: see evaluating_once)
KERNEL_ITEMS_MAX = 1 << 24  # the compiled join's tables take up to 8 bytes per item and thread: 128 MiB each here


def compiled_for(cells: int) -> bool:
    """Whether a step over ``cells`` cells (or rows) runs on the compiled loops rather than numpy:
    from :data:`KERNEL_MIN` cells once this process has loaded them, and from :data:`LOAD_MIN`
    cells in a process that has not (the step then loads them;
    :meth:`~metrics_core.engines.memory.dataset.Dataset.build` loads them ahead when its models'
    rows add up to that many). Both paths give the same arrays (the tests compare them)."""
    return cells >= max(KERNEL_MIN, 1) and (cells >= LOAD_MIN or compiled_loaded())


def _listed_in_first(items: np.ndarray, k: int) -> np.ndarray:
    """Items in the first ``k`` places of each row of ``items``, by one compiled pass on a few
    threads (:func:`~metrics_core.inputs.kernels.listed_rows`: no users x K array of flags; 1M users
    x K = 25 took 0.05-0.1 s per model by numpy's comparison and sum)."""
    from metrics_core._numeric.parallel import map_chunks, thread_shares
    from metrics_core.inputs.kernels import listed_rows

    out = np.empty(len(items), dtype=np.int64)
    map_chunks(lambda start, stop: listed_rows(items, k, out, start, stop), thread_shares(len(items)))
    return out


def _mapped(values: np.ndarray) -> bool:
    """Whether ``values`` view a file mapped into memory (a kept dataset's arrays)."""
    base = values
    while base is not None:
        if isinstance(base, mmap.mmap):
            return True
        base = getattr(base, "base", None)
    return False


def compiled_for_lists(rows: list[int]) -> bool:
    """Whether models with ``rows`` rows each are worth loading the compiled loops for: one of
    them is large enough for them (:data:`KERNEL_MIN`) and together they repay the loading
    (:func:`compiled_for` of their sum)."""
    return bool(rows) and max(rows) >= max(KERNEL_MIN, 1) and compiled_for(sum(rows))


def compiled_loaded() -> bool:
    """Whether this process has imported numba for the compiled loops (or is importing it)."""
    return "metrics_core.inputs.jit" in sys.modules


def evaluating_once() -> None:
    """Said by a process that evaluates once and ends (the ``rankscope`` command): it loads the
    compiled loops only for :data:`ONE_RUN_LOAD_MIN` cells. Loading them costs a fresh process
    about 0.4 s (importing numba, starting LLVM, reading the cache), more than numpy's steps
    take over some 15M cells, so a command on 100,000 users x 100 never loads them and one on
    300,000 users does. A process that evaluates again and again (the app, a notebook) loads
    them once, from :data:`KERNEL_MIN` cells, and every later call is faster for it."""
    global LOAD_MIN
    LOAD_MIN = ONE_RUN_LOAD_MIN


@dataclass
class RawLists:
    """One model's recommendation rows after validation, before coding."""

    name: str
    source: str
    frame: pd.DataFrame
    user: np.ndarray
    item: np.ndarray
    rank: np.ndarray | None
    score: np.ndarray | None
    heads: np.ndarray | None = None  # the user id of each list, when the rows are whole lists by rank


@dataclass
class RawTruth:
    source: str
    frame: pd.DataFrame
    user: np.ndarray
    item: np.ndarray
    grade: np.ndarray | None


@dataclass
class Truth:
    """Relevant (user, item) pairs as codes, sorted by user then grade descending.

    ``grade`` is the relevance grade of each relevant pair (1.0 without a relevance column);
    ``relevant_count[u]`` is R, the number of relevant items of user ``u``. ``graded`` is
    False when every grade is equal (NDCG then only needs the hits). ``judged`` holds the
    judged non-relevant pairs (rows graded below the threshold, and not relevant through
    another row) as sorted ``user * n_items + item`` keys; empty without grades.
    ``pooled`` holds the pairs in the judgement pool but not judged (a negative grade in a
    qrels file, trec_eval's -1) as the same keys: infAP counts them among the pooled items above
    a hit, bpref ignores them like items outside the ground truth.
    ``judged_elsewhere``: these rows are one part of a ground truth that judges some pair
    elsewhere (a Spark partition), so the metrics that need judgements (bpref, infAP) are
    computed even if this part judges none (:attr:`judges`). ``user``, each
    row's user, is made from ``relevant_count`` when asked (few steps need it). ``derived``
    holds per-user values that follow from the ground truth alone, made by the metrics on first
    use and kept for the next evaluation (another K, another model).
    """

    item: np.ndarray
    grade: np.ndarray
    relevant_count: np.ndarray
    graded: bool
    has_truth_rows: np.ndarray
    notes: list[Note] = field(default_factory=list)
    judged: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    n_items: int = 0
    judged_elsewhere: bool = False
    pooled: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    derived: dict = field(default_factory=dict, init=False, repr=False, compare=False)  # (a copy starts empty)

    @cached_property
    def user(self) -> np.ndarray:
        """The user code of each row (int64)."""
        return np.repeat(np.arange(len(self.relevant_count), dtype=np.int64), self.relevant_count)

    @cached_property
    def starts(self) -> np.ndarray:
        """Where each user's rows begin: user ``u``'s are ``starts[u]:starts[u + 1]``."""
        return np.concatenate([[0], np.cumsum(self.relevant_count)])

    @cached_property
    def top_grade(self) -> float:
        """The highest relevant grade (1.0 without relevant rows): graded RBP's scale."""
        return float(self.grade.max()) if len(self.grade) else 1.0

    @cached_property
    def cell_grade_type(self) -> np.dtype:
        """The type of the lists' grade cells: ``uint8`` when every relevant grade is a whole
        number from 0 to 255 (ratings, graded judgements: a quarter of the bytes, 1.1 GiB less
        for 1M users x 100 x 4 models), else ``float32``.

        >>> Truth(np.array([3, 7]), np.array([5.0, 4.0]), np.array([2]), True, np.array([True])).cell_grade_type
        dtype('uint8')
        """
        grade = self.grade
        whole = len(grade) and bool(np.all((grade >= 0) & (grade <= 255) & (grade == np.round(grade))))
        return np.dtype(np.uint8 if whole else np.float32)

    @cached_property
    def relevant_items(self) -> np.ndarray:
        """The codes of the items relevant to some user, ascending (asked once per model: kept)."""
        return np.flatnonzero(np.bincount(self.item, minlength=self.n_items))

    @property
    def judges(self) -> bool:
        """Whether the metrics that need judged non-relevant items (bpref, infAP) are computed."""
        return self.judged_elsewhere or len(self.judged) > 0

    @cached_property
    def judged_count(self) -> np.ndarray:
        """N: the judged non-relevant items of each user."""
        return np.bincount(self.judged // max(self.n_items, 1), minlength=len(self.relevant_count))


LISTED_KEPT = 2  # the K whose items listed per list Lists.listed_at keeps (8 bytes per user each)
HEAD_PLACES = 32  # the first places of wide, large lists Lists.top copies row after row (4 bytes per user each)
HEAD_MIN = KERNEL_MIN  # cells of lists from which that copy is made


@dataclass
class Lists:
    """One model's lists: ``items[u, p]`` is the item code at position ``p`` (rank p + 1).

    ``hit[u, p]`` marks relevant items and ``grade[u, p]`` their grade (None when every
    grade is 1). ``scores`` holds the model's scores aligned to ``items`` (NaN where empty),
    or None for rank-only input; of the first positions only when the dataset was built so
    (``score_positions``). ``listed[u]`` says whether user ``u`` has any row in the
    model's file.
    """

    name: str
    items: np.ndarray
    hit: np.ndarray
    grade: np.ndarray | None
    scores: np.ndarray | None
    listed: np.ndarray
    ordered_by: Order
    notes: list[Note] = field(default_factory=list)
    _judged: np.ndarray | None = field(default=None, repr=False)
    _pooled: np.ndarray | None = field(default=None, repr=False)

    KEPT = ("lengths", "gapless", "first_places")  # (kept with an encoded dataset: on a reopened workspace
    # each is a pass over every cell, and a known gapless list makes its count of the first K places min(length, K))
    KEPT_WHEN_KNOWN = ("_score_places", "_head", "_score_head")  # (kept with it when made: the scores' counts
    # per position for a histogram, Dataset.score_distribution's, another pass over every score on a reopened
    # workspace; the copies of the first places' items and scores, Lists.top's and Lists.score_places', a pass
    # over every list at the first new K)

    @property
    def positions(self) -> int:
        return self.items.shape[1]

    def top(self, k: int) -> np.ndarray:
        """The items of each list's first ``k`` places (``items[:, :k]``; not to be written to).

        Lists mapped from a kept dataset, of :data:`HEAD_MIN` cells or more and wider than
        :data:`HEAD_PLACES`, give them for k up to that from a copy of their first places made row
        after row (kept with the dataset, or made on first use): the rows of the copy are next to
        each other, where the lists' own rows are a whole list, and on disk a file's page every ten
        lists, apart (1M users x 4 models of 100: every pair's shared items at K = 13 in 0.08-0.1 s
        against 0.15-0.18 s from the lists, at K = 25 0.11-0.14 s against 0.16-0.18 s). Lists in
        memory read their own rows unless the copy was made (:meth:`copy_first_places`): it would
        hold 128 MB more per model at 1M users beside them.
        """
        return self._places(k)[:, :min(k, self.positions)]

    def score_places(self, k: int) -> np.ndarray:
        """A C array whose first ``min(k, its width)`` columns are the scores of each list's first
        places: the scores, or a copy of their first places as :meth:`top` has one (score entropy
        at a new K reads it). Lists without scores: an error."""
        return self._head_of("_score_head", self.scores, k)

    def copy_first_places(self) -> None:
        """Make the copies of the first places, items and scores, that :meth:`top` and
        :meth:`score_places` read, when the lists are large and wide enough for them (read-only,
        kept with the lists when they are kept: ``Dataset.ready_to_keep``)."""
        self._head_of("_head", self.items, HEAD_PLACES, make=True)
        if self.scores is not None:
            self._head_of("_score_head", self.scores, HEAD_PLACES, make=True)

    def drop_first_places(self) -> None:
        """Let go of the copies :meth:`copy_first_places` made (a dataset in memory, once kept)."""
        for name in ("_head", "_score_head"):
            self.__dict__.pop(name, None)

    def _places(self, k: int) -> np.ndarray:
        """A C array whose first ``min(k, positions)`` columns are the lists' first places: the
        copy (:meth:`top`) when there is one, else the items."""
        return self._head_of("_head", self.items, k)

    def _head_of(self, name: str, values: np.ndarray, k: int, make: bool = False) -> np.ndarray:
        """``values`` (users x places), or for k up to :data:`HEAD_PLACES` of large, wider arrays
        a read-only copy of their first places, kept as ``name``: made on first use when ``values``
        are mapped from a file, or when asked (``make``)."""
        if k > HEAD_PLACES or values.shape[1] <= HEAD_PLACES or values.size < HEAD_MIN:
            return values
        head = self.__dict__.get(name)  # (not a field: never stored with the lists, unless kept with them)
        if head is None:
            if not (make or _mapped(values)):
                return values
            from metrics_core._numeric.parallel import map_chunks, thread_shares

            head = np.empty((len(values), HEAD_PLACES), dtype=values.dtype)  # (two threads may both copy: one is kept)
            map_chunks(lambda start, stop: np.copyto(head[start:stop], values[start:stop, :HEAD_PLACES]),
                       thread_shares(len(head)))
            head.flags.writeable = False  # (the type of a kept dataset's mapped arrays, for the compiled loops)
            self.__dict__[name] = head
        return head

    def above(self, threshold: float) -> Lists:
        """These lists with every position whose score is at most ``threshold`` left empty (not
        retrieved): a copy, the users who have rows in the file unchanged."""
        keep = self.scores > threshold  # NaN (an empty position) is never above
        return Lists(self.name, np.where(keep, self.items, -1).astype(self.items.dtype), self.hit & keep,
                     None if self.grade is None else np.where(keep, self.grade, 0).astype(self.grade.dtype),
                     np.where(keep, self.scores, np.nan), self.listed, self.ordered_by, self.notes)

    def judged_only(self, truth: Truth) -> Lists:
        """These lists condensed to the items the ground truth judges for their user (relevant or
        judged non-relevant), in their order, moved up to the front and empty positions after
        them (trec_eval's ``-J``): a copy as wide as these (so the curves run to the same k), the
        users who have rows in the file unchanged.

        >>> lists = Lists("m", np.array([[4, 7, 9, 2]]), np.array([[False, True, False, True]]), None, None,
        ...               np.array([True]), "rank", _judged=np.array([[False, False, True, False]]))
        >>> condensed = lists.judged_only(None)
        >>> condensed.items.tolist(), condensed.hit.tolist()
        ([[7, 9, 2, -1]], [[True, False, True, False]])
        """
        if self.scores is not None:
            self.require_scores(self.positions, "judged-only evaluation")
        keep = self.hit | self.judged_cells(truth)
        order = np.argsort(~keep, axis=1, kind="stable")
        kept = np.take_along_axis(keep, order, axis=1)

        def condensed(values: np.ndarray | None, empty) -> np.ndarray | None:
            if values is None:
                return None
            return np.where(kept, np.take_along_axis(values, order, axis=1), empty).astype(values.dtype)

        return Lists(self.name, condensed(self.items, -1), condensed(self.hit, False), condensed(self.grade, 0),
                     condensed(self.scores, np.nan), self.listed, self.ordered_by, self.notes)

    def first(self, positions: int) -> Lists:
        """These lists cut to their first ``positions`` items (copies; trec_eval's ``-M``): every
        metric, at K or over the whole list, sees only them; who has a list is unchanged.

        >>> lists = Lists("m", np.array([[4, 7, 9]]), np.array([[False, True, True]]), None, None,
        ...               np.array([True]), "rank")
        >>> lists.first(2).items.tolist(), lists.first(2).hit.tolist()
        ([[4, 7]], [[False, True]])
        """
        def cut(values: np.ndarray | None) -> np.ndarray | None:
            return None if values is None else np.ascontiguousarray(values[:, :positions])

        return Lists(self.name, cut(self.items), cut(self.hit), cut(self.grade), cut(self.scores), self.listed,
                     self.ordered_by, self.notes)

    def widened(self, positions: int) -> Lists:
        """These lists with empty positions appended up to ``positions`` (a copy; themselves
        when already that wide): the metrics at every k up to it, as they are when a longer
        list elsewhere in the data widens the arrays.

        >>> lists = Lists("m", np.array([[4, 7]]), np.array([[True, False]]), None, None, np.array([True]), "rank")
        >>> lists.widened(4).items
        array([[ 4,  7, -1, -1]])
        """
        extra = positions - self.positions
        if extra <= 0:
            return self

        def padded(values: np.ndarray | None, empty) -> np.ndarray | None:
            return None if values is None else np.pad(values, ((0, 0), (0, extra)), constant_values=empty)

        scores = padded(self.scores, np.nan) if self.scores is None or self.scores.shape == self.items.shape \
            else self.scores  # (scores of the first positions only stay so)
        return Lists(self.name, padded(self.items, -1), padded(self.hit, False), padded(self.grade, 0), scores,
                     self.listed, self.ordered_by, self.notes)

    def require_scores(self, positions: int, what: str) -> None:
        """Raise when the lists keep scores for fewer of their first ``positions`` positions than
        ``what`` reads (a dataset built with ``score_positions``)."""
        if self.scores is not None and self.scores.shape[1] < min(positions, self.positions):
            raise input_error("settings", f"{what} reads the scores of the first {min(positions, self.positions)} "
                              f"positions, and the lists of {self.name!r} keep those of the first "
                              f"{self.scores.shape[1]} only (the dataset was built with score_positions).",
                              "build the dataset without score_positions, or with a larger one.")

    def seen_per_place(self, training: Training) -> np.ndarray:
        """How many lists hold, at each place, an item their user already has in training: the
        cells found once per model (as :meth:`judged_cells`), then only their count per place kept
        (a K reads the sum of its first K places; the cells, a byte each, were 0.4 GB at 1M users
        x 100 x 4 models). Kept beside the lists, never stored with them."""
        kept = self.__dict__.setdefault("_seen", {})
        if id(training) not in kept:
            kept.clear()
            matrix, n_items = training.matrix, training.matrix.shape[1]
            cells = _marked_cells(self.items, matrix.indptr, matrix.indices, n_items) \
                if compiled_for(self.items.size) and n_items <= KERNEL_ITEMS_MAX else \
                _cells_of(self.items, training.pair_keys, n_items)
            kept[id(training)] = column_sums(cells, np.int64)
        return kept[id(training)]

    def judged_cells(self, truth: Truth) -> np.ndarray:
        """Whether each list cell holds a judged non-relevant item of its user (computed once).

        From :data:`KERNEL_MIN` cells (and at most :data:`KERNEL_ITEMS_MAX` items) a compiled pass
        along each row against a table of its user's judged items
        (:func:`~metrics_core.inputs.kernels.mark_judged`); below, one ``np.isin`` of the cells'
        (user, item) keys, whose sort of every key is slow on large lists."""
        if self._judged is None:
            self._judged = _cells_of(self.items, truth.judged, truth.n_items)
        return self._judged

    def pooled_cells(self, truth: Truth) -> np.ndarray | None:
        """Whether each list cell holds an item in its user's judgement pool but not judged (None
        when the ground truth has none; computed once)."""
        if not len(truth.pooled):
            return None
        if self._pooled is None:
            self._pooled = _cells_of(self.items, truth.pooled, truth.n_items)
        return self._pooled

    @cached_property
    def lengths(self) -> np.ndarray:
        """Items in each user's whole list (float64; counted on first use, unless the compiled join
        counted them as it read every cell)."""
        from metrics_core._numeric.sums import row_sums

        return row_sums(self.items >= 0, np.int64).astype(np.float64)

    def listed_at(self, k: int, rows: np.ndarray | None = None) -> np.ndarray:
        """Items in the first ``k`` places of each list (int64), of the users ``rows`` (ascending
        codes; None: every user): min(length, k) when the lists are known to be :attr:`gapless`
        (an evaluation, or a kept dataset, found it out; 0.035 s less per model and K at 1M users);
        else counted along the first ``k`` places of every list once per K (the last
        :data:`LISTED_KEPT` K are kept: an evaluation asks its K three times, and the pages at one
        K ask it again) and taken at ``rows``; for a few of the users, counted on their rows alone
        (gathering most rows of a large array copies them first: 0.1 s at 1M users, the count
        itself 0.02-0.05 s).

        >>> lists = Lists("m", np.array([[4, -1, 7], [5, 6, -1], [-1, -1, -1]]), np.zeros((3, 3), bool), None, None,
        ...               np.ones(3, bool), "rank")
        >>> lists.listed_at(2).tolist(), lists.listed_at(3, np.array([0, 2])).tolist()
        ([1, 2, 0], [2, 0])
        """
        from metrics_core._numeric.sums import row_sums

        k = min(k, self.items.shape[1])  # (a K past the lists: their whole width, the same K)
        if self.__dict__.get("gapless"):  # (known gapless: each list fills its first places, min(length, k))
            lengths = self.lengths if rows is None else self.lengths[rows]
            return np.minimum(lengths, k).astype(np.int64)
        top = self.top(k)
        if rows is not None and 2 * len(rows) < len(top):
            return row_sums(top[rows] >= 0, np.int64)
        kept = self.__dict__.setdefault("_listed_at", {})  # (not a field: never stored with the lists)
        counts = kept.get(k)
        if counts is None:
            counts = kept[k] = _listed_in_first(self._places(k), k) if compiled_for(top.size) else \
                row_sums(top >= 0, np.int64)
            for older in list(kept)[:-LISTED_KEPT]:
                kept.pop(older, None)  # (another thread may have dropped it)
        return counts if rows is None else counts[rows]

    def hits_at(self, k: int, rows: np.ndarray | None = None) -> np.ndarray:
        """Relevant items in the first ``k`` places of each list (int64), of the users ``rows``
        (None: every user): counted from :attr:`hit_coordinates`, not from the cells.

        >>> lists = Lists("m", np.array([[4, 5], [6, 7]]), np.array([[False, True], [True, True]]), None, None,
        ...               np.ones(2, bool), "rank")
        >>> lists.hits_at(1).tolist(), lists.hits_at(2, np.array([1])).tolist()
        ([0, 1], [2])
        """
        user, position = self.hit_coordinates
        counts = np.bincount(user[position < k], minlength=len(self.items)).astype(np.int64, copy=False)
        return counts if rows is None else counts[rows]

    @cached_property
    def gapless(self) -> bool:
        """Whether every list's items fill its first positions, with no empty cell between two
        items (rank gaps leave some; computed once)."""
        block = 1 << 16  # (rows at a time: a small copy whatever the lists' size)
        for start in range(0, len(self.items), block):
            filled = self.items[start:start + block] >= 0
            first_empty = np.where(filled.all(axis=1), filled.shape[1], np.argmin(filled, axis=1))
            if not np.array_equal(self.lengths[start:start + block], first_empty):
                return False
        return True

    @cached_property
    def first_places(self) -> np.ndarray:
        """Each list's first filled place (int64, 0-based; the lists' width for a user without a
        list), found once per model, each list read up to its first item (:meth:`listed_within`
        reads it at any k). From the lengths when the lists are known to be :attr:`gapless`.

        >>> Lists("m", np.array([[4, -1], [-1, 6], [-1, -1]]), np.zeros((3, 2), bool), None, None,
        ...       np.ones(3, bool), "rank").first_places.tolist()
        [0, 1, 2]
        """
        width = self.items.shape[1]
        if self.__dict__.get("gapless"):
            return np.where(self.lengths > 0, 0, width)
        out = np.empty(len(self.items), dtype=np.int64)
        if compiled_for(self.items.size):
            from metrics_core._numeric.parallel import map_chunks, thread_shares
            from metrics_core.inputs.kernels import first_filled_rows

            map_chunks(lambda start, stop: first_filled_rows(self.items, out, start, stop), thread_shares(len(out)))
            return out
        block = 1 << 16  # (rows at a time: a small copy whatever the lists' size)
        for start in range(0, len(out), block):
            filled = self.items[start:start + block] >= 0
            out[start:start + block] = np.where(filled.any(axis=1), np.argmax(filled, axis=1), width)
        return out

    def listed_within(self, k: int) -> np.ndarray:
        """Whether each user has an item in its first ``k`` places: its :attr:`first_places` is
        below k (and below the lists' width, which marks an empty list). What counting the items
        of the first K places (:meth:`listed_at`) tells, without reading K places of every list
        at each K.

        >>> Lists("m", np.array([[-1, 4], [-1, -1]]), np.zeros((2, 2), bool), None, None,
        ...       np.ones(2, bool), "rank").listed_within(5).tolist()
        [True, False]
        """
        return self.first_places < min(k, self.items.shape[1])

    @cached_property
    def hit_cells(self) -> np.ndarray:
        """Flat indices (user * positions + position) of the relevant cells, ascending."""
        return np.flatnonzero(self.hit.reshape(-1))

    @cached_property
    def hit_counts(self) -> np.ndarray:
        """Relevant items in each user's whole list (float64; counted once from the hit cells)."""
        return np.bincount(self.hit_coordinates[0], minlength=self.hit.shape[0]).astype(np.float64)

    @cached_property
    def hit_coordinates(self) -> tuple[np.ndarray, np.ndarray]:
        """``(user, position)`` of each relevant cell, in :attr:`hit_cells` order (computed once)."""
        return np.divmod(self.hit_cells, self.items.shape[1])


def _cells_of(items: np.ndarray, keys: np.ndarray, n_items: int) -> np.ndarray:
    """Whether each cell of ``items`` holds a (user, item) pair of ``keys`` (sorted ``user ·
    n_items + item``, distinct): from :data:`KERNEL_MIN` cells a compiled pass, else a binary search
    per cell (:func:`~metrics_core._numeric.distinct.member_of`)."""
    if compiled_for(items.size) and n_items <= KERNEL_ITEMS_MAX:
        return _cells_compiled(items, keys, n_items)
    cells = np.flatnonzero(items.reshape(-1) >= 0)
    user = cells // items.shape[1]
    found = np.zeros(items.size, dtype=bool)
    found[cells[member_of(user * n_items + items.reshape(-1)[cells], keys)]] = True
    return found.reshape(items.shape)


def _cells_compiled(items: np.ndarray, keys: np.ndarray, n_items: int) -> np.ndarray:
    """:func:`_cells_of` by one compiled pass per range of users, on a few threads."""
    key_user, key_item = np.divmod(keys, max(n_items, 1))
    starts = np.searchsorted(key_user, np.arange(len(items) + 1))  # (the keys are sorted: by user, then item)
    return _marked_cells(items, starts, key_item, n_items)


def _marked_cells(items: np.ndarray, starts: np.ndarray, item_of: np.ndarray, n_items: int) -> np.ndarray:
    """Whether each cell of ``items`` holds one of its user's items ``item_of[starts[u]:starts[u + 1]]``
    (a CSR matrix's ``indptr`` and ``indices``, in any order within a user), by one compiled pass per
    range of users (:func:`~metrics_core.inputs.kernels.mark_judged`), on a few threads."""
    from metrics_core._numeric.parallel import map_chunks, thread_shares
    from metrics_core.inputs.kernels import mark_judged, read_only_c, read_only_view

    found = np.zeros(items.shape, dtype=bool)
    view = read_only_c(items)
    starts, item_of = read_only_view(starts), read_only_view(item_of)  # (one type whether mapped from disk or not)
    map_chunks(lambda start, stop: mark_judged(view, starts, item_of, found, n_items, start, stop),
               thread_shares(len(items)))
    return found


@dataclass(frozen=True)
class WholeTraining:
    """The training facts of the whole data, for a :class:`Training` that holds one part of it
    (a Spark partition: every training row of its users, but not every user). Per item code of
    the part: the whole data's distinct training users and training rows of the item; and the
    whole data's training users, training rows, and distinct positive per-item row counts (most
    first: the popularity ranks' levels); for ``similarity="cooccurrence"``, the whole data's
    items x items co-occurrence similarity of the part's items (:class:`Cooccurrence`)."""

    users_per_item: np.ndarray
    interactions_per_item: np.ndarray
    n_users: int
    n_interactions: int
    interaction_levels: np.ndarray
    item_similarity: sp.csr_matrix | None = None


@dataclass
class Training:
    """Training interactions: every row as codes (for histories), and a users x items count
    matrix (duplicates summed) from which the distinct-pair facts are read. With ``whole``,
    the rows are one part of the training data and the per-item and total facts are the whole
    data's (each user's own facts, such as :attr:`items_per_user`, come from the rows)."""

    user: np.ndarray
    item: np.ndarray
    timestamp: np.ndarray | None
    matrix: sp.csr_matrix
    catalog_size: int
    whole: WholeTraining | None = None

    KEPT = ("users_per_item", "interactions_per_item")  # (kept with an encoded dataset: on a reopened
    # workspace each is a pass over the mapped training rows, 0.56 and 0.31 s at 40M, at a page's first use)

    @cached_property
    def pair_keys(self) -> np.ndarray:
        """The distinct (user, item) training pairs as ascending ``user * n_items + item`` keys."""
        matrix = self.matrix if self.matrix.has_sorted_indices else self.matrix.sorted_indices()
        users = np.repeat(np.arange(matrix.shape[0], dtype=np.int64), np.diff(matrix.indptr))
        return users * matrix.shape[1] + matrix.indices

    @cached_property
    def items_per_user(self) -> np.ndarray:
        """Distinct training items of each user."""
        return np.diff(self.matrix.indptr)

    @cached_property
    def users_per_item(self) -> np.ndarray:
        """Distinct training users of each item."""
        if self.whole is not None:
            return self.whole.users_per_item
        return np.bincount(self.matrix.indices, minlength=self.matrix.shape[1])

    @cached_property
    def interactions_per_item(self) -> np.ndarray:
        """Training rows of each item (repeats included)."""
        if self.whole is not None:
            return self.whole.interactions_per_item
        return np.bincount(self.item, minlength=self.matrix.shape[1])

    @cached_property
    def n_users(self) -> int:
        """Users with at least one training interaction."""
        if self.whole is not None:
            return self.whole.n_users
        return int(np.count_nonzero(self.items_per_user))

    @cached_property
    def n_interactions(self) -> int:
        """Training rows (repeats included)."""
        return self.whole.n_interactions if self.whole is not None else len(self.item)

    @property
    def interaction_levels(self) -> np.ndarray | None:
        """The whole data's distinct positive numbers of training rows of an item, most first
        (popularity rank r is the r-th of them); None when these rows are the whole data (then
        they are those of :attr:`interactions_per_item`)."""
        return self.whole.interaction_levels if self.whole is not None else None

    @cached_property
    def cooccurrence(self) -> Cooccurrence | None:
        """Co-occurrence similarity of items, from distinct (user, item) pairs (computed once).
        For one part of the data (``whole``), the items' similarity is the whole data's, counted
        where the whole is (None when it was not: a part's co-occurrences are not the whole's);
        each user's history is its own rows'."""
        seen = (self.matrix > 0).astype(np.float64).tocsr()
        count = self.items_per_user
        history = (_diagonal(np.divide(1.0, count, out=np.zeros(len(count)), where=count > 0)) @ seen).tocsr()
        if self.whole is not None:
            similarity = self.whole.item_similarity
            return None if similarity is None else Cooccurrence(history, count, similarity)
        users_of = self.users_per_item
        unit = (seen @ _diagonal(np.divide(1.0, np.sqrt(users_of), out=np.zeros(len(users_of)),
                                           where=users_of > 0))).T.tocsr()  # items x users, unit rows
        similarity = (unit @ unit.T).tocsr()
        similarity.sort_indices()  # (the look-ups search each row's columns)
        return Cooccurrence(history, count, similarity)


def _diagonal(values: np.ndarray):
    import scipy.sparse as sp

    return sp.diags(values, format="csr")


@dataclass
class Cooccurrence:
    """Items compared by who interacted with them in training (Microsoft Recommenders'
    ``item_cooccurrence_count``): sim(i, j) = |U_i ∩ U_j| / sqrt(|U_i|·|U_j|), the cosine of
    the items' training-user sets.

    ``history``: users x items, each user's distinct training items with weight 1 / their
    count; ``history_count``: that count; ``item_similarity``: items x items (no entry for an
    item nobody trained on: similar to nothing).
    The last costs memory with the square of the items that share users: fine for catalogs of
    tens of thousands of items.
    """

    history: sp.csr_matrix
    history_count: np.ndarray
    item_similarity: sp.csr_matrix
