"""An embedding ranker behind the ranking seam (needs numpy; the model is pluggable).

:class:`EmbeddingRanker` embeds every tool's text (name, category path,
summary) and every category's once, keeps the unit vectors in one float32
matrix per collection, and scores a query by cosine similarity: one
matrix-vector product. It is meant to be fused with the lexical ranker
(:class:`~weakincentives.discovery.FusedRanker`), where it closes vocabulary
gaps ("price of Bitcoin" for a tool described as "financial updates") that no
word-matching ranker can.

The model sits behind the small :class:`Embedder` protocol.
:class:`E5Embedder` (the ``weakincentives[embeddings]`` extra) runs a
4-bit multilingual-e5-small shipped inside its package, so nothing is
downloaded at run time; :class:`HashingEmbedder` is a dependency-light
stand-in (hashed words) for tests and for wiring things up.

A query that asks for several things ("find the agent's details. Also quote
disability cover") embeds to one point between its requests, close to none of
them. With ``per_request`` (the default) the index also embeds each request,
split the way diversification splits them (sentences, and clauses joined by
"also", "then", ...), and a tool's cosine is its best over the query and its
requests: a tool that serves one request well is not outranked by tools that
are vaguely near all of them.

A tool's name is often a brand or an identifier (``ABCmouse``, ``getOrderById``)
that means little to a language model and pulls its text away from what the
tool does. With ``summary_view`` (the default) each summary is also embedded on
its own, and a tool's cosine is the better of its two texts.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from weakincentives.discovery import _vectorised
from weakincentives.discovery._catalog import CatalogNode, CatalogTool, ToolCatalog, TreePath
from weakincentives.discovery._diversify import requests_of
from weakincentives.discovery._text import tokenize
from weakincentives.errors import ConfigValidationError

if TYPE_CHECKING:
    from types import ModuleType

__all__ = ["Embedder", "EmbeddingIndex", "EmbeddingRanker", "HashingEmbedder"]

type Matrix = Any
"""A two-dimensional numpy float32 array, one unit-length row per text."""


class Embedder(Protocol):
    """Turns texts into vectors whose dot products measure similarity."""

    def embed_documents(self, texts: Sequence[str]) -> Matrix:
        """One row per text (a ``len(texts) x dim`` array); rows need not be normalised."""
        ...

    def embed_query(self, text: str) -> Matrix:
        """The vector of a search query (models may embed queries differently)."""
        ...


def _numpy() -> ModuleType:
    numpy = _vectorised.numpy_module()
    if numpy is None:
        raise ConfigValidationError(
            "embedding ranking needs numpy; install weakincentives[embeddings]",
            config_type=EmbeddingRanker,
        )
    return numpy


@dataclass(frozen=True, slots=True, kw_only=True)
class HashingEmbedder:
    """Bag of hashed index terms: deterministic, instant, and only lexical.

    Each term of :func:`~weakincentives.discovery.tokenize` adds one to a
    dimension chosen by a stable hash. It captures no meaning beyond shared
    words; use it in tests or to wire up a pipeline before a real model.
    """

    dimensions: int = 256

    def embed_documents(self, texts: Sequence[str]) -> Matrix:
        """Hashed term counts, one row per text."""
        np = _numpy()
        rows = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            for term in tokenize(text):
                digest = hashlib.blake2b(term.encode(), digest_size=8).digest()
                rows[row, int.from_bytes(digest, "little") % self.dimensions] += 1.0
        return rows

    def embed_query(self, text: str) -> Matrix:
        """The same as a document: this model does not tell them apart."""
        return self.embed_documents([text])[0]


def tool_text(tool: CatalogTool, *, shared: int = 0) -> str:
    """What an embedder reads for a tool: its name, its category path and its summary.

    The first ``shared`` components of the path are left out: a root every
    tool of the catalogue sits under (``MetaTool``, ``Company tools``) says
    nothing about any one of them and only pulls every text the same way.
    """
    parts = (tool.name, " / ".join(tool.path[shared:]), tool.summary)
    return ". ".join(part.strip() for part in parts if part.strip())


def shared_depth(paths: Sequence[TreePath]) -> int:
    """How many leading path components every one of ``paths`` has in common."""
    if not paths:
        return 0
    depth = min(len(path) for path in paths)
    first = paths[0]
    for path in paths[1:]:
        depth = next((i for i in range(depth) if path[i] != first[i]), depth)
    return depth


def node_text(node: CatalogNode) -> str:
    """What an embedder reads for a category: its path and its summary."""
    return f"{' / '.join(node.path)}. {node.summary}".strip()


@dataclass(frozen=True, slots=True, kw_only=True)
class EmbeddingRanker:
    """Ranks by cosine similarity between a query and each tool's (or category's) text.

    Relevance is the cosine mapped onto ``(0, 1]`` as ``(1 + cos) / 2``; a
    tool whose cosine is below ``min_similarity`` does not match (embeddings
    put every text somewhere, so without a floor every tool would).
    """

    # A lambda because _default_embedder is defined below this class.
    embedder: Embedder = field(default_factory=lambda: _default_embedder())  # noqa: PLW0108
    """The model; by default :class:`E5Embedder` (needs ``weakincentives[embeddings]``)."""
    min_similarity: float = 0.0
    batch: int = 64
    """Texts per call to ``embed_documents`` while indexing."""
    per_request: bool = True
    """Embed each request of a query that asks for several things (see the module)."""
    summary_view: bool = True
    """Also embed each tool's summary on its own; a tool scores its better cosine."""
    recent_queries: int = 256
    """Query vectors each index keeps, so a text searched again is not embedded again (0: none)."""

    def index(self, catalog: ToolCatalog) -> EmbeddingIndex:
        """Embed every tool and category of ``catalog`` (the slow part: once per catalogue)."""
        for name, value, least in (
            ("batch", self.batch, 1),
            ("recent_queries", self.recent_queries, 0),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ConfigValidationError(
                    f"EmbeddingRanker.{name} must be an integer >= {least} (got {value!r})",
                    config_type=EmbeddingRanker,
                    field_name=name,
                    value=value,
                )
        shared = shared_depth([tool.path for tool in catalog.tools])
        tools = self._matrix([tool_text(tool, shared=shared) for tool in catalog.tools])
        summaries = self._summaries(catalog, tools) if self.summary_view else None
        nodes = self._matrix([node_text(node) for node in catalog.nodes.values()])
        return EmbeddingIndex(
            embedder=self.embedder,
            tool_ids=tuple(tool.tool_id for tool in catalog.tools),
            node_paths=tuple(catalog.nodes),
            tools=tools,
            summaries=summaries,
            nodes=nodes,
            min_similarity=self.min_similarity,
            per_request=self.per_request,
            recent_queries=self.recent_queries,
        )

    def _summaries(self, catalog: ToolCatalog, tools: Matrix) -> Matrix:
        """Each tool's summary embedded alone (its full text's row when it has none)."""
        summaries = tools.copy()
        described = [row for row, tool in enumerate(catalog.tools) if tool.summary.strip()]
        if described:
            texts = [catalog.tools[row].summary.strip() for row in described]
            summaries[described] = self._matrix(texts)
        return summaries

    def _matrix(self, texts: Sequence[str]) -> Matrix:
        np = _numpy()
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        parts = [
            np.asarray(self.embedder.embed_documents(texts[i : i + self.batch]), dtype=np.float32)
            for i in range(0, len(texts), self.batch)
        ]
        return _unit(np.vstack(parts))


@dataclass(frozen=True, slots=True, kw_only=True)
class EmbeddingIndex:
    """Unit vectors of one catalogue's tools and categories, scored by a matrix product."""

    embedder: Embedder
    tool_ids: tuple[str, ...]
    node_paths: tuple[TreePath, ...]
    tools: Matrix
    nodes: Matrix
    min_similarity: float
    summaries: Matrix | None = None
    """Each tool's summary embedded alone, row for row with ``tools`` (None: not used)."""
    per_request: bool = True
    """Score a multi-request query by its best-matching request (see the module)."""
    recent_queries: int = 256
    """How many query vectors to keep (diversification scores each request again)."""
    _vectors: dict[str, Matrix] = field(default_factory=dict, repr=False, compare=False)

    def score_tools(
        self, query: str, *, top: int | None = None, within: Container[str] | None = None
    ) -> Mapping[str, float]:
        """Relevance by tool id of the tools similar to ``query`` (best ``top`` when given)."""
        views = (self.tools,) if self.summaries is None else (self.tools, self.summaries)
        return self._score(query, views, self.tool_ids, top, within)

    def score_nodes(
        self, query: str, *, top: int | None = None, within: Container[TreePath] | None = None
    ) -> Mapping[TreePath, float]:
        """Relevance by path of the categories similar to ``query``."""
        return self._score(query, (self.nodes,), self.node_paths, top, within)

    def _score[K](
        self,
        query: str,
        views: tuple[Matrix, ...],
        keys: tuple[K, ...],
        top: int | None,
        within: Container[K] | None,
    ) -> dict[K, float]:
        np = _numpy()
        if not keys or not query.strip():
            return {}
        texts = [query]
        if self.per_request:
            requests = requests_of(query)
            texts += requests if len(requests) > 1 else []
        vectors = np.stack([self._vector(text) for text in texts]).T
        cosines = (views[0] @ vectors).max(axis=1)
        for view in views[1:]:
            cosines = np.maximum(cosines, (view @ vectors).max(axis=1))
        order = np.argsort(-cosines, kind="stable")
        found: dict[K, float] = {}
        for position in order.tolist():
            cosine = float(cosines[position])
            if cosine < self.min_similarity or (top is not None and len(found) >= top):
                break
            key = keys[position]
            if within is None or key in within:
                found[key] = max((1.0 + min(cosine, 1.0)) / 2.0, math.ulp(0.0))
        return found

    def clear_query_cache(self) -> None:
        """Forget the recent query vectors (the next search of any text embeds it again)."""
        self._vectors.clear()

    def _vector(self, text: str) -> Matrix:
        """The unit query vector of ``text``, from the model or the recent ones."""
        keep = self.recent_queries > 0
        vector = self._vectors.get(text) if keep else None
        if vector is None:
            np = _numpy()
            row = np.asarray(self.embedder.embed_query(text), dtype=np.float32)[None, :]
            vector = _unit(row)[0]
            if keep:
                if len(self._vectors) >= self.recent_queries:
                    self._vectors.clear()
                self._vectors[text] = vector
        return vector


def _unit(rows: Matrix) -> Matrix:
    np = _numpy()
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (rows / norms).astype(np.float32)


def _default_embedder() -> Embedder:
    from weakincentives.discovery._e5 import E5Embedder  # noqa: PLC0415 - optional extra

    return E5Embedder()
