"""Reciprocal-rank fusion of several rankers behind the one ranking seam.

Scores from different rankers are not comparable (BM25F relevance is a
share of a perfect lexical match, a cosine is a cosine), but their orders
are. :class:`FusedRanker` asks each ranker for its best ``depth`` results and
gives every tool ``sum(weight / (k + rank))`` over the rankers that returned
it (reciprocal-rank fusion), divided by the best sum possible so relevance
stays in ``(0, 1]``. A tool the first ranker scores 1.0 (an exact name match
under BM25F) keeps 1.0, so naming a tool still finds it first.

With ``adaptive=True``, the other rankers weigh more when the query
has little lexical evidence in the catalogue: each of their weights is
multiplied by ``2 - coverage``, where coverage is the share of the query's
content terms some document of the first ranker contains (a word no tool uses
can only be matched by meaning). A first ranker without a ``coverage(query)``
method leaves the weights as given.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import dataclass, field
from typing import cast

from weakincentives.discovery._catalog import ToolCatalog, TreePath
from weakincentives.discovery._ranking import BM25Ranker, Ranker, RankIndex
from weakincentives.errors import ConfigValidationError

__all__ = ["DEFAULT_OTHER_WEIGHT", "FusedIndex", "FusedRanker"]

DEFAULT_OTHER_WEIGHT = 0.75
"""The default weight of every ranker after the first (the first weighs 1).

Chosen on the tuning halves of both shared benchmarks (specs/TOOL_DISCOVERY.md):
the only weight tried that keeps both at their goals; 0.5, 0.6 and 0.9 each
cost one of them.
"""


@dataclass(frozen=True, slots=True, kw_only=True)
class FusedRanker:
    """Builds one index per ranker and fuses their rankings (first ranker: lexical)."""

    rankers: Sequence[Ranker] = field(default_factory=lambda: (BM25Ranker(),))
    weights: Sequence[float] | None = None
    """Weight of each ranker's reciprocal ranks (None: 1 for the first, 0.75 for the others)."""
    k: int = 1
    """Rank offset: larger values flatten the difference between the first ranks."""
    depth: int = 100
    """How many of each ranker's best results take part (at least the caller's ``top``)."""
    adaptive: bool = False
    """Scale the other rankers' weights by ``2 - coverage`` of each query (see the module)."""

    def index(self, catalog: ToolCatalog) -> FusedIndex:
        """Index ``catalog`` with every ranker."""
        weights = (
            tuple(self.weights)
            if self.weights is not None
            else (1.0,) + (DEFAULT_OTHER_WEIGHT,) * (len(self.rankers) - 1)
        )
        if not self.rankers or len(weights) != len(self.rankers) or min(weights) <= 0:
            raise ConfigValidationError(
                "FusedRanker needs at least one ranker and one positive weight per ranker "
                f"(got {len(self.rankers)} rankers and weights {list(weights)})",
                config_type=FusedRanker,
                field_name="weights",
                value=self.weights,
            )
        return FusedIndex(
            indexes=tuple(ranker.index(catalog) for ranker in self.rankers),
            weights=weights,
            k=self.k,
            depth=self.depth,
            adaptive=self.adaptive,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class FusedIndex:
    """The fused view of several indexes of one catalogue."""

    indexes: tuple[RankIndex, ...]
    weights: tuple[float, ...]
    k: int
    depth: int
    adaptive: bool = False
    """Scale the weights after the first by ``2 - coverage`` of the query."""

    def score_tools(
        self, query: str, *, top: int | None = None, within: Container[str] | None = None
    ) -> Mapping[str, float]:
        """Fused relevance by tool id; exact name matches of the first ranker stay at 1.0."""
        rankings = [
            index.score_tools(query, top=self._depth(top), within=within) for index in self.indexes
        ]
        fused = self._fuse(rankings, top, self._weights(query))
        for tool_id, score in rankings[0].items():
            if score >= 1.0 and tool_id in fused:
                fused[tool_id] = 1.0
        return fused

    def score_nodes(
        self, query: str, *, top: int | None = None, within: Container[TreePath] | None = None
    ) -> Mapping[TreePath, float]:
        """Fused relevance by category path."""
        rankings = [
            index.score_nodes(query, top=self._depth(top), within=within) for index in self.indexes
        ]
        return self._fuse(rankings, top, self._weights(query))

    def _weights(self, query: str) -> tuple[float, ...]:
        """The weights for ``query``: as given, or adapted to its lexical coverage."""
        coverage = getattr(self.indexes[0], "coverage", None) if self.adaptive else None
        if not callable(coverage):
            return self.weights
        share = _share(cast("Callable[[str], object]", coverage)(query))
        scale = 2.0 - share
        return (self.weights[0], *(weight * scale for weight in self.weights[1:]))

    def _depth(self, top: int | None) -> int | None:
        return None if top is None else max(top, self.depth)

    def _fuse[K: (str, TreePath)](
        self, rankings: Sequence[Mapping[K, float]], top: int | None, weights: Sequence[float]
    ) -> dict[K, float]:
        best = sum(weight / (self.k + 1) for weight in weights)
        fused: dict[K, float] = {}
        for scores, weight in zip(rankings, weights, strict=True):
            order = sorted(scores, key=lambda key: (-scores[key], key))
            if top is None:
                order = order[: self.depth] if len(self.indexes) > 1 else order
            for rank, key in enumerate(order, start=1):
                fused[key] = fused.get(key, 0.0) + weight / (self.k + rank)
        return {key: min(value / best, 1.0) for key, value in fused.items()}


def _share(value: object) -> float:
    """A coverage reported by an index, as a share in ``[0, 1]`` (anything else counts as 1)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        return 1.0
    return min(1.0, max(0.0, float(value)))
