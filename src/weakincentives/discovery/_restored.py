"""Catalogue tables read back from an index file, each entry built on first use.

Turning 100,000 saved tools back into objects would take most of a second,
while a service touches a handful per request. These read-only tables keep
the columns the file holds and build a :class:`CatalogTool` or
:class:`CatalogNode` the first time it is asked for, then keep it. Two threads
racing on one entry build two equal objects; either may be kept.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import overload

from weakincentives._bounded import quote
from weakincentives.discovery._catalog import CatalogNode, CatalogTool, TreePath
from weakincentives.discovery._columns import Groups
from weakincentives.errors import CatalogError, ParseError
from weakincentives.serde import JSONValue, loads

__all__ = ["NodeTable", "PathGroups", "ToolTable"]


class ToolTable(Sequence[CatalogTool]):
    """A catalogue's tools as columns; ``table[k]`` builds tool ``k`` once."""

    __slots__ = (
        "_built",
        "_ids",
        "_names",
        "_node_paths",
        "_paths",
        "_schema_offsets",
        "_schemas",
        "_summaries",
        "_tag_names",
        "_tags",
    )

    def __init__(
        self,
        *,
        ids: Sequence[str],
        names: Sequence[str],
        summaries: Sequence[str],
        paths: Groups,
        node_paths: Sequence[TreePath],
        tags: Groups,
        tag_names: Sequence[str],
        schemas: bytes,
        schema_offsets: array[int],
    ) -> None:
        self._ids, self._names, self._summaries = ids, names, summaries
        self._paths, self._node_paths = paths, node_paths
        self._tags, self._tag_names = tags, tag_names
        self._schemas, self._schema_offsets = schemas, schema_offsets
        self._built: list[CatalogTool | None] = [None] * len(ids)

    def __len__(self) -> int:
        return len(self._ids)

    @overload
    def __getitem__(self, index: int) -> CatalogTool: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[CatalogTool, ...]: ...

    def __getitem__(self, index: int | slice) -> CatalogTool | tuple[CatalogTool, ...]:
        if isinstance(index, slice):
            return tuple(self[k] for k in range(len(self))[index])
        position = range(len(self._ids))[index]
        tool = self._built[position]
        if tool is None:
            tool = self._built[position] = self._build(position)
        return tool

    def __iter__(self) -> Iterator[CatalogTool]:
        return (self[k] for k in range(len(self)))

    def _build(self, k: int) -> CatalogTool:
        node_paths, tag_names = self._node_paths, self._tag_names
        return CatalogTool(
            tool_id=self._ids[k],
            name=self._names[k],
            paths=tuple(node_paths[node] for node in self._paths[k]),
            summary=self._summaries[k],
            tags=tuple(tag_names[tag] for tag in self._tags[k]),
            args_schema=self._schema(k, 2 * k) or {},
            result_schema=self._schema(k, 2 * k + 1),
        )

    def _schema(self, k: int, slot: int) -> Mapping[str, JSONValue] | None:
        """The schema in ``slot`` (empty text: none); the file holds only JSON objects.

        Schemas are decoded on first use, so a forged one is found here rather than at
        load; it is decoded as untrusted JSON and refused with a CatalogError.
        """
        offsets = self._schema_offsets
        text = self._schemas[offsets[slot] : offsets[slot + 1]]
        if not text:
            return None
        try:
            value = loads(text)
        except ParseError as exc:
            raise self._unreadable(k, exc.got) from exc
        if not isinstance(value, dict):
            raise self._unreadable(k, "JSON that is not an object")
        return value

    def _unreadable(self, k: int, got: str) -> CatalogError:
        tool_id = self._ids[k]
        return CatalogError(
            f"the saved schema of tool {quote(tool_id)} is not a JSON object ({got}); "
            "rebuild the index file",
            tool_id=tool_id,
        )


class _ByPath[V](Mapping[TreePath, V]):
    """A read-only mapping whose keys are those of ``_rows`` (path -> row), in its order."""

    __slots__ = ()
    _rows: Mapping[TreePath, int]

    def __contains__(self, path: object) -> bool:
        return path in self._rows

    def __iter__(self) -> Iterator[TreePath]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)


class NodeTable(_ByPath[CatalogNode]):
    """A catalogue's category nodes by path; each is built on first lookup.

    ``rows`` maps each of ``paths`` to its position there, in the same order.
    """

    __slots__ = ("_built", "_names", "_paths", "_rows", "_summaries", "_tag_names", "_tags")

    def __init__(
        self,
        *,
        paths: Sequence[TreePath],
        rows: Mapping[TreePath, int],
        names: Sequence[str],
        summaries: Sequence[str],
        tags: Groups,
        tag_names: Sequence[str],
    ) -> None:
        self._paths, self._rows = paths, rows
        self._names, self._summaries = names, summaries
        self._tags, self._tag_names = tags, tag_names
        self._built: list[CatalogNode | None] = [None] * len(paths)

    def at(self, row: int) -> CatalogNode:
        """The node in row ``row`` (the order the catalogue lists its nodes in)."""
        node = self._built[row]
        if node is None:
            node = self._built[row] = CatalogNode(
                name=self._names[row],
                path=self._paths[row],
                summary=self._summaries[row],
                tags=tuple(self._tag_names[tag] for tag in self._tags[row]),
            )
        return node

    def __getitem__(self, path: TreePath) -> CatalogNode:
        return self.at(self._rows[path])


class PathGroups[T](_ByPath[tuple[T, ...]]):
    """One group per known path (children of a category, tools directly under it)."""

    __slots__ = ("_groups", "_item", "_rows")

    def __init__(
        self, rows: Mapping[TreePath, int], groups: Groups, item: Callable[[int], T]
    ) -> None:
        self._rows, self._groups, self._item = rows, groups, item

    def __getitem__(self, path: TreePath) -> tuple[T, ...]:
        item = self._item
        return tuple(item(value) for value in self._groups[self._rows[path]])
