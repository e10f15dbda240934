"""The run store's catalog schema, versioned. On SQLite ``PRAGMA user_version`` holds the version
and each step in ``MIGRATIONS`` brings a catalog from the version before it to its own. On
PostgreSQL (:mod:`metrics_core.store.database`) the table ``catalog_version`` holds it; the first
PostgreSQL catalog is version 3, made whole by ``POSTGRESQL_MIGRATIONS[3]``, and later versions
will add a step to both engines.

Version 1 is the store's first shape. Version 2 records how a run was computed (``engine``:
``memory`` or ``spark``) and, for runs too big to keep every user, how many users their
per-user table samples (``per_user_sample``; NULL when it holds every user).

Version 3 makes a workspace id mean one content for ever: saving new files or a new mapping
under a name makes a new workspace row that *supersedes* the old one (``superseded_by``), so
that a link to the old id still opens what was saved under it. A name is unique among the live
workspaces only (neither superseded nor in the trash). Deleting moves a workspace to the trash
(``deleted``: when), from which it can be restored until it is purged. A table keeps the
SHA-256 of its stored file (``stored_sha256``) so that a damaged copy is found on read, and a
run keeps the key of the ground truth it was evaluated against (``ground_truth``).
"""

from __future__ import annotations

import sqlite3

VERSION_1 = """
CREATE TABLE tables (
    sha256 TEXT PRIMARY KEY,          -- of the bytes as uploaded
    name TEXT NOT NULL,               -- the file name it was uploaded as (messages, qrels)
    rows INTEGER NOT NULL,
    columns TEXT NOT NULL,            -- JSON list
    bytes INTEGER NOT NULL,           -- of the stored Parquet file
    created TEXT NOT NULL
);
CREATE TABLE workspaces (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    mapping TEXT NOT NULL,            -- JSON: columns, feature columns, embedding column
    fingerprint TEXT NOT NULL,
    users INTEGER,
    created TEXT NOT NULL,
    updated TEXT NOT NULL
);
CREATE TABLE workspace_tables (
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    role TEXT NOT NULL,               -- model, ground_truth, train, items, users
    model TEXT NOT NULL DEFAULT '',   -- the model's name for role = model
    sha256 TEXT NOT NULL REFERENCES tables(sha256),
    position INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (workspace_id, role, model)
);
CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    workspace_id TEXT,                -- kept when the workspace is deleted: a run is a record
    workspace_name TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    settings TEXT NOT NULL,           -- JSON
    version TEXT NOT NULL,
    created TEXT NOT NULL,
    note TEXT NOT NULL DEFAULT '',
    per_user TEXT                     -- Parquet file name under runs/
);
CREATE TABLE run_models (
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    position INTEGER NOT NULL,
    metrics TEXT NOT NULL,            -- JSON {metric: value}
    intervals TEXT NOT NULL,          -- JSON {metric: [low, high]}
    users TEXT NOT NULL,              -- JSON counts of evaluated / left-out users
    PRIMARY KEY (run_id, model)
);
CREATE INDEX runs_by_workspace ON runs(workspace_id, created);
CREATE INDEX run_models_by_model ON run_models(model);
"""

VERSION_2 = """
ALTER TABLE runs ADD COLUMN engine TEXT NOT NULL DEFAULT 'memory';
ALTER TABLE runs ADD COLUMN per_user_sample INTEGER;
"""

# SQLite cannot drop the UNIQUE of workspaces.name in place: the table is rebuilt (the steps
# SQLite's documentation gives, foreign keys off for the step; see migrate).
VERSION_3 = """
CREATE TABLE workspaces_v3 (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    mapping TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    users INTEGER,
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    superseded_by TEXT,               -- the id of the workspace saved over this one under its name
    deleted TEXT                      -- when it went to the trash (NULL: not in the trash)
);
INSERT INTO workspaces_v3 (id, name, mapping, fingerprint, users, created, updated)
    SELECT id, name, mapping, fingerprint, users, created, updated FROM workspaces;
DROP TABLE workspaces;
ALTER TABLE workspaces_v3 RENAME TO workspaces;
CREATE UNIQUE INDEX workspaces_live_name ON workspaces(name) WHERE superseded_by IS NULL AND deleted IS NULL;
ALTER TABLE tables ADD COLUMN stored_sha256 TEXT;
ALTER TABLE runs ADD COLUMN ground_truth TEXT;
"""

MIGRATIONS = {1: VERSION_1, 2: VERSION_2, 3: VERSION_3}
CURRENT = max(MIGRATIONS)

# Version 3 on PostgreSQL: the same tables, columns and constraints as SQLite's, with 64-bit
# counts, and ``runs.rowid`` (a sequence) standing for SQLite's implicit rowid, the order runs
# were recorded in.
POSTGRESQL_VERSION_3 = """
CREATE TABLE catalog_version (version INTEGER NOT NULL);
CREATE TABLE tables (
    sha256 TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    rows BIGINT NOT NULL,
    columns TEXT NOT NULL,
    bytes BIGINT NOT NULL,
    created TEXT NOT NULL,
    stored_sha256 TEXT
);
CREATE TABLE workspaces (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    mapping TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    users BIGINT,
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    superseded_by TEXT,
    deleted TEXT
);
CREATE UNIQUE INDEX workspaces_live_name ON workspaces(name) WHERE superseded_by IS NULL AND deleted IS NULL;
CREATE TABLE workspace_tables (
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    role TEXT NOT NULL,
    model TEXT NOT NULL DEFAULT '',
    sha256 TEXT NOT NULL REFERENCES tables(sha256),
    position INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (workspace_id, role, model)
);
CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    workspace_id TEXT,
    workspace_name TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    settings TEXT NOT NULL,
    version TEXT NOT NULL,
    created TEXT NOT NULL,
    note TEXT NOT NULL DEFAULT '',
    per_user TEXT,
    engine TEXT NOT NULL DEFAULT 'memory',
    per_user_sample BIGINT,
    ground_truth TEXT,
    rowid BIGSERIAL UNIQUE
);
CREATE TABLE run_models (
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    position INTEGER NOT NULL,
    metrics TEXT NOT NULL,
    intervals TEXT NOT NULL,
    users TEXT NOT NULL,
    PRIMARY KEY (run_id, model)
);
CREATE INDEX runs_by_workspace ON runs(workspace_id, created);
CREATE INDEX run_models_by_model ON run_models(model);
INSERT INTO catalog_version VALUES (3);
"""

POSTGRESQL_MIGRATIONS = {3: POSTGRESQL_VERSION_3}
COPIED = ("tables", "workspaces", "workspace_tables", "runs", "run_models")  # (in the order references need)


def version_of(connection) -> int:
    """The version of a catalog (a connection of either engine, or a bare SQLite one)."""
    if getattr(connection, "kind", "sqlite") == "postgresql":
        return postgresql_version(connection)
    return int(connection.execute("PRAGMA user_version").fetchone()[0])


def migrate(connection: sqlite3.Connection, target: int = CURRENT) -> int:
    """Bring the catalog to ``target``, one step per version, each in one transaction (a crash
    leaves the catalog at the version before the step). Returns the version reached.

    A catalog newer than this rankscope is refused: writing to it could lose what the newer
    version keeps.
    """
    found = version_of(connection)
    if found > CURRENT:
        raise NewerCatalogError(found)
    if found >= target:
        return found
    connection.execute("PRAGMA foreign_keys = OFF")  # (a rebuilt table's rows keep their references)
    try:
        for version in range(found + 1, target + 1):
            connection.execute("BEGIN IMMEDIATE")
            try:
                if version_of(connection) < version:  # another process may have migrated meanwhile
                    for statement in _statements(MIGRATIONS[version]):
                        connection.execute(statement)
                    if connection.execute("PRAGMA foreign_key_check").fetchone() is not None:
                        raise sqlite3.IntegrityError(f"version {version} would break a reference")
                    connection.execute(f"PRAGMA user_version = {version}")
                connection.execute("COMMIT")
            except BaseException:
                connection.execute("ROLLBACK")
                raise
    finally:
        connection.execute("PRAGMA foreign_keys = ON")
    return version_of(connection)


def postgresql_version(connection) -> int:
    """The version of a PostgreSQL catalog (0: none made yet in the URL's search path). Whether
    the table exists is read from ``pg_tables`` (a fresh snapshot), not by looking its name up:
    a session that looked before another made the catalog would otherwise keep "no such table"
    cached, and make it again."""
    if connection.execute("SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = current_schema() "
                          "AND tablename = 'catalog_version'").fetchone()[0] == 0:
        return 0
    return int(connection.execute("SELECT max(version) FROM catalog_version").fetchone()[0])


def migrate_postgresql(connection) -> int:
    """:func:`migrate` for a PostgreSQL catalog, inside the caller's transaction (which holds the
    writers' lock): made whole at its first version, then stepped up; a newer one is refused."""
    found = postgresql_version(connection)
    if found > CURRENT:
        raise NewerCatalogError(found)
    first = min(POSTGRESQL_MIGRATIONS)
    for version in range(max(found + 1, first), CURRENT + 1):
        for statement in _statements(POSTGRESQL_MIGRATIONS[version]):
            connection.execute(statement)
        connection.execute("UPDATE catalog_version SET version = ?", (version,))
    return postgresql_version(connection)


class NewerCatalogError(RuntimeError):
    """The catalog was written by a newer rankscope (its schema version is above CURRENT)."""

    def __init__(self, found: int):
        super().__init__(f"the store's catalog is version {found}, newer than this rankscope reads ({CURRENT})")
        self.found = found


def _statements(script: str) -> list[str]:
    """The statements of a migration script (comments dropped), run one by one so that the
    whole step stays in the caller's transaction (``executescript`` would commit first)."""
    lines = [line.split("--")[0] for line in script.splitlines()]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]
