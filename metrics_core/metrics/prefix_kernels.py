"""Compiled loops for the beyond-accuracy metrics at every cut-off (:mod:`metrics_core.metrics.beyond_curves`),
and per user at one K from :data:`~metrics_core.inputs.encoded.KERNEL_MIN` cells.

Each loop reads one range of users (``start .. stop``) of the lists (users x positions item codes,
-1 empty) once, position by position, keeping each user's running sums, and after position j
adds the user's value at k = j + 1 to ``sums[j]``, its square to ``squares[j]`` and 1 to
``users[j]`` when the user has a value there. A user's value at k is the metric of its first k
places, exactly as the metric at K = k computes it (the tests compare every k).

Like :mod:`metrics_core.inputs.kernels` they are compiled once per machine (``cache=True``), release
the GIL and run on a few threads, each range with its own sums, added afterwards.
"""

from __future__ import annotations

import numpy as np

from metrics_core.inputs.jit import numba


@numba.njit(cache=True, nogil=True)
def _add(value, j, sums, squares, users):
    sums[j] += value
    squares[j] += value * value
    users[j] += 1


@numba.njit(cache=True, nogil=True)
def cell_means(items, value, counted, last, sums, squares, users, start, stop):
    """The mean of ``value[item]`` over the first k places' items that are ``counted`` (a user
    with none has no value): novelty and average recommendation popularity."""
    for u in range(start, stop):
        total = 0.0
        n = 0
        for j in range(items.shape[1]):
            item = items[u, j]
            if item >= 0 and counted[item]:
                total += value[item]
                n += 1
            if n:
                _add(total / n, j, sums, squares, users)
        last[u] = total / n if n else np.nan


@numba.njit(cache=True, nogil=True)
def cell_means_at_k(items, value, flagged, flag_apart, last, start, stop):
    """:func:`cell_means` at the last of the places ``items`` holds alone (no sums at every k: a
    new K asks one), and how many of the cells of rows ``start .. stop`` hold a flagged item
    (novelty's items unknown to training), returned. ``value`` is NaN for an item not counted,
    which is a flagged item unless ``flag_apart`` (then ``flagged`` says which are): one table
    looked up per cell, where three (a value, counted, flagged) made the pass a third slower at 1M
    users, rows of 100 streaming through the cache past them."""
    found = 0
    for u in range(start, stop):
        total = 0.0
        n = 0
        for j in range(items.shape[1]):
            item = items[u, j]
            if item >= 0:
                v = value[item]
                if v == v:
                    total += v
                    n += 1
                elif not flag_apart:
                    found += 1
                if flag_apart and flagged[item]:
                    found += 1
        last[u] = total / n if n else np.nan
    return found


@numba.njit(cache=True, nogil=True)
def popularity_serendipity(items, hit, p_position, p_item, last, sums, squares, users, start, stop):
    """The mean over the first k places' items of max(p(rank) − pu(item), 0)·rel (RecTools'
    Serendipity, :func:`metrics_core.metrics.popularity.popularity_serendipity`)."""
    for u in range(start, stop):
        total = 0.0
        n = 0
        for j in range(items.shape[1]):
            item = items[u, j]
            if item >= 0:
                n += 1
                if hit[u, j]:
                    total += max(p_position[j] - p_item[item], 0.0)
            if n:
                _add(total / n, j, sums, squares, users)
        last[u] = total / n if n else np.nan


@numba.njit(cache=True, nogil=True)
def score_entropy(scores, last, sums, squares, users, start, stop):
    """The entropy of the softmax of the first k places' scores (NaN: an empty place), as
    :func:`metrics_core.metrics.scores.score_entropy` defines it: log Z − W / Z with Z = Σ exp s and
    W = Σ exp(s)·s, s shifted by the largest score so far; when a larger one comes (m to m'), both
    sums move to it: Z' = e^(m − m')·Z, W' = e^(m − m')·(W + (m − m')·Z). At least 0 (rounding);
    a user without a score there has no value (at one K: :func:`score_entropy_at_k`)."""
    width = scores.shape[1]
    for u in range(start, stop):
        peak = -np.inf
        total = 0.0
        weighted = 0.0
        value = np.nan
        for j in range(width):
            score = scores[u, j]
            if score == score:  # (NaN: an empty place)
                if score > peak:
                    if total > 0.0:
                        scale = np.exp(peak - score)
                        weighted = scale * (weighted + (peak - score) * total)
                        total *= scale
                    peak = score
                shifted = score - peak
                weight = np.exp(shifted)
                total += weight
                weighted += weight * shifted
            if total > 0.0:
                entropy = np.log(total) - weighted / total
                value = entropy if entropy > 0.0 else 0.0
                _add(value, j, sums, squares, users)
        last[u] = value


@numba.njit(cache=True, nogil=True)
def score_entropy_at_k(scores, last, start, stop):
    """:func:`score_entropy` at the last place alone, in two passes over each row's few scores: the
    largest first, then Z and W shifted by it, with no rescaling (lists not in score order make a
    new largest score, and a branch the processor mispredicts, at many places: at 1M users x 8
    random scores 60 ms against 170 ms). The same value up to rounding (numpy's blocks take the
    largest first too)."""
    width = scores.shape[1]
    for u in range(start, stop):
        peak = -np.inf
        for j in range(width):
            score = scores[u, j]
            if score > peak:  # (NaN, an empty place, is never larger)
                peak = score
        if peak == -np.inf:  # (no score there: no value; scores are finite)
            last[u] = np.nan
            continue
        total = 0.0
        weighted = 0.0
        for j in range(width):
            score = scores[u, j]
            if score == score:
                shifted = np.float64(score) - np.float64(peak)
                weight = np.exp(shifted)
                total += weight
                weighted += weight * shifted
        entropy = np.log(total) - weighted / total
        last[u] = entropy if entropy > 0.0 else 0.0


@numba.njit(cache=True, nogil=True)
def cosine_lists(items, unit, has_vector, list_divisor, one_item_self, last, diversity, similarity, start, stop):
    """Intra-list cosine similarity and diversity of the first k places (the similarity summed
    over pairs of items with a vector, kept as each new item's inner product with the sum of
    those before it). ``diversity`` and ``similarity`` are each (sums, squares, users); ``last[u]``
    is the user's similarity summed over pairs and its items with a vector, at its last place.
    Similarity: the mean over pairs, clipped to [−1, 1], for two items or more (1 for one with
    ``one_item_self``). Diversity: the distance 1 − cos summed over pairs, divided by the pairs
    (two items or more; 0 for one with ``one_item_self``) or by the items (``list_divisor``: 0
    under two, every listed user counting)."""
    dimensions = unit.shape[1]
    running = np.zeros(dimensions)
    for u in range(start, stop):
        running[:] = 0.0
        total = 0.0
        n = 0
        listed = False
        for j in range(items.shape[1]):
            item = items[u, j]
            if item >= 0:
                listed = True
                if has_vector[item]:
                    inner = 0.0
                    for d in range(dimensions):
                        inner += running[d] * unit[item, d]
                        running[d] += unit[item, d]
                    total += inner
                    n += 1
            if not listed:
                continue
            pairs = n * (n - 1) / 2
            if n >= 2:
                _add(min(max(total / pairs, -1.0), 1.0), j, similarity[0], similarity[1], similarity[2])
                _add((pairs - total) / (n if list_divisor else pairs), j, diversity[0], diversity[1], diversity[2])
            elif list_divisor or (one_item_self and n == 1):
                _add(0.0, j, diversity[0], diversity[1], diversity[2])
            if n == 1 and one_item_self:
                _add(1.0, j, similarity[0], similarity[1], similarity[2])
        last[u, 0] = total
        last[u, 1] = n


@numba.njit(cache=True, nogil=True)
def history_serendipity(items, hit, unit, has_vector, history_mean, history_count, over_list, sums, squares, users,
                        start, stop):
    """Serendipity against the user's history: the mean over the first k places' relevant items
    with a vector of 1 − cos(item, mean history vector), over those items or (``over_list``) over
    every item with a vector; users without a history have no value."""
    dimensions = unit.shape[1]
    for u in range(start, stop):
        if history_count[u] == 0:
            continue
        total = 0.0
        n = 0
        for j in range(items.shape[1]):
            item = items[u, j]
            if item >= 0 and has_vector[item]:
                if hit[u, j]:
                    inner = 0.0
                    for d in range(dimensions):
                        inner += unit[item, d] * history_mean[u, d]
                    total += 1.0 - inner
                    n += 1
                elif over_list:
                    n += 1
            if n:
                _add(total / n, j, sums, squares, users)


@numba.njit(cache=True, nogil=True)
def _scaled(value, low, high):
    """A score scaled to [0, 1] by its list's lowest and highest (1 when they are equal)."""
    return (value - low) / (high - low) if high > low else 1.0


@numba.njit(cache=True, nogil=True)
def primitive_lists(items, other, hit, scores, other_scores, minmax, n_items, serendipity, unexpected, start, stop):
    """Serendipity against the primitive model and unexpectedness (as
    :mod:`metrics_core.metrics.primitive` defines them) of the first k places at every k, from both
    models' lists (``other``: the primitive's, its width may differ) and, with ``minmax``, their scores.

    Per user, each model's places are written into a table indexed by item code. Going down the
    places, the items both top k hold grow by the model's item at place k when the primitive holds it
    at place k or before, and by the primitive's item at place k when the model holds it before place
    k: unexpectedness at k is (n − shared) / n of the n listed items. Serendipity at k sums, over the
    hit places so far, max(Pr − Prim, 0) with both scales of the top k (rank: (n − p) / n of place p;
    minmax: by the lowest and highest score so far), Prim 0 when the primitive's top k lacks the item:
    a pass over the hits at each k (a few per user). A user without a listed item has no value."""
    width, other_width = items.shape[1], other.shape[1]
    mine = np.full(n_items, -1, dtype=np.int32)
    theirs = np.full(n_items, -1, dtype=np.int32)
    hits = np.empty(width, dtype=np.int64)
    for u in range(start, stop):
        for j in range(width):
            if items[u, j] >= 0:
                mine[items[u, j]] = j
        for j in range(other_width):
            if other[u, j] >= 0:
                theirs[other[u, j]] = j
        n, m, shared, found = 0, 0, 0, 0
        low, high, other_low, other_high = np.inf, -np.inf, np.inf, -np.inf
        for j in range(width):
            item = items[u, j]
            if item >= 0:
                n += 1
                if minmax:
                    low, high = min(low, scores[u, j]), max(high, scores[u, j])
                if 0 <= theirs[item] <= j:
                    shared += 1
                if hit[u, j]:
                    hits[found] = j
                    found += 1
            if j < other_width:
                item = other[u, j]
                if item >= 0:
                    m += 1
                    if minmax:
                        other_low, other_high = min(other_low, other_scores[u, j]), max(other_high, other_scores[u, j])
                    if 0 <= mine[item] < j:
                        shared += 1
            if n == 0:
                continue
            total = 0.0
            for h in range(found):
                place = hits[h]
                at = theirs[items[u, place]]
                model = _scaled(scores[u, place], low, high) if minmax else (n - place) / n
                primitive = 0.0
                if 0 <= at <= j:
                    primitive = _scaled(other_scores[u, at], other_low, other_high) if minmax else (m - at) / m
                if model > primitive:
                    total += model - primitive
            _add(total, j, serendipity[0], serendipity[1], serendipity[2])
            _add((n - shared) / n, j, unexpected[0], unexpected[1], unexpected[2])
        for j in range(width):
            if items[u, j] >= 0:
                mine[items[u, j]] = -1
        for j in range(other_width):
            if other[u, j] >= 0:
                theirs[other[u, j]] = -1


@numba.njit(cache=True, nogil=True)
def recall_level_curves(start, position, need, levels, sums, squares, first, stop):
    """Interpolated precision at recall levels at every k (as
    :func:`metrics_core.metrics.accuracy.whole_list.precision_at_recall_levels` gives it at one
    K), for rows ``first .. stop``: row i's hits are cells ``start[i] .. start[i + 1]`` (places
    ``position``, ascending); a level needing ``need[level, i]`` hits takes, from that hit on, the
    highest precision j / rank_j so far. A row's values change only at its hits, so each change is
    added at the hit's place (``levels``: levels x places; ``sums`` and ``squares``: the mean over
    the levels and its square): their running sums over places are the sums over rows at every k."""
    n_levels = need.shape[0]
    best = np.zeros(n_levels)
    for i in range(first, stop):
        best[:] = 0.0
        before = 0.0
        for cell in range(start[i], start[i + 1]):
            j = cell - start[i] + 1
            place = position[cell]
            precision = j / (place + 1.0)
            total = 0.0
            for level in range(n_levels):
                if j >= need[level, i] and precision > best[level]:
                    levels[level, place] += precision - best[level]
                    best[level] = precision
                total += best[level]
            value = total / n_levels
            sums[place] += value - before
            squares[place] += value * value - before * before
            before = value


@numba.njit(cache=True, nogil=True)
def place_counts(items, out, start, stop):
    """``out[j, item] += 1`` for every item at place j of users ``start .. stop`` (one pass over the
    lists by rows; counting each place's column apart reads the lists across their rows)."""
    for u in range(start, stop):
        for j in range(items.shape[1]):
            item = items[u, j]
            if item >= 0:
                out[j, item] += 1


@numba.njit(cache=True, nogil=True)
def first_listed(items, out, start, stop):
    """``out[u]``: the first place of user u's list that holds an item (the list's width when none)."""
    for u in range(start, stop):
        out[u] = items.shape[1]
        for j in range(items.shape[1]):
            if items[u, j] >= 0:
                out[u] = j
                break


def means_at_last_place(loop, top, *arguments) -> np.ndarray:
    """Each row's value at the last place of ``top`` (its first K places) from ``loop``
    (:func:`popularity_serendipity`), on a few threads:
    the metric per user at one K (the sums over users at every k each thread keeps are left)."""
    last = np.empty(len(top))
    _rows_on_threads(lambda start, stop: loop(top, *arguments, last, *_accumulators(top), start, stop), len(top))
    return last


def cell_means_and_flagged(top: np.ndarray, value: np.ndarray, counted: np.ndarray,
                           flagged: np.ndarray) -> tuple[np.ndarray, int]:
    """Each row's :func:`cell_means` over its places ``top`` (its first K), and the cells holding a
    ``flagged`` item, by :func:`cell_means_at_k` on a few threads (``value`` finite)."""
    from metrics_core._numeric.parallel import map_chunks, thread_shares

    table = np.where(counted, value, np.nan)
    apart = not np.array_equal(flagged, ~counted)
    last = np.empty(len(top))
    found = map_chunks(lambda start, stop: cell_means_at_k(top, table, flagged, apart, last, start, stop),
                       thread_shares(len(top)))
    return last, int(sum(found))


def cosine_at_last_place(top, unit, has_vector) -> tuple[np.ndarray, np.ndarray]:
    """Each row's cosine summed over the pairs of its items with a vector, and those items, in the
    first K places ``top`` (:func:`cosine_lists` at one K)."""
    last = np.empty((len(top), 2))
    _rows_on_threads(lambda start, stop: cosine_lists(top, unit, has_vector, False, False, last, _accumulators(top),
                                                      _accumulators(top), start, stop), len(top))
    return last[:, 0], last[:, 1]


def _accumulators(top) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    width = top.shape[1]
    return np.zeros(width), np.zeros(width), np.zeros(width, dtype=np.int64)


def _rows_on_threads(work, rows: int) -> None:
    from metrics_core._numeric.parallel import map_chunks, thread_shares

    map_chunks(work, thread_shares(rows))


def compile_all() -> None:
    """Compile (or load from the cache) each loop for the lists' types: codes as int32 or int64,
    lists and hits read-only (mapped from a kept dataset) or not."""
    from metrics_core.inputs.kernels import read_only_view

    for item_type in (np.int32, np.int64):
        for writeable in (True, False):
            items = np.zeros((2, 3), dtype=item_type)
            hit = np.zeros((2, 3), dtype=bool)
            if not writeable:
                items, hit = read_only_view(items), read_only_view(hit)
            out = (np.zeros(3), np.zeros(3), np.zeros(3, np.int64))
            for top, hits in ((items, hit), (items[:, :2], hit[:, :2])):  # (at every k; at K, its first columns)
                cell_means(top, np.zeros(1), np.ones(1, bool), np.zeros(2), *out, 0, 1)
                cell_means_at_k(top, np.zeros(1), np.ones(1, bool), True, np.zeros(2), 0, 1)
                popularity_serendipity(top, hits, np.zeros(3), np.zeros(1), np.zeros(2), *out, 0, 1)
                cosine_lists(top, np.zeros((1, 2)), np.ones(1, bool), False, False, np.zeros((2, 2)), out, out, 0, 1)
            for count_type in (np.int32, np.int64):  # (history sizes: a sparse matrix's counts are int32)
                history_serendipity(items, hit, np.zeros((1, 2)), np.ones(1, bool), np.zeros((2, 2)),
                                    np.ones(2, count_type), False, *out, 0, 1)
            if not writeable:  # (the primitive-model loop takes read-only C arrays, scores too)
                for score_type in (np.float32, np.float64):
                    scores = read_only_view(np.zeros((2, 3), dtype=score_type))
                    primitive_lists(items, items, hit, scores, scores, True, 1, out, out, 0, 1)
            first_listed(items, np.zeros(2, np.int64), 0, 1)
            place_counts(items, np.zeros((3, 1), np.int32), 0, 1)
    for position_type in (np.int32, np.int64):  # (hit places: int32 or int64 coordinates)
        recall_level_curves(np.zeros(2, np.int64), np.zeros(1, position_type), np.ones((11, 1), np.int64),
                            np.zeros((11, 3)), np.zeros(3), np.zeros(3), 0, 1)
    for score_type in (np.float32, np.float64):
        for writeable in (True, False):
            scores = np.zeros((2, 3), dtype=score_type)
            scores = scores if writeable else read_only_view(scores)
            for top in (scores, scores[:, :2]):  # (at every k; at K, its first columns)
                score_entropy(top, np.zeros(2), np.zeros(3), np.zeros(3), np.zeros(3, np.int64), 0, 1)
                score_entropy_at_k(top, np.zeros(2), 0, 1)
