"""Several MCP servers as one tool catalogue that stays current, with an executor.

``MCPToolbox.open_async`` (or its sync facade ``open``) connects to every server at
once, reads each one's tools (every page), and builds one :class:`ToolCatalog` with a
category per server. When a server sends ``notifications/tools/list_changed``, its
tools are read again and the catalogue is rebuilt; ``version`` counts the rebuilds and
``on_change`` hears about each. Catalogues are immutable, so a rebuild is a new object:
take ``toolbox.catalog`` (or ``toolbox.discovery()``) again after a change.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TextIO

from mcp import types

from weakincentives._closing import AsyncClosing, Closing
from weakincentives._portal import run_sync
from weakincentives.discovery import CatalogNode, CatalogTool, ToolCatalog, ToolDiscovery
from weakincentives.errors import ConfigValidationError, WinkError
from weakincentives.mcp._assemble import ServerListing, build_catalog, list_server
from weakincentives.mcp._connection import (
    DEFAULT_CALL_TIMEOUT,
    DEFAULT_CONNECT_TIMEOUT,
    MCPConnection,
)
from weakincentives.mcp._errors import MCPTimeoutError
from weakincentives.mcp._executor import MCPExecutor
from weakincentives.mcp._hooks import (
    ClientHooks,
    ElicitationHandler,
    SamplingHandler,
    roots_of,
    sampler_of,
)
from weakincentives.mcp._import import ImportProblem, MCPToolHandle
from weakincentives.mcp._section_tools import section_tools
from weakincentives.mcp._servers import ServerSpec
from weakincentives.prompt import EvaluatingAdapter, EventPublisher, Tool

__all__ = ["MCPToolbox"]

logger = logging.getLogger("weakincentives.mcp")

type ChangeListener = Callable[["MCPToolbox"], object]
type ResourceListener = Callable[[str, str], object]
"""Told ``(server, uri)`` when a server says a subscribed resource changed."""
_CHANGES = (
    types.ToolListChangedNotification,
    types.ResourceListChangedNotification,
    types.PromptListChangedNotification,
)


class MCPToolbox(Closing, AsyncClosing):
    """The tools of connected MCP servers, as a catalogue plus an executor that runs them.

    Build one with :meth:`open_async` or :meth:`open`; close it with :meth:`aclose` or
    :meth:`close` (or use it as a context manager, sync or async).
    """

    def __init__(
        self,
        *,
        tools: Iterable[CatalogTool] = (),
        nodes: Iterable[CatalogNode] = (),
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        on_change: ChangeListener | None = None,
        reconnect: bool = True,
        errlog: TextIO | None = None,
        hooks: ClientHooks | None = None,
    ) -> None:
        self._extra_tools = tuple(tools)
        self._extra_nodes = tuple(nodes)
        self._call_timeout = call_timeout
        self._connect_timeout = connect_timeout
        self._on_change = on_change
        self._reconnect = reconnect
        self._errlog = errlog
        self._hooks = hooks or ClientHooks()
        self._connections: dict[str, MCPConnection] = {}
        self._replacing: dict[str, asyncio.Lock] = {}
        self._closed = False
        self._listings: dict[str, ServerListing] = {}
        self._resource_listeners: list[ResourceListener] = []
        self._lock = threading.Lock()
        self._catalog = ToolCatalog(tools=self._extra_tools, nodes=self._extra_nodes)
        self._problems: tuple[ImportProblem, ...] = ()
        self._version = 0
        self._stage = "connecting"
        # Servers whose listings are being read again after a change, and those of
        # them that changed again meanwhile: a burst of notifications costs at most
        # one re-read in flight plus one more.
        self._relisting: set[str] = set()
        self._relist_again: set[str] = set()

    @classmethod
    async def open_async(
        cls,
        servers: Iterable[ServerSpec],
        *,
        tools: Iterable[CatalogTool] = (),
        nodes: Iterable[CatalogNode] = (),
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
        on_change: ChangeListener | None = None,
        errlog: TextIO | None = None,
        reconnect: bool = True,
        bus: EventPublisher | None = None,
        elicitation: ElicitationHandler | None = None,
        sampling: EvaluatingAdapter | SamplingHandler | None = None,
        roots: Sequence[str] | None = None,
        log_level: types.LoggingLevel | None = None,
    ) -> MCPToolbox:
        """Connect to every server concurrently, read their listings and build the catalogue.

        ``tools`` and ``nodes`` are catalogue entries to serve alongside the servers'
        (for example from a catalogue file; nothing executes them). ``connect_timeout``
        bounds the whole open (handshakes, listings, building the catalogue):
        :class:`MCPTimeoutError` past it. If any server fails to connect or list, the
        others are closed and the first failure is raised as an :class:`MCPError`; a
        catalogue that does not validate raises :class:`~weakincentives.errors.CatalogError`.
        With ``reconnect`` (the default), a call that finds its server's connection
        closed fails, and the connection is then opened again for the calls after it
        (see :meth:`reconnect_async`).

        What servers may ask of the client goes to what is given here: ``elicitation``
        (``(server, request) -> ElicitResult``; default: decline), ``sampling`` (an
        adapter whose evaluation answers, or a function; default: not offered),
        ``roots`` (directories or ``file://`` URIs; default: not offered). Log
        messages at ``log_level`` and above, and progress reports, are published on
        ``bus`` as :class:`MCPNotice` events.
        """
        hooks = ClientHooks(
            elicitation=elicitation,
            sampling=sampler_of(sampling, bus),
            roots=roots_of(roots),
            bus=bus,
            log_level=log_level,
        )
        toolbox = cls(
            tools=tools,
            nodes=nodes,
            call_timeout=call_timeout,
            connect_timeout=connect_timeout,
            on_change=on_change,
            reconnect=reconnect,
            errlog=errlog,
            hooks=hooks,
        )
        specs = tuple(servers)
        try:
            async with asyncio.timeout(connect_timeout):
                await toolbox._connect(specs)
        except TimeoutError as exc:
            raise toolbox._open_timed_out(specs) from exc
        return toolbox

    async def _connect(self, servers: Sequence[ServerSpec]) -> None:
        """Open every server at once, list their tools and build; on failure close them all."""
        opened = await asyncio.gather(
            *(self._open(spec) for spec in servers),
            return_exceptions=True,
        )
        connections = [item for item in opened if isinstance(item, MCPConnection)]
        for connection in connections:
            self._connections[_free_key(connection.name, self._connections)] = connection
        try:
            _raise_first(opened)
            self._stage = "listing"
            listed = await asyncio.gather(
                *(list_server(connection) for connection in self._connections.values()),
                return_exceptions=True,
            )
            _raise_first(listed)
            for key, listing in zip(self._connections, listed, strict=True):
                assert isinstance(listing, ServerListing)
                self._listings[key] = listing
            self._stage = "building"
            # On a worker thread, so that connect_timeout bounds the build too.
            built = await asyncio.to_thread(
                build_catalog,
                self._extra_tools,
                self._extra_nodes,
                dict(self._listings),
                dict(self._connections),
            )
            self._install(*built)
        except BaseException:
            await self.aclose()
            raise

    def _open_timed_out(self, servers: Sequence[ServerSpec]) -> MCPTimeoutError:
        """The error for an open that ran out of ``connect_timeout``, naming its stage."""
        seconds = self._connect_timeout
        if self._stage == "building":
            reason = f"the catalogue was not built within {seconds:g} s"
        else:
            reason = f"no answer within {seconds:g} s while {self._stage}"
        return MCPTimeoutError(
            f"{reason} (connect_timeout bounds the whole open: connecting, listing, building)",
            server=", ".join(spec.label for spec in servers),
            operation="connect",
            timeout=seconds,
        )

    @classmethod
    def open(
        cls,
        servers: Iterable[ServerSpec],
        *,
        tools: Iterable[CatalogTool] = (),
        nodes: Iterable[CatalogNode] = (),
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
        on_change: ChangeListener | None = None,
        errlog: TextIO | None = None,
        reconnect: bool = True,
        bus: EventPublisher | None = None,
        elicitation: ElicitationHandler | None = None,
        sampling: EvaluatingAdapter | SamplingHandler | None = None,
        roots: Sequence[str] | None = None,
        log_level: types.LoggingLevel | None = None,
    ) -> MCPToolbox:
        """:meth:`open_async` for scripts: the connections live on the library's background loop."""
        return run_sync(
            cls.open_async(
                servers,
                tools=tools,
                nodes=nodes,
                connect_timeout=connect_timeout,
                call_timeout=call_timeout,
                on_change=on_change,
                errlog=errlog,
                reconnect=reconnect,
                bus=bus,
                elicitation=elicitation,
                sampling=sampling,
                roots=roots,
                log_level=log_level,
            )
        )

    @property
    def catalog(self) -> ToolCatalog:
        """The current catalogue (a new object after every change)."""
        with self._lock:
            return self._catalog

    @property
    def version(self) -> int:
        """How many times the catalogue was built; grows by one per change."""
        with self._lock:
            return self._version

    @property
    def problems(self) -> tuple[ImportProblem, ...]:
        """Server tools left out of the current catalogue, with the reason for each."""
        with self._lock:
            return self._problems

    @property
    def servers(self) -> Mapping[str, MCPConnection]:
        """The live connections by category name."""
        return dict(self._connections)

    @property
    def executor(self) -> MCPExecutor:
        """Runs catalogue entries on their servers (for ``ToolDiscovery(executor=...)``)."""
        return MCPExecutor(toolbox=self)

    def connection(self, server: str) -> MCPConnection | None:
        """The connection for a category name, if that server is connected."""
        return self._connections.get(server)

    def discovery(self, **options: Any) -> ToolDiscovery:
        """A discovery service over the current catalogue that runs tools on their servers.

        ``options`` go to :class:`ToolDiscovery` (``access``, ``events``, ``cursor_secret``...).
        """
        options.setdefault("executor", self.executor)
        return ToolDiscovery(self.catalog, **options)

    def section_tools(self, server: str | None = None) -> list[Tool[Any, Any]]:
        """The tools of ``server`` (default: every server) as ordinary tools for a section.

        For small servers, whose tools the model can simply see: each becomes a
        :class:`~weakincentives.prompt.Tool` with a params dataclass generated from its
        ``inputSchema`` that calls the server. Names that would collide (the same tool
        name on two servers) raise ``ConfigValidationError``; take one server at a time.
        The list is built from the current catalogue and does not follow later changes.
        """
        entries = [
            entry
            for entry in self.catalog.tools
            if isinstance(entry.handle, MCPToolHandle)
            and (server is None or entry.handle.server == server)
        ]
        if server is not None and server not in self._connections:
            raise self._unknown(server)
        return section_tools(self, entries)

    def discovery_source(self, **options: Any) -> Callable[[], ToolDiscovery]:
        """A function returning a discovery service over the current catalogue.

        It builds a new service only when the catalogue changed, with the same
        ``options`` each time; pass ``cursor_secret`` so cursors stay verifiable
        (they still fail as ``INVALID_CURSOR`` once the catalogue they paged changed).
        """
        options.setdefault("executor", self.executor)
        built: list[tuple[ToolCatalog, ToolDiscovery]] = []

        def current() -> ToolDiscovery:
            catalog = self.catalog
            if not built or built[0][0] is not catalog:
                built[:] = [(catalog, ToolDiscovery(catalog, **options))]
            return built[0][1]

        return current

    def on_resource_updated(self, listener: ResourceListener) -> Callable[[], None]:
        """Call ``listener(server, uri)`` when a server reports a subscribed resource changed.

        Returns a function that removes the listener (a served catalogue uses this to
        pass ``notifications/resources/updated`` on to its subscribed clients).
        """
        self._resource_listeners.append(listener)
        return lambda: self._resource_listeners.remove(listener)

    async def refresh_async(self, server: str | None = None) -> ToolCatalog:
        """Read the listings of ``server`` (default: every server) again and rebuild.

        Raises ``ConfigValidationError`` for a name that is not connected.
        """
        if server is not None and server not in self._connections:
            raise self._unknown(server)
        keys = [server] if server is not None else list(self._connections)
        listed = await asyncio.gather(*(list_server(self._connections[key]) for key in keys))
        with self._lock:
            self._listings.update(zip(keys, listed, strict=True))
        self._rebuild()
        return self.catalog

    def refresh(self, server: str | None = None) -> ToolCatalog:
        """:meth:`refresh_async` for scripts."""
        return run_sync(self.refresh_async(server))

    @property
    def reconnects(self) -> bool:
        """Whether a connection found closed by a call is opened again for later calls."""
        return self._reconnect and not self._closed

    @property
    def reconnect_timeout(self) -> float:
        """The longest a reconnection may take: the handshake plus listing the tools."""
        return 2 * self._connect_timeout + 1.0

    async def reconnect_async(self, server: str) -> ToolCatalog:
        """Close ``server``'s connection, open it again (restarting a stdio server) and re-list.

        Await it on the loop that opened the toolbox (scripts: :meth:`reconnect`). The
        catalogue is rebuilt from the new listing. Raises :class:`MCPError` when the
        server cannot be reached again (its entries stay, and calls keep failing with a
        clear message until a later reconnection succeeds) and ``ConfigValidationError``
        for a name that is not connected.
        """
        old = self._connections.get(server)
        if old is None:
            raise self._unknown(server)
        await self._replace(server, old)
        return self.catalog

    def reconnect(self, server: str) -> ToolCatalog:
        """:meth:`reconnect_async` for scripts (toolboxes built with :meth:`open`)."""
        return run_sync(self.reconnect_async(server))

    async def _replace(self, server: str, old: MCPConnection) -> None:
        """Swap ``old`` for a new connection to the same server, unless it was already."""
        async with self._replacing.setdefault(server, asyncio.Lock()):
            if self._connections.get(server) is not old:
                return  # another call reconnected it while this one waited
            with contextlib.suppress(Exception):
                await old.aclose()
            new = await self._open(old.spec)
            try:
                listed = await list_server(new)
            except BaseException:
                await new.aclose()
                raise
            with self._lock:
                self._connections[server] = new
                self._listings[server] = listed
        logger.info("reconnected to MCP server %r", server)
        self._rebuild()

    def _unknown(self, server: str) -> ConfigValidationError:
        """The error for a server name that is not connected, naming those that are."""
        return ConfigValidationError(
            f"no MCP server is connected as {server!r}; connected: "
            f"{', '.join(sorted(self._connections)) or 'none'}",
            field_name="server",
        )

    async def aclose(self) -> None:
        """Close every connection (stopping stdio servers); safe to call twice."""
        self._closed = True
        await asyncio.gather(
            *(connection.aclose() for connection in self._connections.values()),
            return_exceptions=True,
        )

    def close(self) -> None:
        """:meth:`aclose` for scripts."""
        run_sync(self.aclose())

    async def _open(self, spec: ServerSpec) -> MCPConnection:
        return await MCPConnection.open(
            spec,
            connect_timeout=self._connect_timeout,
            call_timeout=self._call_timeout,
            on_notification=self._notified,
            errlog=self._errlog,
            hooks=self._hooks,
        )

    async def _notified(self, connection: MCPConnection, message: object) -> None:
        key = next((k for k, c in self._connections.items() if c is connection), None)
        if key is None:
            return
        if isinstance(message, types.ResourceUpdatedNotification):
            for listener in tuple(self._resource_listeners):
                listener(key, str(message.params.uri))
            return
        if isinstance(message, _CHANGES):
            await self._relist(key)

    async def _relist(self, key: str) -> None:
        """Re-read ``key``'s listings after a change, coalescing changes that come meanwhile.

        Every notification runs on the connection's loop, so the two sets need no lock.
        """
        if key in self._relisting:
            self._relist_again.add(key)  # the re-read in flight is followed by one more
            return
        self._relisting.add(key)
        try:
            while True:
                self._relist_again.discard(key)
                try:
                    await self.refresh_async(key)
                except WinkError as error:
                    # The old listing stays; the next notification or refresh() tries again.
                    logger.warning(
                        "could not re-read the listings of %r after a change: %s", key, error
                    )
                if key not in self._relist_again:
                    return
        finally:
            self._relisting.discard(key)

    def _rebuild(self) -> None:
        self._install(
            *build_catalog(self._extra_tools, self._extra_nodes, self._listings, self._connections)
        )

    def _install(self, catalog: ToolCatalog, problems: tuple[ImportProblem, ...]) -> None:
        with self._lock:
            self._catalog, self._problems = catalog, problems
            self._version += 1
        if self._on_change is not None:
            self._on_change(self)


def _free_key(name: str, taken: Mapping[str, object]) -> str:
    if name not in taken:
        return name
    number = 2
    while f"{name}-{number}" in taken:
        number += 1
    return f"{name}-{number}"


def _raise_first(results: Iterable[object]) -> None:
    for item in results:
        if isinstance(item, BaseException):
            raise item
