"""Compiled loops for the steps numpy needs several passes or a sort for: marking the ids in use,
placing and joining in the encoding, matching two models' lists for the primitive-model metrics,
each user's softmax for score entropy (:mod:`metrics_core.metrics` calls these two from ``KERNEL_MIN`` cells), and
looking up entries of a sparse items x items similarity (from ``similarity.LOOKUP_KERNEL_MIN``).

numba compiles them (``cache=True``: once per machine, kept in ``__pycache__``; ``make`` compiles
them at install, ``python -m metrics_core.inputs.kernels`` does it by hand). They release the
GIL (``nogil``) and each call covers one range of rows or users, so :func:`map_chunks` runs them
on a few threads like the numpy steps (numba's own thread pools are not safe to enter from two
threads at once, and the app's sessions run at once, each evaluating its models on threads).

:mod:`metrics_core.inputs.encode` imports this module only for large inputs (from its
``KERNEL_MIN`` cells): in a fresh process the first call costs time before any work
(importing numba, defining the loops, starting LLVM and loading them from the cache), more
than small inputs take in numpy; the tests check that both paths give the same
arrays. For large lists :func:`~metrics_core.inputs.encode.load_kernels_meanwhile` starts that
import and :func:`load_usual` on a thread of its own while the ground truth is encoded, so the
encoding's first call finds them loaded (numba loads without ``scipy.linalg``:
:mod:`metrics_core.inputs.jit`).
"""

from __future__ import annotations

import numpy as np

from metrics_core.inputs.jit import numba


@numba.njit(cache=True, nogil=True)
def scatter_rows(user, position, first, width, values, out, start, stop):
    """``out[user * width + position - first] = values`` for rows ``start .. stop`` whose
    position is below ``width`` (the others are not kept): one pass, no array of cell numbers
    (numpy writes one and reads it back for each column)."""
    for row in range(start, stop):
        column = position[row] - first
        if column < width:
            out[user[row] * width + column] = values[row]


@numba.njit(cache=True, nogil=True)
def mark_rows(flags, values, low, start, stop):
    """``flags[values - low] = True`` for rows ``start .. stop`` (every ``values - low`` indexes
    ``flags``: the caller knows the values' extremes)."""
    for row in range(start, stop):
        flags[values[row] - low] = True


@numba.njit(cache=True, nogil=True)
def place_ranked(user, item, rank, score, positions, width, items_at, scores):
    """Place rows in any order by their rank: row ``r``'s item goes to cell ``user[r] *
    positions + rank[r] - 1`` of ``items_at`` and, when ``rank[r] <= width``, its score to cell
    ``user[r] * width + rank[r] - 1`` of ``scores`` (``width`` 0: no scores). One row group of a
    file at a time, its rank and score just decoded (:mod:`metrics_core.inputs.stream`).

    A row whose rank is outside ``1 .. positions`` is not placed, and one whose score is not
    finite (at any rank) is counted: the caller then reads the file the general way, whose
    checks name those rows. Returns ``(bad rows, longest rank placed)``."""
    bad = 0
    longest = 0
    for row in range(len(user)):
        column = rank[row] - 1
        if column < 0 or column >= positions:
            bad += 1
            continue
        longest = max(longest, column + 1)
        items_at[user[row] * positions + column] = item[row]
        if width:
            value = score[row]
            if not np.isfinite(value):
                bad += 1
            elif column < width:
                scores[user[row] * width + column] = value
    return bad, longest


@numba.njit(cache=True, nogil=True)
def join_users(items_at, truth_starts, truth_item, truth_grade, hit, grade, graded, lengths, n_items, start, stop):
    """Mark the hits of users ``start .. stop``, count their duplicate items and rank gaps, and
    write the length of each list.

    Per user ``u``, one table indexed by item code holds a mark: its relevant items are marked
    ``2u + 2`` (wanted), then its cells are read in position order, and each item read is marked
    ``2u + 3`` (seen). An item already marked seen is a duplicate (its later position is not a
    hit: the caller blanks it), else one marked wanted is a hit (with its grade when ``graded``,
    through a second table of each relevant item's row among its user's rows). Earlier users'
    marks are smaller, so the table is never cleared; one table, not one for wanted and one for
    seen, halves the random reads.
    A list has a rank gap when fewer cells are filled than its last filled position;
    ``lengths[user]`` is its count of items once duplicates are blanked (0: no list). Returns
    ``(duplicates, gaps, filled)``, ``filled`` the count of filled cells (the caller compares it
    with the rows placed: fewer means two rows took one cell).
    The tables take 4 bytes per item code, 8 when ``graded``; the caller bounds the number of
    items, and of users (fewer than 2**30 - 1: the marks, at most 2**31 - 1, fit int32).
    """
    mark = np.zeros(n_items, dtype=np.int32)
    offset = np.zeros(n_items if graded else 0, dtype=np.int32)  # the item's row among its user's ground-truth rows
    duplicates = 0
    gaps = 0
    filled_cells = 0
    for user in range(start, stop):
        wanted = 2 * user + 2
        seen = wanted + 1
        first = truth_starts[user]
        for row in range(first, truth_starts[user + 1]):
            mark[truth_item[row]] = wanted
            if graded:
                offset[truth_item[row]] = row - first
        filled = 0
        last = 0
        again = 0
        for position in range(items_at.shape[1]):
            item = items_at[user, position]
            if item < 0:
                continue
            filled += 1
            last = position + 1
            before = mark[item]
            if before == seen:
                again += 1
                continue
            mark[item] = seen
            if before == wanted:
                hit[user, position] = True
                if graded:
                    grade[user, position] = truth_grade[first + offset[item]]
        if filled < last:
            gaps += 1
        lengths[user] = filled - again
        duplicates += again
        filled_cells += filled
    return duplicates, gaps, filled_cells


@numba.njit(cache=True, nogil=True)
def positions_in_rows(score, width, out, start, stop):
    """For rows ``start .. stop`` of ``width`` scores each (``score`` flat, one user's list per
    row): ``out[cell]``, the cell's 0-based position in its row ordered by descending score,
    equal scores in row order (a stable sort of the negated scores, one row at a time)."""
    negated = np.empty(width, dtype=score.dtype)
    for row in range(start, stop):
        first = row * width
        for j in range(width):
            negated[j] = -score[first + j]
        order = np.argsort(negated, kind="mergesort")
        for j in range(width):
            out[first + order[j]] = j


@numba.njit(cache=True, nogil=True)
def mark_judged(items_at, judged_starts, judged_item, found, n_items, start, stop):
    """Mark the cells of users ``start .. stop`` that hold one of their judged non-relevant
    items (``judged_item[judged_starts[u]:judged_starts[u + 1]]``, user ``u``'s). One table
    indexed by item code holds ``u + 1`` for the items of user ``u``, so it is never cleared;
    a user with no judged item is skipped."""
    mark = np.zeros(n_items, dtype=np.int32)
    for user in range(start, stop):
        first, last = judged_starts[user], judged_starts[user + 1]
        if first == last:
            continue
        for row in range(first, last):
            mark[judged_item[row]] = user + 1
        for position in range(items_at.shape[1]):
            item = items_at[user, position]
            if item >= 0 and mark[item] == user + 1:
                found[user, position] = True


@numba.njit(cache=True, nogil=True)
def blank_duplicates(items_at, n_items, start, stop):
    """Set to -1 every cell of users ``start .. stop`` whose item occurs earlier in the row."""
    seen = np.zeros(n_items, dtype=np.int32)
    for user in range(start, stop):
        tag = user + 1
        for position in range(items_at.shape[1]):
            item = items_at[user, position]
            if item >= 0:
                if seen[item] == tag:
                    items_at[user, position] = -1
                else:
                    seen[item] = tag


@numba.njit(cache=True, nogil=True)
def primitive_rows(items, other, hit, scores, other_scores, minmax, rows, k, n_items, start, stop, gain, unseen):
    """Serendipity against the primitive model and unexpectedness (as
    :mod:`metrics_core.metrics.primitive` defines them) of users ``rows[start:stop]``, from
    both models' lists (``items``, ``other``: users x positions codes, -1 empty), the model's
    ``hit`` cells and, when ``minmax``, both models' scores: ``gain[i]`` and ``unseen[i]``
    for user ``rows[i]`` (unseen NaN for an empty top K).

    Per user, the primitive's top K is written into a table indexed by item code (its
    position), read for each cell of the model's top K, then cleared (items are distinct
    within a row). A cell at position p of a top K of n items scales to (n − p) / n, or with
    ``minmax`` to (s − min) / (max − min) of its list's scores (1 when they are all equal)."""
    at = np.full(n_items, -1, dtype=np.int32)
    width, other_width = min(k, items.shape[1]), min(k, other.shape[1])
    for i in range(start, stop):
        user = rows[i]
        n, low, high = 0, np.inf, -np.inf
        for position in range(width):
            if items[user, position] >= 0:
                n += 1
                if minmax:
                    low, high = min(low, scores[user, position]), max(high, scores[user, position])
        m, other_low, other_high = 0, np.inf, -np.inf
        for position in range(other_width):
            item = other[user, position]
            if item >= 0:
                at[item] = position
                m += 1
                if minmax:
                    value = other_scores[user, position]
                    other_low, other_high = min(other_low, value), max(other_high, value)
        total, missing = 0.0, 0
        for position in range(width):
            item = items[user, position]
            if item < 0:
                continue
            found = at[item]
            if found < 0:
                missing += 1
            if not hit[user, position]:
                continue
            if minmax:
                mine = (scores[user, position] - low) / (high - low) if high > low else 1.0
            else:
                mine = (n - position) / n
            theirs = 0.0
            if found >= 0:
                if minmax:
                    theirs = (other_scores[user, found] - other_low) / (other_high - other_low) \
                        if other_high > other_low else 1.0
                else:
                    theirs = (m - found) / m
            if mine > theirs:
                total += mine - theirs
        for position in range(other_width):
            if other[user, position] >= 0:
                at[other[user, position]] = -1
        gain[i] = total
        unseen[i] = missing / n if n > 0 else np.nan


SEVERAL_CATEGORIES, NO_CATEGORY = -1, -2  # (share_kinds' kinds of an item without one category)


@numba.njit(cache=True, nogil=True)
def _mix_of(cells, shares, kinds, mix):
    """Set ``mix`` to the sum of ``shares``' rows (items x categories, dense) over the items of
    ``cells`` (item codes, -1 empty) that have a category, in their order, and return how many
    there are (a list's or a history's mix is that sum over them). ``kinds`` (:func:`share_kinds`)
    says which items have one category, whose row adds 1 there and 0 elsewhere: added as such,
    without reading the row (the rows of 50,000 items outgrow a core's cache; their kinds do not).
    Called once per row, not per item: called per item, numba did not inline it, and each call
    cost about 15 ns, more than the sums."""
    mix[:] = 0.0
    counted = 0
    for item in cells:
        if item < 0:
            continue
        kind = kinds[item]
        if kind >= 0:
            mix[kind] += 1.0
            counted += 1
        elif kind == SEVERAL_CATEGORIES:
            for category in range(shares.shape[1]):
                mix[category] += shares[item, category]
            counted += 1
    return counted


def share_kinds(shares: np.ndarray) -> np.ndarray:
    """Per item of ``shares`` (items x categories, dense): its one category's index when its row
    is 1 there and 0 elsewhere, :data:`SEVERAL_CATEGORIES` for another row whose shares add up to
    more than 0 (an item with a category), :data:`NO_CATEGORY` for the others (int32).

    >>> share_kinds(np.array([[0.0, 1.0], [0.5, 0.5], [0.0, 0.0]])).tolist()
    [1, -1, -2]
    """
    kinds = np.where(shares.sum(axis=1) > 0, SEVERAL_CATEGORIES, NO_CATEGORY).astype(np.int32)
    one = (np.count_nonzero(shares, axis=1) == 1) & (shares.max(axis=1, initial=0.0) == 1.0)
    kinds[one] = shares[one].argmax(axis=1)
    return kinds


@numba.njit(cache=True, nogil=True)
def miscalibration_rows(items, rows, width, shares, kinds, indptr, indices, data, alpha, out, start, stop):
    """C_KL (as :func:`metrics_core.metrics.calibration.miscalibration` defines it) of users
    ``rows[start:stop]``' first ``width`` places of ``items`` (users x positions item codes, -1
    empty): the user's list mix q is the mean of ``shares`` (items x categories, dense) over its
    items with a category (``kinds``: :func:`share_kinds`), its history mix p the user's row of a
    CSR matrix (``indptr``, ``indices``, ``data``), and ``out[i]`` = Σ over p > 0 of
    p·log(p / ((1 − α)·q + α·p)) for user ``rows[i]``; NaN when the list has no item with a
    category or the history none. One pass over each user's items into a mix of its own."""
    mix = np.zeros(shares.shape[1])
    for i in range(start, stop):
        user = rows[i]
        counted = _mix_of(items[user, :width], shares, kinds, mix)
        total, positive = 0.0, False
        for entry in range(indptr[user], indptr[user + 1]):
            p = data[entry]
            if p > 0:
                positive = True
                q = mix[indices[entry]] / counted if counted > 0 else 0.0
                total += p * np.log(p / ((1.0 - alpha) * q + alpha * p))
        out[i] = total if positive and counted > 0 else np.nan


@numba.njit(cache=True, nogil=True)
def mix_rows(indptr, indices, shares, kinds, sizes, out_indptr, out_indices, out_data, count_only, start, stop):
    """The mean of ``shares`` (items x categories, dense) over the items of rows ``start .. stop``
    of a CSR matrix (``indptr``, ``indices``) that have a category (``kinds``: :func:`share_kinds`): with
    ``count_only``, each row's categories with a share into ``sizes[row]``; else the row's mix
    written from ``out_indptr[row]`` (categories ascending; the sums in the row's item order times
    1 / its items with a category, as scipy's products give them)."""
    categories = shares.shape[1]
    mix = np.zeros(categories)
    for row in range(start, stop):
        counted = _mix_of(indices[indptr[row]:indptr[row + 1]], shares, kinds, mix)
        if count_only:
            size = 0
            for category in range(categories):
                if mix[category] != 0.0:
                    size += 1
            sizes[row] = size
            continue
        scale = 1.0 / counted if counted > 0 else 0.0
        at = out_indptr[row]
        for category in range(categories):
            if mix[category] != 0.0:
                out_indices[at] = category
                out_data[at] = scale * mix[category]
                at += 1


@numba.njit(cache=True, nogil=True)
def sort_segments(key, bounds, start, stop):
    """Sort in place each segment ``key[bounds[s]:bounds[s + 1]]`` for s in ``start .. stop``: by
    insertion up to 32 values (a user's few ground-truth items), by numpy's sort beyond."""
    for segment in range(start, stop):
        low, high = bounds[segment], bounds[segment + 1]
        if high - low > 32:
            key[low:high].sort()
            continue
        for j in range(low + 1, high):
            value = key[j]
            i = j - 1
            while i >= low and key[i] > value:
                key[i + 1] = key[i]
                i -= 1
            key[i + 1] = value


@numba.njit(cache=True, nogil=True)
def listed_rows(items, width, out, start, stop):
    """``out[u]``: the items (codes >= 0) in the first ``width`` places of rows ``start .. stop``."""
    for user in range(start, stop):
        count = 0
        for position in range(width):
            if items[user, position] >= 0:
                count += 1
        out[user] = count


@numba.njit(cache=True, nogil=True)
def ideal_rows(starts, depth, gains, discounts, out, start, stop):
    """The ideal DCG of rows ``start .. stop``: ``out[i]`` = Σ over rank r < ``depth[i]`` of
    ``gains[starts[i] + r]`` (a user's gains, highest first) times ``discounts[r]``, added in rank order."""
    for i in range(start, stop):
        total = 0.0
        first = starts[i]
        for rank in range(depth[i]):
            total += gains[first + rank] * discounts[rank]
        out[i] = total


@numba.njit(cache=True, nogil=True)
def histogram_rows(scores, first, last, span, bins, edges, counts, start, stop):
    """Count the scores of rows ``start .. stop`` (NaN: empty) in equal bins from ``first`` to
    ``last`` (``edges``, ``span`` = last − first and ``bins`` in the scores' own type), each
    position's in its row of ``counts`` (positions x bins: a top K is the sum of its first K rows),
    exactly as ``np.histogram(values, bins, range=(first, last))`` bins them: the index (v − first) / span ·
    bins in the scores' type, truncated, the last edge in the last bin, then moved by one where
    rounding put it beside the bin whose edges hold v; values outside the range are not counted."""
    last_bin = len(edges) - 2
    for user in range(start, stop):
        for position in range(scores.shape[1]):
            value = scores[user, position]
            if not (value >= first and value <= last):  # (False for NaN)
                continue
            index = int((value - first) / span * bins)
            if index > last_bin:
                index = last_bin
            if value < edges[index]:
                index -= 1
            elif index != last_bin and value >= edges[index + 1]:
                index += 1
            counts[position, index] += 1


@numba.njit(cache=True, nogil=True)
def shared_depth_rows(a, b, n_items, by_depth, grows, start, stop):
    """For rows ``start .. stop`` of two lists (users x positions item codes, -1 empty, items
    distinct within a row): ``grows[row, d]`` += 1 for each item both hold whose later position
    of the two is d (from 0); without ``by_depth``, ``grows[row, 0]`` counts them all (Jaccard's
    intersection, in a users x 1 table). One table indexed by item code holds ``row + 1`` and the
    item's position in ``a``, so it is never cleared."""
    mark = np.zeros(n_items, dtype=np.int64)
    at = np.zeros(n_items, dtype=np.int64)
    for row in range(start, stop):
        for position in range(a.shape[1]):
            item = a[row, position]
            if item >= 0:
                mark[item] = row + 1
                at[item] = position
        for position in range(b.shape[1]):
            item = b[row, position]
            if item >= 0 and mark[item] == row + 1:
                grows[row, max(at[item], position) if by_depth else 0] += 1


@numba.njit(cache=True, nogil=True)
def shared_pair_rows(block, width, n_models, n_items, shared, first_row):
    """For each row of ``block`` (rows x models·width item codes: each model's first ``width``
    places side by side, -1 empty, items distinct within a model's places): ``shared[first_row +
    row, pair]`` += 1 for each item two models both hold, pair (m1, m2) with m1 < m2 numbered in
    reading order (0-1, 0-2, .., 1-2, ..). One pass over the row: an item's bit set of the models
    seen holding it so far, in a table indexed by item code stamped with ``row + 1`` (never
    cleared); fewer than 64 models."""
    stamp = np.zeros(n_items, dtype=np.int64)
    bits = np.zeros(n_items, dtype=np.int64)
    for row in range(block.shape[0]):
        for model in range(n_models):
            for position in range(width):
                item = block[row, model * width + position]
                if item < 0:
                    continue
                if stamp[item] != row + 1:
                    stamp[item] = row + 1
                    bits[item] = 0
                held = bits[item]
                first = 0
                while held:
                    if held & 1:
                        pair = first * (2 * n_models - first - 1) // 2 + model - first - 1
                        shared[first_row + row, pair] += 1
                    held >>= 1
                    first += 1
                bits[item] |= 1 << model


@numba.njit(cache=True, nogil=True)
def sparse_entries(indptr, indices, data, rows, columns, out, start, stop):
    """``out[i]`` = the entry at (``rows[i]``, ``columns[i]``) of a CSR matrix (``indptr``,
    ``indices`` sorted within each row, ``data``), 0 where it has none, for ``i`` in ``start ..
    stop``: a binary search of the row's columns (scipy's ``matrix[rows, columns]`` reads each
    row from its start: 1.25 µs a look-up in rows of 1,900 entries)."""
    for i in range(start, stop):
        low, end = indptr[rows[i]], indptr[rows[i] + 1]
        high, column = end, columns[i]
        while low < high:
            middle = (low + high) >> 1
            if indices[middle] < column:
                low = middle + 1
            else:
                high = middle
        out[i] = data[low] if low < end and indices[low] == column else 0.0


@numba.njit(cache=True, nogil=True)
def first_filled_rows(items, out, start, stop):
    """``out[u]``: the first place of row ``u`` (``start .. stop``) that holds an item (code >= 0),
    the rows' width when none does; each row is read up to its first item."""
    width = items.shape[1]
    for user in range(start, stop):
        place = 0
        while place < width and items[user, place] < 0:
            place += 1
        out[user] = place


def read_only_view(values: np.ndarray) -> np.ndarray:
    """A read-only view of ``values`` (as pandas hands out its columns' arrays): the callers pass
    the loops one type whoever made the arrays, the type compiled at install."""
    view = values.view()
    view.flags.writeable = False
    return view


def read_only_c(values: np.ndarray) -> np.ndarray:
    """``values`` as a read-only C-contiguous array (a view when they are one already, else a
    copy): the one layout the loops that take it are compiled for."""
    return read_only_view(np.ascontiguousarray(values))


def load_usual() -> None:
    """Load from numba's cache the loops for the types a large Parquet or DataFrame input
    usually gives (with binary relevance or whole grades), so that the first real call finds
    them loaded: 32-bit item codes and ranks
    and 64-bit scores as read-only columns (pandas hands out read-only views), user codes
    read-only (the read ids themselves) or not (looked up), lists read-only or not, and the
    streamed placing's read-only codes with 64- or 32-bit ranks."""
    ranks, items, scores = (read_only_view(np.ones(1, kind)) for kind in (np.int32, np.int32, np.float64))
    mark_rows(np.zeros(2, bool), items, 0, 0, 1)  # (the id index's marking: a column's ids as pandas gives them)
    for users in (np.zeros(1, np.int32), read_only_view(np.zeros(1, np.int32))):
        scatter_rows(users, ranks, 1, 2, items, np.zeros(2, np.int32), 0, 1)
        scatter_rows(users, ranks, 1, 2, scores, np.zeros(2), 0, 1)
    for rank_type in (np.int64, np.int32):  # (streamed: the file's ranks as Arrow decodes them)
        ranks = read_only_view(np.ones(1, rank_type))
        place_ranked(items, items, ranks, scores, 2, 2, np.zeros(2, np.int32), np.zeros(2))
    for writeable in (True, False):
        items = np.zeros((1, 2), dtype=np.int32)
        items.flags.writeable = writeable
        join_users(items, np.array([0, 1]), np.zeros(1, np.int64), np.ones(1), np.zeros((1, 2), bool),
                   np.zeros((0, 0), np.float32), False, np.zeros(1, np.int32), 1, 0, 1)
        join_users(items, np.array([0, 1]), np.zeros(1, np.int64), np.ones(1), np.zeros((1, 2), bool),
                   np.zeros((1, 2), np.uint8), True, np.zeros(1, np.int32), 1, 0, 1)  # (whole grades: ratings)


def compile_all() -> None:
    """Compile (or load from the cache) every kernel for the types the encoding passes: codes
    and ranks as int32 or int64, scores as float32 or float64, lists read-only or not."""
    ints = (np.int32, np.int64)
    for id_type in ints:  # (ids as read, read-only, or as a fresh array: run heads, concatenated tables)
        for writeable in (True, False):
            ids = np.zeros(1, id_type)
            ids.flags.writeable = writeable
            mark_rows(np.zeros(1, bool), ids, 0, 0, 1)
    for user_type in ints:
        for position_type in ints:
            for value_type in (np.int32, np.int64, np.float32, np.float64):
                out = np.zeros(2, dtype=value_type if value_type in (np.float32, np.float64) else np.int32)
                scatter_rows(np.zeros(1, user_type), np.ones(1, position_type), 1, 2, np.ones(1, value_type), out, 0, 1)
    for writeable in (True, False):
        items = np.zeros((1, 2), dtype=np.int32)
        items.flags.writeable = writeable
        for grade_type in (np.float32, np.uint8):  # (Truth.cell_grade_type)
            join_users(items, np.array([0, 1]), np.zeros(1, np.int64), np.ones(1), np.zeros((1, 2), bool),
                       np.zeros((1, 2), grade_type), True, np.zeros(1, np.int32), 1, 0, 1)
    for score_type in (np.float32, np.float64):  # (read-only: the file's column as Arrow gives it)
        positions_in_rows(read_only_view(np.zeros(2, score_type)), 2, np.zeros(2, np.int64), 0, 1)
    for item_type in ints:  # (the lists' codes: int32, or int64 past 2^31 cells)
        for index_type in ints:  # (a CSR matrix's indptr and indices: the training items of each user)
            mark_judged(read_only_view(np.zeros((1, 2), item_type)), read_only_view(np.array([0, 1], index_type)),
                        read_only_view(np.zeros(1, index_type)), np.zeros((1, 2), bool), 1, 0, 1)
    blank_duplicates(np.zeros((1, 2), dtype=np.int32), 1, 0, 1)
    for writeable in (True, False):  # (two models' first K positions: strided views of the lists)
        lists = np.zeros((1, 3), dtype=np.int32)
        lists.flags.writeable = writeable
        for by_depth in (True, False):
            shared_depth_rows(lists[:, :2], lists[:, :2], 1, by_depth, np.zeros((1, 2), np.int64), 0, 1)
    for item_type in ints:  # (the models' first K places side by side: a fresh block, int32 or int64 codes)
        shared_pair_rows(np.zeros((1, 4), item_type), 2, 2, 1, np.zeros((1, 1), np.int32), 0)
    codes = read_only_view(np.zeros(1, np.int32))
    for rank_type in ints:
        for score_type in (np.float32, np.float64):
            ranks, scores = read_only_view(np.ones(1, rank_type)), read_only_view(np.ones(1, score_type))
            place_ranked(codes, codes, ranks, scores, 2, 2, np.zeros(2, np.int32), np.zeros(2, score_type))
    items, hit = read_only_view(np.zeros((1, 2), np.int32)), read_only_view(np.zeros((1, 2), bool))
    for score_type in (np.float32, np.float64):  # (read-only C arrays: metrics.primitive passes them so)
        for other_type in (np.float32, np.float64):
            scores, other_scores = (read_only_view(np.zeros((1, 2), kind)) for kind in (score_type, other_type))
            primitive_rows(items, items, hit, scores, other_scores, True, np.zeros(1, np.int64), 2, 1, 0, 1,
                           np.zeros(1), np.zeros(1))
    ideal_rows(np.zeros(1, np.int64), np.zeros(1, np.int64), np.ones(1), np.ones(1), np.zeros(1), 0, 1)
    for item_type in ints:  # (the lists' codes, read-only when mapped from a kept dataset)
        for writeable in (True, False):
            cells = np.zeros((1, 2), item_type)
            listed_rows(cells if writeable else read_only_view(cells), 2, np.zeros(1, np.int64), 0, 1)
            first_filled_rows(cells if writeable else read_only_view(cells), np.zeros(1, np.int64), 0, 1)
    for key_type in ints:  # (the ground truth's pair keys: int64, or the users' own type)
        sort_segments(np.zeros(2, key_type), np.array([0, 2], np.int64), 0, 1)
    for score_type in (np.float32, np.float64):
        one = score_type(1)
        histogram_rows(read_only_view(np.zeros((1, 2), score_type)), one, one, one, one,
                       np.zeros(2, score_type), np.zeros((2, 1), np.int64), 0, 1)
    for index_type in ints:  # (scipy's CSR index arrays: int32, or int64 from 2^31 entries)
        sizes, shares = np.zeros(2, np.int64), np.ones((1, 1))
        kinds = share_kinds(shares)  # (the items' kinds, as calibration passes them)
        mix_rows(np.zeros(2, index_type), np.zeros(1, index_type), shares, kinds, sizes[1:], sizes,
                 np.zeros(1, np.int32), np.zeros(1), True, 0, 1)
        for item_type in ints:  # (the lists' own codes, read where they are)
            miscalibration_rows(read_only_view(np.zeros((1, 2), item_type)), np.zeros(1, np.int64), 2, shares, kinds,
                                np.zeros(2, index_type), np.zeros(1, index_type), np.ones(1), 0.01, np.zeros(1), 0, 1)
        zero = np.zeros(1, np.int64)
        sparse_entries(read_only_view(np.zeros(2, index_type)), read_only_view(np.zeros(1, index_type)), np.ones(1),
                       zero, zero, np.zeros(1), 0, 1)
    load_usual()  # (read-only columns: pandas' views)
