"""MCP errors: what went wrong with which server, as one family under ``WinkError``.

The SDK reports trouble in several shapes (a JSON-RPC error object, a closed stream,
a timeout, an ``OSError`` from spawning the process, a validation error for a reply
that breaks the protocol). Everything that crosses into weakincentives becomes one of
the classes below, naming the server and the operation, with the SDK's exception kept
as ``__cause__``.
"""

from __future__ import annotations

from typing import Literal

from weakincentives.errors import WinkError

__all__ = ["MCPConnectionError", "MCPError", "MCPOperation", "MCPProtocolError", "MCPTimeoutError"]

type MCPOperation = Literal[
    "connect",
    "list_tools",
    "list_resources",
    "list_prompts",
    "call_tool",
    "read_resource",
    "get_prompt",
    "request",
    "serve",
]
"""What the library was doing when the error happened."""


class MCPError(WinkError):
    """Base of every MCP failure; ``server`` names the server, ``operation`` the step."""

    server: str
    operation: MCPOperation
    reason: str
    """The message without the server and operation prefix."""

    def __init__(self, reason: str, *, server: str, operation: MCPOperation) -> None:
        super().__init__(f"MCP server {server!r} ({operation}): {reason}")
        self.server = server
        self.operation = operation
        self.reason = reason


class MCPConnectionError(MCPError):
    """The server could not be started or reached, or its connection closed (it crashed)."""


class MCPTimeoutError(MCPError):
    """The server did not answer within the time allowed; ``timeout`` is that time in seconds."""

    timeout: float

    def __init__(
        self, reason: str, *, server: str, operation: MCPOperation, timeout: float
    ) -> None:
        super().__init__(reason, server=server, operation=operation)
        self.timeout = timeout


class MCPProtocolError(MCPError):
    """The server answered with a JSON-RPC error or a reply that breaks the protocol.

    ``code`` is the JSON-RPC error code when the server sent one, else ``None``.
    """

    code: int | None

    def __init__(
        self, reason: str, *, server: str, operation: MCPOperation, code: int | None = None
    ) -> None:
        super().__init__(reason, server=server, operation=operation)
        self.code = code
