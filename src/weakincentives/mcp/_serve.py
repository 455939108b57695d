"""A tool catalogue served over MCP: the five discovery operations as the server's tools.

Any MCP client (an IDE, an agent framework, another weakincentives process) then gets
progressive discovery instead of one flat ``tools/list``: it lists and searches the
catalogue, expands the one tool it chose and calls it, all through
``tools/call``. The operations keep the names the discovery section uses (``list``,
``search_tool_by_category``, ``search_nodes``, ``expand_tool``, ``call_tool``), run on
the :class:`ToolDiscovery` given (its access policy, cursors and executor included),
and answer with ``structuredContent`` plus the same JSON as text. Failures use MCP's
``isError``: a :class:`DiscoveryError` comes back with its code, message, hints and
next action; a tool that failed comes back with its message.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mcp import types
from mcp.server.lowlevel import Server

from weakincentives.discovery import (
    CallResponse,
    CallToolParams,
    DiscoveryError,
    ExpandToolParams,
    ListParams,
    SearchNodesParams,
    SearchToolsParams,
    ToolDiscovery,
)
from weakincentives.errors import ParseError
from weakincentives.serde import JSONValue, dump, parse, schema

__all__ = ["DISCOVERY_TOOL_NAMES", "build_server"]

type DiscoverySource = ToolDiscovery | Callable[[], ToolDiscovery]
"""A fixed service, or a function returning the current one (for catalogues that change)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class _Operation:
    name: str
    title: str
    description: str
    params: type[Any]
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
        run=lambda service, p: service.list(
            path=tuple(p.path), tags=tuple(p.tags), query=p.query, limit=p.limit, cursor=p.cursor
        ),
    ),
    _Operation(
        name="search_tool_by_category",
        title="Search tools",
        description="Search tools by what they do, within a category path or everywhere ([]).",
        params=SearchToolsParams,
        run=lambda service, p: service.search_tool_by_category(
            p.query, tuple(p.category_path), p.limit, p.cursor
        ),
    ),
    _Operation(
        name="search_nodes",
        title="Search categories",
        description="Find categories for a capability when you do not know where to look.",
        params=SearchNodesParams,
        run=lambda service, p: service.search_nodes(p.query, p.limit),
    ),
    _Operation(
        name="expand_tool",
        title="Expand a tool",
        description="Get a tool's full argument schema; required before call_tool.",
        params=ExpandToolParams,
        run=lambda service, p: service.expand_tool(p.tool_id),
    ),
    _Operation(
        name="call_tool",
        title="Call a tool",
        description="Run an expanded catalogue tool with arguments matching its args_schema.",
        params=CallToolParams,
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
) -> Server[Any]:
    """An MCP server (the SDK's low-level ``Server``) whose tools are the discovery operations.

    ``discovery`` is the service to expose, or a function returning the current one,
    which lets a catalogue built from upstream servers change while being served. Run
    it with ``server.run(...)`` over stdio or mount ``server.streamable_http_app()``;
    ``wink mcp serve`` does both.
    """
    current = discovery if callable(discovery) else (lambda: discovery)
    tools = [_definition(operation) for operation in _OPERATIONS]

    async def list_tools(
        ctx: object, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: object, params: types.CallToolRequestParams) -> types.CallToolResult:
        return await answer(current(), params.name, params.arguments)

    text = instructions if instructions is not None else _INSTRUCTIONS
    return Server(name, instructions=text, on_list_tools=list_tools, on_call_tool=call_tool)


async def answer(
    service: ToolDiscovery, tool: str, arguments: Mapping[str, Any] | None
) -> types.CallToolResult:
    """Run one served tool call against ``service``; every outcome is a result, never a raise."""
    operation = _BY_NAME.get(tool)
    if operation is None:
        return _error(
            f"unknown tool {tool!r}; this server's tools are {', '.join(DISCOVERY_TOOL_NAMES)}",
            None,
        )
    try:
        params = parse(operation.params, dict(arguments or {}))
    except ParseError as exc:
        return _error(f"invalid arguments for {tool}: {exc}", None)
    try:
        response = operation.run(service, params)
        if isinstance(response, Awaitable):  # call_tool awaits the tool on this loop
            response = await response
    except DiscoveryError as error:
        return _error(_failure_text(error), dump(error.to_failure(), exclude_none=True))
    payload = dump(response, exclude_none=True)
    if isinstance(response, CallResponse) and not response.success:
        return _error(response.message or f"{response.tool_id} failed", payload)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=_compact(payload))],
        structured_content=_object(payload),
    )


_INSTRUCTIONS = (
    "This server offers a large tool catalogue through five discovery tools instead of "
    "listing every tool. Navigate with list (path [] is the root), or search with "
    "search_tool_by_category / search_nodes; call expand_tool to get a tool's argument "
    "schema, then call_tool with tool_id and arguments. When a call fails, follow its hints "
    "and next_action."
)


def _definition(operation: _Operation) -> types.Tool:
    input_schema = dict(schema(operation.params, strict=False))
    input_schema.pop("description", None)
    return types.Tool(
        name=operation.name,
        title=operation.title,
        description=operation.description,
        input_schema=input_schema,
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
        structured_content=_object(payload) if payload is not None else None,
        is_error=True,
    )


def _object(payload: JSONValue) -> dict[str, Any]:
    if isinstance(payload, dict):
        return payload
    raise AssertionError(f"discovery responses dump to objects, got {type(payload).__name__}")


def _compact(payload: JSONValue) -> str:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
