"""Tool discovery for large catalogues: navigate, search, expand, then call.

Instead of showing a model every tool schema up front, a
:class:`ToolDiscovery` service lets it list categories, search tools by
category or free text, expand one tool to its full argument schema and call
it with validated arguments. Every step is published as an audit event, and
every failure carries a protocol error code, hints and a next action.
"""

from __future__ import annotations

from weakincentives._exports import publish
from weakincentives.discovery._access import AccessPolicy, AllowAll, IdAccessPolicy
from weakincentives.discovery._catalog import CatalogNode, CatalogTool, ToolCatalog, TreePath
from weakincentives.discovery._e5 import E5Embedder
from weakincentives.discovery._embedding import (
    Embedder,
    EmbeddingIndex,
    EmbeddingRanker,
    HashingEmbedder,
)
from weakincentives.discovery._errors import (
    DiscoveryError,
    DiscoveryFailure,
    ErrorCode,
    Hint,
    HintKind,
)
from weakincentives.discovery._events import (
    DiscoveryCalled,
    DiscoveryEvent,
    DiscoveryExpanded,
    DiscoveryFailed,
    DiscoveryOperation,
    DiscoverySearched,
    audit_chain,
)
from weakincentives.discovery._executor import (
    CallableExecutor,
    CallOutcome,
    ToolExecutor,
    ToolFunction,
    blocking_executor,
)
from weakincentives.discovery._fusion import FusedIndex, FusedRanker
from weakincentives.discovery._index_file import (
    CatalogIndex,
    load_catalog_index,
    load_index,
    save_index,
)
from weakincentives.discovery._ranking import BM25Index, BM25Ranker, FieldWeights, Ranker, RankIndex
from weakincentives.discovery._responses import (
    CallResponse,
    CatalogOverview,
    ExpandedTool,
    ListResponse,
    NodeMatch,
    NodePointer,
    SearchNodesResponse,
    SearchToolsResponse,
    ToolPointer,
)
from weakincentives.discovery._section import (
    CallToolParams,
    ExpandToolParams,
    ListParams,
    SearchNodesParams,
    SearchToolsParams,
    ToolDiscoverySection,
)
from weakincentives.discovery._service import ToolDiscovery

__all__ = [
    "AccessPolicy",
    "AllowAll",
    "BM25Index",
    "BM25Ranker",
    "CallOutcome",
    "CallResponse",
    "CallToolParams",
    "CallableExecutor",
    "CatalogIndex",
    "CatalogNode",
    "CatalogOverview",
    "CatalogTool",
    "DiscoveryCalled",
    "DiscoveryError",
    "DiscoveryEvent",
    "DiscoveryExpanded",
    "DiscoveryFailed",
    "DiscoveryFailure",
    "DiscoveryOperation",
    "DiscoverySearched",
    "E5Embedder",
    "Embedder",
    "EmbeddingIndex",
    "EmbeddingRanker",
    "ErrorCode",
    "ExpandToolParams",
    "ExpandedTool",
    "FieldWeights",
    "FusedIndex",
    "FusedRanker",
    "HashingEmbedder",
    "Hint",
    "HintKind",
    "IdAccessPolicy",
    "ListParams",
    "ListResponse",
    "NodeMatch",
    "NodePointer",
    "RankIndex",
    "Ranker",
    "SearchNodesParams",
    "SearchNodesResponse",
    "SearchToolsParams",
    "SearchToolsResponse",
    "ToolCatalog",
    "ToolDiscovery",
    "ToolDiscoverySection",
    "ToolExecutor",
    "ToolFunction",
    "ToolPointer",
    "TreePath",
    "audit_chain",
    "blocking_executor",
    "load_catalog_index",
    "load_index",
    "save_index",
]

publish("weakincentives.discovery", globals(), __all__)
