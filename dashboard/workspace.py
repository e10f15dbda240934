"""The files being evaluated (the demo workspace, or tables in the run store), their column
mapping, and how to save them. Nothing uploaded is ever modified: tables are parsed from
bytes or read from the store's Parquet copies."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from dashboard.demo import MODELS
from metrics_core import Columns, Dataset
from metrics_core.inputs.read import StoredTable, TableFile
from metrics_core.inputs.recipe import Recipe
from metrics_core.settings import Encoding
from metrics_core.store import SavedWorkspace, Store, default_home
from metrics_core.store.catalog import workspace_fingerprint
from metrics_core.store.files import sha256_of

Source = TableFile | StoredTable

DATA_DIR = Path(__file__).resolve().parents[1] / "data"  # (the clone's demo files)
DEMO_VARIABLE = "RANKSCOPE_DEMO_DIR"


def demo_folder() -> Path:
    """Where the demo workspace's files are (written on first use): ``RANKSCOPE_DEMO_DIR``; else
    ``data/`` of a clone (beside ``pyproject.toml``); else ``demo/`` in the store's folder (an
    installed package has no folder of its own to write to)."""
    chosen = os.environ.get(DEMO_VARIABLE)
    if chosen:
        return Path(chosen)
    if (DATA_DIR.parent / "pyproject.toml").exists():
        return DATA_DIR
    return default_home() / "demo"


@dataclass(frozen=True, kw_only=True)
class Workspace(Recipe[Source]):
    """The :class:`~metrics_core.inputs.recipe.Recipe` the app evaluates, shown as ``label``;
    ``id`` is the saved workspace's id in the store (None: the demo, or not saved yet)."""

    label: str
    id: str | None = None
    _fingerprint: str | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_saved(cls, saved: SavedWorkspace) -> Workspace:
        return cls(label=saved.name, models=dict(saved.models), ground_truth=saved.ground_truth,
                   columns=saved.columns, train=saved.train, items=saved.items, users=saved.users,
                   feature_columns=saved.feature_columns, embedding_column=saved.embedding_column, id=saved.id,
                   _fingerprint=saved.fingerprint)

    def fingerprint(self) -> str:
        """A hash of every byte and of the mapping: the cache key of the encoded data
        (computed once: a workspace is not changed after it is made)."""
        if self._fingerprint is None:
            object.__setattr__(self, "_fingerprint", self._digest())  # (frozen: set once, here)
        return self._fingerprint

    def _digest(self) -> str:
        if all(isinstance(t, StoredTable) for t in [*self.models.values(), *self.tables().values()] if t):
            return workspace_fingerprint({name: t.path.stem for name, t in self.models.items()},
                                         {role: t.path.stem if t else None for role, t in self.tables().items()},
                                         self.columns, self.feature_columns, self.embedding_column)
        digest = hashlib.sha256()
        for name, table in sorted(self.models.items()):
            digest.update(name.encode() + b"\0" + table.name.encode() + b"\0" + _content(table))
        for table in self.tables().values():
            digest.update(b"\1" + (table.name.encode() + b"\0" + _content(table) if table else b"-"))
        digest.update(repr((self.columns, self.feature_columns, self.embedding_column)).encode())
        return digest.hexdigest()

    def build(self, encoding: Encoding | None = None, progress: Callable[[str], None] | None = None) -> Dataset:
        """Parse and encode (raises :class:`InputError` naming the uploaded file and the offending rows);
        ``progress`` is told each step in words."""
        return Dataset.from_recipe(self, encoding, progress)


def _content(table: Source) -> bytes:
    return table.data if isinstance(table, TableFile) else table.path.stem.encode()


def content_hash(table: Source) -> str:
    """SHA-256 of the file's bytes as uploaded (a stored table is named by it)."""
    return sha256_of(table.data) if isinstance(table, TableFile) else table.path.stem


def save(workspace: Workspace, store: Store, name: str, user_count: int | None = None,
         if_exists: str = "refuse") -> Workspace:
    """Save ``workspace`` in ``store`` under ``name`` (its tables stored once each) and return it
    as the saved workspace. A taken name is refused (:class:`NameTakenError`) unless
    ``if_exists`` says to replace it or to save as a new version (:meth:`Store.save_workspace`)."""
    def key(table: Source) -> str:
        if isinstance(table, StoredTable):
            return table.path.stem
        return store.put_table(table.name, table.data, "table")

    optional = {role: key(t) if t else None for role, t in workspace.tables().items() if role != "ground_truth"}
    saved = store.save_workspace(name, {model: key(t) for model, t in workspace.models.items()},
                                 key(workspace.ground_truth), columns=workspace.columns,
                                 feature_columns=workspace.feature_columns, embedding_column=workspace.embedding_column,
                                 user_count=user_count, if_exists=if_exists, **optional)
    return Workspace.from_saved(saved)


def demo_workspace(directory: Path | None = None) -> Workspace:
    """The demo workspace in :func:`demo_folder` (generated on first use)."""
    directory = directory or demo_folder()
    if not (directory / "ground_truth.csv").exists():
        from dashboard.demo import write

        write(directory)

    def table(name: str) -> TableFile:
        return TableFile(f"{name}.csv", (directory / f"{name}.csv").read_bytes())

    return Workspace(
        label="Demo workspace: films, three models",
        models={name: table(f"recs_{name}") for name in MODELS},
        ground_truth=table("ground_truth"),
        columns=Columns(relevance="rating", threshold=4),
        train=table("train"),
        items=table("items"),
        users=table("users"),
        feature_columns=("genre",),
    )
