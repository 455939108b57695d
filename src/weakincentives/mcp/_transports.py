"""Run an MCP server over stdio or streamable HTTP (what ``wink mcp serve`` does)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import stat
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, BinaryIO

import anyio
import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from weakincentives.mcp._events_store import RecentEvents
from weakincentives.mcp._pending import PendingRequests
from weakincentives.mcp._unreadable import OVERLONG, read_messages

__all__ = ["MAX_LINE_BYTES", "RETRY_MILLISECONDS", "bind_http", "serve_http", "serve_stdio"]

RETRY_MILLISECONDS = 1_000
"""How long a client should wait before resuming a dropped response stream."""


MAX_LINE_BYTES = 64 * 1024 * 1024
"""The longest JSON-RPC line read from stdin; a longer one is dropped as unreadable."""


async def serve_stdio(server: Server[Any]) -> None:
    """Serve one client on this process's stdin and stdout until it closes stdin.

    Cancelling it stops at once: stdin is read without a worker thread when it is a
    pipe, so no blocked read holds the cancellation back (the SDK's reader reads on
    a thread, which only a new line or the end of input would release). A regular
    file is read a line at a time on a worker thread (such reads always return).
    Requests read before the end of input are answered before the server stops.
    """
    async with _stdin_lines() as lines:
        if lines is None:  # no descriptor to read (a stand-in stdin): the SDK reads it
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())
            return
        # The SDK writes; the lines are read here, so that one the SDK cannot decode
        # gets a JSON-RPC error instead of silence (see ``_unreadable``), and requests
        # still running at the end of input get their answers (see ``_pending``).
        async with stdio_server(stdin=_NO_INPUT) as (_, write):
            to_server, from_reader = anyio.create_memory_object_stream[SessionMessage | Exception]()
            to_writer, from_server = anyio.create_memory_object_stream[SessionMessage]()
            pending = PendingRequests()
            async with anyio.create_task_group() as writing:
                # Ends when the server closes its side, after the last message went out.
                writing.start_soon(pending.forward, from_server, write)
                async with anyio.create_task_group() as reading, from_reader:
                    reading.start_soon(read_messages, lines, to_server, write, pending)
                    await server.run(from_reader, to_writer, server.create_initialization_options())
                    reading.cancel_scope.cancel()


class _NoInput:
    """An input that ends at once: the SDK's own stdin reader has nothing to do."""

    def __aiter__(self) -> _NoInput:
        return self

    async def __anext__(self) -> str:
        raise StopAsyncIteration


_NO_INPUT: Any = _NoInput()


class _Lines:
    """The lines of a pipe, read on the event loop (what ``stdio_server`` iterates)."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        try:
            line = await self._reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as end:
            if not end.partial:
                raise StopAsyncIteration from None
            line = end.partial
        except asyncio.LimitOverrunError:
            await self._skip_line()
            return OVERLONG  # the client is told, and reading goes on
        return line.decode("utf-8", errors="replace")

    async def _skip_line(self) -> None:
        while True:
            try:
                await self._reader.readuntil(b"\n")
                return
            except asyncio.LimitOverrunError as over:
                await self._reader.readexactly(over.consumed)
            except asyncio.IncompleteReadError:
                return


class _FileLines:
    """The lines of a regular file, each read on a worker thread (a read always returns)."""

    def __init__(self, file: BinaryIO) -> None:
        self._file = file

    def __aiter__(self) -> _FileLines:
        return self

    async def __anext__(self) -> str:
        line = await anyio.to_thread.run_sync(self._file.readline, MAX_LINE_BYTES + 1)
        if not line:
            raise StopAsyncIteration
        if len(line) > MAX_LINE_BYTES:
            await anyio.to_thread.run_sync(self._skip_line)
            return OVERLONG  # the client is told, and reading goes on
        return line.decode("utf-8", errors="replace")

    def _skip_line(self) -> None:
        while (part := self._file.readline(MAX_LINE_BYTES)) and not part.endswith(b"\n"):
            pass


@contextlib.asynccontextmanager
async def _stdin_lines() -> AsyncIterator[Any]:
    """Stdin as :class:`_Lines` when it is a pipe; ``None`` (the SDK's reader) otherwise."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_LINE_BYTES)
    try:
        pipe = os.fdopen(os.dup(sys.stdin.fileno()), "rb", buffering=0)
    except (OSError, ValueError, AttributeError):  # no usable stdin descriptor
        yield None
        return
    try:
        if not _watchable(pipe.fileno()):
            raise ValueError("the event loop cannot watch stdin")
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), pipe
        )
    except (OSError, ValueError):  # a regular file or /dev/null: the loop cannot watch it
        with pipe:
            yield _FileLines(pipe)
        return
    try:
        yield _Lines(reader)
    finally:
        transport.close()


def _watchable(descriptor: int) -> bool:
    """Whether the event loop can watch ``descriptor``: a pipe, a socket or a terminal.

    Other character devices, such as ``/dev/null``, pass ``connect_read_pipe``'s check,
    but epoll refuses them later, in a callback, and the reader would wait forever.
    """
    mode = os.fstat(descriptor).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(descriptor)


def bind_http(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    """A listening socket for :func:`serve_http`; port 0 picks a free port.

    Binding before serving tells the caller the real port at once, and clients that
    connect early wait in the kernel's queue instead of being refused.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
        listener.listen()
    except OSError:
        listener.close()
        raise
    return listener


def endpoint(listener: socket.socket) -> str:
    """The streamable-HTTP URL of a bound listener (``http://HOST:PORT/mcp``)."""
    host, port = listener.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/mcp"


class _Uvicorn(uvicorn.Server):
    """uvicorn without signal handlers of its own: whoever awaits :func:`serve_http` decides.

    uvicorn replaces the process's SIGINT and SIGTERM handlers while it serves and
    raises the signal again once it stops, which would end the process before the
    caller could close what it opened (upstream MCP servers, for one).
    """

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def serve_http(
    server: Server[Any],
    listener: socket.socket,
    *,
    on_ready: Callable[[str], object] | None = None,
) -> None:
    """Serve streamable HTTP at ``/mcp`` on ``listener`` until cancelled.

    Cancelling it shuts the server down gracefully (open requests get up to 2 s)
    before the cancellation goes on. Response streams are resumable: each starts
    with a priming event, and a client that lost one reconnects with
    ``Last-Event-ID`` (:class:`RecentEvents`). A loopback host gets the SDK's
    DNS-rebinding protection (only loopback ``Host`` and ``Origin`` headers are
    accepted).
    """
    host = listener.getsockname()[0]
    app = server.streamable_http_app(
        host=host, event_store=RecentEvents(), retry_interval=RETRY_MILLISECONDS
    )
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=2)
    runner = _Uvicorn(config)
    serving = asyncio.ensure_future(runner.serve(sockets=[listener]))
    if on_ready is not None:
        on_ready(endpoint(listener))
    try:
        await asyncio.shield(serving)
    except asyncio.CancelledError:
        runner.should_exit = True
        await serving
        raise
