"""Read a ``tools/call`` result as a discovery ``CallOutcome`` the model can use.

Text blocks become the message. ``structuredContent`` becomes the value; without it,
non-text blocks (images, audio, resources, links) are kept in the value as JSON, so
nothing the server returned is silently dropped. ``isError`` makes the outcome a
failure whose message is the server's own explanation.
"""

from __future__ import annotations

import json

from mcp import types

from weakincentives.discovery import CallOutcome
from weakincentives.serde import JSONValue

__all__ = ["MAX_RESULT_CHARS", "outcome_of"]

MAX_RESULT_CHARS = 20_000
"""The longest result text passed on; a server can return megabytes, a model cannot read them."""


def outcome_of(result: types.CallToolResult, *, tool_name: str) -> CallOutcome:
    """The outcome for ``result``; ``tool_name`` only words the messages."""
    texts = [block.text for block in result.content if isinstance(block, types.TextContent)]
    others = [block for block in result.content if not isinstance(block, types.TextContent)]
    text = _bounded("\n".join(texts))
    value: JSONValue = None
    if result.structured_content is not None:
        value = _plain(result.structured_content)
    elif others:
        value = [
            _plain(block.model_dump(mode="json", by_alias=True, exclude_none=True))
            for block in others
        ]
    if result.is_error:
        message = text or f"{tool_name} reported an error without saying why"
        return CallOutcome(success=False, message=message, value=value)
    if not text and value is None:
        text = f"{tool_name} returned nothing"
    elif not text:
        text = f"{tool_name} returned a result"
    return CallOutcome(success=True, message=text, value=value)


def _bounded(text: str) -> str:
    if len(text) <= MAX_RESULT_CHARS:
        return text
    left = len(text) - MAX_RESULT_CHARS
    return f"{text[:MAX_RESULT_CHARS]}... ({left} more characters not shown)"


def _plain(value: object) -> JSONValue:
    # A round trip through json keeps only JSON types (the SDK already produced them).
    decoded: JSONValue = json.loads(json.dumps(value, default=str))
    return decoded
