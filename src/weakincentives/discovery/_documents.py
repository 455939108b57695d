"""The documents the default ranker indexes, as flat arrays of term occurrences.

A tool's fields are its ``name``, ``summary``, ``tags``, ``parent`` (the
categories directly holding it), ``ancestors`` (the other category names on
its paths) and ``params`` (its argument names). A category's document pools
its own name (``parent``), summary, tags and ancestors with its child
categories' names and the names, summaries, tags and argument names of the
tools directly under it. Every field of a collection is one pair of flat
arrays (term ids, document positions) built column by column, without a
Python frame per document or occurrence (see :mod:`._terms`); a category
copies its tools' occurrences array to array.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections import defaultdict, deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, compress, count, repeat
from operator import attrgetter, itemgetter, methodcaller, ne

from weakincentives.discovery._catalog import CatalogTool, ToolCatalog, TreePath
from weakincentives.discovery._terms import Chunked, Column, Kind, Memo, TermTable, column_of

__all__ = ["FIELDS", "Collections", "collect"]

FIELDS = ("name", "summary", "tags", "parent", "ancestors", "params")
_POOLED = ("name", "summary", "tags", "params")
"""Tool fields a category pools from the tools directly under it."""


class _Field:
    """Occurrences of one field across a collection: term ids and their documents."""

    __slots__ = ("docs", "terms")

    def __init__(self, column: Column) -> None:
        self.terms, self.docs = column

    def slice(self, position: int) -> array[int]:
        """The term ids of document ``position`` (before anything was added)."""
        return self.terms[bisect_left(self.docs, position) : bisect_right(self.docs, position)]

    def add(self, position: int, ids: Sequence[int]) -> None:
        """Append occurrences for ``position`` (``docs`` is no longer sorted)."""
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


def collect(
    catalog: ToolCatalog, members: Sequence[Sequence[int]], *, vectorised: bool
) -> Collections:
    """Tokenise ``catalog`` once; ``members[k]`` are the tools directly under node ``k``.

    Every text column is chunked first and expanded after, so the chunks'
    terms are laid out once (``vectorised`` expands with numpy).
    """
    table = TermTable()
    tools = catalog.tools
    tool_text = {name: table.chunk(texts) for name, texts in _tool_texts(tools).items()}
    node_text = {name: table.chunk(texts) for name, texts in _node_texts(catalog).items()}

    def column(chunked: Chunked, kind: Kind = "content") -> _Field:
        return _Field(table.column(chunked, kind, vectorised=vectorised))

    fields = {name: column(tool_text[name]) for name in FIELDS}
    nodes = {name: column(node_text[name]) for name in node_text}
    nodes["params"] = _Field(column_of([]))
    # Stop postings count presence only, so a word in both a name and a summary may
    # appear twice here: freezing counts it once.
    by_name = column(tool_text["name"], "stops")
    by_summary = column(tool_text["summary"], "stops")
    stops = (by_name.terms + by_summary.terms, by_name.docs + by_summary.docs)
    by_id = table.plain_ids(map(attrgetter("tool_id"), tools))
    exact = _exact(tools, table.plains(tool_text["name"]), by_id)
    holders: list[list[int]] = [[] for _ in tools]
    owners = chain.from_iterable(map(repeat, count(), map(len, members)))
    deque(
        map(list.append, map(holders.__getitem__, chain.from_iterable(members)), owners), maxlen=0
    )
    _pool(fields, nodes, holders)
    return Collections(
        terms=table.terms,
        tools={n: (f.terms, f.docs) for n, f in fields.items()},
        nodes={n: (f.terms, f.docs) for n, f in nodes.items()},
        stops=stops,
        exact=exact,
        holders=tuple(map(tuple, holders)),
    )


def _tool_texts(tools: Sequence[CatalogTool]) -> dict[str, list[str]]:
    """The text of each tool field, one per tool."""
    placed = Memo(_placement)
    where = list(map(placed.__getitem__, map(attrgetter("paths"), tools)))
    schemas = map(attrgetter("args_schema"), tools)
    return {
        "name": list(map(attrgetter("name"), tools)),
        "summary": list(map(attrgetter("summary"), tools)),
        "tags": list(map(" ".join, map(attrgetter("tags"), tools))),
        "parent": list(map(itemgetter(0), where)),
        "ancestors": list(map(itemgetter(1), where)),
        # A validated object schema's properties are an object: its keys are the names.
        "params": list(map(" ".join, map(methodcaller("get", "properties", {}), schemas))),
    }


def _node_texts(catalog: ToolCatalog) -> dict[str, list[str]]:
    """The text of each category field (before its tools' text is pooled in)."""
    node_list = list(catalog.nodes.values())
    return {
        "name": [" ".join(child.name for child in catalog.children(n.path)) for n in node_list],
        "summary": [node.summary for node in node_list],
        "tags": [" ".join(node.tags) for node in node_list],
        "parent": [n.name if n.name == n.path[-1] else f"{n.name} {n.path[-1]}" for n in node_list],
        "ancestors": [" ".join(node.path[:-1]) for node in node_list],
    }


def _placement(paths: tuple[TreePath, ...]) -> tuple[str, str]:
    """The ``parent`` and ``ancestors`` texts of a tool placed at ``paths``."""
    if len(paths) == 1:
        return paths[0][-1], " ".join(paths[0][:-1])
    parent = " ".join(dict.fromkeys(path[-1] for path in paths))
    ancestors = " ".join(dict.fromkeys(s for path in paths for s in path[:-1]))
    return parent, ancestors


def _exact(
    tools: Sequence[CatalogTool],
    by_name: Sequence[tuple[str, ...]],
    by_id: Sequence[tuple[str, ...]],
) -> dict[tuple[str, ...], tuple[str, ...]]:
    """Tool ids by the plain terms of their name and of their id (each tool once per key)."""
    ids = list(map(attrgetter("tool_id"), tools))
    exact: defaultdict[tuple[str, ...], list[str]] = defaultdict(list)
    # One C-level pass per key column; a tool whose id says what its name says is filed once.
    deque(map(list.append, map(exact.__getitem__, by_name), ids), maxlen=0)
    differs = list(map(ne, by_id, by_name))
    keys = compress(by_id, differs)
    deque(map(list.append, map(exact.__getitem__, keys), compress(ids, differs)), maxlen=0)
    exact.pop((), None)
    return dict(zip(exact, map(tuple, exact.values()), strict=True))


def _pool(
    tools: Mapping[str, _Field], nodes: Mapping[str, _Field], holders: Sequence[Sequence[int]]
) -> None:
    """Copy each tool's pooled fields into the categories directly holding it.

    When every tool sits in exactly one category (a tree), the occurrences are
    copied whole with each document position mapped to its category;
    otherwise they are copied tool by tool.
    """
    if all(len(held) == 1 for held in holders):
        primary = list(chain.from_iterable(holders))
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
