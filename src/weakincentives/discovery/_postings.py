"""Inverted lists with BM25F impacts, and exact top-k scoring over them.

One :class:`Postings` holds a whole collection (the tools, or the categories)
in two flat arrays: document positions (``I``) and impacts (``f``, already
multiplied by idf and by any per-document factor), with each term owning one
contiguous, position-sorted slice. Flat arrays keep a 100,000-tool index to a
few bytes per posting, build without a Python object per posting, and save or
load as raw bytes.
"""

from __future__ import annotations

import heapq
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from weakincentives.discovery import _vectorised

__all__ = ["Postings"]

_MARGIN = 1e-6
"""Slack for float rounding in running sums (impacts are stored as float32)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Postings:
    """A frozen inverted index: term -> (positions, impacts), plus per-term bounds."""

    ids: array[int]
    impacts: array[float]
    spans: Mapping[str, tuple[int, int]]
    """Each term's slice of ``ids`` and ``impacts``."""
    ceiling: Mapping[str, float]
    """Best contribution a term could make (idf * (k1 + 1)); normalises relevance."""
    peak: Mapping[str, float]
    """Largest contribution a term makes to any document; bounds pruning."""
    size: int
    """Number of documents."""
    prune_above: int
    """Below this many postings per query, reading them all beats pruning."""
    vectorised: bool = False
    """Score with numpy (same results, far fewer Python operations per posting)."""

    def ceiling_of(self, terms: Iterable[str]) -> float:
        """The normalising ceiling of a query: what a perfect document would score."""
        return sum(self.ceiling[term] for term in dict.fromkeys(terms) if term in self.spans)

    def postings_of(self, terms: Iterable[str]) -> int:
        """How many postings the known ``terms`` hold together (the work of a full scan)."""
        total = 0
        for term in dict.fromkeys(terms):
            span = self.spans.get(term)
            if span is not None:
                total += span[1] - span[0]
        return total

    def lists(self, term: str) -> tuple[memoryview, memoryview]:
        """Zero-copy views of one term's positions and impacts."""
        start, end = self.spans[term]
        return memoryview(self.ids)[start:end], memoryview(self.impacts)[start:end]

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
        scoring is MaxScore-style: terms are read strongest first while the
        ``top``-th best accepted document could still be beaten by a document
        not seen yet; the remaining terms then only complete the documents
        that can still reach the best ``top``. What is returned then includes
        the best ``top`` accepted documents, all with exact scores.
        """
        # Strongest terms first, in both modes, so sums are formed in the same order.
        peak = self.peak
        present = sorted(
            (term for term in dict.fromkeys(terms) if term in self.spans),
            key=lambda term: (-peak[term], term),
        )
        if self.vectorised:
            return _vectorised.top_scores(
                self.ids,
                self.impacts,
                [self.spans[term] for term in present],
                size=self.size,
                top=top,
                accept=accept,
                bonus=bonus,
            )
        scores: dict[int, float] = dict(bonus or {})
        if top is None or self.postings_of(present) <= self.prune_above:
            get = scores.get
            for term in present:
                ids, impacts = self.lists(term)
                for position, impact in zip(ids, impacts, strict=True):
                    scores[position] = get(position, 0.0) + impact
            return scores
        return _top_scores(self, present, scores=scores, top=top, accept=accept)

    def hits(self, terms: Iterable[str], positions: Sequence[int]) -> dict[str, dict[int, float]]:
        """For each known term, the impact it has on each of ``positions`` that holds it.

        One binary search per term and position; a caller sums a document's
        impacts over its terms in its own order (starting from 0.0), exactly as
        :meth:`score` does.
        """
        known = [term for term in dict.fromkeys(terms) if term in self.spans]
        if self.vectorised:
            found = _vectorised.hits(
                self.ids, self.impacts, [self.spans[term] for term in known], positions
            )
            return dict(zip(known, found, strict=True))
        result: dict[str, dict[int, float]] = {}
        for term in known:
            ids, impacts = self.lists(term)
            held: dict[int, float] = {}
            _add_found(ids, impacts, positions, held)
            result[term] = held
        return result


def _top_scores(
    postings: Postings,
    present: list[str],
    *,
    scores: dict[int, float],
    top: int,
    accept: Callable[[int], bool] | None,
) -> dict[int, float]:
    remaining = sum(postings.peak[term] for term in present) + _MARGIN
    value = scores.__getitem__
    leaders = heapq.nlargest(top, _accepted(scores, accept), key=value)
    theta = value(leaders[-1]) if len(leaders) == top else 0.0
    read = 0
    get = scores.get
    for term in present:
        if len(leaders) == top and theta > remaining:
            break
        ids, impacts = postings.lists(term)
        risen: list[int] = []
        rise = risen.append
        for position, impact in zip(ids, impacts, strict=True):
            total = get(position, 0.0) + impact
            scores[position] = total
            if total > theta:
                rise(position)
        remaining -= postings.peak[term]
        read += 1
        # The new leaders are among the old ones and the documents that rose above
        # the old threshold: nothing else can have passed them.
        leaders = heapq.nlargest(top, _accepted({*leaders, *risen}, accept), key=value)
        if len(leaders) == top:
            theta = value(leaders[-1])
    if read == len(present):
        return scores
    # Admission is closed: an unseen document can score at most ``remaining`` < theta.
    live = [p for p in _accepted(scores, accept) if scores[p] + remaining >= theta]
    for term in present[read:]:
        ids, impacts = postings.lists(term)
        _add_found(ids, impacts, live, scores)
        remaining -= postings.peak[term]
        theta = value(heapq.nlargest(top, live, key=value)[-1])
        live = [p for p in live if scores[p] + remaining >= theta]
    return {position: scores[position] for position in live}


def _accepted(positions: Iterable[int], accept: Callable[[int], bool] | None) -> Iterable[int]:
    if accept is None:
        return positions
    return [position for position in positions if accept(position)]


def _add_found(
    ids: memoryview, impacts: memoryview, positions: Sequence[int], scores: dict[int, float]
) -> None:
    """Add one term's impacts to ``positions``, by lookup when they are few."""
    size = len(ids)
    if len(positions) * 16 < size:
        for position in positions:
            index = bisect_left(ids, position)
            if index < size and ids[index] == position:
                scores[position] = scores.get(position, 0.0) + impacts[index]
        return
    wanted = set(positions)
    for position, impact in zip(ids, impacts, strict=True):
        if position in wanted:
            scores[position] = scores.get(position, 0.0) + impact
