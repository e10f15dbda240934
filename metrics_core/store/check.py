"""``rankscope store check``: what in a store cannot be read, found without trusting the
catalog to open (a damaged SQLite catalog, or a PostgreSQL catalog that cannot be reached, is
itself the first thing reported)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from metrics_core.store.files import sha256_of


def check_store(home: Path, catalog_url: str | None = None) -> list[str]:
    """One line per problem: the catalog's own integrity, then every table and run whose file
    is missing or not what was stored, then kept evaluations and encoded datasets that cannot be
    read (nothing is lost: the app reads the tables again), then leftovers of interrupted
    writes. Empty: sound. ``catalog_url``: a PostgreSQL catalog (None: the SQLite file in
    ``home``)."""
    problems = _postgresql(home, catalog_url) if catalog_url else _sqlite(home)
    problems += _kept(home)
    leftovers = [path for folder in (home, home / "tables", home / "runs", home / "results", home / "encoded")
                 for path in sorted(folder.glob(".*.tmp"))]
    problems += [f"{path}: left by an interrupted write (removed by the next rankscope to open the store once it "
                 "is an hour old)" for path in leftovers]
    return problems


def _postgresql(home: Path, url: str) -> list[str]:
    from metrics_core.store import schema
    from metrics_core.store.database import open_catalog

    catalog = open_catalog(home, url, busy_ms=10_000)
    try:
        with catalog.connect() as connection:
            version = catalog.version(connection)
            if version == 0:
                return []  # (nothing was ever saved there: nothing can be damaged)
            if version > schema.CURRENT:
                return [f"{catalog.where}: written by a newer rankscope (version {version}); check it with that "
                        "version"]
            return _tables(connection, home, with_stored_hash=True) + _runs(connection, home)
    except catalog.errors() as error:
        return [f"{catalog.where}: cannot be read ({_first_line(error)}); start the database server or correct "
                "RANKSCOPE_CATALOG"]


def _sqlite(home: Path) -> list[str]:
    catalog = home / "catalog.sqlite"
    if not catalog.is_file():
        return []  # (nothing was ever saved here: nothing can be damaged)
    try:
        connection = sqlite3.connect(f"file:{catalog}?mode=ro", uri=True)
        connection.row_factory = sqlite3.Row
        verdict = connection.execute("PRAGMA integrity_check").fetchone()[0]
    except sqlite3.DatabaseError as error:
        return [f"{catalog}: damaged ({error}); restore it from {home / 'catalog.sqlite.backup'} if that copy "
                "checks sound (copy it over catalog.sqlite)"]
    try:
        problems = [] if verdict == "ok" else [f"{catalog}: damaged ({verdict})"]
        columns = {row[1] for row in connection.execute("PRAGMA table_info(tables)")}
        problems += _tables(connection, home, "stored_sha256" in columns) + _runs(connection, home)
    except sqlite3.DatabaseError as error:
        problems = [f"{catalog}: damaged ({error})"]
    finally:
        connection.close()
    return problems


def _tables(connection, home: Path, with_stored_hash: bool) -> list[str]:
    """Tables whose stored file is missing, or whose SHA-256 is not the one stored with it
    (catalogs older than version 3 kept no such hash)."""
    stored = "stored_sha256" if with_stored_hash else "NULL AS stored_sha256"
    problems = []
    for row in connection.execute(f"SELECT sha256, name, {stored} FROM tables ORDER BY name"):
        path = home / "tables" / f"{row['sha256']}.parquet"
        users = [w[0] for w in connection.execute(
            "SELECT DISTINCT w.name FROM workspace_tables t JOIN workspaces w ON w.id = t.workspace_id "
            "WHERE t.sha256 = ?", (row["sha256"],))]
        used = f" (used by {', '.join(repr(u) for u in users)})" if users else ""
        if not path.is_file():
            problems.append(f"{path}: missing, the stored copy of {row['name']!r}{used}; upload or --save it again")
        elif row["stored_sha256"] is not None and sha256_of(path) != row["stored_sha256"]:
            problems.append(f"{path}: damaged, the stored copy of {row['name']!r}{used}; upload or --save it again")
    return problems


def _runs(connection, home: Path) -> list[str]:
    import pyarrow.parquet as pq

    problems = []
    for row in connection.execute("SELECT id, workspace_name, per_user FROM runs ORDER BY created"):
        path = home / "runs" / row["per_user"]
        try:
            pq.read_metadata(path)
        except (OSError, ValueError) as error:
            why = "missing" if not path.is_file() else f"damaged ({str(error).splitlines()[0]})"
            problems.append(f"{path}: {why}, the per-user values of run {row['id']} ({row['workspace_name']!r}); "
                            "its aggregates are intact, but it cannot be compared")
    return problems


def _kept(home: Path) -> list[str]:
    """Kept evaluations (``results/``) and encoded datasets (``encoded/``) that cannot be read:
    the JSON or manifest does not parse, or a file it names is missing or not a readable
    Parquet or numpy file."""
    import json

    import numpy as np
    import pyarrow.parquet as pq

    fix = "nothing is lost (the app reads the workspace's tables again); delete it to reclaim the space"
    problems = []
    for path in sorted((home / "results").glob("*.json")):
        try:
            json.loads(path.read_text())
            pq.read_metadata(path.with_suffix(".parquet"))
        except (OSError, ValueError) as error:
            problems.append(f"{path.with_suffix('')}: a kept evaluation that cannot be read ({_first_line(error)}); "
                            f"{fix}")
    for folder in sorted(p for p in (home / "encoded").glob("*-*") if p.is_dir()):
        try:
            manifest = json.loads((folder / "manifest.json").read_text())
            for name in _files_named(manifest):
                if name.endswith(".npy"):
                    np.load(folder / name, mmap_mode="r", allow_pickle=False)
                else:
                    pq.read_metadata(folder / name)
        except (OSError, ValueError) as error:
            problems.append(f"{folder}: a kept encoded dataset that cannot be read ({_first_line(error)}); {fix}")
    return problems


def _files_named(packed) -> list[str]:
    """Every file a kept dataset's manifest names (:mod:`metrics_core.store.encoded`)."""
    if isinstance(packed, dict):
        own = [packed[key] for key in ("npy", "texts", "frame") if isinstance(packed.get(key), str)]
        return own + [name for value in packed.values() for name in _files_named(value)]
    if isinstance(packed, list):
        return [name for value in packed for name in _files_named(value)]
    return []


def _first_line(error: Exception) -> str:
    return (str(error).splitlines() or [type(error).__name__])[0]
