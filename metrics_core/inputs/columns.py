"""Which input column holds what: the caller's mapping, with the usual names as defaults."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Columns:
    """Column names shared by every input table.

    ``relevance`` names an optional grade column of the ground truth; rows whose grade is below
    ``threshold`` are not relevant, and relevant rows use their grade as NDCG gain.
    """

    user: str = "user_id"
    item: str = "item_id"
    score: str = "score"
    rank: str = "rank"
    relevance: str | None = None
    threshold: float = 1.0
    timestamp: str = "timestamp"
