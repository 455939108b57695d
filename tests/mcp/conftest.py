"""Real MCP servers for the tests: stdio subprocesses and streamable HTTP on loopback.

``uvicorn`` serves the SDK's streamable-HTTP app on a socket bound (and listening)
before the server thread starts, so clients can connect at once: the kernel queues
them until the server accepts, and no readiness poll is needed.
"""

from __future__ import annotations

import contextlib
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

import uvicorn  # after the skip: uvicorn comes with the mcp extra
from mcp.server.lowlevel import Server

from weakincentives.mcp import StdioServer

SERVER_SCRIPT = Path(__file__).parent / "server_app.py"


def stdio_spec(*args: str, name: str | None = None) -> StdioServer:
    """The test server as a stdio subprocess of this interpreter."""
    return StdioServer(command=sys.executable, args=(str(SERVER_SCRIPT), *args), name=name)


@contextlib.contextmanager
def serving_http(server: Server[Any]) -> Iterator[str]:
    """Serve ``server`` over streamable HTTP on 127.0.0.1; yields the endpoint URL."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    config = uvicorn.Config(
        server.streamable_http_app(), log_level="critical", timeout_graceful_shutdown=1
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
