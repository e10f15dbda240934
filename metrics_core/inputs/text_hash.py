"""Exact codes for a large Arrow text column, by a compiled hash table.

Arrow's dictionary encoding of a large column of distinct-ish ids is slow: every row's lookup in a
table of 1M texts misses the caches two or three times in a row,
each miss waiting for the one before. This table is laid out so that one row needs two memory
reads, and the rows are looked up :data:`BATCH` at a time, each read asked for (prefetched)
before any is used, so that the reads overlap:

- the table is lines of four slots, one cache line each: four fingerprints (the low 32 bits of
  the text's hash and its length in bytes) and four packed ``code + 1 << 32 | arena offset``;
  a text's home line is chosen by the hash's high bits, and it moves to the next line when its
  own is full (linear probing by lines);
- the distinct texts are copied, in order of first appearance, into one byte arena, so a code's
  text is ``arena[starts[code]:starts[code + 1]]``;
- a row is given a slot's code only when its bytes equal that slot's text, byte for byte: equal
  hashes never merge two ids.

Each thread codes one range of rows into its own table; the threads' distinct texts are then
coded into the first thread's table, whose texts are sorted, and each thread's codes become
their texts' places in that order.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from metrics_core._numeric.parallel import THREADS, map_chunks, map_threads, thread_shares
from metrics_core.inputs.gather import lookup
from metrics_core.inputs.jit import numba
from metrics_core.inputs.text_order import sort_order

BATCH = 32  # rows whose table and arena reads are issued together
SLOTS = 4  # slots per table line (4 fingerprints + 4 codes: 64 bytes)
EMPTY = np.uint64(0)
LOW32 = np.uint64(0xFFFFFFFF)
M1 = np.uint64(0xFF51AFD7ED558CCD)
M2 = np.uint64(0xC4CEB9FE1A85EC53)
LONGEST = 2**31  # a text at least this long is left to Arrow (its length would not fit the fingerprint)
ARENA_MAX = 2**32  # bytes of distinct text per thread (offsets into the arena are 32 bits)
PIECE_ROWS = 1 << 20  # rows coded per call: shares of about equal rows for the threads, whatever the chunks
BATCH_ROWS = 1 << 16  # rows read and coded at a time by code_row_groups: 2.4 MB of UUID-like text


@intrinsic
def _word(typingctx, address, at):
    """The eight bytes at ``address + at`` as one little-endian 64-bit word: one unaligned load
    (assembling it from eight byte loads cost half the lookup's time)."""
    def codegen(context, builder, signature, args):
        return builder.load(_pointer(context, builder, signature, args, ir.IntType(64)), align=1)

    return types.uint64(address, at), codegen


@intrinsic
def _byte(typingctx, address, at):
    """The byte at ``address + at``."""
    def codegen(context, builder, signature, args):
        return builder.load(_pointer(context, builder, signature, args, ir.IntType(8)))

    return types.uint8(address, at), codegen


@intrinsic
def _prefetch(typingctx, address, at):
    """Ask for the cache line at ``address + at`` to be read into the caches (LLVM's prefetch:
    a hint that never faults), so that a later read of it does not wait."""
    def codegen(context, builder, signature, args):
        byte = ir.IntType(8).as_pointer()
        int32 = ir.IntType(32)
        prefetch = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [byte] + [int32] * 3),
                                                  "llvm.prefetch.p0i8")
        read, keep, data = (ir.Constant(int32, value) for value in (0, 3, 1))  # (a read, kept in every level, data)
        builder.call(prefetch, [_pointer(context, builder, signature, args, ir.IntType(8)), read, keep, data])
        return context.get_dummy_value()

    return types.void(address, at), codegen


def _pointer(context, builder, signature, args, kind):
    """LLVM code for a pointer to a ``kind`` at ``address + at`` (the arguments of :func:`_word`
    and :func:`_byte`, any integer types)."""
    address = context.cast(builder, args[0], signature.args[0], types.uintp)
    at = context.cast(builder, args[1], signature.args[1], types.intp)
    return builder.inttoptr(builder.add(address, at), kind.as_pointer())


# The loops read the texts and the arena through their addresses (``array.ctypes.data``, taken
# once per call), not through the arrays: numba counts references to an array handed to another
# function, an atomic add and subtract on the array's shared counter at every call, which made
# each row's hash cost 14 ns instead of 2 and kept two threads from coding any faster than one.


@numba.njit(cache=True, nogil=True)
def text_hash(address, start, stop):
    """A 64-bit hash of the bytes ``start .. stop`` at ``address``: each 8-byte word mixed in by a
    multiply, then the last bytes (as the last 8 bytes of the text when it has 8), then a final
    mix."""
    h = np.uint64(stop - start) * M2
    j = start
    while j + 8 <= stop:
        h = (h ^ _word(address, j)) * M1
        j += 8
    if j < stop:
        if stop - start >= 8:
            tail = _word(address, stop - 8)
        else:
            tail = np.uint64(0)
            shift = np.uint64(0)
            while j < stop:
                tail |= np.uint64(_byte(address, j)) << shift
                j += 1
                shift += np.uint64(8)
        h = (h ^ tail) * M1
    h ^= h >> np.uint64(29)
    h *= M2
    h ^= h >> np.uint64(32)
    return h


@numba.njit(cache=True, nogil=True)
def _same(data, start, stop, arena, at):
    """Whether the bytes ``start .. stop`` at address ``data`` equal the as many at address
    ``arena`` from ``at`` (8 bytes at a time)."""
    j = 0
    length = stop - start
    while j + 8 <= length:
        if _word(data, start + j) != _word(arena, at + j):
            return False
        j += 8
    while j < length:
        if _byte(data, start + j) != _byte(arena, at + j):
            return False
        j += 1
    return True


@numba.njit(cache=True, nogil=True)
def _probe(table, data, start, stop, h, arena, starts, state):
    """The code of ``data[start:stop]`` (hash ``h``), inserted when new; -1 when the table, the
    arena or ``starts`` is full (the caller grows them and calls again)."""
    lines = table.shape[0]
    key = (h & LOW32) | (np.uint64(stop - start) << np.uint64(32))
    line = np.int64(h >> np.uint64(32)) & (lines - 1)
    while True:
        for slot in range(SLOTS):
            packed = table[line, SLOTS + slot]
            if packed == EMPTY:
                count, used = state[0], state[1]
                if 2 * (count + 1) > lines * SLOTS or used + stop - start > len(arena) or count + 2 > len(starts):
                    return -1
                arena[used:used + stop - start] = data[start:stop]
                table[line, slot] = key
                table[line, SLOTS + slot] = np.uint64(count + 1) << np.uint64(32) | np.uint64(used)
                starts[count + 1] = used + stop - start
                state[0] = count + 1
                state[1] = used + stop - start
                return count
            if table[line, slot] == key and _same(data.ctypes.data, start, stop, arena.ctypes.data,
                                                  np.int64(packed & LOW32)):
                return np.int64(packed >> np.uint64(32)) - 1
        line = (line + 1) & (lines - 1)


@numba.njit(cache=True, nogil=True)
def code_texts(offsets, data, codes, table, arena, starts, state):
    """``codes[i]`` = the code of text ``data[offsets[i]:offsets[i + 1]]`` for each row, in the
    table (``state`` = [distinct texts, arena bytes used], updated). Returns the number of rows
    coded: fewer than all when the table, the arena or ``starts`` must grow first, -1 when a
    text is too long for the fingerprint.

    :data:`BATCH` rows at a time: their hashes, each one's home line prefetched; then each
    home line's matching slot, found without a branch on the slots (a branch that depends on
    a read still on its way makes the processor wait for it), and that slot's text
    prefetched; then each candidate's text compared. A row whose home line does not hold its
    text goes through :func:`_probe`. Faster than sixteen rows at a time whose slots were found by
    branches and no prefetch.

    A row with the same text as the row before it (rows grouped by user, as a ground truth or a
    file sorted by user has them) takes that row's code without a lookup; rows in any order pay
    one comparison of a few bytes each."""
    rows = len(offsets) - 1
    lines = table.shape[0]
    keys = np.empty(BATCH, np.uint64)
    home = np.empty(BATCH, np.int64)
    found = np.empty(BATCH, np.uint64)
    hashes = np.empty(BATCH, np.uint64)
    again = np.zeros(BATCH, np.bool_)  # the row has the same text as the row before it
    text = data.ctypes.data
    texts = arena.ctypes.data  # (fixed during the call: the arena grows between calls)
    lines_at, line_bytes = table.ctypes.data, table.shape[1] * 8
    first = 0
    while first < rows:
        size = min(BATCH, rows - first)
        for j in range(size):
            row = first + j
            start, stop = offsets[row], offsets[row + 1]
            if stop - start >= LONGEST:
                return -1
            again[j] = row > 0 and start - offsets[row - 1] == stop - start and _same(text, start, stop, text,
                                                                                        offsets[row - 1])
            if again[j]:
                continue
            h = text_hash(text, start, stop)
            hashes[j] = h
            keys[j] = (h & LOW32) | (np.uint64(stop - start) << np.uint64(32))
            home[j] = np.int64(h >> np.uint64(32)) & (lines - 1)
            _prefetch(lines_at, home[j] * line_bytes)
        for j in range(size):
            if again[j]:
                continue
            packed = EMPTY
            for slot in range(SLOTS):
                packed = table[home[j], SLOTS + slot] if (table[home[j], slot] == keys[j]) & (packed == EMPTY) \
                    else packed
            found[j] = packed
            if packed != EMPTY:
                _prefetch(texts, np.int64(packed & LOW32))
                _prefetch(texts, np.int64(packed & LOW32) + np.int64(keys[j] >> np.uint64(32)) - 1)
        for j in range(size):
            if again[j]:
                codes[first + j] = codes[first + j - 1]
                continue
            start, stop = offsets[first + j], offsets[first + j + 1]
            packed = found[j]
            if packed != EMPTY and _same(text, start, stop, texts, np.int64(packed & LOW32)):
                codes[first + j] = np.int64(packed >> np.uint64(32)) - 1
                continue
            code = _probe(table, data, start, stop, hashes[j], arena, starts, state)
            if code < 0:
                return first + j
            codes[first + j] = code
        first += size
    return rows


@numba.njit(cache=True, nogil=True)
def _reinsert(table, arena, starts, count):
    """Put codes ``0 .. count`` (texts ``arena[starts[c]:starts[c + 1]]``) into an empty table."""
    lines = table.shape[0]
    texts = arena.ctypes.data
    for code in range(count):
        start, stop = starts[code], starts[code + 1]
        h = text_hash(texts, start, stop)
        line = np.int64(h >> np.uint64(32)) & (lines - 1)
        while table[line, 2 * SLOTS - 1] != EMPTY:  # a line fills slot by slot: full when its last is
            line = (line + 1) & (lines - 1)
        slot = 0
        while table[line, SLOTS + slot] != EMPTY:
            slot += 1
        table[line, slot] = (h & LOW32) | (np.uint64(stop - start) << np.uint64(32))
        table[line, SLOTS + slot] = np.uint64(code + 1) << np.uint64(32) | np.uint64(start)


class Table:
    """One thread's hash table, arena and code starts, grown as texts come in."""

    def __init__(self, expected: int, text_bytes: int):
        self.table = np.zeros((_lines_for(expected), 2 * SLOTS), dtype=np.uint64)
        self.arena = np.empty(min(max(64, text_bytes), ARENA_MAX), dtype=np.uint8)
        self.starts = np.zeros(max(2, expected + 1), dtype=np.int64)
        self.state = np.zeros(2, dtype=np.int64)

    def code(self, offsets: np.ndarray, data: np.ndarray, codes: np.ndarray) -> bool:
        """Code every row (growing as needed); False when the table cannot take them (a text of
        2 GiB or more, or more than :data:`ARENA_MAX` bytes of distinct text): then some rows
        have no code, and the caller must not use ``codes``."""
        done = 0
        while done < len(codes):
            coded = code_texts(offsets[done:], data, codes[done:], self.table, self.arena, self.starts, self.state)
            if coded < 0:
                return False
            done += coded
            if done < len(codes) and not self._grow(int(offsets[done + 1] - offsets[done])):
                return False
        return True

    def _grow(self, text: int) -> bool:
        """Room for one more text of ``text`` bytes; False when the arena would pass 4 GiB
        (its offsets are 32 bits in the table)."""
        count, used = (int(v) for v in self.state)
        if used + text > ARENA_MAX:
            return False
        if 2 * (count + 1) > self.table.shape[0] * SLOTS:
            self._rehash(2 * self.table.shape[0])
        if used + text > len(self.arena):
            more = min(max(len(self.arena), text), ARENA_MAX - len(self.arena))
            self.arena = np.concatenate([self.arena, np.empty(more, np.uint8)])
        if count + 2 > len(self.starts):
            self.starts = np.concatenate([self.starts, np.zeros(len(self.starts), np.int64)])
        return True

    def _rehash(self, lines: int) -> None:
        self.table = np.zeros((lines, 2 * SLOTS), dtype=np.uint64)
        _reinsert(self.table, self.arena, self.starts, int(self.state[0]))

    def texts(self) -> pa.LargeStringArray:
        """The distinct texts in code order (no copy of the arena)."""
        count, used = (int(v) for v in self.state)
        return pa.LargeStringArray.from_buffers(count, pa.py_buffer(self.starts[:count + 1]),
                                                pa.py_buffer(self.arena[:used]))


def _lines_for(expected: int) -> int:
    """Table lines (a power of two) for ``expected`` texts at most half full."""
    return 1 << max(4, int(np.ceil(np.log2(max(1, 2 * expected / SLOTS)))))


def _pieces(column: pa.ChunkedArray) -> list[tuple[np.ndarray, np.ndarray, int]]:
    """``(offsets, data, first row)`` of each run of at most :data:`PIECE_ROWS` rows of a chunk,
    as numpy views of its Arrow buffers (a column in one chunk is still shared between threads)."""
    pieces, first = [], 0
    for chunk in column.chunks:
        _, offsets, data = chunk.buffers()
        offset_type = np.int64 if pa.types.is_large_string(chunk.type) else np.int32
        offsets = np.frombuffer(offsets, offset_type)[chunk.offset:chunk.offset + len(chunk) + 1] \
            if len(chunk) else np.zeros(1, offset_type)
        data = np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8)
        pieces += [(offsets[start:start + PIECE_ROWS + 1], data, first + start)
                   for start in range(0, max(1, len(chunk)), PIECE_ROWS)]
        first += len(chunk)
    return pieces


def factorize(column: pa.ChunkedArray, threads: int = THREADS) -> tuple[np.ndarray, pa.LargeStringArray] | None:
    """``(codes, distinct)``: int32 codes into the distinct texts of a string column without
    nulls, each text once, sorted by code point (as the id index orders them); None when the
    column is beyond the table's limits (2^31 rows, a text of 2 GiB, 4 GiB of distinct text on
    one thread): the caller uses Arrow then."""
    rows = len(column)
    if rows >= 2**31:  # (the codes are int32)
        return None
    pieces = _pieces(column)
    codes = np.empty(rows, dtype=np.int32)
    shares = _shares(pieces, rows, threads)

    def code_share(first: int, stop: int) -> Table | None:
        share = pieces[first:stop]
        table = Table(min(sum(len(offsets) - 1 for offsets, _, _ in share), 1 << 16), 1 << 20)
        return table if all(table.code(offsets, data, codes[row:row + len(offsets) - 1])
                            for offsets, data, row in share) else None

    tables = map_chunks(code_share, shares, threads)
    row_shares = [(pieces[first][2], pieces[stop][2] if stop < len(pieces) else rows) for first, stop in shares]
    return _merged(tables, row_shares, codes)


def code_row_groups(path, name: str, threads: int = THREADS) -> tuple[np.ndarray, pa.LargeStringArray] | None:
    """:func:`factorize` of string column ``name`` of a Parquet file, coded as it is read.

    Each thread reads its share of the row groups in batches of :data:`BATCH_ROWS` rows and
    codes each batch while its text is in the caches, so the column's text (3.6 GB for 100M
    UUID-like ids) is never held whole nor read twice from memory. None as for
    :func:`factorize`, and when a batch has a null (the caller reads the column the general
    way, whose checks name the rows)."""
    import pyarrow.parquet as pq

    def code_share(table: Table, groups: range, codes: np.ndarray) -> bool:
        row = 0
        with pq.ParquetFile(path) as reader:  # (each thread its own reader)
            for batch in reader.iter_batches(BATCH_ROWS, row_groups=groups, columns=[name], use_threads=False):
                column = pa.chunked_array([batch.column(0)])
                if column.null_count:
                    return False
                for offsets, data, at in _pieces(column):
                    if not table.code(offsets, data, codes[row + at:row + at + len(offsets) - 1]):
                        return False
                row += len(column)
        return True

    return _by_row_group_shares(path, code_share, threads)


def code_dictionaries(path, name: str, threads: int = THREADS) -> tuple[np.ndarray, pa.LargeStringArray] | None:
    """:func:`code_row_groups` for a string column that the Parquet file stores as dictionary
    codes (item ids, as a rule): each thread reads its share of the row groups as Arrow
    dictionary arrays, codes the texts of each chunk's dictionary that its rows use into its
    table, and gathers its rows' codes through them, so a text is hashed once per row group,
    not once per row, and the distinct texts are exactly those in use.
    None as for :func:`code_row_groups`."""
    import pyarrow.parquet as pq

    def code_share(table: Table, groups: range, codes: np.ndarray) -> bool:
        row = 0
        with pq.ParquetFile(path, read_dictionary=[name]) as reader:  # (each thread its own reader)
            for group in groups:
                for chunk in reader.read_row_group(group, columns=[name], use_threads=False).column(0).chunks:
                    if chunk.null_count or not _dictionary_of_texts(chunk.type):
                        return False
                    if not _code_chunk(table, chunk, codes[row:row + len(chunk)]):
                        return False
                    row += len(chunk)
        return True

    return _by_row_group_shares(path, code_share, threads)


def _by_row_group_shares(path, code_share, threads: int) -> tuple[np.ndarray, pa.LargeStringArray] | None:
    """What :func:`code_row_groups` and :func:`code_dictionaries` share: the file's row groups
    in one share per thread, each share coded by ``code_share(table, row groups, codes)`` into a
    table of its own (``codes``: the share's rows; False when the table cannot take them or a
    row is null), then the tables merged (:func:`_merged`). None for 2^31 rows or more (the
    codes are int32) and whenever a share fails."""
    import pyarrow.parquet as pq

    with pq.ParquetFile(path) as file:
        meta = file.metadata
    rows = meta.num_rows
    if rows >= 2**31:
        return None
    starts = np.cumsum([0] + [meta.row_group(group).num_rows for group in range(meta.num_row_groups)])
    codes = np.empty(rows, dtype=np.int32)
    group_shares = thread_shares(meta.num_row_groups, threads)
    row_shares = [(int(starts[first]), int(starts[stop])) for first, stop in group_shares]

    def code(share: int) -> Table | None:
        (first, stop), (start, end) = group_shares[share], row_shares[share]
        table = Table(min(end - start, 1 << 16), 1 << 20)
        return table if code_share(table, range(first, stop), codes[start:end]) else None

    return _merged(map_threads(code, list(range(len(group_shares))), threads), row_shares, codes)


def _dictionary_of_texts(kind) -> bool:
    """Whether ``kind`` is a dictionary of texts held as offsets into one byte buffer."""
    return pa.types.is_dictionary(kind) and (pa.types.is_string(kind.value_type)
                                             or pa.types.is_large_string(kind.value_type))


def _code_chunk(table: Table, chunk: pa.DictionaryArray, out: np.ndarray) -> bool:
    """Code the used texts of ``chunk``'s dictionary into ``table`` and write each row's code to
    ``out``; False when the table cannot take them."""
    indices = chunk.indices.to_numpy(zero_copy_only=False)
    dictionary = chunk.dictionary
    used = np.zeros(len(dictionary), dtype=bool)
    used[indices] = True
    if not used.all():  # (a writer may keep texts no row of the chunk uses: they are not ids)
        dictionary = dictionary.filter(pa.array(used))
    coded = np.full(len(used), -1, dtype=np.int32)
    in_table = np.empty(len(dictionary), dtype=np.int32)
    for offsets, data, at in _pieces(pa.chunked_array([dictionary])):
        if not table.code(offsets, data, in_table[at:at + len(offsets) - 1]):
            return False
    coded[used] = in_table
    np.take(coded, indices, out=out, mode="clip")  # (dictionary indices: in range; unbuffered)
    return True


def _merged(tables: list[Table | None], row_shares: list[tuple[int, int]], codes: np.ndarray
            ) -> tuple[np.ndarray, pa.LargeStringArray] | None:
    """The codes of every thread's share as places among the sorted distinct texts: each other
    thread's distinct texts are coded into the first thread's table, whose texts are then
    sorted, and each share's codes are mapped to their sorted places in one pass, in place
    (sorting is what the id index needs next; mapping the codes there, a new array, cost
    another pass over the rows and the first touch of its memory)."""
    if any(t is None for t in tables):
        return None
    main = tables[0]
    into_main = [np.arange(int(main.state[0]), dtype=np.int32)]
    for table in tables[1:]:
        into = np.empty(int(table.state[0]), dtype=np.int32)
        for offsets, data, row in _pieces(pa.chunked_array([table.texts()])):
            if not main.code(offsets, data, into[row:row + len(offsets) - 1]):  # (past the arena's limit)
                return None
        into_main.append(into)
    texts = main.texts()
    order = sort_order(texts)
    place = np.empty(len(order), dtype=np.int32)
    place[order] = np.arange(len(order), dtype=np.int32)
    for into, (start, stop) in zip(into_main, row_shares, strict=True):
        share = codes[start:stop]
        lookup(place[into], share, 0, out=share)
    return codes, texts.take(order)


def _shares(pieces: list, rows: int, threads: int) -> list[tuple[int, int]]:
    """Runs of consecutive pieces (see :func:`_pieces`) with about ``rows / threads`` rows each,
    as index bounds into ``pieces``."""
    bounds, start, taken = [], 0, 0
    for index, (offsets, _, _) in enumerate(pieces):
        taken += len(offsets) - 1
        if taken * threads >= rows * (len(bounds) + 1) and len(bounds) < threads - 1:
            bounds.append((start, index + 1))
            start = index + 1
    bounds.append((start, len(pieces)))
    return [b for b in bounds if b[0] < b[1]] or [(0, len(pieces))]


def compile_all() -> None:
    """Compile (or load) the kernels for the arrays they are given: Arrow's 32- and 64-bit
    offsets and bytes (read-only views), and a table that grows."""
    for kind in (pa.string(), pa.large_string()):
        (offsets, data, _), = _pieces(pa.chunked_array([pa.array([str(i) for i in range(64)], kind)]))
        Table(1, 1).code(offsets, data, np.empty(len(offsets) - 1, np.int32))
