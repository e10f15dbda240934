"""Encoded datasets kept with a saved workspace: reopening a large workspace maps its arrays from
disk instead of reading, checking, ordering and joining its tables again, most of a first open.

What is kept, per workspace fingerprint and encoding (the name also holds rankscope's version):

    encoded/<fingerprint>-<key>/manifest.json   the dataset's structure: its dataclasses, field
                                                by field, and which file holds each array
    encoded/<fingerprint>-<key>/a<N>.npy        every numeric array, as numpy writes it
    encoded/<fingerprint>-<key>/t<N>.parquet    every table (item and user tables) and every
                                                array of texts (text ids)

A kept dataset is written to a temporary folder and renamed into place once complete, so a
reader finds all of it or nothing; one that cannot be read is treated as absent (the tables are
read again). Arrays are mapped read-only (``np.load(mmap_mode="r")``): their pages come from the
file when first used and can be given back to the system, and nothing can change them. Only the
library's own dataclasses are rebuilt (a manifest naming any other class is refused): unlike a
pickle, reading a kept dataset runs no code from the file. Only datasets of at least
:data:`KEEP_MIN_CELLS` list cells are kept (below, reading the tables again is quick), at most
one per workspace (the newest encoding), and a workspace purged for good takes its dataset with it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import json
import os
import secrets
import shutil
from pathlib import Path

import numpy as np
import pandas as pd

from metrics_core.settings import Encoding

KEEP_MIN_CELLS = 10_000_000  # (100,000 users x 100 positions)
KEEP_VARIABLE = "RANKSCOPE_KEEP_ENCODED"
FOLDER = "encoded"
_LIBRARY = "metrics_core."


def encoded_key(fingerprint: str, encoding: Encoding) -> str:
    """The name of the dataset of workspace ``fingerprint`` encoded with ``encoding``."""
    from metrics_core import __version__

    text = json.dumps([__version__, encoding.order, encoding.tie_break])
    return f"{fingerprint[:32]}-{hashlib.sha256(text.encode()).hexdigest()[:24]}"


def worth_keeping(dataset) -> bool:
    """Whether ``dataset`` is large enough for keeping it to save time (:data:`KEEP_MIN_CELLS`),
    unless ``RANKSCOPE_KEEP_ENCODED=0`` says to keep none (a store short of disk: 1M users x 4
    models x 100 take about 4.5 GB)."""
    if os.environ.get(KEEP_VARIABLE, "1").strip() == "0":
        return False
    return sum(lists.items.size for lists in dataset.lists.values()) >= KEEP_MIN_CELLS


def save_dataset(home: Path, key: str, dataset) -> bool:
    """Keep ``dataset`` under ``key`` (False when one is kept already, or another process is
    writing it at the same time: the first one complete wins)."""
    folder = Path(home) / FOLDER
    final = folder / key
    if final.exists():
        return False
    temporary = folder / f".{key}.{secrets.token_hex(4)}.tmp"
    temporary.mkdir(parents=True)
    try:
        files = _Files(temporary)
        manifest = {"dataset": files.pack(dataset)}
        (temporary / "manifest.json").write_text(json.dumps(manifest))
        for path in temporary.iterdir():
            with path.open("rb") as handle:
                os.fsync(handle.fileno())
        try:
            os.rename(temporary, final)
        except OSError:  # (another writer finished first)
            return False
    finally:
        shutil.rmtree(temporary, ignore_errors=True)
    for other in folder.glob(f"{key.split('-')[0]}-*"):  # (one per workspace: the newest encoding)
        if other.name != key:
            shutil.rmtree(other, ignore_errors=True)
    return True


def load_dataset(home: Path, key: str):
    """The dataset kept under ``key``, its arrays mapped read-only (None: none kept, or not readable)."""
    folder = Path(home) / FOLDER / key
    try:
        manifest = json.loads((folder / "manifest.json").read_text())
        return _unpack(manifest["dataset"], folder)
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError, ImportError):
        return None


def forget_datasets(home: Path, live_fingerprints: set[str]) -> int:
    """Delete the kept datasets of workspaces no longer in the store; returns how many."""
    live = {fingerprint[:32] for fingerprint in live_fingerprints}
    gone = 0
    for path in (Path(home) / FOLDER).glob("*-*"):
        if path.is_dir() and path.name.lstrip(".").split("-")[0] not in live:
            shutil.rmtree(path, ignore_errors=True)
            gone += not path.name.startswith(".")
    return gone


class _Files:
    """Packs a value into JSON, writing its arrays and tables as files in ``folder``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.count = 0

    def _name(self, prefix: str, suffix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}{suffix}"

    def pack(self, value):
        if value is None or isinstance(value, bool | int | float | str):
            return {"value": value}
        if isinstance(value, np.generic):
            return {"value": value.item()}
        if isinstance(value, np.ndarray):
            return self._array(value)
        if isinstance(value, pd.DataFrame):
            return {"frame": self._parquet(value)}
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return self._dataclass(value)
        if isinstance(value, tuple | list):
            return {type(value).__name__: [self.pack(v) for v in value]}
        if isinstance(value, dict):
            return {"dict": [[self.pack(k), self.pack(v)] for k, v in value.items()]}
        if type(value).__name__ == "csr_matrix" or getattr(value, "format", None) == "csr":
            return {"csr": [self.pack(value.data), self.pack(value.indices), self.pack(value.indptr),
                            list(value.shape)], "canonical": bool(value.has_canonical_format)}
        raise TypeError(f"a dataset holds a {type(value).__name__}, which cannot be kept")

    def _array(self, value: np.ndarray) -> dict:
        if value.dtype == object:
            if not all(isinstance(v, str) for v in value.ravel().tolist()):
                raise TypeError("an array of objects other than texts cannot be kept")
            import pyarrow as pa

            frame = pa.table({"text": pa.array(value.ravel().tolist(), type=pa.string())})
            return {"texts": self._parquet(frame), "shape": list(value.shape)}
        name = self._name("a", ".npy")
        np.save(self.folder / name, np.ascontiguousarray(value), allow_pickle=False)
        return {"npy": name}

    def _parquet(self, table) -> str:
        import pyarrow as pa
        import pyarrow.parquet as pq

        name = self._name("t", ".parquet")
        if isinstance(table, pd.DataFrame):
            table = pa.Table.from_pandas(table, preserve_index=True)
        pq.write_table(table, self.folder / name)
        return name

    def _dataclass(self, value) -> dict:
        kind = type(value)
        if not kind.__module__.startswith(_LIBRARY):
            raise TypeError(f"{kind.__name__} is not one of rankscope's own types")
        packed = {"class": f"{kind.__module__}:{kind.__qualname__}",
                  "fields": {f.name: self.pack(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init}}
        cached = {name: getattr(value, name) for name in getattr(kind, "KEPT", ())}  # (computed now if not yet)
        cached |= {name: _snapshot(vars(value)[name]) for name in getattr(kind, "KEPT_WHEN_KNOWN", ())
                   if name in vars(value)}  # (only when computed already)
        if cached:
            packed["cached"] = {name: self.pack(cached_value) for name, cached_value in cached.items()}
        return packed


def _snapshot(value):
    """A cached value as it is now: a dict copied (another thread may add to it), anything else as it is."""
    return dict(value) if isinstance(value, dict) else value


def _unpack(packed: dict, folder: Path):
    if "value" in packed:
        return packed["value"]
    if "npy" in packed:
        return np.asarray(np.load(folder / packed["npy"], mmap_mode="r", allow_pickle=False))
    if "texts" in packed:
        import pyarrow.parquet as pq

        texts = pq.read_table(folder / packed["texts"]).column("text").to_pylist()
        return np.array(texts, dtype=object).reshape(packed["shape"])
    if "frame" in packed:
        import pyarrow.parquet as pq

        return pq.read_table(folder / packed["frame"]).to_pandas()
    if "class" in packed:
        return _rebuilt(packed, folder)
    if "tuple" in packed or "list" in packed:
        values = [_unpack(v, folder) for v in packed.get("tuple", packed.get("list"))]
        return tuple(values) if "tuple" in packed else values
    if "dict" in packed:
        return {_unpack(k, folder): _unpack(v, folder) for k, v in packed["dict"]}
    if "csr" in packed:
        import scipy.sparse as sp

        data, indices, indptr, shape = packed["csr"]
        matrix = sp.csr_matrix((_unpack(data, folder), _unpack(indices, folder), _unpack(indptr, folder)),
                               shape=tuple(shape), copy=False)
        if packed.get("canonical"):  # (as written: sorted, without duplicates; nothing to do in place)
            matrix.has_canonical_format = True
        return matrix
    raise ValueError(f"a kept dataset holds an unknown kind of value: {sorted(packed)}")


def _rebuilt(packed: dict, folder: Path):
    module, name = packed["class"].split(":")
    if not module.startswith(_LIBRARY):
        raise ValueError(f"a kept dataset names {packed['class']}, which is not one of rankscope's own types")
    kind = importlib.import_module(module)
    for part in name.split("."):
        kind = getattr(kind, part)
    if not dataclasses.is_dataclass(kind):
        raise ValueError(f"{packed['class']} is not a dataclass")
    rebuilt = kind(**{field: _unpack(value, folder) for field, value in packed["fields"].items()})
    for name, value in packed.get("cached", {}).items():  # (what its cached properties would compute)
        if name not in (*getattr(kind, "KEPT", ()), *getattr(kind, "KEPT_WHEN_KNOWN", ())):
            raise ValueError(f"a kept dataset gives {packed['class']} a value {name!r} it does not keep")
        vars(rebuilt)[name] = _unpack(value, folder)
    return rebuilt
