"""The container of an index file: a JSON header, flat arrays and a checksum.

Layout (integers little-endian)::

    b"WINKBM25" | format version (u32) | header length (u64) | header (UTF-8 JSON)
    | arrays (raw bytes) | SHA-256 of everything before it (32 bytes)

Numbers travel as flat arrays, never as JSON numbers, so reading a file of
100,000 tools parses little more than its strings. The header names each
array by ``[byte offset, typecode, length]``; arrays are stored in the
writer's byte order, which the header records and the reader undoes.
Reading verifies the magic, the version and the checksum before anything is
parsed; every refusal is a :class:`~weakincentives.errors.CatalogError`. A
checksum only shows the bytes are the ones written, not that a trusted writer
wrote them, so the header is decoded as untrusted JSON and every array reference
is checked against the data before an array is read.
"""

from __future__ import annotations

import hashlib
import json
import struct
import sys
from array import array
from collections.abc import Iterable
from pathlib import Path
from typing import cast

from weakincentives._bounded import exception_text, safe_str
from weakincentives.discovery._columns import Strings, check_offsets
from weakincentives.errors import CatalogError, ParseError
from weakincentives.serde import loads

__all__ = ["ArrayReader", "ArrayWriter", "malformed", "read_container", "write_container"]

_MAGIC = b"WINKBM25"
_PREFIX = struct.Struct("<8sIQ")
_DIGEST = 32
_TYPECODES = frozenset("bBiIqQfd")
"""Typecodes of one size everywhere (``l`` is 4 bytes on Windows, 8 elsewhere)."""
type Json = dict[str, object]


class ArrayWriter:
    """Collects arrays for one file and hands out the references the header keeps."""

    __slots__ = ("_chunks", "_size")

    def __init__(self) -> None:
        self._chunks: list[bytes] = []
        self._size = 0

    def place(self, values: array[int] | array[float]) -> list[object]:
        """Queue ``values`` and return their reference: ``[offset, typecode, length]``."""
        return self._queue(values.tobytes(), values.typecode, len(values))

    def place_strings(self, values: Iterable[str]) -> Json:
        """Queue strings as one UTF-8 text and code-point offsets; returns the reference pair."""
        packed = Strings.of(values)
        return {
            "text": self.place_bytes(packed.text.encode("utf-8")),
            "offsets": self.place(packed.offsets),
        }

    def place_bytes(self, data: bytes) -> list[object]:
        """Queue raw bytes (typecode ``B``)."""
        return self._queue(data, "B", len(data))

    def _queue(self, data: bytes, typecode: str, length: int) -> list[object]:
        reference: list[object] = [self._size, typecode, length]
        self._chunks.append(data)
        self._size += len(data)
        return reference

    def chunks(self) -> list[bytes]:
        """Everything queued, in order."""
        return self._chunks


class ArrayReader:
    """Reads the arrays a header refers to, checking each reference against the data."""

    __slots__ = ("_blob", "_swap")

    def __init__(self, blob: memoryview, *, byteorder: object) -> None:
        if byteorder not in ("little", "big"):
            raise ValueError(f"unknown byte order {byteorder!r}")
        self._blob = blob
        self._swap = byteorder != sys.byteorder

    def _span(self, reference: object, typecodes: str) -> tuple[str, int, int]:
        if not (isinstance(reference, list) and len(reference) == 3):
            raise TypeError(
                f"an array reference is not [offset, typecode, length]: {_shown(reference)}"
            )
        start, typecode, count = reference
        if not isinstance(typecode, str) or typecode not in _TYPECODES or typecode not in typecodes:
            raise ValueError(f"array of typecode {_shown(typecode)} where {typecodes!r} belongs")
        if not (_is_count(start) and _is_count(count)):
            raise ValueError(f"array reference {_shown(reference)} has a bad offset or length")
        end = start + array(typecode).itemsize * count
        if end > len(self._blob):
            raise ValueError(f"array reference {_shown(reference)} runs past the data")
        return typecode, start, end

    def ints(self, reference: object) -> array[int]:
        """An integer array."""
        typecode, start, end = self._span(reference, "bBiIqQ")
        values: array[int] = array(typecode)
        return self._filled(values, start, end)

    def floats(self, reference: object) -> array[float]:
        """A float array (``f`` or ``d``)."""
        typecode, start, end = self._span(reference, "fd")
        values: array[float] = array(typecode)
        return self._filled(values, start, end)

    def _filled[T: (int, float)](self, values: array[T], start: int, end: int) -> array[T]:
        """``values`` extended with the bytes ``[start, end)``, in this machine's byte order."""
        values.frombytes(self._blob[start:end])
        if self._swap:
            values.byteswap()
        return values

    def strings(self, reference: object) -> Strings:
        """Strings queued with :meth:`ArrayWriter.place_strings`."""
        spec = cast(Json, reference)
        text = self.raw(spec["text"]).decode("utf-8")  # strict: no lone surrogates either
        offsets = self.ints(spec["offsets"])
        check_offsets(offsets, len(offsets) - 1, len(text), "strings")
        return Strings(text, offsets)

    def raw(self, reference: object) -> bytes:
        """Raw bytes queued with :meth:`ArrayWriter.place_bytes`."""
        _, start, end = self._span(reference, "B")
        return bytes(self._blob[start:end])


def write_container(path: str | Path, header: Json, writer: ArrayWriter, *, version: int) -> None:
    """Write header and arrays to ``path`` (written beside it, then renamed into place)."""
    head = json.dumps(
        {**header, "byteorder": sys.byteorder}, separators=(",", ":"), ensure_ascii=False
    ).encode()
    digest = hashlib.sha256()
    parts = [_PREFIX.pack(_MAGIC, version, len(head)), head, *writer.chunks()]
    for part in parts:
        digest.update(part)
    target = Path(path)
    partial = target.with_name(target.name + ".partial")
    with partial.open("wb") as handle:
        for part in parts:
            handle.write(part)
        handle.write(digest.digest())
    partial.replace(target)


def read_container(path: str | Path, *, version: int) -> tuple[Json, ArrayReader]:
    """Read and verify a container; its header must be a JSON object."""
    where = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise CatalogError(f"cannot read the index file {where}: {exc.strerror}") from exc
    if len(data) < _PREFIX.size + _DIGEST or not data.startswith(_MAGIC):
        raise CatalogError(f"{where} is not a weakincentives index file (or is truncated)")
    _, found, head_size = _PREFIX.unpack_from(data)
    if found != version:
        raise CatalogError(
            f"{where} has index format {found}, this version reads {version}; "
            "rebuild the index from the catalogue and save it again"
        )
    view = memoryview(data)[:-_DIGEST]
    if hashlib.sha256(view).digest() != data[-_DIGEST:]:
        raise CatalogError(
            f"{where} is corrupted or truncated (checksum mismatch); rebuild and save the index"
        )
    start = _PREFIX.size
    try:
        header = loads(bytes(view[start : start + head_size]))
        if not isinstance(header, dict):
            raise TypeError("the header is not a JSON object")
        reader = ArrayReader(view[start + head_size :], byteorder=header.get("byteorder"))
    except (TypeError, ValueError, ParseError) as exc:
        raise malformed(where, exc) from exc
    return cast(Json, header), reader


def malformed(where: str, exc: Exception) -> CatalogError:
    """The error for a file whose checksum holds but whose content is not ours."""
    # A valid checksum over a malformed header means another writer: refuse it whole.
    return CatalogError(
        f"{where} has a malformed header ({exception_text(exc)}); rebuild the index"
    )


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _shown(value: object) -> str:
    """A piece of a forged header for a message: its repr, cut short."""
    return safe_str(repr(value) if isinstance(value, str) else value, 60)
