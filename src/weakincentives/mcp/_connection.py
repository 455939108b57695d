"""One live session with one MCP server, owned by a task on the loop that opened it.

The SDK's sessions and transports are async context managers built on task groups,
which must be entered and left by the same task. A connection therefore runs its
whole lifetime inside one owner task (enter the transport, enter the session,
negotiate, wait to be closed, leave), and every request is sent from whichever
task asks. Requests from another event loop are handed to the connection's own
loop, so a catalogue opened once can serve an async service and a synchronous
script (through the library's background loop) alike.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any, TextIO

from mcp import ClientSession, types
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher

from weakincentives.discovery import CatalogNode, ToolCatalog
from weakincentives.errors import CatalogError
from weakincentives.mcp._client_transport import enter_transport
from weakincentives.mcp._errors import MCPConnectionError, MCPError, MCPOperation
from weakincentives.mcp._hooks import ClientHooks, SessionHooks
from weakincentives.mcp._hop import hop
from weakincentives.mcp._import import requires_task
from weakincentives.mcp._mapping import mapped
from weakincentives.mcp._negotiate import hold_listen, is_modern, open_session
from weakincentives.mcp._paging import ListingKind, all_pages
from weakincentives.mcp._relay import CURRENT_RELAY, Relay
from weakincentives.mcp._rounds import settle
from weakincentives.mcp._servers import ServerSpec
from weakincentives.mcp._tasks import call_as_task, runs_tasks
from weakincentives.serde import JSONValue

__all__ = ["DEFAULT_CALL_TIMEOUT", "DEFAULT_CONNECT_TIMEOUT", "MCPConnection"]

DEFAULT_CONNECT_TIMEOUT = 30.0
"""Seconds to start a server and complete the handshake; also for each page of a listing."""
DEFAULT_CALL_TIMEOUT = 60.0
"""Seconds one ``tools/call`` (or resource read, prompt) may take."""

type NotificationListener = Callable[["MCPConnection", object], Coroutine[Any, Any, None]]
"""Called (as a task of its own) for each notification the server sends."""


class MCPConnection:
    """A live MCP client session; open it with :meth:`open` and close it with :meth:`aclose`.

    ``name`` is the spec's name, else the name the server reported. Every method may
    be awaited from any event loop; the work runs on the loop that opened the
    connection.
    """

    def __init__(
        self, spec: ServerSpec, *, list_timeout: float, call_timeout: float, hooks: ClientHooks
    ) -> None:
        self._spec = spec
        self._list_timeout = list_timeout
        self._call_timeout = call_timeout
        self._loop = asyncio.get_running_loop()
        self._closing = asyncio.Event()
        self._session: ClientSession | None = None
        self._dispatcher: JSONRPCDispatcher[Any] | None = None
        self._info: types.Implementation | None = None
        self._reported_name: str | None = None
        self._instructions: str | None = None
        self._capabilities = types.ServerCapabilities()
        self._version = ""
        self._owner: asyncio.Task[None] | None = None
        self._listener: NotificationListener | None = None
        self._background: set[asyncio.Task[None]] = set()
        self._relays: list[Relay] = []
        self._task_tools: frozenset[str] = frozenset()
        self._watches: dict[str, asyncio.Event] = {}
        self._log_level = hooks.log_level
        self._hooks = SessionHooks(hooks, server=lambda: self.name, relay=self._sole_relay)

    @classmethod
    async def open(
        cls,
        spec: ServerSpec,
        *,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
        on_notification: NotificationListener | None = None,
        errlog: TextIO | None = None,
        hooks: ClientHooks | None = None,
    ) -> MCPConnection:
        """Start or reach the server and complete the handshake within ``connect_timeout``.

        ``connect_timeout`` also bounds each page of a listing; ``call_timeout``
        bounds each call (unless a call passes its own ``timeout``). ``hooks`` answer
        the server's requests (elicitation, sampling, roots) and receive its reports.

        Raises :class:`MCPConnectionError` (cannot start or reach it),
        :class:`MCPTimeoutError` (no handshake in time) or :class:`MCPProtocolError`.
        ``errlog`` receives a stdio server's stderr (default: this process's stderr).
        """
        connection = cls(
            spec,
            list_timeout=connect_timeout,
            call_timeout=call_timeout,
            hooks=hooks or ClientHooks(),
        )
        connection._listener = on_notification
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
        return self._reported_name or self._spec.label

    @property
    def summary(self) -> str:
        """What the server says about itself (title, description or instructions)."""
        info = self._info
        parts = [
            info.title if info is not None else None,
            info.description if info is not None else None,
            self._instructions,
        ]
        return " ".join(part.strip() for part in parts if part and part.strip())

    @property
    def protocol_version(self) -> str:
        """The protocol revision agreed with the server (``2026-07-28``, ``2025-11-25``...)."""
        return self._version

    @property
    def capabilities(self) -> types.ServerCapabilities:
        """What the server offers (tools, resources, prompts, logging, completions...)."""
        return self._capabilities

    @property
    def runs_task_tools(self) -> bool:
        """Whether tools that require task-augmented calls can run on this connection."""
        session = self._session
        return session is not None and not is_modern(session) and runs_tasks(session)

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
        return await self._at_home(self._list_tools())

    async def list_resources(self) -> tuple[types.Resource, ...]:
        """Every resource of the server (none when it offers no resources)."""
        listed = await self._at_home(self._list("resources"))
        return tuple(item for item in listed if isinstance(item, types.Resource))

    async def list_resource_templates(self) -> tuple[types.ResourceTemplate, ...]:
        """Every resource template of the server (none when it offers no resources)."""
        listed = await self._at_home(self._list("resource_templates"))
        return tuple(item for item in listed if isinstance(item, types.ResourceTemplate))

    async def list_prompts(self) -> tuple[types.Prompt, ...]:
        """Every prompt of the server (none when it offers no prompts)."""
        listed = await self._at_home(self._list("prompts"))
        return tuple(item for item in listed if isinstance(item, types.Prompt))

    async def call_tool(
        self, name: str, arguments: Mapping[str, JSONValue], *, timeout: float | None = None
    ) -> types.CallToolResult:
        """Run ``tools/call`` and return the server's result, errors included as values.

        A tool-level failure is a result with ``is_error``; transport and protocol
        problems raise an :class:`MCPError`. Progress reports go to the hooks' bus
        and to the served call in flight (see :mod:`weakincentives.mcp._relay`).
        """
        limit = self._call_timeout if timeout is None else timeout
        relay = CURRENT_RELAY.get()
        return await self._at_home(
            self._call(name, dict(arguments), limit, relay), guard=limit + 1.0
        )

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        """Run ``resources/read`` for ``uri``."""

        def read(
            session: ClientSession, responses: types.InputResponses | None, state: str | None
        ) -> Awaitable[types.ReadResourceResult | types.InputRequiredResult]:
            return session.read_resource(
                uri, input_responses=responses, request_state=state, allow_input_required=True
            )

        return await self._with_input_rounds(read, "read_resource")

    async def get_prompt(self, name: str, arguments: Mapping[str, str]) -> types.GetPromptResult:
        """Run ``prompts/get`` for ``name`` with ``arguments``."""

        def get(
            session: ClientSession, responses: types.InputResponses | None, state: str | None
        ) -> Awaitable[types.GetPromptResult | types.InputRequiredResult]:
            return session.get_prompt(
                name,
                dict(arguments),
                input_responses=responses,
                request_state=state,
                allow_input_required=True,
            )

        return await self._with_input_rounds(get, "get_prompt")

    async def send[T: types.Result](self, request: types.ClientRequest, result: type[T]) -> T:
        """Send any other request (``completion/complete``, ``resources/subscribe``...)."""

        async def sent(session: ClientSession) -> T:
            return await session.send_request(request, result)

        return await self._at_home(
            self._request(sent, None, "request"), guard=self._call_timeout + 1.0
        )

    async def subscribe(self, uri: str) -> None:
        """Ask for ``notifications/resources/updated`` about ``uri``.

        ``resources/subscribe`` on the 2025 revision; on 2026-07-28 a
        ``subscriptions/listen`` stream for the URI, held until :meth:`unsubscribe`.
        """
        await self._at_home(self._watch(uri), guard=self._call_timeout + 1.0)

    async def unsubscribe(self, uri: str) -> None:
        """Stop the updates :meth:`subscribe` asked for."""
        await self._at_home(self._unwatch(uri), guard=self._call_timeout + 1.0)

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
                        streams = await enter_transport(self._spec, errlog, stack)
                        session, dispatcher = await open_session(
                            stack,
                            streams,
                            self._hooks,
                            log_level=self._log_level,
                            on_message=self._on_message,
                        )
                except Exception as exc:
                    raise mapped(exc, label, "connect", connect_timeout) from exc
                self._adopt(session, dispatcher)
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

    async def _watch(self, uri: str) -> None:
        session = self._live_session("request")
        if not is_modern(session):
            request = types.SubscribeRequest(params=types.SubscribeRequestParams(uri=uri))
            await self._request(
                lambda s: s.send_request(request, types.EmptyResult), None, "request"
            )
            return
        if uri in self._watches:
            return
        stop = asyncio.Event()
        started: asyncio.Future[None] = self._loop.create_future()
        self._spawn(hold_listen(session, uri, started, stop))
        try:
            async with asyncio.timeout(self._call_timeout):
                await started
        except Exception as exc:
            stop.set()
            raise mapped(exc, self.name, "request", self._call_timeout) from exc
        self._watches[uri] = stop

    async def _unwatch(self, uri: str) -> None:
        session = self._live_session("request")
        if is_modern(session):
            stop = self._watches.pop(uri, None)
            if stop is not None:
                stop.set()
            return
        request = types.UnsubscribeRequest(params=types.UnsubscribeRequestParams(uri=uri))
        await self._request(lambda s: s.send_request(request, types.EmptyResult), None, "request")

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = self._loop.create_task(coroutine)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _adopt(self, session: ClientSession, dispatcher: JSONRPCDispatcher[Any]) -> None:
        self._session = session
        self._dispatcher = dispatcher
        self._info = session.server_info
        self._reported_name = _category_name(session.server_info)
        self._instructions = session.instructions
        self._capabilities = session.server_capabilities or types.ServerCapabilities()
        self._version = session.protocol_version or ""

    async def _on_message(self, message: object) -> None:
        if self._listener is None or isinstance(message, Exception):
            return
        # The SDK awaits this handler inside its read loop; a listener that sends a
        # request from here would wait for a reply that loop can no longer read.
        self._spawn(self._listener(self, message))

    def _sole_relay(self) -> Relay | None:
        """The relay of the calls in flight, when they all come from one served request."""
        distinct = {id(relay): relay for relay in self._relays}
        return next(iter(distinct.values())) if len(distinct) == 1 else None

    def _live_session(self, operation: MCPOperation) -> ClientSession:
        session = self._session
        if session is None or self._closing.is_set():
            raise MCPConnectionError(
                "the connection is closed", server=self.name, operation=operation
            )
        return session

    async def _list(self, kind: ListingKind) -> tuple[object, ...]:
        session = self._live_session("list_tools")
        if not _offers(self._capabilities, kind):
            return ()
        return await all_pages(session, kind, server=self.name, timeout=self._list_timeout)

    async def _list_tools(self) -> tuple[types.Tool, ...]:
        tools = tuple(item for item in await self._list("tools") if isinstance(item, types.Tool))
        if self.runs_task_tools:  # what call_tool sends as a task (see _tasks.py)
            self._task_tools = frozenset(tool.name for tool in tools if requires_task(tool))
        return tools

    async def _call(
        self, name: str, arguments: dict[str, Any], limit: float, relay: Relay | None
    ) -> types.CallToolResult:
        session = self._live_session("call_tool")
        dispatcher = self._dispatcher
        progress = self._hooks.progress(name, relay)

        async def again(
            responses: types.InputResponses | None, state: str | None
        ) -> types.CallToolResult | types.InputRequiredResult:
            return await session.call_tool(
                name,
                arguments,
                read_timeout_seconds=limit,
                progress_callback=progress,
                input_responses=responses,
                request_state=state,
                allow_input_required=True,
            )

        if relay is not None:
            self._relays.append(relay)
        try:
            async with asyncio.timeout(limit):
                if name in self._task_tools and dispatcher is not None:
                    return await call_as_task(session, dispatcher, name, arguments, limit=limit)
                return await settle(session, await again(None, None), again)
        except Exception as exc:
            raise mapped(exc, self.name, "call_tool", limit) from exc
        finally:
            if relay is not None:
                self._relays.remove(relay)

    async def _with_input_rounds[T](
        self,
        ask: Callable[
            [ClientSession, types.InputResponses | None, str | None],
            Awaitable[T | types.InputRequiredResult],
        ],
        operation: MCPOperation,
    ) -> T:
        """Send a request the server may answer by asking for input first; see ``settle``."""
        relay = CURRENT_RELAY.get()

        async def send(session: ClientSession) -> T:
            async def again(
                responses: types.InputResponses | None, state: str | None
            ) -> T | types.InputRequiredResult:
                return await ask(session, responses, state)

            return await settle(session, await again(None, None), again)

        return await self._at_home(
            self._request(send, relay, operation), guard=self._call_timeout + 1.0
        )

    async def _request[T](
        self,
        send: Callable[[ClientSession], Coroutine[Any, Any, T]],
        relay: Relay | None,
        operation: MCPOperation,
    ) -> T:
        session = self._live_session(operation)
        if relay is not None:
            self._relays.append(relay)
        try:
            async with asyncio.timeout(self._call_timeout):
                return await send(session)
        except Exception as exc:
            raise mapped(exc, self.name, operation, self._call_timeout) from exc
        finally:
            if relay is not None:
                self._relays.remove(relay)

    async def _at_home[T](
        self, coroutine: Coroutine[Any, Any, T], *, guard: float | None = None
    ) -> T:
        """Await ``coroutine`` on the connection's loop (see :func:`hop`)."""
        return await hop(self._loop, coroutine, guard=guard, server=self.name)


def _category_name(info: types.Implementation | None) -> str | None:
    """The name the server gave, when it can name a catalogue category (not blank, not too long)."""
    name = info.name if info is not None else ""
    try:
        ToolCatalog(tools=(), nodes=[CatalogNode(name=name, path=(name,))])
    except CatalogError:
        return None
    return name


def _offers(capabilities: types.ServerCapabilities, kind: ListingKind) -> bool:
    if kind == "tools":
        return True  # every server is asked for tools, as before capabilities existed
    if kind == "prompts":
        return capabilities.prompts is not None
    return capabilities.resources is not None
