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

import heapq
import math
from array import array
from bisect import bisect_left
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Protocol

from weakincentives.discovery._catalog import CatalogNode, CatalogTool, ToolCatalog, TreePath
from weakincentives.discovery._text import tokenize

__all__ = ["BM25Index", "BM25Ranker", "FieldWeights", "RankIndex", "Ranker"]


class RankIndex(Protocol):
    """Scores one catalogue's tools and nodes against free-text queries.

    ``top`` and ``within`` are hints a ranker may use to skip work: with them
    it may leave out any tool (or node) that cannot be among the ``top`` best
    ones whose ids (paths) are in ``within``. Whatever it returns must carry
    its exact relevance, and it must not leave anything out when fewer than
    ``top`` such matches exist. A ranker may ignore the hints entirely.
    """

    def score_tools(
        self, query: str, *, top: int | None = None, within: Container[str] | None = None
    ) -> Mapping[str, float]:
        """Return relevance in ``(0, 1]`` by tool id for the tools that match ``query``."""
        ...

    def score_nodes(
        self, query: str, *, top: int | None = None, within: Container[TreePath] | None = None
    ) -> Mapping[TreePath, float]:
        """Return relevance in ``(0, 1]`` by node path for the nodes that match ``query``."""
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
    sibling_limit: int | None = 16
    """Only the best-scoring categories lend evidence (None: all); bounds the work per query."""
    prune_above: int = 4096
    """Queries touching more postings than this use exact top-k pruning when a caller
    asks only for the best few results; smaller ones are scored exhaustively."""

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
            tools=_Collection.build(tool_docs, self.weights, self.k1, self.prune_above),
            nodes=_Collection.build(node_docs, self.weights, self.k1, self.prune_above),
            shared=shared,
            members=tuple(tuple(m) for m in members),
            exact={key: tuple(ids) for key, ids in exact.items()},
            sibling_weight=self.sibling_weight,
            sibling_limit=self.sibling_limit,
        )


class _Collection:
    """An inverted index with BM25F impacts premultiplied by idf."""

    __slots__ = ("ceiling", "peak", "postings", "prune_above")

    def __init__(
        self,
        postings: dict[str, tuple[array[int], array[float]]],
        ceiling: dict[str, float],
        peak: dict[str, float],
        prune_above: int,
    ) -> None:
        self.prune_above = prune_above
        """Below this many postings per query, reading them all beats pruning."""
        self.postings = postings
        self.ceiling = ceiling
        """Best contribution a term could make (idf * (k1 + 1)); normalises relevance."""
        self.peak = peak
        """Largest contribution a term actually makes to any document; bounds pruning."""

    @classmethod
    def build(
        cls, docs: Sequence[_Document], weights: FieldWeights, k1: float, prune_above: int
    ) -> _Collection:
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
        peak: dict[str, float] = {}
        for term, (ids, impacts) in raw.items():
            idf = math.log(1 + (count - len(ids) + 0.5) / (len(ids) + 0.5))
            postings[term] = (array("I", ids), array("d", [idf * v for v in impacts]))
            ceiling[term] = idf * (k1 + 1)
            peak[term] = idf * max(impacts)
        return cls(postings, ceiling, peak, prune_above)

    def ceiling_of(self, terms: Iterable[str]) -> float:
        """The normalising ceiling of a query: what a perfect document would score."""
        return sum(self.ceiling[term] for term in dict.fromkeys(terms) if term in self.postings)

    def score(
        self,
        terms: Iterable[str],
        *,
        top: int | None = None,
        accept: Callable[[int], bool] | None = None,
        bonus: Mapping[int, float] | None = None,
    ) -> dict[int, float]:
        """Sum the impacts of ``terms`` (plus any ``bonus``) by document position.

        Documents in ``bonus`` start from their bonus and are always scored.
        Without ``top`` every matching document is scored. With ``top`` the
        scoring is MaxScore-style: terms are read strongest first, and once
        the ``top``-th best accepted document beats everything the unread
        terms could still add, no new documents are admitted and documents
        that can no longer reach the best ``top`` are dropped. What is
        returned then includes the best ``top`` accepted documents, all with
        exact scores.
        """
        # Strongest terms first, in both modes, so sums are formed in the same order.
        present = sorted(
            (term for term in dict.fromkeys(terms) if term in self.postings),
            key=lambda term: (-self.peak[term], term),
        )
        scores: dict[int, float] = dict(bonus or {})
        postings = self.postings
        if top is None or sum(len(postings[term][0]) for term in present) <= self.prune_above:
            get = scores.get
            for term in present:
                for position, impact in zip(*self.postings[term], strict=True):
                    scores[position] = get(position, 0.0) + impact
            return scores
        return _top_scores(self, present, scores=scores, top=top, accept=accept)


def _top_scores(
    collection: _Collection,
    present: list[str],
    *,
    scores: dict[int, float],
    top: int,
    accept: Callable[[int], bool] | None,
) -> dict[int, float]:
    # A small margin keeps float rounding in the running sums from pruning a tie.
    remaining = sum(collection.peak[term] for term in present) + 1e-9
    get, value = scores.get, scores.__getitem__
    leaders: list[int] = heapq.nlargest(top, _accepted(scores, accept), key=value)
    live: set[int] | None = None
    for term in present:
        ids, impacts = collection.postings[term]
        remaining -= collection.peak[term]
        if live is None:
            for position, impact in zip(ids, impacts, strict=True):
                scores[position] = get(position, 0.0) + impact
            # Only this term's documents changed: the new leaders are among them
            # and the previous leaders, so there is no need to rescan every score.
            changed = _accepted({*leaders, *ids}, accept)
            leaders = heapq.nlargest(top, changed, key=value)
            if len(leaders) < top or scores[leaders[-1]] <= remaining:
                continue
            candidates: Iterable[int] = _accepted(scores, accept)
        else:
            _update(live, ids, impacts, scores)
            candidates = live
        floor = min(scores[position] for position in leaders) - remaining
        live = {position for position in candidates if scores[position] >= floor}
        leaders = heapq.nlargest(top, live, key=value)
    if live is None:
        return scores
    return {position: scores[position] for position in live}


def _accepted(positions: Iterable[int], accept: Callable[[int], bool] | None) -> Iterable[int]:
    if accept is None:
        return positions
    return [position for position in positions if accept(position)]


def _update(
    live: set[int], ids: array[int], impacts: array[float], scores: dict[int, float]
) -> None:
    """Add one term's impacts to the live documents, by lookup when they are few."""
    if len(live) * 16 < len(ids):
        for position in live:
            index = bisect_left(ids, position)
            if index < len(ids) and ids[index] == position:
                scores[position] += impacts[index]
        return
    for position, impact in zip(ids, impacts, strict=True):
        if position in live:
            scores[position] += impact


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
    sibling_limit: int | None

    def score_tools(
        self, query: str, *, top: int | None = None, within: Container[str] | None = None
    ) -> Mapping[str, float]:
        """Score matching tools; see :class:`BM25Ranker` for the formula and the hints."""
        terms = tokenize(query)
        alpha = self.sibling_weight
        lenders: list[tuple[int, float]] = []
        group_scale = 0.0
        if alpha > 0:
            node_ceiling = self.nodes.ceiling_of(terms)
            groups = self.nodes.score(terms, top=self.sibling_limit)
            group_scale = alpha / (node_ceiling * (1 + alpha)) if node_ceiling else 0.0
            limit = self.sibling_limit
            lenders = list(groups.items())
            if limit is not None and len(lenders) > limit:
                lenders = heapq.nlargest(limit, lenders, key=itemgetter(1))
        members, shared, ids = self.members, self.shared, self.tool_ids
        # Category evidence per tool: a tool in several categories takes its best one.
        evidence: dict[int, float] = {}
        for node, score in lenders:
            lent = score * group_scale
            for position in members[node]:
                if position not in shared or lent > evidence.get(position, 0.0):
                    evidence[position] = lent
        own_ceiling = self.tools.ceiling_of(terms)
        if not own_ceiling:
            # No query term names any tool: only category evidence is left.
            result = {ids[position]: lent for position, lent in evidence.items()}
        else:
            own_scale = 1 / (own_ceiling * (1 + alpha))
            accept = None if within is None else (lambda position: ids[position] in within)
            # Evidence enters the scoring in own-score units so pruning accounts for it.
            bonus = {position: lent / own_scale for position, lent in evidence.items()}
            own = self.tools.score(terms, top=top, accept=accept, bonus=bonus)
            # Rounding can push a perfect match a hair over 1; relevances are capped at 1.
            result = {ids[p]: min(score * own_scale, 1.0) for p, score in own.items()}
        for tool_id in self.exact.get(tuple(terms), ()):
            result[tool_id] = 1.0
        return result

    def score_nodes(
        self, query: str, *, top: int | None = None, within: Container[TreePath] | None = None
    ) -> Mapping[TreePath, float]:
        """Score matching categories by their own BM25F documents."""
        paths = self.node_paths
        accept = None if within is None else (lambda position: paths[position] in within)
        terms = tokenize(query)
        ceiling = self.nodes.ceiling_of(terms)
        scores = self.nodes.score(terms, top=top, accept=accept)
        if not ceiling:
            return {}
        return {paths[k]: min(score / ceiling, 1.0) for k, score in scores.items()}


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
