"""The files being evaluated (the demo workspace or uploads), their column mapping, and the
cached encoded dataset. Nothing uploaded is ever modified: tables are parsed from bytes."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from dashboard.demo import MODELS
from metrics_core import Columns, Dataset
from metrics_core.inputs.read import TableFile
from metrics_core.settings import Encoding

DATA_DIR = Path(__file__).resolve().parents[1] / "data"


@dataclass
class Workspace:
    label: str
    models: dict[str, TableFile]
    ground_truth: TableFile
    columns: Columns = field(default_factory=Columns)
    train: TableFile | None = None
    items: TableFile | None = None
    users: TableFile | None = None
    feature_columns: tuple[str, ...] | None = None
    embedding_column: str | None = None
    _fingerprint: str | None = field(default=None, repr=False, compare=False)

    def fingerprint(self) -> str:
        """A hash of every byte and of the mapping: the cache key of the encoded data
        (computed once: a workspace is not changed after it is made)."""
        if self._fingerprint is None:
            self._fingerprint = self._digest()
        return self._fingerprint

    def _digest(self) -> str:
        digest = hashlib.sha256()
        for name, table in sorted(self.models.items()):
            digest.update(name.encode() + b"\0" + table.name.encode() + b"\0" + table.data)
        for table in (self.ground_truth, self.train, self.items, self.users):
            digest.update(b"\1" + (table.name.encode() + b"\0" + table.data if table else b"-"))
        digest.update(repr((self.columns, self.feature_columns, self.embedding_column)).encode())
        return digest.hexdigest()

    def build(self, encoding: Encoding | None = None) -> Dataset:
        """Parse and encode (raises :class:`InputError` naming the uploaded file and the offending rows)."""
        return Dataset.build(dict(self.models), self.ground_truth, train=self.train, items=self.items, users=self.users,
                             columns=self.columns, encoding=encoding,
                             feature_columns=list(self.feature_columns) if self.feature_columns else None,
                             embedding_column=self.embedding_column)


def demo_workspace(directory: Path = DATA_DIR) -> Workspace:
    """The demo workspace in ``data/`` (generated on first use)."""
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
