"""One live session with one MCP server, owned by a task on the loop that opened it.

The SDK's sessions and transports are async context managers built on task groups,
which must be entered and left by the same task. A connection therefore runs its
whole lifetime inside one owner task (enter the transport, enter the session,
``initialize``, wait to be closed, leave), and every request is sent from whichever
task asks. Requests from another event loop are handed to the connection's own loop, so a
catalogue opened once can serve an async service and a synchronous script (through
the library's background loop) alike.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, TextIO

import httpx2
from mcp import ClientSession, StdioServerParameters, stdio_client, types
from mcp.client.streamable_http import streamable_http_client

from weakincentives.mcp._errors import (
    MCPConnectionError,
    MCPError,
    MCPOperation,
    MCPTimeoutError,
)
from weakincentives.mcp._mapping import mapped
from weakincentives.mcp._servers import HttpServer, ServerSpec, StdioServer
from weakincentives.serde import JSONValue

__all__ = ["DEFAULT_CALL_TIMEOUT", "DEFAULT_CONNECT_TIMEOUT", "MAX_PAGES", "MCPConnection"]

DEFAULT_CONNECT_TIMEOUT = 30.0
"""Seconds to start a server and complete the handshake; also for each page of ``tools/list``."""
DEFAULT_CALL_TIMEOUT = 60.0
"""Seconds one ``tools/call`` may take."""
MAX_PAGES = 1_000
"""Pages of ``tools/list`` read before a server is taken to paginate forever."""

type ToolsChanged = Callable[["MCPConnection"], Coroutine[Any, Any, None]]
"""Called (as a task of its own) when the server sends ``notifications/tools/list_changed``."""


class MCPConnection:
    """A live MCP client session; open it with :meth:`open` and close it with :meth:`aclose`.

    ``name`` is the spec's name, else the name the server reported in ``initialize``.
    Every method may be awaited from any event loop; the work runs on the loop that
    opened the connection.
    """

    def __init__(self, spec: ServerSpec, *, list_timeout: float, call_timeout: float) -> None:
        self._spec = spec
        self._list_timeout = list_timeout
        self._call_timeout = call_timeout
        self._loop = asyncio.get_running_loop()
        self._closing = asyncio.Event()
        self._session: ClientSession | None = None
        self._initialized: types.InitializeResult | None = None
        self._owner: asyncio.Task[None] | None = None
        self._on_tools_changed: ToolsChanged | None = None
        self._background: set[asyncio.Task[None]] = set()

    @classmethod
    async def open(
        cls,
        spec: ServerSpec,
        *,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
        on_tools_changed: ToolsChanged | None = None,
        errlog: TextIO | None = None,
    ) -> MCPConnection:
        """Start or reach the server and complete the handshake within ``connect_timeout``.

        ``connect_timeout`` also bounds each page of ``tools/list``; ``call_timeout``
        bounds each ``tools/call`` (unless a call passes its own ``timeout``).

        Raises :class:`MCPConnectionError` (cannot start or reach it),
        :class:`MCPTimeoutError` (no handshake in time) or :class:`MCPProtocolError`.
        ``errlog`` receives a stdio server's stderr (default: this process's stderr).
        """
        connection = cls(spec, list_timeout=connect_timeout, call_timeout=call_timeout)
        connection._on_tools_changed = on_tools_changed
        ready: asyncio.Future[None] = connection._loop.create_future()
        owner = connection._loop.create_task(
            connection._own(ready, connect_timeout, errlog or sys.stderr),
            name=f"mcp connection {spec.label}",
        )
        connection._owner = owner
        try:
            await asyncio.shield(ready)
        except BaseException:
            # Cancelled while connecting, or the handshake failed: leave nothing running.
            connection._closing.set()
            with contextlib.suppress(Exception):
                await owner
            raise
        return connection

    @property
    def spec(self) -> ServerSpec:
        """Where the server lives."""
        return self._spec

    @property
    def name(self) -> str:
        """The category name for the server's tools."""
        if self._spec.name is not None:
            return self._spec.name
        info = self._initialized.server_info if self._initialized is not None else None
        return info.name if info is not None and info.name.strip() else self._spec.label

    @property
    def summary(self) -> str:
        """What the server says about itself (title, description or instructions)."""
        result = self._initialized
        if result is None:
            return ""
        info = result.server_info
        parts = [info.title or "", info.description or "", result.instructions or ""]
        return " ".join(part.strip() for part in parts if part and part.strip())

    @property
    def closed(self) -> bool:
        """Whether :meth:`aclose` was called or the owner task ended."""
        return self._closing.is_set() or self._owner is None or self._owner.done()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The event loop the connection lives on."""
        return self._loop

    async def list_tools(self) -> tuple[types.Tool, ...]:
        """Every tool of the server, following ``tools/list`` pagination to the end."""
        return await self._at_home(self._list_all())

    async def call_tool(
        self, name: str, arguments: Mapping[str, JSONValue], *, timeout: float | None = None
    ) -> types.CallToolResult:
        """Run ``tools/call`` and return the server's result, errors included as values.

        A tool-level failure is a result with ``is_error``; transport and protocol
        problems raise an :class:`MCPError`.
        """
        limit = self._call_timeout if timeout is None else timeout
        return await self._at_home(self._call(name, dict(arguments), timeout), guard=limit + 1.0)

    async def aclose(self) -> None:
        """Close the session and stop (or disconnect from) the server; safe to repeat."""
        await self._at_home(self._close())

    async def _close(self) -> None:
        self._closing.set()
        for task in tuple(self._background):
            task.cancel()
        owner = self._owner
        if owner is not None:
            with contextlib.suppress(Exception):
                await owner

    async def _own(
        self, ready: asyncio.Future[None], connect_timeout: float, errlog: TextIO
    ) -> None:
        label = self._spec.label
        try:
            async with contextlib.AsyncExitStack() as stack:
                try:
                    async with asyncio.timeout(connect_timeout):
                        read, write = await _enter_transport(self._spec, errlog, stack)
                        session = await stack.enter_async_context(
                            ClientSession(read, write, message_handler=self._on_message)
                        )
                        self._initialized = await session.initialize()
                except Exception as exc:
                    raise mapped(exc, label, "connect", connect_timeout) from exc
                self._session = session
                ready.set_result(None)
                await self._closing.wait()
        except Exception as exc:
            error = exc if isinstance(exc, MCPError) else mapped(exc, label, "connect", None)
            if not ready.done():
                ready.set_exception(error)
        finally:
            self._session = None
            if not ready.done():
                ready.cancel()

    async def _on_message(self, message: object) -> None:
        if isinstance(message, types.ToolListChangedNotification) and self._on_tools_changed:
            # The SDK awaits this handler inside its read loop; re-listing from here would
            # wait for a reply that loop can no longer read, so the callback gets a task.
            task = self._loop.create_task(self._on_tools_changed(self))
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    def _live_session(self, operation: MCPOperation) -> ClientSession:
        session = self._session
        if session is None or self._closing.is_set():
            raise MCPConnectionError(
                "the connection is closed", server=self.name, operation=operation
            )
        return session

    async def _list_all(self) -> tuple[types.Tool, ...]:
        session = self._live_session("list_tools")
        tools: list[types.Tool] = []
        seen: set[str] = set()
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            params = types.PaginatedRequestParams(cursor=cursor) if cursor is not None else None
            try:
                async with asyncio.timeout(self._list_timeout):
                    page = await session.list_tools(params=params)
            except Exception as exc:
                raise mapped(exc, self.name, "list_tools", self._list_timeout) from exc
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                return tuple(tools)
            if cursor in seen:
                raise mapped(
                    _EndlessPagesError(f"the server sent cursor {cursor!r} twice; its pages loop"),
                    self.name,
                    "list_tools",
                    None,
                )
            seen.add(cursor)
        raise mapped(
            _EndlessPagesError(f"the server sent more than {MAX_PAGES} pages of tools"),
            self.name,
            "list_tools",
            None,
        )

    async def _call(
        self, name: str, arguments: dict[str, Any], timeout: float | None
    ) -> types.CallToolResult:
        session = self._live_session("call_tool")
        limit = self._call_timeout if timeout is None else timeout
        try:
            async with asyncio.timeout(limit):
                return await session.call_tool(name, arguments, read_timeout_seconds=limit)
        except Exception as exc:
            raise mapped(exc, self.name, "call_tool", limit) from exc

    async def _at_home[T](
        self, coroutine: Coroutine[Any, Any, T], *, guard: float | None = None
    ) -> T:
        """Await ``coroutine`` on the connection's loop, hopping there from any other.

        ``guard`` bounds the hop: the work bounds itself, but the connection's loop could
        stop while the caller waits, and then nothing would ever settle the hop.
        """
        if _running_loop() is self._loop:
            return await coroutine
        try:
            self._check_loop("call_tool")
        except MCPConnectionError:
            coroutine.close()
            raise
        hop = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        try:
            async with asyncio.timeout(guard):
                return await asyncio.wrap_future(hop)
        except TimeoutError as exc:
            assert guard is not None  # without a guard the hop never times out
            raise MCPTimeoutError(
                f"no answer within {guard:g} s (the connection's event loop did not respond)",
                server=self.name,
                operation="call_tool",
                timeout=guard,
            ) from exc

    def _check_loop(self, operation: MCPOperation) -> None:
        if self._loop.is_closed() or not self._loop.is_running():
            raise MCPConnectionError(
                "the event loop that opened the connection is no longer running; open the "
                "toolbox where it is used (MCPToolbox.open for scripts)",
                server=self.name,
                operation=operation,
            )


class _EndlessPagesError(Exception):
    """A server's pagination does not end (mapped to ``MCPProtocolError``)."""


def _with_fileno(errlog: TextIO, stack: contextlib.AsyncExitStack) -> TextIO:
    """``errlog`` if a child process can write to it, else the real stderr or /dev/null.

    A subprocess needs a file descriptor; notebooks and captured test output replace
    ``sys.stderr`` with objects that have none.
    """
    for candidate in (errlog, sys.__stderr__):
        if candidate is None:
            continue
        try:
            candidate.fileno()
        except (OSError, ValueError):  # io.UnsupportedOperation is both
            continue
        return candidate
    return stack.enter_context(open(os.devnull, "w", encoding="utf-8"))


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


async def _enter_transport(
    spec: ServerSpec, errlog: TextIO, stack: contextlib.AsyncExitStack
) -> tuple[Any, Any]:
    if isinstance(spec, StdioServer):
        parameters = StdioServerParameters(
            command=spec.command,
            args=list(spec.args),
            env=dict(spec.env) if spec.env is not None else None,
            cwd=spec.cwd,
        )
        sink = _with_fileno(errlog, stack)
        return await stack.enter_async_context(stdio_client(parameters, errlog=sink))
    if isinstance(spec, HttpServer):
        # The SDK's own defaults: 30 s to connect, write or wait for the pool; reads may
        # idle for 5 minutes because a server can hold a response stream open. Each
        # request is bounded by the connection's call timeout on top of that.
        client = httpx2.AsyncClient(
            headers=dict(spec.headers), timeout=httpx2.Timeout(30.0, read=300.0)
        )
        await stack.enter_async_context(client)
        return await stack.enter_async_context(streamable_http_client(spec.url, http_client=client))
    raise AssertionError(f"unknown server spec {spec!r}")
