"""Read MCP results as discovery ``CallOutcome`` values, every channel bounded.

A model reads the outcome: text blocks (and the text of embedded text resources)
become the message, cut at ``MAX_RESULT_CHARS``; ``structuredContent`` becomes the
value, else the non-text blocks as short descriptions (kind, MIME type, size; the
bytes stay out, a model cannot look at base64). A value whose JSON is longer than
``MAX_VALUE_CHARS`` is left out and the message says so. ``isError`` makes the
outcome a failure whose message is the server's own explanation.

When a catalogue is served over MCP the client on the other side can use the real
content (images, audio, resources), so the executor also keeps the raw result for
the served reply (:func:`keep_raw`, read back through :func:`capturing`).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass

from mcp import types

from weakincentives.discovery import CallOutcome
from weakincentives.serde import JSONValue

__all__ = [
    "MAX_MEDIA_CHARS",
    "MAX_RESULT_CHARS",
    "MAX_VALUE_CHARS",
    "RawResult",
    "bounded_text",
    "capturing",
    "compact",
    "describe_block",
    "keep_raw",
    "media_chars",
    "outcome_of",
    "plain",
    "value_within_bound",
]

MAX_RESULT_CHARS = 20_000
"""The longest result text passed on; a server can return megabytes, a model cannot read them."""
MAX_VALUE_CHARS = 20_000
"""The longest JSON (compact) of a result's value; a longer value is left out, with a note."""
MAX_MEDIA_CHARS = 1_000_000
"""Base64 characters of images, audio and blobs one served reply may pass through."""

type RawResult = types.CallToolResult | types.ReadResourceResult | types.GetPromptResult
"""What an upstream server answered, kept for a served reply."""


@dataclass(slots=True)
class _Holder:
    result: RawResult | None = None


_RAW: ContextVar[_Holder | None] = ContextVar("weakincentives_mcp_raw_result", default=None)


@contextlib.contextmanager
def capturing() -> Iterator[_Holder]:
    """Collect the raw upstream result of the call awaited inside the block (served replies)."""
    holder = _Holder()
    token = _RAW.set(holder)
    try:
        yield holder
    finally:
        _RAW.reset(token)


def keep_raw(result: RawResult) -> None:
    """Hand ``result`` to the served reply being built, if one is (no-op otherwise)."""
    holder = _RAW.get()
    if holder is not None:
        holder.result = result


def outcome_of(result: types.CallToolResult, *, tool_name: str) -> CallOutcome:
    """The outcome for ``result``; ``tool_name`` only words the messages."""
    texts = [_block_text(block) for block in result.content]
    text = bounded_text("\n".join(text for text in texts if text is not None))
    others = [describe_block(block) for block in result.content if _block_text(block) is None]
    value: JSONValue = None
    if result.structured_content is not None:
        value = plain(result.structured_content)
    elif others:
        value = list(others)
    what = "structured result" if result.structured_content is not None else "content description"
    value, note = value_within_bound(value, what)
    if result.is_error:
        message = text or f"{tool_name} reported an error without saying why"
        return CallOutcome(success=False, message=_noted(message, note), value=value)
    if not text and value is None and not note:
        text = f"{tool_name} returned nothing"
    elif not text:
        text = f"{tool_name} returned a result"
    return CallOutcome(success=True, message=_noted(text, note), value=value)


def bounded_text(text: str, limit: int = MAX_RESULT_CHARS) -> str:
    """``text`` cut at ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    left = len(text) - limit
    return f"{text[:limit]}... ({left:,} more characters not shown)"


def value_within_bound(value: JSONValue, what: str) -> tuple[JSONValue, str]:
    """``value`` if its compact JSON fits ``MAX_VALUE_CHARS``, else ``None`` and a note why."""
    if value is None:
        return None, ""
    size = len(compact(value))
    if size <= MAX_VALUE_CHARS:
        return value, ""
    return None, (
        f"(the {what}, {size:,} characters of JSON, is over the "
        f"{MAX_VALUE_CHARS:,}-character limit and was left out)"
    )


def describe_block(block: types.ContentBlock) -> JSONValue:
    """A short JSON description of a block: media by kind, MIME type and size; others as sent."""
    if isinstance(block, types.ImageContent | types.AudioContent):
        return {"type": block.type, "mimeType": block.mime_type, "bytes": _decoded_size(block.data)}
    if isinstance(block, types.EmbeddedResource):
        contents = block.resource
        described: dict[str, JSONValue] = {"type": "resource", "uri": str(contents.uri)}
        if contents.mime_type is not None:
            described["mimeType"] = contents.mime_type
        if isinstance(contents, types.BlobResourceContents):
            described["bytes"] = _decoded_size(contents.blob)
        return described
    return plain(block.model_dump(mode="json", by_alias=True, exclude_none=True))


def media_chars(blocks: Sequence[types.ContentBlock]) -> int:
    """How many base64 characters ``blocks`` carry."""
    return sum(_media_size(block) for block in blocks)


def _media_size(block: types.ContentBlock) -> int:
    if isinstance(block, types.ImageContent | types.AudioContent):
        return len(block.data)
    if isinstance(block, types.EmbeddedResource) and isinstance(
        block.resource, types.BlobResourceContents
    ):
        return len(block.resource.blob)
    return 0


def _block_text(block: types.ContentBlock) -> str | None:
    if isinstance(block, types.TextContent):
        return block.text
    if isinstance(block, types.EmbeddedResource) and isinstance(
        block.resource, types.TextResourceContents
    ):
        return f"{block.resource.uri}:\n{block.resource.text}"
    return None


def _decoded_size(data: str) -> int:
    return len(data) * 3 // 4 - data[-2:].count("=")


def _noted(text: str, note: str) -> str:
    if not note:
        return text
    return f"{text}\n{note}" if text else note


def compact(value: JSONValue) -> str:
    """Compact JSON, as served in text blocks and measured against the bounds."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def plain(value: object) -> JSONValue:
    """``value`` with only JSON types left (the SDK already produced them)."""
    decoded: JSONValue = json.loads(json.dumps(value, default=str))
    return decoded
