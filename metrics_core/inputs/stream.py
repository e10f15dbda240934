"""A large Parquet file's lists placed into cells as its rank and score columns are read.

Rows in any order (as a distributed scoring job writes them) are placed cell by cell. Read
whole first, their rank and score columns are 1.2 GB of new arrays at 1M users x 100 (int32
ranks, float64 scores) that are written once, read once and dropped, and the first touch of
new memory costs CPU. Here the id columns
are read and coded first (as for several models); then each row group's rank and score are
decoded, a few MB at a time on each thread, and placed at once by
:func:`~metrics_core.inputs.kernels.place_ranked`. Whole lists in order stream too: read
whole, their rank and score columns were reshaped into the cells at no copy, but making those
columns cost more than placing rows that come in order.

This path only takes input it can place exactly as the general one would: every rank an
integer in ``1 .. P`` and every score finite, with P, the longest list, known beforehand from
the row groups' statistics. A rank outside that range, a score that is not finite, a longest
list shorter than the statistics said, or two rows for one cell make it return None, and the
caller reads the file the general way, whose checks name the offending rows.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from metrics_core._numeric.parallel import THREADS, map_chunks, thread_shares
from metrics_core.inputs.columns import Columns
from metrics_core.inputs.encode import MAX_POSITIONS, full, lists_from_cells, placed_score_type, score_cells
from metrics_core.inputs.encoded import Lists, Truth


def longest_list(path, columns: Columns) -> int | None:
    """P, the longest list, by the statistics of the rank column of the Parquet file at
    ``path``; None when the file cannot be streamed: no integer rank column, a row group
    without minimum and maximum or with a null, a rank below 1 or above the limit, or a score
    column that is not numbers without nulls."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from metrics_core.inputs.read import leaf_statistics, without_nulls

    with pq.ParquetFile(path) as file:
        schema = file.schema_arrow
        if columns.rank not in schema.names or not pa.types.is_integer(schema.field(columns.rank).type):
            return None
        if columns.score in schema.names:
            kind = schema.field(columns.score).type
            if not (pa.types.is_integer(kind) or pa.types.is_floating(kind)) or not without_nulls(
                    leaf_statistics(file, columns.score)):
                return None
        ranks = leaf_statistics(file, columns.rank)
    if not ranks or not without_nulls(ranks) or not all(s.has_min_max for s in ranks):
        return None
    low, high = min(int(s.min) for s in ranks), max(int(s.max) for s in ranks)
    return high if low >= 1 and high <= MAX_POSITIONS else None


def encode_streamed(name: str, path, columns: Columns, user: np.ndarray, item: np.ndarray, n_users: int,
                    n_items: int, positions: int, truth: Callable[[], Truth], score_positions: int | None
                    ) -> Lists | None:
    """The lists of the file at ``path`` whose rows' user and item codes are ``user`` and
    ``item`` (as the id index codes its id columns) and whose longest list is ``positions``
    (:func:`longest_list`), ordered by rank, joined to the ground truth ``truth()`` gives once
    they are placed; None when the file must be read the general way (see the module's
    docstring)."""
    score_width = positions if score_positions is None else min(score_positions, positions)
    placed = _place_streamed(path, columns, user, item, n_users, positions, score_width)
    if placed is None:
        return None
    items_at, scores = placed
    return lists_from_cells(name, items_at, scores, truth(), n_items, len(user), "rank", True, [])


def _place_streamed(path, columns: Columns, user: np.ndarray, item: np.ndarray, n_users: int, positions: int,
                    score_width: int) -> tuple[np.ndarray, np.ndarray | None] | None:
    """The users x ``positions`` item codes (-1: empty) and users x ``score_width`` scores (NaN:
    empty) of the file's rows, their row groups shared between threads (each with its own
    reader); None when a rank or score cannot be placed, the longest list is shorter, or Arrow
    cannot decode a row group (the general read then names the problem)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from metrics_core.inputs.kernels import place_ranked, read_only_view

    with pq.ParquetFile(path) as file:
        meta, schema = file.metadata, file.schema_arrow
    has_score = columns.score in schema.names
    starts = np.cumsum([0] + [meta.row_group(group).num_rows for group in range(meta.num_row_groups)])
    user, item = (read_only_view(codes.astype(np.int32, copy=False)) for codes in (user, item))
    items_at = full(n_users * positions, -1, np.int32)
    score_type = placed_score_type(schema.field(columns.score).type.to_pandas_dtype() if has_score else np.float64)
    scores = score_cells(n_users * score_width if has_score else 0, len(user) == len(items_at), score_type)
    no_score = read_only_view(np.zeros(0, score_type))
    names = [columns.rank, columns.score] if has_score else [columns.rank]

    def place(first: int, stop: int) -> tuple[int, int]:
        bad, longest = 0, 0
        with pq.ParquetFile(path) as reader:  # (closed here: the app reads stored files for days)
            for group in range(first, stop):
                part = reader.read_row_group(group, columns=names, use_threads=False)
                rank = part.column(columns.rank).to_numpy()
                if rank.dtype not in (np.int32, np.int64):
                    rank = read_only_view(rank.astype(np.int64))  # (a rank beyond int64 wraps, is refused)
                score = no_score
                if has_score:
                    score = part.column(columns.score).to_numpy()
                    if score.dtype != score_type:
                        score = read_only_view(score.astype(score_type))
                rows = slice(starts[group], starts[group + 1])
                group_bad, group_longest = place_ranked(user[rows], item[rows], rank, score, positions,
                                                        score_width if has_score else 0, items_at, scores)
                bad, longest = bad + group_bad, max(longest, group_longest)
        return bad, longest

    try:
        placed = map_chunks(place, thread_shares(meta.num_row_groups), threads=THREADS)
    except (pa.ArrowException, OSError):  # (a page Arrow cannot decode: the general read names the file)
        return None
    if sum(bad for bad, _ in placed) or max(longest for _, longest in placed) != positions:
        return None
    return (items_at.reshape(n_users, positions),
            scores.reshape(n_users, score_width) if has_score else None)

