"""Ranking seam and the default BM25F ranker's index construction.

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
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from weakincentives.discovery import _freeze, _vectorised
from weakincentives.discovery._bm25 import BM25Index
from weakincentives.discovery._catalog import ToolCatalog, TreePath
from weakincentives.discovery._columns import Groups
from weakincentives.discovery._documents import FIELDS, collect
from weakincentives.discovery._freeze import Collection, FieldOccurrences
from weakincentives.discovery._postings import Postings
from weakincentives.errors import ConfigValidationError

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

    def __post_init__(self) -> None:
        for name in FIELDS:
            _check_number(FieldWeights, name, getattr(self, name), maximum=math.inf)
        unknown = sorted(set(self.length_damping) - set(FIELDS))
        if unknown:
            raise ConfigValidationError(
                f"FieldWeights.length_damping names no field {', '.join(map(repr, unknown))}; "
                f"the fields are {', '.join(FIELDS)}",
                config_type=FieldWeights,
                field_name="length_damping",
                value=dict(self.length_damping),
            )
        for name, damping in self.length_damping.items():
            _check_number(FieldWeights, f"length_damping[{name!r}]", damping, maximum=1.0)

    def weight(self, field_name: str) -> float:
        """Return the weight of ``field_name``."""
        return float(getattr(self, field_name))


def _check_number(owner: type, name: str, value: object, *, maximum: float) -> None:
    """Refuse a setting that is not a finite number between 0 and ``maximum``."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not 0 <= value <= maximum
        or math.isinf(value)
    ):
        bound = "a finite number >= 0" if maximum == math.inf else f"a number from 0 to {maximum:g}"
        raise ConfigValidationError(
            f"{owner.__name__}.{name} must be {bound}, got {value!r}",
            config_type=owner,
            field_name=name,
            value=value,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class BM25Ranker:
    """BM25F over tool and category documents, with evidence shared between siblings.

    A tool's relevance mixes its own BM25F score with the score of the
    category directly holding it (whose document pools the names and
    summaries of all its tools), because endpoints of one API are usually
    wanted together and one endpoint's terse summary is explained by its
    siblings. How much a category lends is measured from the catalogue when
    the index is built: a category holding a large share of the catalogue
    says little about any one of its tools, so its weight is
    ``sibling_weight * (1 - ln(size) / ln(catalogue size))`` (full for a
    category of one tool, zero for one holding everything). Each part is
    divided by the best score any document could reach for the query, then
    mixed as ``(own + w * category) / (1 + w)``, so the result is in
    ``(0, 1]`` and does not depend on which other tools matched. A query whose
    terms equal a tool's name terms exactly gives that tool 1.0.
    """

    weights: FieldWeights = field(default_factory=FieldWeights)
    k1: float = 1.2
    """Term-frequency saturation: higher lets repeated terms count for longer."""
    sibling_weight: float = 1.0
    """Weight of a fully specific category's score relative to the tool's own."""
    adaptive_siblings: bool = True
    """Scale each category's weight by how specific it is (see the class docstring)."""
    sibling_limit: int | None = 16
    """Only the best-scoring categories lend evidence (None: all); bounds the work per query."""
    prune_above: int = 4096
    """Queries touching more postings than this use exact top-k pruning when a caller
    asks only for the best few results; smaller ones are scored exhaustively."""
    vectorised: bool | None = None
    """Build and score with numpy: None uses it when it can be imported. The results
    are identical either way; numpy is much faster on large catalogues."""

    def __post_init__(self) -> None:
        _check_number(BM25Ranker, "k1", self.k1, maximum=math.inf)
        _check_number(BM25Ranker, "sibling_weight", self.sibling_weight, maximum=math.inf)
        for name, value, least in (
            ("sibling_limit", self.sibling_limit, 1),
            ("prune_above", self.prune_above, 0),
        ):
            if value is None and name == "sibling_limit":
                continue
            if not isinstance(value, int) or isinstance(value, bool) or value < least:
                raise ConfigValidationError(
                    f"BM25Ranker.{name} must be an integer >= {least}"
                    + (" or None" if name == "sibling_limit" else "")
                    + f", got {value!r}",
                    config_type=BM25Ranker,
                    field_name=name,
                    value=value,
                )

    def index(self, catalog: ToolCatalog) -> BM25Index:
        """Build the inverted indexes for ``catalog``'s tools and categories."""
        tools = catalog.tools
        node_list = tuple(catalog.nodes.values())
        node_at = {node.path: k for k, node in enumerate(node_list)}
        members = [catalog.tools_at(node.path) for node in node_list]
        lend = [self._lend_weight(len(group), len(tools)) for group in members]
        tool_lend = [lend[node_at[tool.path]] if tool.path in node_at else 0.0 for tool in tools]
        vectorised = _vectorised.available() if self.vectorised is None else self.vectorised
        if vectorised and not _vectorised.available():
            raise ConfigValidationError(
                "BM25Ranker(vectorised=True) needs numpy, which cannot be imported here; "
                "install numpy or leave vectorised=None to use it only when present",
                config_type=BM25Ranker,
                field_name="vectorised",
                value=True,
            )
        found = collect(catalog, members, vectorised=vectorised)
        freeze = _vectorised.freeze if vectorised else _freeze.freeze

        def postings(
            fields: Sequence[FieldOccurrences],
            size: int,
            factors: Sequence[float] | None = None,
            *,
            presence: bool = False,
        ) -> Postings:
            frozen = freeze(
                Collection(
                    fields=fields,
                    size=size,
                    terms=found.terms,
                    k1=self.k1,
                    factors=factors,
                    presence=presence,
                )
            )
            return Postings(
                ids=frozen.ids,
                impacts=frozen.impacts,
                spans=frozen.spans,
                ceiling=frozen.ceiling,
                peak=frozen.peak,
                size=size,
                prune_above=self.prune_above,
                vectorised=vectorised,
            )

        stops = FieldOccurrences(weight=1.0, damping=0.0, terms=found.stops[0], docs=found.stops[1])
        factors = [1.0 / (1.0 + lent) for lent in tool_lend]
        return BM25Index(
            catalog_fingerprint=catalog.fingerprint,
            tool_ids=tuple(tool.tool_id for tool in tools),
            node_paths=tuple(node.path for node in node_list),
            tools=postings(self._fields(found.tools), len(tools), factors),
            nodes=postings(self._fields(found.nodes), len(node_list)),
            stops=postings([stops], len(tools), presence=True),
            shared=frozenset(p for p, tool in enumerate(tools) if len(set(tool.paths)) > 1),
            members=Groups.of(members),
            holders=Groups.of(found.holders),
            positions={tool.tool_id: p for p, tool in enumerate(tools)},
            lend=array("d", lend),
            tool_lend=array("d", tool_lend),
            exact=found.exact,
            sibling_limit=self.sibling_limit,
        )

    def _fields(
        self, occurrences: Mapping[str, tuple[array[int], array[int]]]
    ) -> list[FieldOccurrences]:
        weights = self.weights
        return [
            FieldOccurrences(
                weight=weights.weight(name),
                damping=weights.length_damping.get(name, 0.75),
                terms=occurrences[name][0],
                docs=occurrences[name][1],
            )
            for name in FIELDS
        ]

    def _lend_weight(self, size: int, total: int) -> float:
        if not self.adaptive_siblings:
            return self.sibling_weight
        if size == 0 or total <= 1:
            return 0.0
        return self.sibling_weight * max(0.0, 1.0 - math.log(size) / math.log(total))
