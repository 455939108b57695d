"""Open the transport to an MCP server: a subprocess over stdio, or streamable HTTP."""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any, TextIO

import httpx2
from mcp import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from weakincentives.mcp._servers import HttpServer, ServerSpec, StdioServer

__all__ = ["MAX_EVENT_BYTES", "enter_transport"]

MAX_EVENT_BYTES = 64 * 1024 * 1024
"""The largest server-sent event read from an HTTP server: one answer, such as a page of
``tools/list``. The SDK's default is 1 MiB, which a large catalogue page passes (and
stdio has no such limit); 64 MiB is the line bound the served side keeps on stdin."""


async def enter_transport(
    spec: ServerSpec, errlog: TextIO, stack: contextlib.AsyncExitStack
) -> tuple[Any, Any]:
    """The read and write streams of a transport entered on ``stack``."""
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
            headers=dict(spec.headers),
            auth=spec.auth,
            timeout=httpx2.Timeout(30.0, read=300.0),
        )
        await stack.enter_async_context(client)
        return await stack.enter_async_context(
            streamable_http_client(spec.url, http_client=client, max_sse_event_size=MAX_EVENT_BYTES)
        )
    raise AssertionError(f"unknown server spec {spec!r}")


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
