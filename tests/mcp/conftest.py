"""Real MCP servers for the tests: stdio subprocesses and streamable HTTP on loopback.

``uvicorn`` serves the SDK's streamable-HTTP app on a socket bound (and listening)
before the server thread starts, so clients can connect at once: the kernel queues
them until the server accepts, and no readiness poll is needed.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from pathlib import Path
from typing import Any, Literal

import pytest

pytest.importorskip("mcp")

import uvicorn  # after the skip: uvicorn comes with the mcp extra
from mcp.server.lowlevel import Server

from tests.mcp import everything_app
from weakincentives.mcp import HttpServer, MCPToolbox, StdioServer
from weakincentives.mcp._servers import ServerSpec

SERVER_SCRIPT = Path(__file__).parent / "server_app.py"
EVERYTHING_SCRIPT = Path(__file__).parent / "everything_app.py"

type Scope = MutableMapping[str, Any]
type Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
type Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
type App = Callable[[Scope, Receive, Send], Awaitable[None]]


def stdio_spec(*args: str, name: str | None = None) -> StdioServer:
    """The test server as a stdio subprocess of this interpreter."""
    return StdioServer(command=sys.executable, args=(str(SERVER_SCRIPT), *args), name=name)


def everything_spec(*, legacy: bool = False, name: str | None = None) -> StdioServer:
    """The everything server as a stdio subprocess (``legacy``: the 2025 handshake only)."""
    args = (str(EVERYTHING_SCRIPT), "--legacy") if legacy else (str(EVERYTHING_SCRIPT),)
    return StdioServer(command=sys.executable, args=args, name=name)


def handshake_only(app: App) -> App:
    """``app`` as a server from before 2026-07-28: ``server/discover`` gets HTTP 400.

    That is what such servers answer a request that is not ``initialize`` on a
    connection without a session; clients then fall back to the handshake.
    """

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await app(scope, receive, send)
            return
        chunks: list[MutableMapping[str, Any]] = []
        body = b""
        while True:
            message = await receive()
            chunks.append(message)
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        request = json.loads(body or b"{}")
        if isinstance(request, dict) and request.get("method") == "server/discover":
            error = {"code": -32600, "message": "Bad Request: Server not initialized"}
            answer = json.dumps({"jsonrpc": "2.0", "id": request.get("id"), "error": error})
            headers = [(b"content-type", b"application/json")]
            await send({"type": "http.response.start", "status": 400, "headers": headers})
            await send({"type": "http.response.body", "body": answer.encode()})
            return

        async def replay() -> MutableMapping[str, Any]:
            return chunks.pop(0) if chunks else await receive()

        await app(scope, replay, send)

    return guarded


@contextlib.contextmanager
def serving_http(server: Server[Any], *, legacy: bool = False) -> Iterator[str]:
    """Serve ``server`` over streamable HTTP on 127.0.0.1; yields the endpoint URL.

    ``legacy`` serves it as a server that knows only the 2025 handshake.
    """
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    app: Any = server.streamable_http_app()
    config = uvicorn.Config(
        handshake_only(app) if legacy else app,
        log_level="critical",
        timeout_graceful_shutdown=1,
    )
    runner = uvicorn.Server(config)
    thread = threading.Thread(target=runner.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        runner.should_exit = True
        thread.join()
        listener.close()


type HttpFactory = Callable[[Server[Any]], str]


@pytest.fixture
def http_server() -> Iterator[HttpFactory]:
    """Serve low-level servers over HTTP for one test; each call returns a new URL."""
    with contextlib.ExitStack() as stack:
        yield lambda server: stack.enter_context(serving_http(server))


type Mode = Literal["stdio", "stdio-2025", "http", "http-2025"]
MODES: tuple[Mode, ...] = ("stdio", "stdio-2025", "http", "http-2025")
"""Both transports, each speaking 2026-07-28 (negotiated) or only the 2025 handshake."""


class Everything:
    """Opens toolboxes on the everything server over one transport and era."""

    def __init__(self, mode: Mode, stack: contextlib.ExitStack) -> None:
        self.mode = mode
        self._stack = stack
        self._url: str | None = None

    @property
    def era(self) -> str:
        """The protocol revision the connection should agree on."""
        return "2025-11-25" if self.mode.endswith("2025") else "2026-07-28"

    def spec(self, name: str = "everything") -> ServerSpec:
        """Where the server lives (HTTP servers start on first use)."""
        legacy = self.mode.endswith("2025")
        if self.mode.startswith("stdio"):
            return everything_spec(legacy=legacy, name=name)
        if self._url is None:
            served = serving_http(everything_app.build_server(), legacy=legacy)
            self._url = self._stack.enter_context(served)
        return HttpServer(url=self._url, name=name)

    def open(self, **options: Any) -> MCPToolbox:
        """A toolbox on the server, closed when the test ends."""
        return self._stack.enter_context(MCPToolbox.open([self.spec()], **options))


@pytest.fixture(params=MODES)
def everything(request: pytest.FixtureRequest) -> Iterator[Everything]:
    """The everything server over stdio and HTTP, in both protocol eras."""
    with contextlib.ExitStack() as stack:
        yield Everything(request.param, stack)
