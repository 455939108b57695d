"""Ranking seam and the default BM25F ranker.

A :class:`Ranker` turns a catalogue into a :class:`RankIndex` once; the index
then scores queries. Scores are relevances in ``(0, 1]`` keyed by tool id or
node path; anything missing from the mapping did not match. The discovery
service uses the relevance as the ``confidence`` it reports, filters by
category and access policy, and orders by relevance with ties broken by tool
id (or path), so a plug-in ranker (embeddings, a remote service) only has to
produce comparable numbers in that range.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from weakincentives.discovery._catalog import CatalogNode, CatalogTool, ToolCatalog, TreePath
from weakincentives.discovery._text import tokenize

__all__ = ["BM25Index", "BM25Ranker", "FieldWeights", "RankIndex", "Ranker"]


class RankIndex(Protocol):
    """Scores one catalogue's tools and nodes against free-text queries."""

    def score_tools(self, query: str) -> Mapping[str, float]:
        """Return relevance in ``(0, 1]`` by tool id for every tool that matches ``query``."""
        ...

    def score_nodes(self, query: str) -> Mapping[TreePath, float]:
        """Return relevance in ``(0, 1]`` by node path for every node that matches ``query``."""
        ...


class Ranker(Protocol):
    """Builds a :class:`RankIndex` for a catalogue; called once per catalogue."""

    def index(self, catalog: ToolCatalog) -> RankIndex:
        """Precompute whatever scoring needs (inverted lists, embeddings) for ``catalog``."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class FieldWeights:
    """How much a term occurrence counts in each field, and how much length dampens it.

    The fields of a tool document are its ``name``, ``summary``, ``tags``,
    ``parent`` (the name of the category directly holding it), ``ancestors``
    (the other category names on its paths) and ``params`` (its argument
    names). A category document uses the same fields: its own name is
    ``parent``, the names of its tools and child categories are ``name``, its
    summary and its tools' summaries are ``summary``, and so on.
    """

    name: float = 3.0
    summary: float = 1.0
    tags: float = 1.0
    parent: float = 3.0
    ancestors: float = 1.0
    params: float = 0.5
    length_damping: Mapping[str, float] = field(
        default_factory=lambda: {
            "name": 0.5,
            "summary": 0.75,
            "tags": 0.3,
            "parent": 0.3,
            "ancestors": 0.3,
            "params": 0.75,
        }
    )
    """BM25 ``b`` per field: 0 ignores field length, 1 normalises fully."""

    def weight(self, field_name: str) -> float:
        """Return the weight of ``field_name``."""
        return float(getattr(self, field_name))


_FIELDS = ("name", "summary", "tags", "parent", "ancestors", "params")
type _Document = dict[str, list[str]]


@dataclass(frozen=True, slots=True, kw_only=True)
class BM25Ranker:
    """BM25F over tool and category documents, with evidence shared between siblings.

    A tool's relevance mixes its own BM25F score with the score of the
    category directly holding it (whose document pools the names and
    summaries of all its tools), because endpoints of one API are usually
    wanted together and one endpoint's terse summary is explained by its
    siblings. Each part is divided by the best score any document could reach
    for the query (every known query term saturated), then mixed as
    ``(own + sibling_weight * category) / (1 + sibling_weight)``, so the result
    is in ``(0, 1]`` and does not depend on which other tools matched. A query
    whose terms equal a tool's name terms exactly gives that tool 1.0.
    """

    weights: FieldWeights = field(default_factory=FieldWeights)
    k1: float = 1.2
    """Term-frequency saturation: higher lets repeated terms count for longer."""
    sibling_weight: float = 1.0
    """Weight of the holding category's score relative to the tool's own."""

    def index(self, catalog: ToolCatalog) -> BM25Index:
        """Build the inverted indexes for ``catalog``'s tools and categories."""
        tools = catalog.tools
        node_list = tuple(catalog.nodes.values())
        tool_docs = [_tool_document(tool) for tool in tools]
        members = _members(catalog, node_list)
        node_docs = [
            _node_document(node, [tool_docs[i] for i in members[k]], catalog.children(node.path))
            for k, node in enumerate(node_list)
        ]
        exact: dict[tuple[str, ...], list[str]] = {}
        for tool in tools:
            for key in {tuple(tokenize(tool.name)), tuple(tokenize(tool.tool_id))}:
                if key:
                    exact.setdefault(key, []).append(tool.tool_id)
        shared = frozenset(
            position for position, tool in enumerate(tools) if len(set(tool.paths)) > 1
        )
        return BM25Index(
            tool_ids=tuple(tool.tool_id for tool in tools),
            node_paths=tuple(node.path for node in node_list),
            tools=_Collection.build(tool_docs, self.weights, self.k1),
            nodes=_Collection.build(node_docs, self.weights, self.k1),
            shared=shared,
            members=tuple(tuple(m) for m in members),
            exact={key: tuple(ids) for key, ids in exact.items()},
            sibling_weight=self.sibling_weight,
        )


class _Collection:
    """An inverted index with BM25F impacts premultiplied by idf."""

    __slots__ = ("ceiling", "postings")

    def __init__(
        self, postings: dict[str, tuple[array[int], array[float]]], ceiling: dict[str, float]
    ):
        self.postings = postings
        self.ceiling = ceiling
        """Best possible contribution of each term (idf * (k1 + 1))."""

    @classmethod
    def build(cls, docs: Sequence[_Document], weights: FieldWeights, k1: float) -> _Collection:
        count = len(docs) or 1
        average = {name: (sum(len(doc[name]) for doc in docs) / count) or 1.0 for name in _FIELDS}
        raw: dict[str, tuple[list[int], list[float]]] = {}
        for position, doc in enumerate(docs):
            pseudo: dict[str, float] = {}
            for name in _FIELDS:
                terms, weight = doc[name], weights.weight(name)
                if not terms or weight == 0:
                    continue
                damping = weights.length_damping.get(name, 0.75)
                norm = weight / (1 - damping + damping * len(terms) / average[name])
                for term in terms:
                    pseudo[term] = pseudo.get(term, 0.0) + norm
            for term, freq in pseudo.items():
                ids, impacts = raw.setdefault(term, ([], []))
                ids.append(position)
                impacts.append(freq * (k1 + 1) / (k1 + freq))
        postings: dict[str, tuple[array[int], array[float]]] = {}
        ceiling: dict[str, float] = {}
        for term, (ids, impacts) in raw.items():
            idf = math.log(1 + (count - len(ids) + 0.5) / (len(ids) + 0.5))
            postings[term] = (array("I", ids), array("d", [idf * v for v in impacts]))
            ceiling[term] = idf * (k1 + 1)
        return cls(postings, ceiling)

    def score(self, terms: Iterable[str]) -> tuple[dict[int, float], float]:
        """Sum impacts for ``terms``; return scores by position and the ceiling."""
        scores: dict[int, float] = {}
        top = 0.0
        get = scores.get
        for term in terms:
            entry = self.postings.get(term)
            if entry is None:
                continue
            top += self.ceiling[term]
            for position, impact in zip(*entry, strict=True):
                scores[position] = get(position, 0.0) + impact
        return scores, top


@dataclass(frozen=True, slots=True, kw_only=True)
class BM25Index:
    """The query side of :class:`BM25Ranker`; immutable and safe to share."""

    tool_ids: tuple[str, ...]
    node_paths: tuple[TreePath, ...]
    tools: _Collection
    nodes: _Collection
    shared: frozenset[int]
    """Positions of tools that sit in more than one category."""
    members: tuple[tuple[int, ...], ...]
    exact: Mapping[tuple[str, ...], tuple[str, ...]]
    sibling_weight: float

    def score_tools(self, query: str) -> Mapping[str, float]:
        """Score every matching tool; see :class:`BM25Ranker` for the formula."""
        terms = tokenize(query)
        distinct = dict.fromkeys(terms)
        own, own_top = self.tools.score(distinct)
        groups, group_top = self.nodes.score(distinct)
        alpha = self.sibling_weight
        own_scale = 1 / (own_top * (1 + alpha)) if own_top else 0.0
        group_scale = alpha / (group_top * (1 + alpha)) if group_top else 0.0
        mixed = {position: score * own_scale for position, score in own.items()}
        members, shared = self.members, self.shared
        sibling: dict[int, float] = {}
        for node, score in groups.items():
            evidence = score * group_scale
            if not shared:
                for position in members[node]:
                    mixed[position] = mixed.get(position, 0.0) + evidence
                continue
            for position in members[node]:
                if position in shared:
                    # A tool in several categories takes its best category, once.
                    sibling[position] = max(sibling.get(position, 0.0), evidence)
                else:
                    mixed[position] = mixed.get(position, 0.0) + evidence
        for position, evidence in sibling.items():
            mixed[position] = mixed.get(position, 0.0) + evidence
        ids = self.tool_ids
        result = {ids[position]: min(score, 1.0) for position, score in mixed.items() if score > 0}
        for tool_id in self.exact.get(tuple(terms), ()):
            result[tool_id] = 1.0
        return result

    def score_nodes(self, query: str) -> Mapping[TreePath, float]:
        """Score every matching category by its own BM25F document."""
        scores, top = self.nodes.score(dict.fromkeys(tokenize(query)))
        if not top:
            return {}
        return {self.node_paths[k]: min(score / top, 1.0) for k, score in scores.items()}


def _params(tool: CatalogTool) -> list[str]:
    properties = tool.args_schema.get("properties")
    if not isinstance(properties, Mapping):
        return []
    return [term for name in properties for term in tokenize(str(name))]


def _tool_document(tool: CatalogTool) -> _Document:
    parents = dict.fromkeys(path[-1] for path in tool.paths)
    ancestors = dict.fromkeys(segment for path in tool.paths for segment in path[:-1])
    return {
        "name": tokenize(tool.name),
        "summary": tokenize(tool.summary),
        "tags": tokenize(" ".join(tool.tags)),
        "parent": tokenize(" ".join(parents)),
        "ancestors": tokenize(" ".join(ancestors)),
        "params": _params(tool),
    }


def _node_document(
    node: CatalogNode, members: Sequence[_Document], children: Sequence[CatalogNode]
) -> _Document:
    label = node.name if node.name == node.path[-1] else f"{node.name} {node.path[-1]}"
    doc: _Document = {
        "name": tokenize(" ".join(child.name for child in children)),
        "summary": tokenize(node.summary),
        "tags": tokenize(" ".join(node.tags)),
        "parent": tokenize(label),
        "ancestors": tokenize(" ".join(node.path[:-1])),
        "params": [],
    }
    for member in members:
        for name in ("name", "summary", "tags", "params"):
            doc[name].extend(member[name])
    return doc


def _members(catalog: ToolCatalog, nodes: Sequence[CatalogNode]) -> list[list[int]]:
    return [list(catalog.tools_at(node.path)) for node in nodes]
