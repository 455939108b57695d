"""A prompt section that exposes a tool catalogue through the discovery protocol.

Instead of thousands of tool schemas, the model sees this section's text and five
ordinary tools (``list``, ``search_tool_by_category``, ``search_nodes``,
``expand_tool``, ``call_tool``). Catalogue entries built from weakincentives tools
(``ToolCatalog.from_tools``) run through the shared execution path, with a
``ToolContext`` and a ``ToolInvoked`` event like any other tool.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from weakincentives.discovery._catalog import CatalogTool
from weakincentives.discovery._deferred import deferred_tools
from weakincentives.discovery._errors import DiscoveryError, DiscoveryFailure
from weakincentives.discovery._executor import CallOutcome, ToolExecutor
from weakincentives.discovery._requests import MAX_LIMIT
from weakincentives.discovery._responses import ListResponse
from weakincentives.discovery._service import ToolDiscovery
from weakincentives.prompt import (
    DeferredTools,
    EmptyParams,
    MarkdownSection,
    Tool,
    ToolContext,
    ToolResult,
)
from weakincentives.runtime import ToolCall, execute_tool_call
from weakincentives.serde import JSONValue, dump

__all__ = [
    "CallToolParams",
    "ExpandToolParams",
    "ListParams",
    "SearchNodesParams",
    "SearchToolsParams",
    "ToolDiscoverySection",
]

_RULES = """
This prompt can reach a catalogue of {count} that are not listed as functions.
Work with it through the discovery tools:

1. Never assume a tool exists: find it with `list` or a search first.
2. Prefer navigating: `list` a category path to see what it holds before searching.
3. When no category fits, use the escape hatch: `search_nodes` finds categories,
   `search_tool_by_category` finds tools (an empty category path searches everything).
4. Always `expand_tool` before `call_tool`, and build the arguments from the
   `args_schema` it returns.
5. When an operation fails, follow its `hints` and `next_action`.

Top-level categories: {roots}.
"""

_NATIVE_RULE = """
When a search loads the tools it finds for you (your provider's own tool search),
call them directly by name with arguments that follow their schema; you then need
neither `expand_tool` nor `call_tool`.
"""

MAX_DEFERRED_TOOLS = 10_000
"""The most tools a section offers for native deferred loading: Anthropic documents
10,000 tools as the tool search catalogue's limit. A larger catalogue keeps the
discovery tools on every provider."""


def _limit(default: int, description: str) -> Any:
    """A page-size field whose schema bounds are the ones ``check_limit`` enforces."""
    return field(default=default, metadata={"description": description, "ge": 1, "le": MAX_LIMIT})


def _cursor() -> Any:
    """The field that continues a listing or a search where its last page ended."""
    return field(default=None, metadata={"description": "next_cursor from the previous page"})


@dataclass(frozen=True, slots=True)
class ListParams:
    """Arguments of ``list``."""

    path: list[str] = field(
        default_factory=list,
        metadata={"description": "Category path to list, e.g. ['Storage']; [] is the root"},
    )
    tags: list[str] = field(
        default_factory=list, metadata={"description": "Only tools with all of these tags"}
    )
    query: str | None = field(
        default=None, metadata={"description": "Optional text to filter and rank by"}
    )
    limit: int = _limit(10, "Items per page")
    cursor: str | None = _cursor()


@dataclass(frozen=True, slots=True)
class SearchToolsParams:
    """Arguments of ``search_tool_by_category``."""

    query: str = field(metadata={"description": "What the tool should do, in plain words"})
    category_path: list[str] = field(
        default_factory=list, metadata={"description": "Category to search in; [] for all"}
    )
    limit: int = _limit(5, "Results per page")
    cursor: str | None = _cursor()


@dataclass(frozen=True, slots=True)
class SearchNodesParams:
    """Arguments of ``search_nodes``."""

    query: str = field(metadata={"description": "The capability you are looking for"})
    limit: int = _limit(5, "Results")


@dataclass(frozen=True, slots=True)
class ExpandToolParams:
    """Arguments of ``expand_tool``."""

    tool_id: str = field(metadata={"description": "A tool_id from a listing or a search"})


@dataclass(frozen=True, slots=True)
class CallToolParams:
    """Arguments of ``call_tool``."""

    tool_id: str = field(metadata={"description": "The expanded tool to run"})
    arguments: dict[str, JSONValue] = field(
        default_factory=dict,
        metadata={"description": "Arguments that follow the tool's args_schema"},
    )


class ToolDiscoverySection(MarkdownSection[EmptyParams]):
    """Offers a catalogue to the model through five discovery tools.

    ``discovery`` is the service to expose; build it with ``require_expansion=True``
    to enforce "expand before calling". During an evaluation, its audit events go to
    the evaluation's bus and catalogue tools built from weakincentives ``Tool``s run
    through the shared execution path.

    The section also offers the catalogue for native deferred loading
    (:meth:`deferred_tools`): providers with their own tool search declare the tools
    the caller may call deferred and leave these five out; others keep them. A service
    that requires expansion, or a catalogue of more than ``MAX_DEFERRED_TOOLS``
    callable tools, is offered through the five tools only.
    """

    def __init__(
        self,
        discovery: ToolDiscovery,
        *,
        key: str = "tool_discovery",
        title: str = "Tool Discovery",
    ) -> None:
        self._discovery = discovery
        # Only what the caller may see: a count or a category name would otherwise
        # reveal tools the access policy hides.
        overview = discovery.overview()
        roots = ", ".join(node.name for node in overview.categories) or "none"
        template = _RULES.format(
            count=_count(overview.tool_count, "tool"), roots=roots.replace("$", "$$")
        )
        tools = self._build_tools()
        self._deferred = self._offer(tools)
        if self._deferred is not None:
            template += _NATIVE_RULE
        super().__init__(title=title, key=key, template=template, tools=tools)

    @property
    def discovery(self) -> ToolDiscovery:
        """The service behind the tools."""
        return self._discovery

    def deferred_tools(self) -> DeferredTools | None:
        """The catalogue's callable tools for providers that load tools on demand natively."""
        return self._deferred

    def _offer(self, tools: list[Tool[Any, Any]]) -> DeferredTools | None:
        discovery = self._discovery
        if discovery.require_expansion:
            return None  # a native search loads schemas without an expansion step
        callable_tools = discovery.callable_tools()
        if not callable_tools or len(callable_tools) > MAX_DEFERRED_TOOLS:
            return None
        by_name = {tool.name: tool for tool in tools}
        return deferred_tools(
            discovery.catalog,
            callable_tools,
            search=by_name["search_tool_by_category"],
            call=by_name["call_tool"],
            replaces=tuple(by_name),
        )

    def _bound(self, context: ToolContext) -> ToolDiscovery:
        scope = context.scope
        return self._discovery.bind(
            events=scope.event_bus.publish,
            executor=_ContextExecutor(context=context, fallback=self._discovery.executor),
            clock=scope.clock,
            new_id=scope.new_id,
        )

    def _build_tools(self) -> list[Tool[Any, Any]]:
        # Async handlers: the operations are quick and pure, and call_tool awaits the
        # tool it runs, so nothing here needs a worker thread.
        async def list_catalogue(params: ListParams, *, context: ToolContext) -> ToolResult[object]:
            return _answer(
                lambda: self._bound(context).list(
                    path=tuple(params.path),
                    tags=tuple(params.tags),
                    query=params.query,
                    limit=params.limit,
                    cursor=params.cursor,
                ),
                _listed,
            )

        async def search_tools(
            params: SearchToolsParams, *, context: ToolContext
        ) -> ToolResult[object]:
            return _answer(
                lambda: self._bound(context).search_tool_by_category(
                    params.query, tuple(params.category_path), params.limit, params.cursor
                ),
                lambda found: f"{_count(len(found.results), 'matching tool')}.",
            )

        async def search_nodes(
            params: SearchNodesParams, *, context: ToolContext
        ) -> ToolResult[object]:
            return _answer(
                lambda: self._bound(context).search_nodes(params.query, params.limit),
                lambda found: f"{_count(len(found.results), 'matching category')}.",
            )

        async def expand_tool(
            params: ExpandToolParams, *, context: ToolContext
        ) -> ToolResult[object]:
            return _answer(
                lambda: self._bound(context).expand_tool(params.tool_id),
                lambda tool: f"Schema of {tool.tool_id}; call it with call_tool.",
            )

        async def call_tool(params: CallToolParams, *, context: ToolContext) -> ToolResult[object]:
            try:
                response = await self._bound(context).call_tool_async(
                    params.tool_id, params.arguments
                )
            except DiscoveryError as error:
                return _failure(error)
            return ToolResult(message=response.message, value=response, success=response.success)

        return [
            Tool(
                name="list",
                description="List the categories and tools under a category path.",
                handler=list_catalogue,
            ),
            Tool(
                name="search_tool_by_category",
                description="Search tools by what they do, within a category or everywhere.",
                handler=search_tools,
            ),
            Tool(
                name="search_nodes",
                description="Find categories for a capability when you do not know where to look.",
                handler=search_nodes,
            ),
            Tool(
                name="expand_tool",
                description="Get a tool's full argument schema; required before call_tool.",
                handler=expand_tool,
            ),
            Tool(
                name="call_tool",
                description="Run an expanded catalogue tool with arguments matching its schema.",
                handler=call_tool,
            ),
        ]


def _answer[R](operation: Callable[[], R], describe: Callable[[R], str]) -> ToolResult[object]:
    try:
        response = operation()
    except DiscoveryError as error:
        return _failure(error)
    return ToolResult(message=describe(response), value=response)


def _listed(listing: ListResponse) -> str:
    return f"{_count(len(listing.nodes), 'category')} and {_count(len(listing.tools), 'tool')}."


def _count(number: int, noun: str) -> str:
    """``1 tool``, ``2 tools``, ``1 category``, ``0 categories``."""
    if number == 1:
        return f"1 {noun}"
    return f"{number} {noun[:-1]}ies" if noun.endswith("y") else f"{number} {noun}s"


def _failure(error: DiscoveryError) -> ToolResult[object]:
    failure: DiscoveryFailure = error.to_failure()
    return ToolResult(message=f"{error.code}: {error.message}", value=failure, success=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class _ContextExecutor:
    """Runs catalogue entries that wrap weakincentives tools inside the current evaluation.

    A nested call runs under its handler's scope, whole: the evaluation's bus, session,
    render, accumulator, clock, id source, executor and extras. Its id is
    ``<outer call id>/<an id from the id source>``, so observers see where it ran; its
    parent is the call that ran it.
    """

    context: ToolContext
    fallback: ToolExecutor | None

    async def execute(self, tool: CatalogTool, arguments: Mapping[str, JSONValue]) -> CallOutcome:
        handle = tool.handle
        if not isinstance(handle, Tool):
            if self.fallback is None:
                return CallOutcome(
                    success=False, message=f"no implementation is available for {tool.tool_id!r}"
                )
            return await self.fallback.execute(tool, arguments)
        scope = self.context.scope
        outer = self.context.invocation.invocation_id
        call = ToolCall(
            call_id=f"{outer}/{scope.new_id()}",
            name=handle.name,
            arguments=dict(arguments),
            parent_message_id=outer,
        )
        execution = await execute_tool_call(call, scope, tools=(handle,))
        result = execution.result
        value = None if result.value is None else dump(result.value, exclude_none=True)
        return CallOutcome(success=result.success, message=result.message, value=value)
