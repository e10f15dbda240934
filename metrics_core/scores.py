"""What the model's scores say: per-user score entropy and score distributions."""

from __future__ import annotations

import numpy as np
import pandas as pd

CHUNK_CELLS = 1 << 20


def score_entropy(top_scores: np.ndarray) -> np.ndarray:
    """Per user: entropy −Σ p ln p of softmax(top-K scores), within [0, ln K]; NaN for an
    empty list. One softmax per user (Evidently pools all users into one, so its value grows
    with the number of users).

    >>> score_entropy(np.array([[1.0, 1.0], [5.0, np.nan]])).round(4)
    array([0.6931, 0.    ])
    """
    out = np.empty(len(top_scores))
    rows = max(1, CHUNK_CELLS // max(1, top_scores.shape[1]))
    for start in range(0, len(top_scores), rows):
        out[start:start + rows] = _softmax_entropy(top_scores[start:start + rows].astype(np.float64))
    return out


def _softmax_entropy(scores: np.ndarray) -> np.ndarray:
    present = ~np.isnan(scores)
    peak = np.max(np.where(present, scores, -np.inf), axis=1, keepdims=True, initial=-np.inf)
    shifted = np.where(present, scores - np.where(np.isfinite(peak), peak, 0.0), -np.inf)
    weights = np.exp(shifted)
    total = weights.sum(axis=1, keepdims=True)
    p = np.divide(weights, total, out=np.zeros_like(weights), where=total > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, -p * np.log(p), 0.0)
    return np.where(present.any(axis=1), terms.sum(axis=1), np.nan)


def score_histogram(scores: np.ndarray, k: int, bins: int = 40, edges: np.ndarray | None = None) -> pd.DataFrame:
    """Counts of the scores in each list's top K and in the rest, on shared bins.

    Returns columns ``bin_start, bin_end, part ("top K" or "rest"), count, share``.
    """
    top, rest = scores[:, :k], scores[:, k:]
    top, rest = top[~np.isnan(top)], rest[~np.isnan(rest)]
    if edges is None:
        both = np.concatenate([top, rest])
        edges = np.histogram_bin_edges(both if len(both) else np.zeros(1), bins=bins)
    frames = []
    for part, values in ((f"top {k}", top), ("rest", rest)):
        counts, _ = np.histogram(values, bins=edges)
        frames.append(pd.DataFrame({"bin_start": edges[:-1], "bin_end": edges[1:], "part": part, "count": counts,
                                    "share": counts / max(1, counts.sum())}))
    return pd.concat(frames, ignore_index=True)
