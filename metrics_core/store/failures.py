"""What goes wrong with the store itself, each with its own message and fix (an
:class:`InputError`: the command exits 2, the app shows the message): a full disk, a catalog
whose write lock another process holds too long, a damaged catalog, a catalog written by a newer
rankscope, a folder this user cannot write, a damaged or missing stored file.

The store's own failures are never blamed on the user's files: a message names the store's
file and says how to repair it."""

from __future__ import annotations

import contextlib
import errno
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from metrics_core.errors import InputError, input_error

if TYPE_CHECKING:
    from metrics_core.store.database import Catalog

HOME_VARIABLE = "RANKSCOPE_HOME"
READ_ONLY_VARIABLE = "RANKSCOPE_READ_ONLY"
CHECK_COMMAND = "rankscope store check"


def disk_full(home: Path) -> InputError:
    return input_error("store", f"the disk holding {home} is full; nothing was saved and the store is as it was.",
                       f"free some space on that disk, or set {HOME_VARIABLE} to a folder on another disk.")


def locked(catalog: str, seconds: float) -> InputError:
    return input_error("store", f"another process has held the write lock of {catalog} for over "
                                f"{seconds:g} s; nothing was saved.",
                       "wait for the other rankscope (a long save, or a process that hangs) to finish, then run "
                       "again; if none is running, restart the app server that last used this store.")


def damaged_catalog(home: Path, error: Exception) -> InputError:
    return input_error("store", f"the catalog {home / 'catalog.sqlite'} is damaged ({error}).",
                       f"run '{CHECK_COMMAND}' to see what can be read, or restore the catalog from its backup "
                       f"{home / 'catalog.sqlite.backup'} (copy it over catalog.sqlite).")


def newer_catalog(catalog: str, error: Exception) -> InputError:
    return input_error("store", f"the catalog {catalog} was written by a newer rankscope ({error}).",
                       "upgrade rankscope (pip install --upgrade rankscope) to use this store; the older one "
                       "cannot write to it without losing what the newer one keeps.")


def not_writable(home: Path, error: Exception) -> InputError:
    return input_error(HOME_VARIABLE, f"cannot use the store at {home} ({error}).",
                       f"set {HOME_VARIABLE} to a folder this user can write, or fix its permissions.")


def read_only(home: Path) -> InputError:
    return input_error("store", f"the store at {home} is read-only ({READ_ONLY_VARIABLE}=1): nothing can be "
                                "uploaded, saved, renamed, deleted or recorded.",
                       f"use a server started without {READ_ONLY_VARIABLE}, or evaluate without saving.")


def needs_upgrade(catalog: str, version: int) -> InputError:
    return input_error("store", f"the catalog {catalog} is version {version}, older than this rankscope's, and a "
                                f"read-only store ({READ_ONLY_VARIABLE}=1) cannot upgrade it.",
                       f"run any rankscope command on it once without {READ_ONLY_VARIABLE} (the upgrade keeps every "
                       "workspace and run), then start the read-only server again.")


def unreachable(catalog: str, error: Exception) -> InputError:
    first = (str(error).strip().splitlines() or [type(error).__name__])[0]
    return input_error("RANKSCOPE_CATALOG", f"cannot use the catalog database {catalog} ({first}); nothing was "
                                            "saved.",
                       "start the database server or correct RANKSCOPE_CATALOG (host, port, database, user); the "
                       "user needs to create tables in that database the first time.")


def damaged_table(home: Path, path: Path, name: str, why: str) -> InputError:
    return input_error("store", f"the store's copy of {name!r} ({path.relative_to(home)}) is {why}: the "
                                "file you uploaded is not at fault.",
                       f"upload or --save {name!r} again (its copy is stored afresh), or run '{CHECK_COMMAND}' to "
                       "list every damaged file.")


def is_full(error: BaseException) -> bool:
    if isinstance(error, OSError):
        return error.errno in (errno.ENOSPC, errno.EDQUOT)
    return isinstance(error, sqlite3.Error) and "disk is full" in str(error)


@contextlib.contextmanager
def explained(home: Path, busy_seconds: float, catalog: Catalog | None = None) -> Iterator[None]:
    """Turn the store's own failures met inside the block (the file system's, the catalog
    engine's) into their :class:`InputError`."""
    engine_errors = catalog.errors() if catalog is not None else (sqlite3.Error,)
    try:
        yield
    except InputError:
        raise
    except (OSError, *engine_errors) as error:
        raise classify(home, error, busy_seconds, catalog) from None


def is_busy(error: BaseException) -> bool:
    """Whether SQLite refused because another connection holds the lock it needs."""
    return isinstance(error, sqlite3.OperationalError) and ("locked" in str(error) or "busy" in str(error))


def classify(home: Path, error: BaseException, busy_seconds: float, catalog: Catalog | None = None) -> InputError:
    """The :class:`InputError` that names what went wrong with the store and its fix."""
    if is_full(error):
        return disk_full(home)
    where = catalog.where if catalog is not None else str(home / "catalog.sqlite")
    if is_busy(error) or (catalog is not None and catalog.is_busy(error)):
        return locked(where, busy_seconds)
    text = str(error)
    if isinstance(error, sqlite3.DatabaseError) and ("not a database" in text or "malformed" in text
                                                     or "corrupt" in text):
        return damaged_catalog(home, error)
    if catalog is not None and catalog.kind == "postgresql" and not isinstance(error, OSError):
        return unreachable(where, error)
    return not_writable(home, error)
