"""Served replies, bounded on every channel: text, structured content, media, the whole.

A served reply carries what the upstream server returned as MCP content (images,
audio and resources stay content blocks, never base64 inside text), within three
budgets: ``MAX_RESULT_CHARS`` of text, ``MAX_VALUE_CHARS`` of structured content
and ``MAX_MEDIA_CHARS`` of base64. What does not fit is replaced by a short text
block saying what was left out, so the reply as a whole stays bounded however
large the upstream answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mcp import types

from weakincentives.discovery import CallResponse
from weakincentives.mcp._results import (
    MAX_MEDIA_CHARS,
    MAX_RESULT_CHARS,
    bounded_text,
    compact,
    media_chars,
    value_within_bound,
)
from weakincentives.serde import JSONValue, dump

__all__ = [
    "MAX_BLOCKS",
    "bounded_prompt",
    "bounded_read",
    "bounded_tool_result",
    "direct_reply",
    "operation_reply",
]


MAX_BLOCKS = 100
"""Content blocks (or prompt messages) one served reply carries."""


@dataclass(slots=True)
class _Budget:
    """What is left of one reply's allowance, and notes on what did not fit."""

    text: int = MAX_RESULT_CHARS
    media: int = MAX_MEDIA_CHARS
    blocks: int = MAX_BLOCKS
    hidden_text: int = 0
    hidden_blocks: int = 0
    notes: list[str] = field(default_factory=list)

    def admit(self) -> bool:
        """Whether one more block fits the count."""
        self.blocks -= 1
        if self.blocks >= 0:
            return True
        self.hidden_blocks += 1
        return False

    def cut(self, text: str) -> str | None:
        """``text`` within what is left of the text allowance; None once it is used up."""
        if self.text <= 0:
            self.hidden_text += len(text)
            return None
        kept = bounded_text(text, self.text)
        self.text -= len(text)
        return kept

    def fits(self, block: types.ContentBlock) -> bool:
        """Whether ``block``'s base64 fits what is left of the media allowance."""
        size = media_chars([block])
        if size <= self.media:
            self.media -= size
            return True
        self.notes.append(
            f"({getattr(block, 'type', 'content')} of {size:,} base64 characters left out: a "
            f"reply carries at most {MAX_MEDIA_CHARS:,})"
        )
        return False

    def closing(self) -> list[str]:
        """The notes on everything left out."""
        notes = list(self.notes)
        if self.hidden_text:
            notes.append(f"({self.hidden_text:,} more characters of text not shown)")
        if self.hidden_blocks:
            notes.append(f"({self.hidden_blocks:,} more content items not shown)")
        return notes


def operation_reply(response: object, raw: object) -> types.CallToolResult:
    """A discovery operation's reply: the response as structured content and compact JSON.

    For ``call_tool``, the upstream result's non-text blocks follow as MCP content.
    """
    payload = dump(response, exclude_none=True)
    structured = _object(payload)
    blocks: list[types.ContentBlock] = [types.TextContent(type="text", text=compact(payload))]
    if isinstance(raw, types.CallToolResult):
        budget = _Budget()
        blocks.extend(
            block
            for block in raw.content
            if _is_media(block) and budget.admit() and budget.fits(block)
        )
        blocks.extend(_notes(budget))
    failed = False
    if isinstance(response, CallResponse) and not response.success:
        failed = True
        blocks[0] = types.TextContent(type="text", text=response.message or "the call failed")
    return types.CallToolResult(content=blocks, structured_content=structured, is_error=failed)


def direct_reply(response: CallResponse, raw: object) -> types.CallToolResult:
    """The reply to a catalogue tool called by name: the upstream result itself, bounded."""
    if isinstance(raw, types.CallToolResult):
        return bounded_tool_result(raw)
    value = response.value if isinstance(response.value, dict) else None
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=response.message)],
        structured_content=value,
        is_error=not response.success,
    )


def bounded_tool_result(result: types.CallToolResult) -> types.CallToolResult:
    """``result`` with its text, structured content and media within the budgets."""
    budget = _Budget()
    blocks: list[types.ContentBlock] = []
    for block in result.content:
        kept = _kept_block(block, budget) if budget.admit() else None
        if kept is not None:
            blocks.append(kept)
    structured: Any = result.structured_content
    if structured is not None:
        structured, note = value_within_bound(structured, "structured content")
        if note:
            budget.notes.append(note)
    blocks.extend(_notes(budget))
    return types.CallToolResult(
        content=blocks, structured_content=structured, is_error=result.is_error
    )


def bounded_read(result: types.ReadResourceResult) -> types.ReadResourceResult:
    """A resource read with its text and blobs within the budgets."""
    budget = _Budget()
    contents: list[types.TextResourceContents | types.BlobResourceContents] = []
    for item in result.contents:
        if not budget.admit():
            continue
        if isinstance(item, types.TextResourceContents):
            text = budget.cut(item.text)
            if text is not None:
                contents.append(item.model_copy(update={"text": text}))
        elif budget.fits(types.EmbeddedResource(type="resource", resource=item)):
            contents.append(item)
    first = str(result.contents[0].uri) if result.contents else "about:blank"
    for note in budget.closing():
        contents.append(types.TextResourceContents(uri=first, mime_type="text/plain", text=note))
    return types.ReadResourceResult(contents=contents)


def bounded_prompt(result: types.GetPromptResult) -> types.GetPromptResult:
    """A prompt whose messages' text and media stay within the budgets."""
    budget = _Budget()
    messages: list[types.PromptMessage] = []
    for message in result.messages:
        kept = _kept_block(message.content, budget) if budget.admit() else None
        if kept is not None:
            messages.append(types.PromptMessage(role=message.role, content=kept))
    messages.extend(types.PromptMessage(role="user", content=note) for note in _notes(budget))
    return types.GetPromptResult(description=result.description, messages=messages)


def _kept_block(block: types.ContentBlock, budget: _Budget) -> types.ContentBlock | None:
    if isinstance(block, types.TextContent):
        text = budget.cut(block.text)
        return None if text is None else block.model_copy(update={"text": text})
    if isinstance(block, types.EmbeddedResource) and isinstance(
        block.resource, types.TextResourceContents
    ):
        text = budget.cut(block.resource.text)
        if text is None:
            return None
        resource = block.resource.model_copy(update={"text": text})
        return block.model_copy(update={"resource": resource})
    if not _is_media(block) or budget.fits(block):
        return block
    return None


def _is_media(block: types.ContentBlock) -> bool:
    return not isinstance(block, types.TextContent) and not (
        isinstance(block, types.EmbeddedResource)
        and isinstance(block.resource, types.TextResourceContents)
    )


def _notes(budget: _Budget) -> list[types.TextContent]:
    return [types.TextContent(type="text", text=note) for note in budget.closing()]


def _object(payload: JSONValue) -> dict[str, Any]:
    if isinstance(payload, dict):
        return payload
    raise AssertionError(f"discovery responses dump to objects, got {type(payload).__name__}")
