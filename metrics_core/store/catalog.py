"""The run store: uploaded tables, saved workspaces and evaluation runs on disk, shared by the
app and the command line (several processes may write at once).

Layout under the home folder (``RANKSCOPE_HOME``, default ``./.rankscope``)::

    catalog.sqlite          what exists: tables, workspaces, runs (SQLite in WAL mode)
    tables/<sha256>.parquet every uploaded table once, named by the SHA-256 of its bytes
    runs/<run id>.parquet   the per-user values of a run

A table is stored once however many workspaces use it; deleting a workspace deletes only the
tables no other workspace uses. Nothing is pickled: Parquet for tables, JSON text in SQLite.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import secrets
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pyarrow.parquet as pq

from metrics_core.errors import input_error
from metrics_core.inputs.columns import Columns
from metrics_core.inputs.read import PARQUET_SUFFIXES, StoredTable, read_bytes, read_notes, read_table
from metrics_core.store import schema
from metrics_core.store.files import copy_file, sha256_of, write_parquet

HOME_VARIABLE = "RANKSCOPE_HOME"
BUSY_TIMEOUT_MS = 30_000
OPTIONAL_ROLES = ("train", "items", "users")


def default_home() -> Path:
    """``$RANKSCOPE_HOME``, else ``.rankscope`` in the current folder."""
    return Path(os.environ.get(HOME_VARIABLE) or ".rankscope").expanduser()


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class SavedWorkspace:
    """A named set of stored tables with its column mapping and feature choices."""

    id: str
    name: str
    models: dict[str, StoredTable]
    ground_truth: StoredTable
    columns: Columns = field(default_factory=Columns)
    train: StoredTable | None = None
    items: StoredTable | None = None
    users: StoredTable | None = None
    feature_columns: tuple[str, ...] | None = None
    embedding_column: str | None = None
    fingerprint: str = ""
    user_count: int | None = None
    rows: int = 0
    created: str = ""
    updated: str = ""


class Store:
    """Open (creating and migrating when needed) the store at ``home``.

    ``table_grace_seconds``: a table no workspace uses is deleted only once it is this old, so
    that a table another process has just stored, for a workspace it is about to save, is kept.
    """

    def __init__(self, home: Path | str | None = None, table_grace_seconds: float = 600.0):
        self.home = Path(home) if home is not None else default_home()
        self.grace = table_grace_seconds
        try:
            for folder in (self.home, self.home / "tables", self.home / "runs"):
                folder.mkdir(parents=True, exist_ok=True)
            with self.connect() as connection:
                schema.migrate(connection)
        except (OSError, sqlite3.Error, RuntimeError) as error:
            raise input_error(HOME_VARIABLE, f"cannot use the store at {self.home} ({error}).",
                              f"set {HOME_VARIABLE} to a folder this user can write, or fix its permissions.") from None

    @contextlib.contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        """A connection for one piece of work (SQLite connections are not shared between threads)."""
        connection = sqlite3.connect(self.home / "catalog.sqlite", timeout=BUSY_TIMEOUT_MS / 1000,
                                     isolation_level=None)
        try:
            connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA foreign_keys = ON")
            connection.row_factory = sqlite3.Row
            yield connection
        finally:
            connection.close()

    @contextlib.contextmanager
    def writing(self) -> Iterator[sqlite3.Connection]:
        """A write transaction, taken at once (``BEGIN IMMEDIATE``): concurrent writers wait for
        each other instead of failing halfway."""
        with self.connect() as connection:
            connection.execute("BEGIN IMMEDIATE")
            try:
                yield connection
                connection.execute("COMMIT")
            except BaseException:
                connection.execute("ROLLBACK")
                raise

    # tables

    def table_path(self, sha: str) -> Path:
        return self.home / "tables" / f"{sha}.parquet"

    def put_table(self, name: str, source: bytes | Path, role: str, notes: list[str] | None = None) -> str:
        """Store a table once, keyed by the SHA-256 of its bytes, and return that key.

        Parquet is kept as it came; CSV and TREC files are read (raising :class:`InputError`
        naming ``name`` when they cannot be) and written as Parquet; how they were read (a
        sniffed delimiter, decimal commas) is added to ``notes``.
        """
        sha = sha256_of(source)
        if self._has_table(sha):
            return sha
        path = self.table_path(sha)
        if Path(name).suffix.lower() in PARQUET_SUFFIXES:
            parquet_metadata(source, f"{role} ({name})")  # refused before anything is written
            copy_file(source, path)
        else:
            frame = read_bytes(source, name, role)[0] if isinstance(source, bytes) else \
                read_table(Path(source), role)[0]
            write_parquet(path, frame)
            if notes is not None:
                notes.extend(note.message for note in read_notes(frame))
        metadata = pq.read_metadata(path)
        with self.writing() as connection:
            connection.execute("INSERT OR IGNORE INTO tables VALUES (?, ?, ?, ?, ?, ?)",
                               (sha, name, metadata.num_rows, json.dumps(metadata.schema.names),
                                path.stat().st_size, now()))
        return sha

    def _has_table(self, sha: str) -> bool:
        with self.connect() as connection:
            found = connection.execute("SELECT 1 FROM tables WHERE sha256 = ?", (sha,)).fetchone()
        return found is not None and self.table_path(sha).is_file()

    def table(self, sha: str, name: str | None = None) -> StoredTable:
        if name is None:
            with self.connect() as connection:
                row = connection.execute("SELECT name FROM tables WHERE sha256 = ?", (sha,)).fetchone()
            name = row["name"] if row else f"{sha[:12]}.parquet"
        return StoredTable(name, self.table_path(sha))

    # workspaces

    def save_workspace(self, name: str, models: dict[str, str], ground_truth: str, *, columns: Columns,
                       train: str | None = None, items: str | None = None, users: str | None = None,
                       feature_columns: tuple[str, ...] | None = None, embedding_column: str | None = None,
                       user_count: int | None = None, workspace_id: str | None = None) -> SavedWorkspace:
        """Save (or, with ``workspace_id``, overwrite) a workspace of stored tables (their keys)."""
        name = name.strip()
        if not name:
            raise input_error("workspace name", "the name is empty.", "give the workspace a name.")
        mapping = _mapping(columns, feature_columns, embedding_column)
        tables = _roles(models, {"ground_truth": ground_truth, "train": train, "items": items, "users": users})
        print_ = fingerprint_of(tables, mapping)
        stamp = now()
        with self.writing() as connection:
            taken = connection.execute("SELECT id FROM workspaces WHERE name = ?", (name,)).fetchone()
            if taken is not None and taken["id"] != workspace_id:
                raise input_error("workspace name", f"a workspace named {name!r} exists already.",
                                  "choose another name, or open that workspace and replace its files.")
            if workspace_id is None:
                workspace_id = secrets.token_hex(6)
                connection.execute("INSERT INTO workspaces VALUES (?, ?, ?, ?, ?, ?, ?)",
                                   (workspace_id, name, json.dumps(mapping), print_, user_count, stamp, stamp))
            else:
                connection.execute("UPDATE workspaces SET name = ?, mapping = ?, fingerprint = ?, users = ?, "
                                   "updated = ? WHERE id = ?",
                                   (name, json.dumps(mapping), print_, user_count, stamp, workspace_id))
                connection.execute("DELETE FROM workspace_tables WHERE workspace_id = ?", (workspace_id,))
            connection.executemany("INSERT INTO workspace_tables VALUES (?, ?, ?, ?, ?)",
                                   [(workspace_id, role, model, sha, i) for i, (role, model, sha) in enumerate(tables)])
        return self.workspace(workspace_id)

    def workspaces(self) -> list[SavedWorkspace]:
        """Every saved workspace, the most recently saved first."""
        with self.connect() as connection:
            ids = [row["id"] for row in connection.execute("SELECT id FROM workspaces ORDER BY updated DESC, name")]
        return [w for w in (self.workspace(i) for i in ids) if w is not None]

    def workspace(self, workspace_id: str) -> SavedWorkspace | None:
        """The saved workspace with this id, or None (deleted, or never saved here)."""
        with self.connect() as connection:
            row = connection.execute("SELECT * FROM workspaces WHERE id = ?", (workspace_id,)).fetchone()
            if row is None:
                return None
            tables = connection.execute(
                "SELECT w.role, w.model, w.sha256, t.name, t.rows FROM workspace_tables w "
                "JOIN tables t ON t.sha256 = w.sha256 WHERE w.workspace_id = ? ORDER BY w.position",
                (workspace_id,)).fetchall()
        mapping = json.loads(row["mapping"])
        stored = {(t["role"], t["model"]): StoredTable(t["name"], self.table_path(t["sha256"])) for t in tables}
        features = mapping.get("feature_columns")
        return SavedWorkspace(
            id=row["id"], name=row["name"],
            models={model: table for (role, model), table in stored.items() if role == "model"},
            ground_truth=stored[("ground_truth", "")], columns=Columns(**mapping["columns"]),
            **{role: stored.get((role, "")) for role in OPTIONAL_ROLES},
            feature_columns=tuple(features) if features else None, embedding_column=mapping.get("embedding_column"),
            fingerprint=row["fingerprint"], user_count=row["users"], rows=sum(t["rows"] for t in tables),
            created=row["created"], updated=row["updated"])

    def find_workspace(self, name_or_id: str) -> SavedWorkspace | None:
        found = self.workspace(name_or_id)
        if found is not None:
            return found
        with self.connect() as connection:
            row = connection.execute("SELECT id FROM workspaces WHERE name = ?", (name_or_id,)).fetchone()
        return self.workspace(row["id"]) if row else None

    def rename_workspace(self, workspace_id: str, name: str) -> SavedWorkspace:
        saved = self._existing(workspace_id)
        name = name.strip()
        with self.writing() as connection:
            taken = connection.execute("SELECT id FROM workspaces WHERE name = ?", (name,)).fetchone()
            if not name or (taken is not None and taken["id"] != workspace_id):
                raise input_error("workspace name", f"{name!r} is empty or taken by another workspace.",
                                  "choose another name.")
            connection.execute("UPDATE workspaces SET name = ?, updated = ? WHERE id = ?", (name, now(), saved.id))
            connection.execute("UPDATE runs SET workspace_name = ? WHERE workspace_id = ?", (name, saved.id))
        return self.workspace(workspace_id)

    def replace_model(self, workspace_id: str, model: str, sha: str, user_count: int | None = None) -> SavedWorkspace:
        """Add a model to a saved workspace, or give one of its models another file."""
        saved = self._existing(workspace_id)
        models = {name: table.path.stem for name, table in saved.models.items()}
        models[model] = sha
        roles = {role: getattr(saved, role).path.stem for role in OPTIONAL_ROLES if getattr(saved, role)}
        return self.save_workspace(saved.name, models, saved.ground_truth.path.stem, columns=saved.columns,
                                   feature_columns=saved.feature_columns, embedding_column=saved.embedding_column,
                                   user_count=user_count if user_count is not None else saved.user_count,
                                   workspace_id=saved.id, **roles)

    def delete_workspace(self, workspace_id: str) -> None:
        """Delete a workspace and the tables no other workspace uses (its runs are kept)."""
        self._existing(workspace_id)
        with self.writing() as connection:
            connection.execute("DELETE FROM workspace_tables WHERE workspace_id = ?", (workspace_id,))
            connection.execute("DELETE FROM workspaces WHERE id = ?", (workspace_id,))
        self.collect_tables()

    def collect_tables(self) -> list[str]:
        """Delete the tables no workspace uses (older than the grace period); return their keys."""
        cutoff = datetime.fromtimestamp(time.time() - self.grace, UTC).isoformat(timespec="seconds")
        with self.writing() as connection:
            unused = [row["sha256"] for row in connection.execute(
                "SELECT sha256 FROM tables WHERE created <= ? AND sha256 NOT IN "
                "(SELECT sha256 FROM workspace_tables)", (cutoff,))]
            connection.executemany("DELETE FROM tables WHERE sha256 = ?", [(sha,) for sha in unused])
        for sha in unused:
            self.table_path(sha).unlink(missing_ok=True)
        return unused

    def _existing(self, workspace_id: str) -> SavedWorkspace:
        saved = self.workspace(workspace_id)
        if saved is None:
            raise input_error("workspace", f"no saved workspace has the id {workspace_id!r} in {self.home}.",
                              "list the saved workspaces and choose one of them.")
        return saved


def parquet_metadata(source: bytes | Path, label: str) -> pq.FileMetaData:
    """The Parquet footer of ``source`` (InputError naming ``label`` when it is not Parquet)."""
    try:
        return pq.read_metadata(io.BytesIO(source) if isinstance(source, bytes) else source)
    except (OSError, ValueError) as error:
        raise input_error(label, f"is not a readable Parquet file ({str(error).splitlines()[0]}).",
                          "export it again as Parquet, or upload it as CSV.") from None


def _mapping(columns: Columns, feature_columns, embedding_column) -> dict:
    return {"columns": asdict(columns), "feature_columns": list(feature_columns) if feature_columns else None,
            "embedding_column": embedding_column}


def _roles(models: dict[str, str], others: dict[str, str | None]) -> list[tuple[str, str, str]]:
    return [("model", model, sha) for model, sha in models.items()] + \
        [(role, "", sha) for role, sha in others.items() if sha]


def workspace_fingerprint(models: dict[str, str], others: dict[str, str | None], columns: Columns,
                          feature_columns=None, embedding_column=None) -> str:
    """The fingerprint a workspace of these stored tables (keys by model and by role) and this
    mapping gets when saved, whatever its name."""
    return fingerprint_of(_roles(models, others), _mapping(columns, feature_columns, embedding_column))


def fingerprint_of(tables: list[tuple[str, str, str]], mapping: dict) -> str:
    """What a workspace's numbers depend on: its tables' keys in their roles and the mapping
    (not its name: the same files and mapping give the same fingerprint)."""
    digest = hashlib.sha256(json.dumps(sorted(tables)).encode())
    digest.update(json.dumps(mapping, sort_keys=True).encode())
    return digest.hexdigest()
