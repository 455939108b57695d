"""What MCP servers report while they work, as events on the toolbox's bus."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from weakincentives.serde import JSONValue

__all__ = ["MCPNotice"]


@dataclass(frozen=True, slots=True, kw_only=True)
class MCPNotice:
    """A log message (``notifications/message``) or a progress report from an MCP server.

    Published on the bus given to :class:`MCPToolbox` as the notification arrives;
    a served call also forwards it to the MCP client waiting on that call.
    """

    server: str
    """The category name of the server that sent it."""
    kind: Literal["log", "progress"]
    message: str
    """The log message (its ``data`` as text) or the progress message (may be empty)."""
    level: str | None = None
    """The log level (``debug`` ... ``emergency``); ``None`` for progress."""
    logger: str | None = None
    """The logger the server named, if any."""
    data: JSONValue = None
    """The log entry's ``data`` as sent (any JSON)."""
    tool: str | None = None
    """The tool whose call reported progress; ``None`` for log messages."""
    progress: float | None = None
    """Progress so far (grows with each report)."""
    total: float | None = None
    """The total, when the server knows it."""
