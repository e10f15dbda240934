"""The score histogram counted block by block on threads (large lists) or at once (small): the
counts ``np.histogram`` gives over every score of each part, on the same edges."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from metrics_core.metrics import scores
from tests.compiled import compiled_loops


def one_histogram(values: np.ndarray, k: int, bins: int) -> pd.DataFrame:
    """The obvious way: copy out each part's scores, join them for the edges, count each part."""
    top, rest = values[:, :k], values[:, k:]
    top, rest = top[~np.isnan(top)], rest[~np.isnan(rest)]
    both = np.concatenate([top, rest])
    edges = np.histogram_bin_edges(both if len(both) else np.zeros(1), bins=bins)
    frames = []
    for part, kept in ((f"top {k}", top), ("rest", rest)):
        count = np.histogram(kept, bins=edges)[0]
        frames.append(pd.DataFrame({"bin_start": edges[:-1], "bin_end": edges[1:], "part": part, "count": count,
                                    "share": count / max(1, count.sum())}))
    return pd.concat(frames, ignore_index=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", ["random", "on the edges", "with empty cells", "one value", "no user"])
@pytest.mark.parametrize("blocks", [False, True])
def test_the_histogram_counts_every_score_once_on_the_shared_edges(dtype, kind, blocks, monkeypatch):
    compiled_loops(monkeypatch, blocks)
    rng = np.random.default_rng(3)
    values = rng.random((2_001, 30)).astype(dtype)
    if kind == "on the edges":  # (every value a bin edge: the last bin includes its right edge)
        values = (rng.integers(0, 31, values.shape) / 30).astype(dtype)
    elif kind == "with empty cells":
        values[rng.random(values.shape) < 0.3] = np.nan
        values[7] = np.nan  # a user with no list
    elif kind == "one value":
        values[:] = 0.25
    elif kind == "no user":
        values = values[:0]
    for k in (1, 10, 40):
        pd.testing.assert_frame_equal(scores.score_histogram(values, k, 30), one_histogram(values, k, 30))


def test_another_k_sums_the_kept_counts_of_each_position_and_equals_counting_again():
    """``Dataset.score_distribution`` keeps each position's counts: every K after the first (and
    the given edges, kept apart) equals a histogram counted afresh."""
    from metrics_core import Dataset

    rng = np.random.default_rng(5)
    recs = pd.DataFrame({"user_id": np.repeat(np.arange(50), 8), "item_id": rng.integers(0, 200, 400),
                         "score": rng.normal(size=400)}).drop_duplicates(["user_id", "item_id"])
    data = Dataset.build(recs, recs.iloc[::3][["user_id", "item_id"]])
    lists = data.lists[data.models[0]]
    edges = np.linspace(-4, 4, 9)
    for k in (3, 1, 8, 20, 3):
        pd.testing.assert_frame_equal(data.score_distribution(data.models[0], k, bins=12),
                                      scores.score_histogram(lists.scores, k, 12))
        pd.testing.assert_frame_equal(data.score_distribution(data.models[0], k, edges=edges),
                                      scores.score_histogram(lists.scores, k, edges=edges))
    assert len(lists.__dict__["_score_places"]) == 2  # (one count per bins asked for, whatever K)
