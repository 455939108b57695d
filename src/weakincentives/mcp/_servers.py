"""Where MCP servers live: a command run over stdio, or a streamable-HTTP URL."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field

import httpx2

from weakincentives.errors import ConfigValidationError

__all__ = ["HttpServer", "ServerSpec", "StdioServer", "parse_server"]


@dataclass(frozen=True, slots=True, kw_only=True)
class StdioServer:
    """An MCP server started as a subprocess that speaks JSON-RPC on its stdin and stdout."""

    command: str
    """The executable to run."""
    args: tuple[str, ...] = ()
    """Its arguments."""
    env: Mapping[str, str] | None = None
    """Extra environment variables (the SDK passes only a safe subset of the caller's)."""
    cwd: str | None = None
    """Working directory of the process."""
    name: str | None = None
    """Category name for its tools; ``None`` uses the name the server gives itself."""

    @property
    def label(self) -> str:
        """How errors refer to the server before it has told us its name."""
        return self.name or shlex.join((self.command, *self.args))


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpServer:
    """An MCP server reached over streamable HTTP at ``url``."""

    url: str
    """The endpoint, such as ``http://127.0.0.1:8000/mcp``."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Extra request headers (for example an ``Authorization`` header)."""
    auth: httpx2.Auth | None = None
    """Authentication for every request, such as the SDK's ``OAuthClientProvider``
    (``mcp.client.auth``) for servers that require OAuth."""
    name: str | None = None
    """Category name for its tools; ``None`` uses the name the server gives itself."""

    @property
    def label(self) -> str:
        """How errors refer to the server before it has told us its name."""
        return self.name or self.url


type ServerSpec = StdioServer | HttpServer


def parse_server(text: str, *, name: str | None = None) -> ServerSpec:
    """Read a server from command-line text: an ``http(s)://`` URL or a shell command.

    A command is split as a POSIX shell would split it (quotes respected) but is not
    run through a shell.
    """
    stripped = text.strip()
    if stripped.startswith(("http://", "https://")):
        return HttpServer(url=stripped, name=name)
    try:
        words = shlex.split(stripped)
    except ValueError as exc:
        raise ConfigValidationError(
            f"cannot read MCP server command {text!r}: {exc}", field_name="server", value=text
        ) from exc
    if not words:
        raise ConfigValidationError(
            "an MCP server needs a command or an http(s):// URL, got an empty string",
            field_name="server",
            value=text,
        )
    return StdioServer(command=words[0], args=tuple(words[1:]), name=name)
