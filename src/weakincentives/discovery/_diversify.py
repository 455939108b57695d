"""Make the first results of a multi-request query cover every request.

"Get the agent's info, quote disability cover and redeem loyalty points" asks
for three tools. Ranked by the whole query, near-duplicates of the best match
for the first request fill the top five and push the others down. This module
splits a query into its requests (sentences and clauses joined by "also",
"additionally", ...) and re-orders the best candidates greedily (xQuAD): each
next result maximises ``(1 - mix) * relevance + mix * sum over requests of
(share * relevance to that request * how uncovered that request still is)``.
A query with one request keeps its order.
"""

from __future__ import annotations

import functools
import heapq
import re
from collections.abc import Mapping, Sequence
from operator import mul

from weakincentives.discovery._ranking import RankIndex
from weakincentives.discovery._text import tokenize

__all__ = ["DIVERSIFY_DEPTH", "diversify", "requests_beyond", "requests_of"]

DIVERSIFY_DEPTH = 30
"""How many of the best results are re-ordered; the rest keep their order."""
_MIX = 0.5
_MIN_TERMS = 2
"""A clause needs this many distinct content terms to count as a request of its own."""
# A clause break's leading whitespace is only read from the start of its run (the
# lookbehind), and only when a keyword's first letter follows it: a plain leading \s*
# is tried again from every position inside a run, which is quadratic in the run's
# length. The splits are the same as with "\s*\b(?:also|...)" (checked on both data
# sets and on random text), and a split costs about what it did.
_KEYWORD = r"(?:also|additionally|furthermore|moreover|finally|then|as well as)\b,?\s*"
_BREAKS = re.compile(
    rf"(?<=[.?!;])\s+|(?<!\s)\s+(?=[afmt])\b{_KEYWORD}|\b{_KEYWORD}", re.IGNORECASE
)


@functools.lru_cache(maxsize=64)
def _clauses(query: str) -> tuple[str, ...]:
    """The non-empty pieces of ``query`` between breaks (cached: a search splits twice)."""
    return tuple(part for part in _BREAKS.split(query) if part)


def requests_of(query: str) -> list[str]:
    """The separate requests in ``query``; one item when it asks for one thing."""
    parts = [part for part in _clauses(query) if len(set(tokenize(part))) >= _MIN_TERMS]
    return parts if len(parts) > 1 else [query]


def requests_beyond(query: str, limit: int) -> int | None:
    """How many requests ``query`` holds when that is more than ``limit``; else None.

    Splitting is one regular expression; the clauses are only tokenised (to drop those
    without two content terms) when there are more than ``limit`` of them, so the common
    query costs a search nothing more.
    """
    if len(_clauses(query)) <= limit:
        return None
    found = len(requests_of(query))
    return found if found > limit else None


def diversify(
    query: str, ranked: Sequence[tuple[float, str]], index: RankIndex
) -> list[tuple[float, str]]:
    """Re-order the best ``DIVERSIFY_DEPTH`` of ``ranked`` ((relevance, id), best first)."""
    requests = requests_of(query)
    if len(requests) == 1 or len(ranked) < 2:
        return list(ranked)
    head = list(ranked[:DIVERSIFY_DEPTH])
    ids = [tool_id for _, tool_id in head]
    per_request = _relevances(index, requests, ids)
    share = 1.0 / len(requests)
    rows = {tool_id: [scores.get(tool_id, 0.0) for scores in per_request] for tool_id in ids}
    # share * relevance to each request, per candidate: the coverage weights.
    weights = {tool_id: [share * score for score in row] for tool_id, row in rows.items()}
    keep = 1 - _MIX
    uncovered = [1.0] * len(requests)
    order: list[tuple[float, str]] = []
    # Lazy greedy: a loss can only grow as requests get covered (exactly so in floating
    # point: every factor is at most 1), so a stale loss is a lower bound, and an entry
    # whose fresh loss still beats every other stale one is the true best. A loss is
    # minus the xQuAD gain, then the id (ties go to the smaller id).
    pending = [
        (-(keep * entry[0] + _MIX * sum(map(mul, weights[entry[1]], uncovered))), entry[1], entry)
        for entry in head
    ]
    heapq.heapify(pending)
    while pending:
        _, tool_id, best = heapq.heappop(pending)
        fresh = -(keep * best[0] + _MIX * sum(map(mul, weights[tool_id], uncovered)))
        if pending and (fresh, tool_id) > pending[0][:2]:
            heapq.heappush(pending, (fresh, tool_id, best))
            continue
        order.append(best)
        uncovered = [
            left * (1.0 - min(score, 1.0))
            for score, left in zip(rows[tool_id], uncovered, strict=True)
        ]
    return order + list(ranked[DIVERSIFY_DEPTH:])


def _relevances(index: RankIndex, requests: list[str], ids: list[str]) -> list[Mapping[str, float]]:
    """Relevance of ``ids`` to each request: by batched lookups when the index offers them."""
    relevance_rows = getattr(index, "relevance_rows", None)
    if callable(relevance_rows):
        rows = relevance_rows(requests, ids)
        if isinstance(rows, list) and all(isinstance(row, Mapping) for row in rows):
            return rows
    return [_relevance(index, request, ids) for request in requests]


def _relevance(index: RankIndex, request: str, ids: list[str]) -> Mapping[str, float]:
    """Relevance of ``ids`` to one request: by lookups when the index offers them."""
    relevance_of = getattr(index, "relevance_of", None)
    if callable(relevance_of):
        found = relevance_of(request, ids)
        if isinstance(found, Mapping):
            return found
    wanted = set(ids)
    scores = index.score_tools(request, within=wanted)
    return {tool_id: score for tool_id, score in scores.items() if tool_id in wanted}
