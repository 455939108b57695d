"""Save and load a :class:`BM25Index`, optionally with its catalogue, so a service starts fast.

``save_index(index, path, catalog=catalog)`` writes one file holding both;
``load_catalog_index(path)`` gives them back without the catalogue's records
(a service over 100,000 tools is ready in a fraction of a second), and
``load_index(path, catalog)`` reads just the index for a catalogue the caller
built. The container (magic, version, JSON header, flat arrays, SHA-256) is
described in ``_binary``. Loading checks, in order: the magic, the format
version, the checksum (so a truncated or corrupted file is refused before
anything is parsed), the header's shape, then the catalogue fingerprint.
Every refusal is a :class:`~weakincentives.errors.CatalogError` saying what to
do; a file is never half-read into a wrong answer. The checksum does not show
who wrote a file, so every count, offset, length and position is checked
against the size it indexes before anything is allocated or looked up by it:
a forged file is refused at load, never met later as an ``IndexError`` or a
huge allocation at search.
"""

from __future__ import annotations

import operator
from array import array
from dataclasses import dataclass
from itertools import chain, pairwise
from pathlib import Path
from typing import cast

from weakincentives.discovery import _vectorised
from weakincentives.discovery._binary import (
    ArrayReader,
    ArrayWriter,
    Json,
    malformed,
    read_container,
    write_container,
)
from weakincentives.discovery._bm25 import BM25Index
from weakincentives.discovery._catalog import ToolCatalog
from weakincentives.discovery._catalog_file import catalog_section, read_catalog_section
from weakincentives.discovery._columns import (
    ExactNames,
    Groups,
    check_finite,
    check_offsets,
    check_range,
)
from weakincentives.discovery._limits import MAX_NAME_CHARS, MAX_PATH_DEPTH
from weakincentives.discovery._postings import Postings
from weakincentives.errors import CatalogError

__all__ = ["INDEX_FORMAT_VERSION", "CatalogIndex", "load_catalog_index", "load_index", "save_index"]

INDEX_FORMAT_VERSION = 3
"""Bumped whenever the file layout, the tokenizer or the scoring changes."""


@dataclass(frozen=True, slots=True)
class CatalogIndex:
    """A catalogue and its search index, as :func:`load_catalog_index` reads them."""

    catalog: ToolCatalog
    index: BM25Index


def save_index(index: BM25Index, path: str | Path, *, catalog: ToolCatalog | None = None) -> None:
    """Write ``index`` to ``path`` (replaced atomically when the file system allows).

    With ``catalog`` (the one ``index`` was built for) the file also holds the
    catalogue, for :func:`load_catalog_index`. A catalogue whose tools carry
    handles (executor payloads, such as the tools of ``ToolCatalog.from_tools``)
    cannot be written; save the index alone and build that catalogue at start-up.
    """
    if catalog is not None and (
        catalog.fingerprint != index.catalog_fingerprint
        or tuple(catalog.nodes) != index.node_paths
        or tuple(tool.tool_id for tool in catalog) != index.tool_ids
    ):
        raise CatalogError(
            "the index was built for another catalogue than the one given; "
            "pass the catalogue the index was built from"
        )
    writer = ArrayWriter()

    def postings(collection: Postings) -> Json:
        terms = list(collection.spans)
        spans: array[int] = array("q")
        for term in terms:
            spans.extend(collection.spans[term])
        return {
            "terms": writer.place_strings(terms),
            "spans": writer.place(spans),
            "ceiling": writer.place(array("d", [collection.ceiling[term] for term in terms])),
            "peak": writer.place(array("d", [collection.peak[term] for term in terms])),
            "size": collection.size,
            "prune_above": collection.prune_above,
            "ids": writer.place(collection.ids),
            "impacts": writer.place(collection.impacts),
        }

    def groups(packed: Groups) -> Json:
        return {"offsets": writer.place(packed.offsets), "values": writer.place(packed.values)}

    exact_keys, exact_tools = ExactNames.packed(index.exact, index.positions)
    bounds: array[int] = array("q", [0])
    for node_path in index.node_paths:
        bounds.append(bounds[-1] + len(node_path))
    header: Json = {
        "catalog": index.catalog_fingerprint,
        "tool_ids": writer.place_strings(index.tool_ids),
        "node_segments": writer.place_strings(chain.from_iterable(index.node_paths)),
        "node_bounds": writer.place(bounds),
        "tools": postings(index.tools),
        "nodes": postings(index.nodes),
        "stops": postings(index.stops),
        "shared": writer.place(array("q", sorted(index.shared))),
        "members": groups(index.members),
        "holders": groups(index.holders),
        "lend": writer.place(index.lend),
        "tool_lend": writer.place(index.tool_lend),
        "exact_keys": writer.place_strings(exact_keys),
        "exact": groups(exact_tools),
        "sibling_limit": index.sibling_limit,
        "catalogue": None if catalog is None else catalog_section(catalog, writer),
    }
    write_container(path, header, writer, version=INDEX_FORMAT_VERSION)


def load_index(
    path: str | Path, catalog: ToolCatalog, *, vectorised: bool | None = None
) -> BM25Index:
    """Read an index saved by :func:`save_index` for exactly this ``catalog``.

    ``vectorised`` chooses numpy scoring as ``BM25Ranker.vectorised`` does (None:
    when numpy can be imported); the file is the same either way. A catalogue
    stored in the file is skipped.
    """
    header, reader = read_container(path, version=INDEX_FORMAT_VERSION)
    found = header.get("catalog")
    if found != catalog.fingerprint:
        raise CatalogError(
            f"{path} was built for another catalogue (fingerprint {found}, "
            f"this one is {catalog.fingerprint}); rebuild the index for this catalogue",
        )
    try:
        index = _index(header, reader, vectorised=vectorised)
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise malformed(str(path), exc) from exc
    if not _lists(index, catalog):
        # The fingerprint is the header's claim; a forged file could name other tools,
        # which a search would then look up in this catalogue and not find.
        raise CatalogError(
            f"{path} indexes other tools or categories than this catalogue holds, although "
            "its header names this catalogue; rebuild the index for this catalogue"
        )
    return index


def _lists(index: BM25Index, catalog: ToolCatalog) -> bool:
    """Whether ``index`` holds exactly ``catalog``'s tools, in its order, and its categories."""
    try:
        positions = list(map(catalog.position, index.tool_ids))
    except KeyError:
        return False
    # Paths are distinct (checked at load), so an equal count makes the two sets equal.
    paths = index.node_paths
    return (
        positions == list(range(len(catalog)))
        and len(paths) == len(catalog.nodes)
        and all(map(catalog.has_path, paths))
    )


def load_catalog_index(path: str | Path, *, vectorised: bool | None = None) -> CatalogIndex:
    """Read the catalogue and the index of a file saved with ``save_index(..., catalog=...)``.

    The catalogue's tools and nodes are built as they are first used, so start-up
    does not grow with their schemas: ``ToolDiscovery(loaded.catalog,
    index=loaded.index)`` is ready at once.
    """
    header, reader = read_container(path, version=INDEX_FORMAT_VERSION)
    if header.get("catalogue") is None:
        raise CatalogError(
            f"{path} holds an index without its catalogue; load it with "
            "load_index(path, catalog), or save it again with save_index(..., catalog=catalog)"
        )
    try:
        index = _index(header, reader, vectorised=vectorised)
        catalog = read_catalog_section(
            cast(Json, header["catalogue"]),
            reader,
            tool_ids=index.tool_ids,
            positions=index.positions,
            node_paths=index.node_paths,
            fingerprint=index.catalog_fingerprint,
        )
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise malformed(str(path), exc) from exc
    return CatalogIndex(catalog, index)


def _index(header: Json, reader: ArrayReader, *, vectorised: bool | None) -> BM25Index:
    """The index a verified header describes; ``ValueError`` and kin if it is not ours."""
    fast = _vectorised.available() if vectorised is None else vectorised
    tool_ids = tuple(reader.strings(header["tool_ids"]))
    segments = list(reader.strings(header["node_segments"]))
    bounds = reader.ints(header["node_bounds"])
    check_offsets(bounds, len(bounds) - 1, len(segments), "node_bounds", strict=True)
    node_paths = tuple(tuple(segments[start:end]) for start, end in pairwise(bounds))
    tools, nodes = len(tool_ids), len(node_paths)
    positions = dict(zip(tool_ids, range(tools), strict=True))
    if len(positions) != tools or len(set(node_paths)) != nodes:
        raise ValueError("tool_ids or node paths: an entry appears twice")
    deepest, longest = max(map(len, node_paths), default=0), max(map(len, segments), default=0)
    if deepest > MAX_PATH_DEPTH or longest > MAX_NAME_CHARS:
        raise ValueError("node paths: a path is deeper or a segment longer than a catalogue's")

    def postings(name: str, size: int) -> Postings:
        spec = cast(Json, header[name])
        terms = list(reader.strings(spec["terms"]))
        ids, impacts = reader.ints(spec["ids"]), reader.floats(spec["impacts"])
        spans, ceiling, peak = (
            reader.ints(spec["spans"]),
            reader.floats(spec["ceiling"]),
            reader.floats(spec["peak"]),
        )
        if len(ids) != len(impacts) or not len(spans) == 2 * len(terms) == 2 * len(ceiling):
            raise ValueError(f"{name}: array lengths disagree")
        starts, ends = spans[0::2], spans[1::2]
        if len(peak) != len(terms) or (spans and (min(spans) < 0 or max(spans) > len(ids))):
            raise ValueError(f"{name}: a term's postings lie outside the arrays")
        if not all(map(operator.le, starts, ends)):
            raise ValueError(f"{name}: a term's postings end before they start")
        if _count(spec["size"], "size") != size:
            raise ValueError(f"{name}: size {spec['size']} where the catalogue has {size}")
        check_range(ids, size, f"{name}.ids")
        for values, what in ((impacts, "impacts"), (ceiling, "ceiling"), (peak, "peak")):
            check_finite(values, f"{name}.{what}")
        return Postings(
            ids=ids,
            impacts=impacts,
            spans=dict(zip(terms, zip(starts, ends, strict=True), strict=True)),
            ceiling=dict(zip(terms, ceiling, strict=True)),
            peak=dict(zip(terms, peak, strict=True)),
            size=size,
            prune_above=_count(spec["prune_above"], "prune_above"),
            vectorised=fast,
        )

    def groups(name: str, rows: int, bound: int) -> Groups:
        spec = cast(Json, header[name])
        found = Groups(reader.ints(spec["offsets"]), reader.ints(spec["values"]))
        found.check(rows, bound, name)
        return found

    def floats(name: str, count: int) -> array[float]:
        values = reader.floats(header[name])
        if len(values) != count:
            raise ValueError(f"{name}: {len(values)} values where {count} belong")
        check_finite(values, name)
        if values and min(values) < 0:  # a tool's score is divided by 1 + its weight
            raise ValueError(f"{name}: a category weight is negative")
        return values

    keys = reader.strings(header["exact_keys"])
    shared = reader.ints(header["shared"])
    check_range(shared, tools, "shared")
    limit = header["sibling_limit"]
    return BM25Index(
        catalog_fingerprint=str(header["catalog"]),
        tool_ids=tool_ids,
        node_paths=node_paths,
        tools=postings("tools", tools),
        nodes=postings("nodes", nodes),
        stops=postings("stops", tools),
        shared=frozenset(shared),
        members=groups("members", nodes, tools),
        holders=groups("holders", tools, nodes),
        positions=positions,
        lend=floats("lend", nodes),
        tool_lend=floats("tool_lend", tools),
        exact=ExactNames(keys, groups("exact", len(keys), tools), tool_ids),
        sibling_limit=None if limit is None else _count(limit, "sibling_limit"),
    )


def _count(value: object, name: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise TypeError(f"{name} is not a count: {value!r}")
    return value
