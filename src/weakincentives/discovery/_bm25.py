"""The query side of the default ranker: BM25F scores mixed with category evidence.

Built by :class:`~weakincentives.discovery.BM25Ranker`; immutable and safe to
share between services and threads.
"""

from __future__ import annotations

import heapq
from array import array
from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from operator import itemgetter

from weakincentives.discovery._catalog import TreePath
from weakincentives.discovery._columns import Groups
from weakincentives.discovery._postings import Postings
from weakincentives.discovery._text import stop_terms, tokenize

__all__ = ["FALLBACK_CEILING", "BM25Index"]

FALLBACK_CEILING = 0.1
"""Highest relevance of a match made through stop words alone (a last resort)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class BM25Index:
    """Inverted lists of tools, categories and stop words, plus what mixes them."""

    catalog_fingerprint: str
    """The catalogue this index was built for (checked when a saved index is loaded)."""
    tool_ids: tuple[str, ...]
    node_paths: tuple[TreePath, ...]
    tools: Postings
    """Tool documents; impacts already carry each tool's ``1 / (1 + w)`` share."""
    nodes: Postings
    """Category documents (a category pools its tools' text)."""
    stops: Postings
    """Stop words of tool names and summaries, for queries nothing else matches."""
    shared: frozenset[int]
    """Positions of tools that sit in more than one category."""
    members: Groups
    """Tool positions directly under each node."""
    lend: array[float]
    """Weight ``w`` of each node's evidence for its tools."""
    tool_lend: array[float]
    """Weight ``w`` of each tool's primary category (sets its own share ``1 / (1 + w)``)."""
    holders: Groups
    """Nodes directly holding each tool."""
    positions: Mapping[str, int]
    """Tool id -> position."""
    exact: Mapping[tuple[str, ...], tuple[str, ...]]
    """Tool ids by the terms of their name (and of their id): an exact match scores 1."""
    sibling_limit: int | None

    def score_tools(
        self, query: str, *, top: int | None = None, within: Container[str] | None = None
    ) -> Mapping[str, float]:
        """Score matching tools; see ``BM25Ranker`` for the formula and the hints."""
        terms = list(dict.fromkeys(tokenize(query)))
        ids = self.tool_ids
        evidence = self._evidence(terms)
        own_ceiling = self.tools.ceiling_of(terms)
        if own_ceiling:
            accept = None if within is None else (lambda position: ids[position] in within)
            # Evidence enters the scoring in own-score units so pruning accounts for it.
            bonus = {position: lent * own_ceiling for position, lent in evidence.items()}
            own = self.tools.score(terms, top=top, accept=accept, bonus=bonus)
            # Rounding can push a perfect match a hair over 1; relevances are capped at 1.
            result = {ids[p]: min(score / own_ceiling, 1.0) for p, score in own.items()}
        elif evidence:
            # No query term names any tool: only category evidence is left.
            result = {ids[position]: lent for position, lent in evidence.items()}
        else:
            result = self._fallback(query)
        for tool_id in self.exact.get(tuple(tokenize(query, joined=False)), ()):
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
        if not ceiling:
            return {}
        scores = self.nodes.score(terms, top=top, accept=accept)
        return {paths[k]: min(score / ceiling, 1.0) for k, score in scores.items()}

    def coverage(self, query: str) -> float:
        """Share of the query's distinct content terms that some tool or category contains.

        A measure of lexical evidence taken from the query and the catalogue
        alone: a word no document contains can only be matched by meaning
        (``FusedIndex`` weighs a semantic ranker more when this is low). A
        query without content terms has coverage 0.
        """
        terms = list(dict.fromkeys(tokenize(query)))
        if not terms:
            return 0.0
        known = sum(1 for term in terms if term in self.tools.spans or term in self.nodes.spans)
        return known / len(terms)

    def relevance_of(self, query: str, tool_ids: Iterable[str]) -> Mapping[str, float]:
        """Relevance of a few given tools only, by lookups instead of a search.

        Used to re-rank a handful of candidates (for example against each
        request of a multi-request query); category evidence comes from each
        tool's own categories, whatever their rank among all categories.
        """
        return self.relevance_rows([query], tool_ids)[0]

    def relevance_rows(
        self, queries: Sequence[str], tool_ids: Iterable[str]
    ) -> list[Mapping[str, float]]:
        """:meth:`relevance_of` for each of several queries, each term looked up once."""
        per_query = [list(dict.fromkeys(tokenize(query))) for query in queries]
        vocabulary = list(dict.fromkeys(chain.from_iterable(per_query)))
        positions = sorted(
            {p for tool_id in tool_ids if (p := self.positions.get(tool_id)) is not None}
        )
        # The candidates each holding category lends to, in position order.
        held: dict[int, list[int]] = {}
        for p in positions:
            for node in self.holders[p]:
                held.setdefault(node, []).append(p)
        tool_hits = self.tools.hits(vocabulary, positions)
        node_hits = self.nodes.hits(vocabulary, sorted(held))
        return [self._relevance(terms, held, tool_hits, node_hits) for terms in per_query]

    def _relevance(
        self,
        terms: list[str],
        held: Mapping[int, Sequence[int]],
        tool_hits: Mapping[str, Mapping[int, float]],
        node_hits: Mapping[str, Mapping[int, float]],
    ) -> dict[str, float]:
        """One query's relevance of the candidates from per-term impacts (see ``relevance_of``).

        ``held`` maps each category holding a candidate to those candidates.
        """
        ids = self.tool_ids
        result: dict[str, float] = {}
        ceiling = self.tools.ceiling_of(terms)
        if ceiling:
            own = _summed(terms, tool_hits)
            result = {ids[p]: score / ceiling for p, score in sorted(own.items())}
        node_ceiling = self.nodes.ceiling_of(terms)
        if node_ceiling:
            found = _summed(terms, node_hits)
            for node, score in sorted(found.items()):
                lent = self.lend[node] * score / node_ceiling
                for p in held[node]:
                    result[ids[p]] = result.get(ids[p], 0.0) + lent / (1 + self.tool_lend[p])
        return {tool_id: min(score, 1.0) for tool_id, score in result.items() if score > 0}

    def _evidence(self, terms: list[str]) -> dict[int, float]:
        """Category evidence per tool position, in relevance units; best category wins."""
        limit = self.sibling_limit
        node_ceiling = self.nodes.ceiling_of(terms)
        if not node_ceiling or limit == 0:
            return {}
        groups = self.nodes.score(terms, top=limit)
        lenders = list(groups.items())
        if limit is not None and len(lenders) > limit:
            lenders = heapq.nlargest(limit, lenders, key=itemgetter(1))
        evidence: dict[int, float] = {}
        shared, members, lend, tool_lend = self.shared, self.members, self.lend, self.tool_lend
        for node, score in lenders:
            weight = lend[node]
            if not weight:
                continue
            lent = weight * score / node_ceiling
            for position in members[node]:
                share = lent / (1 + tool_lend[position])
                if position not in shared or share > evidence.get(position, 0.0):
                    evidence[position] = share
        return evidence

    def _fallback(self, query: str) -> dict[str, float]:
        """Tools sharing only stop words with the query, with low relevance."""
        terms = stop_terms(query)
        ceiling = self.stops.ceiling_of(terms)
        if not ceiling:
            return {}
        scores = self.stops.score(terms)
        ids = self.tool_ids
        return {ids[p]: FALLBACK_CEILING * score / ceiling for p, score in scores.items()}


def _summed(terms: Iterable[str], hits: Mapping[str, Mapping[int, float]]) -> dict[int, float]:
    """Each document's impacts summed over ``terms`` in order, from 0.0."""
    total: dict[int, float] = {}
    get = total.get
    for term in terms:
        for position, impact in hits.get(term, {}).items():
            total[position] = get(position, 0.0) + impact
    return total
