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
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from weakincentives.discovery import _vectorised
from weakincentives.discovery._catalog import CatalogNode, CatalogTool, ToolCatalog, TreePath
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


def tool_text(tool: CatalogTool) -> str:
    """What an embedder reads for a tool: its name, its category path and its summary."""
    return f"{tool.name}. {' / '.join(tool.path)}. {tool.summary}".strip()


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

    def index(self, catalog: ToolCatalog) -> EmbeddingIndex:
        """Embed every tool and category of ``catalog`` (the slow part: once per catalogue)."""
        tools = self._matrix([tool_text(tool) for tool in catalog.tools])
        nodes = self._matrix([node_text(node) for node in catalog.nodes.values()])
        return EmbeddingIndex(
            embedder=self.embedder,
            tool_ids=tuple(tool.tool_id for tool in catalog.tools),
            node_paths=tuple(catalog.nodes),
            tools=tools,
            nodes=nodes,
            min_similarity=self.min_similarity,
        )

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

    def score_tools(
        self, query: str, *, top: int | None = None, within: Container[str] | None = None
    ) -> Mapping[str, float]:
        """Relevance by tool id of the tools similar to ``query`` (best ``top`` when given)."""
        return self._score(query, self.tools, self.tool_ids, top, within)

    def score_nodes(
        self, query: str, *, top: int | None = None, within: Container[TreePath] | None = None
    ) -> Mapping[TreePath, float]:
        """Relevance by path of the categories similar to ``query``."""
        return self._score(query, self.nodes, self.node_paths, top, within)

    def _score[K](
        self,
        query: str,
        matrix: Matrix,
        keys: tuple[K, ...],
        top: int | None,
        within: Container[K] | None,
    ) -> dict[K, float]:
        np = _numpy()
        if not keys or not query.strip():
            return {}
        vector = _unit(np.asarray(self.embedder.embed_query(query), dtype=np.float32)[None, :])[0]
        cosines = matrix @ vector
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


def _unit(rows: Matrix) -> Matrix:
    np = _numpy()
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (rows / norms).astype(np.float32)


def _default_embedder() -> Embedder:
    from weakincentives.discovery._e5 import E5Embedder  # noqa: PLC0415 - optional extra

    return E5Embedder()
