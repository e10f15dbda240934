"""Where the store's catalog lives: a SQLite file under the store's home (the default, for one
machine) or a PostgreSQL database (``RANKSCOPE_CATALOG=postgresql://…``, for a team whose app
servers and jobs run on several machines).

Both engines run the same SQL (written with ``?`` placeholders; PostgreSQL's driver gets ``%s``),
return rows readable by name, by position and as a tuple, and give the same guarantees:

- a write is one transaction, and writers take turns: SQLite's ``BEGIN IMMEDIATE`` takes the
  file's write lock; on PostgreSQL every write transaction first takes one advisory lock
  (``pg_advisory_xact_lock``), released at commit or rollback, so that a look-then-write (is the
  name taken? then insert) never races another machine's;
- a constraint that refuses a write (a live name taken twice, an id used twice) raises
  :class:`ConflictError`, whichever engine refused;
- a writer waits for the lock at most the store's busy timeout, then fails with the store's
  "locked" message;
- the schema version is checked on connect and a newer one is refused (SQLite keeps it in
  ``PRAGMA user_version``, PostgreSQL in the table ``catalog_version``).

SQLite's WAL mode needs one host (its shared-memory index): a SQLite catalog in a folder that
several machines mount is not safe for concurrent writers; that is what PostgreSQL is for.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import secrets
import sqlite3
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from metrics_core.errors import input_error
from metrics_core.store import failures, schema

CATALOG_VARIABLE = "RANKSCOPE_CATALOG"
SQLITE = "sqlite"  # as a URL: the SQLite file in the store's home, as when RANKSCOPE_CATALOG is unset
SQLITE_NAME = "catalog.sqlite"
POSTGRESQL_SCHEMES = ("postgresql", "postgres")
IDLE_CHECK_SECONDS = 5.0  # a reused PostgreSQL connection idle this long is checked before use
WRITERS_LOCK = 0x72616E6B73636F70  # "rankscop": the advisory lock every PostgreSQL write transaction takes


class ConflictError(Exception):
    """A constraint of the catalog refused a write (a live name or an id taken meanwhile)."""


def catalog_url_from_environment() -> str | None:
    """``$RANKSCOPE_CATALOG``, or None (unset or blank: the SQLite file under the home)."""
    return (os.environ.get(CATALOG_VARIABLE) or "").strip() or None


def open_catalog(home: Path, url: str | None, busy_ms: int) -> Catalog:
    """The catalog named by ``url`` (None: SQLite under ``home``); InputError for an URL that
    names neither engine."""
    if url is None or url == SQLITE:
        return SqliteCatalog(home / SQLITE_NAME, busy_ms)
    scheme = urlsplit(url).scheme.split("+")[0].lower()
    if scheme in POSTGRESQL_SCHEMES:
        return PostgresCatalog(url, busy_ms)
    raise input_error(CATALOG_VARIABLE, f"{redacted(url)!r} is not a catalog URL rankscope knows.",
                      "unset it (the catalog is then the SQLite file in RANKSCOPE_HOME), or give a PostgreSQL URL "
                      "such as postgresql://user@host:5432/rankscope.")


def redacted(url: str) -> str:
    """``url`` without its password, in the user part or as a ``password=`` parameter (messages
    and logs never show it).

    >>> redacted("postgresql://me:s3cret@db:5432/rs?sslmode=require&password=s3cret")
    'postgresql://me:***@db:5432/rs?sslmode=require&password=***'
    """
    parts = urlsplit(url)
    netloc = parts.netloc if parts.password is None else parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    query = re.sub(r"(^|&)(password=)[^&]*", r"\1\2***", parts.query)
    return urlunsplit(parts._replace(netloc=netloc, query=query))


class Row:
    """A PostgreSQL row read as SQLite's ``sqlite3.Row`` is: ``row["name"]``, ``row[0]``,
    ``tuple(row)`` and ``row.keys()``."""

    __slots__ = ("_names", "_values")

    def __init__(self, names: list[str], values: tuple):
        self._names, self._values = names, values

    def __getitem__(self, key):
        return self._values[key if isinstance(key, int) else self._names.index(key)]

    def __iter__(self):
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def keys(self) -> list[str]:
        return list(self._names)


def _row_factory(cursor):
    names = [column.name for column in cursor.description or ()]
    return lambda values: Row(names, values)


@functools.lru_cache(maxsize=512)
def _with_percent_placeholders(sql: str) -> str:
    """``?`` placeholders as psycopg's ``%s`` (the catalog's SQL has no ``%`` and no ``?`` in a
    quoted literal; checked)."""
    assert "%" not in sql and not re.search(r"'[^']*\?[^']*'", sql), sql
    return sql.replace("?", "%s")


class Connection:
    """One connection to the catalog, for one piece of work: ``execute`` and ``executemany``
    take ``?`` placeholders on both engines; a refused constraint raises :class:`ConflictError`."""

    def __init__(self, raw, kind: str, integrity: type[Exception]):
        self.raw, self.kind, self._integrity = raw, kind, integrity

    def _sql(self, sql: str) -> str:
        return _with_percent_placeholders(sql) if self.kind == "postgresql" else sql

    def execute(self, sql: str, parameters=()):
        try:
            return self.raw.execute(self._sql(sql), tuple(parameters))
        except self._integrity as error:
            raise ConflictError(str(error)) from error

    def executemany(self, sql: str, rows) -> None:
        rows = [tuple(row) for row in rows]
        if not rows:
            return
        try:
            if self.kind == "postgresql":
                with self.raw.cursor() as cursor:
                    cursor.executemany(self._sql(sql), rows)
            else:
                self.raw.executemany(sql, rows)
        except self._integrity as error:
            raise ConflictError(str(error)) from error


class Catalog:
    """What the store needs of its catalog's engine."""

    kind: str
    where: str  # the catalog as messages name it (a path, or the URL without its password)

    def prepare(self, writable: bool) -> None:
        """Make the catalog exist (when ``writable``) before the first connection."""

    def connect(self) -> contextlib.AbstractContextManager[Connection]:
        raise NotImplementedError

    def writing(self) -> contextlib.AbstractContextManager[Connection]:
        raise NotImplementedError

    def version(self, connection: Connection) -> int:
        return schema.version_of(connection)

    def migrate(self, connection: Connection) -> int:
        return schema.migrate(connection)

    def errors(self) -> tuple[type[Exception], ...]:
        """The engine's own exception classes (the store turns them into its messages)."""
        raise NotImplementedError

    def is_busy(self, error: BaseException) -> bool:
        raise NotImplementedError

    def backup(self) -> None:
        """Refresh a copy of the catalog if the engine keeps one beside the store."""


class SqliteCatalog(Catalog):
    """The catalog as one SQLite file in WAL mode (one machine; any number of processes)."""

    kind = "sqlite"

    def __init__(self, path: Path, busy_ms: int):
        self.path, self.busy_ms = path, busy_ms
        self.where = str(path)

    def prepare(self, writable: bool) -> None:
        if writable and not self.path.exists():
            _create_sqlite_catalog(self.path)

    @contextlib.contextmanager
    def connect(self) -> Iterator[Connection]:
        connection = sqlite3.connect(self.path, timeout=self.busy_ms / 1000, isolation_level=None)
        try:
            connection.execute(f"PRAGMA busy_timeout = {self.busy_ms}")
            _use_wal(connection, self.busy_ms / 1000)
            connection.execute("PRAGMA foreign_keys = ON")
            connection.row_factory = sqlite3.Row
            yield Connection(connection, self.kind, sqlite3.IntegrityError)
        finally:
            connection.close()

    @contextlib.contextmanager
    def writing(self) -> Iterator[Connection]:
        with self.connect() as connection:
            connection.execute("BEGIN IMMEDIATE")
            try:
                yield connection
                connection.execute("COMMIT")
            except BaseException:
                connection.execute("ROLLBACK")
                raise

    def migrate(self, connection: Connection) -> int:
        return schema.migrate(connection.raw)

    def errors(self) -> tuple[type[Exception], ...]:
        return (sqlite3.Error,)

    def is_busy(self, error: BaseException) -> bool:
        return failures.is_busy(error)

    def backup(self) -> None:
        """Copy the catalog to ``catalog.sqlite.backup`` when the copy is a day old or missing
        and the catalog checks sound (a damaged catalog never overwrites its backup)."""
        from metrics_core.store.files import write_atomically

        backup = self.path.with_name(self.path.name + ".backup")
        if backup.exists() and time.time() - backup.stat().st_mtime < BACKUP_EVERY_SECONDS:
            return
        with self.connect() as connection:
            if connection.execute("PRAGMA quick_check").fetchone()[0] != "ok":
                return

            def copy(temporary: Path) -> None:
                target = sqlite3.connect(temporary)
                with target:
                    connection.raw.backup(target)
                target.close()

            write_atomically(backup, copy)


BACKUP_EVERY_SECONDS = 86_400


def _create_sqlite_catalog(path: Path) -> None:
    """Make a new catalog whole under a temporary name (``.catalog.sqlite.<hex>.tmp``, no journal:
    a crash leaves only a temporary file, which the store removes later) and link it into place,
    so that no process ever opens a catalog without its tables (a save killed while it made the
    store left one that the check called damaged). When another process linked its own first,
    that one is kept."""
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        connection = sqlite3.connect(temporary, isolation_level=None)
        try:
            connection.execute("PRAGMA journal_mode = OFF")
            schema.migrate(connection)
        finally:
            connection.close()
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass
        except OSError:  # (a file system without hard links: renamed into place unless one appeared meanwhile)
            if not path.exists():
                os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def _use_wal(connection: sqlite3.Connection, seconds: float) -> None:
    """Put the catalog in WAL mode, which the file keeps: once, by the first connection. Changing
    the mode needs the file to itself, and SQLite answers "locked" at once, without waiting, to
    connections that try while another is changing it (eight threads opening a new store
    together failed now and then): retried for up to ``seconds``."""
    deadline, pause = time.monotonic() + seconds, 0.001
    while True:
        try:
            if connection.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                connection.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as error:
            if not failures.is_busy(error) or time.monotonic() >= deadline:
                raise
            time.sleep(pause)
            pause = min(2 * pause, 0.05)


class PostgresCatalog(Catalog):
    """The catalog in a PostgreSQL database (psycopg 3): the store's tables in the URL's database
    and search path, made on first use by any writable store.

    Each thread keeps one connection and reuses it (a connection to a server on another machine
    costs a round trip or several, with authentication: listing fifty workspaces opened fifty);
    a connection the server closed is opened again on the next use."""

    kind = "postgresql"

    def __init__(self, url: str, busy_ms: int):
        self.url, self.busy_ms = url, busy_ms
        self.where = redacted(url)
        self._psycopg = _psycopg(self.where)
        self._local = threading.local()

    @contextlib.contextmanager
    def connect(self) -> Iterator[Connection]:
        raw = self._reusable()
        if raw is None:
            raw = self._psycopg.connect(self.url, autocommit=True, row_factory=_row_factory, connect_timeout=10)
            self._local.raw = raw
        try:
            yield Connection(raw, self.kind, self._psycopg.IntegrityError)
        finally:
            self._local.used = time.monotonic()

    def _reusable(self):
        """This thread's connection if it is still open: checked with a round trip when it has
        been idle for :data:`IDLE_CHECK_SECONDS` (a server restarted meanwhile has closed it)."""
        raw = getattr(self._local, "raw", None)
        if raw is None or raw.closed or raw.broken:
            return None
        if time.monotonic() - self._local.used > IDLE_CHECK_SECONDS:
            try:
                raw.execute("SELECT 1")
            except self._psycopg.Error:
                raw.close()
                return None
        return raw

    @contextlib.contextmanager
    def writing(self) -> Iterator[Connection]:
        with self.connect() as connection, connection.raw.transaction():
            self._take_writers_lock(connection)
            yield connection

    def _take_writers_lock(self, connection: Connection) -> None:
        """Wait (at most the busy timeout) for the one lock every write transaction takes."""
        connection.raw.execute(f"SET LOCAL lock_timeout = {int(self.busy_ms)}")
        connection.raw.execute("SELECT pg_advisory_xact_lock(%s)", (WRITERS_LOCK,))

    def version(self, connection: Connection) -> int:
        return schema.postgresql_version(connection)

    def migrate(self, connection: Connection) -> int:
        with connection.raw.transaction():  # (one store makes the tables; the others wait, then find them)
            self._take_writers_lock(connection)
            return schema.migrate_postgresql(connection)

    def errors(self) -> tuple[type[Exception], ...]:
        return (self._psycopg.Error,)

    def is_busy(self, error: BaseException) -> bool:
        return isinstance(error, self._psycopg.errors.LockNotAvailable)


def _psycopg(where: str):
    """psycopg, which only a PostgreSQL catalog needs (InputError naming the install when absent)."""
    try:
        import psycopg
    except ImportError:
        raise input_error(CATALOG_VARIABLE, f"the catalog {where} is on PostgreSQL, and psycopg is not installed "
                                            f"for {sys.executable}.",
                          "pip install 'rankscope[postgresql]' (psycopg 3), or unset RANKSCOPE_CATALOG to use "
                          "the SQLite catalog in RANKSCOPE_HOME.") from None
    return psycopg
