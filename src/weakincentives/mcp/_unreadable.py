r"""An answer for every stdin line the SDK cannot read, so no client waits forever.

The SDK's stdio reader hands a line it cannot decode (a lone surrogate escape such
as ``\ud800``, nesting deeper than its parser allows, text that is not JSON) or that
is not a JSON-RPC message to the server as an exception, and the server drops it:
the client that sent a request waits for an answer that never comes. Served over
stdio, such a line gets the JSON-RPC answer instead: ``-32700`` (Parse error) for
text the parser rejects, ``-32600`` (Invalid Request) for JSON that is not a
message; with the request's ``id`` when it can be read from the line, else ``null``
(JSON-RPC 2.0, section 5).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterable
from typing import Protocol

from anyio.streams.memory import MemoryObjectSendStream
from mcp import types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from weakincentives._bounded import clip, exception_text

__all__ = ["OVERLONG", "UNREADABLE_LIMIT", "Outbound", "read_messages", "unreadable_reply"]

UNREADABLE_LIMIT = 200
"""Characters of the parser's complaint kept in the error message."""

# A request's id when it comes before any nested value: ``{"jsonrpc": "2.0", "id": 7, ...``.
# Only members whose values are plain strings may precede it, so the match is the
# top-level id, never one nested in params.
_LEADING_ID = re.compile(
    r'\s*\{\s*(?:"[A-Za-z_]+"\s*:\s*"[^"\\]*"\s*,\s*)*"id"\s*:\s*(-?\d{1,18}|"[^"\\]{0,200}")'
)


class Outbound(Protocol):
    """Where the server's messages go (the SDK's write stream)."""

    async def send(self, item: SessionMessage, /) -> None:
        """Queue ``item`` for the client."""
        ...


def unreadable_reply(line: str, error: Exception) -> types.JSONRPCError:
    """The JSON-RPC error answering ``line``, which the SDK refused with ``error``."""
    if line is OVERLONG:
        return types.JSONRPCError(
            jsonrpc="2.0",
            id=None,
            error=types.ErrorData(
                code=types.PARSE_ERROR, message="Parse error: the line is longer than 64 MiB"
            ),
        )
    parsed = _decoded(line)
    if parsed is _UNDECODED or _parser_refused(error):
        code, title = types.PARSE_ERROR, "Parse error"
    else:
        code, title = types.INVALID_REQUEST, "Invalid Request"
    detail = _complaint(error)
    return types.JSONRPCError(
        jsonrpc="2.0",
        id=_request_id(line, parsed),
        error=types.ErrorData(code=code, message=f"{title}: {detail}"),
    )


OVERLONG = "\udfff a line longer than the reader's limit"
"""What the stdin reader yields in place of a line too long to read.

Compared by identity; decoded lines never hold a lone surrogate, so it cannot be one.
"""

_UNDECODED = object()


def _decoded(line: str) -> object:
    try:
        return json.loads(line)
    except (ValueError, RecursionError):
        return _UNDECODED


def _parser_refused(error: Exception) -> bool:
    """Whether the SDK's JSON parser (not the message schema) refused the line."""
    if not isinstance(error, ValidationError):
        return True
    return any(item["type"] == "json_invalid" for item in error.errors())


def _complaint(error: Exception) -> str:
    if isinstance(error, ValidationError):
        first = error.errors()[0]
        return clip(str(first["msg"]), UNREADABLE_LIMIT)
    return exception_text(error, UNREADABLE_LIMIT)


def _request_id(line: str, parsed: object) -> str | int | None:
    if isinstance(parsed, dict):
        found = parsed.get("id")
        return found if isinstance(found, str | int) and not isinstance(found, bool) else None
    match = _LEADING_ID.match(line)
    if match is None:
        return None
    token = match.group(1)
    return token[1:-1] if token.startswith('"') else int(token)


async def read_messages(
    lines: AsyncIterable[str],
    to_server: MemoryObjectSendStream[SessionMessage | Exception],
    outbound: Outbound,
) -> None:
    """Decode each line of ``lines`` for the server; answer each unreadable one on ``outbound``.

    This is the SDK's stdio reader with one difference: a line it would hand on as an
    exception (which the server drops) is answered here, with the line at hand to
    read its ``id`` from. Blank lines are skipped.
    """
    async with to_server:
        async for line in lines:
            if line is not OVERLONG and not line.strip():
                continue
            try:
                message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
            except (ValueError, RecursionError) as exc:  # ValidationError is a ValueError
                await outbound.send(SessionMessage(unreadable_reply(line, exc)))
                continue
            await to_server.send(SessionMessage(message))
