"""Helpers of the store's tests that work on either catalog engine."""

from __future__ import annotations


def set_catalog_version(home, version: int) -> None:
    """Write ``version`` as the catalog's schema version (as a newer rankscope would have)."""
    from metrics_core.store import Store

    with Store(home).connect() as connection:
        if connection.kind == "sqlite":
            connection.execute(f"PRAGMA user_version = {version}")
        else:
            connection.execute("UPDATE catalog_version SET version = ?", (version,))
