"""Turn whatever the SDK raises into an :class:`MCPError` that names the server and step."""

from __future__ import annotations

import re

import httpx2
from mcp import types
from mcp.shared.exceptions import MCPError as SDKError
from pydantic import ValidationError

from weakincentives.mcp._errors import (
    MCPConnectionError,
    MCPError,
    MCPOperation,
    MCPProtocolError,
    MCPTimeoutError,
)
from weakincentives.mcp._rounds import InputRefusedError

__all__ = ["mapped"]


def mapped(
    exc: BaseException, server: str, operation: MCPOperation, timeout: float | None
) -> MCPError:
    """The typed error for ``exc`` (raise it ``from exc``); groups are unwrapped to a leaf."""
    leaf = _leaf(exc)
    if isinstance(leaf, MCPError):
        return leaf
    if isinstance(leaf, InputRefusedError):
        return MCPProtocolError(str(leaf), server=server, operation=operation, code=leaf.code)
    if isinstance(leaf, SDKError):
        if leaf.code == types.REQUEST_TIMEOUT:
            return _timed_out(server, operation, timeout)
        if leaf.code == types.CONNECTION_CLOSED:
            return MCPConnectionError(
                _closed_reason(leaf.message), server=server, operation=operation
            )
        return MCPProtocolError(
            f"the server answered with error {leaf.code}: {leaf.message}",
            server=server,
            operation=operation,
            code=leaf.code,
        )
    if isinstance(leaf, TimeoutError):
        return _timed_out(server, operation, timeout)
    if isinstance(leaf, OSError | httpx2.TransportError):
        return MCPConnectionError(
            f"cannot reach the server: {type(leaf).__name__}: {leaf}",
            server=server,
            operation=operation,
        )
    if isinstance(leaf, httpx2.HTTPError):
        return MCPConnectionError(
            f"HTTP failure: {type(leaf).__name__}: {leaf}", server=server, operation=operation
        )
    if isinstance(leaf, ValidationError):
        return MCPProtocolError(
            f"the server's reply breaks the MCP schema: {leaf.error_count()} problem(s), "
            f"first: {leaf.errors()[0]['msg']} at {leaf.errors()[0]['loc']}",
            server=server,
            operation=operation,
        )
    # Only the first line: validators append pages of detail a model does not need.
    first_line = next(iter(str(leaf).splitlines()), "")
    return MCPProtocolError(
        f"{type(leaf).__name__}: {first_line}", server=server, operation=operation
    )


# The SDK's words when an answer over HTTP is larger than one server-sent event may be
# (httpx2's "Server-sent event exceeded the N byte limit.").
_EVENT_LIMIT = re.compile(r"exceeded the (\d+) byte limit")


def _closed_reason(message: str) -> str:
    """Why the SDK gave up on an answer: too large an event, or a closed connection."""
    too_large = _EVENT_LIMIT.search(message)
    if too_large is not None:
        return (
            f"the server's answer is larger than the {int(too_large.group(1)):,} bytes the "
            "client reads in one server-sent event over HTTP (stdio has no such limit)"
        )
    return "the connection closed before the server answered (did the server exit?)"


def _timed_out(server: str, operation: MCPOperation, timeout: float | None) -> MCPTimeoutError:
    seconds = timeout if timeout is not None else 0.0
    return MCPTimeoutError(
        f"no answer within {seconds:g} s", server=server, operation=operation, timeout=seconds
    )


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc
