"""A tool catalogue served over MCP: the five discovery operations as the server's tools.

Any MCP client (an IDE, an agent framework, another weakincentives process) then gets
progressive discovery instead of one flat ``tools/list``: it lists and searches the
catalogue, expands the one tool it chose and calls it, all through ``tools/call``.
The operations keep the names the discovery section uses (``list``,
``search_tool_by_category``, ``search_nodes``, ``expand_tool``, ``call_tool``), run on
the :class:`ToolDiscovery` given (its access policy, cursors and executor included),
declare an ``outputSchema`` and answer with ``structuredContent`` plus the same JSON
as text. Failures use MCP's ``isError``: a :class:`DiscoveryError` comes back with
its code, message, hints and next action; a tool that failed comes back with its
message.

A client that already knows a catalogue tool may also call it by its ``tool_id`` or
(when one visible tool has it) its name: the call goes through the same
``call_tool`` checks and comes back as the upstream server's own result, bounded.
Upstream resources and prompts in the catalogue are served as MCP resources and
prompts (see ``_serve_upstream.py``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp import types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from weakincentives.discovery import (
    CallResponse,
    CallToolParams,
    DiscoveryError,
    DiscoveryFailure,
    ExpandedTool,
    ExpandToolParams,
    ListParams,
    ListResponse,
    SearchNodesParams,
    SearchNodesResponse,
    SearchToolsParams,
    SearchToolsResponse,
    ToolDiscovery,
)
from weakincentives.errors import ParseError
from weakincentives.mcp._negotiate import PACKAGE_VERSION
from weakincentives.mcp._relay import relayed
from weakincentives.mcp._replies import direct_reply, operation_reply
from weakincentives.mcp._results import capturing
from weakincentives.mcp._serve_upstream import serve_upstream
from weakincentives.serde import JSONValue, dump, parse, schema

if TYPE_CHECKING:
    from weakincentives.mcp._toolbox import MCPToolbox

__all__ = ["DISCOVERY_TOOL_NAMES", "answer", "build_server", "output_schema"]

type DiscoverySource = ToolDiscovery | Callable[[], ToolDiscovery]
"""A fixed service, or a function returning the current one (for catalogues that change)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class _Operation:
    name: str
    title: str
    description: str
    params: type[Any]
    response: type[Any]
    run: Callable[[ToolDiscovery, Any], object]
    """A quick, pure operation, run on the server's loop; or, for ``call_tool``,
    a function returning the awaitable call."""
    read_only: bool = True


_OPERATIONS = (
    _Operation(
        name="list",
        title="List a category",
        description="List the categories and tools under a category path ([] is the root). "
        "Start here: navigate before searching.",
        params=ListParams,
        response=ListResponse,
        run=lambda service, p: service.list(
            path=tuple(p.path), tags=tuple(p.tags), query=p.query, limit=p.limit, cursor=p.cursor
        ),
    ),
    _Operation(
        name="search_tool_by_category",
        title="Search tools",
        description="Search tools by what they do, within a category path or everywhere ([]).",
        params=SearchToolsParams,
        response=SearchToolsResponse,
        run=lambda service, p: service.search_tool_by_category(
            p.query, tuple(p.category_path), p.limit, p.cursor
        ),
    ),
    _Operation(
        name="search_nodes",
        title="Search categories",
        description="Find categories for a capability when you do not know where to look.",
        params=SearchNodesParams,
        response=SearchNodesResponse,
        run=lambda service, p: service.search_nodes(p.query, p.limit),
    ),
    _Operation(
        name="expand_tool",
        title="Expand a tool",
        description="Get a tool's full argument schema, to build call_tool's arguments.",
        params=ExpandToolParams,
        response=ExpandedTool,
        run=lambda service, p: service.expand_tool(p.tool_id),
    ),
    _Operation(
        name="call_tool",
        title="Call a tool",
        description="Run a catalogue tool with arguments matching the args_schema from "
        "expand_tool (a server that requires expansion first answers NOT_EXPANDED).",
        params=CallToolParams,
        response=CallResponse,
        run=lambda service, p: service.call_tool_async(p.tool_id, p.arguments),
        read_only=False,
    ),
)
_BY_NAME = {operation.name: operation for operation in _OPERATIONS}

DISCOVERY_TOOL_NAMES = tuple(operation.name for operation in _OPERATIONS)
"""The names of the served tools, the same as the discovery section's."""


def build_server(
    discovery: DiscoverySource,
    *,
    name: str = "weakincentives",
    instructions: str | None = None,
    upstream: MCPToolbox | None = None,
) -> Server[Any]:
    """An MCP server (the SDK's low-level ``Server``) whose tools are the discovery operations.

    ``discovery`` is the service to expose, or a function returning the current one,
    which lets a catalogue built from upstream servers change while being served.
    Catalogue entries of upstream resources and prompts are served as MCP resources
    and prompts. With ``upstream`` (the toolbox the catalogue comes from), completions,
    resource subscriptions and ``logging/setLevel`` are passed on to the upstream
    servers too. Run it with ``server.run(...)`` over stdio or mount
    ``server.streamable_http_app()``; ``wink mcp serve`` does both.
    """
    current = discovery if callable(discovery) else (lambda: discovery)
    tools = [_definition(operation) for operation in _OPERATIONS]

    async def list_tools(
        ctx: object, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        if params is not None and params.cursor is not None:
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"invalid cursor {params.cursor[:80]!r}: this server lists its "
                f"{len(tools)} tools on one page, so no cursor is valid",
            )
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        with relayed(ctx, levels.minimum(ctx)):
            return await answer(current(), params.name, params.arguments)

    text = instructions if instructions is not None else _INSTRUCTIONS
    server: Server[Any] = Server(
        name,
        version=PACKAGE_VERSION,
        instructions=text,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    levels = serve_upstream(server, current, upstream)
    return server


async def answer(
    service: ToolDiscovery, tool: str, arguments: Mapping[str, Any] | None
) -> types.CallToolResult:
    """Run one served tool call against ``service``; every outcome is a result, never a raise."""
    operation = _BY_NAME.get(tool)
    if operation is None:
        return await _direct(service, tool, dict(arguments or {}))
    try:
        params = parse(operation.params, dict(arguments or {}))
    except ParseError as exc:
        return _error(f"invalid arguments for {tool}: {exc}", None)
    with capturing() as raw:
        try:
            response = operation.run(service, params)
            if isinstance(response, Awaitable):  # call_tool awaits the tool on this loop
                response = await response
        except DiscoveryError as error:
            return _error(_failure_text(error), dump(error.to_failure(), exclude_none=True))
    return operation_reply(response, raw.result)


async def _direct(
    service: ToolDiscovery, tool: str, arguments: dict[str, Any]
) -> types.CallToolResult:
    """A catalogue tool called by its id or name: the upstream's own result, bounded."""
    tool_id = _catalogue_id(service, tool)
    if tool_id is None:
        return _error(
            f"unknown tool {tool[:200]!r}; this server's tools are "
            f"{', '.join(DISCOVERY_TOOL_NAMES)}",
            None,
        )
    with capturing() as raw:
        try:
            response = await service.call_tool_async(tool_id, arguments)
        except DiscoveryError as error:
            return _error(_failure_text(error), dump(error.to_failure(), exclude_none=True))
    return direct_reply(response, raw.result)


def _catalogue_id(service: ToolDiscovery, tool: str) -> str | None:
    if service.can_see(tool):
        return tool
    named = [entry.tool_id for entry in service.catalog.tools if entry.name == tool]
    visible = [tool_id for tool_id in named if service.can_see(tool_id)]
    return visible[0] if len(visible) == 1 else None


_INSTRUCTIONS = (
    "This server offers a large tool catalogue through five discovery tools instead of "
    "listing every tool. Navigate with list (path [] is the root), or search with "
    "search_tool_by_category / search_nodes; call expand_tool to get a tool's argument "
    "schema, then call_tool with tool_id and arguments. When a call fails, follow its hints "
    "and next_action."
)


def output_schema(response: type[Any]) -> dict[str, JSONValue]:
    """The ``outputSchema`` of an operation: its response, or the failure of an ``isError``.

    Fields that are ``None`` are left out of served structured content, so the
    schema does not require them.
    """
    return {
        "type": "object",
        "anyOf": [
            _omittable(dict(schema(response, strict=False))),
            _omittable(dict(schema(DiscoveryFailure, strict=False))),
        ],
    }


def _omittable(node: JSONValue) -> JSONValue:
    """``node`` with nullable properties taken out of every ``required`` list."""
    if isinstance(node, list):
        return [_omittable(item) for item in node]
    if not isinstance(node, dict):
        return node
    copied = {key: _omittable(value) for key, value in node.items()}
    properties = copied.get("properties")
    required = copied.get("required")
    if isinstance(properties, dict) and isinstance(required, list):
        copied["required"] = [name for name in required if not _nullable(properties.get(str(name)))]
    return copied


def _nullable(node: JSONValue) -> bool:
    if not isinstance(node, dict):
        return False
    options = node.get("anyOf")
    return isinstance(options, list) and {"type": "null"} in options


def _definition(operation: _Operation) -> types.Tool:
    input_schema = dict(schema(operation.params, strict=False))
    input_schema.pop("description", None)
    return types.Tool(
        name=operation.name,
        title=operation.title,
        description=operation.description,
        input_schema=input_schema,
        output_schema=output_schema(operation.response),
        annotations=types.ToolAnnotations(
            title=operation.title,
            read_only_hint=operation.read_only,
            open_world_hint=not operation.read_only,
        ),
    )


def _failure_text(error: DiscoveryError) -> str:
    lines = [f"{error.code}: {error.message}"]
    if error.next_action:
        lines.append(f"next_action: {error.next_action}")
    for hint in error.hints:
        target = hint.tool_id if hint.tool_id is not None else list(hint.path)
        lines.append(f"hint ({hint.kind}): {target} {hint.summary}".rstrip())
    for violation in error.violations:
        lines.append(f"{violation.path}: {violation.message}")
    return "\n".join(lines)


def _error(text: str, payload: JSONValue) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=payload if isinstance(payload, dict) else None,
        is_error=True,
    )
