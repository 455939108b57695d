"""Response values of the discovery operations, shaped like the protocol's JSON."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from weakincentives.discovery._catalog import TreePath
from weakincentives.serde import JSONValue

__all__ = [
    "CallResponse",
    "CatalogOverview",
    "ExpandedTool",
    "ListResponse",
    "NodeMatch",
    "NodePointer",
    "SearchNodesResponse",
    "SearchToolsResponse",
    "ToolPointer",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolPointer:
    """The minimum a model needs to decide whether to expand a tool."""

    tool_id: str
    name: str
    path: TreePath
    """The tool's category path where it was found (DAG tools have several)."""
    summary: str
    tags: tuple[str, ...]
    confidence: float | None
    """Relevance to the query in [0, 1]; None when the listing had no query."""


@dataclass(frozen=True, slots=True, kw_only=True)
class NodePointer:
    """A child category in a listing."""

    name: str
    path: TreePath
    summary: str
    tags: tuple[str, ...]
    tool_count: int
    """Tools visible to the caller anywhere under this category."""


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeMatch:
    """A category returned by ``search_nodes``."""

    path: TreePath
    summary: str
    confidence: float
    """Relevance to the query in [0, 1]."""
    tool_count: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ListResponse:
    """Child categories and tools directly under ``path`` (nodes first, then tools)."""

    path: TreePath
    nodes: tuple[NodePointer, ...]
    tools: tuple[ToolPointer, ...]
    next_cursor: str | None = None
    """Pass back as ``cursor`` with the same request for the next page; None on the last."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchToolsResponse:
    """Tools under ``category_path`` ranked by relevance to the query."""

    category_path: TreePath
    results: tuple[ToolPointer, ...]
    next_cursor: str | None = None

    @property
    def loaded_tool_ids(self) -> tuple[str, ...]:
        """The ids found, in order: what a provider loading the catalogue natively loads."""
        return tuple(pointer.tool_id for pointer in self.results)


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchNodesResponse:
    """Categories ranked by relevance to the query."""

    results: tuple[NodeMatch, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class ExpandedTool:
    """The full callable schema of one tool."""

    tool_id: str
    name: str
    path: TreePath
    summary: str
    args_schema: Mapping[str, JSONValue] = field(hash=False)
    result_schema: Mapping[str, JSONValue] | None = field(default=None, hash=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class CallResponse:
    """The outcome of ``call_tool``."""

    tool_id: str
    success: bool
    message: str
    value: JSONValue = field(default=None, hash=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class CatalogOverview:
    """What one caller may see of a catalogue at a glance (used by section text)."""

    tool_count: int
    """Tools visible to the caller."""
    categories: tuple[NodePointer, ...]
    """Top-level categories holding at least one visible tool, in name order."""
