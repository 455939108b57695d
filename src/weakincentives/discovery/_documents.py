"""The documents the default ranker indexes, as flat arrays of term occurrences.

A tool's fields are its ``name``, ``summary``, ``tags``, ``parent`` (the
categories directly holding it), ``ancestors`` (the other category names on
its paths) and ``params`` (its argument names). A category's document pools
its own name (``parent``), summary, tags and ancestors with its child
categories' names and the names, summaries, tags and argument names of the
tools directly under it. Every field of a collection is one pair of flat
arrays (term ids, document positions) built without a Python object per
occurrence; a category copies its tools' occurrences array to array.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate, chain, count, repeat
from operator import attrgetter

from weakincentives.discovery._catalog import CatalogTool, ToolCatalog, TreePath
from weakincentives.discovery._terms import Memo, TermTable

__all__ = ["FIELDS", "Collections", "collect"]

FIELDS = ("name", "summary", "tags", "parent", "ancestors", "params")
_POOLED = ("name", "summary", "tags", "params")
"""Tool fields a category pools from the tools directly under it."""


class _Field:
    """Occurrences of one field across a collection: term ids and their documents."""

    __slots__ = ("docs", "starts", "terms")

    def __init__(self, per_doc: Sequence[Sequence[int]]) -> None:
        lengths = list(map(len, per_doc))
        self.terms: array[int] = array("I", chain.from_iterable(per_doc))
        self.docs: array[int] = array("I", chain.from_iterable(map(repeat, count(), lengths)))
        self.starts: array[int] = array("Q", accumulate(lengths, initial=0))
        """Where each document's occurrences begin, and (last) where they all end."""

    def slice(self, position: int) -> array[int]:
        """The term ids of document ``position``."""
        return self.terms[self.starts[position] : self.starts[position + 1]]

    def add(self, position: int, ids: Sequence[int]) -> None:
        """Append occurrences for ``position`` (``starts`` no longer describes them)."""
        self.terms.extend(ids)
        self.docs.extend(repeat(position, len(ids)))


@dataclass(frozen=True, slots=True, kw_only=True)
class Collections:
    """Term occurrences by field for tools, categories and stop words, and the vocabulary."""

    terms: list[str]
    tools: Mapping[str, tuple[array[int], array[int]]]
    nodes: Mapping[str, tuple[array[int], array[int]]]
    stops: tuple[array[int], array[int]]
    exact: dict[tuple[str, ...], tuple[str, ...]]
    """Tool ids by the terms of their name, and of their id (without joined forms)."""
    holders: tuple[tuple[int, ...], ...]
    """Positions of the categories directly holding each tool."""


def collect(catalog: ToolCatalog, members: Sequence[Sequence[int]]) -> Collections:
    """Tokenise ``catalog`` once; ``members[k]`` are the tools directly under node ``k``."""
    table = TermTable()
    tools = catalog.tools
    fields, stops, exact = _tool_fields(tools, table)
    node_list = list(catalog.nodes.values())
    field = table.field
    labels = [n.name if n.name == n.path[-1] else f"{n.name} {n.path[-1]}" for n in node_list]
    nodes = {
        "name": _Field(
            [
                field(" ".join(child.name for child in catalog.children(node.path)))
                for node in node_list
            ]
        ),
        "summary": _Field([table.content(node.summary) for node in node_list]),
        "tags": _Field([field(" ".join(node.tags)) for node in node_list]),
        "parent": _Field(list(map(field, labels))),
        "ancestors": _Field([field(" ".join(node.path[:-1])) for node in node_list]),
        "params": _Field([]),
    }
    holders: list[list[int]] = [[] for _ in tools]
    for k, group in enumerate(members):
        for position in group:
            holders[position].append(k)
    _pool(fields, nodes, holders)
    return Collections(
        terms=table.terms,
        tools={n: (f.terms, f.docs) for n, f in fields.items()},
        nodes={n: (f.terms, f.docs) for n, f in nodes.items()},
        stops=(stops.terms, stops.docs),
        exact=exact,
        holders=tuple(map(tuple, holders)),
    )


def _tool_fields(
    tools: Sequence[CatalogTool], table: TermTable
) -> tuple[dict[str, _Field], _Field, dict[tuple[str, ...], tuple[str, ...]]]:
    """Each tool field as a column; the stop words of names and summaries; exact keys."""
    field = table.field
    names = list(map(attrgetter("name"), tools))
    summaries = list(map(attrgetter("summary"), tools))
    parents: dict[tuple[TreePath, ...], tuple[tuple[int, ...], tuple[int, ...]]] = {}

    def placed(paths: tuple[TreePath, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
        found = parents.get(paths)
        if found is None:
            parent = " ".join(dict.fromkeys(path[-1] for path in paths))
            ancestors = " ".join(dict.fromkeys(s for path in paths for s in path[:-1]))
            found = parents[paths] = (field(parent), field(ancestors))
        return found

    where = list(map(placed, map(attrgetter("paths"), tools)))
    fields = {
        "name": _Field(list(map(field, names))),
        "summary": _Field(list(map(table.content, summaries))),
        "tags": _Field(list(map(field, map(" ".join, map(attrgetter("tags"), tools))))),
        "parent": _Field([parent for parent, _ in where]),
        "ancestors": _Field([ancestors for _, ancestors in where]),
        "params": _Field([field(" ".join(_param_names(tool))) for tool in tools]),
    }
    name_stops = Memo(table.stops)
    stops = _Field(
        [
            tuple(dict.fromkeys(name_stops[name] + table.stops(summary)))
            for name, summary in zip(names, summaries, strict=True)
        ]
    )
    exact: dict[tuple[str, ...], list[str]] = {}
    name_keys = Memo(table.plain)
    for tool in tools:
        for key in {name_keys[tool.name], table.plain(tool.tool_id)}:
            if key:
                exact.setdefault(key, []).append(tool.tool_id)
    return fields, stops, {key: tuple(ids) for key, ids in exact.items()}


def _pool(
    tools: Mapping[str, _Field], nodes: Mapping[str, _Field], holders: Sequence[Sequence[int]]
) -> None:
    """Copy each tool's pooled fields into the categories directly holding it.

    When every tool sits in exactly one category (a tree), the occurrences are
    copied whole with each document position mapped to its category;
    otherwise they are copied tool by tool.
    """
    if all(len(held) == 1 for held in holders):
        primary = [held[0] for held in holders]
        for name in _POOLED:
            source, target = tools[name], nodes[name]
            target.terms.extend(source.terms)
            target.docs.extend(map(primary.__getitem__, source.docs))
        return
    for name in _POOLED:
        source, target = tools[name], nodes[name]
        for position, held in enumerate(holders):
            chunk = source.slice(position)
            for node in held:
                target.add(node, chunk)


def _param_names(tool: CatalogTool) -> list[str]:
    properties = tool.args_schema.get("properties")
    if not isinstance(properties, Mapping):
        return []
    return [str(key) for key in properties]
