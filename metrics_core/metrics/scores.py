"""What the model's scores say: per-user score entropy and score distributions."""

from __future__ import annotations

import numpy as np
import pandas as pd

from metrics_core._numeric.parallel import map_chunks, thread_shares
from metrics_core._numeric.sums import row_sums
from metrics_core.inputs.encoded import compiled_for

CHUNK_CELLS = 1 << 16
SCORE_BINS = 30  # the app's score histograms (top K and the rest); counted ahead for a kept dataset


def score_entropy(scores: np.ndarray, rows: np.ndarray | None = None, k: int | None = None) -> np.ndarray:
    """Per user (``rows``, default every row of ``scores``): entropy −Σ p ln p of softmax(its
    first ``k`` scores, default all), within [0, ln K]; NaN for an empty list. One softmax per
    user (Evidently pools all users into one, so its value grows with the number of users).
    From :data:`~metrics_core.inputs.encoded.KERNEL_MIN` cells in one compiled pass
    (:func:`~metrics_core.metrics.prefix_kernels.score_entropy`, on a few threads), else with
    numpy a block of users at a time.

    >>> score_entropy(np.array([[1.0, 1.0], [5.0, np.nan]])).round(4)
    array([0.6931, 0.    ])
    """
    width = scores.shape[1] if k is None else min(k, scores.shape[1])
    n = len(scores) if rows is None else len(rows)
    if compiled_for(n * width):
        return _compiled_score_entropy(scores, rows, width)
    top = scores[:, :width] if rows is None else scores[rows, :width]
    out = np.empty(n)
    block = max(1, CHUNK_CELLS // max(1, width))
    for start in range(0, n, block):
        out[start:start + block] = _softmax_entropy(top[start:start + block].astype(np.float64, copy=False))
    return out


def _compiled_score_entropy(scores: np.ndarray, rows: np.ndarray | None, width: int) -> np.ndarray:
    """:func:`score_entropy` by the compiled pass over each row's first ``width`` places
    (:func:`~metrics_core.metrics.prefix_kernels.score_entropy_at_k`, on a few threads), on the
    types ``compile_all`` compiles: the scores read-only (a copy only when they are not a C array)."""
    from metrics_core._numeric.parallel import map_chunks, thread_shares
    from metrics_core.inputs.kernels import read_only_c
    from metrics_core.metrics.prefix_kernels import score_entropy_at_k

    cells = read_only_c(scores)[:, :width]
    every_row = np.empty(len(cells))
    map_chunks(lambda start, stop: score_entropy_at_k(cells, every_row, start, stop), thread_shares(len(cells)))
    return every_row if rows is None else every_row[rows]


def pooled_score_entropy(top_scores: np.ndarray) -> float:
    """Entropy of one softmax over every user's top-K scores together (Evidently's
    ScoreDistribution): grows with the number of users, so it compares runs of the same size only.

    >>> round(pooled_score_entropy(np.array([[1.0, 1.0], [1.0, np.nan]])), 4)  # ln 3
    1.0986
    """
    values = top_scores[~np.isnan(top_scores)].astype(np.float64)
    return float(_softmax_entropy(values[None, :])[0]) if len(values) else float("nan")


def _softmax_entropy(scores: np.ndarray) -> np.ndarray:
    """Entropy of softmax over each row's non-NaN scores, as log Z − Σ p·s (s shifted so that
    the row's maximum is 0, Z = Σ exp s, p = exp s / Z): no logarithm per score. Rows are
    short, so the maximum is taken one column at a time and sums use ``einsum``."""
    present = ~np.isnan(scores)
    complete = bool(present.all())
    peak = scores[:, 0].copy()
    for column in range(1, scores.shape[1]):
        np.fmax(peak, scores[:, column], out=peak)  # fmax skips NaN; all-NaN rows stay NaN
    shifted = scores - np.nan_to_num(peak, nan=0.0)[:, None]
    if not complete:
        shifted[~present] = -np.inf  # weight 0
    weights = np.exp(shifted)
    if not complete:
        shifted[~present] = 0.0  # 0 · s for the empty cells
    total = row_sums(weights)
    weighted = np.einsum("ij,ij->i", weights, shifted)
    with np.errstate(divide="ignore", invalid="ignore"):
        entropy = np.log(total) - weighted / total
    return np.where(total > 0, np.maximum(entropy, 0.0), np.nan)


def score_histogram(scores: np.ndarray, k: int, bins: int = 40, edges: np.ndarray | None = None) -> pd.DataFrame:
    """Counts of the scores in each list's top K and in the rest, on shared bins: ``bins`` equal
    bins from the smallest score to the largest (``np.histogram_bin_edges`` of every score), or
    the given ``edges``. Empty cells (NaN) are not counted.

    Returns columns ``bin_start, bin_end, part ("top K" or "rest"), count, share``: see
    :func:`place_histograms` (the counts of each position, which any K sums) and :func:`histogram_at`.
    """
    return histogram_at(*place_histograms(scores, bins, edges), k)


def place_histograms(scores: np.ndarray, bins: int = 40, edges: np.ndarray | None = None
                     ) -> tuple[np.ndarray, np.ndarray]:
    """The bin edges (as :func:`score_histogram` chooses them) and the counts of each position's
    scores in them (positions x bins; NaN not counted): a top K's counts are the sum of the first K
    rows, so another K needs no pass over the scores.

    Counted a block of users at a time on a few threads, never copying the scores, as ``np.histogram``
    counts (equal bins over :data:`KERNEL_MIN` cells and more: one compiled pass that bins as it
    does, :func:`~metrics_core.inputs.kernels.histogram_rows`; numpy's took 1.3 CPU-s over 1M users
    x 100)."""
    blocks = thread_shares(len(scores)) if compiled_for(scores.size) else [(0, len(scores))]
    uniform = edges is None
    if uniform:
        ends = map_chunks(lambda start, stop: _finite_ends(scores[start:stop]), blocks)
        found = [end for end in ends if end is not None]
        low = min(end[0] for end in found) if found else 0.0
        high = max(end[1] for end in found) if found else 0.0
        edges = np.histogram_bin_edges(np.array([low, high], dtype=scores.dtype if found else np.float64), bins=bins)
    if uniform and compiled_for(scores.size):
        parts = _compiled_counts(scores, edges, blocks)
    else:
        parts = map_chunks(lambda start, stop: _counts(scores[start:stop], edges, uniform), blocks)
    return edges, np.sum(parts, axis=0)


def histogram_at(edges: np.ndarray, counts: np.ndarray, k: int) -> pd.DataFrame:
    """:func:`score_histogram`'s frame from :func:`place_histograms`' ``edges`` and ``counts``: the
    first ``k`` positions' counts summed as the top K, the others' as the rest."""
    frames = []
    for part, count in ((f"top {k}", counts[:k].sum(axis=0)), ("rest", counts[k:].sum(axis=0))):
        frames.append(pd.DataFrame({"bin_start": edges[:-1], "bin_end": edges[1:], "part": part, "count": count,
                                    "share": count / max(1, count.sum())}))
    return pd.concat(frames, ignore_index=True)


def _counts(block: np.ndarray, edges: np.ndarray, uniform: bool) -> np.ndarray:
    """``np.histogram``'s counts of each position's scores in a block (uniform: equal bins over the
    range of ``edges``), positions x bins."""
    bins = len(edges) - 1
    return np.array([np.histogram(column[~np.isnan(column)], bins=bins if uniform else edges,
                                  range=(edges[0], edges[-1]) if uniform else None)[0] for column in block.T],
                    dtype=np.int64).reshape(block.shape[1], bins)


def _compiled_counts(scores: np.ndarray, edges: np.ndarray, blocks) -> list[np.ndarray]:
    """:func:`_counts` over equal bins by one compiled pass per block of users
    (:func:`~metrics_core.inputs.kernels.histogram_rows`, which bins as ``np.histogram`` does, in the
    scores' own type)."""
    from metrics_core.inputs.kernels import histogram_rows, read_only_c

    kind = scores.dtype.type
    first, last = kind(edges[0]), kind(edges[-1])
    bins = len(edges) - 1
    bin_edges = np.linspace(first, last, bins + 1, endpoint=True, dtype=scores.dtype)  # (as np.histogram makes them)
    span = np.subtract(last, first, dtype=scores.dtype)
    cells = read_only_c(scores)

    def counts(start: int, stop: int) -> np.ndarray:
        table = np.zeros((scores.shape[1], bins), np.int64)
        histogram_rows(cells, first, last, span, kind(bins), bin_edges, table, start, stop)
        return table

    return map_chunks(counts, blocks)


def _finite_ends(block: np.ndarray) -> tuple[float, float] | None:
    """The smallest and largest score of a block (None: only empty cells)."""
    low = np.fmin.reduce(block.reshape(-1)) if block.size else np.nan  # (fmin, fmax: NaN only when all are)
    return None if np.isnan(low) else (float(low), float(np.fmax.reduce(block.reshape(-1))))
