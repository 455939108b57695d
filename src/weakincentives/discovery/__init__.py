"""Tool discovery for large catalogues: navigate, search, expand, then call.

Instead of showing a model every tool schema up front, a
:class:`ToolDiscovery` service lets it list categories, search tools by
category or free text, expand one tool to its full argument schema and call
it with validated arguments. Every step is published as an audit event, and
every failure carries a protocol error code, hints and a next action.
"""

from __future__ import annotations

from weakincentives._exports import publish
from weakincentives.discovery._access import AccessPolicy, IdAccessPolicy
from weakincentives.discovery._catalog import (
    CatalogNode,
    CatalogTool,
    ToolCatalog,
)
from weakincentives.discovery._catalog import (
    TreePath as TreePath,
)
from weakincentives.discovery._e5 import E5Embedder
from weakincentives.discovery._embedding import Embedder, EmbeddingRanker, HashingEmbedder
from weakincentives.discovery._errors import (
    DiscoveryError,
)
from weakincentives.discovery._errors import (
    DiscoveryFailure as DiscoveryFailure,
)
from weakincentives.discovery._errors import (
    Hint as Hint,
)
from weakincentives.discovery._events import (
    DiscoveryCalled,
    DiscoveryExpanded,
    DiscoveryFailed,
    DiscoverySearched,
    audit_chain,
)
from weakincentives.discovery._executor import (
    CallableExecutor,
    CallOutcome,
    ToolExecutor,
    blocking_executor,
)
from weakincentives.discovery._fusion import FusedRanker
from weakincentives.discovery._index_file import load_catalog_index, save_index
from weakincentives.discovery._ranking import BM25Ranker
from weakincentives.discovery._responses import (
    CallResponse as CallResponse,
)
from weakincentives.discovery._responses import (
    CatalogOverview as CatalogOverview,
)
from weakincentives.discovery._responses import (
    ExpandedTool as ExpandedTool,
)
from weakincentives.discovery._responses import (
    ListResponse as ListResponse,
)
from weakincentives.discovery._responses import (
    NodeMatch as NodeMatch,
)
from weakincentives.discovery._responses import (
    NodePointer as NodePointer,
)
from weakincentives.discovery._responses import (
    SearchNodesResponse as SearchNodesResponse,
)
from weakincentives.discovery._responses import (
    SearchToolsResponse as SearchToolsResponse,
)
from weakincentives.discovery._responses import (
    ToolPointer as ToolPointer,
)
from weakincentives.discovery._section import (
    CallToolParams as CallToolParams,
)
from weakincentives.discovery._section import (
    ExpandToolParams as ExpandToolParams,
)
from weakincentives.discovery._section import (
    ListParams as ListParams,
)
from weakincentives.discovery._section import (
    SearchNodesParams as SearchNodesParams,
)
from weakincentives.discovery._section import (
    SearchToolsParams as SearchToolsParams,
)
from weakincentives.discovery._section import (
    ToolDiscoverySection,
)
from weakincentives.discovery._service import ToolDiscovery

__all__ = [
    "AccessPolicy",
    "BM25Ranker",
    "CallOutcome",
    "CallableExecutor",
    "CatalogNode",
    "CatalogTool",
    "DiscoveryCalled",
    "DiscoveryError",
    "DiscoveryExpanded",
    "DiscoveryFailed",
    "DiscoverySearched",
    "E5Embedder",
    "Embedder",
    "EmbeddingRanker",
    "FusedRanker",
    "HashingEmbedder",
    "IdAccessPolicy",
    "ToolCatalog",
    "ToolDiscovery",
    "ToolDiscoverySection",
    "ToolExecutor",
    "audit_chain",
    "blocking_executor",
    "load_catalog_index",
    "save_index",
]

# Internal names (specs/PUBLIC_API.md): imported by other weakincentives packages,
# stored under this package's name, or raised from it. Not public, not in __all__.
_INTERNAL = (
    "CallResponse",
    "CallToolParams",
    "CatalogOverview",
    "DiscoveryFailure",
    "ExpandToolParams",
    "ExpandedTool",
    "Hint",
    "ListParams",
    "ListResponse",
    "NodeMatch",
    "NodePointer",
    "SearchNodesParams",
    "SearchNodesResponse",
    "SearchToolsParams",
    "SearchToolsResponse",
    "ToolPointer",
    "TreePath",
)

publish("weakincentives.discovery", globals(), (*__all__, *_INTERNAL))
