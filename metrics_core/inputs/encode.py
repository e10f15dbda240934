"""Validate and encode the inputs once into arrays every metric reads.

The central structure is a users x positions array of item codes per model (-1 marks an
empty position), with a boolean hit array and the relevance grade of each hit aligned to it,
plus per-user relevant counts and ideal gains from the ground truth. Changing K, beta, the
AP denominator or the gain only re-reads these arrays; nothing is re-joined.

The join of (user, item) pairs to the ground truth sorts each list by item once (a row sort
of packed ``item << b | position`` keys, ``2**b >= P``), which gives both the duplicate check
and globally sorted keys (32-bit when a chunk's keys fit, else 64-bit) that the ground-truth
pairs are located in with ``searchsorted``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import pandas as pd

from metrics_core._numeric.distinct import distinct, member_of
from metrics_core._numeric.parallel import THREADS, chunks, map_chunks, meanwhile, thread_shares
from metrics_core.errors import Note, input_error, setting
from metrics_core.inputs import validate
from metrics_core.inputs.columns import Columns
from metrics_core.inputs.encoded import (
    KERNEL_ITEMS_MAX,
    Lists,
    RawLists,
    RawTruth,
    Training,
    Truth,
    compiled_for,
    compiled_loaded,
)
from metrics_core.inputs.ids import IdIndex
from metrics_core.inputs.read import QRELS_GRADE, is_qrels
from metrics_core.inputs.text_ids import TextIds, is_text
from metrics_core.settings import Order, TieBreak

MAX_POSITIONS = 100_000
JOIN_CHUNK_CELLS = 1 << 22
CHECK_CHUNK_CELLS = 1 << 16
KERNEL_USERS_MAX = (1 << 30) - 1  # the compiled join marks items with 2 * user + 3, an int32
USER_ITEM_HINT = f" with {setting('user_column')} and {setting('item_column')}"


def require_order(frame: pd.DataFrame, columns: Columns, source: str) -> None:
    """A recommendations table needs a rank or a score column to order each list."""
    if columns.rank not in frame.columns and columns.score not in frame.columns:
        raise input_error(
            source,
            f"has neither a rank column '{columns.rank}' nor a score column '{columns.score}'.",
            "add a rank (1 = best) or a score (higher = better) column, or map it with "
            f"{setting('rank_column')} or {setting('score_column')}.",
        )


def read_lists(name: str, frame: pd.DataFrame, source: str, columns: Columns, empty_ok: bool = False,
               ids: tuple[np.ndarray | TextIds, np.ndarray | TextIds] | None = None) -> RawLists:
    """Validate a recommendations table: ids present, rank or score usable (``empty_ok``: a
    table without rows is allowed, as in one Spark partition; ``ids``: the user and item ids,
    validated already)."""
    if not empty_ok:
        validate.require_rows(frame, source)
    has_rank = columns.rank in frame.columns
    has_score = columns.score in frame.columns
    validate.require_columns(frame, [columns.user, columns.item], source, USER_ITEM_HINT)
    require_order(frame, columns, source)
    context = [columns.user, columns.item, columns.rank, columns.score]
    user, item = ids or (validate.ids(frame, column, source, context) for column in (columns.user, columns.item))
    rank = validate.ranks(frame, columns.rank, source, context) if has_rank else None
    score = (
        validate.numbers(frame, columns.score, source, context, "score",
                         "every recommended item needs a finite score; fill or drop these rows.")
        if has_score else None
    )
    return RawLists(name, source, frame, user, item, rank, score)


def read_truth(frame: pd.DataFrame, source: str, columns: Columns, empty_ok: bool = False) -> RawTruth:
    """Validate a ground-truth table: ids present, grades finite and non-negative.

    A TREC qrels file always has grades (its fourth field, used unless another relevance
    column is named): as in trec_eval, a grade below the threshold (default 1) marks a judged
    non-relevant document, and negative grades are allowed there. ``empty_ok``: a table without
    rows is allowed (as in one Spark partition).
    """
    if not empty_ok:
        validate.require_rows(frame, source)
    validate.require_columns(frame, [columns.user, columns.item], source, USER_ITEM_HINT)
    qrels = is_qrels(frame)
    relevance = columns.relevance or (QRELS_GRADE if qrels else None)
    context = [columns.user, columns.item, relevance or columns.user]
    grade = None
    if relevance is not None:
        validate.require_columns(frame, [relevance], source, f" with {setting('relevance_column')}")
        grade = validate.grades(frame, relevance, source, context, allow_negative=qrels)
        negative = (grade < 0) & (grade >= columns.threshold)
        if negative.any():
            raise input_error(source, f"{int(negative.sum())} rows have a negative grade at or above the "
                              f"threshold {columns.threshold:g}, which would make them relevant with a negative "
                              "gain.", f"choose a relevance threshold above 0 ({setting('threshold')}).", relevance,
                              frame.loc[negative, [c for c in dict.fromkeys(context) if c in frame.columns]])
    user = validate.ids(frame, columns.user, source, context)
    item = validate.ids(frame, columns.item, source, context)
    return RawTruth(source, frame, user, item, grade)


def load_kernels_meanwhile() -> None:
    """Start loading the compiled loops (:mod:`metrics_core.inputs.kernels`: importing numba and
    loading the usual types from its cache) on a thread of its own.
    :class:`~metrics_core.engines.memory.dataset.Dataset` calls it once it knows the lists are
    large: before it reads models stored as Parquet files (their metadata counts the rows), else
    once their ids are read, before the ground truth is encoded; the lists' placing waits for
    the loading if it is not done, and their joining finds the loops loaded. (Beside the reading
    of three 10M-row files the command took 1.41–2.06 s, median 1.55 s, against 1.58–2.01 s,
    median 1.69 s, when it started after them: 16 paired rounds.) Once per process: a later call
    (the same build's second chance, a later build) starts nothing. A failure here is left to the
    encoding's own import, which raises it where it is needed."""
    def load() -> None:
        from metrics_core.inputs.kernels import load_usual

        load_usual()

    with _KERNELS_LOCK:
        if _KERNELS_STARTED:
            return
        _KERNELS_STARTED.append(meanwhile(load))  # (its failure stays in the future no one asks: see above)


_KERNELS_LOCK = threading.Lock()
_KERNELS_STARTED: list = []  # the loading's future, once started


def encode_truth(raw: RawTruth, users: IdIndex, items: IdIndex, threshold: float) -> Truth:
    """Keep relevant rows (grade >= threshold), deduplicate pairs keeping the highest grade.

    The result is sorted by user, and within a user by grade descending when graded (the
    ideal order that IDCG needs).
    """
    n_users, n_items = len(users), len(items)
    user, item = users.codes(raw.user), items.codes(raw.item)  # (int32 mostly: int64 once the pairs are found)
    grade = raw.grade  # None: every relevant pair has grade 1
    notes: list[Note] = []
    judged = pooled = np.zeros(0, dtype=np.int64)
    has_rows = None  # (without grades, the users with a relevant item: found from R below)
    if grade is not None:
        has_rows = np.zeros(n_users, dtype=bool)
        has_rows[user] = True
        user, item = user.astype(np.int64), item.astype(np.int64)
        keep = grade >= threshold
        unjudged = grade < 0  # (qrels: in the pool, not judged; trec_eval's -1)
        judged = distinct(user[~keep & ~unjudged] * n_items + item[~keep & ~unjudged])
        pooled = distinct(user[unjudged] * n_items + item[unjudged]) if unjudged.any() else pooled
        if not keep.all():
            dropped = int((~keep).sum())
            notes.append(Note("below_threshold", f"{dropped} ground-truth rows have a grade below the "
                              f"threshold {threshold:g} and are not relevant.", dropped))
            user, item, grade = user[keep], item[keep], grade[keep]
    ordered = _in_grade_order(user, item, grade, n_users, n_items, notes) if grade is not None else None
    if ordered is not None:
        user, item, grade = ordered
    else:
        user, item, grade = _distinct_pairs(user, item, grade, n_items, notes)
    if grade is None:
        grade = np.ones(len(user))
    graded = raw.grade is not None and not np.all(grade == grade[:1])
    if graded and ordered is None:
        order = np.lexsort((-grade, user))
        user, item, grade = user[order], item[order], grade[order]
    # R per user from the sorted users' boundaries (np.bincount would first copy 32-bit codes to 64 bits)
    relevant_count = np.diff(np.searchsorted(user, np.arange(n_users + 1, dtype=user.dtype)))
    if has_rows is None:
        has_rows = relevant_count > 0
    if len(judged) or len(pooled):  # a pair relevant through another row is neither (no work without grades)
        relevant_keys = distinct(np.multiply(user, n_items, dtype=np.int64) + item)
        judged = judged[~member_of(judged, relevant_keys)]
        pooled = pooled[~member_of(pooled, relevant_keys) & ~member_of(pooled, judged)]  # (a judgement wins)
    return Truth(item, np.asarray(grade, dtype=np.float64), relevant_count, graded, has_rows, notes, judged, n_items,
                 pooled=pooled)


def _distinct_pairs(user: np.ndarray, item: np.ndarray, grade: np.ndarray | None, n_items: int, notes: list[Note]
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The rows sorted by (user, item), each pair once with its highest grade (a note says how
    many rows were merged): the users (their codes' type kept when they are not re-derived),
    the items as int64 codes, the grades. Each new array made here costs more than its
    arithmetic (page faults on new memory), so the pair key is made once and becomes the items
    in place."""
    key = np.multiply(user, n_items, dtype=np.int64)
    key += item
    if len(key) < 2 or (key[1:] > key[:-1]).all():
        return user, item.astype(np.int64, copy=False), grade
    by_user = bool((user[1:] >= user[:-1]).all())  # grouped by user: only items need sorting
    if grade is None:
        _sort_grouped(key, user, by_user)  # (equal keys are one pair: no order to keep; 5x faster than a stable sort)
    else:
        order = np.argsort(key)  # (the grades of equal keys are merged by their maximum below)
        key, grade = key[order], grade[order]
        by_user = False  # the users come back from the sorted keys below
    first = np.ones(len(key), dtype=bool)
    np.not_equal(key[1:], key[:-1], out=first[1:])
    duplicates = len(first) - int(np.count_nonzero(first))
    if duplicates:
        if grade is not None:
            grade = np.maximum.reduceat(grade, np.flatnonzero(first))
        key = key[first]  # (a mask, not the kept rows' numbers: 11M of those were 88 MB more new memory)
        user = user[first] if by_user else None
        notes.append(_merged_pairs_note(duplicates))
    if not by_user:  # (the users, in order, are unchanged by sorting items within them)
        user = key // n_items
    return user, np.remainder(key, n_items, out=key), grade


def _merged_pairs_note(duplicates: int) -> Note:
    return Note("duplicate_truth", f"{duplicates} duplicate ground-truth rows (same user and item) were merged, "
                "keeping the highest grade.", duplicates)


GRADE_LEVELS_MAX = 256  # distinct grades the one-key sort of _in_grade_order takes


def _in_grade_order(user: np.ndarray, item: np.ndarray, grade: np.ndarray, n_users: int, n_items: int,
                    notes: list[Note]) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``(user, item, grade)``, each (user, item) pair once with its highest grade, sorted by
    user, then grade descending, then item (the order :func:`encode_truth` returns), by two
    in-place sorts of int64 keys in which ``level`` numbers the L distinct grades ascending:

    1. ``(user · n_items + item) · L + level``: a pair's rows are neighbours, its highest grade
       last, which is the one kept (a note says how many rows were merged);
    2. ``(user · L + L − 1 − level) · n_items + item``: the returned order (skipped when L = 1).

    Faster than an ``argsort`` by pair and a ``lexsort`` by grade.
    None (the caller does that) for fewer than two rows, more than :data:`GRADE_LEVELS_MAX`
    distinct grades or keys that would not fit in int64."""
    grades = pd.unique(grade)
    levels = len(grades)
    if len(grade) < 2 or levels > GRADE_LEVELS_MAX or n_users * levels * max(n_items, 1) >= 2**63:
        return None
    grades.sort()
    key = user * n_items
    key += item
    key *= levels
    key += np.searchsorted(grades, grade)
    _sort_grouped(key, user)
    pair, level = np.divmod(key, levels)
    last = np.ones(len(pair), dtype=bool)
    np.not_equal(pair[1:], pair[:-1], out=last[:-1])
    duplicates = len(last) - int(np.count_nonzero(last))
    if duplicates:
        pair, level = pair[last], level[last]
        notes.append(_merged_pairs_note(duplicates))
    user, item = np.divmod(pair, n_items)
    if levels > 1:
        key = user * levels
        key += levels - 1
        key -= level
        key *= n_items
        key += item
        _sort_grouped(key, user)
        rest, item = np.divmod(key, n_items)
        user, descending = np.divmod(rest, levels)
        level = levels - 1 - descending
    return user, item, grades[level]


SEGMENT_SORT_MIN = 1 << 16  # rows from which a process that has the compiled loops sorts by user on them


def _sort_grouped(key: np.ndarray, user: np.ndarray, by_user: bool | None = None) -> None:
    """Sort ``key`` (ascending with ``user``) in place: by pieces when the rows are grouped by
    user (``by_user``, found here when None), else whole."""
    if by_user if by_user is not None else bool((user[1:] >= user[:-1]).all()):
        _sort_within_users(key, user)
    else:
        key.sort()


def _sort_within_users(key: np.ndarray, user: np.ndarray) -> None:
    """Sort ``key`` in place when rows are grouped by ``user`` (ascending): pieces that start
    at a user boundary are sorted separately, on a few threads; or, once this process has the
    compiled loops (from :data:`SEGMENT_SORT_MIN` rows), each user's rows apart in one compiled
    pass (:func:`~metrics_core.inputs.kernels.sort_segments`: a few items per user sort by
    insertion; 1.1M ground-truth rows of 100k users in 16 ms on one core, where numpy's sorts
    of the pieces took 26-38 ms on two)."""
    n = len(key)
    if compiled_for(n) or (n >= SEGMENT_SORT_MIN and compiled_loaded()):
        from metrics_core.inputs.kernels import sort_segments

        bounds = np.concatenate(([0], np.flatnonzero(user[1:] != user[:-1]) + 1, [n])).astype(np.int64)
        map_chunks(lambda start, stop: sort_segments(key, bounds, start, stop), thread_shares(len(bounds) - 1))
        return
    cuts = np.unique(np.searchsorted(user, user[np.linspace(0, n - 1, THREADS + 1).astype(np.int64)[1:-1]]))
    bounds = list(zip([0, *cuts.tolist()], [*cuts.tolist(), n], strict=True))
    map_chunks(lambda start, stop: key[start:stop].sort(), [b for b in bounds if b[1] > b[0]])


def encode_lists(
    raw: RawLists,
    users: IdIndex,
    items: IdIndex,
    truth: Callable[[], Truth],
    order: Order = "rank",
    tie_break: TieBreak = "input",
    score_positions: int | None = None,
) -> Lists:
    """Place each row at its position, blank duplicates, and mark hits against the ground truth
    ``truth()`` gives (asked for once the rows are placed: it may still be being encoded).

    Position comes from the rank when there is one and ``order`` is "rank"; otherwise from
    the score, higher first, ties broken by input row order ("input") or by item id compared
    as text, larger first ("item_desc", as trec_eval). ``score_positions``: keep the scores of
    the first that many positions only (all when None).
    """
    item = items.codes(raw.item)
    user = None  # coded only when needed: rows that come as whole lists need one code per list
    notes: list[Note] = []
    if raw.rank is not None and (order == "rank" or raw.score is None):
        position, first = raw.rank, 1  # ranks are used as they are: no copy of the column
        ordered_by: Order = "rank"
    else:
        user = users.codes(raw.user)
        tie_key = None if tie_break == "input" else items.descending_text_order()[item]
        position, first = _positions_by_score(user, raw.score, tie_key), 0
        ordered_by = "score"
    n_positions = int(position.max(initial=first)) + 1 - first  # one empty position without rows
    if n_positions > MAX_POSITIONS:
        bad = position - first >= MAX_POSITIONS
        raise input_error(raw.source, f"{int(bad.sum())} rows have a rank above {MAX_POSITIONS}.",
                          "ranks are positions in a list (1 = best); renumber the lists.",
                          None, raw.frame.loc[bad])
    n_users = len(users)
    known = raw.heads is not None and ordered_by == "rank"  # found by Dataset.build before the id index
    heads = raw.heads if known else whole_list_heads(raw.user, position, first)
    blocks = None if heads is None else users.codes(heads)
    if blocks is None and user is None:
        user = users.codes(raw.user)
    score_width = n_positions if score_positions is None else min(score_positions, n_positions)
    items_at, scores = _place(user, item, position, first, raw.score, n_users, n_positions, blocks, score_width)
    count_gaps = ordered_by == "rank" and blocks is None  # whole lists have none
    lists = lists_from_cells(raw.name, items_at, scores, truth(), len(items), None if blocks is not None else len(user),
                             ordered_by, count_gaps, notes)
    if lists is None:  # two rows took one cell: raises
        _raise_shared_cells(_cells(user, position, first, n_positions), n_users * n_positions, raw)
    return lists


def lists_from_cells(name: str, items_at: np.ndarray, scores: np.ndarray | None, truth: Truth, n_items: int,
                     rows: int | None, ordered_by: Order, count_gaps: bool, notes: list[Note]) -> Lists | None:
    """The :class:`Lists` of placed cells (``items_at``: item codes, -1 empty; ``scores`` of
    the first positions, or None), joined to ``truth`` (:func:`_join`: duplicates blanked, with
    their scores), with notes on duplicates and (``count_gaps``) rank gaps added to ``notes``.
    None when fewer cells are filled than ``rows`` were placed (None: not counted), that is
    when two rows took one cell."""
    joined = _join(items_at, truth, n_items, count_gaps)
    if rows is not None and joined.filled < rows:
        return None
    items_at, duplicates, gaps = joined.items, joined.duplicates, joined.gaps
    if duplicates:
        notes.append(Note("duplicate_items", f"{duplicates} recommended items appear twice in the same "
                          "list; each counts once, at its best position, and its other positions stay "
                          "empty.", duplicates))
    if gaps:
        notes.append(Note("rank_gaps", f"{gaps} lists have gaps in their ranks (e.g. 1, 2, 5); the "
                          "missing positions are empty.", gaps))
    if scores is not None and duplicates:
        scores = np.where(items_at[:, :scores.shape[1]] < 0, np.nan, scores)
    lists = Lists(name, items_at, joined.hit, joined.grade if truth.graded else None, scores, joined.listed,
                  ordered_by, notes)
    if joined.lengths is not None:  # (else counted on first use: a pass over every cell)
        lists.lengths = joined.lengths.astype(np.float64)
    if not count_gaps and not duplicates:  # (whole lists, or placed by score: each fills its first places)
        lists.gapless = True
    return lists


def _positions_by_score(user: np.ndarray, score: np.ndarray, tie_key: np.ndarray | None) -> np.ndarray:
    """0-based position of each row in its user's list ordered by score, descending (equal
    scores in row order, or by ``tie_key``).

    Rows that come as one block per user (the usual file) are ordered block by block: the
    blocks as the rows of a matrix, each sorted along its row (several times faster than one sort
    of every row by user and score); other rows by that one sort."""
    n = len(user)
    if tie_key is None and n:
        same_user = user[1:] == user[:-1]
        blocks = int(n - same_user.sum())
        if blocks == np.count_nonzero(np.bincount(user)):
            starts = np.flatnonzero(np.concatenate([[True], ~same_user]))
            if not (same_user & (score[1:] > score[:-1])).any():
                return np.arange(n) - np.repeat(starts, np.diff(np.append(starts, n)))
            in_blocks = _positions_in_blocks(score, starts)
            if in_blocks is not None:
                return in_blocks
    keys = (-score, user) if tie_key is None else (tie_key, -score, user)
    order = np.lexsort(keys)
    sorted_user = user[order]
    starts = np.flatnonzero(np.concatenate([[True], sorted_user[1:] != sorted_user[:-1]]))
    within = np.arange(n) - np.repeat(starts, np.diff(np.append(starts, n)))
    position = np.empty(n, dtype=np.int64)
    position[order] = within
    return position


def _positions_in_blocks(score: np.ndarray, starts: np.ndarray) -> np.ndarray | None:
    """:func:`_positions_by_score` for rows in one block per user starting at ``starts``: each
    block a row of a (blocks x longest) matrix of negated scores (shorter blocks padded with +inf,
    after every finite score), sorted along its rows (stable: equal scores keep their row order).
    None when padding would more than double the cells (a few very long lists)."""
    n = len(score)
    lengths = np.diff(np.append(starts, n))
    longest = int(lengths.max())
    if len(starts) * longest > 2 * n:
        return None
    if (lengths == longest).all():
        if compiled_for(n) and score.dtype in (np.float32, np.float64):
            return _positions_in_rows_compiled(score, longest)
        cells = (-score).reshape(len(starts), longest)
        row = column = None
    else:
        row = np.repeat(np.arange(len(starts)), lengths)
        column = np.arange(n) - np.repeat(starts, lengths)
        cells = np.full((len(starts), longest), np.inf, dtype=score.dtype)
        cells[row, column] = -score
    order = np.argsort(cells, axis=1, kind="stable")
    position = np.empty(order.shape, dtype=np.int64)
    np.put_along_axis(position, order, np.broadcast_to(np.arange(longest), order.shape), axis=1)
    return position.ravel() if row is None else position[row, column]


def _positions_in_rows_compiled(score: np.ndarray, width: int) -> np.ndarray:
    """:func:`_positions_in_blocks` for lists of one length by
    :func:`~metrics_core.inputs.kernels.positions_in_rows`, a range of lists per thread, with no
    negated copy and no order array."""
    from metrics_core.inputs.kernels import positions_in_rows, read_only_c

    position = np.empty(len(score), dtype=np.int64)
    flat = read_only_c(score)
    map_chunks(lambda start, stop: positions_in_rows(flat, width, position, start, stop),
               thread_shares(len(score) // width))
    return position


def _place(user, item, position, first, score, n_users, n_positions, blocks, score_width):
    """The users x positions array of item codes (-1: empty) and the users x ``score_width``
    array of scores of the first ``score_width`` positions (NaN: empty).

    ``blocks`` is the user code of each list when the rows come as whole lists in order (see
    :func:`whole_list_heads`), else None and ``user`` codes every row. ``position`` counts
    from ``first`` (1 for ranks, 0 for score order). Two rows of ``user`` for one cell leave
    one of them: the caller counts the filled cells (:func:`_join` does) and raises."""
    if score is not None:
        score = score.astype(placed_score_type(score.dtype), copy=False)
    if blocks is not None and len(blocks) == n_users and item.dtype == np.int32:
        # every user has a whole list, in order: the input arrays already are the matrices (read-only
        # views; the join copies the items only if it must blank a duplicate)
        items_at = item.reshape(n_users, n_positions)
        items_at.flags.writeable = False
        scores = None if score is None else score.reshape(n_users, n_positions)[:, :score_width]
        if scores is not None:
            scores.flags.writeable = False
        return items_at, scores
    if blocks is not None:
        # every list has all P positions, rows in order: copy whole rows (a plain copy when the
        # listed users are consecutive codes)
        where = slice(int(blocks[0]), int(blocks[-1]) + 1) if blocks[-1] - blocks[0] + 1 == len(blocks) else blocks
        unlisted = np.ones(n_users, dtype=bool)
        unlisted[where] = False
        items_at = np.empty((n_users, n_positions), dtype=np.int32)
        items_at[where] = item.reshape(-1, n_positions)
        items_at[unlisted] = -1
        scores = None
        if score is not None:
            scores = np.empty((n_users, score_width), dtype=score.dtype)
            scores[where] = score.reshape(-1, n_positions)[:, :score_width]
            scores[unlisted] = np.nan
        return items_at, scores
    items_at = full(n_users * n_positions, -1, np.int32)
    scores = None if score is None else score_cells(n_users * score_width, len(user) == len(items_at), score.dtype)
    if compiled_for(len(items_at)):  # rows in any order: each written straight to its cell, in one pass
        from metrics_core.inputs.kernels import scatter_rows

        position = position if position.dtype in (np.int32, np.int64) else position.astype(np.int64)
        for values, out, width in ((item, items_at, n_positions), (score, scores, score_width)):
            if out is not None:
                map_chunks(lambda start, stop, values=values, out=out, width=width: scatter_rows(
                    user, position, first, width, values, out, start, stop), thread_shares(len(user)))
    else:
        cell = _cells(user, position, first, n_positions)
        _scatter(items_at, cell, item)
        if scores is not None:
            kept = position - first < score_width if score_width < n_positions else slice(None)
            _scatter(scores, _cells(user[kept], position[kept], first, score_width), score[kept])
    items_at = items_at.reshape(n_users, n_positions)
    return items_at, None if scores is None else scores.reshape(n_users, score_width)


def _cells(user: np.ndarray, position: np.ndarray, first: int, n_positions: int) -> np.ndarray:
    """The flat (user, position) cell of each row."""
    cell_type = np.int32 if (int(user.max(initial=-1)) + 1) * n_positions < 2**31 else np.int64
    cell = np.multiply(user, n_positions, dtype=cell_type)  # one new array, the rest in place
    np.add(cell, position, out=cell, casting="unsafe")  # (positions fit: n_positions <= MAX_POSITIONS)
    if first:
        cell -= cell_type(first)
    return cell


def whole_list_heads(user_ids: np.ndarray | TextIds, position: np.ndarray, first: int) -> np.ndarray | TextIds | None:
    """The user id of each list when rows come as whole lists, else None.

    Whole lists: every run of P rows (P = the longest list) is one user's list with positions
    ``first .. first + P - 1`` in order, and users ascend in id order (which is code order).
    Then a list needs one user id, not P: the id index and the coding use these heads only.
    Text ids are checked on their codes, which compare as the texts do.
    """
    if is_text(user_ids):
        heads = _list_heads(user_ids.codes, position, first)
        return None if heads is None else TextIds(heads, user_ids.values)
    return _list_heads(user_ids, position, first)


def _list_heads(user_ids: np.ndarray, position: np.ndarray, first: int) -> np.ndarray | None:
    """:func:`whole_list_heads` for integer ids."""
    if len(user_ids) == 0:
        return None
    n_positions = int(position.max()) + 1 - first
    heads = _user_blocks(user_ids, n_positions)
    if heads is None:
        return None
    rows = max(1, CHECK_CHUNK_CELLS // n_positions)
    in_order = np.tile(np.arange(first, first + n_positions, dtype=position.dtype), rows)
    flat_position = position.reshape(-1)
    for start in range(0, len(flat_position), len(in_order)):  # chunks: the comparison masks stay in cache
        part = flat_position[start:start + len(in_order)]
        if not (part == in_order[:len(part)]).all():
            return None
    return heads


def _user_blocks(user_ids: np.ndarray, n_positions: int) -> np.ndarray | None:
    """The user of each block when the rows come in blocks of ``n_positions`` rows of one
    user, users ascending in id order (as whole lists of that length do, whatever their ranks
    say), else None."""
    if n_positions < 1 or len(user_ids) == 0 or len(user_ids) % n_positions:
        return None
    ids_2d = user_ids.reshape(-1, n_positions)
    heads = ids_2d[:, 0]
    if not (heads[1:] > heads[:-1]).all() or not (heads == ids_2d[:, -1]).all():
        return None
    step = max(1, CHECK_CHUNK_CELLS // n_positions) * n_positions
    for start in range(0, len(user_ids), step):  # never decreasing and equal at both ends of each block:
        ids = user_ids[start:start + step + 1]  # constant per block (chunks: the masks stay in cache)
        if not (ids[1:] >= ids[:-1]).all():
            return None
    return heads


def placed_score_type(dtype: np.dtype) -> np.dtype:
    """The type scores are placed as: float32 and float64 as they are, others (integers, float16:
    no compiled loop takes them) as float64."""
    return np.dtype(dtype) if dtype in (np.float32, np.float64) else np.dtype(np.float64)


def score_cells(size: int, every_cell: bool, dtype: np.dtype) -> np.ndarray:
    """The flat score cells before rows are placed: NaN (empty), unless there are as many rows
    as cells (``every_cell``), when each cell gets a score or two rows share a cell and the
    result is not used, so no NaN is written first (nor that pass's page faults paid)."""
    return np.empty(size, dtype) if every_cell else full(size, np.nan, dtype)


def full(size: int, value, dtype) -> np.ndarray:
    """``np.full`` filled on a few threads: a new array's pages are faulted in as it is first
    written, and at hundreds of MB that first touch costs more than the writing."""
    out = np.empty(size, dtype=dtype)

    def fill(start: int, stop: int) -> None:
        out[start:stop] = value

    map_chunks(fill, thread_shares(size))
    return out


def _scatter(target: np.ndarray, cell: np.ndarray, values: np.ndarray) -> None:
    """``target[cell] = values`` on a few threads over row ranges (numpy releases the GIL; rows
    in random order make this bound by memory latency, which threads overlap). When two rows
    share a cell the caller raises, so which one is kept does not matter."""
    def write(start: int, stop: int) -> None:
        target[cell[start:stop]] = values[start:stop]

    map_chunks(write, thread_shares(len(cell)))


def _raise_shared_cells(cell: np.ndarray, n_cells: int, raw: RawLists) -> None:
    """Raise the error naming the rows that share a (user, position) cell: two rows of one user
    with the same rank, where the order would be a guess. Called when some cell got two rows."""
    slot = np.full(n_cells, -1, dtype=np.int64)
    rows = np.arange(len(cell))
    slot[cell] = rows
    clash = slot[cell] != rows
    if clash.any():
        clashing = np.isin(cell, cell[clash])
        raise input_error(
            raw.source,
            f"{int(clash.sum())} rows share a rank with another item of the same user's list.",
            "give each item of a list its own rank, or drop the rank column to order by score.",
            None,
            raw.frame.loc[clashing],
        )


class _Joined(NamedTuple):
    """The lists joined to the ground truth (see :func:`_join`)."""

    items: np.ndarray  # a copy when the input was read-only and held a duplicate, now blanked
    hit: np.ndarray
    grade: np.ndarray | None
    duplicates: int
    gaps: int  # lists with a gap in their ranks (before duplicates are blanked), when counted
    listed: np.ndarray  # users with a filled cell
    filled: int  # filled cells before duplicates are blanked
    lengths: np.ndarray | None = None  # each list's items, duplicates blanked (known to the compiled join)


def _join(items_at: np.ndarray, truth: Truth, n_items: int, count_gaps: bool) -> _Joined:
    """Mark relevant cells and blank duplicate items, and count the filled cells and lists. From
    :data:`KERNEL_MIN` cells, with at most :data:`KERNEL_ITEMS_MAX` items and fewer than
    :data:`KERNEL_USERS_MAX` users, the compiled loop does it (:func:`_join_compiled`); otherwise
    numpy:

    Per chunk of users (chunks run on a few threads; each writes its own rows): pack
    ``item << b | position`` (``2**b`` >= P; an empty cell packs as item -1 and sorts first),
    sort each row, flag equal items next to each other as duplicates (the later position is
    blanked), then add ``row * (n_items + 1) << b`` to get globally sorted keys (the spare item
    slot keeps a row's empty cells above the row before) and locate each ground-truth pair with
    one ``searchsorted``; the first match is the item's best position.
    """
    if compiled_for(items_at.size) and n_items <= KERNEL_ITEMS_MAX and len(items_at) < KERNEL_USERS_MAX:
        joined = _join_compiled(items_at, truth, n_items)
        return joined if count_gaps else joined._replace(gaps=0)
    filled = items_at >= 0
    listed = filled.any(axis=1)
    gaps = _users_with_rank_gaps(filled, listed) if count_gaps else 0
    n_filled = int(np.count_nonzero(filled))
    del filled
    n_users, n_positions = items_at.shape
    hit = np.zeros((n_users, n_positions), dtype=bool)
    grade = np.zeros((n_users, n_positions), dtype=truth.cell_grade_type) if truth.graded else None
    bits = max(1, int(n_positions - 1).bit_length())
    stride = (n_items + 1) << bits
    chunk = max(1, JOIN_CHUNK_CELLS // n_positions)
    # 32-bit keys (half the bytes to sort and search) when a chunk's keys fit
    key_type = np.int32 if stride * min(chunk, 64) < 2**31 else np.int64
    if key_type is np.int32:
        chunk = max(1, min(chunk, (2**31 - 1) // stride))
    truth_starts = truth.starts
    column = np.arange(n_positions, dtype=key_type)
    mask = key_type((1 << bits) - 1)

    def join_chunk(start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """Marks the chunk's hits; returns the (row, position) of its duplicate cells."""
        packed = items_at[start:stop].astype(key_type)  # a copy, sorted in place
        packed <<= bits
        packed |= column
        packed.sort(axis=1)
        item_sorted = packed >> bits
        again = item_sorted[:, 1:] == item_sorted[:, :-1]
        duplicate_cells = (np.zeros(0, dtype=np.intp), np.zeros(0, dtype=key_type))
        if again.any():
            again &= item_sorted[:, 1:] >= 0  # empty cells are not duplicates of each other
            rows, cols = np.nonzero(again)  # (costly on 2-d arrays: only when something repeats)
            duplicate_cells = (start + rows, packed[rows, cols + 1] & mask)
        packed += (np.arange(stop - start, dtype=key_type) * key_type(stride))[:, None]
        keys = packed.ravel()
        lo, hi = truth_starts[start], truth_starts[stop]
        wanted = ((truth.user[lo:hi] - start) * stride + (truth.item[lo:hi] << bits)).astype(key_type)
        where = np.searchsorted(keys, wanted).clip(0, len(keys) - 1)
        found_key = keys[where]
        found = (found_key >> bits) == (wanted >> bits)
        position = found_key[found] & mask
        users = truth.user[lo:hi][found]
        hit[users, position] = True
        if grade is not None:
            grade[users, position] = truth.grade[lo:hi][found]
        return duplicate_cells

    found_duplicates = map_chunks(join_chunk, chunks(n_users, chunk))
    rows = np.concatenate([d[0] for d in found_duplicates]) if found_duplicates else np.zeros(0, dtype=np.int64)
    if len(rows):
        columns = np.concatenate([d[1] for d in found_duplicates])
        if not items_at.flags.writeable:
            items_at = items_at.copy()
        items_at[rows, columns] = -1
    return _Joined(items_at, hit, grade, len(rows), gaps, listed, n_filled)


def _join_compiled(items_at: np.ndarray, truth: Truth, n_items: int) -> _Joined:
    """:func:`_join` by :func:`~metrics_core.inputs.kernels.join_users`, one range of users per
    thread: a pass along each row against a table of its user's relevant items, no sort; the
    same pass counts the filled cells and each list's items (numpy's ``listed[user] = True``
    over every row, the count of filled cells and the lists' lengths each took a pass of their
    own)."""
    from metrics_core.inputs.kernels import blank_duplicates, join_users

    hit = np.zeros(items_at.shape, dtype=bool)
    grade = np.zeros(items_at.shape, dtype=truth.cell_grade_type) if truth.graded else np.zeros((0, 0), np.float32)
    lengths = np.empty(len(items_at), dtype=np.int32)
    shares = thread_shares(len(items_at))
    counts = map_chunks(lambda start, stop: join_users(items_at, truth.starts, truth.item, truth.grade, hit, grade,
                                                       truth.graded, lengths, n_items, start, stop), shares)
    duplicates, gaps, filled = (sum(count[i] for count in counts) for i in (0, 1, 2))
    if duplicates:
        if not items_at.flags.writeable:
            items_at = items_at.copy()
        map_chunks(lambda start, stop: blank_duplicates(items_at, n_items, start, stop), shares)
    return _Joined(items_at, hit, grade if truth.graded else None, duplicates, gaps, lengths > 0, filled, lengths)


def _users_with_rank_gaps(filled: np.ndarray, listed: np.ndarray) -> int:
    """Lists (rows of ``filled``, the filled cells) with fewer filled cells than their last
    filled position."""
    last = np.where(listed, filled.shape[1] - np.argmax(filled[:, ::-1], axis=1), 0)
    return int((filled.sum(axis=1) < last).sum())


def encode_training(user_codes: np.ndarray, item_codes: np.ndarray, timestamp: np.ndarray | None, users: IdIndex,
                    items: IdIndex, catalog_size: int | None) -> Training:
    """Training rows (as user and item codes) and the users x items count matrix. The catalog
    size defaults to the number of distinct training items."""
    import scipy.sparse as sp  # on use: start-up without training data does not pay for it

    code_type = np.int32 if max(len(users), len(items)) < 2**31 else np.int64  # (40M rows: 320 MB less than int64)
    user, item = user_codes.astype(code_type, copy=False), item_codes.astype(code_type, copy=False)
    matrix = sp.csr_matrix((np.ones(len(user), dtype=np.float32), (user, item)), shape=(len(users), len(items)))
    matrix.sum_duplicates()
    if catalog_size is None:
        catalog_size = int(np.count_nonzero(np.bincount(matrix.indices, minlength=len(items))))
    return Training(user, item, timestamp, matrix, catalog_size)
