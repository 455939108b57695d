"""Save and load a :class:`BM25Index`, so a large catalogue's service starts fast.

File layout (all integers little-endian)::

    b"WINKBM25" | format version (u32) | header length (u64) | header (UTF-8 JSON)
    | arrays (raw bytes, in header order) | SHA-256 of everything before it (32 bytes)

The header records the catalogue fingerprint the index was built for, the
tool ids, node paths, per-collection term spans and bounds, and where each
flat array starts. Loading checks, in order: the magic, the format version,
the checksum (so a truncated or corrupted file is refused before anything is
parsed), then the catalogue fingerprint. Every refusal is a
:class:`~weakincentives.errors.CatalogError` saying what to do; a file is
never half-read into a wrong answer.
"""

from __future__ import annotations

import hashlib
import json
import struct
import sys
from array import array
from collections.abc import Mapping
from pathlib import Path
from typing import cast

from weakincentives.discovery import _vectorised
from weakincentives.discovery._bm25 import BM25Index
from weakincentives.discovery._catalog import ToolCatalog
from weakincentives.discovery._postings import Postings
from weakincentives.errors import CatalogError

__all__ = ["INDEX_FORMAT_VERSION", "load_index", "save_index"]

INDEX_FORMAT_VERSION = 2
"""Bumped whenever the file layout, the tokenizer or the scoring changes."""

_MAGIC = b"WINKBM25"
_PREFIX = struct.Struct("<8sIQ")
_DIGEST = 32
type _Json = dict[str, object]


def save_index(index: BM25Index, path: str | Path) -> None:
    """Write ``index`` to ``path`` (replaced atomically when the file system allows)."""
    arrays: list[array[int] | array[float]] = []

    def place(values: array[int] | array[float]) -> list[object]:
        arrays.append(values)
        return [len(arrays) - 1, values.typecode, len(values)]

    def postings(collection: Postings) -> _Json:
        terms = list(collection.spans)
        return {
            "terms": terms,
            "spans": [collection.spans[term] for term in terms],
            "ceiling": [collection.ceiling[term] for term in terms],
            "peak": [collection.peak[term] for term in terms],
            "size": collection.size,
            "prune_above": collection.prune_above,
            "ids": place(collection.ids),
            "impacts": place(collection.impacts),
        }

    header: _Json = {
        "catalog": index.catalog_fingerprint,
        "byteorder": sys.byteorder,
        "tool_ids": index.tool_ids,
        "node_paths": index.node_paths,
        "tools": postings(index.tools),
        "nodes": postings(index.nodes),
        "stops": postings(index.stops),
        "shared": sorted(index.shared),
        "members": index.members,
        "holders": index.holders,
        "lend": index.lend,
        "tool_lend": index.tool_lend,
        "exact": [[list(key), list(ids)] for key, ids in index.exact.items()],
        "sibling_limit": index.sibling_limit,
    }
    head = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode()
    body = b"".join(
        [_PREFIX.pack(_MAGIC, INDEX_FORMAT_VERSION, len(head)), head]
        + [values.tobytes() for values in arrays]
    )
    target = Path(path)
    partial = target.with_name(target.name + ".partial")
    partial.write_bytes(body + hashlib.sha256(body).digest())
    partial.replace(target)


def load_index(
    path: str | Path, catalog: ToolCatalog, *, vectorised: bool | None = None
) -> BM25Index:
    """Read an index saved by :func:`save_index` for exactly this ``catalog``.

    ``vectorised`` chooses numpy scoring as ``BM25Ranker.vectorised`` does (None:
    when numpy can be imported); the file is the same either way.
    """
    where = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise CatalogError(f"cannot read the index file {where}: {exc.strerror}") from exc
    if len(data) < _PREFIX.size + _DIGEST or not data.startswith(_MAGIC):
        raise CatalogError(f"{where} is not a weakincentives index file (or is truncated)")
    _, version, head_size = _PREFIX.unpack_from(data)
    if version != INDEX_FORMAT_VERSION:
        raise CatalogError(
            f"{where} has index format {version}, this version reads {INDEX_FORMAT_VERSION}; "
            "rebuild the index from the catalogue and save it again"
        )
    body, digest = data[:-_DIGEST], data[-_DIGEST:]
    if hashlib.sha256(body).digest() != digest:
        raise CatalogError(
            f"{where} is corrupted or truncated (checksum mismatch); rebuild and save the index"
        )
    start = _PREFIX.size
    try:
        header = cast(_Json, json.loads(body[start : start + head_size]))
        if header["catalog"] != catalog.fingerprint:
            raise CatalogError(
                f"{where} was built for another catalogue (fingerprint {header['catalog']}, "
                f"this one is {catalog.fingerprint}); rebuild the index for this catalogue",
            )
        fast = _vectorised.available() if vectorised is None else vectorised
        return _index(header, memoryview(body)[start + head_size :], vectorised=fast)
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        # A valid checksum over a malformed header means another writer: refuse it whole.
        raise CatalogError(f"{where} has a malformed header ({exc!r}); rebuild the index") from exc


def _index(header: Mapping[str, object], blob: memoryview, *, vectorised: bool) -> BM25Index:
    swap = header["byteorder"] != sys.byteorder
    offset = 0

    def read(ref: object) -> array[int] | array[float]:
        nonlocal offset
        _, typecode, length = cast("list[object]", ref)
        values: array[int] | array[float] = array(str(typecode))
        size = values.itemsize * int(cast(int, length))
        values.frombytes(blob[offset : offset + size])
        if swap:
            values.byteswap()
        offset += size
        return values

    def postings(raw: object) -> Postings:
        spec = cast(_Json, raw)
        terms = cast("list[str]", spec["terms"])
        spans = cast("list[list[int]]", spec["spans"])
        return Postings(
            ids=cast("array[int]", read(spec["ids"])),
            impacts=cast("array[float]", read(spec["impacts"])),
            spans={term: (span[0], span[1]) for term, span in zip(terms, spans, strict=True)},
            ceiling=dict(zip(terms, cast("list[float]", spec["ceiling"]), strict=True)),
            peak=dict(zip(terms, cast("list[float]", spec["peak"]), strict=True)),
            size=int(cast(int, spec["size"])),
            prune_above=int(cast(int, spec["prune_above"])),
            vectorised=vectorised,
        )

    tools, nodes, stops = (postings(header[name]) for name in ("tools", "nodes", "stops"))
    if offset != len(blob):
        raise ValueError(f"{len(blob) - offset} bytes of array data left over")
    tool_ids = tuple(cast("list[str]", header["tool_ids"]))
    limit = header["sibling_limit"]
    return BM25Index(
        catalog_fingerprint=str(header["catalog"]),
        tool_ids=tool_ids,
        node_paths=tuple(tuple(path) for path in cast("list[list[str]]", header["node_paths"])),
        tools=tools,
        nodes=nodes,
        stops=stops,
        shared=frozenset(cast("list[int]", header["shared"])),
        members=tuple(tuple(group) for group in cast("list[list[int]]", header["members"])),
        holders=tuple(tuple(group) for group in cast("list[list[int]]", header["holders"])),
        positions={tool_id: position for position, tool_id in enumerate(tool_ids)},
        lend=tuple(cast("list[float]", header["lend"])),
        tool_lend=tuple(cast("list[float]", header["tool_lend"])),
        exact={
            tuple(key): tuple(ids) for key, ids in cast("list[list[list[str]]]", header["exact"])
        },
        sibling_limit=None if limit is None else int(cast(int, limit)),
    )
