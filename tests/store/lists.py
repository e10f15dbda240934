"""Random recommendation lists for the store's tests."""

from __future__ import annotations

import numpy as np
import pandas as pd


def random_lists(users: int, items: int, length: int = 5, seed: int = 0) -> pd.DataFrame:
    """``length`` random items per user, ranked 1 .. length (a repeated item keeps its first rank)."""
    rng = np.random.default_rng(seed)
    recs = pd.DataFrame({"user_id": np.repeat(np.arange(users), length),
                         "item_id": rng.integers(0, items, users * length),
                         "rank": np.tile(np.arange(1, length + 1), users)})
    return recs.drop_duplicates(["user_id", "item_id"])
