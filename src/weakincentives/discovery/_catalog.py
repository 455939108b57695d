"""The tool catalogue: category nodes, tool entries and the indexes built over them.

A catalogue is immutable. Everything an operation needs (children of a node,
tools directly under a node, subtree sizes, tools by tag) is computed once in
the constructor, so listing and searching only look things up.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, is_dataclass
from operator import attrgetter
from pathlib import Path
from types import MappingProxyType
from typing import Any, cast

from weakincentives._bounded import quote
from weakincentives.discovery._catalog_checks import catalog_error, catalog_problems, listed
from weakincentives.discovery._records import read_records
from weakincentives.errors import CatalogError
from weakincentives.prompt import Tool
from weakincentives.serde import JSONValue, schema

__all__ = ["CatalogNode", "CatalogTables", "CatalogTool", "ToolCatalog", "TreePath"]

type TreePath = tuple[str, ...]
"""A category path from the root, such as ``("Storage", "Buckets")``; ``()`` is the root."""


def _empty_object_schema() -> Mapping[str, JSONValue]:
    return {"type": "object", "properties": {}}


@dataclass(frozen=True, slots=True, kw_only=True)
class CatalogNode:
    """A category in the tool ontology; nodes may hold child nodes, tools or both."""

    name: str
    """Display name, usually the last path segment."""
    path: TreePath
    """Full path from the root; it is the node's identity."""
    summary: str = ""
    """One line saying what the category's tools are for."""
    tags: tuple[str, ...] = ()
    """Free-form labels shown next to the node."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CatalogTool:
    """A callable tool as the catalogue describes it.

    ``paths`` lists every category the tool belongs to (a DAG when there is
    more than one); the first is its primary path. ``handle`` is an opaque
    slot for whoever executes the tool (for example the weakincentives
    ``Tool`` it was built from); discovery never looks inside it.
    """

    tool_id: str
    """Unique, stable identifier the model uses to expand and call the tool."""
    name: str
    """Human-readable name (endpoint or function name)."""
    paths: tuple[TreePath, ...]
    """Categories holding the tool, primary first."""
    summary: str = ""
    """What the tool does, shown in pointers."""
    tags: tuple[str, ...] = ()
    """Labels usable as ``list`` filters."""
    args_schema: Mapping[str, JSONValue] = field(default_factory=_empty_object_schema, hash=False)
    """JSON Schema (an object schema) for the call arguments."""
    result_schema: Mapping[str, JSONValue] | None = field(default=None, hash=False)
    """JSON Schema of the result, when the tool documents one."""
    handle: object = field(default=None, compare=False, hash=False, repr=False)
    """Opaque executor payload; never shown to a model."""

    @property
    def path(self) -> TreePath:
        """The primary category path."""
        return self.paths[0]

    def path_within(self, prefix: TreePath) -> TreePath | None:
        """Return the first of this tool's paths inside ``prefix``, or None."""
        size = len(prefix)
        for path in self.paths:
            if path[:size] == prefix:
                return path
        return None


@dataclass(frozen=True, slots=True, kw_only=True)
class CatalogTables:
    """Everything a :class:`ToolCatalog` looks things up in, as a saved index file holds it."""

    tools: Sequence[CatalogTool]
    by_id: Mapping[str, int]
    nodes: Mapping[TreePath, CatalogNode]
    children: Mapping[TreePath, tuple[CatalogNode, ...]]
    direct: Mapping[TreePath, tuple[int, ...]]
    subtree_size: Mapping[TreePath, int]
    tag_index: Mapping[str, frozenset[int]]
    fingerprint: str


class ToolCatalog:
    """An immutable, validated set of category nodes and tools with lookup indexes.

    Nodes not given explicitly are created for every prefix of every tool
    path (name = last segment, empty summary). Construction collects every
    problem (duplicate tool ids or node paths, empty names, empty or blank
    paths, paths deeper than ``MAX_PATH_DEPTH`` or ids, names, segments and tags
    longer than ``MAX_NAME_CHARS``, text UTF-8 cannot encode, schemas that are not
    objects or not JSON) before building anything, and raises one
    :class:`~weakincentives.errors.CatalogError` listing them (the first
    ``MAX_PROBLEMS_SHOWN``, then a count).
    """

    __slots__ = (
        "_by_id",
        "_children",
        "_direct",
        "_fingerprint",
        "_nodes",
        "_subtree_size",
        "_tag_index",
        "_tools",
    )

    def __init__(self, *, tools: Iterable[CatalogTool], nodes: Iterable[CatalogNode] = ()) -> None:
        self._build(tuple(tools), tuple(nodes), labels=None)

    def _build(
        self,
        tool_list: tuple[CatalogTool, ...],
        node_list: tuple[CatalogNode, ...],
        *,
        labels: Sequence[str] | None,
    ) -> None:
        """Validate, then index; ``labels`` name where each tool came from (a file's lines)."""
        problems = catalog_problems(tool_list, node_list)
        if problems:
            raise catalog_error(problems, labels)
        self._tools: Sequence[CatalogTool] = tool_list
        self._by_id: Mapping[str, int] = {tool.tool_id: k for k, tool in enumerate(tool_list)}
        nodes_by_path = _complete_nodes(node_list, tool_list)
        self._nodes: Mapping[TreePath, CatalogNode] = nodes_by_path
        self._children: Mapping[TreePath, tuple[CatalogNode, ...]] = _children_index(nodes_by_path)
        direct, sizes = _tool_indexes(tool_list)
        self._direct: Mapping[TreePath, tuple[int, ...]] = direct
        self._subtree_size: Mapping[TreePath, int] = sizes
        self._tag_index: Mapping[str, frozenset[int]] = _tag_index(tool_list)
        self._fingerprint = _fingerprint(tool_list, nodes_by_path)

    @classmethod
    def _restored(cls, tables: CatalogTables) -> ToolCatalog:
        """A catalogue over tables read back from a saved index file, without rebuilding them.

        Nothing is validated again: the tables were made from a validated catalogue
        and the file's checksum shows they are unchanged. Private: users call
        :func:`~weakincentives.discovery.load_catalog_index`.
        """
        catalog = cls.__new__(cls)
        catalog._tools, catalog._by_id, catalog._nodes = tables.tools, tables.by_id, tables.nodes
        catalog._children, catalog._direct = tables.children, tables.direct
        catalog._subtree_size, catalog._tag_index = tables.subtree_size, tables.tag_index
        catalog._fingerprint = tables.fingerprint
        return catalog

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, object]]) -> ToolCatalog:
        """Build a catalogue from JSON-shaped tool records.

        Each record has ``tool_id``, ``name``, ``path`` (one list of
        segments) or ``paths`` (a list of them), and optionally ``summary``,
        ``tags``, ``args_schema`` and ``result_schema``, the layout of a
        catalogue JSON-lines file. Malformed records are reported together,
        each by its position (``record 3``).
        """
        return cls._from_labelled([(f"record {k}", record) for k, record in enumerate(records)])

    @classmethod
    def _from_labelled(cls, records: Sequence[tuple[str, Mapping[str, object]]]) -> ToolCatalog:
        """The catalogue of ``records``; every problem is named by its record's label."""
        tools: list[CatalogTool] = []
        labels: list[str] = []
        problems: list[str] = []
        first_id: str | None = None
        for label, record in records:
            tool_or_problem = _tool_from_record(record, label)
            if isinstance(tool_or_problem, CatalogTool):
                tools.append(tool_or_problem)
                labels.append(label)
            else:
                problems.append(tool_or_problem)
                given = record.get("tool_id") if isinstance(record, Mapping) else None
                if first_id is None and isinstance(given, str):
                    first_id = given
        if problems:
            raise CatalogError(
                f"{len(problems):,} malformed catalogue record(s):\n{listed(problems)}",
                tool_id=first_id,
            )
        catalog = cls.__new__(cls)
        catalog._build(tuple(tools), (), labels=labels)
        return catalog

    @classmethod
    def from_tools(
        cls,
        entries: Iterable[tuple[Sequence[str], Tool[Any, Any]]],
        *,
        nodes: Iterable[CatalogNode] = (),
    ) -> ToolCatalog:
        """Build a catalogue of weakincentives tools, each filed under one or more paths.

        ``entries`` pairs a category path with a tool; a tool listed under several
        paths sits in all of them (a DAG). Ids are tool names, summaries the tool
        descriptions, and schemas come from serde (the natural, non-strict form).
        The tool itself is kept as the entry's ``handle``, so a section can run it.
        """
        paths: dict[str, list[TreePath]] = {}
        tools: dict[str, Tool[Any, Any]] = {}
        for path, tool in entries:
            known = tools.setdefault(tool.name, tool)
            if known is not tool:
                raise CatalogError(
                    f"two different tools are named {tool.name!r}; tool names are catalogue ids",
                    tool_id=tool.name,
                )
            paths.setdefault(tool.name, []).append(tuple(path))
        return cls(
            tools=[
                CatalogTool(
                    tool_id=name,
                    name=name,
                    paths=tuple(dict.fromkeys(paths[name])),
                    summary=tool.description,
                    args_schema=schema(tool.spec.params_type, strict=False),
                    result_schema=_result_schema(tool.spec.result_type),
                    handle=tool,
                )
                for name, tool in tools.items()
            ],
            nodes=nodes,
        )

    @classmethod
    def from_jsonl(cls, path: str | Path) -> ToolCatalog:
        """Read a catalogue from a file of tool records (see ``from_records``).

        The file holds JSON lines (one record per line; blank lines are skipped) or
        one JSON array of records. It is untrusted: anything that is not UTF-8 JSON
        (``NaN``, nesting deeper than ``MAX_JSON_DEPTH``, lone surrogates) and every
        problem of a record is a ``CatalogError`` naming the file and the line
        (``tools.jsonl:7``) or array item.
        """
        return cls._from_labelled(read_records(path))

    @property
    def tools(self) -> Sequence[CatalogTool]:
        """Every tool, in the order given (a tuple, unless read from an index file)."""
        return self._tools

    @property
    def nodes(self) -> Mapping[TreePath, CatalogNode]:
        """Every node (explicit and implied) by path; the root is not a node."""
        return MappingProxyType(self._nodes)

    @property
    def fingerprint(self) -> str:
        """A digest of the catalogue's tools, categories and ranked text (cursors, indexes)."""
        return self._fingerprint

    def __len__(self) -> int:
        return len(self._tools)

    def __iter__(self) -> Iterator[CatalogTool]:
        return iter(self._tools)

    def tool(self, tool_id: str) -> CatalogTool | None:
        """Return the tool with this id, or None."""
        index = self._by_id.get(tool_id)
        return None if index is None else self._tools[index]

    def position(self, tool_id: str) -> int:
        """Return the tool's index in ``tools``; raises ``KeyError`` for an unknown id."""
        return self._by_id[tool_id]

    def node(self, path: TreePath) -> CatalogNode | None:
        """Return the node at ``path``, or None (also for the root)."""
        return self._nodes.get(path)

    def has_path(self, path: TreePath) -> bool:
        """Say whether ``path`` is the root or a node of this catalogue."""
        return path == () or path in self._nodes

    def children(self, path: TreePath) -> tuple[CatalogNode, ...]:
        """Child nodes of ``path``, sorted by name then path."""
        return self._children.get(path, ())

    def tools_at(self, path: TreePath) -> tuple[int, ...]:
        """Indexes of the tools placed directly under ``path``, sorted by name then id."""
        return self._direct.get(path, ())

    def tools_under(self, path: TreePath) -> frozenset[int]:
        """Indexes of every tool anywhere under ``path`` (all tools for the root)."""
        if path == ():
            return frozenset(range(len(self._tools)))
        found: set[int] = set()
        pending = [path]
        while pending:
            current = pending.pop()
            found.update(self._direct.get(current, ()))
            pending.extend(node.path for node in self._children.get(current, ()))
        return frozenset(found)

    def subtree_size(self, path: TreePath) -> int:
        """How many distinct tools sit anywhere under ``path``."""
        return len(self._tools) if path == () else self._subtree_size.get(path, 0)

    def tools_tagged(self, tag: str) -> frozenset[int]:
        """Indexes of the tools carrying ``tag`` (compared case-insensitively)."""
        return self._tag_index.get(tag.casefold(), frozenset())


def _tool_from_record(record: object, label: str) -> CatalogTool | str:
    if not isinstance(record, Mapping):
        return f"{label} ({_kind(record)}): a record must be a JSON object (a mapping)"
    record = cast("Mapping[str, object]", record)
    tool_id, name = record.get("tool_id"), record.get("name")
    if not isinstance(tool_id, str) or not isinstance(name, str):
        return f"{_where(label, record)}: tool_id and name must be strings"
    raw_paths = record["paths"] if "paths" in record else [record.get("path")]
    if not isinstance(raw_paths, list) or not all(
        isinstance(path, list) and all(isinstance(s, str) for s in path) for path in raw_paths
    ):
        return (
            f"{_where(label, record)}: path must be a list of strings "
            "(or paths a list of such lists)"
        )
    summary, tags = record.get("summary", ""), record.get("tags", [])
    if not isinstance(summary, str):
        return f"{_where(label, record)}: summary must be a string"
    if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
        return f"{_where(label, record)}: tags must be a list of strings"
    args_schema = record.get("args_schema", {"type": "object", "properties": {}})
    result_schema = record.get("result_schema")
    if not isinstance(args_schema, dict) or not isinstance(result_schema, dict | None):
        return f"{_where(label, record)}: args_schema and result_schema must be JSON objects"
    return CatalogTool(
        tool_id=tool_id,
        name=name,
        paths=tuple(tuple(path) for path in raw_paths),
        summary=summary,
        tags=tuple(tags),
        args_schema=args_schema,
        result_schema=result_schema,
    )


def _where(label: str, record: Mapping[str, object]) -> str:
    """``record 3 ('an id')``: a malformed record named by its label and its tool_id."""
    given = record.get("tool_id", "no tool_id")
    return f"{label} ({quote(given) if isinstance(given, str) else _kind(given)})"


def _kind(value: object) -> str:
    """A non-string ``tool_id`` for a message: the value if it is short, else its type."""
    text = repr(value) if isinstance(value, int | float | bool | None) else ""
    return text if 0 < len(text) <= 40 else type(value).__name__


def _complete_nodes(
    nodes: tuple[CatalogNode, ...], tools: tuple[CatalogTool, ...]
) -> dict[TreePath, CatalogNode]:
    complete = {node.path: node for node in nodes}
    implied = [node.path for node in nodes] + [path for tool in tools for path in tool.paths]
    for path in implied:
        for depth in range(1, len(path)):
            prefix = path[:depth]
            if prefix not in complete:
                complete[prefix] = CatalogNode(name=prefix[-1], path=prefix)
        if path not in complete:
            complete[path] = CatalogNode(name=path[-1], path=path)
    return complete


def _children_index(
    nodes: Mapping[TreePath, CatalogNode],
) -> dict[TreePath, tuple[CatalogNode, ...]]:
    grouped: dict[TreePath, list[CatalogNode]] = {}
    for path, node in nodes.items():
        grouped.setdefault(path[:-1], []).append(node)
    return {
        parent: tuple(sorted(kids, key=lambda node: (node.name.casefold(), node.path)))
        for parent, kids in grouped.items()
    }


def _tool_indexes(
    tools: tuple[CatalogTool, ...],
) -> tuple[dict[TreePath, tuple[int, ...]], dict[TreePath, int]]:
    direct: dict[TreePath, list[int]] = {}
    sizes: dict[TreePath, int] = {}
    for index, tool in enumerate(tools):
        prefixes: set[TreePath] = set()
        for path in dict.fromkeys(tool.paths):
            direct.setdefault(path, []).append(index)
            prefixes.update(path[:depth] for depth in range(1, len(path) + 1))
        for prefix in prefixes:
            sizes[prefix] = sizes.get(prefix, 0) + 1

    def order(index: int) -> tuple[str, str]:
        return (tools[index].name.casefold(), tools[index].tool_id)

    return {path: tuple(sorted(ids, key=order)) for path, ids in direct.items()}, sizes


def _tag_index(tools: tuple[CatalogTool, ...]) -> dict[str, frozenset[int]]:
    grouped: dict[str, set[int]] = {}
    for index, tool in enumerate(tools):
        for tag in tool.tags:
            grouped.setdefault(tag.casefold(), set()).add(index)
    return {tag: frozenset(ids) for tag, ids in grouped.items()}


def _fingerprint(tools: tuple[CatalogTool, ...], nodes: Mapping[TreePath, CatalogNode]) -> str:
    """A digest of everything a saved index or a cursor depends on.

    The ids and paths a search answers with, and the text the default ranker reads:
    names, summaries, tags, argument schemas (for their names), each category's name,
    summary and tags. An index saved before any of it changed must not load as this
    catalogue's.
    """
    digest = hashlib.sha256()
    for start in range(0, len(tools), _FINGERPRINT_CHUNK):
        # One encoder call per chunk: the C encoder walks the entries without a Python
        # frame each, and the text held at once stays a chunk's.
        chunk = tools[start : start + _FINGERPRINT_CHUNK]
        digest.update(_encoded(list(map(_TOOL_TEXT, chunk))))
    digest.update(_encoded(list(map(_NODE_TEXT, (nodes[path] for path in sorted(nodes))))))
    return digest.hexdigest()[:32]


def _encoded(entries: list[Any]) -> bytes:
    """``entries`` as JSON bytes, the same for equal entries (keys sorted, text as is)."""
    # ``default=dict`` writes read-only schema mappings (``MappingProxyType``); the
    # catalogue checked every schema is portable JSON, so nothing else reaches it.
    text = json.dumps(
        entries, sort_keys=True, ensure_ascii=False, check_circular=False, default=dict
    )
    return text.encode("utf-8", "surrogatepass")


_FINGERPRINT_CHUNK = 4096
_TOOL_TEXT = attrgetter("tool_id", "name", "summary", "paths", "tags", "args_schema")
_NODE_TEXT = attrgetter("path", "name", "summary", "tags")


def _result_schema(result_type: object) -> Mapping[str, JSONValue] | None:
    if isinstance(result_type, type) and is_dataclass(result_type):
        return schema(result_type, strict=False)
    return None
