"""A large CSV whose wanted columns are all numbers, read in byte ranges on threads.

Arrow's whole-file reader keeps every block's columns until the end, and they are then joined
into one array per column: the values are written twice, each time into new memory, whose first
touch costs about a second per GB on this kind of machine. Here the file is memory-mapped and
cut at line ends into one range per thread; each range is read by Arrow's streaming reader a
block at a time (its buffers are reused from block to block) and each block's columns are copied
straight into the final arrays: faster than the whole-file read and the join, with half its peak
memory.

Each range writes into its own stretch of the arrays, sized from the rows of the file's first
block with room to spare; the stretches are then moved together, in the file's order. This path
only takes input it reads exactly as the whole-file reader would, and returns None for anything
else (the caller then reads the whole file): a file that cannot be memory-mapped, a null in a
wanted column, a quote character (quotes are not parsed here: every column of the file is
converted to a number, wanted or not, so that a quote anywhere fails to convert, where a quoted
text column could have hidden a line end and made one record two rows), a range with more rows
than its stretch holds, or any line Arrow cannot read.
"""

from __future__ import annotations

import itertools

import numpy as np

from metrics_core._numeric.parallel import THREADS, map_threads

PARTS_MIN_BYTES = 64 << 20  # smaller files are read whole (the ranges would gain little)
ROOM = 1.25  # each range's stretch holds this many times the rows its bytes suggest
MOVE_ROWS = 1 << 20  # rows moved at a time when the stretches are put together
BLOCK_BYTES = 1 << 20  # bytes of a range parsed at a time (Arrow's default block)


def read_in_parts(path, sep: str, decimal: str, header: list[str], types: dict, wanted: list[str],
                  rows_per_byte: float, null_values: list[str]) -> dict[str, np.ndarray] | None:
    """The columns ``wanted`` of the CSV at ``path`` (delimiter ``sep``, decimal mark
    ``decimal``, first line the ``header``) as numpy arrays, every column converted to its
    number type in ``types`` (name: Arrow number type, one for each column of the header), the
    file's ranges (one per thread) read on threads; ``rows_per_byte`` is the first block's
    density of rows (it sizes each range's stretch). None where the whole-file reader must read
    it (see the module's docstring)."""
    import pyarrow as pa

    try:
        with pa.memory_map(str(path)) as mapped:
            data = mapped.read_buffer()
    except (pa.ArrowException, OSError):  # (a file that cannot be mapped: the whole-file read takes it)
        return None
    body = _line_end(data, 0)
    if body is None or body >= data.size:
        return None
    cuts = _cuts(data, body, THREADS)
    starts = np.cumsum([0] + [int((stop - start) * rows_per_byte * ROOM) + 1024 for start, stop in cuts])
    out = {name: np.empty(int(starts[-1]), dtype=types[name].to_pandas_dtype()) for name in wanted}

    def read(part: int) -> int | None:
        start, stop = cuts[part]
        return _read_range(data.slice(start, stop - start), sep, decimal, header, types, null_values, out,
                           int(starts[part]), int(starts[part + 1]))

    try:
        counts = map_threads(read, list(range(len(cuts))), threads=len(cuts))
    except (pa.ArrowException, OSError):  # (a line Arrow cannot read: the whole-file read names the problem)
        return None
    if any(count is None for count in counts):
        return None
    total = _put_together(out, [int(s) for s in starts[:-1]], counts)
    return {name: values[:total] for name, values in out.items()}


def _line_end(data, at: int) -> int | None:
    """The position just after the first line end at or after ``at`` (None: there is none)."""
    found = np.frombuffer(data, dtype=np.uint8, count=data.size - at, offset=at)
    step = 1 << 20
    for first in range(0, len(found), step):
        ends = np.flatnonzero(found[first:first + step] == 10)
        if len(ends):
            return at + first + int(ends[0]) + 1
    return None


def _cuts(data, body: int, parts: int) -> list[tuple[int, int]]:
    """``(start, stop)`` byte ranges of whole lines covering ``body .. end`` in about ``parts``
    equal pieces."""
    bounds = [body]
    for part in range(1, parts):
        guess = body + (data.size - body) * part // parts
        end = _line_end(data, max(guess, bounds[-1]))
        if end is None or end >= data.size:
            break
        bounds.append(end)
    bounds.append(data.size)
    return [(start, stop) for start, stop in itertools.pairwise(bounds) if stop > start]


def _read_range(data, sep: str, decimal: str, header: list[str], types: dict, null_values: list[str],
                out: dict[str, np.ndarray], start: int, stop: int) -> int | None:
    """Read the lines in ``data`` (no header) a block at a time, every column as its type in
    ``types``, the columns of ``out`` into ``out[name][start:stop]``; the number of rows, or
    None when one of those has a null or the stretch is too short."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    read = pacsv.ReadOptions(column_names=header, use_threads=False, block_size=BLOCK_BYTES)
    parse = pacsv.ParseOptions(delimiter=sep, quote_char=False)
    convert = pacsv.ConvertOptions(column_types=types, include_columns=list(types), decimal_point=decimal,
                                   null_values=null_values)
    at = start
    with pacsv.open_csv(pa.BufferReader(data), read_options=read, parse_options=parse,
                        convert_options=convert) as reader:
        for batch in reader:
            rows = batch.num_rows
            if at + rows > stop:
                return None
            for name in out:
                column = batch.column(name)
                if column.null_count:
                    return None
                out[name][at:at + rows] = column.to_numpy()
            at += rows
    return at - start


def _put_together(out: dict[str, np.ndarray], starts: list[int], counts: list[int]) -> int:
    """Move each range's rows down to follow the previous range's (in place, a block of rows at
    a time, in increasing order, so that no row is overwritten before it is moved); the total."""
    def move(values: np.ndarray) -> None:
        to = counts[0]
        for start, count in zip(starts[1:], counts[1:], strict=True):
            for first in range(0, count, MOVE_ROWS):
                size = min(MOVE_ROWS, count - first)
                values[to + first:to + first + size] = values[start + first:start + first + size]
            to += count

    map_threads(move, list(out.values()))
    return sum(counts)
