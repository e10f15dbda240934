"""The run store: uploaded tables, saved workspaces and evaluation runs on disk, shared by the
app and the command line (several processes may write at once).

Layout under the home folder (``RANKSCOPE_HOME``, default ``./.rankscope``)::

    catalog.sqlite          what exists: tables, workspaces, runs (SQLite in WAL mode), unless
                            RANKSCOPE_CATALOG names a PostgreSQL database (:mod:`database`)
    catalog.sqlite.backup   a copy of the SQLite catalog, refreshed once a day when it checks sound
    tables/<sha256>.parquet every uploaded table once, named by the SHA-256 of its bytes
    runs/<run id>.parquet   the per-user values of a run

A table is stored once however many workspaces use it. A workspace id means one content for
ever: saving other files or another mapping under a name makes a new workspace that supersedes
the old one, whose link still opens what was saved under it. Deleting moves a workspace to the
trash for ``RANKSCOPE_TRASH_DAYS`` (default 30) days, restorable until then; purging it deletes
the tables no other workspace uses. Nothing is pickled: Parquet for tables, JSON text in the catalog.

Several machines may share the home folder (a mounted team folder) when the catalog is on
PostgreSQL: every file is written under a temporary name in its own folder and renamed into
place, a table's name is the SHA-256 of its bytes (two machines storing one file write the same
bytes under the same name), a run's file is published only under a name no other run has, and a
stored table's hash is checked when a workspace is opened.

Trust: anyone who can run rankscope against this folder, or reach an app server that uses it,
can see, open, rename and delete every workspace in it (the README's "Who can see what").
``RANKSCOPE_READ_ONLY=1`` makes the store refuse every write.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import itertools
import json
import os
import re
import secrets
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

import pyarrow.parquet as pq

from metrics_core.errors import InputError, input_error
from metrics_core.inputs.columns import Columns
from metrics_core.inputs.read import PARQUET_SUFFIXES, StoredTable, read_bytes, read_notes, read_table, unreadable
from metrics_core.inputs.recipe import OPTIONAL_ROLES, Recipe
from metrics_core.store import failures, schema
from metrics_core.store.database import ConflictError, Connection, catalog_url_from_environment, open_catalog
from metrics_core.store.encoded import forget_datasets
from metrics_core.store.failures import HOME_VARIABLE, READ_ONLY_VARIABLE
from metrics_core.store.files import (
    copy_file,
    remove_stale_temporaries,
    sha256_of,
    write_parquet,
)
from metrics_core.store.results import forget_results

BUSY_TIMEOUT_MS = 30_000
BUSY_VARIABLE = "RANKSCOPE_BUSY_TIMEOUT_MS"
TRASH_DAYS_VARIABLE = "RANKSCOPE_TRASH_DAYS"
TRASH_DAYS = 30.0
ID_SHAPE = re.compile(r"[0-9a-f]{12}")
SAVE_RETRIES = 5
LIVE = "superseded_by IS NULL AND deleted IS NULL"  # a workspace listed under its name
IF_EXISTS = ("refuse", "replace", "version")


def default_home() -> Path:
    """``$RANKSCOPE_HOME``, else ``.rankscope`` in the current folder."""
    return Path(os.environ.get(HOME_VARIABLE) or ".rankscope").expanduser()


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def read_only_from_environment() -> bool:
    return os.environ.get(READ_ONLY_VARIABLE, "").strip().lower() in {"1", "true", "yes", "on"}


def busy_timeout_from_environment() -> int:
    """How long a writer waits for another's lock (``RANKSCOPE_BUSY_TIMEOUT_MS``, default 30 s)."""
    try:
        return max(0, int(os.environ.get(BUSY_VARIABLE, BUSY_TIMEOUT_MS)))
    except ValueError:
        return BUSY_TIMEOUT_MS


def trash_days() -> float:
    """How long a deleted workspace stays restorable (``RANKSCOPE_TRASH_DAYS``, default 30)."""
    try:
        return max(0.0, float(os.environ.get(TRASH_DAYS_VARIABLE, TRASH_DAYS)))
    except ValueError:
        return TRASH_DAYS


def checked_name(name: str) -> str:
    """A workspace name as kept: stripped, not blank, not shaped like a workspace id (ids and
    names are two namespaces: a link or ``--save`` must never mean one for the other)."""
    name = (name or "").strip()
    if not name:
        raise input_error("workspace name", "the name is empty.", "give the workspace a name.")
    if ID_SHAPE.fullmatch(name):
        raise input_error("workspace name", f"{name!r} has the shape of a workspace id (12 hexadecimal digits).",
                          "choose a name with other characters; a saved workspace is opened by its id with the "
                          "app's ?ws= link, and by name everywhere else.")
    return name


class NameTakenError(InputError):
    """Saving under the name of a live workspace when asked not to replace it; ``existing``
    is that workspace."""

    def __init__(self, existing: SavedWorkspace):
        built = input_error("workspace name", f"a workspace named {existing.name!r} exists already.",
                            "replace it (its link keeps opening what it holds now), save as a new version, or "
                            "choose another name.")
        super().__init__(built.template, built.source, built.column, built._problem, built._fix)
        self.existing = existing


@dataclass(frozen=True, kw_only=True)
class SavedWorkspace(Recipe[StoredTable]):
    """A named :class:`~metrics_core.inputs.recipe.Recipe` whose tables are in the store, with
    its place in the catalog."""

    id: str
    name: str
    fingerprint: str = ""
    user_count: int | None = None
    rows: int = 0
    created: str = ""
    updated: str = ""
    superseded_by: str | None = None  # the workspace saved over this one under its name
    deleted: str | None = None  # when it went to the trash

    @property
    def live(self) -> bool:
        """Listed under its name: neither superseded nor in the trash."""
        return self.superseded_by is None and self.deleted is None


class Store:
    """Open (creating and migrating when needed) the store at ``home``.

    ``table_grace_seconds``: a table no workspace uses is deleted only once it is this old, so
    that a table another process has just stored, for a workspace it is about to save, is kept.
    ``read_only`` (default: ``RANKSCOPE_READ_ONLY``): every write is refused.
    ``busy_timeout_ms``: how long a writer waits for another's write lock before giving up.
    ``catalog``: the catalog's database URL (default ``RANKSCOPE_CATALOG``; None: the SQLite
    file in ``home``). The tables and runs' files are in ``home`` whichever catalog lists them.
    """

    def __init__(self, home: Path | str | None = None, table_grace_seconds: float = 600.0,
                 read_only: bool | None = None, busy_timeout_ms: int | None = None, catalog: str | None = None):
        self.home = Path(home) if home is not None else default_home()
        self.grace = table_grace_seconds
        self.read_only = read_only_from_environment() if read_only is None else read_only
        self.busy_ms = busy_timeout_ms if busy_timeout_ms is not None else busy_timeout_from_environment()
        self.catalog = open_catalog(self.home, catalog or catalog_url_from_environment(), self.busy_ms)
        try:
            for folder in (self.home, self.home / "tables", self.home / "runs"):
                folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise (failures.disk_full(self.home) if failures.is_full(error)
                   else failures.not_writable(self.home, error)) from None
        with self.explained():
            self.catalog.prepare(writable=not self.read_only)
        with self.connect() as connection:
            try:
                found = self.catalog.version(connection)
                if self.read_only and found < schema.CURRENT:
                    raise failures.needs_upgrade(self.catalog.where, found)
                self.catalog.migrate(connection)
            except schema.NewerCatalogError as error:
                raise failures.newer_catalog(self.catalog.where, error) from None
        if not self.read_only:
            remove_stale_temporaries(self.home)
            with contextlib.suppress(OSError, InputError, *self.catalog.errors()):
                self.catalog.backup()

    def explained(self) -> contextlib.AbstractContextManager[None]:
        """The store's own failures inside the block as their messages (:mod:`failures`)."""
        return failures.explained(self.home, self.busy_ms / 1000, self.catalog)

    @contextlib.contextmanager
    def connect(self) -> Iterator[Connection]:
        """A connection for one piece of work (connections are not shared between threads)."""
        with self.explained(), self.catalog.connect() as connection:
            yield connection

    @contextlib.contextmanager
    def writing(self) -> Iterator[Connection]:
        """A write transaction, taken at once: concurrent writers, on this machine or (with a
        PostgreSQL catalog) on others, wait for each other instead of failing halfway. Refused
        in a read-only store."""
        self.require_writable()
        with self.explained(), self.catalog.writing() as connection:
            yield connection

    def require_writable(self) -> None:
        if self.read_only:
            raise failures.read_only(self.home)

    # tables

    def table_path(self, sha: str) -> Path:
        return self.home / "tables" / f"{sha}.parquet"

    def put_table(self, name: str, source: bytes | Path, role: str, notes: list[str] | None = None) -> str:
        """Store a table once, keyed by the SHA-256 of its bytes, and return that key.

        Parquet is kept as it came; CSV and TREC files are read (raising :class:`InputError`
        naming ``name`` when they cannot be) and written as Parquet; how they were read (a
        sniffed delimiter, decimal commas) is added to ``notes``. A stored copy that is missing
        or damaged is stored again (saving the same file repairs the store).
        """
        self.require_writable()
        sha = sha256_of(source)
        if self._has_table(sha) and self.damage(sha) is None:
            return sha
        path = self.table_path(sha)
        with self.explained():
            if Path(name).suffix.lower() in PARQUET_SUFFIXES or _is_parquet(source):
                parquet_metadata(source, f"{role} ({name})")  # refused before anything is written
                copy_file(source, path)
            else:
                frame = read_bytes(source, name, role)[0] if isinstance(source, bytes) else \
                    read_table(Path(source), role)[0]
                read = [note.message for note in read_notes(frame)]
                label = f"{role} ({name}): "
                write_parquet(path, frame, [message.removeprefix(label) for message in read])
                if notes is not None:
                    notes.extend(read)
            metadata = pq.read_metadata(path)
            stored = sha256_of(path)
        with self.writing() as connection:
            connection.execute("INSERT INTO tables (sha256, name, rows, columns, bytes, created, stored_sha256) "
                               "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (sha256) DO UPDATE SET "
                               "stored_sha256 = excluded.stored_sha256, bytes = excluded.bytes",
                               (sha, name, metadata.num_rows, json.dumps(metadata.schema.names),
                                path.stat().st_size, now(), stored))
        return sha

    def _has_table(self, sha: str) -> bool:
        with self.connect() as connection:
            found = connection.execute("SELECT 1 FROM tables WHERE sha256 = ?", (sha,)).fetchone()
        return found is not None

    def damage(self, sha: str) -> str | None:
        """What is wrong with the stored copy of table ``sha`` (None: it is sound): missing, of
        another SHA-256 than when it was stored, or (stored before the store kept that hash)
        without a readable Parquet footer."""
        path = self.table_path(sha)
        if not path.is_file():
            return "missing"
        with self.connect() as connection:
            row = connection.execute("SELECT stored_sha256 FROM tables WHERE sha256 = ?", (sha,)).fetchone()
        expected = row["stored_sha256"] if row else None
        if expected is not None:
            return None if _verified(path, expected) else "damaged (its SHA-256 is not the one it was stored with)"
        try:
            pq.read_metadata(path)
        except (OSError, ValueError):
            return "damaged (not readable Parquet)"
        return None

    def table(self, sha: str, name: str | None = None) -> StoredTable:
        if name is None:
            with self.connect() as connection:
                row = connection.execute("SELECT name FROM tables WHERE sha256 = ?", (sha,)).fetchone()
            name = row["name"] if row else f"{sha[:12]}.parquet"
        return StoredTable(name, self.table_path(sha))

    def verify(self, saved: SavedWorkspace) -> SavedWorkspace:
        """``saved`` when every stored copy it reads is sound; otherwise the :class:`InputError`
        naming the store's damaged file (never the user's) and the repair."""
        from metrics_core._numeric.parallel import map_threads

        tables = [t for t in [*saved.models.values(), *saved.tables().values()] if t is not None]
        # (hashed side by side: hashlib lets go of the interpreter; 2.9 GB took 2.2 s on one thread)
        found = map_threads(lambda table: self.damage(table.path.stem), tables)
        for table, why in zip(tables, found, strict=True):
            if why is not None:
                raise failures.damaged_table(self.home, table.path, table.name, why)
        return saved

    # workspaces

    def save_workspace(self, name: str, models: dict[str, str], ground_truth: str, *, columns: Columns,
                       train: str | None = None, items: str | None = None, users: str | None = None,
                       feature_columns: tuple[str, ...] | None = None, embedding_column: str | None = None,
                       user_count: int | None = None, if_exists: str = "refuse",
                       supersedes: str | None = None) -> SavedWorkspace:
        """Save a workspace of stored tables (their keys) under ``name``, in one transaction.

        When a live workspace has the name already, ``if_exists`` says what to do: ``refuse``
        (:class:`NameTakenError`), ``replace`` (the new workspace supersedes it; when the two hold the
        same files and mapping, the existing one is returned unchanged) or ``version`` (saved as
        "NAME v2", the first free such name). ``supersedes``: the id of the workspace this one is
        a new version of (another model's file, say); it takes that workspace's place. A
        workspace id is never given other content: the superseded workspace keeps its id, its
        files and its runs, and its link still opens it.
        """
        assert if_exists in IF_EXISTS, if_exists
        name = checked_name(name)
        mapping = _mapping(columns, feature_columns, embedding_column)
        tables = _roles(models, {"ground_truth": ground_truth, "train": train, "items": items, "users": users})
        print_ = fingerprint_of(tables, mapping)
        for attempt in range(SAVE_RETRIES):
            try:
                with self.writing() as connection:
                    saved_id = self._save_in(connection, name, mapping, tables, print_, user_count, if_exists,
                                             supersedes)
                return self.workspace(saved_id)
            except ConflictError:  # another writer took the name between our look and our write
                if attempt == SAVE_RETRIES - 1:
                    raise
                time.sleep(0.05 * (attempt + 1))
        raise AssertionError("unreachable")

    def _save_in(self, connection: Connection, name: str, mapping: dict, tables: list, print_: str,
                 user_count: int | None, if_exists: str, supersedes: str | None) -> str:
        """The id of the workspace saved (or kept) by :meth:`save_workspace`, inside its transaction."""
        if supersedes is not None:
            old = connection.execute("SELECT * FROM workspaces WHERE id = ?", (supersedes,)).fetchone()
            if old is None or old["superseded_by"] is not None or old["deleted"] is not None:
                raise input_error("workspace", f"the workspace {supersedes!r} is no longer the latest under its "
                                               "name (saved over, or deleted, by someone else).",
                                  "open the saved workspaces list again and choose the one to change.")
        given_way = [supersedes] if supersedes is not None else []
        taken = connection.execute(f"SELECT * FROM workspaces WHERE name = ? AND {LIVE}", (name,)).fetchone()
        if taken is not None and taken["id"] != supersedes:
            if if_exists == "refuse":
                raise NameTakenError(self._row_workspace(connection, taken))
            if if_exists == "version":
                name = _free_name(connection, name, versions(name))
            elif taken["fingerprint"] == print_ and supersedes is None:
                return taken["id"]  # (the same files and mapping: nothing new to save)
            else:
                given_way.append(taken["id"])
        if supersedes is not None and len(given_way) == 1:
            old = connection.execute("SELECT * FROM workspaces WHERE id = ?", (supersedes,)).fetchone()
            if old["fingerprint"] == print_ and old["name"] == name:
                return old["id"]
        workspace_id = secrets.token_hex(6)
        connection.executemany("UPDATE workspaces SET superseded_by = ? WHERE id = ?",
                               [(workspace_id, old) for old in given_way])
        stamp = now()
        connection.execute("INSERT INTO workspaces (id, name, mapping, fingerprint, users, created, updated) "
                           "VALUES (?, ?, ?, ?, ?, ?, ?)",
                           (workspace_id, name, json.dumps(mapping), print_, user_count, stamp, stamp))
        connection.executemany("INSERT INTO workspace_tables VALUES (?, ?, ?, ?, ?)",
                               [(workspace_id, role, model, sha, i) for i, (role, model, sha) in enumerate(tables)])
        return workspace_id

    def workspaces(self) -> list[SavedWorkspace]:
        """Every live saved workspace (neither superseded nor in the trash), the latest first."""
        return self._listed(f"{LIVE} ORDER BY updated DESC, name")

    def trash(self) -> list[SavedWorkspace]:
        """The workspaces in the trash, the most recently deleted first (each restorable until
        :meth:`purge_trash` removes it)."""
        return self._listed("superseded_by IS NULL AND deleted IS NOT NULL ORDER BY deleted DESC, name")

    def _listed(self, where: str) -> list[SavedWorkspace]:
        with self.connect() as connection:
            ids = [row["id"] for row in connection.execute(f"SELECT id FROM workspaces WHERE {where}")]
        return [w for w in (self.workspace(i) for i in ids) if w is not None]

    def workspace(self, workspace_id: str) -> SavedWorkspace | None:
        """The saved workspace with this id, live, superseded or in the trash; None when there
        is none (purged, or never saved here)."""
        with self.connect() as connection:
            row = connection.execute("SELECT * FROM workspaces WHERE id = ?", (str(workspace_id),)).fetchone()
            return None if row is None else self._row_workspace(connection, row)

    def _row_workspace(self, connection: Connection, row) -> SavedWorkspace:
        tables = connection.execute(
            "SELECT w.role, w.model, w.sha256, t.name, t.rows FROM workspace_tables w "
            "JOIN tables t ON t.sha256 = w.sha256 WHERE w.workspace_id = ? ORDER BY w.position",
            (row["id"],)).fetchall()
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
            created=row["created"], updated=row["updated"], superseded_by=row["superseded_by"],
            deleted=row["deleted"])

    def latest(self, workspace_id: str) -> SavedWorkspace | None:
        """The workspace that now stands where ``workspace_id`` stood: itself when live, else the
        end of its chain of newer versions (None when that chain ends in a purge)."""
        seen = set()
        saved = self.workspace(workspace_id)
        while saved is not None and saved.superseded_by is not None and saved.id not in seen:
            seen.add(saved.id)
            saved = self.workspace(saved.superseded_by)
        return saved

    def versions(self, workspace_id: str) -> list[str]:
        """``workspace_id`` and every earlier version it superseded, directly or not (the
        workspace's history: the runs of all of them are its runs)."""
        with self.connect() as connection:
            rows = connection.execute(
                "WITH RECURSIVE chain(id) AS (SELECT CAST(? AS TEXT) UNION SELECT w.id FROM workspaces w JOIN chain c "
                "ON w.superseded_by = c.id) SELECT id FROM chain", (workspace_id,)).fetchall()
        return [row["id"] for row in rows]

    def find_workspace(self, name_or_id: str) -> SavedWorkspace | None:
        """A workspace by id (any), else the live workspace of that name."""
        found = self.workspace(name_or_id)
        if found is not None:
            return found
        return self.named(name_or_id)

    def free_name(self, name: str) -> str:
        """``name`` when no live workspace has it, else the first free "NAME v2", "NAME v3", …"""
        with self.connect() as connection:
            return _free_name(connection, name.strip(), versions(name.strip()))

    def named(self, name: str) -> SavedWorkspace | None:
        """The live workspace called ``name`` (names only: an id is not a name)."""
        with self.connect() as connection:
            row = connection.execute(f"SELECT * FROM workspaces WHERE name = ? AND {LIVE}",
                                     (name.strip(),)).fetchone()
            return None if row is None else self._row_workspace(connection, row)

    def rename_workspace(self, workspace_id: str, name: str) -> SavedWorkspace:
        """Give a live workspace another name (its id and content stay as they are)."""
        saved = self._existing(workspace_id)
        name = checked_name(name)
        versions = self.versions(saved.id)  # (the runs of its earlier versions are its runs too)
        try:
            with self.writing() as connection:
                taken = connection.execute(f"SELECT id FROM workspaces WHERE name = ? AND {LIVE}",
                                           (name,)).fetchone()
                if taken is not None and taken["id"] != workspace_id:
                    raise ConflictError("taken")
                connection.execute("UPDATE workspaces SET name = ?, updated = ? WHERE id = ?",
                                   (name, now(), saved.id))
                connection.executemany("UPDATE runs SET workspace_name = ? WHERE workspace_id = ?",
                                       [(name, version) for version in versions])
        except ConflictError:
            raise input_error("workspace name", f"{name!r} is taken by another workspace.",
                              "choose another name.") from None
        return self.workspace(workspace_id)

    def replace_model(self, workspace_id: str, model: str, sha: str, user_count: int | None = None) -> SavedWorkspace:
        """A new version of a live saved workspace with a model added, or given another file."""
        saved = self._existing(workspace_id)
        models = {name: table.path.stem for name, table in saved.models.items()}
        models[model] = sha
        roles = {role: getattr(saved, role).path.stem for role in OPTIONAL_ROLES if getattr(saved, role)}
        return self.save_workspace(saved.name, models, saved.ground_truth.path.stem, columns=saved.columns,
                                   feature_columns=saved.feature_columns, embedding_column=saved.embedding_column,
                                   user_count=user_count if user_count is not None else saved.user_count,
                                   supersedes=saved.id, **roles)

    def delete_workspace(self, workspace_id: str) -> SavedWorkspace:
        """Move a live workspace to the trash (its runs are kept; it can be restored for
        :func:`trash_days` days), then purge what has been in the trash longer."""
        self._existing(workspace_id)
        with self.writing() as connection:
            connection.execute("UPDATE workspaces SET deleted = ? WHERE id = ? AND deleted IS NULL",
                               (now(), workspace_id))
        self.purge_trash()
        return self.workspace(workspace_id)

    def restore_workspace(self, workspace_id: str) -> SavedWorkspace:
        """Take a workspace out of the trash, under its name or, when that has been taken since,
        under "NAME (restored)" (the first free such name)."""
        saved = self.workspace(workspace_id)
        if saved is None or saved.deleted is None or saved.superseded_by is not None:
            raise input_error("workspace", f"no workspace in the trash of {self.home} has the id {workspace_id!r}.",
                              "list the trash (rankscope workspaces trash) and restore one of its ids.")
        with self.writing() as connection:
            name = _free_name(connection, saved.name, restored(saved.name))
            connection.execute("UPDATE workspaces SET deleted = NULL, name = ?, updated = ? WHERE id = ?",
                               (name, now(), workspace_id))
        return self.workspace(workspace_id)

    def purge_trash(self, older_than_days: float | None = None) -> list[str]:
        """Delete for good the workspaces in the trash for longer than ``older_than_days``
        (default :func:`trash_days`), with the earlier versions they superseded, then the tables
        nothing uses any more. Returns the ids purged."""
        days = trash_days() if older_than_days is None else older_than_days
        cutoff = datetime.fromtimestamp(time.time() - days * 86_400, UTC).isoformat(timespec="seconds")
        with self.writing() as connection:
            doomed = [row["id"] for row in connection.execute(
                "SELECT id FROM workspaces WHERE deleted IS NOT NULL AND deleted <= ?", (cutoff,))]
            chain = list(doomed)
            while chain:
                chain = [row["id"] for row in connection.execute(
                    f"SELECT id FROM workspaces WHERE superseded_by IN ({','.join('?' * len(chain))})", chain)]
                doomed += chain
            connection.executemany("DELETE FROM workspaces WHERE id = ?", [(i,) for i in doomed])
        if doomed:
            self.collect_tables()
            with self.connect() as connection:
                live = {row["fingerprint"] for row in connection.execute("SELECT fingerprint FROM workspaces")}
            forget_results(self.home, live)
            forget_datasets(self.home, live)
        return doomed

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
        if saved is None or not saved.live:
            raise input_error("workspace", f"no live saved workspace has the id {workspace_id!r} in {self.home}"
                                           + (" (it was saved over, or deleted, since)." if saved else "."),
                              "list the saved workspaces and choose one of them.")
        return saved


def versions(name: str) -> Iterator[str]:
    """"NAME v2", "NAME v3", …: the names "save as a new version" tries."""
    return (f"{name} v{number}" for number in itertools.count(2))


def restored(name: str) -> Iterator[str]:
    """"NAME (restored)", "NAME (restored 2)", …: the names a restore tries when NAME is taken."""
    return itertools.chain([f"{name} (restored)"], (f"{name} (restored {n})" for n in itertools.count(2)))


def _free_name(connection: Connection, name: str, others: Iterator[str]) -> str:
    """``name`` when no live workspace has it, else the first of ``others`` that none has."""
    for candidate in itertools.chain([name], others):
        if connection.execute(f"SELECT 1 FROM workspaces WHERE name = ? AND {LIVE}", (candidate,)).fetchone() is None:
            return candidate
    raise AssertionError("unreachable: the names are endless")


def _is_parquet(source: bytes | Path) -> bool:
    """Whether ``source`` starts with Parquet's magic bytes (a Parquet file under another name)."""
    if isinstance(source, bytes | bytearray | memoryview):
        return bytes(source[:4]) == b"PAR1"
    with Path(source).open("rb") as handle:
        return handle.read(4) == b"PAR1"


def _verified(path: Path, expected: str) -> bool:
    """Whether the file at ``path`` has SHA-256 ``expected`` (remembered by size and time of
    change, so that a table is hashed once per change, not once per read)."""
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns, expected)
    if key not in _VERIFIED:
        if sha256_of(path) != expected:
            return False
        _VERIFIED.add(key)
    return True


_VERIFIED: set[tuple] = set()


def parquet_metadata(source: bytes | Path, label: str) -> pq.FileMetaData:
    """The Parquet footer of ``source`` (InputError naming ``label`` when it is not Parquet)."""
    try:
        return pq.read_metadata(io.BytesIO(source) if isinstance(source, bytes) else source)
    except (OSError, ValueError) as error:
        raise unreadable(label, error) from None


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
