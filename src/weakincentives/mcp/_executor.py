"""Run catalogue entries on their MCP servers, behind discovery's ``ToolExecutor`` seam.

The seam is async, like an MCP request: :meth:`MCPExecutor.execute` awaits the call
on the caller's loop, and the connection hops to its own loop when that is another
one (one path, with a hop where needed). Scripts reach it through discovery's sync
``call_tool``, which runs the same coroutine on the library's background loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from weakincentives.discovery import CallOutcome, CatalogTool, ToolExecutor
from weakincentives.mcp._errors import MCPConnectionError, MCPError
from weakincentives.mcp._hop import running_loop
from weakincentives.mcp._import import MCPToolHandle
from weakincentives.mcp._reads import ReadHandle, prompt_outcome, read_outcome
from weakincentives.mcp._results import keep_raw, outcome_of
from weakincentives.serde import JSONValue

if TYPE_CHECKING:
    from weakincentives.mcp._connection import MCPConnection
    from weakincentives.mcp._toolbox import MCPToolbox

__all__ = ["MCPExecutor"]


@dataclass(frozen=True, slots=True, kw_only=True)
class MCPExecutor:
    """Calls ``tools/call`` for entries whose handle is an :class:`MCPToolHandle`.

    Entries of upstream resources and prompts are read (``resources/read``,
    ``prompts/get``). Other entries go to ``fallback`` when there is one, else they
    fail with a message saying nothing executes them. Server errors (``isError``),
    timeouts, crashes and protocol errors all become failed outcomes naming the tool
    and the server.
    """

    toolbox: MCPToolbox
    fallback: ToolExecutor | None = None

    async def execute(self, tool: CatalogTool, arguments: Mapping[str, JSONValue]) -> CallOutcome:
        """Run ``tool`` on its server; an entry of another kind goes to ``fallback``."""
        target = self._target(tool)
        if isinstance(target, CallOutcome):
            return target if self.fallback is None else await self.fallback.execute(tool, arguments)
        connection, handle = target
        if connection.closed:  # an earlier reconnection failed: try again before calling
            reopened = self._reopened(handle, await self._reopen(handle, connection))
            if isinstance(reopened, str):
                return _not_connected(tool, handle, reopened)
            connection = reopened
        try:
            return await _run(connection, handle, tool.tool_id, dict(arguments))
        except MCPConnectionError as error:
            # The call is not repeated: the server may have acted on it before it went away.
            return _lost(tool, error, await self._reopen(handle, connection))
        except MCPError as error:
            return _failed(tool, error)

    async def _reopen(self, handle: _Handle, connection: MCPConnection) -> str | None:
        """Open ``connection`` again, on its own loop; None on success, else why not."""
        if not self._may_reconnect(connection):
            return _NOT_TRIED
        replacing = self.toolbox._replace(handle.server, connection)
        try:
            if running_loop() is connection.loop:
                await replacing
                return None
            hop = asyncio.run_coroutine_threadsafe(replacing, connection.loop)
            # Bounded: the other loop could stop before it settles the hop.
            async with asyncio.timeout(self.toolbox.reconnect_timeout):
                await asyncio.wrap_future(hop)
        except MCPError as error:
            return str(error)
        except TimeoutError:
            return "it did not complete in time"
        return None

    def _reopened(self, handle: _Handle, problem: str | None) -> MCPConnection | str:
        """The server's new connection after a reopening, or why there is none."""
        if problem is not None:
            return problem
        fresh = self.toolbox.connection(handle.server)
        if fresh is None or fresh.closed:
            return "the new connection closed at once"
        return fresh

    def _may_reconnect(self, connection: MCPConnection) -> bool:
        """Whether to open a lost connection again: enabled, open toolbox, a live loop."""
        return self.toolbox.reconnects and connection.loop.is_running()

    def _target(self, tool: CatalogTool) -> tuple[MCPConnection, _Handle] | CallOutcome:
        handle = tool.handle
        if not isinstance(handle, MCPToolHandle | ReadHandle):
            return CallOutcome(
                success=False,
                message=f"nothing can run {tool.tool_id!r}: it is a catalogue entry without "
                "an MCP server or an implementation behind it",
            )
        connection = self.toolbox.connection(handle.server)
        if connection is None:
            return _not_connected(tool, handle, _NOT_TRIED)
        return connection, handle


_NOT_TRIED = ""
"""Reopening was not attempted (turned off, the toolbox is closed, or its loop stopped)."""

type _Handle = MCPToolHandle | ReadHandle


async def _run(
    connection: MCPConnection, handle: _Handle, tool_id: str, arguments: dict[str, JSONValue]
) -> CallOutcome:
    """Send the entry's request; the raw result also goes to a served reply being built."""
    if isinstance(handle, MCPToolHandle):
        called = await connection.call_tool(handle.tool_name, arguments)
        keep_raw(called)
        return outcome_of(called, tool_name=tool_id)
    if handle.kind == "prompt":
        texts = {name: str(value) for name, value in arguments.items() if value is not None}
        prompt = await connection.get_prompt(handle.target, texts)
        keep_raw(prompt)
        return prompt_outcome(prompt, tool_id=tool_id)
    read = await connection.read_resource(handle.uri(arguments))
    keep_raw(read)
    return read_outcome(read, tool_id=tool_id)


def _not_connected(tool: CatalogTool, handle: _Handle, problem: str) -> CallOutcome:
    message = f"{tool.tool_id} cannot run: MCP server {handle.server!r} is not connected"
    if problem:
        message += f", and opening the connection again failed: {problem}"
    return CallOutcome(success=False, message=message)


def _lost(tool: CatalogTool, error: MCPError, problem: str | None) -> CallOutcome:
    if problem is None:
        return _reconnected(tool, error)
    if problem:
        return _not_reconnected(tool, error, problem)
    return _failed(tool, error)


def _failed(tool: CatalogTool, error: MCPError) -> CallOutcome:
    return CallOutcome(success=False, message=f"{tool.tool_id} failed: {error}")


def _reconnected(tool: CatalogTool, error: MCPError) -> CallOutcome:
    return CallOutcome(
        success=False,
        message=f"{tool.tool_id} failed: {error}. The connection to the server was opened "
        "again; call the tool again if you still need it.",
    )


def _not_reconnected(tool: CatalogTool, error: MCPError, again: object) -> CallOutcome:
    return CallOutcome(
        success=False,
        message=f"{tool.tool_id} failed: {error}. Opening the connection again failed too: {again}",
    )
