"""What a file is by its first bytes, whatever its name: Parquet, a compressed or zipped text
table, text in UTF-8 with a byte-order mark or in UTF-16, an Excel workbook, or binary data.

Every reader (the command line's paths, the app's uploads, the store) asks :func:`identify`
first, so that one file gives one answer everywhere: a Parquet file named ``.csv`` is read as
Parquet, ``recs.csv.gz`` (or gzip named ``.csv``) and a zip holding one table are read as the
table inside, a byte-order mark never becomes part of the first column's name, and a workbook
or binary file is refused with a message naming what it is.
"""

from __future__ import annotations

import gzip
import io
import zipfile
from dataclasses import dataclass
from pathlib import PurePath

import numpy as np

from metrics_core.errors import input_error

PARQUET_MAGIC = b"PAR1"
GZIP_MAGIC = b"\x1f\x8b"
ZIP_MAGIC = b"PK\x03\x04"
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # Excel 97-2003 (.xls), and other Office files
UTF8_BOM = b"\xef\xbb\xbf"
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
COMPRESSED_SUFFIXES = {".gz", ".gzip", ".zip"}
EXPORT = "export it as CSV (UTF-8), Parquet or a TREC run/qrels file."


@dataclass(frozen=True)
class Identified:
    """``kind`` is "parquet" or "text"; ``data`` the bytes to read when they had to be unpacked
    or re-encoded (None: read the file as it is); ``name`` the name whose suffix chooses the
    text format (``recs.csv`` for ``recs.csv.gz``); ``note``: how it was unpacked, in words."""

    kind: str
    name: str
    data: bytes | None = None
    note: str = ""


def identify(head: bytes, name: str, label: str, whole=None) -> Identified:
    """What the file whose first bytes are ``head`` is. ``whole()`` returns every byte of the
    file; it is called only for a file that must be unpacked or re-encoded."""
    if head.startswith(PARQUET_MAGIC):
        return Identified("parquet", name)
    if head.startswith(GZIP_MAGIC):
        try:
            data = gzip.decompress(whole())
        except (OSError, EOFError) as error:
            raise input_error(label, f"is gzip-compressed but cannot be decompressed ({error}).",
                              "compress it again, or " + EXPORT) from None
        inner = _inner_name(name)
        return _as_text(identify(data[:4096], inner, label, lambda: data), data, "decompressed from gzip")
    if head.startswith(ZIP_MAGIC):
        return _unzipped(whole(), name, label)
    if head.startswith(OLE_MAGIC):
        raise input_error(label, "is an Excel 97-2003 workbook (or another Office file), not a table rankscope "
                                 "reads.", "open it in Excel or LibreOffice and " + EXPORT)
    if head.startswith(UTF8_BOM):
        return Identified("text", name, whole()[len(UTF8_BOM):], "")
    if head.startswith(UTF16_BOMS) or _looks_utf16(head):
        try:
            text = whole().decode("utf-16" if head.startswith(UTF16_BOMS) else "utf-16-le")
        except UnicodeDecodeError as error:
            raise input_error(label, f"looks like UTF-16 text but cannot be decoded ({error.reason}).",
                              EXPORT[0].upper() + EXPORT[1:]) from None
        return Identified("text", name, text.encode("utf-8"), "read as UTF-16 text")
    if b"\x00" in head or _mostly_binary(head):
        raise input_error(label, "is binary data, not a text table or Parquet (its first bytes are "
                                 f"{head[:8].hex(' ')}).", EXPORT[0].upper() + EXPORT[1:])
    return Identified("text", name)


def _as_text(inner: Identified, data: bytes, how: str) -> Identified:
    return Identified(inner.kind, inner.name, inner.data if inner.data is not None else data,
                      "; ".join(part for part in (how, inner.note) if part))


def _unzipped(data: bytes, name: str, label: str) -> Identified:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = [m for m in archive.infolist() if not m.is_dir() and not PurePath(m.filename).name.startswith(".")
                   and "__MACOSX" not in m.filename]
    except zipfile.BadZipFile as error:
        raise input_error(label, f"starts like a zip archive but cannot be opened ({error}).",
                          "zip it again, or " + EXPORT) from None
    names = [m.filename for m in members]
    if "[Content_Types].xml" in names and any(n.startswith("xl/") for n in names):
        raise input_error(label, "is an Excel workbook (.xlsx), not a table rankscope reads.",
                          "open it in Excel or LibreOffice and " + EXPORT)
    if len(members) != 1:
        listed = ", ".join(names[:5]) + (" …" if len(names) > 5 else "")
        raise input_error(label, f"is a zip archive of {len(members)} files ({listed or 'none'}): rankscope reads "
                                 "one table per file.", "upload or pass each table on its own (unzipped, or a "
                                                        "zip holding that one table).")
    inner_name = PurePath(members[0].filename).name
    content = archive.read(members[0])
    return _as_text(identify(content[:4096], inner_name, label, lambda: content), content,
                    f"unzipped from {name} ({inner_name})")


def _inner_name(name: str) -> str:
    """``recs.csv`` for ``recs.csv.gz``; a gzip named without its suffix keeps its name."""
    path = PurePath(name)
    return path.stem if path.suffix.lower() in COMPRESSED_SUFFIXES else name


def _looks_utf16(head: bytes) -> bool:
    """UTF-16 without a byte-order mark: every second byte of text is NUL."""
    sample = head[:512]
    return len(sample) >= 8 and sample[1::2].count(0) > 0.9 * len(sample[1::2]) and sample[0::2].count(0) == 0


def _mostly_binary(head: bytes) -> bool:
    """More than a tenth of the first bytes are control characters other than tab and line ends."""
    sample = np.frombuffer(head[:4096], dtype=np.uint8)
    control = (sample < 32) & ~np.isin(sample, (9, 10, 13))
    return bool(len(sample)) and int(control.sum()) > len(sample) / 10
