"""What one evaluation is made of: each model's recommendations, the ground truth, the optional
tables (training interactions, item and user features) and how to read them (the column mapping
and the item features used). The store keeps one as a saved workspace
(:class:`~metrics_core.store.catalog.SavedWorkspace`, its tables stored), the app holds one as
the workspace it evaluates (``dashboard.workspace.Workspace``, its tables uploaded or stored)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

from metrics_core.inputs.columns import Columns

OPTIONAL_ROLES = ("train", "items", "users")

Table = TypeVar("Table")


@dataclass(frozen=True, kw_only=True)
class Recipe(Generic[Table]):
    """``models``: name -> its recommendations; ``ground_truth``; ``train``, ``items`` and
    ``users`` when given; ``columns``: the mapping; ``feature_columns`` (None: the item table's
    defaults) and ``embedding_column``: what the similarity metrics read from the item table."""

    models: dict[str, Table]
    ground_truth: Table
    columns: Columns = field(default_factory=Columns)
    train: Table | None = None
    items: Table | None = None
    users: Table | None = None
    feature_columns: tuple[str, ...] | None = None
    embedding_column: str | None = None

    def tables(self) -> dict[str, Table | None]:
        """The ground truth and the optional tables, by role (None: not given)."""
        return {"ground_truth": self.ground_truth, **{role: getattr(self, role) for role in OPTIONAL_ROLES}}
