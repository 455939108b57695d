"""Upstream resources, prompts, completions, subscriptions and log levels, served again.

A served catalogue holds entries for its upstream servers' resources, resource
templates and prompts (``_reads.py``). The served server lists them as MCP
resources and prompts, exactly as the upstream listed them, and reads them through
``ToolDiscovery.call_tool_async``, so the access policy, the audit trail and the
bounds apply as to any call: a hidden entry is neither listed nor readable. A URI
is read through the resource that has it, else through a template that matches it.

With the toolbox given to ``build_server(upstream=...)``, completions and
subscriptions go to the upstream server owning the prompt or resource, resource
updates come back to the subscribed clients, and ``logging/setLevel`` sets the
lowest level of upstream log messages passed on to that client.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPError
from mcp.shared.uri_template import UriTemplate

from weakincentives.discovery import DiscoveryError, ToolDiscovery
from weakincentives.mcp._reads import ReadHandle, ReadKind
from weakincentives.mcp._relay import relayed
from weakincentives.mcp._replies import bounded_prompt, bounded_read
from weakincentives.mcp._results import capturing

if TYPE_CHECKING:
    from weakincentives.mcp._toolbox import MCPToolbox

__all__ = ["PAGE_SIZE", "RESOURCE_NOT_FOUND", "SessionLevels", "serve_upstream"]

PAGE_SIZE = 100
"""Resources, templates or prompts per served page."""
RESOURCE_NOT_FOUND = -32002
"""The JSON-RPC error code MCP gives an unknown resource URI."""

type _Source = Callable[[], ToolDiscovery]


class SessionLevels:
    """The lowest log level each client asked for with ``logging/setLevel``.

    A client is its HTTP session (``Mcp-Session-Id``); over stdio there is one.
    """

    def __init__(self) -> None:
        self._levels: dict[str | None, types.LoggingLevel] = {}

    def set(self, context: Any, level: types.LoggingLevel) -> None:
        """Remember ``level`` for the client of ``context``."""
        self._levels[_session_key(context)] = level

    def minimum(self, context: Any) -> types.LoggingLevel | None:
        """The level the client of ``context`` asked for, if any."""
        return self._levels.get(_session_key(context))


def serve_upstream(
    server: Server[Any], current: _Source, upstream: MCPToolbox | None
) -> SessionLevels:
    """Register the resource and prompt handlers (and, with ``upstream``, the rest)."""
    levels = SessionLevels()
    reads = _Reads(current, levels)
    server.add_request_handler("resources/list", types.PaginatedRequestParams, reads.resources)
    server.add_request_handler(
        "resources/templates/list", types.PaginatedRequestParams, reads.templates
    )
    server.add_request_handler("resources/read", types.ReadResourceRequestParams, reads.read)
    server.add_request_handler("prompts/list", types.PaginatedRequestParams, reads.prompts)
    server.add_request_handler("prompts/get", types.GetPromptRequestParams, reads.get_prompt)
    if upstream is not None:
        passing = _Passing(current, upstream, levels)
        server.add_request_handler(
            "completion/complete", types.CompleteRequestParams, passing.complete
        )
        server.add_request_handler(
            "resources/subscribe", types.SubscribeRequestParams, passing.subscribe
        )
        server.add_request_handler(
            "resources/unsubscribe", types.UnsubscribeRequestParams, passing.unsubscribe
        )
        server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, passing.level)
    return levels


class _Reads:
    def __init__(self, current: _Source, levels: SessionLevels) -> None:
        self._current = current
        self._levels = levels

    async def resources(
        self, ctx: Any, params: types.PaginatedRequestParams
    ) -> types.ListResourcesResult:
        page, cursor = _page(_listed(self._current(), "resource"), params.cursor)
        return types.ListResourcesResult(
            resources=[types.Resource.model_validate_json(item) for item in page],
            next_cursor=cursor,
        )

    async def templates(
        self, ctx: Any, params: types.PaginatedRequestParams
    ) -> types.ListResourceTemplatesResult:
        page, cursor = _page(_listed(self._current(), "template"), params.cursor)
        return types.ListResourceTemplatesResult(
            resource_templates=[types.ResourceTemplate.model_validate_json(i) for i in page],
            next_cursor=cursor,
        )

    async def prompts(
        self, ctx: Any, params: types.PaginatedRequestParams
    ) -> types.ListPromptsResult:
        page, cursor = _page(_listed(self._current(), "prompt"), params.cursor)
        return types.ListPromptsResult(
            prompts=[types.Prompt.model_validate_json(item) for item in page], next_cursor=cursor
        )

    async def read(
        self, ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        service = self._current()
        uri = str(params.uri)
        found = resource_entry(service, uri)
        if found is None:
            raise MCPError(
                code=RESOURCE_NOT_FOUND,
                message=f"resource not found: {uri[:200]}",
                data={"uri": uri[:2000]},
            )
        tool_id, arguments = found
        raw = await self._run(ctx, service, tool_id, arguments)
        if not isinstance(raw, types.ReadResourceResult):
            raise MCPError(code=types.INTERNAL_ERROR, message=f"reading {uri[:200]} failed: {raw}")
        return bounded_read(raw)

    async def get_prompt(
        self, ctx: Any, params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        service = self._current()
        tool_id = _entry_id(service, "prompt", params.name)
        if tool_id is None:
            raise MCPError(
                code=types.INVALID_PARAMS, message=f"unknown prompt {params.name[:200]!r}"
            )
        raw = await self._run(ctx, service, tool_id, dict(params.arguments or {}))
        if not isinstance(raw, types.GetPromptResult):
            raise MCPError(
                code=types.INTERNAL_ERROR, message=f"prompt {params.name[:200]!r} failed: {raw}"
            )
        return bounded_prompt(raw)

    async def _run(
        self, ctx: Any, service: ToolDiscovery, tool_id: str, arguments: dict[str, Any]
    ) -> object:
        """The upstream's raw answer, or the failure message when there is none."""
        with relayed(ctx, self._levels.minimum(ctx)), capturing() as raw:
            try:
                response = await service.call_tool_async(tool_id, arguments)
            except DiscoveryError as error:
                raise MCPError(code=types.INVALID_PARAMS, message=error.message) from None
        return raw.result if raw.result is not None else response.message


class _Passing:
    """Requests passed on to the upstream server that owns the prompt or resource."""

    def __init__(self, current: _Source, upstream: MCPToolbox, levels: SessionLevels) -> None:
        self._current = current
        self._upstream = upstream
        self._levels = levels
        self._subscribers: dict[tuple[str, str], dict[str | None, ServerSession]] = {}
        upstream.on_resource_updated(self._updated)

    async def complete(self, ctx: Any, params: types.CompleteRequestParams) -> types.CompleteResult:
        service = self._current()
        ref = params.ref
        if isinstance(ref, types.PromptReference):
            tool_id = _entry_id(service, "prompt", ref.name)
        else:
            tool_id = _entry_id(service, "template", ref.uri)
        server = _server_of(service, tool_id)
        if server is None:
            raise MCPError(
                code=types.INVALID_PARAMS, message="nothing to complete: unknown reference"
            )
        connection = self._upstream.connection(server)
        if connection is None:
            raise MCPError(
                code=types.INTERNAL_ERROR, message=f"MCP server {server!r} is not connected"
            )
        return await connection.send(types.CompleteRequest(params=params), types.CompleteResult)

    async def subscribe(self, ctx: Any, params: types.SubscribeRequestParams) -> types.EmptyResult:
        uri = str(params.uri)
        server = self._owner(uri)
        connection = self._upstream.connection(server)
        assert connection is not None  # _owner names connected servers only
        await connection.subscribe(uri)
        self._subscribers.setdefault((server, uri), {})[_session_key(ctx)] = ctx.session
        return types.EmptyResult()

    async def unsubscribe(
        self, ctx: Any, params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        uri = str(params.uri)
        server = self._owner(uri)
        sessions = self._subscribers.get((server, uri), {})
        sessions.pop(_session_key(ctx), None)
        if not sessions:
            self._subscribers.pop((server, uri), None)
            connection = self._upstream.connection(server)
            assert connection is not None  # _owner names connected servers only
            await connection.unsubscribe(uri)
        return types.EmptyResult()

    async def level(self, ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
        self._levels.set(ctx, params.level)
        return types.EmptyResult()

    def _owner(self, uri: str) -> str:
        """The server owning ``uri``, else the only one that offers subscriptions."""
        service = self._current()
        found = resource_entry(service, uri)
        server = _server_of(service, found[0]) if found is not None else None
        if server is not None and self._upstream.connection(server) is not None:
            return server
        offering = [
            name
            for name, connection in self._upstream.servers.items()
            if connection.capabilities.resources is not None
            and connection.capabilities.resources.subscribe
        ]
        if len(offering) == 1:
            return offering[0]
        raise MCPError(
            code=RESOURCE_NOT_FOUND,
            message=f"resource not found: {uri[:200]}",
            data={"uri": uri[:2000]},
        )

    def _updated(self, server: str, uri: str) -> None:
        for session in tuple(self._subscribers.get((server, uri), {}).values()):
            task = asyncio.get_running_loop().create_task(session.send_resource_updated(uri))
            task.add_done_callback(_quietly)


def resource_entry(service: ToolDiscovery, uri: str) -> tuple[str, dict[str, Any]] | None:
    """The visible entry that reads ``uri`` and its arguments: the resource, else a template."""
    exact = _entry_id(service, "resource", uri)
    if exact is not None:
        return exact, {}
    for entry in service.catalog.tools:
        handle = entry.handle
        if not isinstance(handle, ReadHandle) or handle.kind != "template":
            continue
        matched = UriTemplate.parse(handle.target).match(uri)
        if matched is not None and service.can_see(entry.tool_id):
            return entry.tool_id, {
                name: value if isinstance(value, str) else ",".join(value)
                for name, value in matched.items()
            }
    return None


def _listed(service: ToolDiscovery, kind: ReadKind) -> list[str]:
    return [
        entry.handle.listing
        for entry in service.catalog.tools
        if isinstance(entry.handle, ReadHandle)
        and entry.handle.kind == kind
        and service.can_see(entry.tool_id)
    ]


def _entry_id(service: ToolDiscovery, kind: ReadKind, target: str) -> str | None:
    tool_id = next(
        (
            entry.tool_id
            for entry in service.catalog.tools
            if isinstance(entry.handle, ReadHandle)
            and entry.handle.kind == kind
            and entry.handle.target == target
        ),
        None,
    )
    return tool_id if tool_id is not None and service.can_see(tool_id) else None


def _server_of(service: ToolDiscovery, tool_id: str | None) -> str | None:
    entry = service.catalog.tool(tool_id) if tool_id is not None else None
    return (
        entry.handle.server if entry is not None and isinstance(entry.handle, ReadHandle) else None
    )


def _page(items: list[str], cursor: str | None) -> tuple[list[str], str | None]:
    start = 0
    if cursor is not None:
        if not cursor.isdigit() or int(cursor) > len(items) or len(cursor) > 12:
            raise MCPError(code=types.INVALID_PARAMS, message=f"invalid cursor {cursor[:80]!r}")
        start = int(cursor)
    end = start + PAGE_SIZE
    return items[start:end], (str(end) if end < len(items) else None)


def _session_key(context: Any) -> str | None:
    headers = getattr(getattr(context, "request", None), "headers", None)
    return headers.get("mcp-session-id") if headers is not None else None


def _quietly(task: asyncio.Task[None]) -> None:
    if not task.cancelled():
        task.exception()  # a client that went away misses the update; nothing to do
