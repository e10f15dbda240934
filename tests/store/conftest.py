"""The store's whole suite runs twice: on the SQLite catalog (the default) and on a PostgreSQL
catalog (``RANKSCOPE_CATALOG``) in a throw-away server started for the test session. Tests of
what only SQLite has (its file, its lock, its backup) are marked ``sqlite_only``, those of what
only PostgreSQL has ``postgresql_only``."""

from __future__ import annotations

import pytest

from tests.postgres import Server

ONLY = {"sqlite": "postgresql_only", "postgresql": "sqlite_only"}  # the engine -> the marker that excludes it


def pytest_collection_modifyitems(config, items):
    """A test marked for one engine is not collected on the other (deselected, not skipped: a
    skip here means no PostgreSQL server)."""
    excluded = [item for item in items if hasattr(item, "callspec")
                and item.get_closest_marker(ONLY.get(item.callspec.params.get("catalog_engine"), "")) is not None]
    if excluded:
        config.hook.pytest_deselected(items=excluded)
        items[:] = [item for item in items if item not in excluded]


@pytest.fixture(scope="session")
def postgresql_server():
    server = Server()
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgresql"], autouse=True)
def catalog_engine(request, monkeypatch):
    """The catalog engine of this run of the test: "sqlite", or "postgresql" with
    ``RANKSCOPE_CATALOG`` set to an empty schema of its own."""
    monkeypatch.delenv("RANKSCOPE_CATALOG", raising=False)
    if request.param == "postgresql":
        monkeypatch.setenv("RANKSCOPE_CATALOG", request.getfixturevalue("postgresql_server").fresh_url())
    return request.param


@pytest.fixture
def hold_write_lock(catalog_engine):
    """A context manager holding the catalog's writers' lock from another connection, as
    another process's long write does."""
    import contextlib
    import os
    import sqlite3

    from metrics_core.store.database import WRITERS_LOCK

    @contextlib.contextmanager
    def held(home):
        if catalog_engine == "sqlite":
            holder = sqlite3.connect(home / "catalog.sqlite", isolation_level=None)
            holder.execute("BEGIN IMMEDIATE")
            try:
                yield
            finally:
                holder.execute("ROLLBACK")
                holder.close()
        else:
            import psycopg

            with psycopg.connect(os.environ["RANKSCOPE_CATALOG"], autocommit=True) as holder:
                holder.execute("SELECT pg_advisory_lock(%s)", (WRITERS_LOCK,))
                yield

    return held

