"""The catalogue section of an index file: a catalogue stored beside its index.

With it a service restarts from one file without the records the catalogue
was built from: tools, nodes and every lookup table come back as columns
(see ``_restored``), so loading does not grow with what a tool's schema
holds. Tool ids and node paths are the index's own and are not stored twice.
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Mapping, Sequence
from typing import cast

from weakincentives.discovery._binary import ArrayReader, ArrayWriter, Json
from weakincentives.discovery._catalog import CatalogTables, ToolCatalog, TreePath
from weakincentives.discovery._columns import Groups, Strings, check_offsets, check_range
from weakincentives.discovery._restored import NodeTable, PathGroups, ToolTable
from weakincentives.errors import CatalogError

__all__ = ["catalog_section", "read_catalog_section"]


def catalog_section(catalog: ToolCatalog, writer: ArrayWriter) -> Json:
    """Queue ``catalog``'s columns on ``writer`` and return the header section naming them."""
    tools, paths = catalog.tools, tuple(catalog.nodes)
    for tool in tools:
        if tool.handle is not None:
            raise CatalogError(
                f"tool {tool.tool_id!r} carries a handle (its executor payload), which a file "
                "cannot hold; save the index without catalog= and build the catalogue at start-up",
                tool_id=tool.tool_id,
            )
    rows = {path: row for row, path in enumerate(paths)}
    tag_rows: dict[str, int] = {}
    nodes = [catalog.nodes[path] for path in paths]
    for tags in [tool.tags for tool in tools] + [node.tags for node in nodes]:
        for tag in tags:
            tag_rows.setdefault(tag, len(tag_rows))
    folded = list(dict.fromkeys(tag.casefold() for tag in tag_rows))

    def groups(values: Sequence[Sequence[int]]) -> Json:
        packed = Groups.of(values)
        return {"offsets": writer.place(packed.offsets), "values": writer.place(packed.values)}

    texts: list[bytes] = []
    for tool in tools:
        texts.append(_schema_text(tool.args_schema))
        result = tool.result_schema
        texts.append(b"" if result is None else _schema_text(result))
    offsets: array[int] = array("q", [0])
    for text in texts:
        offsets.append(offsets[-1] + len(text))
    return {
        "names": writer.place_strings(tool.name for tool in tools),
        "summaries": writer.place_strings(tool.summary for tool in tools),
        "paths": groups([[rows[path] for path in tool.paths] for tool in tools]),
        "tag_names": writer.place_strings(tag_rows),
        "tags": groups([[tag_rows[tag] for tag in tool.tags] for tool in tools]),
        "schemas": writer.place_bytes(b"".join(texts)),
        "schema_offsets": writer.place(offsets),
        "node_names": writer.place_strings(node.name for node in nodes),
        "node_summaries": writer.place_strings(node.summary for node in nodes),
        "node_tags": groups([[tag_rows[tag] for tag in node.tags] for node in nodes]),
        "direct": groups([catalog.tools_at(path) for path in paths]),
        "subtree": writer.place(array("q", [catalog.subtree_size(path) for path in paths])),
        "children": groups(
            [[rows[child.path] for child in catalog.children(parent)] for parent in ((), *paths)]
        ),
        "tag_keys": writer.place_strings(folded),
        "tagged": groups([sorted(catalog.tools_tagged(tag)) for tag in folded]),
    }


def read_catalog_section(
    section: Json,
    reader: ArrayReader,
    *,
    tool_ids: Sequence[str],
    positions: Mapping[str, int],
    node_paths: Sequence[TreePath],
    fingerprint: str,
) -> ToolCatalog:
    """The catalogue a section describes; ``ValueError`` or ``TypeError`` if it is not ours."""
    tools, nodes = len(tool_ids), len(node_paths)

    def groups(name: str, rows: int, bound: int, *, filled: bool = False) -> Groups:
        spec = cast(Json, section[name])
        found = Groups(reader.ints(spec["offsets"]), reader.ints(spec["values"]))
        found.check(rows, bound, name, filled=filled)
        return found

    def strings(name: str, count: int | None) -> Strings:
        found = reader.strings(section[name])
        if count is not None and len(found) != count:
            raise ValueError(f"{name}: {len(found)} entries where {count} belong")
        return found

    tag_names, tag_keys = strings("tag_names", None), strings("tag_keys", None)
    schemas = reader.raw(section["schemas"])
    schema_offsets = reader.ints(section["schema_offsets"])
    check_offsets(schema_offsets, 2 * tools, len(schemas), "schema_offsets")
    subtree = reader.ints(section["subtree"])
    if len(subtree) != nodes:
        raise ValueError(f"subtree: {len(subtree)} sizes for {nodes} nodes")
    check_range(subtree, tools + 1, "subtree")
    children = groups("children", nodes + 1, nodes)
    _check_tree(children, node_paths)
    rows = dict(zip(node_paths, range(nodes), strict=True))
    node_table = NodeTable(
        paths=node_paths,
        rows=rows,
        names=strings("node_names", nodes),
        summaries=strings("node_summaries", nodes),
        tags=groups("node_tags", nodes, len(tag_names)),
        tag_names=tag_names,
    )
    tagged = groups("tagged", len(tag_keys), tools)
    child_rows: dict[TreePath, int] = {(): 0}
    child_rows.update(zip(node_paths, range(1, nodes + 1), strict=True))
    tables = CatalogTables(
        tools=ToolTable(
            ids=tool_ids,
            names=strings("names", tools),
            summaries=strings("summaries", tools),
            paths=groups("paths", tools, nodes, filled=True),
            node_paths=node_paths,
            tags=groups("tags", tools, len(tag_names)),
            tag_names=tag_names,
            schemas=schemas,
            schema_offsets=schema_offsets,
        ),
        by_id=positions,
        nodes=node_table,
        children=PathGroups(child_rows, children, node_table.at),
        direct=PathGroups(rows, groups("direct", nodes, tools), int),
        subtree_size=dict(zip(node_paths, subtree.tolist(), strict=True)),
        tag_index={key: frozenset(tagged[row]) for row, key in enumerate(tag_keys)},
        fingerprint=fingerprint,
    )
    # The file reader is the one place allowed to skip validation (see _restored's docstring).
    return ToolCatalog._restored(tables)


def _check_tree(children: Groups, node_paths: Sequence[TreePath]) -> None:
    """Raise ``ValueError`` unless each listed child is its parent's path plus one segment.

    Row 0 is the root and row ``k + 1`` node ``k``. Children one level deeper than their
    parent cannot form a cycle, so walking a category's subtree always ends.
    """
    for row in range(len(children)):
        parent = node_paths[row - 1] if row else ()
        for child in children[row]:
            path = node_paths[child]
            if len(path) != len(parent) + 1 or path[:-1] != parent:
                raise ValueError(f"children: node {child} is listed under a node it is not in")


def _schema_text(schema: object) -> bytes:
    # A catalogue's schemas are portable JSON (checked when it was built), so this
    # cannot fail; mappings other than dict (MappingProxyType) are written as objects.
    return json.dumps(schema, separators=(",", ":"), ensure_ascii=False, default=_plain).encode()


def _plain(value: object) -> object:
    """JSON for the read-only mappings a schema may hold (``MappingProxyType`` and the like).

    Nothing else reaches it: the catalogue checked that its schemas are JSON.
    """
    return dict(cast("Mapping[object, object]", value))
