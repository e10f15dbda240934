"""Files of the run store, written so that a crash never leaves a half-written file in place:
each is written to a temporary file in the same folder and then renamed over its name (a
rename within one file system is atomic). A crash before the rename leaves only a temporary
file, which the catalog never names and which the next store to open removes once it is an
hour old (a writer still at work keeps writing to its own)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd

CHUNK = 1 << 22
STALE_SECONDS = 3600.0


def sha256_of(source: bytes | Path) -> str:
    """SHA-256 of bytes, or of a file read in chunks (never held whole in memory)."""
    digest = hashlib.sha256()
    if isinstance(source, bytes | bytearray | memoryview):
        digest.update(source)
        return digest.hexdigest()
    with Path(source).open("rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def write_atomically(path: Path, write: Callable[[Path], None], exclusive: bool = False) -> bool:
    """Call ``write(temporary_path)``, flush it to disk, then rename it to ``path``; True when
    written. ``exclusive``: publish only if no file has the name yet (a hard link, which fails
    when the name exists, on NFS too), else leave it and return False."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        write(temporary)
        with temporary.open("rb") as handle:
            os.fsync(handle.fileno())
        if not exclusive:
            os.replace(temporary, path)
            return True
        try:
            os.link(temporary, path)
        except FileExistsError:
            return False
        except OSError:  # (a file system without hard links)
            if path.exists():
                return False
            os.replace(temporary, path)
        return True
    finally:
        temporary.unlink(missing_ok=True)


def remove_stale_temporaries(home: Path, older_than: float = STALE_SECONDS) -> list[Path]:
    """Delete the temporary files crashed writers left in the store (``.<name>.<hex>.tmp`` in its
    folders) once they are ``older_than`` seconds old; return them."""
    cutoff = time.time() - older_than
    removed = []
    for folder in (home, home / "tables", home / "runs", home / "results", home / "encoded"):
        for path in folder.glob(".*.tmp"):
            with contextlib.suppress(OSError):
                if path.stat().st_mtime <= cutoff:
                    shutil.rmtree(path) if path.is_dir() else path.unlink()  # (a kept dataset is a folder)
                    removed.append(path)
    return removed


def write_parquet(path: Path, frame: pd.DataFrame, notes: list[str] | None = None, exclusive: bool = False) -> bool:
    """``frame`` as Parquet at ``path``, atomically; its ``attrs`` are left out (they are not
    data), and ``notes`` (how the file was read, without its label) are kept in the file's
    metadata, so that a stored table warns as the file it was made from does. A column mixing
    numbers and text (a large CSV whose id column turns to text far down), or integers beyond
    64 bits, is written as text, which is how rankscope reads such ids anyway (7 matches "7");
    Parquet cannot hold them otherwise. ``exclusive``: as :func:`write_atomically`'s (returns
    False, writing nothing, when a file has the name already)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from metrics_core.inputs.read import READ_NOTES_KEY

    plain = frame.copy(deep=False)
    plain.attrs = {}

    def write(temporary: Path) -> None:
        table = pa.Table.from_pandas(plain, preserve_index=False)
        if notes:
            table = table.replace_schema_metadata({**(table.schema.metadata or {}),
                                                   READ_NOTES_KEY: json.dumps(notes).encode()})
        pq.write_table(table, temporary)

    try:
        return write_atomically(path, write, exclusive)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):  # (OverflowError: integers beyond 64 bits)
        for name in plain.select_dtypes(include="object").columns:
            column = plain[name]
            plain[name] = column.where(column.isna(), column.astype(str))
        return write_atomically(path, write, exclusive)


def copy_file(source: bytes | Path, path: Path) -> None:
    """The bytes of ``source`` at ``path``, atomically, copied in chunks."""
    def write(temporary: Path) -> None:
        if isinstance(source, bytes | bytearray | memoryview):
            temporary.write_bytes(source)
            return
        with Path(source).open("rb") as reader, temporary.open("wb") as writer:
            while chunk := reader.read(CHUNK):
                writer.write(chunk)

    write_atomically(path, write)
