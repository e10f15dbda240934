"""Moving a store's catalog from its SQLite file to PostgreSQL (``rankscope store migrate``):
every row copied in one transaction of the target, in the order the references need, runs in
the order they were recorded. The files (tables, runs) stay in the home folder, which both
catalogs name by the same keys."""

from __future__ import annotations

from typing import TYPE_CHECKING

from metrics_core.errors import input_error
from metrics_core.store import schema

if TYPE_CHECKING:
    from metrics_core.store.catalog import Store


def copy_catalog(source: Store, target: Store) -> dict[str, int]:
    """Copy every row of ``source``'s catalog into ``target``'s, which must be a PostgreSQL
    catalog holding nothing yet; return the rows copied per table. Nothing is copied when the
    target is not empty (InputError), and nothing is left half-copied on a failure."""
    if target.catalog.kind != "postgresql":
        raise input_error("store migrate", f"{target.catalog.where} is not a PostgreSQL catalog.",
                          "give --to a postgresql://user@host:5432/database URL.")
    counts = {}
    with source.connect() as reading, target.writing() as writing:
        held = {table: writing.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in schema.COPIED}
        if any(held.values()):
            raise input_error("store migrate", f"the catalog {target.catalog.where} is not empty ("
                              + ", ".join(f"{n} {table}" for table, n in held.items() if n) + "); nothing was copied.",
                              "migrate into an empty database or schema; a store already on PostgreSQL needs no "
                              "migration.")
        for table in schema.COPIED:
            rows = reading.execute(f"SELECT * FROM {table}" + (" ORDER BY rowid" if table == "runs" else "")).fetchall()
            if rows:
                columns = list(rows[0].keys())
                writing.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES "
                                    f"({', '.join('?' * len(columns))})", [tuple(row) for row in rows])
            counts[table] = len(rows)
    return counts
