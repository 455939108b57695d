"""MCP both ways: MCP servers as catalogue sources, and a catalogue served over MCP.

Client side: :class:`MCPToolbox` connects to MCP servers (``StdioServer`` commands or
``HttpServer`` URLs), reads their tools into one discovery catalogue with a category
per server, runs calls on the server that owns each tool, and follows
``notifications/tools/list_changed``. Server side: :func:`build_server` turns a
:class:`~weakincentives.discovery.ToolDiscovery` into an MCP server whose tools are the
five discovery operations, so any MCP client gets progressive discovery instead of a
flat list. Needs the official SDK: ``pip install 'weakincentives[mcp]'``.
"""

from __future__ import annotations

from weakincentives._exports import publish

try:
    import mcp as _sdk  # noqa: F401 - imported only to fail early, with the install hint
except ModuleNotFoundError as exc:  # pragma: no cover - the extra is installed in CI
    raise ImportError(
        "weakincentives.mcp needs the official MCP SDK; install it with "
        "pip install 'weakincentives[mcp]'"
    ) from exc

from weakincentives.mcp._errors import (
    MCPConnectionError,
    MCPError,
)
from weakincentives.mcp._errors import (
    MCPProtocolError as MCPProtocolError,
)
from weakincentives.mcp._errors import (
    MCPTimeoutError as MCPTimeoutError,
)
from weakincentives.mcp._events import MCPNotice
from weakincentives.mcp._import import ImportProblem
from weakincentives.mcp._serve import build_server
from weakincentives.mcp._servers import HttpServer, StdioServer
from weakincentives.mcp._servers import parse_server as parse_server
from weakincentives.mcp._toolbox import MCPToolbox
from weakincentives.mcp._transports import bind_http, serve_http, serve_stdio

__all__ = [
    "HttpServer",
    "ImportProblem",
    "MCPConnectionError",
    "MCPError",
    "MCPNotice",
    "MCPToolbox",
    "StdioServer",
    "bind_http",
    "build_server",
    "serve_http",
    "serve_stdio",
]

# Internal names (specs/PUBLIC_API.md): imported by other weakincentives packages,
# stored under this package's name, or raised from it. Not public, not in __all__.
_INTERNAL = (
    "MCPProtocolError",
    "MCPTimeoutError",
    "parse_server",
)

publish("weakincentives.mcp", globals(), (*__all__, *_INTERNAL))
